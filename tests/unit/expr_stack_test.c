/*
 * expr_stack_test.c - no expression can exhaust a stack (issue 14: expr_parse_fuzz found ~1,500
 * '(' overflowing the parser's recursion under ASan).
 *
 * This file contains tests that parse, check and evaluate the deepest expressions kura accepts,
 * and input nested past its limit, on a thread whose stack is 256 KiB: smaller than a
 * kura-server serving thread's, and 32 times smaller than the main thread's that the fuzzer
 * uses. The old parser recursed once per '(' and once per AND, OR and NOT through several
 * functions, so these inputs crashed it with SIGSEGV on this thread. Each case states the
 * result DynamoDB gives (checked against DynamoDB Local 1.25.1).
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr.h"

#define STACK_BYTES (256 * 1024)
#define BUF_BYTES 16384

static kura_value *st_values;

/* cmocka's assertions must not fail on another thread (they longjmp to the main thread's
 * frame): the cases record their first failure here and the main thread reports it. */
static char st_failure[1024];

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond) && !st_failure[0]) {                                                     \
            int n_ = snprintf(st_failure, sizeof st_failure, "line %d: ", __LINE__);          \
            snprintf(st_failure + n_, sizeof st_failure - (size_t)n_, __VA_ARGS__);          \
        }                                                                                    \
    } while (0)

/* out = prefix x n, middle, suffix x n */
static const char *repeat3(char *out, const char *prefix, int n, const char *middle,
                           const char *suffix)
{
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(out + off, BUF_BYTES - off, "%s", prefix);
    off += (size_t)snprintf(out + off, BUF_BYTES - off, "%s", middle);
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(out + off, BUF_BYTES - off, "%s", suffix);
    CHECK(off < BUF_BYTES - 1, "buffer too small");
    return out;
}

/* Parses a condition: KURA_OK, or the error message in msg. */
static kura_status parse_cond(expr_type type, const char *s, char *msg, bool eval_expect,
                              bool do_eval)
{
    expr_ctx *ctx;
    if (expr_ctx_new(NULL, st_values, &ctx) != KURA_OK)
        return KURA_E_NOMEM;
    expr_node *root = NULL;
    kura_status st = expr_parse_condition(ctx, type, s, &root);
    if (st != KURA_OK) {
        snprintf(msg, 512, "%s", kura_last_error());
    } else if (do_eval) {
        kura_value *item = kura_value_map();
        kura_value_map_put(item, "a", 1, kura_value_s("x", 1));
        CHECK(expr_eval_condition(root, item) == eval_expect, "evaluated to %d",
              !eval_expect);
        kura_value_free(item);
    }
    expr_ctx_free(ctx);
    return st;
}

static void expect_error(expr_type type, const char *s, const char *want)
{
    char msg[512] = "";
    kura_status st = parse_cond(type, s, msg, false, false);
    CHECK(st == KURA_E_INVALID && strcmp(msg, want) == 0,
          "expression of %zu bytes\n  want: %s\n  got:  %s (%s)", strlen(s), want, msg,
          kura_status_str(st));
}

static void *run_cases(void *arg)
{
    char *buf = malloc(BUF_BYTES);
    char *upd = malloc(BUF_BYTES);
    char msg[512] = "";
    if (!buf || !upd)
        abort();

    /* The deepest condition DynamoDB accepts: 299 NOTs each in parentheses around a
     * parenthesised comparison of a parenthesised value: 301 levels, 300 operators. */
    repeat3(buf, "(NOT ", 299, "(a = (:v))", ")"); /* a is "x", :v is "y": NOT^299 false */
    CHECK(parse_cond(EXPR_CONDITION, buf, msg, true, true) == KURA_OK, "%s", msg);
    repeat3(buf, "(NOT ", 298, "(a = (:v))", ")");
    CHECK(parse_cond(EXPR_FILTER, buf, msg, false, true) == KURA_OK, "%s", msg);
    /* One more NOT: 301 operators. */
    repeat3(buf, "(NOT ", 300, "(a = (:v))", ")");
    expect_error(EXPR_CONDITION, buf,
                 "Invalid ConditionExpression: The expression contains too many operators; "
                 "operator count: 301");

    /* At the nesting limit (400) the parse runs to the end and finds the redundant pairs;
     * past it the same answer comes from the tokens. DynamoDB: redundant parentheses. */
    const char *redundant = "Invalid ConditionExpression: The expression has redundant parentheses;";
    repeat3(buf, "(", 400, "a = :v", ")");
    expect_error(EXPR_CONDITION, buf, redundant);
    repeat3(buf, "(", 401, "a = :v", ")");
    expect_error(EXPR_CONDITION, buf, redundant);
    repeat3(buf, "(", 2000, "a = :v", ")");
    expect_error(EXPR_CONDITION, buf, redundant);
    strcpy(buf, "a = ");
    repeat3(buf + 4, "(", 2000, ":v", ")");
    expect_error(EXPR_CONDITION, buf, redundant);

    /* The fuzzer's input: 1,500 '(' and nothing else. */
    memset(buf, '(', 1500);
    buf[1500] = 0;
    expect_error(EXPR_CONDITION, buf,
                 "Invalid ConditionExpression: Syntax error; token: \"(\", near: \"(((\"");

    /* Nesting without redundant pairs, past the limit: 410 NOTs in parentheses. DynamoDB
     * counts operators to 301. */
    repeat3(buf, "(NOT ", 410, "a = :v", ")");
    expect_error(EXPR_CONDITION, buf,
                 "Invalid ConditionExpression: The expression contains too many operators; "
                 "operator count: 301");

    /* Long chains without parentheses: 1,000 NOTs, 400 ANDs, 400 ORs, within 4 KB. */
    repeat3(buf, "NOT ", 1000, "a = :v", "");
    expect_error(EXPR_FILTER, buf,
                 "Invalid FilterExpression: The expression contains too many operators; "
                 "operator count: 301");
    repeat3(buf, "a=:v AND ", 400, "a=:v", "");
    expect_error(EXPR_CONDITION, buf,
                 "Invalid ConditionExpression: The expression contains too many operators; "
                 "operator count: 301");
    repeat3(buf, "a=:v OR ", 400, "a=:v", "");
    expect_error(EXPR_CONDITION, buf,
                 "Invalid ConditionExpression: The expression contains too many operators; "
                 "operator count: 301");
    /* 150 ANDs: accepted and evaluated. */
    repeat3(buf, "a = :v AND ", 149, "a = :v", "");
    CHECK(parse_cond(EXPR_CONDITION, buf, msg, false, true) == KURA_OK, "%s", msg);
    repeat3(buf, "a <> :v AND ", 149, "a <> :v", "");
    CHECK(parse_cond(EXPR_CONDITION, buf, msg, true, true) == KURA_OK, "%s", msg);

    /* Key conditions go through the same parser. */
    repeat3(buf, "(", 1000, "a = :v", ")");
    expect_error(EXPR_KEY_CONDITION, buf,
                 "Invalid KeyConditionExpression: The expression has redundant parentheses;");

    /* Update expressions: nested function calls to the size limit (accepted by DynamoDB:
     * there is no operator limit in an update) are parsed and applied; nested parentheses
     * are redundant. */
    expr_ctx *ctx;
    expr_update *u;
    if (expr_ctx_new(NULL, st_values, &ctx) != KURA_OK)
        abort();
    repeat3(buf, "if_not_exists(a, ", 225, ":v", ")");
    snprintf(upd, BUF_BYTES, "SET b = %s", buf);
    CHECK(strlen(upd) <= 4096, "update of %zu bytes", strlen(upd));
    kura_status st = expr_parse_update(ctx, upd, &u);
    CHECK(st == KURA_OK, "nested if_not_exists: %s", kura_last_error());
    if (st == KURA_OK) {
        kura_value *item = kura_value_map();
        CHECK(expr_apply_update(u, item) == KURA_OK, "apply: %s", kura_last_error());
        CHECK(kura_value_get(item, "b", 1) != NULL, "b not set");
        kura_value_free(item);
    }
    expr_ctx_free(ctx);
    repeat3(buf, "(", 1500, ":v", ")");
    snprintf(upd, BUF_BYTES, "SET b = %s", buf);
    if (expr_ctx_new(NULL, st_values, &ctx) != KURA_OK)
        abort();
    st = expr_parse_update(ctx, upd, &u);
    CHECK(st == KURA_E_INVALID && strcmp(kura_last_error(), "Invalid UpdateExpression: The "
                                         "expression has redundant parentheses;") == 0,
          "1,500 parentheses in an update: %s", kura_last_error());
    expr_ctx_free(ctx);
    free(upd);
    free(buf);
    return NULL;
}

/* Runs every case on a thread with a 256 KiB stack. */
static void test_deep_expressions_on_a_small_stack(void **state)
{
    pthread_attr_t attr;
    pthread_t th;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, STACK_BYTES), 0);
    assert_int_equal(pthread_create(&th, &attr, run_cases, NULL), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
    if (st_failure[0])
        fail_msg("%s", st_failure);
}

static int setup(void **state)
{
    st_values = kura_value_map();
    return kura_value_map_put(st_values, ":v", 2, kura_value_s("y", 1)) == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    kura_value_free(st_values);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_expressions_on_a_small_stack),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
