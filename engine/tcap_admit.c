/*
 * tcap_admit.c - This file contains the admission of requests against DynamoDB's capacity
 * limits (kura_options.throttle): the table's or GSI's throughput and each partition-key
 * value's own 3,000 RCU / 1,000 WCU, decided by engine/throttle/decide.c, and the refusals in
 * DynamoDB's words.
 *
 * What a request is charged before it runs: its estimate (a put: the new item's units; a
 * delete, an update, a read: the minimum), on the table and its key, and on every GSI whose
 * key the new item has, on that key. What it cost beyond the estimate is charged after
 * (tcap_done, thr_charge_after): DynamoDB too admits a request while capacity remains and
 * debits its whole cost, so the next requests wait. The old item's index entries (deleted on
 * an update that moves the item in a GSI) are not known before the write and are not charged
 * to the GSI's throttle; the applier records them in its accounting.
 *
 * The per-key buckets live in a bounded table per target (TCAP_KEY_SLOTS, probed by hash): a
 * key is found or takes an empty slot, a slot idle for a second (its bucket full again: the
 * same as a new key), or the least recently used of its probe window, whose state is lost.
 * So a key is limited exactly while at most TCAP_KEY_SLOTS keys of one target are active
 * within a second; past that some keys restart with a full second of capacity.
 */
#include "engine/tcap_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/table.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/status.h"

#define TCAP_PROBE 8
#define HALF_MU (THR_MU / HEAT_UNIT_SCALE) /* milli-units in a half unit */

void tcap_op_init(tcap_op *op, kura_table *t, bool write)
{
    memset(op, 0, sizeof *op);
    op->t = t;
    op->write = write;
}

/* Brings tg's throttle state to `cfg` (new, or changed by UpdateTable). c->mu held. */
void tcap_target_ready(tcap_target *tg, const tcap_cfg *cfg, int64_t now)
{
    if (tg->ready && !memcmp(&tg->cfg, cfg, sizeof *cfg)) return;
    bool was_prov = tg->ready && tg->cfg.provisioned;
    bool was_od = tg->ready && !tg->cfg.provisioned;
    if (cfg->provisioned && was_prov) {
        thr_bucket_set_rate(&tg->prov_rd, cfg->rcu * THR_MU, now);
        thr_bucket_set_rate(&tg->prov_wr, cfg->wcu * THR_MU, now);
    } else if (cfg->provisioned) {
        thr_bucket_init(&tg->prov_rd, cfg->rcu * THR_MU, THR_BURST_S, now);
        thr_bucket_init(&tg->prov_wr, cfg->wcu * THR_MU, THR_BURST_S, now);
    } else {
        int64_t max_r = cfg->od_read > 0 ? cfg->od_read * THR_MU : -1;
        int64_t max_w = cfg->od_write > 0 ? cfg->od_write * THR_MU : -1;
        if (was_od) {
            thr_od_set_max(&tg->od_rd, max_r);
            thr_od_set_max(&tg->od_wr, max_w);
        } else {
            int64_t warm_r = cfg->warm_read > 0 ? cfg->warm_read * THR_MU : THR_OD_WARM_RCU_MU;
            int64_t warm_w = cfg->warm_write > 0 ? cfg->warm_write * THR_MU : THR_OD_WARM_WCU_MU;
            thr_od_init(&tg->od_rd, warm_r, max_r, now);
            thr_od_init(&tg->od_wr, warm_w, max_w, now);
        }
    }
    tg->cfg = *cfg;
    tg->ready = true;
}

/* The buckets of the key hashed `hash` in tg (NULL: no memory: the key is not limited). */
static thr_key *slot_of(tcap_target *tg, uint64_t hash, int64_t now)
{
    if (!tg->slots && !(tg->slots = calloc(TCAP_KEY_SLOTS, sizeof *tg->slots))) return NULL;
    hash |= 1; /* 0 marks an empty slot */
    tcap_slot *pick = NULL;
    for (uint32_t i = 0; i < TCAP_PROBE; i++) {
        tcap_slot *s = &tg->slots[(hash + i) & (TCAP_KEY_SLOTS - 1)];
        if (s->hash == hash) {
            s->last_ms = now;
            return &s->k;
        }
        if (!pick || (pick->hash && (!s->hash || s->last_ms < pick->last_ms))) pick = s;
    }
    pick->hash = hash;
    pick->last_ms = now;
    thr_key_init(&pick->k, now);
    return &pick->k;
}

/* ---- Building the targets of one or several requests -------------------------------------- */

typedef struct adm_entry {
    tcap_target *tg;
    bool provisioned;
    size_t op;          /* the first request charged here */
    const uint8_t *enc; /* the key's encoding (for the throttled-keys count) */
    size_t enc_len;
} adm_entry;

enum { ADM_INLINE = 8 }; /* a single request needs 1 + its GSIs' entries */

typedef struct adm_list {
    thr_target *t;
    adm_entry *e;
    size_t n, cap;
    thr_target it[ADM_INLINE]; /* t and e point here until they grow */
    adm_entry ie[ADM_INLINE];
} adm_list;

static void adm_init(adm_list *l)
{
    l->t = l->it;
    l->e = l->ie;
    l->n = 0;
    l->cap = ADM_INLINE;
}

static void adm_free(adm_list *l)
{
    if (l->t != l->it) free(l->t);
    if (l->e != l->ie) free(l->e);
}

static bool adm_grow(adm_list *l)
{
    size_t cap = l->cap * 2;
    thr_target *t = malloc(cap * sizeof *t);
    adm_entry *e = malloc(cap * sizeof *e);
    if (!t || !e) {
        free(t);
        free(e);
        return false;
    }
    memcpy(t, l->t, l->n * sizeof *t);
    memcpy(e, l->e, l->n * sizeof *e);
    adm_free(l);
    l->t = t;
    l->e = e;
    l->cap = cap;
    return true;
}

/* Adds `mu` to the entry of (tg, key), making one: the first entry of a target carries its
 * throughput, later ones only their key (decide.h: no bucket in two targets). */
static bool adm_add(adm_list *l, tcap_target *tg, const char *index_name, thr_key *key, bool write,
                    int64_t mu, size_t op, const uint8_t *enc, size_t enc_len)
{
    bool seen = false;
    for (size_t i = 0; i < l->n; i++) {
        if (l->e[i].tg != tg) continue;
        if (l->t[i].prov_read || l->t[i].od_read) seen = true;
        if (l->t[i].key != key) continue;
        *(write ? &l->t[i].write_mu : &l->t[i].read_mu) += mu;
        return true;
    }
    if (l->n == l->cap && !adm_grow(l)) return false;
    thr_target *t = &l->t[l->n];
    memset(t, 0, sizeof *t);
    t->index_name = index_name;
    t->key = key;
    *(write ? &t->write_mu : &t->read_mu) = mu;
    if (!seen && tg->cfg.provisioned) {
        t->prov_read = &tg->prov_rd;
        t->prov_write = &tg->prov_wr;
    } else if (!seen) {
        t->od_read = &tg->od_rd;
        t->od_write = &tg->od_wr;
    }
    l->e[l->n++] = (adm_entry){tg, tg->cfg.provisioned, op, enc, enc_len};
    return true;
}

/* The encoding of the new item's key in GSI g (its HASH attributes) into b; false when the
 * item has none there (not indexed) or out of memory. */
static bool gsi_key(const tcap_gsi *g, const kura_value *item, kbuf *b)
{
    b->len = 0;
    for (uint32_t h = 0; h < g->nhash; h++) {
        const kura_value *v = val_map_get(item, g->hash[h], strlen(g->hash[h]));
        if (!v || v->type != g->type[h] || key_enc_value(v, b) != KURA_OK) return false;
    }
    return true;
}

/* One request's entries: its table and key, and for a write with a new item each GSI's.
 * c->mu held. */
static bool adm_op(adm_list *l, tcap_op *op, size_t i, kbuf *gsi_keys)
{
    tcap *c = op->t->cap;
    tcap_target *tg = tcap_target_of_locked(c, 0, true);
    tcap_target_ready(tg, &c->cfg, op->now_ms);
    int64_t mu = (int64_t)op->est_half * HALF_MU;
    thr_key *key = NULL;
    const uint8_t *enc = NULL;
    size_t enc_len = 0;
    if (op->skey && op->klen > 8) {
        enc = op->skey + 8;
        enc_len = op->t->ks.sk_name ? tcap_prefix_len(enc, op->klen - 8, &op->t->ks.pk_type, 1)
                                    : op->klen - 8;
        key = slot_of(tg, kura_hash64(enc, enc_len), op->now_ms);
    }
    op->tg = tg;
    op->key = key;
    if (!adm_add(l, tg, NULL, key, op->write, mu, i, enc, enc_len)) return false;
    for (uint32_t g = 0; gsi_keys && op->write && op->item && g < c->ngsi; g++) {
        kbuf *b = &gsi_keys[g]; /* this op's key in GSI g: it stays put until the end */
        tcap_target *gt =
            gsi_key(&c->gsi[g], op->item, b) ? tcap_target_of_locked(c, c->gsi[g].id, true) : NULL;
        if (!gt) continue;
        tcap_target_ready(gt, &c->gsi[g].cfg, op->now_ms);
        thr_key *gk = slot_of(gt, kura_hash64(b->data, b->len), op->now_ms);
        if (!adm_add(l, gt, c->gsi[g].name, gk, true, mu, i, b->data, b->len)) return false;
    }
    return true;
}

/* ---- Refusals ----------------------------------------------------------------------------- */

#define MSG_TABLE                                                                                  \
    "The level of configured provisioned throughput for the table was exceeded. Consider "         \
    "increasing your provisioning level with the UpdateTable API."
#define MSG_INDEX                                                                                  \
    "The level of configured provisioned throughput for one or more global secondary indexes "     \
    "of the table was exceeded. Consider increasing your provisioning level for the "              \
    "under-provisioned global secondary indexes with the UpdateTable API"
#define MSG_PEAK                                                                                   \
    "Throughput exceeds the current capacity of your table or index. DynamoDB is "                 \
    "automatically scaling your table or index so please try again shortly. If exceptions "        \
    "persist, check if you have a hot partition: "                                                 \
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"                            \
    "bp-partition-key-design.html"
#define MSG_MAX "Throughput exceeds the maximum OnDemandThroughput configured on table or index"
#define MSG_GSI_PEAK                                                                               \
    "Throughput exceeds the current capacity for one or more global secondary indexes. "           \
    "DynamoDB is automatically scaling your index so please try again shortly."

static kura_status refusal(const thr_verdict *v, bool provisioned)
{
    switch (v->refusal) {
    case THR_REFUSED_PROVISIONED:
        return kura_err(KURA_E_THROUGHPUT_EXCEEDED, "%s", v->index_name ? MSG_INDEX : MSG_TABLE);
    case THR_REFUSED_KEY:
        if (provisioned)
            return kura_err(KURA_E_THROUGHPUT_EXCEEDED, "%s",
                            v->index_name ? MSG_INDEX : MSG_TABLE);
        return kura_err(KURA_E_THROTTLED, "%s", v->index_name ? MSG_GSI_PEAK : MSG_PEAK);
    case THR_REFUSED_OD_MAX:
        return kura_err(KURA_E_THROTTLED, "%s", MSG_MAX);
    default: /* an on-demand GSI names the indexes, as DynamoDB's message does */
        return kura_err(KURA_E_THROTTLED, "%s", v->index_name ? MSG_GSI_PEAK : MSG_PEAK);
    }
}

/* Which entry refused: of the refusing target, the first whose key is short (a key refusal)
 * or the one that carries its throughput. */
static size_t refused_entry(const adm_list *l, const thr_verdict *v, int64_t now)
{
    size_t first = 0;
    bool any = false;
    for (size_t i = 0; i < l->n; i++) {
        const thr_target *t = &l->t[i];
        bool same = t->index_name == v->index_name ||
                    (t->index_name && v->index_name && !strcmp(t->index_name, v->index_name));
        if (!same) continue;
        if (!any) first = i;
        any = true;
        if (v->refusal != THR_REFUSED_KEY || !t->key) continue;
        if (!thr_bucket_fits(v->write ? &t->key->write : &t->key->read,
                             v->write ? t->write_mu : t->read_mu, now))
            return i;
    }
    return first;
}

/* Counts the refusal on its target (per second, and per key when the key is known). */
static void count_refusal(const adm_entry *e, bool write, int64_t now)
{
    heat_window_add(&e->tg->throttled, now, write ? 0 : 1, write ? 1 : 0);
    if (!e->enc) return;
    heat_acc *thr = tcap_acc(&e->tg->thr, false);
    if (thr) heat_acc_record(thr, e->enc, e->enc_len, now, write ? 0 : 1, write ? 1 : 0);
}

/* ---- Admission ------------------------------------------------------------------------------ */

static int cmp_tcap(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (tcap *const *)a, y = (uintptr_t) * (tcap *const *)b;
    return x < y ? -1 : x > y;
}

kura_status tcap_admit_all(tcap_op *ops, size_t n, size_t *which_out)
{
    if (which_out) *which_out = 0;
    if (!n || !ops[0].t->cap) return KURA_OK;
    int64_t now = tcap_now(ops[0].t->cap);
    for (size_t i = 0; i < n; i++)
        ops[i].now_ms = now;
    if (!tcap_throttling(ops[0].t->cap)) return KURA_OK;
    /* the tables' locks in address order (a transaction may span tables) */
    tcap *stack_locks[8];
    tcap **locks = n <= 8 ? stack_locks : malloc(n * sizeof *locks);
    if (!locks) return kura_err(KURA_E_NOMEM, "out of memory");
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        locks[nl++] = ops[i].t->cap;
    if (nl > 1) qsort(locks, nl, sizeof *locks, cmp_tcap);
    for (size_t i = 0; i < nl; i++)
        if (!i || locks[i] != locks[i - 1]) kmutex_lock(&locks[i]->mu);
    /* the new items' GSI keys, kept until the decision (only when a table has GSIs) */
    bool gsis = false;
    for (size_t i = 0; i < n; i++)
        gsis = gsis || (ops[i].write && ops[i].item && ops[i].t->cap->ngsi);
    kbuf *gsi_keys = gsis ? calloc((size_t)n * IDX_MAX_GSI, sizeof *gsi_keys) : NULL;
    adm_list l;
    adm_init(&l);
    kura_status s = gsis && !gsi_keys ? kura_err(KURA_E_NOMEM, "out of memory") : KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++)
        if (!adm_op(&l, &ops[i], i, gsi_keys ? &gsi_keys[i * IDX_MAX_GSI] : NULL))
            s = kura_err(KURA_E_NOMEM, "out of memory");
    thr_verdict v = {0};
    if (s == KURA_OK) thr_decide(l.t, l.n, now, &v);
    if (s == KURA_OK && v.refusal != THR_ADMITTED) {
        size_t e = refused_entry(&l, &v, now);
        count_refusal(&l.e[e], v.write, now);
        if (which_out) *which_out = l.e[e].op;
        s = refusal(&v, l.e[e].provisioned);
    }
    for (size_t i = 0; i < n; i++)
        ops[i].admitted = s == KURA_OK;
    for (size_t i = nl; i-- > 0;)
        if (!i || locks[i] != locks[i - 1]) kmutex_unlock(&locks[i]->mu);
    for (size_t i = 0; gsi_keys && i < (size_t)n * IDX_MAX_GSI; i++)
        kbuf_free(&gsi_keys[i]);
    free(gsi_keys);
    if (locks != stack_locks) free(locks);
    adm_free(&l);
    return s;
}

kura_status tcap_admit(tcap_op *op)
{
    tcap *c = op->t->cap;
    if (c && !tcap_throttling(c)) {
        if (!c->off) op->now_ms = tcap_now(c);
        return KURA_OK;
    }
    return tcap_admit_all(op, 1, NULL);
}

void tcap_done(tcap_op *op, uint64_t half, bool ok)
{
    tcap *c = op->t->cap;
    if (!c || !ok || c->off) return;
    if (!op->now_ms) /* a request that failed before its admission (a condition) */
        op->now_ms = tcap_now(c);
    const uint8_t *enc = op->skey && op->klen > 8 ? op->skey + 8 : NULL;
    size_t len = enc ? op->klen - 8 : 0;
    size_t pk_len =
        enc && op->t->ks.sk_name ? tcap_prefix_len(enc, len, &op->t->ks.pk_type, 1) : len;
    tcap_record(c, 0, op->t->ks.sk_name != NULL, enc ? enc : (const uint8_t *)"", pk_len, len,
                op->write ? 0 : half, op->write ? half : 0, op->now_ms);
    if (!op->admitted || half <= op->est_half || !op->tg) return;
    int64_t extra = (int64_t)(half - op->est_half) * HALF_MU;
    thr_target t = {.key = op->key};
    *(op->write ? &t.write_mu : &t.read_mu) = extra;
    if (op->tg->cfg.provisioned) {
        t.prov_read = &op->tg->prov_rd;
        t.prov_write = &op->tg->prov_wr;
    } else {
        t.od_read = &op->tg->od_rd;
        t.od_write = &op->tg->od_wr;
    }
    kmutex_lock(&c->mu);
    thr_charge_after(&t, 1, tcap_now(c));
    kmutex_unlock(&c->mu);
}

const char *tcap_error_type(kura_status s)
{
    if (s == KURA_E_THROUGHPUT_EXCEEDED) return "ProvisionedThroughputExceededException";
    if (s == KURA_E_THROTTLED) return "ThrottlingException";
    return NULL;
}

/* "Wednesday, July 25, 2018 7:18:39 PM UTC", as DynamoDB's message writes its times. */
static void utc_words(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%A, %B %-d, %Y %-I:%M:%S %p UTC", &tm);
}

kura_status tcap_decrease(tcap *c, uint32_t index_id)
{
    if (!c || !tcap_throttling(c)) return KURA_OK;
    int64_t now = tcap_now(c);
    kura_status s = KURA_OK;
    kmutex_lock(&c->mu);
    tcap_target *tg = tcap_target_of_locked(c, index_id, true);
    if (tg && !tg->dec_ready) {
        thr_decrease_init(&tg->dec);
        tg->dec_ready = true;
    }
    int64_t next = 0;
    if (tg && !thr_decrease_allowed(&tg->dec, now, &next)) {
        char last[96], when[96];
        utc_words(tg->dec.last_ms, last, sizeof last);
        utc_words(next, when, sizeof when);
        s = kura_err(KURA_E_LIMIT_EXCEEDED,
                     "Subscriber limit exceeded: Provisioned throughput decreases are limited "
                     "within a given UTC day. After the first 4 decreases, each subsequent "
                     "decrease in the same UTC day can be performed at most once every 3600 "
                     "seconds. Number of decreases today: %d. Last decrease at %s. Next decrease "
                     "can be made at %s",
                     (int)thr_decrease_count(&tg->dec, now), last, when);
    } else if (tg) {
        thr_decrease_record(&tg->dec, now);
    }
    kmutex_unlock(&c->mu);
    return s;
}
