/*
 * api_ctx_util.h - the helpers of the tests that run kura_execute_ctx() in a request context
 * (api_region_test.c, api_table_arn_test.c): one database in a temporary directory per test
 * (setup/teardown, the directory named by API_CTX_DIR, defined before the include), and
 * requests in a region and account with assertions on the answer. Static helpers, included
 * by one test file each.
 */
#ifndef KURA_TESTS_API_CTX_UTIL_H
#define KURA_TESTS_API_CTX_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define CTX_HELPER static __attribute__((unused))
#define T "com.amazonaws.dynamodb.v20120810#"

static kura_db *db;
static char *dir;

CTX_HELPER int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp(API_CTX_DIR);
    return kura_open(dir, NULL, &db) == KURA_OK ? 0 : -1;
}

CTX_HELPER int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Runs `op` in `region` and `account` (both NULL: no context at all); the answer parsed
 * (json_decref it) and its status in *s_out. */
CTX_HELPER json_t *ctx_run(const char *region, const char *account, const char *op,
                           const char *body, kura_status *s_out)
{
    kura_request_context ctx = {.region = region, .account = account};
    char *out = NULL;
    size_t len = 0;
    *s_out =
        kura_execute_ctx(db, region || account ? &ctx : NULL, op, body, strlen(body), &out, &len);
    json_t *j = json_loads(out, 0, NULL);
    if (!j) fail_msg("%s: not JSON: %s", op, out);
    kura_free(out);
    return j;
}

/* Asserts success in `region`; the answer (json_decref it). */
CTX_HELPER json_t *ok(const char *region, const char *op, const char *body)
{
    kura_status s;
    json_t *j = ctx_run(region, NULL, op, body, &s);
    if (s != KURA_OK) {
        char *text = json_dumps(j, 0);
        fail_msg("%s in %s: %s\n  returned %s", op, region ? region : "(none)", body, text);
    }
    return j;
}

/* Asserts the error body {"__type": T type, "message": msg}. */
CTX_HELPER void ctx_err(const char *region, const char *account, const char *op, const char *body,
                        const char *type, const char *msg)
{
    kura_status s;
    json_t *j = ctx_run(region, account, op, body, &s);
    char full[128];
    snprintf(full, sizeof full, T "%s", type);
    const char *got_type = json_string_value(json_object_get(j, "__type"));
    const char *got_msg = json_string_value(json_object_get(j, "message"));
    if (s == KURA_OK || !got_type || strcmp(got_type, full) != 0 || !got_msg ||
        strcmp(got_msg, msg) != 0)
        fail_msg("%s %s\n  got      %s: %s\n  expected %s: %s", op, body,
                 got_type ? got_type : "(none)", got_msg ? got_msg : "(none)", full, msg);
    json_decref(j);
}

/* The string at a dotted path of o ("Table.GlobalSecondaryIndexes.0.IndexArn": numbers index
 * arrays; keys may not hold '.', so ARN keys are looked up with json_object_get directly). */
CTX_HELPER const char *str(const json_t *o, const char *path)
{
    char key[64];
    const char *p = path;
    while (o && *p) {
        size_t n = strcspn(p, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        o = key[0] >= '0' && key[0] <= '9' ? json_array_get(o, (size_t)atoi(key))
                                           : json_object_get(o, key);
        p += n + (p[n] == '.');
    }
    return json_string_value(o);
}

/* Asserts the string at `path` of o is `want`. */
CTX_HELPER void expect(const json_t *o, const char *path, const char *want)
{
    const char *got = str(o, path);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s\n  got      %s\n  expected %s", path, got ? got : "(none)", want);
}

#endif
