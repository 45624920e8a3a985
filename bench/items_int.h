/*
 * items_int.h - what the item-level pseudo-engines of kura-bench share (engine_items.c,
 * engine_partiql.c): the database with table "bench" and every item's fields formatted before
 * the clock starts, the kura_execute call of the JSON ways in, the settings string.
 */
#ifndef KURA_BENCH_ITEMS_INT_H
#define KURA_BENCH_ITEMS_INT_H

#include "bench/items.h"

#define ITEMS_TABLE "bench"

struct bench_idb {
    kura_db *db;
    kura_tree *tree; /* kura-raw: the table's data tree */
    uint64_t num;
    /* kura-raw: the prebuilt bytes of item i are keys[koff[i]..koff[i+1]) and likewise vals */
    uint8_t *keys, *vals;
    uint64_t *koff, *voff;
    bench_item_fields *fields; /* kura-capi, kura-json: item i's fields, prebuilt */
    kura_value *one; /* kura-capi: the map {":one": 1} */
};

/* s with kura_last_error()'s message, prefixed by `what`. */
kura_status bench_idb_fail(kura_status s, const char *what);
/* Opens the database (the table "bench" created if new) and formats every item's fields. */
/* The capacity accounting of the database an item engine opens. */
typedef enum bench_capacity {
    BENCH_CAPACITY_ON,       /* the default: accounting on, throttling off */
    BENCH_CAPACITY_OFF,      /* kura_options.capacity_accounting_off */
    BENCH_CAPACITY_THROTTLE, /* kura_options.throttle */
} bench_capacity;

/* bench_fields_open with the capacity accounting set to `cap`. */
kura_status bench_fields_open_as(const char *dir, const bench_engine_opts *o,
                                 const bench_config *cfg, bench_capacity cap, bench_idb **out);

kura_status bench_fields_open(const char *dir, const bench_engine_opts *o,
                              const bench_config *cfg, bench_idb **out);
kura_status bench_idb_close(bench_idb *d);
/* m[name] = S s. */
kura_status bench_put_s(kura_value *m, const char *name, const char *s);
/* kura_execute(op, body); *out is the response (kura_free), NULL on failure. */
kura_status bench_json_call(bench_idb *d, const char *op, const char *body, size_t len,
                            char **out);
/* "Key":{...} of item i into buf (snprintf's result). */
int bench_key_json(const bench_idb *d, char *buf, size_t cap, uint64_t i);
void bench_items_settings(const bench_engine_opts *o, char *buf, size_t cap);

#endif
