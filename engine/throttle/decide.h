/*
 * decide.h - admit or refuse one request against every limit it meets
 * (engine/throttle/decide.c): the table's and each GSI's throughput (provisioned buckets or
 * the on-demand rule) and the per-key limit in each. docs/architecture.md, "Throttling model
 * (issue 24)".
 *
 * A request is admitted whole or refused whole: every limit is checked first, and only when
 * all admit is anything taken (nothing is half-applied by a throttle). The caller holds the
 * table's throttle lock across thr_decide (and thr_charge_after), which makes check-and-take
 * atomic for the writer threads sharing the buckets; targets are borrowed for the call, and
 * no bucket, on-demand state or key appears in two of them.
 *
 * Precedence, when several limits refuse: throughput before keys (a request refused by the
 * table's throughput would be refused on any key), and within each the table before its
 * indexes in the order given, reads before writes. A GSI that refuses an index write refuses
 * the base table's write (DynamoDB's back-pressure), naming the index.
 *
 * What the caller answers for each refusal (DynamoDB's exceptions and texts; a transaction
 * gets TransactionCanceledException with a ThrottlingError reason carrying the same message;
 * the ThrottlingReason code is Table|Index + Read|Write + the limit type shown):
 *  - THR_REFUSED_PROVISIONED, the table (TableReadProvisionedThroughputExceeded, ...):
 *    ProvisionedThroughputExceededException, "The level of configured provisioned throughput
 *    for the table was exceeded. Consider increasing your provisioning level with the
 *    UpdateTable API."
 *  - THR_REFUSED_PROVISIONED, an index (IndexWriteProvisionedThroughputExceeded, ...):
 *    ProvisionedThroughputExceededException, "The level of configured provisioned throughput
 *    for one or more global secondary indexes of the table was exceeded. Consider increasing
 *    your provisioning level for the under-provisioned global secondary indexes with the
 *    UpdateTable API"
 *  - THR_REFUSED_KEY (…KeyRangeThroughputExceeded): on a provisioned table or index, as
 *    THR_REFUSED_PROVISIONED of the same target (DynamoDB answers a hot partition of a
 *    provisioned table with the provisioned messages); on an on-demand one, as
 *    THR_REFUSED_OD_PEAK.
 *  - THR_REFUSED_OD_PEAK (on-demand past double its previous peak): ThrottlingException,
 *    "Throughput exceeds the current capacity of your table or index. DynamoDB is
 *    automatically scaling your table or index so please try again shortly. If exceptions
 *    persist, check if you have a hot partition:
 *    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
 *    On an on-demand GSI (a refusal naming an index, past its peak or its keys' limit) the
 *    message names the indexes: "Throughput exceeds the current capacity for one or more
 *    global secondary indexes. DynamoDB is automatically scaling your index so please try
 *    again shortly." (engine/tcap_admit.c).
 *  - THR_REFUSED_OD_MAX (…MaxOnDemandThroughputExceeded): ThrottlingException, "Throughput
 *    exceeds the maximum OnDemandThroughput configured on table or index" (the text is not in
 *    DynamoDB's published docs: check against DynamoDB before the wiring relies on it).
 *
 * Units: milli-units (bucket.h). Time: the caller's now_ms.
 */
#ifndef KURA_ENGINE_THROTTLE_DECIDE_H
#define KURA_ENGINE_THROTTLE_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/throttle/bucket.h"
#include "engine/throttle/key.h"
#include "engine/throttle/ondemand.h"

/* The limits one request meets in the table or in one GSI, and what it needs there. A side
 * with neither a bucket nor an on-demand state (both NULL) has no throughput limit. */
typedef struct thr_target {
    const char *index_name;            /* NULL: the table; else the GSI's name (borrowed) */
    thr_bucket *prov_read, *prov_write; /* PROVISIONED: its buckets; NULL when on-demand */
    thr_ondemand *od_read, *od_write;   /* PAY_PER_REQUEST: its states; NULL when provisioned */
    thr_key *key;                      /* the partition-key value's limits here; NULL: none */
    int64_t read_mu, write_mu;         /* units needed here (0: none) */
} thr_target;

typedef enum thr_refusal {
    THR_ADMITTED = 0,
    THR_REFUSED_PROVISIONED, /* the provisioned throughput, after its burst */
    THR_REFUSED_OD_MAX,      /* OnDemandThroughput's maximum */
    THR_REFUSED_OD_PEAK,     /* on-demand: past max(warm, 2 x previous peak) */
    THR_REFUSED_KEY,         /* the partition-key value's 3,000 RCU / 1,000 WCU */
} thr_refusal;

typedef struct thr_verdict {
    thr_refusal refusal;    /* THR_ADMITTED: every limit took its units */
    const char *index_name; /* the refusing target's (NULL: the table); borrowed */
    bool write;             /* the refused side: writes (true) or reads */
    bool ondemand;          /* the refusing target's side is on-demand (or unlimited) */
} thr_verdict;

/* Checks targets[0..n) (the table first, then GSIs) at `now_ms`; when all admit, takes every
 * target's units from its throughput and its key and answers THR_ADMITTED; otherwise takes
 * nothing and answers the first refusal by the precedence above. */
void thr_decide(const thr_target *targets, size_t n, int64_t now_ms, thr_verdict *out);

/* Charges costs known only after the request ran (a Query's bytes beyond the estimate
 * admitted): every target's read_mu and write_mu, unconditionally; buckets may go negative
 * and the on-demand second may pass its limit, so that later requests wait. */
void thr_charge_after(const thr_target *targets, size_t n, int64_t now_ms);

#endif
