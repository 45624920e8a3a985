/*
 * tcap_int.h - This file contains the layout of a table's capacity state shared by
 * engine/tcap.c (accounting), engine/tcap_admit.c (throttling) and engine/tcap_report.c
 * (the heat report). See engine/tcap.h.
 */
#ifndef KURA_ENGINE_TCAP_INT_H
#define KURA_ENGINE_TCAP_INT_H

#include <stdatomic.h>

#include "engine/tcap.h"
#include "engine/throttle/decrease.h"
#include "index/index.h"
#include "util/thread.h"

enum { TCAP_TARGETS = 1 + IDX_MAX_LSI + IDX_MAX_GSI, TCAP_NAME_MAX = 256 };

/* One partition-key value's own buckets (3,000 RCU / 1,000 WCU a second). */
typedef struct tcap_slot {
    uint64_t hash; /* of the key's encoding; 0: empty */
    int64_t last_ms;
    thr_key k;
} tcap_slot;

/* The throughput settings the throttle follows, per target (copied by tcap_configure). */
typedef struct tcap_cfg {
    bool provisioned;
    int64_t rcu, wcu;              /* PROVISIONED */
    int64_t od_read, od_write;     /* OnDemandThroughput maxima (<= 0: none) */
    int64_t warm_read, warm_write; /* WarmThroughput asked for (0: the defaults) */
} tcap_cfg;

typedef struct tcap_target {
    uint32_t index_id;             /* 0: the table; set before the target is published */
    _Atomic(heat_acc *) keys, thr; /* keys: partition keys and items (heat_config.pair) */
    /* under tcap.mu */
    bool ready; /* the throttle state below follows cfg */
    tcap_cfg cfg;
    thr_bucket prov_rd, prov_wr;
    thr_ondemand od_rd, od_wr;
    tcap_slot *slots;      /* TCAP_KEY_SLOTS, allocated at the first admission */
    heat_window throttled; /* refused requests per second: rd reads, wr writes (counts) */
    thr_decrease dec;      /* UpdateTable's decreases of its provisioned throughput */
    bool dec_ready;
} tcap_target;

/* A GSI as the throttle sees it: the index's key attributes its writes are charged on. */
typedef struct tcap_gsi {
    uint32_t id;
    char name[TCAP_NAME_MAX];
    uint32_t nhash;
    char hash[IDX_MAX_KEY_ATTRS][TCAP_NAME_MAX];
    kura_type type[IDX_MAX_KEY_ATTRS];
    tcap_cfg cfg;
} tcap_gsi;

struct tcap {
    kmutex mu;
    bool throttle;
    bool off; /* kura_options.capacity_accounting_off (never with throttle) */
    int64_t (*clock)(void *arg);
    void *clock_arg;
    /* made at a target's first use (a table nobody uses costs the struct alone), published
     * with a release store and never freed before the tcap */
    _Atomic(tcap_target *) tg[TCAP_TARGETS];
    /* under mu: the table's settings and its ACTIVE (or backfilling) GSIs */
    tcap_cfg cfg;
    uint32_t ngsi;
    tcap_gsi *gsi; /* ngsi of them (malloc'ed by tcap_configure) */
};

/* The target of `index_id`; with `create`, claimed if new (NULL when every slot is taken). */
tcap_target *tcap_target_of(tcap *c, uint32_t index_id, bool create);
tcap_target *tcap_target_of_locked(tcap *c, uint32_t index_id, bool create); /* c->mu held */

/* Brings a target's throttle state to cfg at `now` (a new target, or UpdateTable changed its
 * throughput: the new rate counts from the change on). c->mu held. */
void tcap_target_ready(tcap_target *tg, const tcap_cfg *cfg, int64_t now);

/* A heat accumulator of the tcap's size in *slot (`pair`: with the items' second sketch),
 * allocated when empty (NULL: no memory). */
heat_acc *tcap_acc(_Atomic(heat_acc *) *slot, bool pair);

#endif
