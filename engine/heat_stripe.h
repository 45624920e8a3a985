/*
 * heat_stripe.h - the inside of a capacity accumulator (engine/heat.c, engine/heat_top.c
 * only): its stripes, each a mutex over a totals window and a space-saving sketch.
 */
#ifndef KURA_ENGINE_HEAT_STRIPE_H
#define KURA_ENGINE_HEAT_STRIPE_H

#include "engine/heat.h"
#include "engine/heat_sketch.h"
#include "util/thread.h"

typedef struct heat_stripe {
    _Alignas(64) kmutex mu; /* own cache lines: writers on different stripes do not share */
    heat_window total;      /* every unit recorded on the stripe, exact */
    heat_sketch sk;         /* k / stripes counters */
    heat_sketch sk2;        /* heat_config.pair: the second keys' sketch (k 0 otherwise) */
} heat_stripe;

struct heat_acc {
    uint32_t nstripes, shift; /* stripe of a hash: hash >> shift (its high bits) */
    size_t bytes;
    heat_stripe *stripe;
};

static inline uint32_t heat_acc_nstripes(const heat_acc *acc)
{
    return acc->nstripes;
}

static inline heat_stripe *acc_stripe(heat_acc *acc, uint32_t i)
{
    return &acc->stripe[i];
}

#endif
