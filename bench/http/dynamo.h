/*
 * dynamo.h - the DynamoDB requests kura-http-bench sends, as complete HTTP/1.1 requests, and
 * the checks of their responses.
 *
 * Every request is what an AWS SDK sends: POST / with Host, Content-Type
 * application/x-amz-json-1.0, X-Amz-Target DynamoDB_20120810.<Operation>, X-Amz-Date and a
 * SigV4-shaped Authorization header whose signature is a dummy (neither server under test
 * checks signatures unless told to), and Content-Length framing.
 *
 * Items are the item-level workloads' of kura-bench (bench/items.h): table "bench" (or
 * --table) with an S partition key "pk" of 16 bytes shared by 20 items, an S sort key "sk",
 * and 8 attributes of mixed types (S, N, BOOL, SS, M, B), ~400 bytes as DynamoDB counts them.
 * Item `index` has partition key index / 20.
 *
 * With a GSI (hb_reqgen.gsi, kura-http-bench --gsi): the table also has the GSI "by_grp"
 * (HASH grp, RANGE sk, projection ALL), and every item an S attribute grp, "team" + the 12
 * digits of its partition key, so that the GSI's collection of a grp holds exactly the 20
 * items of the table's collection of the pk (kura-bench's index workloads, bench/index/, use
 * the same attribute); HB_OP_QUERY_GSI queries it.
 */
#ifndef KURA_BENCH_HTTP_DYNAMO_H
#define KURA_BENCH_HTTP_DYNAMO_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/item_fields.h"
#include "util/buf.h"

#define HB_ITEMS_PER_PK BENCH_ITEMS_PER_PK
#define HB_GSI_NAME "by_grp"

/* The operations of the workloads (and ListTables, the start-up probe). */
typedef enum hb_op {
    HB_OP_PUT,
    HB_OP_GET,
    HB_OP_QUERY,
    HB_OP_QUERY_GSI, /* Query of GSI by_grp */
    HB_OP_UPDATE,    /* UpdateItem SET n = n + :one */
    HB_OP_PQ_GET,    /* ExecuteStatement SELECT * ... WHERE pk = ? AND sk = ? (GetItem's) */
    HB_OP_PQ_UPDATE, /* ExecuteStatement UPDATE ... SET n = n + 1 WHERE pk = ? AND sk = ? */
    HB_OP_LIST,
    HB_NOPS
} hb_op;

/* What every request of one run shares: the Host header, the table, the date, and so each
 * operation's head up to the Content-Length value. */
typedef struct hb_reqgen {
    char host[32]; /* "127.0.0.1:8000" */
    char table[64];
    bool gsi;          /* the table has GSI by_grp and the items grp (false after init) */
    char amz_date[17]; /* 20261121T142200Z, fixed at init */
    char head[HB_NOPS][640];
    size_t head_len[HB_NOPS];
} hb_reqgen;

/* Fills *g for the server at addr and table (truncated to 63 bytes). */
void hb_reqgen_init(hb_reqgen *g, const struct sockaddr_in *addr, const char *table);

/* The operation name of op ("PutItem", ...). */
const char *hb_op_target(hb_op op);

/* Appends to out the HTTP request calling DynamoDB_20120810.<target> with the JSON body
 * body[0..len). False if out could not grow (out unchanged in length then). */
bool hb_req_http(const hb_reqgen *g, const char *target, const char *body, size_t len, kbuf *out);

/* Appends to out the request of op on item `index` (HB_OP_QUERY: the partition key of the
 * item; HB_OP_QUERY_GSI: its grp; HB_OP_LIST: index unused). False if out could not grow. */
bool hb_req_item(const hb_reqgen *g, hb_op op, uint64_t index, kbuf *out);

/* The JSON body of CreateTable for g's table (pk HASH, sk RANGE, PAY_PER_REQUEST; with
 * g->gsi the GSI by_grp), written into buf[0..cap); returns its length. */
size_t hb_create_table_body(const hb_reqgen *g, char *buf, size_t cap);

/* Whether the body of a 200 response to op is what the workload expects: GetItem returned
 * an Item, a SELECT by key one item, a Query (of the table or the GSI) HB_ITEMS_PER_PK items.
 * `body` is NUL-terminated. */
bool hb_resp_ok(hb_op op, const char *body);

/* The "Count" of a Query response body (NUL-terminated), or -1 if it has none. */
long long hb_resp_count(const char *body);

#endif
