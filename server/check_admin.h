/*
 * check_admin.h - kura's integrity-check extension, outside DynamoDB's API: kura_check (the
 * check `kura check` runs) as a JSON body. kura-server serves it as `POST /kura/check`
 * (extension.c, on a thread of its own so that the serving threads go on serving), the
 * `kura` CLI as the pseudo-operation KuraCheck of exec and pipe (tools/kura.c); both build the
 * same body here. docs/server.md, "Extensions", is the contract.
 *
 * This file needs nothing of libmicrohttpd: the CLI compiles check_admin.c too.
 *
 * Body:
 *   {"Problems":["<line>",...],"Notes":["<line>",...],
 *    "Summary":{"Problems":0,"Notes":0,"Trees":11,"Partitions":29,"Manifests":29,
 *               "SSTables":3,"SSTableBlocks":4,"SSTableEntries":88,"WalSegments":15,
 *               "WalRecords":1072,"Tables":3,"Items":159,"Indexes":6,"IndexesSkipped":0,
 *               "IndexEntries":258,"MissingEntries":0,"ExtraEntries":0,"StaleEntries":0,
 *               "Collections":5,"Streams":1,"Shards":3}}
 * one string per line kura_check reported, in its order; Summary.Problems counts every
 * problem found, also index entries beyond the examples listed. A check that ran answers 200
 * whatever it found; errors have DynamoDB's shape (index_admin.h): 400
 * ResourceNotFoundException (no such table), 400 SerializationException / ValidationException
 * (a malformed body), 500 InternalServerError (out of memory).
 *
 * Thread safety: every function may run on any thread at once (kura_check is thread-safe).
 */
#ifndef KURA_SERVER_CHECK_ADMIN_H
#define KURA_SERVER_CHECK_ADMIN_H

#include <stddef.h>

#include "kura.h"
#include "server/index_admin.h"

/* Runs kura_check on the database (table NULL) or one table; the body in *out (free
 * out->body with free()). Returns KURA_OK when the check ran, else the failure with its
 * error body (KURA_E_NOMEM with out->body NULL when not even that could be made). */
kura_status chkadm_run(kura_db *db, const char *table, ixadm_reply *out);

/* chkadm_run() for a request body {"TableName"?: S}; an empty body is {}. */
kura_status chkadm_json(kura_db *db, const char *json, size_t len, ixadm_reply *out);

#endif
