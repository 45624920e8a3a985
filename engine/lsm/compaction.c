/*
 * compaction.c - picking compactions and the table-writing loop shared with flushes.
 */
#include "engine/lsm/compaction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/merge_iter.h"
#include "util/ikey.h"
#include "util/status.h"

static bool push_input(compaction *c, int which, file_meta *f)
{
    return ptr_push((void ***)&c->inputs[which], &c->ninputs[which], &c->cap[which], f);
}

/* The user-key range covered by a set of files. */
static void range_of(file_meta **files, size_t n, const uint8_t **lo, size_t *lolen,
                     const uint8_t **hi, size_t *hilen)
{
    *lo = *hi = NULL;
    for (size_t i = 0; i < n; i++) {
        const kbuf *s = &files[i]->smallest, *l = &files[i]->largest;
        size_t slen = s->len - IKEY_TRAILER, llen = l->len - IKEY_TRAILER;
        if (!*lo || ukey_cmp(s->data, slen, *lo, *lolen) < 0)
            *lo = s->data, *lolen = slen;
        if (!*hi || ukey_cmp(l->data, llen, *hi, *hilen) > 0)
            *hi = l->data, *hilen = llen;
    }
}

/* Fills inputs[1] with the overlaps of inputs[0] in out_level. */
static bool add_overlaps(compaction *c, const version *v)
{
    const uint8_t *lo, *hi;
    size_t lolen = 0, hilen = 0;
    range_of(c->inputs[0], c->ninputs[0], &lo, &lolen, &hi, &hilen);
    return version_overlapping(v, c->out_level, lo, lolen, hi, hilen, &c->inputs[1],
                               &c->ninputs[1], &c->cap[1]) == KURA_OK;
}

compaction *compaction_pick(version *v, kbuf *compact_pointer)
{
    if (v->compaction_score < 1 || v->compaction_level < 0)
        return NULL;
    int level = v->compaction_level;
    if (!v->nfiles[level])
        return NULL;
    compaction *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->level = level;
    c->out_level = level == 0 ? v->base_level : level + 1;
    file_meta *pick = v->files[level][0];
    kbuf *cp = &compact_pointer[level];
    if (cp->len)
        for (size_t i = 0; i < v->nfiles[level]; i++) {
            file_meta *f = v->files[level][i];
            if (ikey_cmp(f->largest.data, f->largest.len, cp->data, cp->len) > 0) {
                pick = f;
                break;
            }
        }
    if (level == 0) {
        const kbuf *s = &pick->smallest, *l = &pick->largest;
        if (version_overlapping(v, 0, s->data, s->len - IKEY_TRAILER, l->data,
                                l->len - IKEY_TRAILER, &c->inputs[0], &c->ninputs[0],
                                &c->cap[0]) != KURA_OK)
            goto fail;
    } else if (!push_input(c, 0, pick)) {
        goto fail;
    }
    if (!add_overlaps(c, v))
        goto fail;
    c->trivial_move = c->ninputs[0] == 1 && c->ninputs[1] == 0;
    const kbuf *largest = &c->inputs[0][c->ninputs[0] - 1]->largest;
    for (size_t i = 0; i < c->ninputs[0]; i++) {
        const kbuf *l = &c->inputs[0][i]->largest;
        if (ikey_cmp(l->data, l->len, largest->data, largest->len) > 0)
            largest = l;
    }
    cp->len = 0;
    kbuf_append(cp, largest->data, largest->len); /* on failure: round-robin restarts */
    return c;
fail:
    compaction_free(c);
    return NULL;
}

compaction *compaction_whole_level(version *v, int level)
{
    if (level >= LSM_LEVELS - 1 || !v->nfiles[level])
        return NULL;
    compaction *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    /* into the next level holding data (levels in between are empty), else the last */
    int out = level + 1;
    while (out < LSM_LEVELS - 1 && !v->nfiles[out])
        out++;
    c->level = level;
    c->out_level = out;
    for (size_t i = 0; i < v->nfiles[level]; i++)
        if (!push_input(c, 0, v->files[level][i]))
            goto fail;
    if (!add_overlaps(c, v))
        goto fail;
    c->trivial_move = c->ninputs[0] == 1 && c->ninputs[1] == 0;
    return c;
fail:
    compaction_free(c);
    return NULL;
}

void compaction_free(compaction *c)
{
    if (!c)
        return;
    free(c->inputs[0]);
    free(c->inputs[1]);
    free(c);
}

kura_status compaction_delete_inputs(const compaction *c, version_edit *e)
{
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < c->ninputs[w]; i++) {
            int level = w == 0 ? c->level : c->out_level;
            kura_status s = edit_delete_file(e, level, c->inputs[w][i]->number);
            if (s != KURA_OK)
                return s;
        }
    return KURA_OK;
}

kv_iter *compaction_iter(compaction *c)
{
    size_t n = 0, cap = c->ninputs[0] + 1;
    kv_iter **its = malloc(cap * sizeof *its);
    if (!its)
        return NULL;
    /* merge_iter takes ownership of the children, also when it fails */
    if (c->level == 0) {
        for (size_t i = 0; i < c->ninputs[0]; i++)
            its[n++] = sst_reader_iter(c->inputs[0][i]->reader, false);
    } else {
        its[n++] = version_files_iter(c->inputs[0], c->ninputs[0], false);
    }
    if (c->ninputs[1])
        its[n++] = version_files_iter(c->inputs[1], c->ninputs[1], false);
    for (size_t i = 0; i < n; i++)
        if (!its[i])
            its[i] = kv_iter_empty(KURA_E_NOMEM);
    kv_iter *m = merge_iter_new(its, n);
    free(its);
    return m;
}

/* ---- writing tables ---- */

static kura_status open_output(build_ctx *c, sst_builder **b_out, uint64_t *number_out)
{
    uint64_t number = c->new_file(c->new_file_arg);
    if (c->nmade == c->made_cap) {
        size_t cap = c->made_cap ? c->made_cap * 2 : 8;
        uint64_t *m = realloc(c->made, cap * sizeof *m);
        if (!m)
            return kura_err(KURA_E_NOMEM, "%s: out of memory", c->dir);
        c->made = m;
        c->made_cap = cap;
    }
    c->made[c->nmade++] = number;
    char path[4096];
    snprintf(path, sizeof path, "%s/%06llu.sst", c->dir, (unsigned long long)number);
    *number_out = number;
    return sst_builder_new(c->io, path, &c->sopts, b_out);
}

static kura_status close_output(build_ctx *c, sst_builder *b, uint64_t number)
{
    sst_meta m;
    memset(&m, 0, sizeof m);
    kura_status s = sst_builder_finish(b, &m);
    if (s == KURA_OK && m.entries > 0)
        s = edit_add_file(c->edit, c->out_level, number, m.file_size, m.entries, m.min_seq,
                          m.max_seq, m.smallest.data, m.smallest.len, m.largest.data,
                          m.largest.len);
    if (s == KURA_OK)
        c->bytes_written += m.file_size;
    sst_meta_clear(&m);
    return s;
}

kura_status build_tables(build_ctx *c, kv_iter *it)
{
    sst_builder *b = NULL;
    uint64_t number = 0;
    kbuf cur = KBUF_INIT; /* current user key */
    bool have_cur = false;
    uint64_t last_seq_for_key = 0;
    kura_status s = KURA_OK;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it)) {
        size_t klen, vlen;
        const uint8_t *k = kv_iter_key(it, &klen), *val = kv_iter_value(it, &vlen);
        if (klen < IKEY_TRAILER) {
            s = kura_err(KURA_E_CORRUPTION, "%s: internal key of %zu bytes in compaction input",
                         c->dir, klen);
            break;
        }
        size_t uklen = klen - IKEY_TRAILER;
        uint64_t seq = ikey_seq(k, klen);
        bool new_key = !have_cur || ukey_cmp(k, uklen, cur.data, cur.len) != 0;
        if (new_key) {
            /* a table boundary may only fall between user keys */
            if (b && c->target_bytes && sst_builder_file_size(b) >= c->target_bytes) {
                s = close_output(c, b, number);
                b = NULL;
                if (s != KURA_OK)
                    break;
            }
            cur.len = 0;
            if (!kbuf_append(&cur, k, uklen)) {
                s = kura_err(KURA_E_NOMEM, "%s: out of memory", c->dir);
                break;
            }
            have_cur = true;
            last_seq_for_key = UINT64_MAX;
        }
        bool drop = false;
        if (last_seq_for_key <= c->oldest_snapshot) {
            drop = true; /* hidden by a newer version every reader sees */
        } else if (ikey_type(k, klen) == IKEY_TYPE_DELETE && seq <= c->oldest_snapshot &&
                   c->base && !version_key_may_exist_below(c->base, c->out_level, k, uklen)) {
            drop = true; /* a tombstone with nothing left to shadow */
        }
        last_seq_for_key = seq;
        if (drop) {
            c->entries_dropped++;
            continue;
        }
        if (!b && (s = open_output(c, &b, &number)) != KURA_OK)
            break;
        if ((s = sst_builder_add(b, k, klen, val, vlen)) != KURA_OK)
            break;
        c->entries_written++;
    }
    if (s == KURA_OK)
        s = kv_iter_status(it);
    if (b) {
        if (s == KURA_OK)
            s = close_output(c, b, number);
        else
            sst_builder_abandon(b);
    }
    kbuf_free(&cur);
    return s;
}

void build_ctx_unlink_outputs(build_ctx *c)
{
    char path[4096];
    for (size_t i = 0; i < c->nmade; i++) {
        snprintf(path, sizeof path, "%s/%06llu.sst", c->dir,
                 (unsigned long long)c->made[i]);
        io_unlink(c->io, path);
    }
}

void build_ctx_free(build_ctx *c)
{
    free(c->made);
    c->made = NULL;
    c->nmade = c->made_cap = 0;
}
