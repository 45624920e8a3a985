/*
 * legacy_int.h - what api/legacy.c (requests, AttributeUpdates, AttributesToGet) and
 * api/legacy_cond.c (conditions) share: AttributeValue types, the generator of "#lN"/":lN"
 * placeholders, and small JSON and text helpers. Internal to the legacy rewrite.
 */
#ifndef KURA_API_LEGACY_INT_H
#define KURA_API_LEGACY_INT_H

#include <stdbool.h>
#include <string.h>

#include "api/legacy.h"
#include "util/buf.h"
#include "util/status.h"

#define LMSG_PARAM "One or more parameter values were invalid: "

/* ---- Attribute value types ----------------------------------------------------------------- */

enum { LT_S, LT_N, LT_B, LT_BOOL, LT_NULL, LT_M, LT_L, LT_SS, LT_NS, LT_BS, LT_COUNT };
extern const char *const legacy_type_names[LT_COUNT]; /* "S", "N", ... "BS" */
#define LT_BIT(t) (1u << (t))
#define LT_SCALARS (LT_BIT(LT_S) | LT_BIT(LT_N) | LT_BIT(LT_B))
#define LT_SETS (LT_BIT(LT_SS) | LT_BIT(LT_NS) | LT_BIT(LT_BS))
#define LT_ANY ((1u << LT_COUNT) - 1)

/* A member, with JSON null treated as absent (DynamoDB ignores null members). */
static inline jd_t *legacy_get(const jd_t *o, const char *key)
{
    jd_t *v = jd_object_get(o, key);
    return jd_is_null(v) ? NULL : v;
}

static inline kura_status legacy_nomem(void)
{
    return kura_err(KURA_E_NOMEM, "out of memory");
}

/* Appends NUL-free text to an expression under construction. */
static inline bool legacy_put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

/* ---- Shared helpers (legacy_cond.c) ---------------------------------------------------- */

/* The message DynamoDB's deserializer gives for a member of the wrong JSON type (`want`:
 * "String", "Boolean", "List" or "Map"). DynamoDB sends it as a SerializationException; kura
 * has no such status and reports it as a ValidationException. */
kura_status legacy_type_error(const jd_t *got, const char *want);
/* Appends formatted placeholders/keywords (never user text; at most 255 bytes) to `b`. */
bool legacy_putf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Checks what DynamoDB checks of an AttributeValue before looking at its type: exactly one
 * datatype, and for N a valid number. The contents of S, B, sets, lists and maps are checked
 * by the engine, as for ExpressionAttributeValues. */
kura_status legacy_value_check(const jd_t *v);
/* The LT_ type of a value legacy_value_check() accepted. */
int legacy_value_type(const jd_t *v);

/* ---- Generated names and values (legacy.c) --------------------------------------------- */

#define LPH_MAX 16 /* "#l" / ":l", up to 10 digits, NUL */
#define LOUT_MAX 3 /* expressions one request may get (Query: key condition, filter, projection)   \
                    */

typedef struct legacy_gen {
    jd_doc *doc;                          /* the request's document: new nodes go there */
    const jd_t *user_names, *user_values; /* the request's maps, borrowed (may be NULL) */
    jd_t *names;   /* "#lN" -> attribute name, for ExpressionAttributeNames */
    jd_t *values;  /* ":lN" -> AttributeValue, for ExpressionAttributeValues */
    jd_t *by_attr; /* attribute name -> "#lN": one placeholder per distinct name */
    unsigned next_name, next_value;
    char empty_list[LPH_MAX]; /* ":lN" of {"L": []} once needed, else "" */
    struct {
        const char *param; /* e.g. "ConditionExpression" */
        kbuf text;
    } out[LOUT_MAX];
    int nout;
} legacy_gen;

/* The "#lN" placeholder of attribute `attr` into ph (LPH_MAX bytes): one per distinct name,
 * skipping the request's own names. */
kura_status legacy_gen_name(legacy_gen *g, const char *attr, size_t attr_len, char *ph);
/* A new ":lN" placeholder for value `v` (shared, not copied) into ph. */
kura_status legacy_gen_value(legacy_gen *g, jd_t *v, char *ph);

/* ---- Conditions (legacy_cond.c) -------------------------------------------------------- */

typedef enum legacy_cond_kind { LC_EXPECTED, LC_FILTER, LC_KEY } legacy_cond_kind;

/* Translates the conditions of map `conds` (Expected, QueryFilter, ScanFilter or
 * KeyConditions, named `param` in messages: "expected", "queryFilter"...) into one expression
 * appended to `out`: AND of all of them, or OR when `any`. Checks every condition as DynamoDB
 * does; KURA_E_INVALID with its message. */
kura_status legacy_conds_translate(legacy_gen *g, legacy_cond_kind kind, const char *param,
                                   const jd_t *conds, bool any, kbuf *out);

#endif
