/*
 * streamwork.h - the item workload of the change-stream crash tests (tests/crash/streamwork.c)
 * and what each of its operations does to an item, so that a checker can tell which write a
 * stream record comes from and what its images must be.
 *
 * This file contains a deterministic DynamoDB workload on the table "Tstream" (SW_TABLE: hash
 * key pk, a NEW_AND_OLD_IMAGES stream). Writers own disjoint items: writer t's item k has
 * pk "w<t>.k<kkk>". Operation j (1, 2, ...) of writer t is a pure function of (seed, t, j),
 * issued through kura_execute: a PutItem (an insert or an overwrite), an UpdateItem (one of
 * three expressions; creates the item when absent), a DeleteItem, a BatchWriteItem of 2-4
 * puts and deletes of distinct items, or a TransactWriteItems of 2-3 Puts, Updates and
 * Deletes of distinct items (usually in several partitions). Every put and update sets "v"
 * to the entry's tag, "w<t>.<jjjjjj>.<e>", unique in the run, so each write changes its item
 * and makes one stream record, and the record's new image names the write. Items hold only
 * pk (S), v (S), n (N, a counter UpdateItem ADDs to) and filler (S, 1..pad_max bytes derived
 * from the tag of the write that set it), so sw_apply predicts every image exactly.
 *
 * Thread safety: every function may run in any thread; sw_exec in one thread per writer.
 */
#ifndef KURA_TESTS_CRASH_STREAMWORK_H
#define KURA_TESTS_CRASH_STREAMWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

enum {
    SW_MAX_WRITERS = 8,
    SW_MAX_KEYS = 999,
    SW_MAX_PAD = 3000,
    SW_MAX_ENTRIES = 4, /* items of one operation */
    SW_TAG_CAP = 24,    /* "w7.123456.3" and its NUL, with room */
    SW_KEY_CAP = 16,    /* "w7.k123" */
};

#define SW_TABLE "Tstream"

typedef struct sw_config {
    uint64_t seed;
    uint32_t nwriters;        /* 1..SW_MAX_WRITERS */
    uint32_t keys_per_writer; /* 4..SW_MAX_KEYS */
    uint32_t pad_max;         /* 1..SW_MAX_PAD */
    bool no_txn;              /* no TransactWriteItems (their share goes to BatchWriteItem) */
} sw_config;

typedef enum { SW_PUT = 1, SW_UPDATE, SW_DELETE, SW_BATCH, SW_TXN } sw_type;

/* What one entry does to its item. UPDATE_N: SET v ADD n 1; UPDATE_PAD: SET v, filler;
 * UPDATE_NOPAD: SET v REMOVE filler. */
typedef enum {
    SW_E_PUT = 1,
    SW_E_UPDATE_N,
    SW_E_UPDATE_PAD,
    SW_E_UPDATE_NOPAD,
    SW_E_DELETE
} sw_action;

typedef struct sw_entry {
    uint32_t key; /* the writer's item number */
    sw_action action;
    uint32_t pad_len; /* PUT, UPDATE_PAD */
} sw_entry;

typedef struct sw_op {
    uint32_t t;
    uint64_t j;
    sw_type type;
    uint32_t n; /* entries, distinct items */
    sw_entry e[SW_MAX_ENTRIES];
} sw_op;

/* The operation's name as DynamoDB's ("PutItem", ...). */
const char *sw_type_name(sw_type type);

/* Operation j >= 1 of writer t. */
void sw_gen(const sw_config *c, uint32_t t, uint64_t j, sw_op *op_out);

/* Issues operation j of writer t (does not look at any model: a forked child calls it). On
 * an error, the response body or the engine's message is in why. */
kura_status sw_exec(const sw_config *c, kura_db *db, uint32_t t, uint64_t j, char *why, size_t cap);

/* Creates the table with `partitions` partitions and its stream; the stream's ARN into arn.
 * Errors: the engine's. */
kura_status sw_create_table(kura_db *db, uint32_t partitions, char *arn, size_t cap);

/* GetItem (strongly consistent) of writer t's item k: *item_out is NULL when it does not
 * exist, else free it with kura_value_free. Errors: the engine's. */
kura_status sw_get_item(kura_db *db, uint32_t t, uint32_t k, kura_value **item_out);

/* Tags and keys. sw_tag_parse and sw_key_parse return false on anything sw_tag / sw_key
 * would not write. */
void sw_tag(uint32_t t, uint64_t j, uint32_t e, char out[SW_TAG_CAP]);
bool sw_tag_parse(const char *s, uint32_t *t_out, uint64_t *j_out, uint32_t *e_out);
void sw_key(uint32_t t, uint32_t k, char out[SW_KEY_CAP]);
bool sw_key_parse(const char *s, uint32_t *t_out, uint32_t *k_out);

/* ---- Items as the model sees them ---------------------------------------------------- */

typedef struct sw_item {
    bool exists;
    char v[SW_TAG_CAP]; /* the tag of the last write */
    bool has_n;
    uint64_t n;
    char pad_tag[SW_TAG_CAP]; /* the write that set filler ("": none) */
    uint32_t pad_len;
} sw_item;

/* The state of entry e's item after op, given its state before (in place): what the
 * operation's new image must be. A delete leaves it absent. */
void sw_apply(const sw_op *op, uint32_t e, sw_item *it);

/* A digest of an item's attributes (names, types and values, in name order): equal for the
 * model's item and the engine's value of it. 0 for an absent item (NULL value). */
uint64_t sw_item_digest(uint32_t t, uint32_t k, const sw_item *it);
uint64_t sw_value_digest(const kura_value *item);

#endif
