/*
 * index_admin.h - kura's secondary-index extension, outside DynamoDB's API: how far each index
 * is behind its table (kura_index_stats_get), waiting until one has caught up
 * (kura_index_wait) and rebuilding one from its table (kura_rebuild_index), as JSON bodies.
 * kura-server serves them as `GET /kura/indexes`, `POST /kura/index-wait` and
 * `POST /kura/rebuild-index` (extension.c), the `kura` CLI as `index-stats`, `index-wait`,
 * `rebuild-index` and the pipe pseudo-operations KuraIndexStats, KuraIndexWait and
 * KuraRebuildIndex (tools/kura.c); both build the same bodies here. docs/server.md,
 * "Extensions", is the contract.
 *
 * This file needs nothing of libmicrohttpd: the CLI compiles index_admin.c too.
 *
 * Bodies. Stats:
 *   {"Tables":[{"TableName":"t","Indexes":[{"IndexName":"ByX","Kind":"GSI","Status":"ACTIVE",
 *     "Backfilling":false,"LagWrites":0,"LagMillis":0,"Applied":12,"Checkpoints":1,
 *     "QueueBytes":0,"Error":null,"Rebuilding":false}]}]}
 * tables in name order, each table's LSIs then its GSIs in definition order; "Error" is null or
 * the applier's failure (kura_status_str); "Rebuilding": a rebuild of the index is running. A
 * wait or a rebuild: {} on success. Errors have DynamoDB's shape,
 * {"__type":"com.amazonaws.dynamodb.v20120810#<Type>","message":"..."}, so one parser reads
 * both APIs' errors.
 *
 * Thread safety: every function may run on any thread at once (the kura calls are).
 */
#ifndef KURA_SERVER_INDEX_ADMIN_H
#define KURA_SERVER_INDEX_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

/* A wait without TimeoutMillis (and --gsi-read-wait without =MS) waits this long. */
#define IXADM_DEFAULT_WAIT_MS 10000u
/* The longest TimeoutMillis accepted (an hour). */
#define IXADM_MAX_WAIT_MS 3600000u

/* A response: an HTTP status, its body and, for an error, its type. */
typedef struct ixadm_reply {
    unsigned status;  /* 200; 400 a client error; 500 InternalServerError; 503 a timed-out wait */
    const char *type; /* NULL on success, else the error type (a static string) */
    char *body;       /* malloc'ed JSON, NUL-terminated, `len` bytes; free() it */
    size_t len;
    char message[512]; /* an error's message (for a log line), "" on success */
} ixadm_reply;

/*
 * The stats body of every index of every table (table NULL), of one table's indexes (index
 * NULL) or of one index. Tables and indexes dropped while the body is made are left out;
 * each table is described as DescribeTable does (kura_describe_table), so this costs what
 * a DescribeTable of every table costs.
 * Returns KURA_OK with the body in *out; or the failure with its error body in *out (table or
 * index not found: 400 ResourceNotFoundException; storage errors: 500 InternalServerError);
 * or KURA_E_NOMEM with out->body NULL when not even the error body could be made.
 */
kura_status ixadm_stats(kura_db *db, const char *table, const char *index, ixadm_reply *out);

/* ixadm_stats() for a request body {"TableName"?: S, "IndexName"?: S}; an IndexName needs a
 * TableName. A malformed body is 400 SerializationException or ValidationException. */
kura_status ixadm_stats_json(kura_db *db, const char *json, size_t len, ixadm_reply *out);

/*
 * Blocks until index `index` of `table` (index NULL: every index of the table) has applied
 * every write committed before the call, for at most timeout_ms in all; then {} (200).
 * Errors, with their bodies as ixadm_stats(): 400 ResourceNotFoundException; 503
 * IndexWaitTimeoutException (the message says how many writes are still behind); 500
 * InternalServerError when an index's applier stopped after an error (it has not got the
 * writes: the database must be reopened).
 */
kura_status ixadm_wait(kura_db *db, const char *table, const char *index, uint64_t timeout_ms,
                       ixadm_reply *out);

/* ixadm_wait() for a request body {"TableName": S, "IndexName"?: S, "TimeoutMillis"?: N}
 * (TimeoutMillis 0..IXADM_MAX_WAIT_MS, default IXADM_DEFAULT_WAIT_MS). */
kura_status ixadm_wait_json(kura_db *db, const char *json, size_t len, ixadm_reply *out);

/*
 * Rebuilds index `index` of `table` from the table's items (kura_rebuild_index: blocks until
 * the rebuilt index has replaced the old one); then {} (200). Errors, with their bodies as
 * ixadm_stats(): 400 ValidationException (a name missing), 400 ResourceNotFoundException (no
 * such table or index), 400 ResourceInUseException (the index is being created or deleted,
 * or an index of the table is being rebuilt), 500 InternalServerError (storage errors; the
 * table deleted or the database closing meanwhile).
 */
kura_status ixadm_rebuild(kura_db *db, const char *table, const char *index, ixadm_reply *out);

/* ixadm_rebuild() for a request body {"TableName": S, "IndexName": S}. */
kura_status ixadm_rebuild_json(kura_db *db, const char *json, size_t len, ixadm_reply *out);

/*
 * kura-server's --gsi-read-wait: when `op` is Query or Scan and `json` names a TableName and
 * an IndexName, waits (kura_index_wait, at most timeout_ms) until that index has applied
 * every write committed before the call. Returns KURA_OK when it has, or when there was
 * nothing to wait for (another operation, a body kura_execute() will refuse, no such table
 * or index: kura_execute() answers those); else fills *out with a 500 InternalServerError
 * body and returns the failure (KURA_E_BUSY: timed out; the applier's error; KURA_E_NOMEM
 * with out->body NULL).
 */
kura_status ixadm_read_wait(kura_db *db, const char *op, const char *json, size_t len,
                            uint64_t timeout_ms, ixadm_reply *out);

/* ---- The extensions' JSON, shared with check_admin.c -------------------------------------- */

/* Appends `s` as a JSON string, quotes included (escaped; bytes that are not UTF-8 become
 * U+FFFD). False when out of memory. */
bool ixadm_put_str(kbuf *b, const char *s);
/* Hands the buffer (NUL-terminated here) to *out as a reply with `status` and `type` (NULL:
 * success). KURA_E_NOMEM (the buffer is the caller's then). */
kura_status ixadm_finish(kbuf *b, unsigned status, const char *type, ixadm_reply *out);
/* An error reply {"__type":...,"message":...}; returns `s`, or KURA_E_NOMEM with out->body
 * NULL when the body cannot be made. */
kura_status ixadm_fail(ixadm_reply *out, kura_status s, unsigned status, const char *type,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The reply to a failed kura call, from its status and kura_last_error(): 400
 * ResourceNotFoundException / ValidationException, 503 for KURA_E_BUSY, else 500
 * InternalServerError. */
kura_status ixadm_fail_status(ixadm_reply *out, kura_status s);

#endif
