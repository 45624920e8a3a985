/*
 * oracle_check.c - checking a recovered tree against the model of oracle.h.
 *
 * The check reads what the database holds twice, by a full scan and by a get per key, and
 * turns it into one observed cell per key (which operation's entry wrote it, or absent),
 * verifying every value byte against the operation that claims to have written it. Then, per
 * writer, it replays the model from `committed` through the acknowledged ops, counting keys
 * whose expected cell differs from the observed one, and goes on through the ops that may or
 * may not have happened, updating the count incrementally. A count of zero at op k means the
 * database holds exactly writer t's ops 1..k.
 */
#include "crash/oracle_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/coding.h"

enum { VALUE_HEADER = 16 };

typedef struct check_ctx {
    oracle *o;
    kura_tree *tree;
    oracle_cell *obs; /* nthreads * keys_per_thread */
    char *why;
    size_t cap;
} check_ctx;

static bool violation(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool violation(check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->cap, fmt, ap);
    va_end(ap);
    return false;
}

static const char *cell_str(oracle_cell c, char *buf, size_t cap)
{
    if (!c.present)
        snprintf(buf, cap, "absent");
    else
        snprintf(buf, cap, "op %llu entry %u", (unsigned long long)c.opno, c.idx);
    return buf;
}

/* Parses "tNN.kNNNNN" into writer and key; false if it is not one of the model's keys. */
static bool parse_key(const oracle *o, const uint8_t *k, size_t n, uint32_t *t_out,
                      uint32_t *key_out)
{
    char buf[ORACLE_KEY_LEN + 1], want[ORACLE_KEY_LEN];
    unsigned t, key;
    if (n != ORACLE_KEY_LEN)
        return false;
    memcpy(buf, k, n);
    buf[n] = 0;
    if (sscanf(buf, "t%2u.k%5u", &t, &key) != 2 || t >= o->cfg.nthreads ||
        key >= o->cfg.keys_per_thread)
        return false;
    oracle_key(t, key, want);
    if (memcmp(want, k, n) != 0)
        return false;
    *t_out = t;
    *key_out = key;
    return true;
}

/* Verifies that v is exactly the value some operation of writer t put to key k. */
static bool verify_value(check_ctx *c, uint32_t t, uint32_t k, const uint8_t *v, size_t n,
                         oracle_cell *cell_out)
{
    char key[ORACLE_KEY_LEN + 1] = {0};
    oracle_key(t, k, key);
    if (n < VALUE_HEADER || v[0] != 'K' || v[1] != 'V' || v[2] != t)
        return violation(c, "key %s holds %zu bytes that no operation of writer %u wrote", key,
                         n, t);
    uint32_t idx = v[3];
    uint64_t j = dec_fixed64(v + 4);
    const oracle_writer *w = &c->o->w[t];
    uint64_t issued = w->attempted > w->acked ? w->attempted : w->acked;
    if (j == 0 || j > issued)
        return violation(c, "key %s holds a value of op %llu, but writer %u issued only ops "
                            "1..%llu", key, (unsigned long long)j, t,
                         (unsigned long long)issued);
    oracle_op op;
    oracle_gen(c->o, t, j, &op);
    if (idx >= op.n || op.e[idx].key != k || op.e[idx].del)
        return violation(c, "key %s holds the value of op %llu entry %u, which did not put it",
                         key, (unsigned long long)j, idx);
    uint8_t want[ORACLE_MAX_VALUE];
    size_t wn = oracle_value(c->o, t, j, idx, want);
    size_t diff = 0;
    while (diff < n && diff < wn && v[diff] == want[diff])
        diff++;
    if (wn != n || diff < n)
        return violation(c, "key %s: value of op %llu entry %u is wrong: %zu bytes, expected "
                            "%zu, first difference at byte %zu", key, (unsigned long long)j,
                         idx, n, wn, diff);
    cell_out->opno = j;
    cell_out->idx = idx;
    cell_out->present = true;
    return true;
}

/* Fills c->obs from a full scan. */
static bool scan(check_ctx *c)
{
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(c->tree, NULL, &it);
    if (s != KURA_OK)
        return violation(c, "kura_iter_new: %s: %s", kura_status_str(s), kura_last_error());
    bool ok = true;
    uint32_t nk = c->o->cfg.keys_per_thread;
    for (kura_iter_seek_first(it); ok && kura_iter_valid(it); kura_iter_next(it)) {
        size_t kl, vl;
        const uint8_t *k = kura_iter_key(it, &kl), *v = kura_iter_value(it, &vl);
        uint32_t t, key;
        if (!parse_key(c->o, k, kl, &t, &key))
            ok = violation(c, "scan found a key this workload never wrote: \"%.*s\" (%zu bytes)",
                           (int)(kl > 40 ? 40 : kl), (const char *)k, kl);
        else if (c->obs[(size_t)t * nk + key].present)
            ok = violation(c, "scan returned key \"%.*s\" twice", (int)kl, (const char *)k);
        else
            ok = verify_value(c, t, key, v, vl, &c->obs[(size_t)t * nk + key]);
    }
    if (ok && (s = kura_iter_status(it)) != KURA_OK)
        ok = violation(c, "scan failed: %s: %s", kura_status_str(s), kura_last_error());
    kura_iter_free(it);
    return ok;
}

/* Every key read with kura_get must agree with the scan. */
static bool gets(check_ctx *c)
{
    uint32_t nk = c->o->cfg.keys_per_thread;
    for (uint32_t t = 0; t < c->o->cfg.nthreads; t++)
        for (uint32_t k = 0; k < nk; k++) {
            char key[ORACLE_KEY_LEN + 1] = {0}, a[64], b[64];
            oracle_key(t, k, key);
            void *v = NULL;
            size_t vl = 0;
            oracle_cell got = {0, 0, false}, scanned = c->obs[(size_t)t * nk + k];
            kura_status s = kura_get(c->tree, NULL, key, ORACLE_KEY_LEN, &v, &vl);
            bool ok = true;
            if (s == KURA_OK)
                ok = verify_value(c, t, k, v, vl, &got);
            else if (s != KURA_E_NOT_FOUND)
                ok = violation(c, "get %s: %s: %s", key, kura_status_str(s), kura_last_error());
            kura_free(v);
            if (!ok)
                return false;
            if (!oracle_cell_eq(got, scanned))
                return violation(c, "get %s returned %s, the scan %s", key,
                                 cell_str(got, a, sizeof a), cell_str(scanned, b, sizeof b));
        }
    return true;
}

/* Applies op to exp, keeping *mism (keys where exp differs from obs) up to date. */
static void apply(const oracle_op *op, oracle_cell *exp, const oracle_cell *obs, uint64_t *mism)
{
    for (uint32_t i = 0; i < op->n; i++) {
        uint32_t k = op->e[i].key;
        bool before = !oracle_cell_eq(exp[k], obs[k]);
        exp[k] = oracle_cell_of(op, i);
        bool after = !oracle_cell_eq(exp[k], obs[k]);
        *mism = *mism - before + after;
    }
}

/* Finds the largest k in [acked, attempted] such that writer t's keys are its ops 1..k. */
static bool find_prefix(check_ctx *c, uint32_t t, oracle_cell *exp, uint64_t *k_out)
{
    const oracle_writer *w = &c->o->w[t];
    uint32_t nk = c->o->cfg.keys_per_thread;
    const oracle_cell *obs = c->obs + (size_t)t * nk;
    oracle_op op;
    uint64_t mism = 0;
    memcpy(exp, w->state, nk * sizeof *exp);
    for (uint32_t k = 0; k < nk; k++)
        mism += !oracle_cell_eq(exp[k], obs[k]);
    for (uint64_t j = w->committed + 1; j <= w->acked; j++) {
        oracle_gen(c->o, t, j, &op);
        apply(&op, exp, obs, &mism);
    }
    uint32_t bad = 0; /* a differing key at k = acked, for the message */
    while (bad < nk && oracle_cell_eq(exp[bad], obs[bad]))
        bad++;
    oracle_cell want = bad < nk ? exp[bad] : obs[0];
    bool found = mism == 0;
    uint64_t best = w->acked;
    for (uint64_t j = w->acked + 1; j <= w->attempted; j++) {
        oracle_gen(c->o, t, j, &op);
        apply(&op, exp, obs, &mism);
        if (mism == 0)
            found = true, best = j;
    }
    if (found) {
        *k_out = best;
        return true;
    }
    char key[ORACLE_KEY_LEN + 1] = {0}, a[64], b[64];
    oracle_key(t, bad, key);
    return violation(c, "writer %u: its keys match no prefix of its operations (committed %llu, "
                        "acknowledged %llu, attempted %llu); after op %llu key %s should be "
                        "%s but is %s",
                     t, (unsigned long long)w->committed, (unsigned long long)w->acked,
                     (unsigned long long)w->attempted, (unsigned long long)w->acked, key,
                     cell_str(want, a, sizeof a), cell_str(obs[bad], b, sizeof b));
}

/* Moves writer t's model to ops 1..k. */
static void commit(oracle *o, uint32_t t, uint64_t k)
{
    oracle_writer *w = &o->w[t];
    oracle_op op;
    for (uint64_t j = w->committed + 1; j <= k; j++) {
        oracle_gen(o, t, j, &op);
        for (uint32_t i = 0; i < op.n; i++)
            w->state[op.e[i].key] = oracle_cell_of(&op, i);
    }
    w->committed = w->acked = w->attempted = k;
}

bool oracle_check(oracle *o, kura_tree *tree, bool do_commit, char *why, size_t cap)
{
    uint32_t nt = o->cfg.nthreads, nk = o->cfg.keys_per_thread;
    check_ctx c = {o, tree, calloc((size_t)nt * nk, sizeof(oracle_cell)), why, cap};
    oracle_cell *exp = malloc(nk * sizeof *exp);
    uint64_t k[ORACLE_MAX_THREADS];
    bool ok = c.obs && exp ? true : violation(&c, "oracle_check: out of memory");
    if (ok && !o->part)
        ok = violation(&c, "oracle_check: oracle_route was not called");
    ok = ok && scan(&c) && gets(&c);
    for (uint32_t t = 0; t < nt && ok; t++)
        ok = find_prefix(&c, t, exp, &k[t]);
    if (ok && do_commit)
        for (uint32_t t = 0; t < nt; t++)
            commit(o, t, k[t]);
    free(c.obs);
    free(exp);
    return ok;
}
