/*
 * io_fault_ops.c - the fault env's file operations and its io_ops table.
 *
 * This file contains the operations on files (open_read, open_write, lock, close, read_at,
 * append, sync, prealloc, file_size, path_size) and the table that binds them with the
 * namespace operations of io_fault_ns.c. Each one takes the env's mutex, passes the gate
 * (io_fault.c: crash state, counts, crash_at_op, rules), calls the base env, and updates the
 * file's node: append grows len, a successful sync of an unpoisoned file sets synced_len = len,
 * a successful prealloc of an unpoisoned file moves zeros_end, a failed sync or prealloc
 * poisons it. Holding the mutex across the base call makes every operation atomic with respect
 * to crashes and power loss.
 *
 * A file's handle outlives its "process": io_fault_power_loss closes the base file underneath
 * (fault_files_kill) and leaves the handle dead; close then only frees it.
 */
#include "util/io_fault_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

static kura_status dead_err(fault_file *ff, const char *what)
{
    return kura_err(KURA_E_IO, "%s %s: the file's process died in a simulated power loss", what,
                    ff->path);
}

static kura_status oom(const char *what, const char *path)
{
    return kura_err(KURA_E_NOMEM, "%s %s: out of memory", what, path);
}

/* Wraps the base file `inner` (closed on failure). */
static kura_status file_new(io_fault *f, io_file *inner, fault_node *node, const char *path,
                            io_kind kind, io_file **f_out)
{
    size_t n = strlen(path) + 1;
    fault_file *ff = malloc(sizeof *ff + n);
    if (!ff) {
        io_close(inner);
        return oom("open", path);
    }
    ff->base.env = &f->env;
    ff->base.kind = kind;
    ff->inner = inner;
    ff->node = node;
    node->nopen++;
    memcpy(ff->path, path, n);
    ff->prev = NULL;
    ff->next = f->files;
    if (f->files)
        f->files->prev = ff;
    f->files = ff;
    *f_out = &ff->base;
    return KURA_OK;
}

/* Detaches a closing or dying file from its node and from the open list. */
static void file_detach(io_fault *f, fault_file *ff)
{
    if (ff->prev)
        ff->prev->next = ff->next;
    else
        f->files = ff->next;
    if (ff->next)
        ff->next->prev = ff->prev;
    fault_node *n = ff->node;
    ff->node = NULL;
    if (--n->nopen == 0 && !n->path)
        fault_node_gone(f, n);
}

void fault_files_kill(io_fault *f)
{
    while (f->files) {
        fault_file *ff = f->files;
        io_close(ff->inner); /* the process died: whatever close reports is moot */
        ff->inner = NULL;
        file_detach(f, ff);
    }
    for (size_t i = 0; i < f->nzombies; i++)
        io_close(f->zombies[i]);
    f->nzombies = 0;
}

static kura_status fo_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("open", path);
    int inj;
    io_file *inner = NULL;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_OPEN, kind, false, "open", p, &inj);
    if (s == KURA_OK)
        s = io_open_read(f->base, p, kind, &inner);
    if (s == KURA_OK) {
        fault_node *n = fault_node_at(f, p, kind);
        if (!n) {
            io_close(inner);
            s = oom("open", p);
        } else {
            n->kind = kind;
            s = file_new(f, inner, n, p, kind, f_out);
        }
    }
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

/* Creates or truncates (open_write) or creates-if-needed (lock) path; records a create when the
 * path did not exist. */
static kura_status open_create(io_fault *f, const char *p, io_kind kind, bool is_lock,
                               io_file **f_out)
{
    uint64_t size;
    kura_status s = io_path_size(f->base, p, &size);
    if (s != KURA_OK && s != KURA_E_NOT_FOUND)
        return s;
    bool existed = s == KURA_OK;
    io_file *inner = NULL;
    s = is_lock ? io_lock(f->base, p, &inner) : io_open_write(f->base, p, kind, &inner);
    if (s != KURA_OK)
        return s;
    fault_node *n = fault_node_at(f, p, kind);
    if (!n) {
        io_close(inner);
        return oom("open", p);
    }
    n->kind = kind;
    if (!is_lock) {
        n->tracked = true; /* truncated: the old content is gone, durable or not */
        n->len = n->synced_len = n->zeros_end = 0;
        n->poisoned = n->preallocated = false;
    }
    if (!existed) {
        s = fault_rec_add(f, FAULT_REC_CREATE, strdup(p), NULL, NULL, NULL);
        if (s != KURA_OK) {
            io_close(inner);
            return s;
        }
    }
    return file_new(f, inner, n, p, kind, f_out);
}

static kura_status fo_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("create", path);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_OPEN, kind, true, "open_write", p, &inj);
    if (s == KURA_OK)
        s = open_create(f, p, kind, false, f_out);
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

static kura_status fo_lock(io_env *env, const char *path, io_file **f_out)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("lock", path);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = fault_gate(f, IO_OP_OPEN, IO_KIND_LOCK, false, "lock", p, &inj);
    if (s == KURA_OK)
        s = open_create(f, p, IO_KIND_LOCK, true, f_out);
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

static kura_status fo_close(io_file *file)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    kura_status s = KURA_OK;
    int inj;
    kmutex_lock(&f->mu);
    if (ff->inner) {
        s = fault_gate(f, IO_OP_CLOSE, file->kind, false, "close", ff->path, &inj);
        if (f->crashed) {
            /* Frozen: nothing may reach the disk; the base file stays open until the power
             * loss kills the process. */
            if (f->nzombies == f->zombies_cap) {
                size_t cap = f->zombies_cap ? f->zombies_cap * 2 : 16;
                io_file **z = realloc(f->zombies, cap * sizeof *z);
                if (z) {
                    f->zombies = z;
                    f->zombies_cap = cap;
                }
            }
            if (f->nzombies < f->zombies_cap)
                f->zombies[f->nzombies++] = ff->inner;
            else
                io_close(ff->inner);
        } else {
            kura_status cs = io_close(ff->inner);
            if (s == KURA_OK)
                s = cs;
        }
        file_detach(f, ff);
    }
    kmutex_unlock(&f->mu);
    free(ff);
    return s;
}

static kura_status fo_read_at(io_file *file, uint64_t off, void *buf, size_t n,
                              size_t *nread_out)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = ff->inner ? fault_gate(f, IO_OP_READ, file->kind, false, "read", ff->path, &inj)
                              : dead_err(ff, "read");
    if (s == KURA_OK)
        s = io_read_at(ff->inner, off, buf, n, nread_out);
    kmutex_unlock(&f->mu);
    return s;
}

/* After a failed base append some bytes may have reached the file: re-read its length,
 * keeping the append's message. Inside preallocated zeros the size does not tell how far the
 * append got; len then becomes the end of the zeros, an overestimate that only widens what a
 * power loss may tear (bytes there are either the append's or zeros). */
static void append_resync(fault_file *ff)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kura_last_error());
    uint64_t size;
    if (io_file_size(ff->inner, &size) == KURA_OK && size >= ff->node->synced_len)
        ff->node->len = size;
    kura_err(KURA_E_IO, "%s", msg);
}

static kura_status fo_append(io_file *file, const void *buf, size_t n)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    int inj = 0;
    kmutex_lock(&f->mu);
    kura_status s = ff->inner
                        ? fault_gate(f, IO_OP_APPEND, file->kind, true, "append", ff->path, &inj)
                        : dead_err(ff, "append");
    if (s == KURA_OK) {
        if ((s = io_append(ff->inner, buf, n)) == KURA_OK)
            ff->node->len += n;
        else
            append_resync(ff);
    } else if (inj == IO_FAULT_SHORT_WRITE && n / 2) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        kura_status ws = io_append(ff->inner, buf, n / 2);
        if (ws == KURA_OK) {
            ff->node->len += n / 2;
            kura_err(s, "%s", msg);
        } else {
            append_resync(ff);
            s = ws;
        }
    }
    kmutex_unlock(&f->mu);
    return s;
}

static kura_status fo_sync(io_file *file)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    int inj = 0;
    kmutex_lock(&f->mu);
    kura_status s = ff->inner ? fault_gate(f, IO_OP_SYNC, file->kind, true, "sync", ff->path, &inj)
                              : dead_err(ff, "sync");
    if (s == KURA_OK) {
        if ((s = io_sync(ff->inner)) != KURA_OK)
            ff->node->poisoned = true; /* a real fsync failure poisons just the same */
        else if (!ff->node->poisoned)
            ff->node->synced_len = ff->node->len;
    } else if (inj) {
        ff->node->poisoned = true;
    }
    kmutex_unlock(&f->mu);
    return s;
}

/*
 * Zeros past the end (io.h), counted and matched as ONE operation of type IO_OP_APPEND, and
 * mutating. The base env writes them at the file's size, max(len, zeros_end), and syncs them:
 * on success [start, start + nbytes) becomes durable zeros (zeros_end grows) unless the file is
 * poisoned. Only the zeros: appended bytes past synced_len stay unsynced in the model, although
 * the real fdatasync flushes them too (io.h promises the zeros only).
 * A failure poisons the file as a failed sync does. An injected one (any rule error; a short
 * write fails it whole, as EIO) never reaches the base env: no zero is written. A real one may
 * have left zeros past max(len, zeros_end); they are not durable and a power loss removes them.
 */
static kura_status fo_prealloc(io_file *file, uint64_t nbytes)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    int inj = 0;
    kmutex_lock(&f->mu);
    kura_status s = ff->inner ? fault_gate(f, IO_OP_APPEND, file->kind, true, "prealloc",
                                           ff->path, &inj)
                              : dead_err(ff, "prealloc");
    if (s == KURA_OK) {
        fault_node *n = ff->node;
        uint64_t start = n->len > n->zeros_end ? n->len : n->zeros_end;
        n->preallocated = true;
        if ((s = io_prealloc(ff->inner, nbytes)) != KURA_OK)
            n->poisoned = true;
        else if (!n->poisoned && nbytes)
            n->zeros_end = start + nbytes;
    } else if (inj) {
        ff->node->poisoned = true;
        if (inj == IO_FAULT_SHORT_WRITE)
            s = kura_err(KURA_E_IO, "prealloc %s: injected EIO (io_fault rule: a short write "
                         "fails a prealloc whole, matching op #%llu)", ff->path,
                         (unsigned long long)f->matching);
    }
    kmutex_unlock(&f->mu);
    return s;
}

static kura_status fo_file_size(io_file *file, uint64_t *size_out)
{
    fault_file *ff = (fault_file *)file;
    io_fault *f = fault_of(file->env);
    int inj;
    kmutex_lock(&f->mu);
    kura_status s = ff->inner ? fault_gate(f, IO_OP_SIZE, file->kind, false, "size", ff->path, &inj)
                              : dead_err(ff, "size");
    if (s == KURA_OK)
        s = io_file_size(ff->inner, size_out);
    kmutex_unlock(&f->mu);
    return s;
}

static kura_status fo_path_size(io_env *env, const char *path, uint64_t *size_out)
{
    io_fault *f = fault_of(env);
    char *p = fault_norm(path);
    if (!p)
        return oom("stat", path);
    int inj;
    kmutex_lock(&f->mu);
    fault_node *n = fault_lookup(f, p);
    kura_status s = fault_gate(f, IO_OP_SIZE, n ? n->kind : IO_KIND_OTHER, false, "path_size", p,
                               &inj);
    if (s == KURA_OK)
        s = io_path_size(f->base, p, size_out);
    kmutex_unlock(&f->mu);
    free(p);
    return s;
}

const io_ops fault_ops = {
    .open_read = fo_open_read,
    .open_write = fo_open_write,
    .close = fo_close,
    .read_at = fo_read_at,
    .append = fo_append,
    .sync = fo_sync,
    .file_size = fo_file_size,
    .path_size = fo_path_size,
    .rename = fault_rename,
    .unlink = fault_unlink,
    .mkdir = fault_mkdir,
    .rmdir = fault_rmdir,
    .sync_dir = fault_sync_dir,
    .list_dir = fault_list_dir,
    .lock = fo_lock,
    .prealloc = fo_prealloc,
    .crash_point = fault_crash_point,
};
