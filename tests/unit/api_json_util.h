/*
 * api_json_util.h - the helpers of the tests that run kura_execute() on one database in a
 * temporary directory per test (api_tags_test.c, api_settings_test.c, api_insights_test.c):
 * setup/teardown (the directory named by API_JSON_DIR, defined before the include), a
 * reopen, and requests with assertions on the answer. Static helpers, included by one test
 * file each.
 */
#ifndef KURA_TESTS_API_JSON_UTIL_H
#define KURA_TESTS_API_JSON_UTIL_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define JSON_HELPER static __attribute__((unused))
#define T "com.amazonaws.dynamodb.v20120810#"

static kura_db *db;
static char *dir;

JSON_HELPER int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp(API_JSON_DIR);
    return kura_open(dir, NULL, &db) == KURA_OK ? 0 : -1;
}

JSON_HELPER int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Closes and opens the database again (what must survive a restart). */
JSON_HELPER void reopen(void)
{
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, NULL, &db));
}

/* Asserts success; the answer (json_decref it). */
JSON_HELPER json_t *ok(const char *op, const char *body)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    if (s != KURA_OK) fail_msg("%s %s\n  returned %s: %s", op, body, kura_status_str(s), out);
    json_t *j = json_loads(out, 0, NULL);
    if (!j) fail_msg("%s: not JSON: %s", op, out);
    kura_free(out);
    return j;
}

/* Asserts the error `type` (without the prefix) with the message `msg` (NULL: any). */
JSON_HELPER void err(const char *op, const char *body, const char *type, const char *msg)
{
    char *out = NULL;
    size_t len = 0;
    kura_execute(db, op, body, strlen(body), &out, &len);
    json_t *j = json_loads(out, 0, NULL);
    char full[128];
    snprintf(full, sizeof full, T "%s", type);
    const char *got_type = j ? json_string_value(json_object_get(j, "__type")) : NULL;
    const char *got_msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
    if (!got_type || strcmp(got_type, full) != 0 || !got_msg || (msg && strcmp(got_msg, msg) != 0))
        fail_msg("%s %s\n  got      %s\n  expected %s: %s", op, body, out, full,
                 msg ? msg : "(any message)");
    json_decref(j);
    kura_free(out);
}

#endif
