/*
 * version_set.c - applying edits to versions, writing and recovering the MANIFEST.
 */
#include "engine/lsm/version_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ikey.h"
#include "util/status.h"
#include "wal/reader.h"

enum { MANIFEST_ROTATE_BYTES = 4 << 20 };

static int cmp_by_smallest(const void *a, const void *b)
{
    const file_meta *fa = *(file_meta *const *)a, *fb = *(file_meta *const *)b;
    return ikey_cmp(fa->smallest.data, fa->smallest.len, fb->smallest.data, fb->smallest.len);
}

static int cmp_by_number(const void *a, const void *b)
{
    const file_meta *fa = *(file_meta *const *)a, *fb = *(file_meta *const *)b;
    return fa->number < fb->number ? -1 : fa->number > fb->number;
}

static bool deleted_in(const version_edit *e, int level, uint64_t number)
{
    for (size_t i = 0; i < e->ndeleted; i++)
        if (e->deleted[i].level == level && e->deleted[i].number == number)
            return true;
    return false;
}

/* Finds a file by number in base (any level), for moves within one edit. */
static file_meta *find_in(const version *base, uint64_t number)
{
    for (int l = 0; l < LSM_LEVELS; l++)
        for (size_t i = 0; i < base->nfiles[l]; i++)
            if (base->files[l][i]->number == number)
                return base->files[l][i];
    return NULL;
}

/* Builds base + e into a new version. Added files are opened unless they are moves of a file
 * of base. Obsolete files are marked by mark_obsolete() once the new version is installed. */
static kura_status apply(version_set *vs, const version *base, const version_edit *e,
                         version **v_out)
{
    version *v = version_new();
    size_t cap[LSM_LEVELS] = {0};
    kura_status s = KURA_OK;
    if (!v)
        return kura_err(KURA_E_NOMEM, "%s: out of memory", vs->dir);
    for (int l = 0; l < LSM_LEVELS && s == KURA_OK; l++)
        for (size_t i = 0; i < base->nfiles[l]; i++) {
            file_meta *f = base->files[l][i];
            if (deleted_in(e, l, f->number))
                continue;
            if (!ptr_push((void ***)&v->files[l], &v->nfiles[l], &cap[l], f)) {
                s = kura_err(KURA_E_NOMEM, "%s: out of memory", vs->dir);
                break;
            }
            file_meta_ref(f);
        }
    for (size_t i = 0; i < e->nadded && s == KURA_OK; i++) {
        const edit_file *a = &e->added[i];
        file_meta *f = find_in(base, a->number);
        if (f) {
            file_meta_ref(f);
        } else {
            s = file_meta_open(vs->io, vs->cache, vs->dir, a->number, a->file_size, a->entries,
                               a->min_seq, a->max_seq, a->smallest.data, a->smallest.len,
                               a->largest.data, a->largest.len, &f);
            if (s != KURA_OK)
                break;
        }
        if (!ptr_push((void ***)&v->files[a->level], &v->nfiles[a->level], &cap[a->level], f)) {
            file_meta_unref(f);
            s = kura_err(KURA_E_NOMEM, "%s: out of memory", vs->dir);
        }
    }
    if (s != KURA_OK) {
        version_unref(v);
        return s;
    }
    for (int l = 0; l < LSM_LEVELS; l++)
        if (v->nfiles[l] > 1)
            qsort(v->files[l], v->nfiles[l], sizeof(file_meta *),
                  l == 0 ? cmp_by_number : cmp_by_smallest);
    version_score(v, vs->opts);
    *v_out = v;
    return KURA_OK;
}

/* Marks files of old that are not in new as obsolete. */
static void mark_obsolete(const version *old, const version *nv)
{
    for (int l = 0; l < LSM_LEVELS; l++)
        for (size_t i = 0; i < old->nfiles[l]; i++) {
            file_meta *f = old->files[l][i];
            if (!find_in(nv, f->number))
                __atomic_store_n(&f->obsolete, true, __ATOMIC_RELEASE);
        }
}

/* An edit describing the whole current state, the first record of a new manifest. */
static kura_status snapshot_edit(version_set *vs, version_edit *e)
{
    edit_init(e);
    e->has_log_number = e->has_next_file = e->has_last_seq = true;
    e->log_number = vs->log_number;
    e->next_file = vs->next_file;
    e->last_seq = vs->last_seq;
    if (vs->user_meta.len && edit_set_user_meta(e, vs->user_meta.data, vs->user_meta.len) != KURA_OK)
        return kura_err(KURA_E_NOMEM, "%s: out of memory", vs->dir);
    for (size_t i = 0; i < vs->nwal_ends; i++) {
        kura_status s = edit_add_wal_end(e, vs->wal_ends[i].number, vs->wal_ends[i].end);
        if (s != KURA_OK)
            return s;
    }
    for (int l = 0; l < LSM_LEVELS; l++)
        for (size_t i = 0; i < vs->current->nfiles[l]; i++) {
            file_meta *f = vs->current->files[l][i];
            kura_status s = edit_add_file(e, l, f->number, f->file_size, f->entries, f->min_seq,
                                          f->max_seq, f->smallest.data, f->smallest.len,
                                          f->largest.data, f->largest.len);
            if (s != KURA_OK)
                return s;
        }
    return KURA_OK;
}

/* Writes a new manifest with the current state and points CURRENT at it. */
static kura_status new_manifest(version_set *vs)
{
    char path[4096], name[64];
    version_edit e;
    kbuf rec = KBUF_INIT;
    wal_writer *w = NULL;
    uint64_t number = vs_new_file_number(vs);
    snprintf(name, sizeof name, "MANIFEST-%06llu", (unsigned long long)number);
    snprintf(path, sizeof path, "%s/%s", vs->dir, name);
    kura_status s = snapshot_edit(vs, &e);
    if (s == KURA_OK)
        s = edit_encode(&e, &rec);
    edit_free(&e);
    if (s == KURA_OK)
        s = wal_writer_open(vs->io, path, IO_KIND_MANIFEST, &w);
    if (s == KURA_OK)
        s = wal_writer_add(w, rec.data, rec.len);
    if (s == KURA_OK)
        s = wal_writer_sync(w);
    if (s == KURA_OK)
        s = io_crash_point(vs->io, "manifest.after_new");
    char cur[80];
    int n = snprintf(cur, sizeof cur, "%s\n", name);
    if (s == KURA_OK)
        s = io_write_file_atomic(vs->io, vs->dir, "CURRENT", IO_KIND_CURRENT, cur, (size_t)n);
    if (s == KURA_OK)
        s = io_crash_point(vs->io, "manifest.after_current");
    kbuf_free(&rec);
    if (s != KURA_OK) {
        wal_writer_close(w);
        return s;
    }
    if (vs->manifest) {
        wal_writer_close(vs->manifest);
        snprintf(path, sizeof path, "%s/MANIFEST-%06llu", vs->dir,
                 (unsigned long long)vs->manifest_number);
        io_unlink(vs->io, path); /* a leftover is removed at the next open */
    }
    vs->manifest = w;
    vs->manifest_number = number;
    return KURA_OK;
}

int64_t vs_wal_end(const version_set *vs, uint64_t number)
{
    for (size_t i = 0; i < vs->nwal_ends; i++)
        if (vs->wal_ends[i].number == number)
            return (int64_t)vs->wal_ends[i].end;
    return -1;
}

/* Records the edit's WAL ends and forgets those of segments below the log number. */
static void absorb_wal_ends(version_set *vs, const version_edit *e)
{
    for (size_t i = 0; i < e->nwal_ends; i++) {
        const edit_wal_end *w = &e->wal_ends[i];
        size_t j = 0;
        while (j < vs->nwal_ends && vs->wal_ends[j].number != w->number)
            j++;
        if (j == vs->nwal_ends) {
            if (vs->nwal_ends == vs->wal_ends_cap) {
                size_t cap = vs->wal_ends_cap ? vs->wal_ends_cap * 2 : 4;
                edit_wal_end *n = realloc(vs->wal_ends, cap * sizeof *n);
                if (!n)
                    continue; /* only weakens a later damage check */
                vs->wal_ends = n;
                vs->wal_ends_cap = cap;
            }
            vs->nwal_ends++;
        }
        vs->wal_ends[j] = *w;
    }
    for (size_t j = 0; j < vs->nwal_ends;)
        if (vs->wal_ends[j].number < vs->log_number)
            vs->wal_ends[j] = vs->wal_ends[--vs->nwal_ends];
        else
            j++;
}

static kura_status absorb_counters(version_set *vs, const version_edit *e)
{
    if (e->has_log_number && e->log_number > vs->log_number)
        vs->log_number = e->log_number;
    if (e->has_next_file && e->next_file > vs->next_file)
        vs->next_file = e->next_file;
    if (e->has_last_seq && e->last_seq > vs->last_seq)
        vs->last_seq = e->last_seq;
    if (e->has_user_meta) {
        vs->user_meta.len = 0;
        if (!kbuf_append(&vs->user_meta, e->user_meta.data, e->user_meta.len))
            return kura_err(KURA_E_NOMEM, "%s: out of memory", vs->dir);
    }
    absorb_wal_ends(vs, e);
    return KURA_OK;
}

/* Folds edit e into acc, which lists the live files as additions (files are opened only once
 * the whole manifest is read: a file added and later deleted may no longer exist). */
static kura_status accumulate(version_edit *acc, const version_edit *e)
{
    for (size_t d = 0; d < e->ndeleted; d++)
        for (size_t i = 0; i < acc->nadded; i++) {
            edit_file *f = &acc->added[i];
            if (f->level != e->deleted[d].level || f->number != e->deleted[d].number)
                continue;
            kbuf_free(&f->smallest);
            kbuf_free(&f->largest);
            acc->added[i] = acc->added[--acc->nadded];
            break;
        }
    for (size_t i = 0; i < e->nadded; i++) {
        const edit_file *a = &e->added[i];
        kura_status s = edit_add_file(acc, a->level, a->number, a->file_size, a->entries,
                                      a->min_seq, a->max_seq, a->smallest.data, a->smallest.len,
                                      a->largest.data, a->largest.len);
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

/* The path of the manifest CURRENT's text names, and its number. */
static kura_status manifest_path(const char *dir, const char *current, char *path, size_t cap,
                                 uint64_t *number_out)
{
    size_t n = strcspn(current, "\n");
    if (n == 0 || n > 64 || strncmp(current, "MANIFEST-", 9) != 0)
        return kura_err(KURA_E_CORRUPTION, "%s/CURRENT: does not name a manifest", dir);
    snprintf(path, cap, "%s/%.*s", dir, (int)n, current);
    *number_out = strtoull(current + 9, NULL, 10);
    return KURA_OK;
}

/* Reads the manifest at `path` and folds its edits into acc (the live files as additions);
 * vs (NULL: none) also takes each edit's counters. *torn_out: -1, or the offset of a torn
 * tail that ended it. */
static kura_status fold_manifest(io_env *io, const char *path, version_edit *acc,
                                 version_set *vs, size_t *nrecs_out, int64_t *torn_out)
{
    char what[4200];
    wal_reader *r = NULL;
    kura_status s = wal_reader_open(io, path, IO_KIND_MANIFEST, &r);
    if (s != KURA_OK)
        return s == KURA_E_NOT_FOUND
                   ? kura_err(KURA_E_CORRUPTION, "%s: named by CURRENT but missing", path)
                   : s;
    const uint8_t *rec;
    size_t len;
    size_t nrecs = 0;
    while ((s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        nrecs++;
        version_edit e;
        edit_init(&e);
        snprintf(what, sizeof what, "%s at offset %llu", path,
                 (unsigned long long)wal_reader_record_offset(r));
        s = edit_decode(&e, rec, len, what);
        if (s == KURA_OK)
            s = accumulate(acc, &e);
        if (s == KURA_OK && vs)
            s = absorb_counters(vs, &e);
        edit_free(&e);
        if (s != KURA_OK)
            break;
    }
    *torn_out = wal_reader_torn_at(r);
    wal_reader_close(r);
    if (s == KURA_E_NOT_FOUND)
        s = nrecs ? KURA_OK
                  : kura_err(KURA_E_CORRUPTION, "%s: no complete record (every manifest starts "
                                                "with a synced snapshot)", path);
    *nrecs_out = nrecs;
    return s;
}

/* Replays the manifest named by CURRENT. */
static kura_status recover(version_set *vs, const char *current)
{
    char path[4096];
    kura_status s = manifest_path(vs->dir, current, path, sizeof path, &vs->manifest_number);
    if (s != KURA_OK)
        return s;
    version_edit acc;
    edit_init(&acc);
    size_t nrecs = 0;
    int64_t torn = -1;
    s = fold_manifest(vs->io, path, &acc, vs, &nrecs, &torn);
    version *v = NULL;
    if (s == KURA_OK)
        s = apply(vs, vs->current, &acc, &v);
    if (s == KURA_OK) {
        version_unref(vs->current);
        vs->current = v;
    }
    edit_free(&acc);
    if (s == KURA_OK && vs->next_file <= vs->manifest_number)
        vs->next_file = vs->manifest_number + 1;
    return s;
}

kura_status vs_manifest_read(io_env *io, const char *dir, vs_manifest *m)
{
    memset(m, 0, sizeof *m);
    edit_init(&m->live);
    m->torn_at = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/CURRENT", dir);
    void *cur = NULL;
    size_t n = 0;
    kura_status s = io_read_file(io, path, IO_KIND_CURRENT, 256, &cur, &n);
    if (s == KURA_E_NOT_FOUND)
        return kura_err(KURA_E_CORRUPTION, "%s: CURRENT is missing", dir);
    if (s != KURA_OK)
        return s;
    s = manifest_path(dir, cur, path, sizeof path, &m->number);
    free(cur);
    if (s == KURA_OK)
        s = fold_manifest(io, path, &m->live, NULL, &m->records, &m->torn_at);
    return s;
}

void vs_manifest_free(vs_manifest *m)
{
    edit_free(&m->live);
    memset(m, 0, sizeof *m);
}

kura_status vs_open(version_set *vs, io_env *io, block_cache *cache, const lsm_options *opts,
                    const char *dir, bool create)
{
    memset(vs, 0, sizeof *vs);
    vs->io = io;
    vs->cache = cache;
    vs->opts = opts;
    vs->dir = dir;
    vs->next_file = 2;
    if (!(vs->current = version_new()))
        return kura_err(KURA_E_NOMEM, "%s: out of memory", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/CURRENT", dir);
    void *cur = NULL;
    size_t n = 0;
    kura_status s = io_read_file(io, path, IO_KIND_CURRENT, 256, &cur, &n);
    if (s == KURA_OK) {
        s = recover(vs, cur);
        free(cur);
    } else if (s == KURA_E_NOT_FOUND) {
        s = create ? KURA_OK : kura_err(KURA_E_CORRUPTION, "%s: CURRENT is missing", dir);
        /* A new tree: the manifest takes the next number and the first WAL segment the one
         * after; the very first snapshot names it, so the log number always names a segment
         * that exists (lsm_recover.c checks it). */
        vs->log_number = vs->next_file + 1;
        vs->created = true;
    }
    if (s == KURA_OK)
        s = new_manifest(vs);
    if (s != KURA_OK)
        vs_close(vs);
    return s;
}

void vs_close(version_set *vs)
{
    free(vs->wal_ends);
    vs->wal_ends = NULL;
    vs->nwal_ends = vs->wal_ends_cap = 0;
    kbuf_free(&vs->user_meta);
    wal_writer_close(vs->manifest);
    vs->manifest = NULL;
    version_unref(vs->current);
    vs->current = NULL;
}

kura_status vs_log_and_apply(version_set *vs, version_edit *e)
{
    if (!vs->manifest)
        return kura_err(KURA_E_READONLY, "%s: manifest is closed after an error", vs->dir);
    e->has_next_file = true;
    e->next_file = vs->next_file;
    version *v = NULL;
    kura_status s = apply(vs, vs->current, e, &v);
    if (s != KURA_OK)
        return s;
    kbuf rec = KBUF_INIT;
    s = edit_encode(e, &rec);
    if (s == KURA_OK)
        s = wal_writer_add(vs->manifest, rec.data, rec.len);
    if (s == KURA_OK)
        s = wal_writer_sync(vs->manifest);
    kbuf_free(&rec);
    if (s != KURA_OK) {
        /* the manifest may now end in a torn record: never append to it again */
        wal_writer_close(vs->manifest);
        vs->manifest = NULL;
        version_unref(v);
        return s;
    }
    s = absorb_counters(vs, e); /* only out of memory: the partition then turns read-only */
    mark_obsolete(vs->current, v);
    version_unref(vs->current);
    vs->current = v;
    if (s == KURA_OK && wal_writer_size(vs->manifest) > MANIFEST_ROTATE_BYTES)
        s = new_manifest(vs);
    return s;
}
