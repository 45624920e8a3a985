/*
 * fxwork.c - the combined crash tests' tables and item workload (fxwork.h): CreateTable
 * requests, setup, GNew's UpdateTable, the index checks, and operation j of item writer t as
 * a kura_execute request. The item model is fxmodel.c, the bank fxbank.c.
 */
#include "crash/fxwork_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crash/index_check.h"
#include "util/thread.h"
#include "testutil.h"

const char *const FX_TABLES[4] = {FX_ITEMS, FX_A, FX_B, FX_L};
const char *const FX_GNEW_STATES[4] = {"absent", "CREATING", "ACTIVE", "DELETING"};

#define PAYG "\"BillingMode\":\"PAY_PER_REQUEST\""
#define AD(n, t) "{\"AttributeName\":\"" n "\",\"AttributeType\":\"" t "\"}"
#define KS(n, t) "{\"AttributeName\":\"" n "\",\"KeyType\":\"" t "\"}"
#define STREAM "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":" \
               "\"NEW_AND_OLD_IMAGES\"}"

static const char CREATE_ITEMS[] =
    "{\"TableName\":\"" FX_ITEMS "\"," PAYG "," STREAM ",\"AttributeDefinitions\":["
    AD("pk", "S") "," AD("sk", "S") "," AD("lsk", "N") "," AD("lsk2", "S") "," AD("gr", "N") ","
    AD("g1", "S") "," AD("m1", "S") "," AD("m2", "N") "," AD("m3", "B") "," AD("m4", "S") ","
    AD("r1", "N") "," AD("r2", "S") "," AD("r3", "B") "," AD("r4", "N") "],"
    "\"KeySchema\":[" KS("pk", "HASH") "," KS("sk", "RANGE") "],"
    "\"LocalSecondaryIndexes\":["
    "{\"IndexName\":\"LKeys\",\"KeySchema\":[" KS("pk", "HASH") "," KS("lsk", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}},"
    "{\"IndexName\":\"LIncl\",\"KeySchema\":[" KS("pk", "HASH") "," KS("lsk2", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"x\",\"v\"]}},"
    "{\"IndexName\":\"LAll\",\"KeySchema\":[" KS("pk", "HASH") "," KS("gr", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
    "\"GlobalSecondaryIndexes\":["
    "{\"IndexName\":\"GAll\",\"KeySchema\":[" KS("g1", "HASH") "," KS("gr", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}},"
    "{\"IndexName\":\"GIncl\",\"KeySchema\":[" KS("lsk2", "HASH") "],"
    "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"x\"]}},"
    "{\"IndexName\":\"GMulti\",\"KeySchema\":[" KS("m1", "HASH") "," KS("m2", "HASH") ","
    KS("m3", "HASH") "," KS("m4", "HASH") "," KS("r1", "RANGE") "," KS("r2", "RANGE") ","
    KS("r3", "RANGE") "," KS("r4", "RANGE") "],\"Projection\":{\"ProjectionType\":"
    "\"KEYS_ONLY\"}}]}";

static const char CREATE_A[] =
    "{\"TableName\":\"" FX_A "\"," PAYG ",\"AttributeDefinitions\":[" AD("pk", "S") ","
    AD("owner", "S") "," AD("bal", "N") "],"
    "\"KeySchema\":[" KS("pk", "HASH") "],\"GlobalSecondaryIndexes\":["
    "{\"IndexName\":\"ByOwner\",\"KeySchema\":[" KS("owner", "HASH") "," KS("bal", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}";

static const char CREATE_B[] =
    "{\"TableName\":\"" FX_B "\"," PAYG "," STREAM ",\"AttributeDefinitions\":[" AD("pk", "S") ","
    AD("sk", "S") "," AD("bal", "N") "," AD("esc_of", "S") "],"
    "\"KeySchema\":[" KS("pk", "HASH") "," KS("sk", "RANGE") "],\"LocalSecondaryIndexes\":["
    "{\"IndexName\":\"BByBal\",\"KeySchema\":[" KS("pk", "HASH") "," KS("bal", "RANGE") "],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}],\"GlobalSecondaryIndexes\":["
    "{\"IndexName\":\"BBal\",\"KeySchema\":[" KS("bal", "HASH") "],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}},"
    "{\"IndexName\":\"Escrows\",\"KeySchema\":[" KS("esc_of", "HASH") "],"
    "\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"amt\"]}}]}";

static const char CREATE_L[] =
    "{\"TableName\":\"" FX_L "\"," PAYG ",\"AttributeDefinitions\":[" AD("pk", "S") "],"
    "\"KeySchema\":[" KS("pk", "HASH") "]}";

static const char CREATE_GNEW[] =
    "{\"TableName\":\"" FX_ITEMS "\",\"AttributeDefinitions\":[" AD("x", "N") "," AD("lsk", "N")
    "],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":\"" FX_GNEW "\","
    "\"KeySchema\":[" KS("x", "HASH") "," KS("lsk", "RANGE") "],\"Projection\":{"
    "\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"v\"]}}}]}";

static const char DELETE_GNEW[] =
    "{\"TableName\":\"" FX_ITEMS "\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{"
    "\"IndexName\":\"" FX_GNEW "\"}}]}";

/* The indexes of each table (GNew: when there). */
static const char *const k_indexes[4][8] = {
    {"LKeys", "LIncl", "LAll", "GAll", "GIncl", "GMulti", FX_GNEW, NULL},
    {"ByOwner", NULL},
    {"BByBal", "BBal", "Escrows", NULL},
    {NULL},
};

uint64_t fx_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t fx_ttl_clock(void *arg)
{
    (void)arg;
    return FX_NOW;
}

kura_status fx_exec(kura_db *db, const char *op, const char *json, char *why, size_t cap)
{
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, op, json, strlen(json), &out, &n);
    if (s != KURA_OK)
        snprintf(why, cap, "%s: %s: %s", op, kura_status_str(s), out ? out : kura_last_error());
    kura_free(out);
    return s;
}

bool fx_canon(const kura_value *v, char *buf, size_t cap)
{
    char *j = NULL;
    size_t n = 0;
    if (!v || kura_value_to_json(v, true, &j, &n) != KURA_OK)
        return false;
    bool ok = n < cap;
    if (ok)
        memcpy(buf, j, n + 1);
    kura_free(j);
    return ok;
}

kura_status fx_scan(kura_db *db, const char *table, fx_item_fn fn, void *arg, char *why,
                    size_t cap)
{
    kura_value *start = NULL;
    kura_status s = KURA_OK;
    do {
        kura_scan_req req = {.table_name = table, .consistent_read = true,
                             .exclusive_start_key = start};
        kura_page page;
        memset(&page, 0, sizeof page);
        s = kura_scan(db, &req, &page);
        kura_value_free(start);
        start = NULL;
        if (s != KURA_OK) {
            snprintf(why, cap, "Scan %s: %s: %s", table, kura_status_str(s), kura_last_error());
            break;
        }
        for (size_t i = 0; i < kura_value_count(page.items) && s == KURA_OK; i++)
            if (!fn(arg, kura_value_at(page.items, i, NULL, NULL)))
                s = KURA_E_INVALID;
        if (page.last_evaluated_key)
            start = kura_value_clone(page.last_evaluated_key);
        kura_page_free(&page);
    } while (s == KURA_OK && start);
    kura_value_free(start);
    return s;
}

/* ---- items -------------------------------------------------------------------------------- */

enum { A_LSK, A_LSK2, A_GR, A_G1, A_M1, A_M2, A_M3, A_M4, A_R1, A_R2, A_R3, A_R4, A_X, A_EXP,
       A_PAD, A_N };
static const char *const k_attr[A_N] = {"lsk", "lsk2", "gr", "g1", "m1", "m2", "m3", "m4",
                                        "r1",  "r2",   "r3", "r4", "x",  "exp", "pad"};
static const char *const k_bin[2] = {"AAE=", "/w=="};

/* One version's optional attributes: has[i], and the DynamoDB JSON of each value. */
typedef struct fx_attrs {
    bool has[A_N];
    char val[A_N][FX_MAX_PAD + 32];
    char v[32];
} fx_attrs;

static uint64_t version_hash(const fx_config *c, uint32_t t, uint64_t j, uint32_t e)
{
    return fx_mix(fx_mix(fx_mix(c->seed, 0xf1 + t), j), e);
}

/* exp's kind: 0 none, 1 doomed (a Number before FX_NOW), 2 a String, 3 far in the future. */
static unsigned exp_kind(const fx_config *c, uint32_t t, uint64_t j, uint32_t e)
{
    uint64_t h = version_hash(c, t, j, e);
    unsigned sel = (unsigned)((h >> 52) % 8);
    unsigned k = sel < 2 ? 0 : sel == 2 ? 1 : sel == 3 ? 2 : 3;
    return t == FX_BULK_T && k == 1 ? 3 : k;
}

bool fx_item_doomed(const fx_config *c, uint32_t t, uint64_t j, uint32_t e)
{
    return exp_kind(c, t, j, e) == 1;
}

static void attrs_of(const fx_config *c, uint32_t t, uint64_t j, uint32_t e, fx_attrs *a)
{
    uint64_t h = version_hash(c, t, j, e), h2 = fx_mix(h, 0x9ad);
    memset(a->has, 0, sizeof a->has);
    if (t == FX_BULK_T)
        snprintf(a->v, sizeof a->v, "b.%llu", (unsigned long long)j);
    else
        snprintf(a->v, sizeof a->v, "w%u.%llu.%u", t, (unsigned long long)j, e);
#define SETF(i, ...) (a->has[i] = true, snprintf(a->val[i], sizeof a->val[i], __VA_ARGS__))
    if (h & 1)
        SETF(A_LSK, "{\"N\":\"%u\"}", (unsigned)((h >> 8) % 50));
    if (h & 2)
        SETF(A_LSK2, "{\"S\":\"s%u\"}", (unsigned)((h >> 14) % 20));
    if (h & 4)
        SETF(A_GR, "{\"N\":\"%u\"}", (unsigned)((h >> 20) % 40));
    if ((h & 0x18) == 0x18)
        SETF(A_G1, "{\"S\":\"g%u\"}", (unsigned)((h >> 26) % 8));
    if (h & 0x20) {
        SETF(A_M1, "{\"S\":\"m%u\"}", (unsigned)((h >> 29) % 3));
        SETF(A_M2, "{\"N\":\"%u\"}", (unsigned)((h >> 31) % 4));
        SETF(A_M3, "{\"B\":\"%s\"}", k_bin[(h >> 33) & 1]);
        SETF(A_M4, "{\"S\":\"q%u\"}", (unsigned)((h >> 34) % 3));
        SETF(A_R1, "{\"N\":\"%u\"}", (unsigned)((h >> 36) % 5));
        SETF(A_R2, "{\"S\":\"r%u\"}", (unsigned)((h >> 39) % 4));
        SETF(A_R3, "{\"B\":\"%s\"}", k_bin[(h >> 41) & 1]);
        SETF(A_R4, "{\"N\":\"%u\"}", (unsigned)((h >> 42) % 6));
        if (h & 0x40) /* one key attribute missing: no GMulti entry */
            a->has[A_M1 + (h >> 45) % 8] = false;
    }
    if (h & 0x80)
        SETF(A_X, "{\"N\":\"%u\"}", (unsigned)((h >> 48) % 100));
    switch (exp_kind(c, t, j, e)) {
    case 1:
        SETF(A_EXP, "{\"N\":\"%lld\"}", FX_NOW - 1000 - (long long)((h >> 55) % 500));
        break;
    case 2:
        SETF(A_EXP, "{\"S\":\"later\"}");
        break;
    case 3:
        SETF(A_EXP, "{\"N\":\"%lld\"}", FX_NOW + 1000000 + (long long)((h >> 55) % 500));
        break;
    default:
        break;
    }
#undef SETF
    uint32_t plen = c->pad_max ? (uint32_t)(h2 % (c->pad_max + 1)) : 0;
    if (plen) {
        a->has[A_PAD] = true;
        char *p = a->val[A_PAD];
        size_t n = (size_t)snprintf(p, 16, "{\"S\":\"");
        for (uint32_t i = 0; i < plen; i++)
            p[n++] = (char)('a' + ((h2 >> 8) + i * 7u + i / 26u) % 26u);
        memcpy(p + n, "\"}", 3);
    }
}

size_t fx_key_json(uint32_t t, uint32_t k, char *buf, size_t cap)
{
    if (t == FX_BULK_T)
        return (size_t)snprintf(buf, cap, "{\"pk\":{\"S\":\"b.p%u\"},\"sk\":{\"S\":\"b%04u\"}}",
                                k % 16, k);
    return (size_t)snprintf(buf, cap, "{\"pk\":{\"S\":\"w%u.p%u\"},\"sk\":{\"S\":\"k%03u\"}}", t,
                            k % 4, k);
}

static const char *str_attr(const kura_value *item, const char *name, size_t *len)
{
    const kura_value *v = kura_value_get(item, name, strlen(name));
    return v && kura_value_type(v) == KURA_S ? kura_value_bytes(v, len) : NULL;
}

bool fx_key_parse(const kura_value *item, uint32_t *t_out, uint32_t *k_out)
{
    size_t lp = 0, ls = 0;
    const char *pk = str_attr(item, "pk", &lp), *sk = str_attr(item, "sk", &ls);
    unsigned t, p, k;
    int n = 0;
    if (!pk || !sk)
        return false;
    if (sscanf(pk, "b.p%u%n", &p, &n) == 1 && (size_t)n == lp && sscanf(sk, "b%4u%n", &k, &n) == 1 &&
        (size_t)n == ls && ls == 5 && p == k % 16) {
        *t_out = FX_BULK_T;
        *k_out = k;
        return true;
    }
    if (sscanf(pk, "w%u.p%u%n", &t, &p, &n) != 2 || (size_t)n != lp || t >= FX_MAX_WRITERS)
        return false;
    if (sscanf(sk, "k%3u%n", &k, &n) != 1 || (size_t)n != ls || ls != 4 || p != k % 4)
        return false;
    *t_out = t;
    *k_out = k;
    return true;
}

bool fx_tag_parse(const kura_value *item, uint32_t *t_out, uint64_t *j_out, uint32_t *e_out)
{
    size_t len = 0;
    const char *v = str_attr(item, "v", &len);
    unsigned t, e;
    unsigned long long j;
    int n = 0;
    if (!v)
        return false;
    if (sscanf(v, "b.%llu%n", &j, &n) == 1 && (size_t)n == len) {
        *t_out = FX_BULK_T, *j_out = j, *e_out = 0;
        return true;
    }
    if (sscanf(v, "w%u.%llu.%u%n", &t, &j, &e, &n) != 3 || (size_t)n != len)
        return false;
    *t_out = t, *j_out = j, *e_out = e;
    return true;
}

/* ,"name":value for each attribute present, after pk, sk and v. */
static size_t attrs_json(const fx_attrs *a, uint32_t t, uint32_t k, char *buf, size_t cap)
{
    char key[128];
    fx_key_json(t, k, key, sizeof key);
    size_t n = (size_t)snprintf(buf, cap, "%.*s,\"v\":{\"S\":\"%s\"}", (int)strlen(key) - 1, key,
                                a->v);
    for (int i = 0; i < A_N && n < cap; i++)
        if (a->has[i])
            n += (size_t)snprintf(buf + n, cap - n, ",\"%s\":%s", k_attr[i], a->val[i]);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "}");
    return n;
}

size_t fx_item_json(const fx_config *c, uint32_t t, uint32_t k, uint64_t j, uint32_t e,
                    char *buf, size_t cap)
{
    fx_attrs *a = malloc(sizeof *a);
    if (!a)
        abort();
    attrs_of(c, t, j, e, a);
    size_t n = attrs_json(a, t, k, buf, cap);
    free(a);
    return n;
}

/* "UpdateExpression", names and values of an update writing the whole version. */
static size_t update_json(const fx_attrs *a, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "\"UpdateExpression\":\"SET #v = :v");
    for (int i = 0; i < A_N; i++)
        if (a->has[i])
            n += (size_t)snprintf(buf + n, cap - n, ", #a%d = :a%d", i, i);
    bool rm = false;
    for (int i = 0; i < A_N; i++)
        if (!a->has[i])
            n += (size_t)snprintf(buf + n, cap - n, "%s#a%d", rm ? ", " : " REMOVE ", i), rm = true;
    n += (size_t)snprintf(buf + n, cap - n, "\",\"ExpressionAttributeNames\":{\"#v\":\"v\"");
    for (int i = 0; i < A_N; i++)
        n += (size_t)snprintf(buf + n, cap - n, ",\"#a%d\":\"%s\"", i, k_attr[i]);
    n += (size_t)snprintf(buf + n, cap - n,
                          "},\"ExpressionAttributeValues\":{\":v\":{\"S\":\"%s\"}", a->v);
    for (int i = 0; i < A_N && n < cap; i++)
        if (a->has[i])
            n += (size_t)snprintf(buf + n, cap - n, ",\":a%d\":%s", i, a->val[i]);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "}");
    return n;
}

void fx_gen(const fx_config *c, uint32_t t, uint64_t j, fx_op *op)
{
    uint64_t r = fx_mix(fx_mix(c->seed ^ 0x0b5, t), j);
    memset(op, 0, sizeof *op);
    op->t = t;
    op->j = j;
    op->check_key = -1;
    unsigned p = (unsigned)(r % 100);
    r = fx_mix(r, 1);
    op->type = p < 30 ? FX_PUT : p < 48 ? FX_UPDATE : p < 58 ? FX_DELETE : p < 78 ? FX_BATCH
                                                                                  : FX_TXN;
    op->n = op->type == FX_BATCH ? 2 + (uint32_t)(r % 3)
            : op->type == FX_TXN ? 2 + (uint32_t)(r % 2)
                                 : 1;
    uint32_t used[FX_MAX_ENTRIES + 1], nused = 0;
    for (uint32_t i = 0; i <= op->n; i++) {
        uint32_t k;
        bool dup;
        do { /* distinct items */
            r = fx_mix(r, 2 + i);
            k = (uint32_t)(r % c->keys_per_writer);
            dup = false;
            for (uint32_t x = 0; x < nused; x++)
                dup |= used[x] == k;
        } while (dup);
        used[nused++] = k;
        if (i == op->n) { /* the ConditionCheck's item, half of the time */
            if (op->type == FX_TXN && (r >> 20) % 2)
                op->check_key = (int32_t)k;
            break;
        }
        op->e[i].key = k;
        unsigned a = (unsigned)((r >> 32) % 10);
        switch (op->type) {
        case FX_PUT: op->e[i].action = FX_E_PUT; break;
        case FX_UPDATE: op->e[i].action = FX_E_UPDATE; break;
        case FX_DELETE: op->e[i].action = FX_E_DELETE; break;
        case FX_BATCH: op->e[i].action = a < 7 ? FX_E_PUT : FX_E_DELETE; break;
        default: op->e[i].action = a < 4 ? FX_E_PUT : a < 8 ? FX_E_UPDATE : FX_E_DELETE; break;
        }
    }
}

bool fx_item_is_txn(const fx_config *c, uint32_t t, uint64_t j)
{
    fx_op op;
    fx_gen(c, t, j, &op);
    return op.type == FX_TXN;
}

static size_t entry_json(const fx_config *c, const fx_op *op, uint32_t i, fx_attrs *a, char *buf,
                         size_t cap)
{
    char key[128];
    fx_key_json(op->t, op->e[i].key, key, sizeof key);
    if (op->e[i].action == FX_E_DELETE)
        return (size_t)snprintf(buf, cap, "\"Key\":%s", key);
    attrs_of(c, op->t, op->j, i, a);
    if (op->e[i].action == FX_E_PUT) {
        size_t n = (size_t)snprintf(buf, cap, "\"Item\":");
        return n + attrs_json(a, op->t, op->e[i].key, buf + n, cap - n);
    }
    size_t n = (size_t)snprintf(buf, cap, "\"Key\":%s,", key);
    return n + update_json(a, buf + n, cap - n);
}

kura_status fx_item_exec(const fx_config *c, kura_db *db, uint32_t t, uint64_t j, char *why,
                         size_t cap)
{
    fx_op op;
    fx_gen(c, t, j, &op);
    char *buf = malloc(FX_JSON_CAP), *ent = malloc(FX_JSON_CAP / 4);
    fx_attrs *a = malloc(sizeof *a);
    if (!buf || !ent || !a)
        abort();
    const char *name = NULL;
    size_t n = 0;
    const size_t ecap = FX_JSON_CAP / 4;
    switch (op.type) {
    case FX_PUT:
    case FX_UPDATE:
    case FX_DELETE:
        name = op.type == FX_PUT ? "PutItem" : op.type == FX_UPDATE ? "UpdateItem" : "DeleteItem";
        entry_json(c, &op, 0, a, ent, ecap);
        n = (size_t)snprintf(buf, FX_JSON_CAP, "{\"TableName\":\"" FX_ITEMS "\",%s}", ent);
        break;
    case FX_BATCH:
        name = "BatchWriteItem";
        n = (size_t)snprintf(buf, FX_JSON_CAP, "{\"RequestItems\":{\"" FX_ITEMS "\":[");
        for (uint32_t i = 0; i < op.n; i++) {
            entry_json(c, &op, i, a, ent, ecap);
            bool del = op.e[i].action == FX_E_DELETE;
            n += (size_t)snprintf(buf + n, FX_JSON_CAP - n, "%s{\"%s\":{%s}}", i ? "," : "",
                                  del ? "DeleteRequest" : "PutRequest", ent);
        }
        n += (size_t)snprintf(buf + n, FX_JSON_CAP - n, "]}}");
        break;
    case FX_TXN:
        name = "TransactWriteItems";
        n = (size_t)snprintf(buf, FX_JSON_CAP, "{\"TransactItems\":[");
        for (uint32_t i = 0; i < op.n; i++) {
            entry_json(c, &op, i, a, ent, ecap);
            fx_action x = op.e[i].action;
            n += (size_t)snprintf(buf + n, FX_JSON_CAP - n,
                                  "%s{\"%s\":{\"TableName\":\"" FX_ITEMS "\",%s}}", i ? "," : "",
                                  x == FX_E_PUT ? "Put" : x == FX_E_UPDATE ? "Update" : "Delete",
                                  ent);
        }
        if (op.check_key >= 0) {
            fx_key_json(t, (uint32_t)op.check_key, ent, ecap);
            n += (size_t)snprintf(buf + n, FX_JSON_CAP - n,
                                  ",{\"ConditionCheck\":{\"TableName\":\"" FX_ITEMS "\",\"Key\":%s,"
                                  "\"ConditionExpression\":\"attribute_not_exists(#z)\","
                                  "\"ExpressionAttributeNames\":{\"#z\":\"zz\"}}}",
                                  ent);
        }
        n += (size_t)snprintf(buf + n, FX_JSON_CAP - n, "]}");
        break;
    }
    kura_status s = n < FX_JSON_CAP ? fx_exec(db, name, buf, why, cap) : KURA_E_INVALID;
    if (n >= FX_JSON_CAP)
        snprintf(why, cap, "request of writer %u op %llu too long", t, (unsigned long long)j);
    free(buf);
    free(ent);
    free(a);
    return s;
}

/* ---- setup, GNew, index checks ----------------------------------------------------------- */

kura_status fx_setup(kura_db *db, uint64_t seed, uint32_t bulk, uint32_t nbank, uint32_t pad_max,
                     char *why, size_t cap)
{
    const char *creates[4] = {CREATE_ITEMS, CREATE_A, CREATE_B, CREATE_L};
    kura_status s = KURA_OK;
    for (int i = 0; i < 4 && s == KURA_OK; i++)
        s = fx_exec(db, "CreateTable", creates[i], why, cap);
    if (s == KURA_OK)
        s = fx_exec(db, "UpdateTimeToLive",
                    "{\"TableName\":\"" FX_ITEMS "\",\"TimeToLiveSpecification\":{\"Enabled\":"
                    "true,\"AttributeName\":\"exp\"}}",
                    why, cap);
    fx_config c = {.seed = seed, .pad_max = pad_max};
    char *buf = malloc(FX_JSON_CAP * 2), item[FX_MAX_PAD + 1024];
    if (!buf)
        abort();
    for (uint32_t i = 0; i < bulk && s == KURA_OK; i += 25) {
        size_t n = (size_t)snprintf(buf, FX_JSON_CAP * 2, "{\"RequestItems\":{\"" FX_ITEMS "\":[");
        for (uint32_t k = i; k < i + 25 && k < bulk; k++) {
            fx_item_json(&c, FX_BULK_T, k, k, 0, item, sizeof item);
            n += (size_t)snprintf(buf + n, FX_JSON_CAP * 2 - n, "%s{\"PutRequest\":{\"Item\":%s}}",
                                  k > i ? "," : "", item);
        }
        snprintf(buf + n, FX_JSON_CAP * 2 - n, "]}}");
        s = fx_exec(db, "BatchWriteItem", buf, why, cap);
    }
    for (int i = 0; i < FX_NACC && s == KURA_OK; i++) {
        if (i % 2 == 0)
            snprintf(buf, FX_JSON_CAP, "{\"TableName\":\"" FX_A "\",\"Item\":{\"pk\":{\"S\":"
                                       "\"acct%d\"},\"owner\":{\"S\":\"o%d\"},\"bal\":{\"N\":"
                                       "\"%d\"},\"ops\":{\"N\":\"0\"}}}",
                     i, i % 5, FX_START);
        else
            snprintf(buf, FX_JSON_CAP, "{\"TableName\":\"" FX_B "\",\"Item\":{\"pk\":{\"S\":"
                                       "\"c%d\"},\"sk\":{\"S\":\"acct%d\"},\"bal\":{\"N\":\"%d\"},"
                                       "\"ops\":{\"N\":\"0\"}}}",
                     (i / 2) % 4, i, FX_START);
        s = fx_exec(db, "PutItem", buf, why, cap);
    }
    for (uint32_t w = 0; w < nbank && s == KURA_OK; w++) {
        snprintf(buf, FX_JSON_CAP, "{\"TableName\":\"" FX_L "\",\"Item\":{\"pk\":{\"S\":\"w%u\"},"
                                   "\"grp\":{\"S\":\"L\"},\"seq\":{\"N\":\"0\"},\"touches\":"
                                   "{\"N\":\"0\"}}}",
                 w);
        s = fx_exec(db, "PutItem", buf, why, cap);
    }
    if (s == KURA_OK)
        s = fx_exec(db, "PutItem",
                    "{\"TableName\":\"" FX_L "\",\"Item\":{\"pk\":{\"S\":\"config\"},\"open\":"
                    "{\"BOOL\":true}}}",
                    why, cap);
    free(buf);
    return s;
}

fx_gnew_state fx_gnew(kura_db *db)
{
    kura_table_description d;
    memset(&d, 0, sizeof d);
    if (kura_describe_table(db, FX_ITEMS, &d) != KURA_OK)
        return FX_GNEW_ABSENT;
    fx_gnew_state st = FX_GNEW_ABSENT;
    for (size_t i = 0; i < d.global_secondary_indexes_count; i++) {
        const kura_index_description *x = &d.global_secondary_indexes[i];
        if (strcmp(x->index_name, FX_GNEW))
            continue;
        st = !strcmp(x->index_status, "ACTIVE")     ? FX_GNEW_ACTIVE
             : !strcmp(x->index_status, "CREATING") ? FX_GNEW_CREATING
                                                    : FX_GNEW_DELETING;
    }
    kura_table_description_free(&d);
    return st;
}

kura_status fx_gnew_ddl(kura_db *db, bool create, char *why, size_t cap)
{
    return fx_exec(db, "UpdateTable", create ? CREATE_GNEW : DELETE_GNEW, why, cap);
}

bool fx_gnew_settle(kura_db *db, uint64_t wait_ms, fx_gnew_state *st_out, char *why, size_t cap)
{
    fx_gnew_state st = fx_gnew(db);
    for (uint64_t end = know_ns() + wait_ms * 1000000ull;
         (st == FX_GNEW_CREATING || st == FX_GNEW_DELETING) && know_ns() < end; st = fx_gnew(db)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (st_out)
        *st_out = st;
    if (st == FX_GNEW_CREATING || st == FX_GNEW_DELETING) {
        snprintf(why, cap, "index %s still %s after %llu ms", FX_GNEW, FX_GNEW_STATES[st],
                 (unsigned long long)wait_ms);
        return false;
    }
    return true;
}

bool fx_check_indexes(kura_db *db, uint64_t wait_ms, char *why, size_t cap)
{
    for (int t = 0; t < 4; t++) {
        kura_status s = index_check_table(db, FX_TABLES[t], wait_ms);
        if (s != KURA_OK) {
            snprintf(why, cap, "index check of %s: %s: %s", FX_TABLES[t], kura_status_str(s),
                     kura_last_error());
            return false;
        }
        for (int i = 0; k_indexes[t][i]; i++) {
            kura_index_stats is;
            if (kura_index_stats_get(db, FX_TABLES[t], k_indexes[t][i], &is) == KURA_OK &&
                is.error != KURA_OK) {
                snprintf(why, cap, "index %s.%s reports %s", FX_TABLES[t], k_indexes[t][i],
                         kura_status_str(is.error));
                return false;
            }
        }
    }
    return true;
}

uint64_t fx_checkpoints(kura_db *db)
{
    uint64_t n = 0;
    for (int t = 0; t < 4; t++)
        for (int i = 0; k_indexes[t][i]; i++) {
            kura_index_stats is;
            if (kura_index_stats_get(db, FX_TABLES[t], k_indexes[t][i], &is) == KURA_OK)
                n += is.checkpoints;
        }
    return n;
}
