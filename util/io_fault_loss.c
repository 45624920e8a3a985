/*
 * io_fault_loss.c - io_fault_power_loss: what a power cut leaves on disk.
 *
 * This file contains the simulation of a power cut and reboot described in util/io_fault.h:
 * kill the open files, cut every file's unsynced tail (DROP or TEAR), undo the namespace
 * changes not made durable by sync_dir (latest first), forget the bookkeeping.
 *
 * A file with preallocated zeros (zeros_end > 0) keeps its durable size: what is cut from its
 * unsynced tail below zeros_end turns back into zeros, and only what lies past zeros_end goes.
 *
 * Cutting a file goes through the base env like everything else, which has no truncate: the
 * surviving prefix is copied to a hidden temporary file in the same directory, zeros are
 * appended up to the surviving size, and the copy is renamed over the original (an empty file
 * is just open_write). All randomness comes from a splitmix64 stream seeded by the caller and
 * drawn file by file in the order the env first saw the files, so one seed and one sequence of
 * operations give one outcome.
 */
#include "util/io_fault_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

#define LOSS_CHUNK (64 * 1024)
#define LOSS_SECTOR 512u

static uint64_t loss_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void loss_warn(const char *what, const char *path)
{
    fprintf(stderr, "io_fault: power loss: %s %s: %s\n", what, path, kura_last_error());
}

/* What survives of one file: its first `keep` bytes, of which [garbage_off, keep) are
 * overwritten with zeros (random false) or random bytes (random true), then zeros up to
 * `size` (>= keep). */
typedef struct loss_cut {
    uint64_t keep;
    uint64_t size;
    uint64_t garbage_off; /* >= keep: nothing overwritten */
    bool random;
} loss_cut;

static void fill_garbage(char *buf, uint64_t off, size_t n, const loss_cut *c, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        if (off + i < c->garbage_off)
            continue;
        buf[i] = c->random ? (char)(loss_rand(rng) & 0xff) : 0;
    }
}

/* Appends zeros to out from *off up to size; buf is a LOSS_CHUNK scratch buffer. */
static kura_status append_zeros(io_file *out, char *buf, uint64_t *off, uint64_t size)
{
    memset(buf, 0, LOSS_CHUNK);
    kura_status s = KURA_OK;
    while (s == KURA_OK && *off < size) {
        size_t n = size - *off < LOSS_CHUNK ? (size_t)(size - *off) : LOSS_CHUNK;
        s = io_append(out, buf, n);
        *off += n;
    }
    return s;
}

/* Copies the surviving prefix of path into tmp (garbage applied), then the zeros. */
static kura_status copy_prefix(io_fault *f, const char *path, const char *tmp, const loss_cut *c,
                               uint64_t *rng)
{
    io_file *in = NULL, *out = NULL;
    char *buf = malloc(LOSS_CHUNK);
    kura_status s = buf ? io_open_read(f->base, path, IO_KIND_OTHER, &in)
                        : kura_err(KURA_E_NOMEM, "cut %s: out of memory", path);
    if (s == KURA_OK)
        s = io_open_write(f->base, tmp, IO_KIND_OTHER, &out);
    uint64_t off = 0;
    while (s == KURA_OK && off < c->keep) {
        size_t want = c->keep - off < LOSS_CHUNK ? (size_t)(c->keep - off) : LOSS_CHUNK, got = 0;
        if ((s = io_read_at(in, off, buf, want, &got)) != KURA_OK || got == 0)
            break;
        fill_garbage(buf, off, got, c, rng);
        s = io_append(out, buf, got);
        off += got;
    }
    if (s == KURA_OK)
        s = append_zeros(out, buf, &off, c->size);
    kura_status cs = io_close(out);
    if (s == KURA_OK)
        s = cs;
    io_close(in);
    free(buf);
    return s;
}

/* Replaces the file at path by what survives of it. */
static kura_status cut_file(io_fault *f, const char *path, const loss_cut *c, uint64_t *rng)
{
    if (c->size == 0) {
        io_file *w;
        kura_status s = io_open_write(f->base, path, IO_KIND_OTHER, &w);
        return s == KURA_OK ? io_close(w) : s;
    }
    char *tmp = fault_hidden_path(f, path);
    if (!tmp)
        return kura_err(KURA_E_NOMEM, "cut %s: out of memory", path);
    kura_status s = copy_prefix(f, path, tmp, c, rng);
    if (s == KURA_OK)
        s = io_rename(f->base, tmp, path);
    if (s != KURA_OK)
        io_unlink(f->base, tmp);
    free(tmp);
    return s;
}

/* Step 2 for one file: draw what survives of its unsynced tail and cut it. The tail reverts
 * to zeros below zeros_end and is truncated past it. A preallocated file is checked even with
 * nothing unsynced: a failed prealloc may have left zeros past its durable size. */
static void loss_cut_node(io_fault *f, fault_node *n, io_loss_mode mode, uint64_t *rng)
{
    if (!n->tracked || !n->path || (n->len <= n->synced_len && !n->preallocated))
        return;
    loss_cut c = {.keep = n->synced_len, .garbage_off = UINT64_MAX, .random = false};
    if (mode == IO_LOSS_TEAR && n->len > n->synced_len) {
        c.keep = n->synced_len + loss_rand(rng) % (n->len - n->synced_len + 1);
        uint64_t coin = loss_rand(rng);
        if (coin & 1) {
            uint64_t sector = c.keep / LOSS_SECTOR * LOSS_SECTOR;
            c.garbage_off = sector > n->synced_len ? sector : n->synced_len;
            c.random = (coin >> 1) & 1;
        }
    }
    uint64_t size;
    if (io_path_size(f->base, n->path, &size) != KURA_OK) {
        loss_warn("stat", n->path);
        return;
    }
    if (c.keep > size)
        c.keep = size;
    c.size = c.keep > n->zeros_end ? c.keep : n->zeros_end;
    /* [keep, size) must become zeros; past len it already is */
    bool zero_fill = c.keep < c.size && c.keep < n->len;
    if (c.size == size && !zero_fill && c.garbage_off >= c.keep)
        return;
    if (cut_file(f, n->path, &c, rng) != KURA_OK)
        loss_warn("cut", n->path);
}

static bool loss_exists(io_fault *f, const char *path)
{
    uint64_t size;
    return io_path_size(f->base, path, &size) == KURA_OK;
}

/* Step 3 for one record. A record whose subject vanished meanwhile (an edge of cross-directory
 * renames) is skipped quietly. */
static void loss_undo(io_fault *f, const fault_rec *r)
{
    io_env *b = f->base;
    kura_status s = KURA_OK;
    switch (r->type) {
    case FAULT_REC_CREATE:
        s = io_unlink(b, r->path);
        if (s == KURA_E_NOT_FOUND)
            s = KURA_OK;
        break;
    case FAULT_REC_MKDIR:
        s = fault_remove_tree(b, r->path);
        break;
    case FAULT_REC_RENAME:
        if (!loss_exists(f, r->path))
            return;
        s = io_rename(b, r->path, r->from);
        if (s == KURA_OK && r->hidden)
            s = io_rename(b, r->hidden, r->path);
        if (s == KURA_OK && r->replaced_dir)
            s = io_mkdir(b, r->path);
        break;
    case FAULT_REC_UNLINK:
        if (!loss_exists(f, r->hidden))
            return;
        s = io_rename(b, r->hidden, r->path);
        break;
    case FAULT_REC_RMDIR:
        s = io_mkdir(b, r->path);
        break;
    }
    if (s != KURA_OK)
        loss_warn("undo", r->path);
}

void io_fault_power_loss(io_fault *f, io_loss_mode mode, uint64_t seed)
{
    uint64_t rng = seed;
    kmutex_lock(&f->mu);
    fault_files_kill(f);
    for (fault_node *n = f->nodes_head; n; n = n->next)
        loss_cut_node(f, n, mode, &rng);
    for (fault_rec *r = f->recs_tail; r; r = r->prev)
        loss_undo(f, r);
    fault_state_forget(f);
    fault_reset_after_loss(f);
    kmutex_unlock(&f->mu);
}
