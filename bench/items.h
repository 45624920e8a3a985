/*
 * items.h - kura-bench's item-level workloads: DynamoDB-shaped items through three ways into
 * kura, each a pseudo-engine of the report so their ratios sit side by side in one table:
 *
 *   kura-raw    kura_put / kura_get / kura_iter on the very bytes the item layer stores (the
 *               storage key and the encoded item, built before the clock starts): the
 *               ceiling the item layer is measured against
 *   kura-capi   the typed C API (kura_put_item, kura_get_item, kura_query, kura_update_item),
 *               values built with the kura_value constructors inside the timed loop
 *   kura-json   kura_execute with the JSON body an AWS SDK sends, built and parsed inside the
 *               timed loop
 *   kura-partiql  kura_execute_statement: INSERT, SELECT by full key / by partition key and
 *               UPDATE SET n = n + 1 by key, the values as parameters built in the loop
 *               (docs/partiql.md); against kura-capi it prices the parse and translation
 *   kura-json-partiql  the same statements as ExecuteStatement through kura_execute (JSON
 *               bodies with Parameters, built in the loop); against kura-json
 *
 * Items: --num items of one table with an S partition key of 16 bytes (20 items per
 * partition key) and an S sort key, and 8 more attributes of mixed types (S, N, BOOL, SS, M,
 * B), about 400 bytes as DynamoDB counts them. Workloads (one thread):
 *
 *   putitem     --num PutItems, items 0..num-1 (fresh)
 *   getitem     --num GetItems of random items (all must be found)
 *   query       num/20 Queries of a random partition key (20 items each must come back)
 *   updateitem  --num UpdateItems "SET n = n + :one" of random items
 */
#ifndef KURA_BENCH_ITEMS_H
#define KURA_BENCH_ITEMS_H

#include <stdint.h>

#include "bench/bench.h"
#include "bench/engine.h"
#include "bench/item_fields.h"

typedef struct bench_idb bench_idb;

/* The operations of one way into kura. `index` names an item (0..num-1); query reads the
 * partition key of item `index` and sets *count_out to the items returned. */
typedef struct bench_item_api {
    kura_status (*open)(const char *dir, const bench_engine_opts *o, const bench_config *cfg,
                        bench_idb **db_out);
    kura_status (*close)(bench_idb *db);
    kura_status (*put)(bench_idb *db, uint64_t index);
    kura_status (*get)(bench_idb *db, uint64_t index, bool *found_out);
    kura_status (*query)(bench_idb *db, uint64_t index, uint64_t *count_out);
    kura_status (*update)(bench_idb *db, uint64_t index);
} bench_item_api;

/* Runs item workload `wl` on item engine `e`, with the contract of bench_workload_run. */
kura_status bench_items_run(const struct bench_workload *wl, const bench_engine *e,
                            const bench_config *cfg, uint32_t repeat, const char *dir,
                            bench_run *run_out);

/* Item `f` as a kura_value (engine_items.c; the index and transaction workloads build on it):
 * n is the number attribute "n", with_data adds the 224-byte "data". NULL when out of
 * memory. */
kura_value *bench_item_value(const bench_item_fields *f, const char *n, bool with_data);

#endif
