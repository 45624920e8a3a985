/*
 * expr.h - DynamoDB's expression language: one parser and one evaluator for
 * KeyConditionExpression, ConditionExpression, FilterExpression, UpdateExpression and
 * ProjectionExpression, with ExpressionAttributeNames (#n) and ExpressionAttributeValues (:v).
 *
 * Parsing happens in an expr_ctx that borrows the request's names and values maps and owns
 * every parsed tree (an arena freed by expr_ctx_free). A request parses each of its
 * expressions into the same context, then calls expr_check_unused() so that names or values
 * no expression used are reported, as DynamoDB does. Parsing resolves names and values:
 * a parsed tree holds attribute names as bytes and values as pointers into the borrowed
 * values map, so the maps must outlive the context.
 *
 * Evaluation (engine/expr/eval.c, update.c, project.c) is pure: it reads an item (a kura_value
 * map, or NULL for "no item") and builds new values; it never does I/O.
 *
 * Errors are KURA_E_INVALID with DynamoDB's message, e.g.
 *   Invalid ConditionExpression: Syntax error; token: "=", near: "a = = b"
 *   Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: status
 *   Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}
 * Thread safety: a context belongs to one thread; parsed trees may be read by any thread
 * while the context lives.
 */
#ifndef KURA_EXPR_H
#define KURA_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model/value.h"

/* The expression parameters, named as in DynamoDB's messages ("Invalid <kind>: ..."). */
typedef enum expr_type {
    EXPR_KEY_CONDITION,  /* KeyConditionExpression */
    EXPR_CONDITION,      /* ConditionExpression */
    EXPR_FILTER,         /* FilterExpression */
    EXPR_UPDATE,         /* UpdateExpression */
    EXPR_PROJECTION,     /* ProjectionExpression */
} expr_type;

/* One step of a document path: an attribute/map key name, or a list index [n]. */
typedef struct expr_path_elem {
    bool is_index;
    uint32_t index;   /* is_index */
    const char *name; /* !is_index: name_len bytes (not NUL-terminated), resolved from #n */
    uint32_t name_len;
} expr_path_elem;

/* A document path a.b[2].c: elems[0] is always a name (the top-level attribute). */
typedef struct expr_path {
    expr_path_elem *elems;
    uint32_t n;
} expr_path;

typedef enum expr_op {
    /* operands */
    EXPR_OP_PATH,          /* path */
    EXPR_OP_VALUE,         /* value (from ExpressionAttributeValues) */
    EXPR_OP_SIZE,          /* size(kids[0] = path) */
    /* update SET operands */
    EXPR_OP_PLUS,          /* kids[0] + kids[1] */
    EXPR_OP_MINUS,         /* kids[0] - kids[1] */
    EXPR_OP_IF_NOT_EXISTS, /* if_not_exists(kids[0] = path, kids[1]) */
    EXPR_OP_LIST_APPEND,   /* list_append(kids[0], kids[1]) */
    /* conditions */
    EXPR_OP_EQ, EXPR_OP_NE, EXPR_OP_LT, EXPR_OP_LE, EXPR_OP_GT, EXPR_OP_GE, /* kids[0], kids[1] */
    EXPR_OP_BETWEEN,       /* kids[0] BETWEEN kids[1] AND kids[2] */
    EXPR_OP_IN,            /* kids[0] IN (kids[1] .. kids[nkids-1]), 1..100 candidates */
    EXPR_OP_AND, EXPR_OP_OR, /* two kids */
    EXPR_OP_NOT,           /* one kid */
    EXPR_OP_ATTR_EXISTS,   /* attribute_exists(kids[0] = path) */
    EXPR_OP_ATTR_NOT_EXISTS,
    EXPR_OP_ATTR_TYPE,     /* attribute_type(kids[0] = path, kids[1] = value, an S type name) */
    EXPR_OP_BEGINS_WITH,   /* begins_with(kids[0], kids[1]) */
    EXPR_OP_CONTAINS,      /* contains(kids[0], kids[1]) */
} expr_op;

typedef struct expr_node {
    expr_op op;
    uint32_t nkids;
    struct expr_node **kids;
    expr_path path;          /* EXPR_OP_PATH */
    const kura_value *value; /* EXPR_OP_VALUE: borrowed from the values map */
} expr_node;

typedef enum expr_action_kind { EXPR_SET, EXPR_REMOVE, EXPR_ADD, EXPR_DELETE } expr_action_kind;

/* One update action: SET path = operand; REMOVE path; ADD path value; DELETE path value.
 * Actions are kept in the order written within each clause, clauses in the order written. */
typedef struct expr_action {
    expr_action_kind kind;
    expr_path path;
    expr_node *operand; /* SET: a value expression; ADD/DELETE: an EXPR_OP_VALUE; REMOVE: NULL */
} expr_action;

typedef struct expr_update {
    expr_action *actions;
    uint32_t n;
} expr_update;

typedef struct expr_projection {
    expr_path *paths;
    uint32_t n;
} expr_projection;

typedef struct expr_ctx expr_ctx;

/* ---- Parsing (engine/expr/lex.c, parse.c, names.c) ----------------------------------------- */

/* `names` (map "#n" -> S) and `values` (map ":v" -> value) may be NULL; both are borrowed and
 * must outlive the context. DynamoDB's checks of the maps themselves (empty map, name keys
 * not starting with '#', value keys not starting with ':', empty value...) happen here:
 * expr_ctx_new returns KURA_E_INVALID with its message. */
kura_status expr_ctx_new(const kura_value *names, const kura_value *values, expr_ctx **ctx_out);
void expr_ctx_free(expr_ctx *ctx);

/* KeyCondition, Condition and Filter expressions: a condition tree. Syntax, undefined names
 * and values, reserved words used bare, functions used with the wrong number or kind of
 * arguments, functions that are not allowed in that expression type, and operands of a type
 * that can never be right (e.g. size(:v) of a number value) are KURA_E_INVALID. */
kura_status expr_parse_condition(expr_ctx *ctx, expr_type type, const char *s,
                                 expr_node **root_out);
/* UpdateExpression; also reports overlapping or conflicting paths ("Two document paths
 * overlap with each other; must remove or rewrite one of these paths; path one: [a],
 * path two: [a, b]") and repeated clauses. */
kura_status expr_parse_update(expr_ctx *ctx, const char *s, expr_update **update_out);
/* ProjectionExpression; overlapping paths are an error as in DynamoDB. */
kura_status expr_parse_projection(expr_ctx *ctx, const char *s, expr_projection **proj_out);
/* After every expression of a request was parsed: KURA_E_INVALID if a name or value of the
 * maps was not used ("Value provided in ExpressionAttributeNames unused in expressions:
 * keys: {#a, #b}"). Names are checked before values, as DynamoDB does. */
kura_status expr_check_unused(const expr_ctx *ctx);

/* ---- Evaluation (engine/expr/eval.c) ------------------------------------------------------ */

/* Resolves a document path in `item` (a map; NULL = no item): the value or NULL. */
const kura_value *expr_path_get(const kura_value *item, const expr_path *path);

/* Evaluates a condition against `item` (NULL: the item does not exist). Comparisons between
 * different types are false, as in DynamoDB, not errors. */
bool expr_eval_condition(const expr_node *cond, const kura_value *item);

/* ---- Key conditions (engine/expr/keycond.c) ----------------------------------------------- */

/* One term of a key condition: `name op v1 [AND v2]`. */
typedef struct expr_key_term {
    const char *name;
    uint32_t name_len;
    expr_op op; /* EQ, LT, LE, GT, GE, BETWEEN, BEGINS_WITH */
    const kura_value *v1, *v2;
} expr_key_term;

/* Flattens a parsed KeyConditionExpression (terms joined by AND only, each a comparison of a
 * top-level attribute with a value, BETWEEN or begins_with) into at most `cap` terms, in the
 * order written. The caller matches the terms against its key schema. Errors (KURA_E_INVALID,
 * DynamoDB's messages): OR/NOT/IN/<>/functions other than begins_with ("Invalid
 * KeyConditionExpression: ..."), a nested path, a term that compares two paths or two values,
 * the same attribute twice ("KeyConditionExpressions must only contain one condition per
 * key"), more than `cap` terms. */
kura_status expr_key_terms(const expr_node *root, expr_key_term *terms_out, uint32_t cap,
                           uint32_t *n_out);

/* ---- Updates (engine/expr/update.c) ------------------------------------------------------- */

/* Applies `u` to *item in place (a map holding at least the key; for a new item only the
 * key). All SET operands are evaluated against the item as it was before the update, as
 * DynamoDB does. Errors are KURA_E_INVALID with DynamoDB's messages: "The provided
 * expression refers to an attribute that does not exist in the item" (a missing operand
 * path), "An operand in the update expression has an incorrect data type" (a + on non
 * numbers, ADD/DELETE type mismatches, list_append of non-lists), "The document path provided
 * in the update expression is invalid for update" (a missing parent, an index into a
 * non-list), number overflow/precision messages from num_add/num_sub. On error *item may be
 * partially updated: callers apply updates to a copy. */
kura_status expr_apply_update(const expr_update *u, kura_value *item);

/* Whether any action of `u` writes the top-level attribute `name` (to reject updates of key
 * attributes: "Cannot update attribute <name>. This attribute is part of the key"). */
bool expr_update_touches(const expr_update *u, const char *name, size_t name_len);

/* Whether `u` creates a missing item: DynamoDB's UpdateItem creates one only when an action
 * SETs or ADDs something; REMOVE and DELETE alone on a missing item change nothing. */
bool expr_update_creates(const expr_update *u);

/* ReturnValues UPDATED_OLD / UPDATED_NEW: a new map (dst empty) holding, from `item`, only
 * the values at the paths the update's actions named, nested as in the item (SET a.b = 1
 * returns {"a": {"M": {"b": ...}}}). Paths missing in `item` are left out. */
kura_status expr_updated_attributes(const expr_update *u, const kura_value *item,
                                    kura_value *dst);

/* ---- Projection (engine/expr/project.c) --------------------------------------------------- */

/* A new map (dst empty) with only the projected paths of `item`, nested as in the item;
 * list elements picked by index keep their relative order and are compacted, as DynamoDB
 * does ("a[1], a[3]" returns a two-element list). */
kura_status expr_project(const expr_projection *p, const kura_value *item, kura_value *dst);

#endif
