/*
 * fxbank.c - the bank of the combined crash tests (fxwork.h): transactions over FxA, FxB and
 * FxL with Put, Update, Delete and ConditionCheck actions, and the check of its invariants.
 */
#include "crash/fxwork_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void acct_key(int i, char *buf, size_t cap, const char **table)
{
    if (i % 2 == 0) {
        *table = FX_A;
        snprintf(buf, cap, "{\"pk\":{\"S\":\"acct%d\"}}", i);
    } else {
        *table = FX_B;
        snprintf(buf, cap, "{\"pk\":{\"S\":\"c%d\"},\"sk\":{\"S\":\"acct%d\"}}", (i / 2) % 4, i);
    }
}

static long long num_attr(const kura_value *item, const char *name, bool *ok)
{
    const kura_value *v = item ? kura_value_get(item, name, strlen(name)) : NULL;
    char buf[180];
    if (!v || !kura_value_num(v, buf, sizeof buf)) {
        if (ok)
            *ok = false;
        return 0;
    }
    return strtoll(buf, NULL, 10);
}

static kura_status get_item(kura_db *db, const char *table, const char *key, kura_value **out,
                            char *why, size_t cap)
{
    kura_value *k = NULL;
    kura_status s = kura_value_from_json(key, strlen(key), true, &k);
    kura_get_item_res res;
    memset(&res, 0, sizeof res);
    if (s == KURA_OK) {
        kura_get_item_req req = {.table_name = table, .key = k, .consistent_read = true};
        s = kura_get_item(db, &req, &res);
    }
    kura_value_free(k);
    if (s != KURA_OK)
        snprintf(why, cap, "GetItem %s %s: %s", table, key, kura_last_error());
    *out = s == KURA_OK ? res.item : NULL;
    return s;
}

kura_status fx_bank_load(kura_db *db, uint32_t w, fxb_writer *out, char *why, size_t cap)
{
    char key[96];
    kura_value *l = NULL, *e = NULL;
    snprintf(key, sizeof key, "{\"pk\":{\"S\":\"w%u\"}}", w);
    kura_status s = get_item(db, FX_L, key, &l, why, cap);
    snprintf(key, sizeof key, "{\"pk\":{\"S\":\"esc\"},\"sk\":{\"S\":\"w%u\"}}", w);
    if (s == KURA_OK)
        s = get_item(db, FX_B, key, &e, why, cap);
    bool ok = true;
    memset(out, 0, sizeof *out);
    out->w = w;
    out->seq = (uint64_t)num_attr(l, "seq", &ok);
    out->escrow = e ? num_attr(e, "amt", &ok) : 0;
    if (s == KURA_OK && (!l || !ok)) {
        snprintf(why, cap, "writer %u's ledger or escrow is malformed", w);
        s = KURA_E_CORRUPTION;
    }
    kura_value_free(l);
    kura_value_free(e);
    return s;
}

/* Appends one action to buf at *n. */
#define ADD(...) (*n += (size_t)snprintf(buf + *n, cap - *n, __VA_ARGS__))

static void act_ledger(char *buf, size_t cap, size_t *n, const fxb_writer *x, int touches)
{
    ADD("{\"Update\":{\"TableName\":\"" FX_L "\",\"Key\":{\"pk\":{\"S\":\"w%u\"}},"
        "\"UpdateExpression\":\"SET seq = :n, touches = touches + :t\","
        "\"ConditionExpression\":\"seq = :s\",\"ExpressionAttributeValues\":{"
        "\":n\":{\"N\":\"%llu\"},\":s\":{\"N\":\"%llu\"},\":t\":{\"N\":\"%d\"}}}}",
        x->w, (unsigned long long)x->seq + 1, (unsigned long long)x->seq, touches);
}

static void act_account(char *buf, size_t cap, size_t *n, int acct, long long amount)
{
    char key[96];
    const char *table;
    acct_key(acct, key, sizeof key, &table);
    ADD(",{\"Update\":{\"TableName\":\"%s\",\"Key\":%s,\"UpdateExpression\":"
        "\"SET bal = bal %c :a, ops = ops + :one\"%s,\"ExpressionAttributeValues\":{"
        "\":a\":{\"N\":\"%lld\"},\":one\":{\"N\":\"1\"}}}}",
        table, key, amount < 0 ? '-' : '+',
        amount < 0 ? ",\"ConditionExpression\":\"bal >= :a\"" : "", amount < 0 ? -amount : amount);
}

static void act_config(char *buf, size_t cap, size_t *n)
{
    ADD(",{\"ConditionCheck\":{\"TableName\":\"" FX_L "\",\"Key\":{\"pk\":{\"S\":\"config\"}},"
        "\"ConditionExpression\":\"attribute_exists(pk)\"}}");
}

kura_status fx_bank_exec(uint64_t seed, kura_db *db, fxb_writer *x,
                         void (*before)(void *arg, uint64_t next_seq), void *arg, char *why,
                         size_t cap)
{
    char buf[4096];
    for (;;) {
        uint64_t r = fx_mix(fx_mix(fx_mix(seed ^ 0xba4c, x->w), x->seq), x->attempt);
        int from = (int)((r >> 8) % FX_NACC), to = (int)((r >> 16) % FX_NACC);
        if (to == from)
            to = (to + 1) % FX_NACC;
        long long amount = 1 + (long long)((r >> 24) % 20);
        int kind = x->escrow > 0 && r % 2 ? 2 : x->escrow == 0 && r % 4 == 1 ? 1 : 0;
        size_t n = (size_t)snprintf(buf, sizeof buf, "{\"TransactItems\":[");
        if (kind == 0) { /* a transfer */
            act_ledger(buf, sizeof buf, &n, x, 2);
            act_account(buf, sizeof buf, &n, from, -amount);
            act_account(buf, sizeof buf, &n, to, amount);
            act_config(buf, sizeof buf, &n);
        } else if (kind == 1) { /* an escrow out */
            act_ledger(buf, sizeof buf, &n, x, 1);
            act_account(buf, sizeof buf, &n, from, -amount);
            n += (size_t)snprintf(buf + n, sizeof buf - n,
                                  ",{\"Put\":{\"TableName\":\"" FX_B "\",\"Item\":{\"pk\":{\"S\":"
                                  "\"esc\"},\"sk\":{\"S\":\"w%u\"},\"esc_of\":{\"S\":\"w%u\"},"
                                  "\"amt\":{\"N\":\"%lld\"}},\"ConditionExpression\":"
                                  "\"attribute_not_exists(pk)\"}}",
                                  x->w, x->w, amount);
        } else { /* an escrow in */
            amount = x->escrow;
            act_ledger(buf, sizeof buf, &n, x, 1);
            n += (size_t)snprintf(buf + n, sizeof buf - n,
                                  ",{\"Delete\":{\"TableName\":\"" FX_B "\",\"Key\":{\"pk\":{\"S\":"
                                  "\"esc\"},\"sk\":{\"S\":\"w%u\"}},\"ConditionExpression\":"
                                  "\"amt = :a\",\"ExpressionAttributeValues\":{\":a\":{\"N\":"
                                  "\"%lld\"}}}}",
                                  x->w, amount);
            act_account(buf, sizeof buf, &n, to, amount);
            act_config(buf, sizeof buf, &n);
        }
        snprintf(buf + n, sizeof buf - n, "]}");
        if (before)
            before(arg, x->seq + 1);
        kura_status s = fx_exec(db, "TransactWriteItems", buf, why, cap);
        if (s == KURA_OK) {
            x->seq++;
            x->attempt = 0;
            x->escrow = kind == 1 ? amount : kind == 2 ? 0 : x->escrow;
            return KURA_OK;
        }
        if (s != KURA_E_TXN_CANCELED)
            return s;
        fxb_writer now;
        if ((s = fx_bank_load(db, x->w, &now, why, cap)) != KURA_OK)
            return s;
        if (now.seq != x->seq || now.escrow != x->escrow || ++x->attempt > 100) {
            snprintf(why, cap, "bank writer %u: a transaction cancelled (seq %llu, escrow %lld; "
                               "found seq %llu, escrow %lld; attempt %llu)",
                     x->w, (unsigned long long)x->seq, (long long)x->escrow,
                     (unsigned long long)now.seq, (long long)now.escrow,
                     (unsigned long long)x->attempt);
            return KURA_E_INVALID;
        }
    }
}

/* ---- the check ------------------------------------------------------------------------------ */

typedef struct bank_ctx {
    uint32_t nbank;
    int tab; /* 0 FxA, 1 FxB, 2 FxL */
    long long bal, ops, amt, touches;
    uint32_t accounts, escrows, ledgers, config;
    uint64_t seq[FX_MAX_BANK];
    bool have[FX_MAX_BANK];
    char bad[300];
} bank_ctx;

static bool on_bank_item(void *arg, const kura_value *item)
{
    bank_ctx *b = arg;
    size_t lp = 0, ls = 0;
    const kura_value *pv = kura_value_get(item, "pk", 2), *sv = kura_value_get(item, "sk", 2);
    const char *pk = pv ? kura_value_bytes(pv, &lp) : NULL;
    const char *sk = sv ? kura_value_bytes(sv, &ls) : NULL;
    bool ok = pk != NULL;
    unsigned i = 0, p = 0;
    if (ok && b->tab == 0) {
        ok = sscanf(pk, "acct%u", &i) == 1 && i % 2 == 0 && i < FX_NACC;
        b->bal += num_attr(item, "bal", &ok);
        b->ops += num_attr(item, "ops", &ok);
        b->accounts++;
    } else if (ok && b->tab == 1 && !strcmp(pk, "esc")) {
        const kura_value *of = kura_value_get(item, "esc_of", 6);
        size_t lo = 0;
        const char *o = of ? kura_value_bytes(of, &lo) : NULL;
        long long a = num_attr(item, "amt", &ok);
        ok = ok && sk && o && !strcmp(sk, o) && sscanf(sk, "w%u", &i) == 1 && i < b->nbank && a > 0;
        b->amt += a;
        b->escrows++;
    } else if (ok && b->tab == 1) {
        ok = sk && sscanf(pk, "c%u", &p) == 1 && sscanf(sk, "acct%u", &i) == 1 && i % 2 == 1 &&
             i < FX_NACC && p == (i / 2) % 4;
        b->bal += num_attr(item, "bal", &ok);
        b->ops += num_attr(item, "ops", &ok);
        b->accounts++;
    } else if (ok && !strcmp(pk, "config")) {
        b->config++;
    } else if (ok) {
        ok = sscanf(pk, "w%u", &i) == 1 && i < b->nbank && !b->have[i];
        if (ok) {
            b->seq[i] = (uint64_t)num_attr(item, "seq", &ok);
            b->touches += num_attr(item, "touches", &ok);
            b->have[i] = true;
            b->ledgers++;
        }
    }
    if (!ok) {
        char *j = NULL;
        size_t n;
        kura_value_to_json(item, true, &j, &n);
        snprintf(b->bad, sizeof b->bad, "%s: an item the bank never wrote: %.200s",
                 FX_TABLES[1 + b->tab], j ? j : "?");
        kura_free(j);
    }
    return ok;
}

bool fx_bank_check(kura_db *db, uint32_t nbank, const uint64_t *lo, const uint64_t *hi,
                   fxb_state *out, char *why, size_t cap)
{
    bank_ctx b;
    memset(&b, 0, sizeof b);
    b.nbank = nbank;
    for (b.tab = 0; b.tab < 3; b.tab++) {
        kura_status s = fx_scan(db, FX_TABLES[1 + b.tab], on_bank_item, &b, why, cap);
        if (s == KURA_E_INVALID)
            snprintf(why, cap, "%s", b.bad);
        if (s != KURA_OK)
            return false;
    }
    if (b.accounts != FX_NACC || b.ledgers != nbank || b.config != 1) {
        snprintf(why, cap, "the bank has %u accounts, %u ledgers, %u config items", b.accounts,
                 b.ledgers, b.config);
        return false;
    }
    if (b.bal + b.amt != (long long)FX_NACC * FX_START) {
        snprintf(why, cap, "the accounts hold %lld and %u escrows %lld: %lld, not %d (a "
                           "transaction is half there)",
                 b.bal, b.escrows, b.amt, b.bal + b.amt, FX_NACC * FX_START);
        return false;
    }
    if (b.ops != b.touches) {
        snprintf(why, cap, "the accounts count %lld changes, the ledgers %lld (a ledger step "
                           "without its transaction, or the reverse)",
                 b.ops, b.touches);
        return false;
    }
    fxb_state st = {.escrows = b.escrows};
    for (uint32_t w = 0; w < nbank; w++) {
        if (b.seq[w] < lo[w] || b.seq[w] > hi[w]) {
            snprintf(why, cap, "bank writer %u's ledger is at %llu, not in [%llu, %llu] (a lost "
                               "acknowledged transaction, or one never made)",
                     w, (unsigned long long)b.seq[w], (unsigned long long)lo[w],
                     (unsigned long long)hi[w]);
            return false;
        }
        st.seq[w] = b.seq[w];
        st.transactions += b.seq[w];
    }
    if (out)
        *out = st;
    return true;
}
