/*
 * check_admin.c - This file contains kura's integrity-check extension (check_admin.h): the
 * lines kura_check reports, collected into the arrays "Problems" and "Notes", and its summary
 * as the object "Summary", for kura-server's POST /kura/check and the CLI's KuraCheck. The
 * request body is parsed with api/'s JSON documents (jdoc.h) and refuses unknown members, as
 * index_admin.c's do; strings are written with its escaper.
 */
#include "server/check_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jdoc.h"
#include "util/buf.h"

/* The lines so far: each array's members, comma-separated, without the brackets. */
typedef struct chk_lines {
    kbuf problems, notes;
    bool nomem;
} chk_lines;

static void chk_line(void *arg, kura_check_severity sev, const char *line)
{
    chk_lines *l = arg;
    kbuf *b = sev == KURA_CHECK_PROBLEM ? &l->problems : &l->notes;
    if (!l->nomem && ((b->len && !kbuf_append(b, ",", 1)) || !ixadm_put_str(b, line)))
        l->nomem = true;
}

static bool put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

static bool put_u64(kbuf *b, const char *name, uint64_t v, bool first)
{
    char num[64];
    snprintf(num, sizeof num, "%s\"%s\":%" PRIu64, first ? "" : ",", name, v);
    return put(b, num);
}

static bool put_summary(kbuf *b, const kura_check_summary *s)
{
    return put(b, ",\"Summary\":{") && put_u64(b, "Problems", s->problems, true) &&
           put_u64(b, "Notes", s->notes, false) && put_u64(b, "Trees", s->trees, false) &&
           put_u64(b, "Partitions", s->partitions, false) &&
           put_u64(b, "Manifests", s->manifests, false) &&
           put_u64(b, "SSTables", s->sstables, false) &&
           put_u64(b, "SSTableBlocks", s->sstable_blocks, false) &&
           put_u64(b, "SSTableEntries", s->sstable_entries, false) &&
           put_u64(b, "WalSegments", s->wal_segments, false) &&
           put_u64(b, "WalRecords", s->wal_records, false) &&
           put_u64(b, "Tables", s->tables, false) && put_u64(b, "Items", s->items, false) &&
           put_u64(b, "Indexes", s->indexes, false) &&
           put_u64(b, "IndexesSkipped", s->indexes_skipped, false) &&
           put_u64(b, "IndexEntries", s->index_entries, false) &&
           put_u64(b, "MissingEntries", s->missing_entries, false) &&
           put_u64(b, "ExtraEntries", s->extra_entries, false) &&
           put_u64(b, "StaleEntries", s->stale_entries, false) &&
           put_u64(b, "Collections", s->collections, false) &&
           put_u64(b, "Streams", s->streams, false) && put_u64(b, "Shards", s->shards, false) &&
           put(b, "}}");
}

kura_status chkadm_run(kura_db *db, const char *table, ixadm_reply *out)
{
    chk_lines l = {KBUF_INIT, KBUF_INIT, false};
    kura_check_summary sum;
    kura_status s = kura_check(db, table, chk_line, &l, &sum);
    kbuf b = KBUF_INIT;
    if (s == KURA_OK && !l.nomem) {
        bool ok = put(&b, "{\"Problems\":[") && kbuf_append(&b, l.problems.data, l.problems.len) &&
                  put(&b, "],\"Notes\":[") && kbuf_append(&b, l.notes.data, l.notes.len) &&
                  put(&b, "]") && put_summary(&b, &sum);
        s = ok ? ixadm_finish(&b, 200, NULL, out) : KURA_E_NOMEM;
    } else if (s == KURA_OK) {
        s = KURA_E_NOMEM;
    }
    kbuf_free(&l.problems);
    kbuf_free(&l.notes);
    if (s == KURA_OK)
        return KURA_OK;
    kbuf_free(&b);
    if (s == KURA_E_NOMEM)
        return ixadm_fail(out, s, 500, "InternalServerError", "out of memory");
    return ixadm_fail_status(out, s);
}

/* Whether the body is only white space (an empty POST: check everything). */
static bool blank(const char *json, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!strchr(" \t\r\n", json[i]))
            return false;
    return true;
}

/* The TableName of a parsed body (NULL: none); anything else is refused with its reply. */
static kura_status parse_body(jd_t *req, const char **table_out, ixadm_reply *out)
{
    const char *key;
    jd_t *v;
    *table_out = NULL;
    if (!jd_is_object(req))
        return ixadm_fail(out, KURA_E_INVALID, 400, "SerializationException",
                          "the request body must be a JSON object");
    jd_object_foreach(req, key, v)
    {
        if (strcmp(key, "TableName") != 0)
            return ixadm_fail(out, KURA_E_INVALID, 400, "ValidationException",
                              "unknown member %s (this request takes TableName)", key);
        if (!jd_is_string(v))
            return ixadm_fail(out, KURA_E_INVALID, 400, "ValidationException",
                              "TableName must be a string");
        *table_out = jd_string_value(v);
    }
    return KURA_OK;
}

kura_status chkadm_json(kura_db *db, const char *json, size_t len, ixadm_reply *out)
{
    if (blank(json, len))
        return chkadm_run(db, NULL, out);
    jd_doc *doc = jd_doc_new();
    if (!doc)
        return ixadm_fail(out, KURA_E_NOMEM, 500, "InternalServerError", "out of memory");
    char err[160];
    const char *table = NULL;
    jd_t *req = jd_parse(doc, json, len, 0, err, sizeof err);
    kura_status s = req ? parse_body(req, &table, out)
                        : ixadm_fail(out, KURA_E_INVALID, 400, "SerializationException", "%s",
                                     err);
    if (s == KURA_OK)
        s = chkadm_run(db, table, out);
    jd_doc_free(doc);
    return s;
}
