/*
 * ixwork.c - the item workload of the secondary-index tests (ixwork.h): generating operation
 * j of writer t from the seed, simulating it on the model, turning it into a kura_execute
 * request, and the model's counters. The checker is ixwork_check.c.
 */
#include "crash/ixwork_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char IXW_CREATE[] =
    "{\"TableName\":\"" IXW_TABLE "\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"lsk\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"gpk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"gsk\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"a\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"b\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"c\",\"AttributeType\":\"B\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByLsk\",\"KeySchema\":["
    "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"lsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"x\"]}}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByG\",\"KeySchema\":["
    "{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"gsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}},"
    "{\"IndexName\":\"Multi\",\"KeySchema\":[{\"AttributeName\":\"a\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"b\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"c\",\"KeyType\":"
    "\"RANGE\"},{\"AttributeName\":\"gsk\",\"KeyType\":\"RANGE\"}],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}";

const char *const IXW_INDEXES[3] = {"ByLsk", "ByG", "Multi"};
const char *const IXW_GSIS[2] = {"ByG", "Multi"};

static const char *const k_updates[IXW_NUPDATES] = {
    "SET gpk = :g, lsk = :n, v = :v",
    "REMOVE gpk, c SET v = :v",
    "SET x = :x, v = :v",
    "SET gsk = :h, v = :v ADD b :one",
    "REMOVE lsk, a SET c = :c, v = :v",
    "SET a = :a, b = :n, c = :c, gsk = :h, v = :v",
};

static const char *const k_binary[2] = {"AAE=", "/w=="};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- the model's life -------------------------------------------------------------------- */

ixw *ixw_new(const ixw_config *c)
{
    if (c->nwriters < 1 || c->nwriters > IXW_MAX_WRITERS || c->keys_per_writer < 1 ||
        c->keys_per_writer > IXW_MAX_KEYS || c->pad_max > IXW_MAX_PAD)
        return NULL;
    ixw *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *c;
    w->cells = calloc((size_t)c->nwriters * c->keys_per_writer, sizeof *w->cells);
    if (!w->cells) {
        free(w);
        return NULL;
    }
    for (uint32_t t = 0; t < c->nwriters; t++)
        w->next[t] = 1;
    return w;
}

void ixw_free(ixw *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < (size_t)w->cfg.nwriters * w->cfg.keys_per_writer; i++)
        free(w->cells[i].vers);
    free(w->cells);
    free(w);
}

uint64_t ixw_next(const ixw *w, uint32_t t)
{
    return w->next[t];
}

static void push_version(ixw_cell *c, uint64_t opno, const ixw_item *it)
{
    if (c->nvers == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        ixw_ver *v = realloc(c->vers, cap * sizeof *v);
        if (!v)
            abort();
        c->vers = v;
        c->cap = cap;
    }
    c->vers[c->nvers++] = (ixw_ver){opno, *it};
}

void ixw_attempt(ixw *w, uint32_t t)
{
    ixw_op op;
    ixw_gen(w, t, w->next[t], &op);
    for (uint32_t i = 0; i < op.n; i++) {
        ixw_cell *c = ixw_cell_of(w, t, op.e[i].key);
        ixw_item it = *ixw_cur(c);
        ixw_apply(&op, i, &it);
        push_version(c, op.j, &it);
    }
    w->next[t]++;
}

/* Versions of writer t's cells up to op `upto` become the base. */
static void collapse(ixw *w, uint32_t t, uint64_t upto)
{
    for (uint32_t k = 0; k < w->cfg.keys_per_writer; k++) {
        ixw_cell *c = ixw_cell_of(w, t, k);
        size_t keep = 0;
        for (size_t i = 0; i < c->nvers; i++) {
            if (c->vers[i].opno <= upto)
                c->base = c->vers[i].item;
            else
                c->vers[keep++] = c->vers[i];
        }
        c->nvers = keep;
    }
}

void ixw_ack(ixw *w, uint32_t t)
{
    w->acked[t] = w->next[t] - 1;
    if (w->cfg.durable_acks)
        collapse(w, t, w->acked[t]);
}

void ixw_durable(ixw *w)
{
    for (uint32_t t = 0; t < w->cfg.nwriters; t++)
        collapse(w, t, w->acked[t]);
}

/* ---- operations -------------------------------------------------------------------------- */

static void gen_item(uint64_t *rng, uint64_t v, uint32_t pad_max, ixw_item *it)
{
    uint32_t r = (uint32_t)splitmix(rng);
    *it = (ixw_item){.exists = true, .v = v, .pad_seed = v};
    it->has |= r % 4 ? IXA_LSK : 0;
    it->has |= (r >> 2) % 4 ? IXA_GPK : 0;
    it->has |= (r >> 4) % 3 ? IXA_GSK : 0;
    it->has |= (r >> 6) % 3 ? IXA_A : 0;
    it->has |= (r >> 8) % 3 ? IXA_B : 0;
    it->has |= (r >> 10) % 2 ? IXA_C : 0;
    it->has |= (r >> 11) % 2 ? IXA_X : 0;
    it->lsk = (int32_t)(splitmix(rng) % 50);
    it->gpk = (int32_t)(splitmix(rng) % 9);
    it->gsk = (int32_t)(splitmix(rng) % 30);
    it->a = (int32_t)(splitmix(rng) % 3);
    it->b = (int32_t)(splitmix(rng) % 3);
    it->c = (int32_t)(splitmix(rng) % 2);
    it->x = (int32_t)(splitmix(rng) % 99);
    it->pad_len = pad_max ? (uint32_t)(splitmix(rng) % (pad_max + 1)) : 0;
}

/* "v" of entry e of op j of writer t */
static uint64_t op_id(uint32_t t, uint64_t j, uint32_t e)
{
    return ((uint64_t)t << 44) | (j << 3) | e;
}

void ixw_gen(const ixw *w, uint32_t t, uint64_t j, ixw_op *op)
{
    uint64_t rng = w->cfg.seed ^ ((uint64_t)(t + 1) << 56);
    splitmix(&rng);
    rng ^= j * 0xd6e8feb86659fd93ull;
    splitmix(&rng);
    uint32_t nk = w->cfg.keys_per_writer, r = (uint32_t)(splitmix(&rng) % 100);
    memset(op, 0, sizeof *op);
    op->t = t;
    op->j = j;
    op->n = 1;
    op->e[0].key = (uint32_t)(splitmix(&rng) % nk);
    if (r < 35) {
        op->type = IXW_PUT;
        gen_item(&rng, op_id(t, j, 0), w->cfg.pad_max, &op->e[0].item);
    } else if (r < 67) {
        op->type = IXW_UPDATE;
        op->upd = (uint32_t)(splitmix(&rng) % IXW_NUPDATES);
        op->g = (int32_t)(splitmix(&rng) % 9);
        op->num = (int32_t)(splitmix(&rng) % 50);
        op->h = (int32_t)(splitmix(&rng) % 30);
        op->x = (int32_t)(splitmix(&rng) % 99);
        op->a = (int32_t)(splitmix(&rng) % 3);
        op->c = (int32_t)(splitmix(&rng) % 2);
    } else if (r < 80 || nk < 2) {
        op->type = IXW_DELETE;
        op->e[0].del = true;
    } else {
        op->type = IXW_BATCH;
        uint32_t n = 2 + (uint32_t)(splitmix(&rng) % (IXW_MAX_BATCH - 1));
        op->n = n < nk ? n : nk;
        for (uint32_t i = 1; i < op->n; i++) { /* distinct keys: consecutive ones */
            op->e[i].key = (op->e[0].key + i) % nk;
        }
        for (uint32_t i = 0; i < op->n; i++) {
            op->e[i].del = splitmix(&rng) % 3 == 0;
            if (!op->e[i].del)
                gen_item(&rng, op_id(t, j, i), w->cfg.pad_max, &op->e[i].item);
        }
    }
}

void ixw_apply(const ixw_op *op, uint32_t i, ixw_item *it)
{
    if (op->type != IXW_UPDATE) {
        if (op->e[i].del)
            *it = (ixw_item){0};
        else
            *it = op->e[i].item;
        return;
    }
    if (!it->exists) /* UpdateItem creates the item with its key */
        *it = (ixw_item){.exists = true};
    it->v = op_id(op->t, op->j, 0);
    switch (op->upd) {
    case 0:
        it->has |= IXA_GPK | IXA_LSK;
        it->gpk = op->g;
        it->lsk = op->num;
        break;
    case 1:
        it->has &= (uint8_t) ~(IXA_GPK | IXA_C);
        break;
    case 2:
        it->has |= IXA_X;
        it->x = op->x;
        break;
    case 3:
        it->has |= IXA_GSK;
        it->gsk = op->h;
        it->b = it->has & IXA_B ? it->b + 1 : 1;
        it->has |= IXA_B;
        break;
    case 4:
        it->has &= (uint8_t) ~(IXA_LSK | IXA_A);
        it->has |= IXA_C;
        it->c = op->c;
        break;
    default:
        it->has |= IXA_A | IXA_B | IXA_C | IXA_GSK;
        it->a = op->a;
        it->b = op->num;
        it->c = op->c;
        it->gsk = op->h;
        break;
    }
}

/* ---- JSON -------------------------------------------------------------------------------- */

typedef struct jbuf {
    char *p;
    size_t n, cap;
} jbuf;

static void jadd(jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jadd(jbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + (b->n < b->cap ? b->n : b->cap), b->n < b->cap ? b->cap - b->n : 0,
                      fmt, ap);
    va_end(ap);
    b->n += k > 0 ? (size_t)k : 0;
}

static void key_json(jbuf *b, uint32_t t, uint32_t k)
{
    jadd(b, "\"pk\":{\"S\":\"w%u.p%u\"},\"sk\":{\"S\":\"k%03u\"}", t, k % 5, k);
}

size_t ixw_item_json(uint32_t t, uint32_t k, const ixw_item *it, char *buf, size_t cap)
{
    jbuf b = {buf, 0, cap};
    jadd(&b, "{");
    key_json(&b, t, k);
    jadd(&b, ",\"v\":{\"N\":\"%llu\"}", (unsigned long long)it->v);
    if (it->has & IXA_LSK)
        jadd(&b, ",\"lsk\":{\"N\":\"%d\"}", it->lsk);
    if (it->has & IXA_GPK)
        jadd(&b, ",\"gpk\":{\"S\":\"g%d\"}", it->gpk);
    if (it->has & IXA_GSK)
        jadd(&b, ",\"gsk\":{\"N\":\"%d.5\"}", it->gsk);
    if (it->has & IXA_A)
        jadd(&b, ",\"a\":{\"S\":\"a%d\"}", it->a);
    if (it->has & IXA_B)
        jadd(&b, ",\"b\":{\"N\":\"%d\"}", it->b);
    if (it->has & IXA_C)
        jadd(&b, ",\"c\":{\"B\":\"%s\"}", k_binary[it->c & 1]);
    if (it->has & IXA_X)
        jadd(&b, ",\"x\":{\"N\":\"%d\"}", it->x);
    if (it->pad_len) {
        jadd(&b, ",\"pad\":{\"S\":\"");
        uint64_t s = it->pad_seed, r = 0;
        for (uint32_t i = 0; i < it->pad_len; i++) {
            r = i % 8 ? r >> 8 : splitmix(&s);
            if (b.n + 1 < b.cap)
                b.p[b.n] = (char)('a' + (int)((r & 0xff) % 26));
            b.n++;
        }
        jadd(&b, "\"}");
    }
    jadd(&b, "}");
    return b.n;
}

kura_value *ixw_key_value(uint32_t t, uint32_t k)
{
    char pk[32], sk[16];
    int np = snprintf(pk, sizeof pk, "w%u.p%u", t, k % 5);
    int ns = snprintf(sk, sizeof sk, "k%03u", k);
    kura_value *m = kura_value_map();
    if (!m || kura_value_map_put(m, "pk", 2, kura_value_s(pk, (size_t)np)) != KURA_OK ||
        kura_value_map_put(m, "sk", 2, kura_value_s(sk, (size_t)ns)) != KURA_OK)
        abort();
    return m;
}

/* The request of op (its operation name in *name_out) into b. */
static void op_request(const ixw_op *op, jbuf *b, const char **name_out)
{
    char *item = malloc(IXW_MAX_PAD + 1024);
    if (!item)
        abort();
    switch (op->type) {
    case IXW_PUT:
        *name_out = "PutItem";
        ixw_item_json(op->t, op->e[0].key, &op->e[0].item, item, IXW_MAX_PAD + 1024);
        jadd(b, "{\"TableName\":\"" IXW_TABLE "\",\"Item\":%s}", item);
        break;
    case IXW_DELETE:
        *name_out = "DeleteItem";
        jadd(b, "{\"TableName\":\"" IXW_TABLE "\",\"Key\":{");
        key_json(b, op->t, op->e[0].key);
        jadd(b, "}}");
        break;
    case IXW_UPDATE: {
        *name_out = "UpdateItem";
        const char *ex = k_updates[op->upd];
        jadd(b, "{\"TableName\":\"" IXW_TABLE "\",\"Key\":{");
        key_json(b, op->t, op->e[0].key);
        jadd(b, "},\"UpdateExpression\":\"%s\",\"ExpressionAttributeValues\":{\":v\":{\"N\":"
                "\"%llu\"}",
             ex, (unsigned long long)op_id(op->t, op->j, 0));
        if (strstr(ex, ":g"))
            jadd(b, ",\":g\":{\"S\":\"g%d\"}", op->g);
        if (strstr(ex, ":n"))
            jadd(b, ",\":n\":{\"N\":\"%d\"}", op->num);
        if (strstr(ex, ":h"))
            jadd(b, ",\":h\":{\"N\":\"%d.5\"}", op->h);
        if (strstr(ex, ":x"))
            jadd(b, ",\":x\":{\"N\":\"%d\"}", op->x);
        if (strstr(ex, ":a"))
            jadd(b, ",\":a\":{\"S\":\"a%d\"}", op->a);
        if (strstr(ex, ":c"))
            jadd(b, ",\":c\":{\"B\":\"%s\"}", k_binary[op->c & 1]);
        if (strstr(ex, ":one"))
            jadd(b, ",\":one\":{\"N\":\"1\"}");
        jadd(b, "}}");
        break;
    }
    case IXW_BATCH:
        *name_out = "BatchWriteItem";
        jadd(b, "{\"RequestItems\":{\"" IXW_TABLE "\":[");
        for (uint32_t i = 0; i < op->n; i++) {
            if (op->e[i].del) {
                jadd(b, "%s{\"DeleteRequest\":{\"Key\":{", i ? "," : "");
                key_json(b, op->t, op->e[i].key);
                jadd(b, "}}}");
            } else {
                ixw_item_json(op->t, op->e[i].key, &op->e[i].item, item, IXW_MAX_PAD + 1024);
                jadd(b, "%s{\"PutRequest\":{\"Item\":%s}}", i ? "," : "", item);
            }
        }
        jadd(b, "]}}");
        break;
    }
    free(item);
}

static kura_status execute(kura_db *db, const char *name, const char *body, size_t len,
                           char *why, size_t cap)
{
    char *out = NULL;
    size_t out_len = 0;
    kura_status s = kura_execute(db, name, body, len, &out, &out_len);
    if (s != KURA_OK && why)
        snprintf(why, cap, "%s: %s: %s", name, kura_status_str(s), out ? out : "(no body)");
    if (s == KURA_OK && !strcmp(name, "BatchWriteItem") &&
        (!out || !strstr(out, "\"UnprocessedItems\":{}"))) {
        if (why)
            snprintf(why, cap, "BatchWriteItem left items unprocessed: %s", out ? out : "");
        s = KURA_E_INVALID;
    }
    kura_free(out);
    return s;
}

kura_status ixw_exec(const ixw *w, kura_db *db, uint32_t t, uint64_t j, char *why, size_t cap)
{
    ixw_op op;
    ixw_gen(w, t, j, &op);
    size_t bcap = IXW_MAX_BATCH * (IXW_MAX_PAD + 1024) + 1024;
    jbuf b = {malloc(bcap), 0, bcap};
    if (!b.p)
        abort();
    const char *name = NULL;
    op_request(&op, &b, &name);
    if (b.n >= bcap)
        abort(); /* the buffer is sized for the largest request */
    kura_status s = execute(db, name, b.p, b.n, why, cap);
    free(b.p);
    return s;
}

kura_status ixw_run(ixw *w, kura_db *db, uint32_t t, char *why, size_t cap)
{
    uint64_t j = w->next[t];
    ixw_attempt(w, t);
    kura_status s = ixw_exec(w, db, t, j, why, cap);
    if (s == KURA_OK)
        ixw_ack(w, t);
    return s;
}

kura_status ixw_create_table(kura_db *db, char *why, size_t cap)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, "DescribeTable", "{\"TableName\":\"" IXW_TABLE "\"}",
                                 sizeof "{\"TableName\":\"" IXW_TABLE "\"}" - 1, &out, &len);
    kura_free(out);
    if (s == KURA_OK)
        return KURA_OK;
    return execute(db, "CreateTable", IXW_CREATE, sizeof IXW_CREATE - 1, why, cap);
}
