/*
 * req_batch.c - This file contains BatchGetItem and BatchWriteItem of the JSON API.
 *
 * BatchGetItem answers every requested table in "Responses" (an empty list when nothing was
 * found) and returns keys it did not read (the 16 MB response limit) in "UnprocessedKeys"
 * together with the table's request parameters as the client sent them (a copy taken before
 * legacy_rewrite, so AttributesToGet comes back as AttributesToGet), ready to be resent.
 * BatchWriteItem answers "UnprocessedItems": {} (kura applies every request), or with
 * kura-server --throttle the requests a throttle refused, then with
 * ReturnItemCollectionMetrics SIZE "ItemCollectionMetrics" (per table with an LSI, a list of
 * one object per request). ConsumedCapacity is a list with one entry per table.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define MSG_MULTI                                                                                  \
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "    \
    "supported datatypes"

/* "UnprocessedItems": the requests a throttle refused (kura_options.throttle), by table as
 * the request named it, each as it was sent: {"T": [{"PutRequest": {"Item": ...}}, ...]}. */
static kura_status put_unprocessed(api_call *c, const kura_write_request *reqs,
                                   const kura_batch_write_res *res)
{
    kura_status s = jw_key(&c->out, "UnprocessedItems", 16);
    if (s == KURA_OK) s = jw_raw(&c->out, "{");
    for (size_t i = 0; s == KURA_OK && i < res->unprocessed_count; i++) {
        const kura_write_request *w = &reqs[res->unprocessed[i]];
        bool first = true; /* the first unprocessed request of its table opens its list */
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(reqs[res->unprocessed[j]].table_name, w->table_name) != 0;
        if (!first) continue;
        if ((s = jw_sep(&c->out)) == KURA_OK)
            s = jw_key(&c->out, w->table_name, strlen(w->table_name));
        if (s == KURA_OK) s = jw_raw(&c->out, "[");
        for (size_t j = i; s == KURA_OK && j < res->unprocessed_count; j++) {
            const kura_write_request *x = &reqs[res->unprocessed[j]];
            if (strcmp(x->table_name, w->table_name)) continue;
            if ((s = jw_sep(&c->out)) == KURA_OK)
                s = jw_raw(&c->out, x->is_delete ? "{\"DeleteRequest\":{\"Key\":"
                                                 : "{\"PutRequest\":{\"Item\":");
            if (s == KURA_OK) s = jw_item(&c->out, x->item);
            if (s == KURA_OK) s = jw_raw(&c->out, "}}");
        }
        if (s == KURA_OK) s = jw_raw(&c->out, "]");
    }
    return s == KURA_OK ? jw_raw(&c->out, "}") : s;
}

static kura_status put_capacities(api_call *c, const kura_consumed_capacity *const *cc, size_t n,
                                  kura_return_capacity rcc)
{
    if (rcc == KURA_CAPACITY_NONE) return KURA_OK;
    kura_status s = jw_key(&c->out, "ConsumedCapacity", 16);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && i < n; i++)
        if (cc[i]->present && (s = jw_sep(&c->out)) == KURA_OK)
            s = api_write_capacity(c, &c->out, cc[i], rcc);
    return s == KURA_OK ? jw_raw(&c->out, "]") : s;
}

/* A JSON array of the items (or keys) of list `l`. */
static kura_status write_items(kbuf *b, const kura_value *l)
{
    kura_status s = jw_raw(b, "[");
    for (size_t i = 0; s == KURA_OK && i < kura_value_count(l); i++) {
        if (i) s = jw_raw(b, ",");
        if (s == KURA_OK) s = jw_item(b, kura_value_at(l, i, NULL, NULL));
    }
    return s == KURA_OK ? jw_raw(b, "]") : s;
}

/* ---- BatchGetItem ---------------------------------------------------------------------- */

typedef struct get_state {
    kura_batch_get_table *tables; /* table_name: the name the request's key names */
    const char **given;           /* each table's RequestItems key (a name or an ARN) */
    api_expr *exprs;
    size_t n;
} get_state;

static void get_state_free(get_state *g)
{
    for (size_t i = 0; i < g->n; i++) {
        kura_value_free((kura_value *)g->tables[i].keys);
        api_expr_free(&g->exprs[i]);
    }
    free(g->tables);
    free(g->given);
    free(g->exprs);
}

/* One table's entry: its names map and keys, duplicates and the 100-key total checked. */
static kura_status decode_get_table(const char *name, const jd_t *t, kura_batch_get_table *bt,
                                    api_expr *e, size_t *total)
{
    kura_status s = api_expr_decode(t, false, e);
    kura_value *keys = s == KURA_OK ? kura_value_list() : NULL;
    if (s == KURA_OK && !keys) s = API_NOMEM();
    const jd_t *jkeys = jd_object_get(t, "Keys");
    for (size_t i = 0; s == KURA_OK && i < jd_array_size(jkeys); i++) {
        kura_value *k = NULL;
        if ((s = jv_decode_map(jd_array_get(jkeys, i), &k)) != KURA_OK) break;
        for (size_t j = 0; s == KURA_OK && j < kura_value_count(keys); j++)
            if (val_equal(kura_value_at(keys, j, NULL, NULL), k))
                s = api_err(KURA_E_INVALID, "Provided list of item keys contains duplicates");
        if (s == KURA_OK && ++*total > 100)
            s = api_err(KURA_E_INVALID, "Too many items requested for the BatchGetItem call");
        if (s == KURA_OK && kura_value_append(keys, k) != KURA_OK)
            s = API_NOMEM();
        else if (s != KURA_OK)
            kura_value_free(k);
    }
    bt->table_name = name;
    bt->keys = keys;
    bt->consistent_read = api_bool(t, "ConsistentRead", false);
    bt->projection_expression = api_str(t, "ProjectionExpression");
    bt->expression_attribute_names = e->names;
    return s;
}

/* UnprocessedKeys[table]: the table's original parameters, the keys in place of "Keys". */
static kura_status write_unprocessed(kbuf *b, const jd_t *orig, const kura_value *keys)
{
    const char *key;
    const jd_t *v;
    bool keys_written = false;
    kura_status s = jw_raw(b, "{");
    jd_object_foreach((jd_t *)orig, key, v)
    {
        if (s == KURA_OK) s = jw_key(b, key, strlen(key));
        if (s != KURA_OK) break;
        keys_written = keys_written || strcmp(key, "Keys") == 0;
        s = strcmp(key, "Keys") == 0 ? write_items(b, keys) : jw_json(b, v);
    }
    if (s == KURA_OK && !keys_written && (s = jw_key(b, "Keys", 4)) == KURA_OK)
        s = write_items(b, keys);
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* "Responses" (every table, also without items), "UnprocessedKeys", "ConsumedCapacity"; the
 * first two keyed as RequestItems was (a table named by ARN is answered under the ARN). */
static kura_status put_batch_get(api_call *c, const get_state *g, const jd_t *orig,
                                 kura_batch_get_res *res, kura_return_capacity rcc)
{
    kura_status s = jw_key(&c->out, "Responses", 9);
    if (s == KURA_OK) s = jw_raw(&c->out, "{");
    for (size_t i = 0; s == KURA_OK && i < g->n; i++) {
        const char *name = g->given[i];
        s = jw_key(&c->out, name, strlen(name));
        if (s == KURA_OK) s = write_items(&c->out, res->tables[i].items);
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "}");
    if (s == KURA_OK) s = jw_key(&c->out, "UnprocessedKeys", 15);
    if (s == KURA_OK) s = jw_raw(&c->out, "{");
    const kura_consumed_capacity *cc[g->n ? g->n : 1];
    for (size_t i = 0; s == KURA_OK && i < g->n; i++) {
        const kura_batch_get_table_res *t = &res->tables[i];
        const char *name = g->given[i];
        if (kura_value_count(t->unprocessed_keys) > 0) {
            s = jw_key(&c->out, name, strlen(name));
            if (s == KURA_OK)
                s = write_unprocessed(&c->out, jd_object_get(orig, name), t->unprocessed_keys);
        }
        cc[i] = &t->consumed_capacity;
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "}");
    if (s == KURA_OK) s = put_capacities(c, cc, g->n, rcc);
    return s;
}

static kura_status run_batch_get(api_call *c)
{
    jd_t *orig = jd_deep_copy(c->doc, jd_object_get(c->req, "RequestItems"));
    if (!orig) return API_NOMEM();
    kura_status s = api_legacy(c);
    const jd_t *items = jd_object_get(c->req, "RequestItems");
    size_t n = jd_object_size(items), total = 0;
    get_state g = {calloc(n, sizeof *g.tables), calloc(n, sizeof *g.given),
                   calloc(n, sizeof *g.exprs), 0};
    if (s == KURA_OK && (!g.tables || !g.given || !g.exprs)) s = API_NOMEM();
    const char *name;
    jd_t *t;
    jd_object_foreach((jd_t *)items, name, t)
    {
        if (s != KURA_OK) break;
        s = decode_get_table(name, t, &g.tables[g.n], &g.exprs[g.n], &total);
        g.given[g.n++] = name;
    }
    for (size_t i = 0; s == KURA_OK && i < g.n; i++)
        s = api_table_name(c, g.given[i], &g.tables[i].table_name);
    if (s == KURA_OK) {
        kura_batch_get_req req = {g.tables, g.n, api_rcc(c->req)};
        kura_batch_get_res res = {NULL, 0};
        s = api_engine(kura_batch_get_item(c->db, &req, &res));
        if (s == KURA_OK) {
            s = put_batch_get(c, &g, orig, &res, req.return_consumed_capacity);
            kura_batch_get_res_free(&res);
        }
    }
    get_state_free(&g);
    return s;
}

const api_op api_op_batch_get_item = {"BatchGetItem", run_batch_get};

/* ---- BatchWriteItem -------------------------------------------------------------------- */

static kura_status decode_write(const char *table, const jd_t *w, kura_write_request *out)
{
    const jd_t *put = jd_object_get(w, "PutRequest");
    const jd_t *del = jd_object_get(w, "DeleteRequest");
    kura_value *v = NULL;
    kura_status s = api_map_member(put ? put : del, put ? "Item" : "Key", &v);
    if (s == KURA_OK && put && (s = api_check_item_size(v)) != KURA_OK) kura_value_free(v);
    if (s == KURA_OK) {
        out->table_name = table;
        out->is_delete = put == NULL;
        out->item = v;
    }
    return s;
}

static kura_status run_batch_write(api_call *c)
{
    kura_status s = api_legacy(c);
    const jd_t *items = jd_object_get(c->req, "RequestItems");
    const char *name;
    jd_t *list;
    size_t total = 0;
    jd_object_foreach((jd_t *)items, name, list) total += jd_array_size(list);
    kura_write_request *reqs = calloc(total + 1, sizeof *reqs);
    size_t n = 0;
    if (s == KURA_OK && !reqs) s = API_NOMEM();
    if (s == KURA_OK && total > 25)
        s = api_err(KURA_E_INVALID, "Too many items requested for the BatchWriteItem call");
    jd_object_foreach((jd_t *)items, name, list)
    {
        for (size_t i = 0; s == KURA_OK && i < jd_array_size(list); i++) {
            const jd_t *w = jd_array_get(list, i);
            if (jd_object_size(w) != 1) s = api_err(KURA_E_INVALID, MSG_MULTI);
        }
        for (size_t i = 0; s == KURA_OK && i < jd_array_size(list); i++)
            if ((s = decode_write(name, jd_array_get(list, i), &reqs[n])) == KURA_OK) n++;
    }
    for (size_t i = 0; s == KURA_OK && i < n; i++)
        s = api_table_name(c, reqs[i].table_name, &reqs[i].table_name);
    if (s == KURA_OK) {
        kura_batch_write_req req = {reqs, n, api_rcc(c->req), api_ricm(c->req)};
        kura_batch_write_res res = {0};
        s = api_engine(kura_batch_write_item(c->db, &req, &res));
        if (s == KURA_OK) {
            s = put_unprocessed(c, reqs, &res);
            if (s == KURA_OK)
                s = api_out_metrics_by_table(c, res.item_collection_metrics,
                                             res.item_collection_metrics_count);
            const kura_consumed_capacity *cc[res.consumed_capacity_count + 1];
            for (size_t i = 0; i < res.consumed_capacity_count; i++)
                cc[i] = &res.consumed_capacity[i];
            if (s == KURA_OK)
                s = put_capacities(c, cc, res.consumed_capacity_count,
                                   req.return_consumed_capacity);
            kura_batch_write_res_free(&res);
        }
    }
    for (size_t i = 0; i < n; i++)
        kura_value_free((kura_value *)reqs[i].item);
    free(reqs);
    return s;
}

const api_op api_op_batch_write_item = {"BatchWriteItem", run_batch_write};
