/*
 * oracle_int.h - the model behind oracle.h, shared by oracle.c (workload, counters) and
 * oracle_check.c (the checker). Not for tests to include.
 */
#ifndef KURA_TESTS_CRASH_ORACLE_INT_H
#define KURA_TESTS_CRASH_ORACLE_INT_H

#include "crash/oracle.h"

/* What one key holds: the entry of the operation that last put it, or nothing. */
typedef struct oracle_cell {
    uint64_t opno; /* 0 when absent */
    uint32_t idx;  /* entry of that operation */
    bool present;
} oracle_cell;

typedef struct oracle_writer {
    uint64_t committed, acked, attempted;
    oracle_cell *state; /* keys_per_thread cells: the database after ops 1..committed */
} oracle_writer;

struct oracle {
    oracle_config cfg;
    oracle_writer w[ORACLE_MAX_THREADS];
    /* routing, filled by oracle_route: the partition of key k (same for every writer: the
     * partition depends on the key bytes, so this is per writer too) */
    uint32_t nparts;
    uint32_t *part;       /* nthreads * keys_per_thread, writer-major */
    uint32_t *part_keys;  /* per writer: its keys grouped by partition */
    uint32_t *part_start; /* per writer: nparts + 1 offsets into its part_keys group */
};

/* The cell that entry idx of op writes. */
static inline oracle_cell oracle_cell_of(const oracle_op *op, uint32_t idx)
{
    oracle_cell c = {0, 0, false};
    if (!op->e[idx].del) {
        c.opno = op->opno;
        c.idx = idx;
        c.present = true;
    }
    return c;
}

static inline bool oracle_cell_eq(oracle_cell a, oracle_cell b)
{
    return a.present == b.present && (!a.present || (a.opno == b.opno && a.idx == b.idx));
}

/* Writes the value of entry idx of op j of writer t into buf (ORACLE_MAX_VALUE bytes);
 * returns its length. */
size_t oracle_value(const oracle *o, uint32_t t, uint64_t j, uint32_t idx, uint8_t *buf);

#endif
