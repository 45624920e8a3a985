/*
 * streamwork.c - the change-stream crash tests' workload (streamwork.h): generating operation
 * j of writer t from the seed, turning it into a kura_execute request, the state each entry
 * leaves its item in, and the digests that compare such states with the engine's items.
 */
#include "crash/streamwork.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

const char *sw_type_name(sw_type type)
{
    static const char *const names[] = {[SW_PUT] = "PutItem",
                                        [SW_UPDATE] = "UpdateItem",
                                        [SW_DELETE] = "DeleteItem",
                                        [SW_BATCH] = "BatchWriteItem",
                                        [SW_TXN] = "TransactWriteItems"};
    return type >= SW_PUT && type <= SW_TXN ? names[type] : "?";
}

/* ---- tags and keys ------------------------------------------------------------------------ */

void sw_tag(uint32_t t, uint64_t j, uint32_t e, char out[SW_TAG_CAP])
{
    snprintf(out, SW_TAG_CAP, "w%u.%06llu.%u", t, (unsigned long long)j, e);
}

bool sw_tag_parse(const char *s, uint32_t *t_out, uint64_t *j_out, uint32_t *e_out)
{
    unsigned t, e;
    unsigned long long j;
    int used = 0;
    if (sscanf(s, "w%u.%llu.%u%n", &t, &j, &e, &used) != 3 || s[used] || t >= SW_MAX_WRITERS ||
        e >= SW_MAX_ENTRIES)
        return false;
    char again[SW_TAG_CAP];
    sw_tag(t, j, e, again);
    if (strcmp(again, s) != 0) return false;
    *t_out = t;
    *j_out = j;
    *e_out = e;
    return true;
}

void sw_key(uint32_t t, uint32_t k, char out[SW_KEY_CAP])
{
    snprintf(out, SW_KEY_CAP, "w%u.k%03u", t, k);
}

bool sw_key_parse(const char *s, uint32_t *t_out, uint32_t *k_out)
{
    unsigned t, k;
    int used = 0;
    if (sscanf(s, "w%u.k%u%n", &t, &k, &used) != 2 || s[used] || t >= SW_MAX_WRITERS ||
        k >= SW_MAX_KEYS)
        return false;
    char again[SW_KEY_CAP];
    sw_key(t, k, again);
    if (strcmp(again, s) != 0) return false;
    *t_out = t;
    *k_out = k;
    return true;
}

/* The pad a write with tag `tag` sets: len letters derived from the tag. */
static void pad_fill(const char *tag, uint32_t len, char *out)
{
    uint64_t rng = kura_hash64(tag, strlen(tag));
    for (uint32_t i = 0; i < len; i++)
        out[i] = (char)('a' + splitmix(&rng) % 26);
    out[len] = 0;
}

/* ---- operations --------------------------------------------------------------------------- */

static uint32_t pick_key(uint64_t *rng, const sw_config *c, const sw_op *op)
{
    for (;;) {
        uint32_t k = (uint32_t)(splitmix(rng) % c->keys_per_writer);
        bool used = false;
        for (uint32_t i = 0; i < op->n; i++)
            used |= op->e[i].key == k;
        if (!used) return k;
    }
}

static sw_action pick_update(uint64_t *rng)
{
    uint32_t r = (uint32_t)(splitmix(rng) % 4);
    return r < 2 ? SW_E_UPDATE_N : r == 2 ? SW_E_UPDATE_PAD : SW_E_UPDATE_NOPAD;
}

static void add_entry(uint64_t *rng, const sw_config *c, sw_op *op, sw_action a)
{
    sw_entry *e = &op->e[op->n];
    e->key = pick_key(rng, c, op);
    e->action = a;
    e->pad_len = 1 + (uint32_t)(splitmix(rng) % c->pad_max);
    op->n++;
}

void sw_gen(const sw_config *c, uint32_t t, uint64_t j, sw_op *op)
{
    uint64_t rng = c->seed ^ ((uint64_t)(t + 1) << 56);
    splitmix(&rng);
    rng ^= j * 0xd6e8feb86659fd93ull;
    splitmix(&rng);
    memset(op, 0, sizeof *op);
    op->t = t;
    op->j = j;
    uint32_t r = (uint32_t)(splitmix(&rng) % 100);
    if (r < 25) {
        op->type = SW_PUT;
        add_entry(&rng, c, op, SW_E_PUT);
    } else if (r < 45) {
        op->type = SW_UPDATE;
        add_entry(&rng, c, op, pick_update(&rng));
    } else if (r < 57) {
        op->type = SW_DELETE;
        add_entry(&rng, c, op, SW_E_DELETE);
    } else if (r < 75 || c->no_txn) {
        op->type = SW_BATCH;
        uint32_t n = 2 + (uint32_t)(splitmix(&rng) % 3);
        while (op->n < n)
            add_entry(&rng, c, op, splitmix(&rng) % 10 < 7 ? SW_E_PUT : SW_E_DELETE);
    } else {
        op->type = SW_TXN;
        uint32_t n = 2 + (uint32_t)(splitmix(&rng) % 2);
        while (op->n < n) {
            uint32_t a = (uint32_t)(splitmix(&rng) % 20);
            add_entry(&rng, c, op, a < 7 ? SW_E_PUT : a < 15 ? pick_update(&rng) : SW_E_DELETE);
        }
    }
}

/* ---- requests ------------------------------------------------------------------------------ */

typedef struct sbuf {
    char p[4 * (SW_MAX_PAD + 512)];
    size_t n;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p + b->n, sizeof b->p - b->n, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof b->p - b->n)
        abort(); /* the buffer is sized for SW_MAX_ENTRIES entries of SW_MAX_PAD */
    b->n += (size_t)w;
}

static const char *const k_update_expr[] = {
    [SW_E_UPDATE_N] = "SET v = :v ADD n :one",
    [SW_E_UPDATE_PAD] = "SET v = :v, filler = :p",
    [SW_E_UPDATE_NOPAD] = "SET v = :v REMOVE filler",
};

/* The JSON members of entry e (no braces): PutItem's TableName and Item, UpdateItem's Key,
 * UpdateExpression and values, DeleteItem's Key. */
static void entry_members(sbuf *b, const sw_op *op, uint32_t e, bool table)
{
    const sw_entry *x = &op->e[e];
    char key[SW_KEY_CAP], tag[SW_TAG_CAP];
    sw_key(op->t, x->key, key);
    sw_tag(op->t, op->j, e, tag);
    if (table) put(b, "\"TableName\":\"" SW_TABLE "\",");
    if (x->action == SW_E_PUT) {
        char pad[SW_MAX_PAD + 1];
        pad_fill(tag, x->pad_len, pad);
        put(b, "\"Item\":{\"pk\":{\"S\":\"%s\"},\"v\":{\"S\":\"%s\"},\"filler\":{\"S\":\"%s\"}}",
            key, tag, pad);
        return;
    }
    put(b, "\"Key\":{\"pk\":{\"S\":\"%s\"}}", key);
    if (x->action == SW_E_DELETE) return;
    put(b, ",\"UpdateExpression\":\"%s\",\"ExpressionAttributeValues\":{\":v\":{\"S\":\"%s\"}",
        k_update_expr[x->action], tag);
    if (x->action == SW_E_UPDATE_N) put(b, ",\":one\":{\"N\":\"1\"}");
    if (x->action == SW_E_UPDATE_PAD) {
        char pad[SW_MAX_PAD + 1];
        pad_fill(tag, x->pad_len, pad);
        put(b, ",\":p\":{\"S\":\"%s\"}", pad);
    }
    put(b, "}");
}

static const char *txn_action(sw_action a)
{
    return a == SW_E_PUT ? "Put" : a == SW_E_DELETE ? "Delete" : "Update";
}

kura_status sw_exec(const sw_config *c, kura_db *db, uint32_t t, uint64_t j, char *why, size_t cap)
{
    sw_op op;
    sw_gen(c, t, j, &op);
    sbuf *b = malloc(sizeof *b);
    if (!b) abort();
    b->n = 0;
    put(b, "{");
    if (op.type == SW_BATCH) {
        put(b, "\"RequestItems\":{\"" SW_TABLE "\":[");
        for (uint32_t e = 0; e < op.n; e++) {
            bool del = op.e[e].action == SW_E_DELETE;
            put(b, "%s{\"%s\":{", e ? "," : "", del ? "DeleteRequest" : "PutRequest");
            entry_members(b, &op, e, false);
            put(b, "}}");
        }
        put(b, "]}");
    } else if (op.type == SW_TXN) {
        put(b, "\"TransactItems\":[");
        for (uint32_t e = 0; e < op.n; e++) {
            put(b, "%s{\"%s\":{", e ? "," : "", txn_action(op.e[e].action));
            entry_members(b, &op, e, true);
            put(b, "}}");
        }
        put(b, "]");
    } else {
        entry_members(b, &op, 0, true);
    }
    put(b, "}");
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, sw_type_name(op.type), b->p, b->n, &out, &n);
    /* kura applies every request of a batch: anything unprocessed is a failure here */
    if (s == KURA_OK && op.type == SW_BATCH && (!out || !strstr(out, "\"UnprocessedItems\":{}")))
        s = KURA_E_INVALID;
    if (s != KURA_OK)
        snprintf(why, cap, "%s w%u op %llu: %s", sw_type_name(op.type), t, (unsigned long long)j,
                 out ? out : kura_last_error());
    kura_free(out);
    free(b);
    return s;
}

kura_status sw_create_table(kura_db *db, uint32_t partitions, char *arn, size_t cap)
{
    kura_attribute_definition defs[] = {{"pk", KURA_S}};
    kura_key_schema_element keys[] = {{"pk", false}};
    kura_create_table_req r = {
        .table_name = SW_TABLE,
        .attribute_definitions = defs,
        .attribute_definitions_count = 1,
        .key_schema = keys,
        .key_schema_count = 1,
        .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
        .partitions = partitions,
        .stream_specification = {true, true, KURA_STREAM_NEW_AND_OLD_IMAGES}};
    kura_table_description d;
    kura_status s = kura_create_table(db, &r, &d);
    if (s != KURA_OK) return s;
    snprintf(arn, cap, "%s", d.latest_stream_arn ? d.latest_stream_arn : "");
    kura_table_description_free(&d);
    return KURA_OK;
}

kura_status sw_get_item(kura_db *db, uint32_t t, uint32_t k, kura_value **item_out)
{
    char key[SW_KEY_CAP];
    sw_key(t, k, key);
    kura_value *kv = kura_value_map();
    kura_value_map_put(kv, "pk", 2, kura_value_s(key, strlen(key)));
    kura_get_item_req req = {.table_name = SW_TABLE, .key = kv, .consistent_read = true};
    kura_get_item_res res = {0};
    kura_status s = kura_get_item(db, &req, &res);
    kura_value_free(kv);
    if (s == KURA_OK) *item_out = res.item;
    return s;
}

/* ---- items ---------------------------------------------------------------------------------- */

void sw_apply(const sw_op *op, uint32_t e, sw_item *it)
{
    const sw_entry *x = &op->e[e];
    if (x->action == SW_E_DELETE) {
        memset(it, 0, sizeof *it);
        return;
    }
    if (x->action == SW_E_PUT || !it->exists)
        memset(it, 0, sizeof *it); /* a put replaces; an update of nothing starts from the key */
    it->exists = true;
    sw_tag(op->t, op->j, e, it->v);
    if (x->action == SW_E_UPDATE_N) {
        it->n = it->has_n ? it->n + 1 : 1;
        it->has_n = true;
    }
    if (x->action == SW_E_PUT || x->action == SW_E_UPDATE_PAD) {
        memcpy(it->pad_tag, it->v, sizeof it->pad_tag);
        it->pad_len = x->pad_len;
    }
    if (x->action == SW_E_UPDATE_NOPAD) {
        it->pad_tag[0] = 0;
        it->pad_len = 0;
    }
}

/* The digest's text of one attribute: name, type, value. */
static void digest_attr(sbuf *b, const char *name, size_t nlen, const kura_value *v)
{
    put(b, "%.*s=", (int)nlen, name);
    size_t len = 0;
    const char *p;
    char num[200];
    switch (kura_value_type(v)) {
    case KURA_S:
        p = kura_value_bytes(v, &len);
        put(b, "S:%.*s;", (int)len, p);
        break;
    case KURA_N:
        kura_value_num(v, num, sizeof num);
        put(b, "N:%s;", num);
        break;
    default: /* the workload writes no other type */
        put(b, "?%d;", (int)kura_value_type(v));
        break;
    }
}

uint64_t sw_value_digest(const kura_value *item)
{
    if (!item) return 0;
    sbuf *b = malloc(sizeof *b);
    if (!b) abort();
    b->n = 0;
    put(b, "%s", kura_value_type(item) == KURA_M ? "M{" : "not a map{");
    for (size_t i = 0; i < kura_value_count(item); i++) {
        const char *name;
        size_t nlen;
        const kura_value *v = kura_value_at(item, i, &name, &nlen);
        digest_attr(b, name, nlen, v);
    }
    uint64_t h = kura_hash64(b->p, b->n) | 1; /* never 0, the digest of no item */
    free(b);
    return h;
}

uint64_t sw_item_digest(uint32_t t, uint32_t k, const sw_item *it)
{
    if (!it->exists) return 0;
    char key[SW_KEY_CAP], num[24], pad[SW_MAX_PAD + 1];
    sw_key(t, k, key);
    kura_value *m = kura_value_map();
    kura_value_map_put(m, "pk", 2, kura_value_s(key, strlen(key)));
    kura_value_map_put(m, "v", 1, kura_value_s(it->v, strlen(it->v)));
    if (it->has_n) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)it->n);
        kura_value_map_put(m, "n", 1, kura_value_n(num, strlen(num)));
    }
    if (it->pad_len) {
        pad_fill(it->pad_tag, it->pad_len, pad);
        kura_value_map_put(m, "filler", 6, kura_value_s(pad, it->pad_len));
    }
    uint64_t h = sw_value_digest(m);
    kura_value_free(m);
    return h;
}
