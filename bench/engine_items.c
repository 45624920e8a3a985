/*
 * engine_items.c - the item-level pseudo-engines of kura-bench (bench/items.h): kura-raw,
 * kura-capi and kura-json, over one table "bench" (S partition key "pk", S sort key "sk");
 * kura-partiql and kura-json-partiql, which share its database and items (items_int.h), are
 * in engine_partiql.c.
 *
 * All three open kura with the settings of the kura engine (engine_kura.c): KURA_RELAXED for
 * the writes, --memtable-mb, --cache-mb, --partitions. kura-raw builds every item's storage
 * key and encoded bytes before the clock starts (num x ~450 bytes of memory, which shows in
 * its peak RSS) so that its loop is nothing but kura_put/kura_get/kura_iter; its query reads
 * the 20 entries with a public kura_iter (which merges all partitions), its update is a get
 * and a put of the same bytes. All three format their items' fields (strings, bytes) before
 * the clock starts, so their loops time building the request (values or
 * JSON) and the call, not snprintf.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/index/index.h"
#include "bench/items.h"
#include "bench/items_int.h"
#include "bench/txn/txn.h"
#include "engine/model/value.h"
#include "util/status.h"



kura_status bench_idb_fail(kura_status s, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kura_last_error());
    return kura_err(s, "%s: %s: %s", what, kura_status_str(s), msg);
}

/* Opens the database and creates the table if it is new. */
/* The capacity accounting's setting of the database kura-capi opens (bench_fields_open_as). */
static bench_capacity idb_capacity = BENCH_CAPACITY_ON;

static kura_status idb_open(const char *dir, const bench_engine_opts *o, const bench_config *cfg,
                            bench_idb **out)
{
    bench_idb *d = calloc(1, sizeof *d);
    if (!d)
        return kura_err(KURA_E_NOMEM, "item engine");
    kura_options ko;
    kura_options_init(&ko);
    ko.durability = o->sync_writes ? KURA_SYNC : KURA_RELAXED;
    ko.memtable_budget_bytes = (size_t)o->memtable_bytes;
    ko.block_cache_bytes = (size_t)o->cache_bytes;
    ko.default_partitions = o->partitions;
    ko.capacity_accounting_off = idb_capacity == BENCH_CAPACITY_OFF;
    ko.throttle = idb_capacity == BENCH_CAPACITY_THROTTLE;
    kura_status s = kura_open(dir, &ko, &d->db);
    if (s != KURA_OK) {
        free(d);
        return bench_idb_fail(s, "open");
    }
    d->num = cfg->num;
    kura_attribute_definition defs[] = {{"pk", KURA_S}, {"sk", KURA_S}};
    kura_key_schema_element ks[] = {{"pk", false}, {"sk", true}};
    kura_create_table_req req = {.table_name = ITEMS_TABLE,
                                 .attribute_definitions = defs,
                                 .attribute_definitions_count = 2,
                                 .key_schema = ks,
                                 .key_schema_count = 2,
                                 .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    if (idb_capacity == BENCH_CAPACITY_THROTTLE) { /* a limit no run reaches: 1 M units/s */
        req.billing_mode = KURA_BILLING_PROVISIONED;
        req.has_provisioned_throughput = true;
        req.read_capacity_units = req.write_capacity_units = 1000000;
    }
    kura_table_description desc;
    s = kura_create_table(d->db, &req, &desc);
    if (s == KURA_OK)
        kura_table_description_free(&desc);
    else if (s == KURA_E_RESOURCE_IN_USE)
        s = KURA_OK;
    if (s != KURA_OK) {
        s = bench_idb_fail(s, "CreateTable");
        kura_close(d->db);
        free(d);
        return s;
    }
    *out = d;
    return KURA_OK;
}

kura_status bench_idb_close(bench_idb *d)
{
    kura_status s = kura_close(d->db);
    free(d->fields);
    free(d->keys);
    free(d->vals);
    free(d->koff);
    free(d->voff);
    kura_value_free(d->one);
    free(d);
    return s;
}

/* ---- Items as kura_values (kura-raw builds its bytes from these too) --------------------- */

kura_status bench_put_s(kura_value *m, const char *name, const char *s)
{
    return kura_value_map_put(m, name, strlen(name), kura_value_s(s, strlen(s)));
}

kura_value *bench_item_value(const bench_item_fields *f, const char *n, bool with_data)
{
    kura_value *m = kura_value_map(), *tags = kura_value_set(KURA_SS), *prof = kura_value_map();
    bool ok = m && tags && prof;
    for (int i = 0; ok && i < 3; i++)
        ok = kura_value_append(tags, kura_value_s(f->tag[i], strlen(f->tag[i]))) == KURA_OK;
    ok = ok && bench_put_s(prof, "city", f->city) == KURA_OK && bench_put_s(prof, "zip", f->zip) == KURA_OK;
    ok = ok && bench_put_s(m, "pk", f->pk) == KURA_OK && bench_put_s(m, "sk", f->sk) == KURA_OK &&
         bench_put_s(m, "name", f->name) == KURA_OK && bench_put_s(m, "email", f->email) == KURA_OK &&
         kura_value_map_put(m, "n", 1, kura_value_n(n, strlen(n))) == KURA_OK &&
         kura_value_map_put(m, "price", 5, kura_value_n(f->price, strlen(f->price))) == KURA_OK &&
         kura_value_map_put(m, "active", 6, kura_value_bool(f->active)) == KURA_OK;
    if (ok) {
        ok = kura_value_map_put(m, "tags", 4, tags) == KURA_OK;
        tags = NULL; /* the map owns it now, whatever happened */
    }
    if (ok) {
        ok = kura_value_map_put(m, "profile", 7, prof) == KURA_OK;
        prof = NULL;
    }
    if (ok && with_data)
        ok = kura_value_map_put(m, "data", 4, kura_value_b(f->data, sizeof f->data)) == KURA_OK;
    kura_value_free(tags);
    kura_value_free(prof);
    if (!ok) {
        kura_value_free(m);
        return NULL;
    }
    return m;
}

static kura_value *key_value(const bench_item_fields *f)
{
    kura_value *k = kura_value_map();
    if (k && (bench_put_s(k, "pk", f->pk) != KURA_OK || bench_put_s(k, "sk", f->sk) != KURA_OK)) {
        kura_value_free(k);
        return NULL;
    }
    return k;
}

/* The database plus every item's fields, formatted before the clock starts. */
kura_status bench_fields_open(const char *dir, const bench_engine_opts *o,
                               const bench_config *cfg, bench_idb **out)
{
    bench_idb *d;
    kura_status s = idb_open(dir, o, cfg, &d);
    if (s != KURA_OK)
        return s;
    if (!(d->fields = malloc((cfg->num ? cfg->num : 1) * sizeof *d->fields))) {
        bench_idb_close(d);
        return kura_err(KURA_E_NOMEM, "item fields");
    }
    for (uint64_t i = 0; i < cfg->num; i++)
        bench_item_fields_make(i, &d->fields[i]);
    *out = d;
    return KURA_OK;
}

kura_status bench_fields_open_as(const char *dir, const bench_engine_opts *o,
                                 const bench_config *cfg, bench_capacity cap, bench_idb **out)
{
    idb_capacity = cap; /* engines are opened one at a time */
    kura_status s = bench_fields_open(dir, o, cfg, out);
    idb_capacity = BENCH_CAPACITY_ON;
    return s;
}

/* ---- kura-raw ------------------------------------------------------------------------------ */

static const key_schema RAW_KS = {"pk", KURA_S, "sk", KURA_S};
static const key_schema RAW_PK_ONLY = {"pk", KURA_S, NULL, 0};

static kura_status raw_open(const char *dir, const bench_engine_opts *o, const bench_config *cfg,
                            bench_idb **out)
{
    bench_idb *d;
    kura_status s = bench_fields_open(dir, o, cfg, &d);
    if (s != KURA_OK)
        return s;
    const char *names[4];
    size_t n = kura_tree_list(d->db, names, 4);
    for (size_t i = 0; i < n && i < 4; i++)
        if (!strncmp(names[i], "tbl-", 4))
            s = kura_tree_open(d->db, names[i], NULL, &d->tree);
    kbuf keys = KBUF_INIT, vals = KBUF_INIT;
    d->koff = calloc(cfg->num + 1, sizeof *d->koff);
    d->voff = calloc(cfg->num + 1, sizeof *d->voff);
    if (s == KURA_OK && (!d->tree || !d->koff || !d->voff))
        s = kura_err(KURA_E_NOMEM, "kura-raw: no table tree or no memory");
    for (uint64_t i = 0; i < cfg->num && s == KURA_OK; i++) {
        kura_value *item = bench_item_value(&d->fields[i], "0", true);
        s = item ? key_build(&RAW_KS, item, KEY_FROM_ITEM, &keys) : KURA_E_NOMEM;
        if (s == KURA_OK)
            s = val_encode(item, &vals);
        kura_value_free(item);
        d->koff[i + 1] = keys.len;
        d->voff[i + 1] = vals.len;
    }
    d->keys = keys.data;
    d->vals = vals.data;
    if (s != KURA_OK) {
        bench_idb_close(d);
        return bench_idb_fail(s, "kura-raw: building items");
    }
    *out = d;
    return KURA_OK;
}

static kura_status raw_put(bench_idb *d, uint64_t i)
{
    return kura_put(d->tree, NULL, d->keys + d->koff[i], d->koff[i + 1] - d->koff[i],
                    d->vals + d->voff[i], d->voff[i + 1] - d->voff[i]);
}

static kura_status raw_get(bench_idb *d, uint64_t i, bool *found_out)
{
    void *v = NULL;
    size_t vlen;
    kura_status s = kura_get(d->tree, NULL, d->keys + d->koff[i], d->koff[i + 1] - d->koff[i],
                             &v, &vlen);
    *found_out = s == KURA_OK;
    kura_free(v);
    return s == KURA_E_NOT_FOUND ? KURA_OK : s;
}

static kura_status raw_query(bench_idb *d, uint64_t i, uint64_t *count_out)
{
    kura_value *k = key_value(&d->fields[i]); /* built in the loop, as the C API's key is */
    kbuf prefix = KBUF_INIT;
    kura_status s = k ? key_build(&RAW_PK_ONLY, k, KEY_FROM_ITEM, &prefix) : KURA_E_NOMEM;
    kura_value_free(k);
    kura_iter *it = NULL;
    if (s == KURA_OK)
        s = kura_iter_new(d->tree, NULL, &it);
    uint64_t n = 0;
    if (s == KURA_OK) {
        for (kura_iter_seek(it, prefix.data, prefix.len); kura_iter_valid(it);
             kura_iter_next(it)) {
            size_t klen, vlen;
            const void *key = kura_iter_key(it, &klen);
            if (klen < prefix.len || memcmp(key, prefix.data, prefix.len) != 0)
                break;
            kura_iter_value(it, &vlen);
            n++;
        }
        s = kura_iter_status(it);
        kura_iter_free(it);
    }
    kbuf_free(&prefix);
    *count_out = n;
    return s;
}

static kura_status raw_update(bench_idb *d, uint64_t i)
{
    bool found;
    kura_status s = raw_get(d, i, &found);
    return s == KURA_OK ? raw_put(d, i) : s;
}

/* ---- kura-capi ----------------------------------------------------------------------------- */

static kura_status capi_put(bench_idb *d, uint64_t i)
{
    kura_value *item = bench_item_value(&d->fields[i], "0", true);
    if (!item)
        return kura_err(KURA_E_NOMEM, "item");
    kura_put_item_req req = {.table_name = ITEMS_TABLE, .item = item};
    kura_write_result res = {0};
    kura_status s = kura_put_item(d->db, &req, &res);
    kura_write_result_free(&res);
    kura_value_free(item);
    return s == KURA_OK ? s : bench_idb_fail(s, "PutItem");
}

static kura_status capi_get(bench_idb *d, uint64_t i, bool *found_out)
{
    kura_value *key = key_value(&d->fields[i]);
    if (!key)
        return kura_err(KURA_E_NOMEM, "key");
    kura_get_item_req req = {.table_name = ITEMS_TABLE, .key = key};
    kura_get_item_res res = {0};
    kura_status s = kura_get_item(d->db, &req, &res);
    *found_out = s == KURA_OK && res.item != NULL;
    kura_get_item_res_free(&res);
    kura_value_free(key);
    return s == KURA_OK ? s : bench_idb_fail(s, "GetItem");
}

static kura_status capi_query(bench_idb *d, uint64_t i, uint64_t *count_out)
{
    const bench_item_fields *f = &d->fields[i];
    kura_value *vals = kura_value_map();
    if (!vals || kura_value_map_put(vals, ":p", 2, kura_value_s(f->pk, strlen(f->pk))) != KURA_OK) {
        kura_value_free(vals);
        return kura_err(KURA_E_NOMEM, "query values");
    }
    kura_query_req req = {.table_name = ITEMS_TABLE,
                          .key_condition_expression = "pk = :p",
                          .expr = {.values = vals}};
    kura_page page = {0};
    kura_status s = kura_query(d->db, &req, &page);
    *count_out = page.count;
    kura_page_free(&page);
    kura_value_free(vals);
    return s == KURA_OK ? s : bench_idb_fail(s, "Query");
}

static kura_status capi_update(bench_idb *d, uint64_t i)
{
    if (!d->one) {
        d->one = kura_value_map();
        if (!d->one || kura_value_map_put(d->one, ":one", 4, kura_value_n("1", 1)) != KURA_OK)
            return kura_err(KURA_E_NOMEM, "update values");
    }
    kura_value *key = key_value(&d->fields[i]);
    if (!key)
        return kura_err(KURA_E_NOMEM, "key");
    kura_update_item_req req = {.table_name = ITEMS_TABLE,
                                .key = key,
                                .update_expression = "SET n = n + :one",
                                .expr = {.values = d->one}};
    kura_write_result res = {0};
    kura_status s = kura_update_item(d->db, &req, &res);
    kura_write_result_free(&res);
    kura_value_free(key);
    return s == KURA_OK ? s : bench_idb_fail(s, "UpdateItem");
}

/* ---- kura-json ----------------------------------------------------------------------------- */

kura_status bench_json_call(bench_idb *d, const char *op, const char *body, size_t len,
                             char **out)
{
    size_t out_len;
    kura_status s = kura_execute(d->db, op, body, len, out, &out_len);
    if (s != KURA_OK) {
        kura_status e = kura_err(s, "%s: %.300s", op, *out ? *out : "");
        kura_free(*out);
        *out = NULL;
        return e;
    }
    return KURA_OK;
}

static kura_status json_put(bench_idb *d, uint64_t i)
{
    const bench_item_fields f = d->fields[i];
    char b64[4 * sizeof f.data / 3 + 8], body[2048];
    EVP_EncodeBlock((unsigned char *)b64, f.data, (int)sizeof f.data);
    int n = snprintf(body, sizeof body,
                     "{\"TableName\":\"" ITEMS_TABLE "\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
                     "\"sk\":{\"S\":\"%s\"},\"name\":{\"S\":\"%s\"},\"email\":{\"S\":\"%s\"},"
                     "\"n\":{\"N\":\"0\"},\"price\":{\"N\":\"%s\"},\"active\":{\"BOOL\":%s},"
                     "\"tags\":{\"SS\":[\"%s\",\"%s\",\"%s\"]},\"profile\":{\"M\":{\"city\":"
                     "{\"S\":\"%s\"},\"zip\":{\"S\":\"%s\"}}},\"data\":{\"B\":\"%s\"}}}",
                     f.pk, f.sk, f.name, f.email, f.price, f.active ? "true" : "false",
                     f.tag[0], f.tag[1], f.tag[2], f.city, f.zip, b64);
    char *out = NULL;
    kura_status s = bench_json_call(d, "PutItem", body, (size_t)n, &out);
    kura_free(out);
    return s;
}

int bench_key_json(const bench_idb *d, char *buf, size_t cap, uint64_t i)
{
    const bench_item_fields *f = &d->fields[i];
    return snprintf(buf, cap, "\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"%s\"}}", f->pk,
                    f->sk);
}

static kura_status json_get(bench_idb *d, uint64_t i, bool *found_out)
{
    char key[256], body[512];
    bench_key_json(d, key, sizeof key, i);
    int n = snprintf(body, sizeof body, "{\"TableName\":\"" ITEMS_TABLE "\",%s}", key);
    char *out = NULL;
    kura_status s = bench_json_call(d, "GetItem", body, (size_t)n, &out);
    *found_out = s == KURA_OK && strstr(out, "\"Item\"") != NULL;
    kura_free(out);
    return s;
}

static kura_status json_query(bench_idb *d, uint64_t i, uint64_t *count_out)
{
    const bench_item_fields f = d->fields[i];
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"TableName\":\"" ITEMS_TABLE "\",\"KeyConditionExpression\":\"pk = :p\","
                     "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"%s\"}}}",
                     f.pk);
    char *out = NULL;
    kura_status s = bench_json_call(d, "Query", body, (size_t)n, &out);
    const char *c = s == KURA_OK ? strstr(out, "\"Count\":") : NULL;
    *count_out = c ? strtoull(c + 8, NULL, 10) : 0;
    kura_free(out);
    return s;
}

static kura_status json_update(bench_idb *d, uint64_t i)
{
    char key[256], body[768];
    bench_key_json(d, key, sizeof key, i);
    int n = snprintf(body, sizeof body,
                     "{\"TableName\":\"" ITEMS_TABLE "\",%s,\"UpdateExpression\":"
                     "\"SET n = n + :one\",\"ExpressionAttributeValues\":{\":one\":{\"N\":\"1\"}}}",
                     key);
    char *out = NULL;
    kura_status s = bench_json_call(d, "UpdateItem", body, (size_t)n, &out);
    kura_free(out);
    return s;
}

/* ---- The pseudo-engines (kura-partiql: engine_partiql.c) ------------------------------------------------------------- */

void bench_items_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "kura item layer; table with S pk + S sk, %u partitions; memtable_budget_bytes "
             "%llu MiB; block_cache_bytes %llu MiB; KURA_RELAXED",
             o->partitions, (unsigned long long)(o->memtable_bytes >> 20),
             (unsigned long long)(o->cache_bytes >> 20));
}

static const bench_item_api raw_api = {raw_open, bench_idb_close, raw_put, raw_get, raw_query,
                                       raw_update};
static const bench_item_api capi_api = {bench_fields_open, bench_idb_close, capi_put, capi_get, capi_query,
                                        capi_update};
static const bench_item_api json_api = {bench_fields_open, bench_idb_close, json_put, json_get, json_query,
                                        json_update};

const bench_engine bench_engine_kura_raw = {.name = "kura-raw", .settings = bench_items_settings,
                                            .items = &raw_api};
const bench_engine bench_engine_kura_capi = {.name = "kura-capi", .settings = bench_items_settings,
                                             .items = &capi_api, .index_run = bench_index_run,
                                             .txn_run = bench_txn_run};
const bench_engine bench_engine_kura_json = {.name = "kura-json", .settings = bench_items_settings,
                                             .items = &json_api};

/* kura-capi with the capacity accounting off (kura_options.capacity_accounting_off) and with
 * throttling on (kura_options.throttle): what the accounting and the throttle cost
 * (docs/BENCHMARKS.md, "Capacity accounting"). The workloads' keys are distinct items, so no
 * partition key comes near its limit; the table is on-demand, so the warm throughput (4,000
 * WCU / 12,000 RCU a second) is its limit: runs with more throughput than that throttle. */
static kura_status noacct_open(const char *dir, const bench_engine_opts *o, const bench_config *cfg,
                               bench_idb **out)
{
    return bench_fields_open_as(dir, o, cfg, BENCH_CAPACITY_OFF, out);
}

static kura_status throttle_open(const char *dir, const bench_engine_opts *o,
                                 const bench_config *cfg, bench_idb **out)
{
    return bench_fields_open_as(dir, o, cfg, BENCH_CAPACITY_THROTTLE, out);
}

static const bench_item_api noacct_api = {noacct_open, bench_idb_close, capi_put, capi_get,
                                          capi_query, capi_update};
static const bench_item_api throttle_api = {throttle_open, bench_idb_close, capi_put, capi_get,
                                            capi_query, capi_update};
const bench_engine bench_engine_kura_capi_noacct = {.name = "kura-capi-noacct",
                                                    .settings = bench_items_settings,
                                                    .items = &noacct_api};
const bench_engine bench_engine_kura_capi_throttle = {.name = "kura-capi-throttle",
                                                      .settings = bench_items_settings,
                                                      .items = &throttle_api};
