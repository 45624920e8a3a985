/*
 * req_common.c - This file contains what the operations of the JSON API share: the long
 * per-thread error message, reading checked request members, the expression attribute maps
 * and the ConsumedCapacity and ItemCollectionMetrics objects.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include "api/api_int.h"
#include "api/legacy.h"
#include "util/status.h"

/* ---- Errors ------------------------------------------------------------------------------ */

/* The full message of the last error on this thread (kura_last_error() keeps 512 bytes), in
 * a thread-specific slot whose destructor frees it when the thread exits (a server's worker
 * threads come and go). */
static pthread_key_t api_msg_key;
static pthread_once_t api_msg_once = PTHREAD_ONCE_INIT;

static void api_msg_key_make(void)
{
    pthread_key_create(&api_msg_key, free);
}

static char *api_msg_get(void)
{
    pthread_once(&api_msg_once, api_msg_key_make);
    return pthread_getspecific(api_msg_key);
}

kura_status api_err(kura_status s, const char *fmt, ...)
{
    va_list ap;
    char *m = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&m, fmt, ap);
    va_end(ap);
    free(api_msg_get());
    if (n < 0)
        m = NULL;
    pthread_setspecific(api_msg_key, m);
    kura_err(s, "%s", m ? m : "out of memory");
    return s;
}

kura_status api_engine(kura_status s)
{
    return s == KURA_OK ? KURA_OK : api_err(s, "%s", kura_last_error());
}

const char *api_err_msg(void)
{
    const char *m = api_msg_get();
    return m ? m : kura_last_error();
}

/* ---- Reading checked members --------------------------------------------------------------- */

const char *api_str(const jd_t *obj, const char *name)
{
    return jd_string_value(jd_object_get(obj, name));
}

/* Whether v, under member `key` of its parent, is an attribute name holding NUL: the value of
 * an "AttributeName" or an element of "NonKeyAttributes", anywhere in the request. */
static bool nul_name_in(const jd_t *v, const char *key)
{
    if (jd_is_string(v))
        return key && (!strcmp(key, "AttributeName") || !strcmp(key, "NonKeyAttributes")) &&
               memchr(jd_string_value(v), '\0', jd_string_length(v));
    for (size_t i = 0; jd_is_array(v) && i < jd_array_size(v); i++)
        if (nul_name_in(jd_array_get(v, i), key)) return true;
    const char *k;
    size_t k_len;
    jd_t *m;
    jd_object_keylen_foreach((jd_t *)v, k, k_len, m)
    {
        if (!memchr(k, '\0', k_len) && nul_name_in(m, k)) return true;
    }
    return false;
}

kura_status api_check_schema_names(const jd_t *req)
{
    if (!nul_name_in(req, NULL)) return KURA_OK;
    return api_err(KURA_E_INVALID, "One or more parameter values were invalid: kura does not "
                                   "support NUL in key, projected or Time to Live attribute "
                                   "names");
}

bool api_bool(const jd_t *obj, const char *name, bool dflt)
{
    const jd_t *v = jd_object_get(obj, name);
    return jd_is_boolean(v) ? jd_is_true(v) : dflt;
}

kura_return_capacity api_rcc(const jd_t *req)
{
    const char *s = api_str(req, "ReturnConsumedCapacity");
    if (!s) return KURA_CAPACITY_NONE;
    return strcmp(s, "TOTAL") == 0     ? KURA_CAPACITY_TOTAL
           : strcmp(s, "INDEXES") == 0 ? KURA_CAPACITY_INDEXES
                                       : KURA_CAPACITY_NONE;
}

kura_return_metrics api_ricm(const jd_t *req)
{
    const char *s = api_str(req, "ReturnItemCollectionMetrics");
    return s && strcmp(s, "SIZE") == 0 ? KURA_METRICS_SIZE : KURA_METRICS_NONE;
}

kura_select api_select(const jd_t *req)
{
    static const struct {
        const char *name;
        kura_select sel;
    } map[] = {{"ALL_ATTRIBUTES", KURA_SELECT_ALL_ATTRIBUTES},
               {"ALL_PROJECTED_ATTRIBUTES", KURA_SELECT_ALL_PROJECTED_ATTRIBUTES},
               {"SPECIFIC_ATTRIBUTES", KURA_SELECT_SPECIFIC_ATTRIBUTES},
               {"COUNT", KURA_SELECT_COUNT}};
    const char *s = api_str(req, "Select");
    for (size_t i = 0; s && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0) return map[i].sel;
    return KURA_SELECT_DEFAULT;
}

kura_return_values api_return_values(const jd_t *req, const char *name)
{
    static const struct {
        const char *name;
        kura_return_values rv;
    } map[] = {{"ALL_OLD", KURA_RETURN_ALL_OLD},
               {"UPDATED_OLD", KURA_RETURN_UPDATED_OLD},
               {"ALL_NEW", KURA_RETURN_ALL_NEW},
               {"UPDATED_NEW", KURA_RETURN_UPDATED_NEW}};
    const char *s = api_str(req, name);
    for (size_t i = 0; s && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0) return map[i].rv;
    return KURA_RETURN_NONE;
}

kura_status api_legacy(api_call *c)
{
    return api_engine(legacy_rewrite(c->op, c->req));
}

/* ---- Expression attribute maps -------------------------------------------------------------- */

/* ^<lead>[0-9a-zA-Z_]+$ */
static bool placeholder_ok(const char *key, size_t len, char lead)
{
    if (len < 2 || key[0] != lead) return false;
    for (size_t i = 1; i < len; i++) {
        char ch = key[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              ch == '_'))
            return false;
    }
    return true;
}

static kura_status check_keys(const jd_t *map, const char *what, char lead)
{
    if (jd_object_size(map) == 0) return api_err(KURA_E_INVALID, "%s must not be empty", what);
    const char *key;
    size_t key_len;
    jd_t *v;
    jd_object_keylen_foreach((jd_t *)map, key, key_len, v)
    {
        (void)v;
        if (!placeholder_ok(key, key_len, lead))
            return api_err(KURA_E_INVALID, "%s contains invalid key: Syntax error; key: \"%s\"",
                           what, key);
    }
    return KURA_OK;
}

static kura_status decode_names(const jd_t *map, kura_value **out)
{
    kura_value *m = kura_value_map();
    if (!m) return API_NOMEM();
    const char *key;
    size_t key_len;
    jd_t *v;
    jd_object_keylen_foreach((jd_t *)map, key, key_len, v)
    {
        kura_value s = {0};
        if (val_set_bytes(&s, KURA_S, jd_is_string(v) ? jd_string_value(v) : "",
                          jd_string_length(v)) != KURA_OK ||
            val_map_put(m, key, key_len, &s) != KURA_OK) {
            kura_value_free(m);
            return API_NOMEM();
        }
    }
    *out = m;
    return KURA_OK;
}

static kura_status decode_values(const jd_t *map, kura_value **out)
{
    kura_value *m = kura_value_map();
    if (!m) return API_NOMEM();
    const char *key;
    size_t key_len;
    jd_t *v;
    jd_object_keylen_foreach((jd_t *)map, key, key_len, v)
    {
        kura_value d = {0};
        kura_status st = jv_decode(v, &d);
        if (st == KURA_E_INVALID) {
            char *msg = strdup(api_err_msg());
            st = msg ? api_err(KURA_E_INVALID,
                               "ExpressionAttributeValues contains invalid value: %s for key %s",
                               msg, key)
                     : API_NOMEM();
            free(msg);
        } else if (st == KURA_OK && val_map_put(m, key, key_len, &d) != KURA_OK) {
            st = API_NOMEM();
        }
        if (st != KURA_OK) {
            kura_value_free(m);
            return st;
        }
    }
    *out = m;
    return KURA_OK;
}

kura_status api_expr_decode(const jd_t *obj, bool with_values, api_expr *out)
{
    const jd_t *names = jd_object_get(obj, "ExpressionAttributeNames");
    const jd_t *values = with_values ? jd_object_get(obj, "ExpressionAttributeValues") : NULL;
    kura_status st = KURA_OK;
    api_expr e = {NULL, NULL};
    if (names) st = check_keys(names, "ExpressionAttributeNames", '#');
    if (st == KURA_OK && values) st = check_keys(values, "ExpressionAttributeValues", ':');
    if (st == KURA_OK && names) st = decode_names(names, &e.names);
    if (st == KURA_OK && values) st = decode_values(values, &e.values);
    if (st != KURA_OK) {
        api_expr_free(&e);
        return st;
    }
    *out = e;
    return KURA_OK;
}

void api_expr_free(api_expr *e)
{
    kura_value_free(e->names);
    kura_value_free(e->values);
    e->names = e->values = NULL;
}

kura_expression_attributes api_expr_attrs(const api_expr *e)
{
    kura_expression_attributes a = {e->names, e->values};
    return a;
}

kura_status api_map_member(const jd_t *obj, const char *name, kura_value **out)
{
    const jd_t *m = jd_object_get(obj, name);
    if (!m) {
        *out = NULL;
        return KURA_OK;
    }
    return jv_decode_map(m, out);
}

kura_status api_check_item_size(const kura_value *item)
{
    if (val_item_size(item) > 400 * 1024)
        return api_err(KURA_E_INVALID, "Item size has exceeded the maximum allowed size");
    return KURA_OK;
}

/* ---- Responses ---------------------------------------------------------------------------- */

kura_status api_out_json(api_call *c, const char *key, jd_t *v)
{
    kura_status s = v ? jw_key(&c->out, key, strlen(key)) : API_NOMEM();
    if (s == KURA_OK) s = jw_json(&c->out, v);
    return s;
}

kura_status api_out_item(api_call *c, const char *key, const kura_value *m)
{
    kura_status s = jw_key(&c->out, key, strlen(key));
    return s == KURA_OK ? jw_item(&c->out, m) : s;
}

kura_status api_out_int(api_call *c, const char *key, int64_t v)
{
    kura_status s = jw_key(&c->out, key, strlen(key));
    return s == KURA_OK ? jw_int(&c->out, v) : s;
}

/* The members of one kind of index of a ConsumedCapacity object:
 * ,"LocalSecondaryIndexes":{"<name>":{"CapacityUnits":u},...} (nothing when there are none). */
static kura_status put_index_units(kbuf *b, const kura_consumed_capacity *cc, bool global)
{
    kura_status s = KURA_OK;
    bool first = true;
    for (size_t i = 0; s == KURA_OK && i < cc->index_count; i++) {
        const kura_index_capacity *ic = &cc->indexes[i];
        if (ic->global != global) continue;
        s = jw_raw(b, !first ? "," : global ? ",\"GlobalSecondaryIndexes\":{"
                                            : ",\"LocalSecondaryIndexes\":{");
        first = false;
        if (s == KURA_OK) s = jw_string(b, ic->index_name, strlen(ic->index_name));
        if (s == KURA_OK) s = jw_raw(b, ":{\"CapacityUnits\":");
        if (s == KURA_OK) s = jw_real(b, ic->capacity_units);
        if (s == KURA_OK) s = jw_raw(b, "}");
    }
    return s == KURA_OK && !first ? jw_raw(b, "}") : s;
}

/* With INDEXES, the indexes' units follow "Table", as DynamoDB Local 1.25.1 writes them:
 *   {"TableName":"T","CapacityUnits":4.0,"Table":{"CapacityUnits":1.0},
 *    "LocalSecondaryIndexes":{"L":{"CapacityUnits":1.0}},
 *    "GlobalSecondaryIndexes":{"G":{"CapacityUnits":1.0},"H":{"CapacityUnits":1.0}}} */
kura_status api_write_capacity(const api_call *c, kbuf *b, const kura_consumed_capacity *cc,
                               kura_return_capacity mode)
{
    const char *name = cc->table_name ? api_table_shown(c, cc->table_name) : "";
    kura_status s = jw_raw(b, "{\"TableName\":");
    if (s == KURA_OK) s = jw_string(b, name, strlen(name));
    if (s == KURA_OK) s = jw_raw(b, ",\"CapacityUnits\":");
    if (s == KURA_OK) s = jw_real(b, cc->capacity_units);
    if (s == KURA_OK && mode == KURA_CAPACITY_INDEXES) {
        s = jw_raw(b, ",\"Table\":{\"CapacityUnits\":");
        if (s == KURA_OK) s = jw_real(b, cc->table_capacity_units);
        if (s == KURA_OK) s = jw_raw(b, "}");
        if (s == KURA_OK) s = put_index_units(b, cc, false);
        if (s == KURA_OK) s = put_index_units(b, cc, true);
    }
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

kura_status api_out_capacity(api_call *c, const kura_consumed_capacity *cc,
                             kura_return_capacity mode)
{
    if (!cc->present || mode == KURA_CAPACITY_NONE) return KURA_OK;
    kura_status s = jw_key(&c->out, "ConsumedCapacity", 16);
    return s == KURA_OK ? api_write_capacity(c, &c->out, cc, mode) : s;
}

kura_status api_write_metrics(kbuf *b, const kura_item_collection_metrics *m)
{
    kura_status s = jw_raw(b, "{\"ItemCollectionKey\":");
    if (s == KURA_OK) s = jw_item(b, m->item_collection_key);
    if (s == KURA_OK) s = jw_raw(b, ",\"SizeEstimateRangeGB\":[");
    if (s == KURA_OK) s = jw_real(b, m->size_estimate_range_gb[0]);
    if (s == KURA_OK) s = jw_raw(b, ",");
    if (s == KURA_OK) s = jw_real(b, m->size_estimate_range_gb[1]);
    return s == KURA_OK ? jw_raw(b, "]}") : s;
}

kura_status api_out_metrics(api_call *c, const kura_item_collection_metrics *m)
{
    if (!m->present) return KURA_OK;
    kura_status s = jw_key(&c->out, "ItemCollectionMetrics", 21);
    return s == KURA_OK ? api_write_metrics(&c->out, m) : s;
}

kura_status api_out_metrics_by_table(api_call *c, const kura_item_collection_metrics *m, size_t n)
{
    if (n == 0) return KURA_OK;
    kura_status s = jw_key(&c->out, "ItemCollectionMetrics", 21);
    if (s == KURA_OK) s = jw_raw(&c->out, "{");
    for (size_t i = 0; s == KURA_OK && i < n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(m[j].table_name, m[i].table_name) != 0;
        if (!first) continue;
        const char *shown = api_table_shown(c, m[i].table_name);
        s = jw_key(&c->out, shown, strlen(shown));
        if (s == KURA_OK) s = jw_raw(&c->out, "[");
        for (size_t j = i; s == KURA_OK && j < n; j++) {
            if (strcmp(m[j].table_name, m[i].table_name) != 0) continue;
            if (j != i) s = jw_raw(&c->out, ",");
            if (s == KURA_OK) s = api_write_metrics(&c->out, &m[j]);
        }
        if (s == KURA_OK) s = jw_raw(&c->out, "]");
    }
    return s == KURA_OK ? jw_raw(&c->out, "}") : s;
}
