/*
 * api_mismatch_util.h - the helpers of api_mismatch_test.c and api_mismatch_wire_test.c: one
 * database in a temporary directory per test file, kura_execute() with assertions on the
 * exact response or error body, and request bodies with long generated strings. Included by
 * one test file each (static helpers; the ones a file does not use are marked unused).
 */
#ifndef KURA_TESTS_API_MISMATCH_UTIL_H
#define KURA_TESTS_API_MISMATCH_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MM_HELPER static __attribute__((unused))
#define T "com.amazonaws.dynamodb.v20120810#"
#define INVALID "One or more parameter values were invalid: "

static kura_db *db;
static char *dir;

#define T "com.amazonaws.dynamodb.v20120810#"
#define INVALID "One or more parameter values were invalid: "

MM_HELPER int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("api_mismatch");
    kura_options o;
    kura_options_init(&o); /* KURA_SYNC: a stream shows a write once it is durable */
    return kura_open(dir, &o, &db) == KURA_OK ? 0 : -1;
}

MM_HELPER int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Runs op on body[0..len); returns the status, *out the malloc'ed response. */
MM_HELPER kura_status run_len(const char *op, const char *body, size_t blen, char **out)
{
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, blen, out, &len);
    assert_non_null(*out);
    return s;
}

/* Asserts success; returns the response parsed (json_decref it). */
MM_HELPER json_t *ok_len(const char *op, const char *body, size_t blen)
{
    char *out = NULL;
    kura_status s = run_len(op, body, blen, &out);
    if (s != KURA_OK) fail_msg("%s %s\n  returned %s: %s", op, body, kura_status_str(s), out);
    json_t *j = json_loads(out, JSON_ALLOW_NUL, NULL);
    if (!j) fail_msg("%s: not JSON: %s", op, out);
    kura_free(out);
    return j;
}

MM_HELPER json_t *ok(const char *op, const char *body)
{
    return ok_len(op, body, strlen(body));
}

/* Asserts success and an exact response. */
MM_HELPER void ok_is(const char *op, const char *body, const char *want)
{
    char *out = NULL;
    kura_status s = run_len(op, body, strlen(body), &out);
    if (s != KURA_OK || strcmp(out, want) != 0)
        fail_msg("%s %s\n  returned %s: %s\n  expected %s", op, body, kura_status_str(s), out,
                 want);
    kura_free(out);
}

/* Asserts the error body {"__type": T type, "message": msg} (msg NULL: no message member;
 * msg "*": any message). */
MM_HELPER void err_len(const char *op, const char *body, size_t blen, kura_status want,
                    const char *type, const char *msg)
{
    char *out = NULL;
    kura_status s = run_len(op, body, blen, &out);
    json_t *j = json_loads(out, 0, NULL);
    if (s != want || !j)
        fail_msg("%s %.300s\n  returned %s: %s\n  expected %s %s", op, body, kura_status_str(s),
                 out, type, msg ? msg : "");
    char full[160];
    snprintf(full, sizeof full, "%s%s", strchr(type, '#') ? "" : T, type);
    const char *got_type = json_string_value(json_object_get(j, "__type"));
    const char *got_msg = json_string_value(json_object_get(j, "message"));
    bool msg_ok = msg ? (strcmp(msg, "*") == 0 ? got_msg != NULL
                                               : got_msg && strcmp(got_msg, msg) == 0)
                      : got_msg == NULL;
    if (!got_type || strcmp(got_type, full) != 0 || !msg_ok)
        fail_msg("%s %.300s\n  got      %s: %.400s\n  expected %s: %.400s", op, body, got_type,
                 got_msg, full, msg ? msg : "(no message)");
    json_decref(j);
    kura_free(out);
}

MM_HELPER void err(const char *op, const char *body, kura_status want, const char *type,
                const char *msg)
{
    err_len(op, body, strlen(body), want, type, msg);
}

MM_HELPER void invalid(const char *op, const char *body, const char *msg)
{
    err(op, body, KURA_E_INVALID, "ValidationException", msg);
}

/* The number of records a stream holds from its start (one shard: a fresh table). */
/* fmt with its %s replaced by a string of n 'x's. */
MM_HELPER char *with_value(const char *fmt, size_t n)
{
    char *v = malloc(n + 1);
    memset(v, 'x', n);
    v[n] = 0;
    char *b = NULL;
    if (asprintf(&b, fmt, v) < 0) fail_msg("nomem");
    free(v);
    return b;
}

#endif
