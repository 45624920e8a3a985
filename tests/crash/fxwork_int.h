/*
 * fxwork_int.h - what fxwork.c (tables, items, requests), fxmodel.c (the item model) and
 * fxbank.c (the bank) share.
 */
#ifndef KURA_TESTS_CRASH_FXWORK_INT_H
#define KURA_TESTS_CRASH_FXWORK_INT_H

#include "crash/fxwork.h"

enum { FX_MAX_ENTRIES = 4, FX_BULK_T = 99, FX_JSON_CAP = 24 * 1024 };

typedef enum { FX_PUT, FX_UPDATE, FX_DELETE, FX_BATCH, FX_TXN } fx_op_type;
typedef enum { FX_E_PUT, FX_E_UPDATE, FX_E_DELETE } fx_action;

typedef struct fx_entry {
    uint32_t key;
    fx_action action;
} fx_entry;

typedef struct fx_op {
    uint32_t t;
    uint64_t j;
    fx_op_type type;
    uint32_t n; /* entries, distinct items */
    fx_entry e[FX_MAX_ENTRIES];
    int32_t check_key; /* TransactWriteItems: a ConditionCheck of this item (-1: none) */
} fx_op;

/* Operation j >= 1 of writer t. */
void fx_gen(const fx_config *c, uint32_t t, uint64_t j, fx_op *op_out);

/* The item writer t's key k holds after entry e of op j (a put or an update), as DynamoDB
 * JSON into buf; bulk items: t FX_BULK_T, j the item's number. Returns the length (>= cap:
 * it did not fit). */
size_t fx_item_json(const fx_config *c, uint32_t t, uint32_t k, uint64_t j, uint32_t e,
                    char *buf, size_t cap);
/* Whether that version's exp is a Number before FX_NOW: the sweeper may delete it. */
bool fx_item_doomed(const fx_config *c, uint32_t t, uint64_t j, uint32_t e);

/* Keys as DynamoDB JSON ({"pk":...,"sk":...}); bulk items: t FX_BULK_T. */
size_t fx_key_json(uint32_t t, uint32_t k, char *buf, size_t cap);
/* Parses an item's pk and sk: writer t's item k (t < FX_MAX_WRITERS) or bulk item k (t
 * FX_BULK_T); false for anything fx_key_json does not write. */
bool fx_key_parse(const kura_value *item, uint32_t *t_out, uint32_t *k_out);
/* Parses "v" = "w<t>.<j>.<e>" (or "b.<i>" for bulk: t FX_BULK_T, j = i, e = 0). */
bool fx_tag_parse(const kura_value *item, uint32_t *t_out, uint64_t *j_out, uint32_t *e_out);

/* kura_execute; on an error the response body or the message into why. */
kura_status fx_exec(kura_db *db, const char *op, const char *json, char *why, size_t cap);

/* Every item of a table, consistent Scan, page by page: fn is called for each item (false
 * stops with KURA_E_INVALID). Errors: the engine's, why. */
typedef bool (*fx_item_fn)(void *arg, const kura_value *item);
kura_status fx_scan(kura_db *db, const char *table, fx_item_fn fn, void *arg, char *why,
                    size_t cap);

/* The canonical JSON of a value (kura_value_to_json: a map's attributes in name order) into
 * buf; false if it did not fit. */
bool fx_canon(const kura_value *v, char *buf, size_t cap);

uint64_t fx_mix(uint64_t a, uint64_t b);

#endif
