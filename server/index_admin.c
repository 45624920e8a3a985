/*
 * index_admin.c - This file contains kura's secondary-index extension (index_admin.h): the
 * JSON of every index's lag (kura_list_tables, kura_describe_table, kura_index_stats_get),
 * waits for indexes to catch up (kura_index_wait), rebuilds (kura_rebuild_index) and the
 * --gsi-read-wait peek at a Query or Scan body. kura-server and the `kura` CLI both build their bodies here, so the two print
 * the same thing.
 *
 * Request bodies are parsed with api/'s JSON documents (jdoc.h), the parser kura_execute()
 * uses; unknown members are refused (a typo such as "Timeout" must not silently wait the
 * default). Bodies are written with a small escaper of our own: names are DynamoDB names
 * ([a-zA-Z0-9_.-]), but messages may quote a path or a client's string, so every string is
 * escaped and bytes that are not UTF-8 become U+FFFD.
 */
#include "server/index_admin.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jdoc.h"
#include "util/buf.h"
#include "util/status.h"
#include "util/thread.h"

#define ERROR_PREFIX "com.amazonaws.dynamodb.v20120810#"
#define TIMEOUT_TYPE "IndexWaitTimeoutException"

/* ---- writing ----------------------------------------------------------------------------- */

static bool put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

/* `s` as a JSON string, quotes included. */
static bool put_str(kbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)s;
    bool ok = kbuf_append(b, "\"", 1);
    while (ok && *p) {
        size_t n = 1;
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            ok = kbuf_append(b, e, 2);
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            ok = kbuf_append(b, e, 6);
        } else if (*p < 0x80) {
            ok = kbuf_append(b, p, 1);
        } else if ((n = jd_utf8_seq(p, strnlen((const char *)p, 4))) > 0) {
            ok = kbuf_append(b, p, n);
        } else {
            n = 1;
            ok = kbuf_append(b, "\xef\xbf\xbd", 3);
        }
        p += n;
    }
    return ok && kbuf_append(b, "\"", 1);
}

static bool put_member_u64(kbuf *b, const char *name, uint64_t v)
{
    char num[48];
    snprintf(num, sizeof num, ",\"%s\":%" PRIu64, name, v);
    return put(b, num);
}

/* Hands the buffer (NUL-terminated) to the reply. */
static kura_status finish(kbuf *b, unsigned status, const char *type, ixadm_reply *out)
{
    if (!kbuf_append(b, "", 1)) {
        kbuf_free(b);
        return KURA_E_NOMEM;
    }
    *out = (ixadm_reply){status, type, (char *)b->data, b->len - 1, ""};
    return KURA_OK;
}

/* An error reply {"__type":...,"message":...}; returns `s`, or KURA_E_NOMEM with out->body
 * NULL when the body cannot be made. */
static kura_status fail(ixadm_reply *out, kura_status s, unsigned status, const char *type,
                        const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kbuf b = KBUF_INIT;
    bool ok = put(&b, "{\"__type\":\"" ERROR_PREFIX) && put(&b, type) &&
              put(&b, "\",\"message\":") && put_str(&b, msg) && put(&b, "}");
    if (!ok || finish(&b, status, type, out) != KURA_OK) {
        kbuf_free(&b);
        *out = (ixadm_reply){500, "InternalServerError", NULL, 0, "out of memory"};
        return KURA_E_NOMEM;
    }
    size_t n = strnlen(msg, sizeof out->message - 1); /* the log line's copy may be cut */
    memcpy(out->message, msg, n);
    out->message[n] = '\0';
    return s;
}

/* The reply to a failed kura call, from its status and kura_last_error(). */
static kura_status fail_status(ixadm_reply *out, kura_status s)
{
    const char *msg = kura_last_error();
    if (!*msg) msg = kura_status_str(s);
    switch (s) {
    case KURA_E_RESOURCE_NOT_FOUND:
        return fail(out, s, 400, "ResourceNotFoundException", "%s", msg);
    case KURA_E_INVALID:
        return fail(out, s, 400, "ValidationException", "%s", msg);
    case KURA_E_RESOURCE_IN_USE:
        return fail(out, s, 400, "ResourceInUseException", "%s", msg);
    case KURA_E_BUSY:
        return fail(out, s, 503, TIMEOUT_TYPE, "%s", msg);
    default:
        return fail(out, s, 500, "InternalServerError", "%s", msg);
    }
}

static kura_status nomem(ixadm_reply *out)
{
    return fail(out, KURA_E_NOMEM, 500, "InternalServerError", "out of memory");
}

/* ---- the same, for the other extensions (check_admin.c) ------------------------------------ */

bool ixadm_put_str(kbuf *b, const char *s)
{
    return put_str(b, s);
}

kura_status ixadm_finish(kbuf *b, unsigned status, const char *type, ixadm_reply *out)
{
    return finish(b, status, type, out);
}

kura_status ixadm_fail(ixadm_reply *out, kura_status s, unsigned status, const char *type,
                       const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail(out, s, status, type, "%s", msg);
}

kura_status ixadm_fail_status(ixadm_reply *out, kura_status s)
{
    return fail_status(out, s);
}

/* ---- stats ------------------------------------------------------------------------------- */

/* One index's object, with a leading comma unless it is the first; an index dropped since
 * the description was made is left out (*wrote_out false). */
static kura_status put_index(kbuf *b, kura_db *db, const char *table,
                             const kura_index_description *ix, bool gsi, bool first,
                             bool *wrote_out)
{
    kura_index_stats st;
    kura_status s = kura_index_stats_get(db, table, ix->index_name, &st);
    *wrote_out = false;
    if (s == KURA_E_RESOURCE_NOT_FOUND) return KURA_OK;
    if (s != KURA_OK) return s;
    bool ok = (first || put(b, ",")) && put(b, "{\"IndexName\":") && put_str(b, ix->index_name) &&
              put(b, gsi ? ",\"Kind\":\"GSI\"" : ",\"Kind\":\"LSI\"") && put(b, ",\"Status\":") &&
              put_str(b, ix->index_status ? ix->index_status : "ACTIVE") &&
              put(b, ix->backfilling ? ",\"Backfilling\":true" : ",\"Backfilling\":false") &&
              put_member_u64(b, "LagWrites", st.lag_writes) &&
              put_member_u64(b, "LagMillis", st.lag_ms) &&
              put_member_u64(b, "Applied", st.applied) &&
              put_member_u64(b, "Checkpoints", st.checkpoints) &&
              put_member_u64(b, "QueueBytes", st.queue_bytes) && put(b, ",\"Error\":") &&
              (st.error == KURA_OK ? put(b, "null") : put_str(b, kura_status_str(st.error))) &&
              put(b, st.rebuilding ? ",\"Rebuilding\":true}" : ",\"Rebuilding\":false}");
    if (!ok) return KURA_E_NOMEM;
    *wrote_out = true;
    return KURA_OK;
}

/* The indexes of a description, LSIs first; `index` non-NULL: that one only. */
static kura_status put_indexes(kbuf *b, kura_db *db, const kura_table_description *d,
                               const char *index)
{
    bool first = true;
    for (int gsi = 0; gsi < 2; gsi++) {
        const kura_index_description *ix =
            gsi ? d->global_secondary_indexes : d->local_secondary_indexes;
        size_t n = gsi ? d->global_secondary_indexes_count : d->local_secondary_indexes_count;
        for (size_t i = 0; i < n; i++) {
            if (index && strcmp(ix[i].index_name, index) != 0) continue;
            bool wrote;
            kura_status s = put_index(b, db, d->table_name, &ix[i], gsi, first, &wrote);
            if (s != KURA_OK) return s;
            if (wrote) first = false;
        }
    }
    return KURA_OK;
}

static bool has_index(const kura_table_description *d, const char *index)
{
    for (size_t i = 0; i < d->local_secondary_indexes_count; i++)
        if (strcmp(d->local_secondary_indexes[i].index_name, index) == 0) return true;
    for (size_t i = 0; i < d->global_secondary_indexes_count; i++)
        if (strcmp(d->global_secondary_indexes[i].index_name, index) == 0) return true;
    return false;
}

static kura_status index_not_found(const char *table, const char *index)
{
    return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                    "Requested resource not found: Index: %s not found in table %s", index, table);
}

/* One table's object. A table dropped since it was listed is left out when `listed`
 * (*wrote_out false); else its absence is the error. */
static kura_status put_table(kbuf *b, kura_db *db, const char *table, const char *index,
                             bool listed, bool first, bool *wrote_out)
{
    kura_table_description d;
    *wrote_out = false;
    kura_status s = kura_describe_table(db, table, &d);
    if (s == KURA_E_RESOURCE_NOT_FOUND && listed) return KURA_OK;
    if (s != KURA_OK) return s;
    if (index && !has_index(&d, index)) {
        s = index_not_found(table, index);
    } else if (!(first || put(b, ",")) || !put(b, "{\"TableName\":") || !put_str(b, d.table_name) ||
               !put(b, ",\"Indexes\":[")) {
        s = kura_err(KURA_E_NOMEM, "out of memory");
    } else if ((s = put_indexes(b, db, &d, index)) == KURA_OK) {
        s = put(b, "]}") ? KURA_OK : kura_err(KURA_E_NOMEM, "out of memory");
        *wrote_out = s == KURA_OK;
    }
    kura_table_description_free(&d);
    return s;
}

/* Every table, in pages of ListTables. */
static kura_status put_all_tables(kbuf *b, kura_db *db)
{
    char *start = NULL;
    bool first = true;
    kura_status s = KURA_OK;
    do {
        char **names, *last;
        size_t n;
        s = kura_list_tables(db, start, 100, &names, &n, &last);
        kura_free(start);
        start = NULL;
        if (s != KURA_OK) break;
        for (size_t i = 0; i < n && s == KURA_OK; i++) {
            bool wrote;
            s = put_table(b, db, names[i], NULL, true, first, &wrote);
            if (wrote) first = false;
        }
        kura_free_strings(names, n);
        start = last;
    } while (s == KURA_OK && start);
    kura_free(start);
    return s;
}

kura_status ixadm_stats(kura_db *db, const char *table, const char *index, ixadm_reply *out)
{
    kbuf b = KBUF_INIT;
    kura_status s;
    bool wrote;
    if (!put(&b, "{\"Tables\":[")) {
        s = KURA_E_NOMEM;
    } else if (!table) {
        s = index ? kura_err(KURA_E_INVALID, "IndexName needs a TableName")
                  : put_all_tables(&b, db);
    } else {
        s = put_table(&b, db, table, index, false, true, &wrote);
    }
    if (s == KURA_OK && !put(&b, "]}")) s = KURA_E_NOMEM;
    if (s == KURA_OK && (s = finish(&b, 200, NULL, out)) == KURA_OK) return KURA_OK;
    kbuf_free(&b);
    return s == KURA_E_NOMEM ? nomem(out) : fail_status(out, s);
}

/* ---- waits ------------------------------------------------------------------------------- */

/* Waits for each index of the description in turn, all within timeout_ms. */
static kura_status wait_all(kura_db *db, const kura_table_description *d, uint64_t timeout_ms)
{
    uint64_t deadline = know_ns() + timeout_ms * 1000000u;
    for (size_t i = 0; i < d->global_secondary_indexes_count; i++) {
        uint64_t now = know_ns();
        uint64_t left_ms = now < deadline ? (deadline - now) / 1000000u : 0;
        kura_status s =
            kura_index_wait(db, d->table_name, d->global_secondary_indexes[i].index_name, left_ms);
        /* dropped since the description was made: nothing to wait for */
        if (s != KURA_OK && s != KURA_E_RESOURCE_NOT_FOUND) return s;
    }
    return KURA_OK; /* LSIs are applied with their base write: always current */
}

kura_status ixadm_wait(kura_db *db, const char *table, const char *index, uint64_t timeout_ms,
                       ixadm_reply *out)
{
    kura_status s;
    if (!table) {
        s = kura_err(KURA_E_INVALID, "TableName is required");
    } else if (index) {
        s = kura_index_wait(db, table, index, timeout_ms);
    } else {
        kura_table_description d;
        s = kura_describe_table(db, table, &d);
        if (s == KURA_OK) {
            s = wait_all(db, &d, timeout_ms);
            kura_table_description_free(&d);
        }
    }
    if (s != KURA_OK) return fail_status(out, s);
    kbuf b = KBUF_INIT;
    if (put(&b, "{}") && finish(&b, 200, NULL, out) == KURA_OK) return KURA_OK;
    kbuf_free(&b);
    return nomem(out);
}

/* ---- rebuilds ----------------------------------------------------------------------------- */

kura_status ixadm_rebuild(kura_db *db, const char *table, const char *index, ixadm_reply *out)
{
    kura_status s = !table || !index
                        ? kura_err(KURA_E_INVALID, "TableName and IndexName are required")
                        : kura_rebuild_index(db, table, index);
    if (s != KURA_OK) return fail_status(out, s);
    kbuf b = KBUF_INIT;
    if (put(&b, "{}") && finish(&b, 200, NULL, out) == KURA_OK) return KURA_OK;
    kbuf_free(&b);
    return nomem(out);
}

/* ---- request bodies ---------------------------------------------------------------------- */

typedef struct wait_req {
    const char *table, *index;
    uint64_t timeout_ms;
} wait_req;

/* Parses {"TableName"?, "IndexName"?, "TimeoutMillis"? (if `timeout`)} into *r; refuses
 * anything else. The strings live as long as `doc`. */
static kura_status parse_req(jd_doc *doc, const char *json, size_t len, bool timeout, wait_req *r,
                             ixadm_reply *out)
{
    char err[160];
    jd_t *req = jd_parse(doc, json, len, 0, err, sizeof err);
    if (!req) return fail(out, KURA_E_INVALID, 400, "SerializationException", "%s", err);
    if (!jd_is_object(req))
        return fail(out, KURA_E_INVALID, 400, "SerializationException",
                    "the request body must be a JSON object");
    *r = (wait_req){NULL, NULL, IXADM_DEFAULT_WAIT_MS};
    const char *key;
    jd_t *v;
    jd_object_foreach(req, key, v)
    {
        bool is_table = strcmp(key, "TableName") == 0, is_index = strcmp(key, "IndexName") == 0;
        if ((is_table || is_index) && !jd_is_string(v))
            return fail(out, KURA_E_INVALID, 400, "ValidationException", "%s must be a string",
                        key);
        if (is_table) {
            r->table = jd_string_value(v);
        } else if (is_index) {
            r->index = jd_string_value(v);
        } else if (timeout && strcmp(key, "TimeoutMillis") == 0) {
            if (!jd_is_integer(v) || jd_integer_value(v) < 0 ||
                jd_integer_value(v) > (jd_int_t)IXADM_MAX_WAIT_MS)
                return fail(out, KURA_E_INVALID, 400, "ValidationException",
                            "TimeoutMillis must be an integer from 0 to %u", IXADM_MAX_WAIT_MS);
            r->timeout_ms = (uint64_t)jd_integer_value(v);
        } else {
            return fail(out, KURA_E_INVALID, 400, "ValidationException",
                        "unknown member %s (this request takes TableName, IndexName%s)", key,
                        timeout ? " and TimeoutMillis" : "");
        }
    }
    if (r->index && !r->table)
        return fail(out, KURA_E_INVALID, 400, "ValidationException", "IndexName needs a TableName");
    return KURA_OK;
}

kura_status ixadm_stats_json(kura_db *db, const char *json, size_t len, ixadm_reply *out)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return nomem(out);
    wait_req r;
    kura_status s = parse_req(doc, json, len, false, &r, out);
    if (s == KURA_OK) s = ixadm_stats(db, r.table, r.index, out);
    jd_doc_free(doc);
    return s;
}

kura_status ixadm_wait_json(kura_db *db, const char *json, size_t len, ixadm_reply *out)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return nomem(out);
    wait_req r;
    kura_status s = parse_req(doc, json, len, true, &r, out);
    if (s == KURA_OK && !r.table)
        s = fail(out, KURA_E_INVALID, 400, "ValidationException", "TableName is required");
    if (s == KURA_OK) s = ixadm_wait(db, r.table, r.index, r.timeout_ms, out);
    jd_doc_free(doc);
    return s;
}

kura_status ixadm_rebuild_json(kura_db *db, const char *json, size_t len, ixadm_reply *out)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return nomem(out);
    wait_req r;
    kura_status s = parse_req(doc, json, len, false, &r, out);
    if (s == KURA_OK && (!r.table || !r.index))
        s = fail(out, KURA_E_INVALID, 400, "ValidationException",
                 "TableName and IndexName are required");
    if (s == KURA_OK) s = ixadm_rebuild(db, r.table, r.index, out);
    jd_doc_free(doc);
    return s;
}

kura_status ixadm_read_wait(kura_db *db, const char *op, const char *json, size_t len,
                            uint64_t timeout_ms, ixadm_reply *out)
{
    if (!op || (strcmp(op, "Query") != 0 && strcmp(op, "Scan") != 0)) return KURA_OK;
    jd_doc *doc = jd_doc_new();
    if (!doc) return nomem(out);
    char err[8];
    jd_t *req = jd_parse(doc, json, len, 0, err, sizeof err);
    const char *table = jd_string_value(jd_object_get(req, "TableName"));
    const char *index = jd_string_value(jd_object_get(req, "IndexName"));
    kura_status s = table && index ? kura_index_wait(db, table, index, timeout_ms) : KURA_OK;
    if (s == KURA_E_RESOURCE_NOT_FOUND) s = KURA_OK; /* kura_execute() says so in its words */
    if (s != KURA_OK)
        s = fail(out, s, 500, "InternalServerError", "kura-server --gsi-read-wait: %s",
                 kura_last_error());
    jd_doc_free(doc);
    return s;
}
