/*
 * validate_int.h - internals of the model-driven request check (validate.c): where a value is
 * in the request, the violations collected so far, and how they become DynamoDB's message
 * (validate_msg.c).
 */
#ifndef KURA_API_VALIDATE_INT_H
#define KURA_API_VALIDATE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "api/jdoc.h"
#include "kura.h"

/* DynamoDB reports at most this many violations ("10 validation errors detected: ..."). */
#define VAL_MAX_ERRORS 10

/* Where a value is in the request, one step per level, rendered only for a message:
 * "keySchema.1.member.keyType" (members with their first letter lower-cased, list positions
 * from 1, map keys as they are). Steps live on the walk's stack. */
typedef struct val_path {
    const struct val_path *parent; /* NULL: a member of the request */
    const char *member;            /* a member name, or NULL */
    const char *key;               /* a map key, or NULL (then list position `index`) */
    size_t index;
} val_path;

typedef struct val_errors {
    char *msg[VAL_MAX_ERRORS]; /* "Value '...' at '...' failed to satisfy constraint: ..." */
    int n;
} val_errors;

typedef struct val_walk {
    val_errors model; /* the modelled constraints' violations */
    val_errors names; /* the semantic table-name check's, reported only without the above */
    bool nomem;
    bool quiet; /* count violations without writing messages */
} val_walk;

/* Adds "Value <v> at '<path>' failed to satisfy constraint: <msg><more>" to list (v NULL:
 * "Value null"); v is rendered as a value of shape sid. Past VAL_MAX_ERRORS: nothing. */
void val_error(val_walk *w, val_errors *list, const val_path *at, const jd_t *v, unsigned sid,
               const char *msg, const char *more);
/* KURA_OK for an empty list, else KURA_E_INVALID with "N validation error(s) detected: a; b"
 * through api_err (KURA_E_NOMEM if w ran out of memory). */
kura_status val_report(const val_walk *w, const val_errors *list);
void val_walk_free(val_walk *w);
/* Whether s[0..n) matches pattern p of model_pattern_eres (as Java's matches()). */
bool val_pattern_ok(unsigned p, const char *s, size_t n);

#endif
