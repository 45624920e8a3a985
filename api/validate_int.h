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
#define VLD_MAX_ERRORS 10

/* How many levels below the request the walk goes (pass 1's bound too, schema_types.c: past
 * DynamoDB's 32 levels of attribute values, which take two JSON levels each). */
#define VLD_MAX_DEPTH 96

/* Where a value is in the request, one step per level, rendered only for a message:
 * "keySchema.1.member.keyType" (members with their first letter lower-cased, list positions
 * from 1, map keys as they are). Steps live on the walk's stack. */
typedef struct vld_path {
    const struct vld_path *parent; /* NULL: a member of the request */
    const char *member;            /* a member name, or NULL */
    const char *key;               /* a map key, or NULL (then list position `index`) */
    size_t index;
} vld_path;

typedef struct vld_errors {
    char *msg[VLD_MAX_ERRORS]; /* "Value '...' at '...' failed to satisfy constraint: ..." */
    int n;
} vld_errors;

typedef struct vld_walk {
    vld_errors model;    /* the modelled constraints' violations */
    vld_errors semantic; /* the semantic checks' (table names, CreateTable's key schema),
                          * reported only when `model` is empty */
    bool nomem;
    bool quiet; /* count violations without writing messages */
    int depth;  /* of the value being walked */
} vld_walk;

/* Adds "Value <v> at '<path>' failed to satisfy constraint: <msg><more>" to list (v NULL:
 * "Value null"); v is rendered as a value of shape sid. Past VLD_MAX_ERRORS: nothing. */
void vld_error(vld_walk *w, vld_errors *list, const vld_path *at, const jd_t *v, unsigned sid,
               const char *msg, const char *more);
/* KURA_OK for an empty list, else KURA_E_INVALID with "N validation error(s) detected: a; b"
 * through api_err (KURA_E_NOMEM if w ran out of memory). */
kura_status vld_report(const vld_walk *w, const vld_errors *list);
void vld_walk_free(vld_walk *w);
/* Whether s[0..n) matches pattern p of model_pattern_eres (as Java's matches()). */
bool vld_pattern_ok(unsigned p, const char *s, size_t n);

#endif
