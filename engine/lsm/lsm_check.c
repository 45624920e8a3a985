/*
 * lsm_check.c - This file contains lsm_check_files: the integrity check of one partition's
 * files (lsm.h; `kura check`, engine/check.c), on a partition that may be in use.
 *
 *  - CURRENT and the MANIFEST it names are read as recovery reads them (vs_manifest_read),
 *    under the partition's mutex, which every manifest write holds: the manifest cannot
 *    change meanwhile. Every live SSTable it names must exist with the size it records, and
 *    the manifest's live set must be the open partition's.
 *  - Every SSTable of the current version (pinned: a compaction cannot delete it meanwhile)
 *    is opened afresh, without the block cache, and read through (sst_reader_verify).
 *  - Every WAL segment is read from its start with the WAL reader, each record's checksum
 *    checked and each batch parsed. The current segment is read up to what is durable (the
 *    bytes after are still being written); a segment a recovery replayed up to a recorded end
 *    (docs/format/manifest.md, tag 6) up to that end, which it must reach; any other closed
 *    segment must end cleanly, since a segment is synced before the next one starts
 *    (lsm_recover.c). A torn tail in a segment below the log number that has no recorded end
 *    any more is a crash's torn tail that a recovery accepted and a flush has since covered:
 *    a note, not a problem.
 *  - A partition turned read-only by an error is a problem.
 */
#include "engine/lsm/lsm_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"
#include "wal/reader.h"

/* Damaged blocks of one table reported line by line; the rest are counted in one line. */
enum { CHECK_BLOCK_LINES = 10 };

typedef struct check_ctx {
    lsm_tree *t;
    lsm_check_fn fn;
    void *arg;
    lsm_check_stats *st;
    /* what the partition knew when the manifest was read */
    uint64_t log_number;
    edit_wal_end *ends;
    size_t nends;
    /* the table being verified: its lines so far */
    uint64_t table_lines;
    /* lines said while the partition's mutex is held, passed on once it is not: a flag byte
     * (1: a problem), the line, a NUL; `lost`: some could not be kept (out of memory) */
    bool deferring, lost;
    kbuf deferred;
} check_ctx;

static void say(check_ctx *c, bool problem, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(check_ctx *c, bool problem, const char *fmt, ...)
{
    char line[4600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (problem)
        c->st->problems++;
    if (!c->deferring)
        c->fn(c->arg, problem, line);
    else if (!kbuf_put_u8(&c->deferred, problem) ||
             !kbuf_append(&c->deferred, line, strlen(line) + 1))
        c->lost = true;
}

/* Passes on the lines said under the partition's mutex. */
static kura_status say_deferred(check_ctx *c)
{
    for (size_t off = 0; off < c->deferred.len;) {
        const char *line = (const char *)c->deferred.data + off + 1;
        c->fn(c->arg, c->deferred.data[off] != 0, line);
        off += 1 + strlen(line) + 1;
    }
    kbuf_free(&c->deferred);
    c->deferring = false;
    return c->lost ? kura_err(KURA_E_NOMEM, "%s: out of memory", c->t->dir) : KURA_OK;
}

/* ---- CURRENT, MANIFEST and the live tables ----------------------------------------------- */

static bool version_has(const version *v, int level, uint64_t number)
{
    for (size_t i = 0; i < v->nfiles[level]; i++)
        if (v->files[level][i]->number == number)
            return true;
    return false;
}

static bool edit_has(const version_edit *e, int level, uint64_t number)
{
    for (size_t i = 0; i < e->nadded; i++)
        if (e->added[i].level == level && e->added[i].number == number)
            return true;
    return false;
}

/* Every live table of the manifest on disk with its size, and the same set as the version. */
static void check_live(check_ctx *c, const vs_manifest *m, const version *v)
{
    lsm_tree *t = c->t;
    for (size_t i = 0; i < m->live.nadded; i++) {
        const edit_file *f = &m->live.added[i];
        char path[4096];
        snprintf(path, sizeof path, "%s/%06llu.sst", t->dir, (unsigned long long)f->number);
        uint64_t size = 0;
        kura_status s = io_path_size(t->sh->io, path, &size);
        if (s == KURA_E_NOT_FOUND)
            say(c, true, "%s: named by MANIFEST-%06llu (level %d) but missing", path,
                (unsigned long long)m->number, f->level);
        else if (s != KURA_OK)
            say(c, true, "%s", kura_last_error());
        else if (size != f->file_size)
            say(c, true, "%s: %llu bytes, but MANIFEST-%06llu records %llu", path,
                (unsigned long long)size, (unsigned long long)m->number,
                (unsigned long long)f->file_size);
        if (!version_has(v, f->level, f->number))
            say(c, true, "%s/MANIFEST-%06llu: lists table %06llu at level %d, which the open "
                         "partition does not have",
                t->dir, (unsigned long long)m->number, (unsigned long long)f->number, f->level);
    }
    for (int l = 0; l < LSM_LEVELS; l++)
        for (size_t i = 0; i < v->nfiles[l]; i++)
            if (!edit_has(&m->live, l, v->files[l][i]->number))
                say(c, true, "%s/MANIFEST-%06llu: does not list table %06llu at level %d, which "
                             "the open partition has",
                    t->dir, (unsigned long long)m->number,
                    (unsigned long long)v->files[l][i]->number, l);
}

/* Reads the manifest under the partition's mutex and pins the current version (*v_out). */
static kura_status check_manifest(check_ctx *c, version **v_out)
{
    lsm_tree *t = c->t;
    vs_manifest m;
    kmutex_lock(&t->mu);
    c->deferring = true; /* the caller's callback never runs under the mutex */
    kura_status s = vs_manifest_read(t->sh->io, t->dir, &m);
    if (s == KURA_OK) {
        c->st->manifests++;
        check_live(c, &m, t->vs.current);
        if (m.torn_at >= 0)
            say(c, true, "%s/MANIFEST-%06llu: ends in a damaged record at offset %lld (every "
                         "edit is synced before the next)",
                t->dir, (unsigned long long)m.number, (long long)m.torn_at);
    } else if (s != KURA_E_NOMEM) {
        say(c, true, "%s", kura_last_error());
        s = KURA_OK;
    }
    c->log_number = t->vs.log_number;
    c->nends = t->vs.nwal_ends;
    c->ends = c->nends ? malloc(c->nends * sizeof *c->ends) : NULL;
    if (c->nends && !c->ends)
        s = kura_err(KURA_E_NOMEM, "%s: out of memory", t->dir);
    else if (c->nends)
        memcpy(c->ends, t->vs.wal_ends, c->nends * sizeof *c->ends);
    *v_out = t->vs.current;
    version_ref(*v_out);
    kmutex_unlock(&t->mu);
    vs_manifest_free(&m);
    kura_status s2 = say_deferred(c);
    return s == KURA_OK ? s2 : s;
}

/* ---- SSTables ---------------------------------------------------------------------------- */

static void table_line(void *arg, const char *line)
{
    check_ctx *c = arg;
    if (c->table_lines++ < CHECK_BLOCK_LINES)
        c->fn(c->arg, true, line);
}

static kura_status check_table(check_ctx *c, const file_meta *f)
{
    sst_reader *r = NULL;
    kura_status s = sst_reader_open(c->t->sh->io, f->path, f->file_size, NULL, &r);
    if (s == KURA_E_NOMEM)
        return s;
    if (s != KURA_OK) { /* footer, index, filters, properties: the message has the offset */
        say(c, true, "%s", kura_last_error());
        return KURA_OK;
    }
    sst_verify_stats vst;
    c->table_lines = 0;
    s = sst_reader_verify(r, table_line, c, &vst);
    c->st->sstables++;
    c->st->blocks += vst.blocks;
    c->st->entries += vst.entries;
    c->st->problems += vst.problems;
    if (vst.problems > CHECK_BLOCK_LINES)
        say(c, false, "%s: %llu more damaged blocks", f->path,
            (unsigned long long)(vst.problems - CHECK_BLOCK_LINES));
    if (s != KURA_OK && s != KURA_E_NOMEM) {
        say(c, true, "%s", kura_last_error());
        s = KURA_OK;
    }
    sst_reader_close(r);
    return s;
}

static kura_status check_tables(check_ctx *c, const version *v)
{
    kura_status s = KURA_OK;
    for (int l = 0; l < LSM_LEVELS && s == KURA_OK; l++)
        for (size_t i = 0; i < v->nfiles[l] && s == KURA_OK; i++)
            s = check_table(c, v->files[l][i]);
    return s;
}

/* ---- WAL segments ------------------------------------------------------------------------ */

static kura_status no_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                            size_t klen, const uint8_t *val, size_t vlen)
{
    return KURA_OK;
}

static int64_t recorded_end(const check_ctx *c, uint64_t number)
{
    for (size_t i = 0; i < c->nends; i++)
        if (c->ends[i].number == number)
            return (int64_t)c->ends[i].end;
    return -1;
}

/* Reads the records of an open segment up to `limit`: every checksum, every batch. Returns
 * the reader's final status (KURA_E_NOT_FOUND: the end), a parse failure reported. */
static kura_status read_records(check_ctx *c, wal_reader *r, const char *path)
{
    const uint8_t *rec;
    size_t len;
    kura_status s;
    char what[4200];
    while ((s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        c->st->wal_records++;
        snprintf(what, sizeof what, "%s: record at offset %llu", path,
                 (unsigned long long)wal_reader_record_offset(r));
        kura_status ps = lsm_rep_iterate(rec, len, no_entry, NULL, what);
        if (ps == KURA_E_NOMEM)
            return ps;
        if (ps != KURA_OK)
            say(c, true, "%s", kura_last_error());
    }
    return s;
}

/* How segment `number` ended (torn at `torn`, its records at `end`), judged. */
static void judge_end(check_ctx *c, const char *path, uint64_t number, bool current,
                      int64_t recorded, uint64_t end, int64_t torn)
{
    if (recorded >= 0 && end < (uint64_t)recorded)
        say(c, true, "%s: records end at offset %llu, but a recovery read them up to offset %lld",
            path, (unsigned long long)end, (long long)recorded);
    else if (torn < 0 || recorded >= 0)
        return;
    else if (current)
        say(c, true, "%s: damaged record at offset %lld, before the durable end of the log",
            path, (long long)torn);
    else if (number >= c->log_number)
        say(c, true, "%s: ends in a damaged record at offset %lld, but it is not the newest "
                     "segment (a segment is synced before the next one starts)",
            path, (long long)torn);
    else
        say(c, false, "%s: ends in a torn record at offset %lld: a crash's torn tail, accepted "
                      "by the recovery after it (its records are in the tables since)",
            path, (long long)torn);
}

static kura_status check_segment(check_ctx *c, uint64_t number, bool current, uint64_t limit)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%06llu.log", c->t->dir, (unsigned long long)number);
    int64_t recorded = current ? -1 : recorded_end(c, number);
    if (recorded >= 0)
        limit = (uint64_t)recorded;
    wal_reader *r = NULL;
    kura_status s = wal_reader_open(c->t->sh->io, path, IO_KIND_WAL, &r);
    if (s == KURA_E_NOT_FOUND)
        return KURA_OK; /* deleted since it was listed: no longer needed */
    if (s == KURA_OK)
        s = wal_reader_seek(r, 0, limit);
    if (s == KURA_OK)
        s = read_records(c, r, path);
    c->st->wal_segments++;
    if (s == KURA_E_NOT_FOUND) {
        judge_end(c, path, number, current, recorded, wal_reader_end_offset(r),
                  wal_reader_torn_at(r));
        s = KURA_OK;
    } else if (s != KURA_E_NOMEM) { /* corruption: the message names the file and offset */
        say(c, true, "%s", kura_last_error());
        s = KURA_OK;
    }
    wal_reader_close(r);
    return s;
}

static kura_status check_wals(check_ctx *c)
{
    lsm_tree *t = c->t;
    if (t->opts.no_wal)
        return KURA_OK;
    lsm_wal_pos durable = lsm_wal_durable(t); /* segments after it started after this call */
    uint64_t *nums = NULL;
    size_t n = 0;
    kura_status s = lsm_list_wals(t, 0, 0, &nums, &n);
    if (s != KURA_OK && s != KURA_E_NOMEM) {
        say(c, true, "%s", kura_last_error());
        return KURA_OK;
    }
    for (size_t i = 0; i < n && s == KURA_OK && nums[i] <= durable.segment; i++) {
        bool current = nums[i] == durable.segment;
        s = check_segment(c, nums[i], current, current ? durable.offset : UINT64_MAX);
    }
    free(nums);
    return s;
}

kura_status lsm_check_files(lsm_tree *t, lsm_check_fn fn, void *arg, lsm_check_stats *st)
{
    check_ctx c = {.t = t, .fn = fn, .arg = arg, .st = st};
    version *v = NULL;
    kura_status s = check_manifest(&c, &v);
    if (s == KURA_OK)
        s = check_tables(&c, v);
    version_unref(v);
    if (s == KURA_OK)
        s = check_wals(&c);
    free(c.ends);
    if (s == KURA_OK && lsm_error(t) != KURA_OK)
        say(&c, true, "%s", kura_last_error());
    return s;
}

/* ---- Change stream positions ------------------------------------------------------------- */

static int pos_cmp(lsm_wal_pos a, lsm_wal_pos b)
{
    if (a.segment != b.segment)
        return a.segment < b.segment ? -1 : 1;
    return (a.offset > b.offset) - (a.offset < b.offset);
}

/* Whether `offset` is where a record of the open segment starts, or where its last whole
 * record ends; *unreadable_out: damage stopped the reading before it. */
static kura_status at_boundary(wal_reader *r, uint64_t offset, bool *yes_out,
                               bool *unreadable_out)
{
    const uint8_t *rec;
    size_t len;
    kura_status s;
    *yes_out = *unreadable_out = false;
    while ((s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        uint64_t at = wal_reader_record_offset(r);
        if (at >= offset) {
            *yes_out = at == offset;
            return KURA_OK;
        }
    }
    if (s == KURA_E_NOT_FOUND) {
        *yes_out = wal_reader_end_offset(r) == offset;
        return KURA_OK;
    }
    *unreadable_out = s != KURA_E_NOMEM;
    return s == KURA_E_NOMEM ? s : KURA_OK;
}

/* The segment that should hold `pos`: *found_out, or else whether it is older than every
 * segment left (*older_out). */
static kura_status find_segment(lsm_tree *t, uint64_t segment, bool *found_out, bool *older_out)
{
    uint64_t *nums = NULL;
    size_t n = 0;
    kura_status s = lsm_list_wals(t, 0, 0, &nums, &n);
    if (s != KURA_OK)
        return s;
    *found_out = false;
    *older_out = n == 0 || segment < nums[0];
    for (size_t i = 0; i < n && !*found_out; i++)
        *found_out = nums[i] == segment;
    free(nums);
    return KURA_OK;
}

kura_status lsm_wal_pos_check(lsm_tree *t, lsm_wal_pos pos, lsm_wal_pos_state *out)
{
    lsm_wal_pos durable = lsm_wal_durable(t), tail = lsm_wal_tail(t);
    bool current = pos.segment == tail.segment, found = false, older = false;
    if (pos_cmp(pos, tail) > 0) {
        *out = LSM_POS_PAST_END;
        return KURA_OK;
    }
    /* the tail, a segment's start, a part not yet durable (the writer may still buffer it) */
    *out = LSM_POS_OK;
    if (pos_cmp(pos, tail) == 0 || (current && pos.offset > durable.offset))
        return KURA_OK;
    kura_status s = current ? KURA_OK : find_segment(t, pos.segment, &found, &older);
    if (s != KURA_OK || (!current && !found)) {
        *out = older ? LSM_POS_TRIMMED : LSM_POS_MISSING;
        return s;
    }
    if (pos.offset == 0)
        return KURA_OK;
    char path[4096];
    snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)pos.segment);
    wal_reader *r = NULL;
    s = wal_reader_open(t->sh->io, path, IO_KIND_WAL, &r);
    if (s == KURA_E_NOT_FOUND) { /* deleted since it was listed: trimmed */
        *out = LSM_POS_TRIMMED;
        return KURA_OK;
    }
    bool yes = false, unreadable = false;
    if (s == KURA_OK)
        s = wal_reader_seek(r, 0, current ? durable.offset : UINT64_MAX);
    if (s == KURA_OK)
        s = at_boundary(r, pos.offset, &yes, &unreadable);
    wal_reader_close(r);
    if (s == KURA_OK)
        *out = unreadable ? LSM_POS_UNREADABLE : yes ? LSM_POS_OK : LSM_POS_NOT_BOUNDARY;
    return s;
}
