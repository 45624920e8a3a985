/*
 * legacy.c - This file contains the rewriting of DynamoDB's legacy request parameters
 * (Expected, ConditionalOperator, AttributeUpdates, KeyConditions, QueryFilter, ScanFilter,
 * AttributesToGet) into expression parameters; see legacy.h for the mapping.
 *
 * A rewrite runs in two phases so that a rejected request is left untouched: first every
 * legacy member is checked and translated into expression text (kbufs), the generated
 * "#lN" names and ":lN" values collected in fresh JSON objects (struct lgen); only when all
 * of it translated does lgen_commit() remove the legacy members and add the expressions and
 * map entries to the request.
 *
 * Operator semantics (DynamoDB's "Legacy conditional parameters" page, checked against
 * DynamoDB Local 1.25.1 on items with and without the attribute):
 *   EQ NE LE LT GE GT    #a = :v, <>, <=, <, >=, >   (NE is true for a missing attribute, as <>)
 *   NOT_NULL / NULL      attribute_exists(#a) / attribute_not_exists(#a)
 *   CONTAINS             contains(#a, :v)
 *   NOT_CONTAINS         attribute_exists(#a) AND NOT contains(#a, :v): the legacy operator
 *                        is false for a missing attribute, NOT contains() alone would be true
 *   BEGINS_WITH IN BETWEEN  begins_with(#a, :v), #a IN (:v1, ...), #a BETWEEN :v1 AND :v2
 *   Expected {Value}     #a = :v;  {Exists: false}  attribute_not_exists(#a)
 * Several conditions are joined with AND, or OR for ConditionalOperator OR, each in
 * parentheses. AttributeUpdates: PUT (the default) -> SET #a = :v, DELETE -> REMOVE #a, DELETE
 * with a set -> DELETE #a :v, ADD of a number or set -> ADD #a :v, ADD of a list -> SET #a =
 * list_append(if_not_exists(#a, :empty), :v). Argument types per operator follow DynamoDB
 * Local: EQ/NE any type; LE LT GE GT IN BETWEEN S, N, B; CONTAINS/NOT_CONTAINS also BOOL and
 * NULL; BEGINS_WITH S, B. Messages are dynalite's (DynamoDB's) where it has them, DynamoDB
 * Local's otherwise (ConditionalOperator counts, non-indexable key conditions).
 *
 * Files: legacy.c (the operations, which parameters may be combined, AttributeUpdates,
 * AttributesToGet, the placeholder generator), legacy_cond.c (conditions and the
 * ComparisonOperator rules), legacy_int.h (what they share).
 */
#include <stdio.h>
#include <string.h>

#include "api/legacy_int.h"

/* ---- Generated names and values ----------------------------------------------------------- */

static kura_status lgen_init(legacy_gen *g, const jd_t *req)
{
    memset(g, 0, sizeof(*g));
    g->doc = jd_doc_of(req);
    g->user_names = legacy_get(req, "ExpressionAttributeNames");
    g->user_values = legacy_get(req, "ExpressionAttributeValues");
    if (g->user_names && !jd_is_object(g->user_names))
        return legacy_type_error(g->user_names, "Map");
    if (g->user_values && !jd_is_object(g->user_values))
        return legacy_type_error(g->user_values, "Map");
    g->names = jd_object(g->doc);
    g->values = jd_object(g->doc);
    g->by_attr = jd_object(g->doc);
    return g->names && g->values && g->by_attr ? KURA_OK : legacy_nomem();
}

static void lgen_free(legacy_gen *g)
{
    for (int i = 0; i < g->nout; i++)
        kbuf_free(&g->out[i].text);
}

/* A new expression `param`, to be filled by the caller. */
static kbuf *lgen_expr(legacy_gen *g, const char *param)
{
    g->out[g->nout].param = param;
    return &g->out[g->nout++].text;
}

/* The "#lN" placeholder of attribute `attr` into ph, skipping the request's own names. */
kura_status legacy_gen_name(legacy_gen *g, const char *attr, size_t attr_len, char *ph)
{
    jd_t *have = jd_object_getn(g->by_attr, attr, attr_len);
    if (have) {
        snprintf(ph, LPH_MAX, "%s", jd_string_value(have));
        return KURA_OK;
    }
    do
        snprintf(ph, LPH_MAX, "#l%u", g->next_name++);
    while (jd_object_get(g->user_names, ph));
    if (jd_object_set(g->names, ph, jd_stringn(g->doc, attr, attr_len)) ||
        jd_object_setn(g->by_attr, attr, attr_len, jd_string(g->doc, ph)))
        return legacy_nomem();
    return KURA_OK;
}

/* A new ":lN" placeholder for value `v` (shared, not copied) into ph. */
kura_status legacy_gen_value(legacy_gen *g, jd_t *v, char *ph)
{
    do
        snprintf(ph, LPH_MAX, ":l%u", g->next_value++);
    while (jd_object_get(g->user_values, ph));
    return jd_object_set(g->values, ph, v) ? legacy_nomem() : KURA_OK;
}

/* Adds the expressions and map entries to `req` and removes the legacy members `legacy`. */
static kura_status lgen_commit(legacy_gen *g, jd_t *req, const char *const *legacy)
{
    for (int i = 0; i < g->nout; i++) {
        if (!g->out[i].text.len) continue; /* e.g. Expected: {} asks for no condition */
        jd_t *s = jd_stringn(g->doc, (const char *)g->out[i].text.data, g->out[i].text.len);
        if (jd_object_set(req, g->out[i].param, s)) return legacy_nomem();
    }
    const char *maps[2] = {"ExpressionAttributeNames", "ExpressionAttributeValues"};
    jd_t *add[2] = {g->names, g->values};
    for (int i = 0; i < 2; i++) {
        if (!jd_object_size(add[i])) continue;
        jd_t *have = legacy_get(req, maps[i]);
        if (have ? jd_object_update(have, add[i]) : jd_object_set(req, maps[i], add[i]))
            return legacy_nomem();
    }
    for (; *legacy; legacy++)
        jd_object_del(req, *legacy);
    return KURA_OK;
}

/* ---- AttributeUpdates ------------------------------------------------------------------------ */

enum { UA_ADD, UA_PUT, UA_DELETE };
static const char *const ua_names[] = {"ADD", "PUT", "DELETE"};

/* Adds `#a...` to the clause `kw` ("SET", "REMOVE", "ADD", "DELETE") being built in `b`. */
static bool lclause_add(kbuf *b, const char *kw)
{
    return b->len ? legacy_put(b, ", ") : legacy_putf(b, "%s ", kw);
}

/* Checks one AttributeUpdates entry; its action into *action_out. */
static kura_status lupdate_check(const char *attr, const jd_t *u, int *action_out)
{
    if (!jd_is_object(u)) return legacy_type_error(u, "Map");
    jd_t *value = legacy_get(u, "Value"), *av = legacy_get(u, "Action");
    int action = UA_PUT, t = -1;
    kura_status st;
    if (av && !jd_is_string(av)) return legacy_type_error(av, "String");
    if (av) {
        for (action = 0; action < 3 && strcmp(jd_string_value(av), ua_names[action]); action++)
            ;
        if (action == 3)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value '%s' at 'attributeUpdates.%s."
                            "member.action' failed to satisfy constraint: Member must satisfy "
                            "enum value set: [ADD, PUT, DELETE]",
                            jd_string_value(av), attr);
    }
    if (value && (st = legacy_value_check(value)) != KURA_OK) return st;
    if (value) t = legacy_value_type(value);
    if (!value && action != UA_DELETE)
        return kura_err(KURA_E_INVALID, LMSG_PARAM "Only DELETE action is allowed when no "
                                                   "attribute value is specified");
    if (value && action == UA_DELETE && !(LT_SETS & LT_BIT(t)))
        return kura_err(KURA_E_INVALID,
                        LMSG_PARAM "DELETE action with value is not supported for the type %s",
                        legacy_type_names[t]);
    if (value && action == UA_ADD && !((LT_SETS | LT_BIT(LT_N) | LT_BIT(LT_L)) & LT_BIT(t)))
        return kura_err(KURA_E_INVALID, LMSG_PARAM "ADD action is not supported for the type %s",
                        legacy_type_names[t]);
    *action_out = action;
    return KURA_OK;
}

/* Translates AttributeUpdates into an UpdateExpression in `out`: SET, REMOVE, ADD and DELETE
 * clauses in that order, each listing its attributes in the order given. */
static kura_status lupdates_translate(legacy_gen *g, const jd_t *updates, kbuf *out)
{
    if (!jd_is_object(updates)) return legacy_type_error(updates, "Map");
    kbuf cl[4] = {KBUF_INIT, KBUF_INIT, KBUF_INIT, KBUF_INIT}; /* SET REMOVE ADD DELETE */
    kura_status st = KURA_OK;
    const char *attr;
    size_t attr_len;
    jd_t *u;
    jd_object_keylen_foreach((jd_t *)updates, attr, attr_len, u)
    {
        int action = UA_PUT;
        char n[LPH_MAX], v[LPH_MAX] = "";
        jd_t *value = legacy_get(u, "Value");
        if ((st = lupdate_check(attr, u, &action)) != KURA_OK ||
            (st = legacy_gen_name(g, attr, attr_len, n)) != KURA_OK ||
            (value && (st = legacy_gen_value(g, value, v)) != KURA_OK))
            break;
        bool ok, list = value && legacy_value_type(value) == LT_L;
        if (action == UA_ADD && list && !g->empty_list[0]) {
            jd_t *empty = jd_object(g->doc);
            st = empty && jd_object_set(empty, "L", jd_array(g->doc)) == 0
                     ? legacy_gen_value(g, empty, g->empty_list)
                     : legacy_nomem();
            if (st) break;
        }
        if (action == UA_PUT)
            ok = lclause_add(&cl[0], "SET") && legacy_putf(&cl[0], "%s = %s", n, v);
        else if (action == UA_ADD && list)
            ok = lclause_add(&cl[0], "SET") &&
                 legacy_putf(&cl[0], "%s = list_append(if_not_exists(%s, %s), %s)", n, n,
                             g->empty_list, v);
        else if (action == UA_DELETE && !value)
            ok = lclause_add(&cl[1], "REMOVE") && legacy_put(&cl[1], n);
        else if (action == UA_ADD)
            ok = lclause_add(&cl[2], "ADD") && legacy_putf(&cl[2], "%s %s", n, v);
        else
            ok = lclause_add(&cl[3], "DELETE") && legacy_putf(&cl[3], "%s %s", n, v);
        if (!ok) {
            st = legacy_nomem();
            break;
        }
    }
    for (int i = 0; i < 4; i++) {
        if (!st && cl[i].len &&
            ((out->len && !legacy_put(out, " ")) || !kbuf_append(out, cl[i].data, cl[i].len)))
            st = legacy_nomem();
        kbuf_free(&cl[i]);
    }
    return st;
}

/* ---- AttributesToGet ------------------------------------------------------------------------- */

/* Translates AttributesToGet (at `path` in messages) into a ProjectionExpression in `out`. */
static kura_status lproj_translate(legacy_gen *g, const jd_t *atg, const char *path, kbuf *out)
{
    if (!jd_is_array(atg)) return legacy_type_error(atg, "List");
    size_t n = jd_array_size(atg);
    for (size_t i = 0; i < n; i++)
        if (!jd_is_string(jd_array_get(atg, i)))
            return legacy_type_error(jd_array_get(atg, i), "String");
    if (n < 1 || n > 255) {
        kbuf list = KBUF_INIT; /* the value as DynamoDB prints it: [a, b, c] */
        bool ok = legacy_put(&list, "[");
        for (size_t i = 0; ok && i < n; i++)
            ok = (!i || legacy_put(&list, ", ")) &&
                 legacy_put(&list, jd_string_value(jd_array_get(atg, i)));
        ok = ok && kbuf_append(&list, "]", 2);
        kura_status st =
            !ok ? legacy_nomem()
                : kura_err(KURA_E_INVALID,
                           "1 validation error detected: Value '%s' at '%s' failed to "
                           "satisfy constraint: Member must have length %s than or "
                           "equal to %s",
                           (const char *)list.data, path, n ? "less" : "greater", n ? "255" : "1");
        kbuf_free(&list);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        const jd_t *a_v = jd_array_get(atg, i);
        const char *a = jd_string_value(a_v);
        for (size_t j = 0; j < i; j++)
            if (jd_string_length(a_v) == jd_string_length(jd_array_get(atg, j)) &&
                !memcmp(a, jd_string_value(jd_array_get(atg, j)), jd_string_length(a_v)))
                return kura_err(KURA_E_INVALID, LMSG_PARAM "Duplicate value in attribute name: %s",
                                a);
    }
    for (size_t i = 0; i < n; i++) {
        char ph[LPH_MAX];
        const jd_t *a = jd_array_get(atg, i);
        kura_status st = legacy_gen_name(g, jd_string_value(a), jd_string_length(a), ph);
        if (st) return st;
        if (!legacy_putf(out, "%s%s", i ? ", " : "", ph)) return legacy_nomem();
    }
    return KURA_OK;
}

/* ---- Which parameters may appear together ------------------------------------------------- */

/* Whether a member of `names` other than `skip` is present in `req`. */
static bool lany_present(const jd_t *req, const char *const *names, const char *skip)
{
    for (; *names; names++)
        if (legacy_get(req, *names) && (!skip || strcmp(*names, skip))) return true;
    return false;
}

/* Appends the members of `names` present in `req` to `b` as "A, B" (skipping `skip`). */
static bool llist_present(const jd_t *req, const char *const *names, const char *skip, kbuf *b)
{
    bool ok = true;
    for (; ok && *names; names++)
        if (legacy_get(req, *names) && (!skip || strcmp(*names, skip)))
            ok = (!b->len || legacy_put(b, ", ")) && legacy_put(b, *names);
    return ok;
}

/* DynamoDB's rules on combining the expression parameters `exprs` and the legacy parameters
 * `legacy` of an operation, and on ExpressionAttributeNames/Values without an expression.
 * Every request of these operations passes here, so the lists the messages quote are only
 * made once a rule is broken. */
static kura_status lcheck_params(const jd_t *req, const char *const *exprs,
                                 const char *const *legacy)
{
    /* KeyConditions may go with the other expressions of a Query, not KeyConditionExpression */
    const char *skip = legacy_get(req, "KeyConditionExpression") ? NULL : "KeyConditions";
    bool expr = lany_present(req, exprs, NULL);
    bool mixed = expr && lany_present(req, legacy, skip);
    size_t nval = 0, nval_present = 0; /* expressions that take values: all but projections */
    for (const char *const *x = exprs; *x; x++) {
        if (!strcmp(*x, "ProjectionExpression")) continue;
        nval_present += legacy_get(req, *x) != NULL;
        nval++;
    }
    bool names_alone = !expr && legacy_get(req, "ExpressionAttributeNames");
    bool values_alone = nval && !nval_present && legacy_get(req, "ExpressionAttributeValues");
    if (!mixed && !names_alone && !values_alone) return KURA_OK;

    kbuf e = KBUF_INIT, l = KBUF_INIT, v = KBUF_INIT;
    kura_status st = KURA_OK;
    bool ok = llist_present(req, exprs, NULL, &e) && llist_present(req, legacy, skip, &l);
    size_t i = 0;
    for (const char *const *x = exprs; ok && *x; x++)
        if (strcmp(*x, "ProjectionExpression"))
            ok = (!i++ || legacy_put(&v, " and ")) && legacy_put(&v, *x);
    ok = ok && kbuf_put_u8(&e, 0) && kbuf_put_u8(&l, 0) && kbuf_put_u8(&v, 0);
    if (!ok)
        st = legacy_nomem();
    else if (mixed)
        st = kura_err(KURA_E_INVALID,
                      "Can not use both expression and non-expression parameters "
                      "in the same request: Non-expression parameters: {%s} "
                      "Expression parameters: {%s}",
                      (const char *)l.data, (const char *)e.data);
    else if (names_alone)
        st = kura_err(KURA_E_INVALID,
                      "ExpressionAttributeNames can only be specified when using expressions");
    else
        st = kura_err(KURA_E_INVALID,
                      "ExpressionAttributeValues can only be specified when using expressions: "
                      "%s %s null",
                      (const char *)v.data, nval > 1 ? "are" : "is");
    kbuf_free(&e);
    kbuf_free(&l);
    kbuf_free(&v);
    return st;
}

/* ConditionalOperator: AND or OR, and only with two or more conditions in `filter`. */
static kura_status lcheck_condop(const jd_t *req, const char *filter, bool *any_out)
{
    jd_t *co = legacy_get(req, "ConditionalOperator"), *f = legacy_get(req, filter);
    *any_out = false;
    if (!co) return KURA_OK;
    if (!jd_is_string(co)) return legacy_type_error(co, "String");
    if (strcmp(jd_string_value(co), "AND") && strcmp(jd_string_value(co), "OR"))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%s' at 'conditionalOperator' failed "
                        "to satisfy constraint: Member must satisfy enum value set: [OR, AND]",
                        jd_string_value(co));
    if (f && !jd_is_object(f)) return legacy_type_error(f, "Map");
    if (jd_object_size(f) == 0)
        return kura_err(KURA_E_INVALID, "ConditionalOperator cannot be used without Filter or "
                                        "Expected");
    if (jd_object_size(f) == 1)
        return kura_err(KURA_E_INVALID, "ConditionalOperator can only be used when Filter or "
                                        "Expected has two or more elements");
    *any_out = !strcmp(jd_string_value(co), "OR");
    return KURA_OK;
}

/* AttributesToGet with a Select that returns other attributes or none. */
static kura_status lcheck_select(const jd_t *req)
{
    jd_t *sel = legacy_get(req, "Select");
    if (!legacy_get(req, "AttributesToGet") || !jd_is_string(sel)) return KURA_OK;
    const char *s = jd_string_value(sel);
    if (!strcmp(s, "ALL_ATTRIBUTES") || !strcmp(s, "ALL_PROJECTED_ATTRIBUTES") ||
        !strcmp(s, "COUNT"))
        return kura_err(KURA_E_INVALID,
                        "Cannot specify the AttributesToGet when choosing to get %s",
                        strcmp(s, "COUNT") ? s : "only the Count");
    return KURA_OK;
}

/* ---- Operations ------------------------------------------------------------------------------ */

static const char *const lx_cond[] = {"ConditionExpression", NULL};
static const char *const ll_cond[] = {"Expected", NULL};
static const char *const lx_update[] = {"UpdateExpression", "ConditionExpression", NULL};
static const char *const ll_update[] = {"AttributeUpdates", "Expected", NULL};
static const char *const lx_query[] = {"ProjectionExpression", "FilterExpression",
                                       "KeyConditionExpression", NULL};
static const char *const ll_query[] = {"AttributesToGet", "QueryFilter", "ConditionalOperator",
                                       "KeyConditions", NULL};
static const char *const lx_scan[] = {"ProjectionExpression", "FilterExpression", NULL};
static const char *const ll_scan[] = {"AttributesToGet", "ScanFilter", "ConditionalOperator", NULL};
static const char *const lx_get[] = {"ProjectionExpression", NULL};
static const char *const ll_get[] = {"AttributesToGet", NULL};
static const char *const lrm_put[] = {"Expected", "ConditionalOperator", NULL};
static const char *const lrm_update[] = {"Expected", "ConditionalOperator", "AttributeUpdates",
                                         NULL};

/* PutItem, DeleteItem and UpdateItem: Expected and AttributeUpdates. */
static kura_status lrewrite_write(jd_t *req, bool update)
{
    bool any;
    legacy_gen g;
    jd_t *updates = update ? legacy_get(req, "AttributeUpdates") : NULL,
           *exp = legacy_get(req, "Expected");
    kura_status st = lcheck_params(req, update ? lx_update : lx_cond, update ? ll_update : ll_cond);
    if (!st) st = lcheck_condop(req, "Expected", &any);
    if (st || (!updates && !exp)) return st;
    if ((st = lgen_init(&g, req)) == KURA_OK && updates)
        st = lupdates_translate(&g, updates, lgen_expr(&g, "UpdateExpression"));
    if (!st && exp)
        st = legacy_conds_translate(&g, LC_EXPECTED, "expected", exp, any,
                                    lgen_expr(&g, "ConditionExpression"));
    if (!st) st = lgen_commit(&g, req, update ? lrm_update : lrm_put);
    lgen_free(&g);
    return st;
}

/* Query (filter "QueryFilter") and Scan ("ScanFilter"). */
static kura_status lrewrite_read(jd_t *req, bool query)
{
    const char *fname = query ? "QueryFilter" : "ScanFilter";
    jd_t *atg = legacy_get(req, "AttributesToGet"), *filter = legacy_get(req, fname);
    jd_t *keys = query ? legacy_get(req, "KeyConditions") : NULL;
    bool any;
    legacy_gen g;
    kura_status st = lcheck_params(req, query ? lx_query : lx_scan, query ? ll_query : ll_scan);
    if (!st) st = lcheck_condop(req, fname, &any);
    if (!st) st = lcheck_select(req);
    if (st || (!atg && !filter && !keys)) return st;
    if ((st = lgen_init(&g, req)) == KURA_OK && filter)
        st = legacy_conds_translate(&g, LC_FILTER, query ? "queryFilter" : "scanFilter", filter,
                                    any, lgen_expr(&g, "FilterExpression"));
    if (!st && atg)
        st = lproj_translate(&g, atg, "attributesToGet", lgen_expr(&g, "ProjectionExpression"));
    if (!st && keys)
        st = legacy_conds_translate(&g, LC_KEY, "keyConditions", keys, false,
                                    lgen_expr(&g, "KeyConditionExpression"));
    if (!st) st = lgen_commit(&g, req, query ? ll_query : ll_scan);
    lgen_free(&g);
    return st;
}

/* GetItem, and one table of a BatchGetItem (`path` names its AttributesToGet in messages). */
static kura_status lrewrite_get(jd_t *req, const char *path)
{
    jd_t *atg = legacy_get(req, "AttributesToGet");
    legacy_gen g;
    kura_status st = lcheck_params(req, lx_get, ll_get);
    if (st || !atg) return st;
    if ((st = lgen_init(&g, req)) == KURA_OK)
        st = lproj_translate(&g, atg, path, lgen_expr(&g, "ProjectionExpression"));
    if (!st) st = lgen_commit(&g, req, ll_get);
    lgen_free(&g);
    return st;
}

/* BatchGetItem: each table of RequestItems. The tables are rewritten in a copy that replaces
 * RequestItems only when all of them succeeded. */
static kura_status lrewrite_batch_get(jd_t *req)
{
    jd_t *items = legacy_get(req, "RequestItems"), *table;
    const char *name;
    bool legacy = false;
    kura_status st = KURA_OK;
    if (!jd_is_object(items))
        return KURA_OK; /* the engine reports a missing or malformed RequestItems */
    jd_object_foreach(items, name, table)
    {
        if (jd_is_object(table) && (st = lcheck_params(table, lx_get, ll_get)) != KURA_OK)
            return st;
        legacy = legacy || (jd_is_object(table) && jd_object_get(table, "AttributesToGet"));
    }
    if (!legacy) return KURA_OK;
    jd_t *copy = jd_deep_copy(jd_doc_of(req), items);
    if (!copy) return legacy_nomem();
    jd_object_foreach(copy, name, table)
    {
        char path[300];
        snprintf(path, sizeof(path), "requestItems.%.255s.member.attributesToGet", name);
        if (jd_is_object(table) && (st = lrewrite_get(table, path)) != KURA_OK) break;
    }
    if (!st && jd_object_set(req, "RequestItems", copy)) st = legacy_nomem();
    return st;
}

kura_status legacy_rewrite(const char *op, jd_t *req)
{
    if (!jd_is_object(req)) return KURA_OK; /* the caller rejects a body that is not an object */
    if (!strcmp(op, "PutItem") || !strcmp(op, "DeleteItem")) return lrewrite_write(req, false);
    if (!strcmp(op, "UpdateItem")) return lrewrite_write(req, true);
    if (!strcmp(op, "Query") || !strcmp(op, "Scan"))
        return lrewrite_read(req, !strcmp(op, "Query"));
    if (!strcmp(op, "GetItem")) return lrewrite_get(req, "attributesToGet");
    if (!strcmp(op, "BatchGetItem")) return lrewrite_batch_get(req);
    return KURA_OK;
}
