/*
 * ixwork_int.h - what ixwork.c (operations, their simulation, JSON) and ixwork_check.c (the
 * checker) share.
 */
#ifndef KURA_TESTS_CRASH_IXWORK_INT_H
#define KURA_TESTS_CRASH_IXWORK_INT_H

#include "crash/ixwork.h"

/* Which optional attributes an item has. */
enum {
    IXA_LSK = 1 << 0, /* N, the LSI's range key */
    IXA_GPK = 1 << 1, /* S "g<n>", ByG's hash key */
    IXA_GSK = 1 << 2, /* N "<n>.5", ByG's and Multi's range key */
    IXA_A = 1 << 3,   /* S "a<n>", Multi's first hash key */
    IXA_B = 1 << 4,   /* N, Multi's second hash key (UpdateItem ADDs to it) */
    IXA_C = 1 << 5,   /* B, one of two values, Multi's first range key */
    IXA_X = 1 << 6,   /* N, projected into the LSI (INCLUDE) */
};

/* One version of an item (absent: exists false, nothing else matters). */
typedef struct ixw_item {
    bool exists;
    uint8_t has;
    int32_t lsk, gpk, gsk, a, b, c, x;
    uint64_t v;        /* the operation and entry that wrote it last */
    uint32_t pad_len;  /* 0: no pad attribute */
    uint64_t pad_seed; /* pad bytes derive from it (the put that created the item) */
} ixw_item;

typedef struct ixw_ver {
    uint64_t opno;
    ixw_item item;
} ixw_ver;

/* One item of the model: what must survive, and what was written since. */
typedef struct ixw_cell {
    ixw_item base;
    ixw_ver *vers; /* increasing opno */
    size_t nvers, cap;
} ixw_cell;

struct ixw {
    ixw_config cfg;
    uint64_t next[IXW_MAX_WRITERS];  /* first op not attempted */
    uint64_t acked[IXW_MAX_WRITERS]; /* last op acknowledged */
    ixw_cell *cells;                 /* [t * keys_per_writer + k] */
};

typedef enum { IXW_PUT, IXW_UPDATE, IXW_DELETE, IXW_BATCH } ixw_op_type;

enum { IXW_MAX_BATCH = 4, IXW_NUPDATES = 6 };

typedef struct ixw_entry {
    uint32_t key;
    bool del;
    ixw_item item; /* a put's item */
} ixw_entry;

typedef struct ixw_op {
    uint32_t t;
    uint64_t j;
    ixw_op_type type;
    uint32_t n; /* entries: 1 unless a batch */
    ixw_entry e[IXW_MAX_BATCH];
    /* UpdateItem: which expression, and its values */
    uint32_t upd;
    int32_t g, num, h, x, a, c;
} ixw_op;

void ixw_gen(const ixw *w, uint32_t t, uint64_t j, ixw_op *op_out);
/* The state of entry i's item after op, given its state before (in place). */
void ixw_apply(const ixw_op *op, uint32_t i, ixw_item *it);
/* Writes the item (key k of writer t, in state it, which exists) as DynamoDB JSON. Returns
 * the length, or >= cap when it did not fit. */
size_t ixw_item_json(uint32_t t, uint32_t k, const ixw_item *it, char *buf, size_t cap);
/* The key of writer t's item k as a map (free with kura_value_free). */
kura_value *ixw_key_value(uint32_t t, uint32_t k);

static inline ixw_cell *ixw_cell_of(const ixw *w, uint32_t t, uint32_t k)
{
    return &w->cells[(size_t)t * w->cfg.keys_per_writer + k];
}

/* The latest version of a cell (what the next operation sees). */
static inline const ixw_item *ixw_cur(const ixw_cell *c)
{
    return c->nvers ? &c->vers[c->nvers - 1].item : &c->base;
}

#endif
