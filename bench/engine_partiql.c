/*
 * engine_partiql.c - the PartiQL pseudo-engines of kura-bench (bench/items.h): kura-partiql,
 * kura_execute_statement on the C API, and kura-json-partiql, ExecuteStatement through
 * kura_execute with the JSON body an AWS SDK sends. Both run the item workloads as the
 * statements an application would write for them (INSERT, SELECT by full key or by partition
 * key, UPDATE SET n = n + 1 by key), the values as parameters, on the database and items of
 * engine_items.c: against kura-capi and kura-json, in the same run, they price PartiQL.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/items_int.h"
#include "util/status.h"

/* ---- kura-partiql --------------------------------------------------------------------------- */

/* kura_execute_statement with the statement's values as parameters, built in the loop as
 * kura-capi builds its keys and items. */
static kura_status pq_exec(bench_idb *d, const char *stmt, kura_value *params,
                           kura_execute_statement_res *res)
{
    if (!params) return kura_err(KURA_E_NOMEM, "parameters");
    kura_execute_statement_req req = {.statement = stmt, .parameters = params};
    kura_status s = kura_execute_statement(d->db, &req, res);
    kura_value_free(params);
    return s == KURA_OK ? s : bench_idb_fail(s, stmt);
}

/* [pk, sk] of item i (NULL when out of memory). */
static kura_value *pq_key_params(const bench_item_fields *f)
{
    kura_value *l = kura_value_list();
    if (l && (kura_value_append(l, kura_value_s(f->pk, strlen(f->pk))) != KURA_OK ||
              kura_value_append(l, kura_value_s(f->sk, strlen(f->sk))) != KURA_OK)) {
        kura_value_free(l);
        return NULL;
    }
    return l;
}

/* INSERT's parameters, in the statement's order, built from the fields as capi_put builds its
 * item (no item is built and then copied). */
static kura_value *pq_item_params(const bench_item_fields *f)
{
    kura_value *l = kura_value_list(), *prof = kura_value_map(), *tags = kura_value_set(KURA_SS);
    bool ok = l && prof && tags;
    for (int k = 0; ok && k < 3; k++)
        ok = kura_value_append(tags, kura_value_s(f->tag[k], strlen(f->tag[k]))) == KURA_OK;
    ok = ok && bench_put_s(prof, "city", f->city) == KURA_OK && bench_put_s(prof, "zip", f->zip) == KURA_OK;
    kura_value *vals[] = {kura_value_bool(f->active), kura_value_b(f->data, sizeof f->data),
                          kura_value_s(f->email, strlen(f->email)), kura_value_n("0", 1),
                          kura_value_s(f->name, strlen(f->name)),
                          kura_value_s(f->pk, strlen(f->pk)),
                          kura_value_n(f->price, strlen(f->price)), prof,
                          kura_value_s(f->sk, strlen(f->sk)), tags};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        if (ok) ok = kura_value_append(l, vals[k]) == KURA_OK; /* takes vals[k] */
        else kura_value_free(vals[k]);
    }
    if (!ok) {
        kura_value_free(l);
        return NULL;
    }
    return l;
}

static kura_status pq_put(bench_idb *d, uint64_t i)
{
    kura_execute_statement_res res;
    kura_status s = pq_exec(d, "INSERT INTO \"" ITEMS_TABLE "\" VALUE {'active': ?, 'data': ?, "
                               "'email': ?, 'n': ?, 'name': ?, 'pk': ?, 'price': ?, "
                               "'profile': ?, 'sk': ?, 'tags': ?}",
                            pq_item_params(&d->fields[i]), &res);
    kura_execute_statement_res_free(&res);
    return s;
}

static kura_status pq_get(bench_idb *d, uint64_t i, bool *found_out)
{
    kura_execute_statement_res res;
    kura_status s = pq_exec(d, "SELECT * FROM \"" ITEMS_TABLE "\" WHERE pk = ? AND sk = ?",
                            pq_key_params(&d->fields[i]), &res);
    *found_out = s == KURA_OK && kura_value_count(res.items) == 1;
    kura_execute_statement_res_free(&res);
    return s;
}

static kura_status pq_query(bench_idb *d, uint64_t i, uint64_t *count_out)
{
    const bench_item_fields *f = &d->fields[i];
    kura_value *l = kura_value_list();
    if (l && kura_value_append(l, kura_value_s(f->pk, strlen(f->pk))) != KURA_OK) {
        kura_value_free(l);
        l = NULL;
    }
    kura_execute_statement_res res;
    kura_status s = pq_exec(d, "SELECT * FROM \"" ITEMS_TABLE "\" WHERE pk = ?", l, &res);
    *count_out = s == KURA_OK ? kura_value_count(res.items) : 0;
    kura_execute_statement_res_free(&res);
    return s;
}

static kura_status pq_update(bench_idb *d, uint64_t i)
{
    kura_execute_statement_res res;
    kura_status s = pq_exec(d, "UPDATE \"" ITEMS_TABLE "\" SET n = n + 1 WHERE pk = ? AND sk = ?",
                            pq_key_params(&d->fields[i]), &res);
    kura_execute_statement_res_free(&res);
    return s;
}

/* ---- kura-json-partiql -------------------------------------------------------------------- */

static kura_status jpq_call(bench_idb *d, const char *body, int n, char **out)
{
    if (n < 0) return kura_err(KURA_E_NOMEM, "ExecuteStatement body");
    return bench_json_call(d, "ExecuteStatement", body, (size_t)n, out);
}

static kura_status jpq_put(bench_idb *d, uint64_t i)
{
    const bench_item_fields f = d->fields[i];
    char b64[4 * sizeof f.data / 3 + 8], body[2048];
    EVP_EncodeBlock((unsigned char *)b64, f.data, (int)sizeof f.data);
    int n = snprintf(body, sizeof body,
                     "{\"Statement\":\"INSERT INTO \\\"" ITEMS_TABLE "\\\" VALUE {'active': ?, "
                     "'data': ?, 'email': ?, 'n': ?, 'name': ?, 'pk': ?, 'price': ?, "
                     "'profile': ?, 'sk': ?, 'tags': ?}\",\"Parameters\":[{\"BOOL\":%s},"
                     "{\"B\":\"%s\"},{\"S\":\"%s\"},{\"N\":\"0\"},{\"S\":\"%s\"},{\"S\":\"%s\"},"
                     "{\"N\":\"%s\"},{\"M\":{\"city\":{\"S\":\"%s\"},\"zip\":{\"S\":\"%s\"}}},"
                     "{\"S\":\"%s\"},{\"SS\":[\"%s\",\"%s\",\"%s\"]}]}",
                     f.active ? "true" : "false", b64, f.email, f.name, f.pk, f.price, f.city,
                     f.zip, f.sk, f.tag[0], f.tag[1], f.tag[2]);
    char *out = NULL;
    kura_status s = jpq_call(d, body, n, &out);
    kura_free(out);
    return s;
}

/* A statement on item i's key: {"Statement": stmt, "Parameters": [pk, sk]}. */
static int jpq_keyed(const bench_idb *d, char *body, size_t cap, const char *stmt, uint64_t i)
{
    const bench_item_fields *f = &d->fields[i];
    return snprintf(body, cap,
                    "{\"Statement\":\"%s\",\"Parameters\":[{\"S\":\"%s\"},{\"S\":\"%s\"}]}",
                    stmt, f->pk, f->sk);
}

static kura_status jpq_get(bench_idb *d, uint64_t i, bool *found_out)
{
    char body[512], *out = NULL;
    int n = jpq_keyed(d, body, sizeof body,
                      "SELECT * FROM \\\"" ITEMS_TABLE "\\\" WHERE pk = ? AND sk = ?", i);
    kura_status s = jpq_call(d, body, n, &out);
    *found_out = s == KURA_OK && strncmp(out, "{\"Items\":[{", 11) == 0;
    kura_free(out);
    return s;
}

static kura_status jpq_query(bench_idb *d, uint64_t i, uint64_t *count_out)
{
    char body[512], *out = NULL;
    int n = snprintf(body, sizeof body,
                     "{\"Statement\":\"SELECT * FROM \\\"" ITEMS_TABLE "\\\" WHERE pk = ?\","
                     "\"Parameters\":[{\"S\":\"%s\"}]}",
                     d->fields[i].pk);
    kura_status s = jpq_call(d, body, n, &out);
    uint64_t count = 0;
    /* every item has one "pk" attribute */
    for (const char *p = s == KURA_OK ? out : NULL; p && (p = strstr(p, "\"pk\":")); p += 5)
        count++;
    *count_out = count;
    kura_free(out);
    return s;
}

static kura_status jpq_update(bench_idb *d, uint64_t i)
{
    char body[512], *out = NULL;
    int n = jpq_keyed(d, body, sizeof body,
                      "UPDATE \\\"" ITEMS_TABLE "\\\" SET n = n + 1 WHERE pk = ? AND sk = ?", i);
    kura_status s = jpq_call(d, body, n, &out);
    kura_free(out);
    return s;
}

/* ---- The pseudo-engines ------------------------------------------------------------------ */

static const bench_item_api partiql_api = {bench_fields_open, bench_idb_close, pq_put, pq_get,
                                           pq_query, pq_update};
static const bench_item_api json_partiql_api = {bench_fields_open, bench_idb_close, jpq_put,
                                                jpq_get, jpq_query, jpq_update};

const bench_engine bench_engine_kura_partiql = {.name = "kura-partiql",
                                                .settings = bench_items_settings,
                                                .items = &partiql_api};
const bench_engine bench_engine_kura_json_partiql = {.name = "kura-json-partiql",
                                                     .settings = bench_items_settings,
                                                     .items = &json_partiql_api};
