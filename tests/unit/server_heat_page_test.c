/*
 * server_heat_page_test.c - This file contains the tests of the heat page's server-side
 * rendering (server/heat_page.h): the fixture's verdict at the top and its hot key's row, an
 * odd key (markup, a newline, an escape sequence) escaped so that it can never become markup,
 * the page's one inline script and no external resource, and what is not a heat report
 * refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "heat_fixture.h"
#include "server/heat_page.h"

static char *page_of(const char *json)
{
    kbuf out = KBUF_INIT;
    char err[200];
    kura_status s = heat_page_render(json, strlen(json), &out, err, sizeof err);
    if (s != KURA_OK) fail_msg("heat_page_render: %s: %s", kura_status_str(s), err);
    assert_true(kbuf_append(&out, "", 1));
    return (char *)out.data;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_verdict_and_hot_key(void **state)
{
    (void)state;
    char *p = page_of(heat_fixture);
    const char *v = strstr(p, "<ul id=verdicts><li class=verdict>GSI StatusIndex: key ACTIVE "
                              "takes 96% of its partition&#39;s write limit; 1,204 writes "
                              "throttled in the last minute</li></ul>");
    assert_non_null(v);
    const char *first_target = strstr(p, "<section class=target>");
    assert_non_null(first_target);
    assert_true(v < first_target); /* the verdicts come first */
    assert_non_null(strstr(p, "<h2>Orders / GSI StatusIndex <small>gsi, PAY_PER_REQUEST"));
    assert_non_null(strstr(p, "<tr><td class=key>ACTIVE</td><td class=num>0.0</td>"
                              "<td class=num>960.0</td>"));
    assert_non_null(strstr(p, "<span style=\"width:96.0%\"></span></span> 96%</td>"));
    assert_non_null(strstr(p, "<td class=key>pk=dev-7, day=20</td>"));
    assert_non_null(strstr(p, "<td class=num>123,456</td>"));
    assert_non_null(strstr(p, "Window 60 s; throttling on; per partition-key value at most "
                              "3,000 RCU and 1,000 WCU a second."));
    free(p);
}

static void test_odd_key_escaped(void **state)
{
    (void)state;
    char *p = page_of(heat_fixture);
    assert_non_null(strstr(p, "<td class=key>line1\\x0aline2\\x1b[31m&lt;script&gt;alert(1)"
                              "&lt;/script&gt;</td>"));
    assert_null(strstr(p, "<script>alert"));
    assert_null(strchr(p, '\x1b'));
    assert_int_equal(count(p, "<script"), 1); /* the page's own, nothing from the report */
    assert_int_equal(count(p, "</script>"), 1);
    assert_null(strstr(p, "src="));  /* self-contained: nothing fetched but /kura/heat */
    assert_null(strstr(p, "href="));
    free(p);
}

static void test_html_escape(void **state)
{
    (void)state;
    kbuf b = KBUF_INIT;
    const char s[] = "a&b<c>d\"e'f\x01g";
    assert_true(heat_html_escape(&b, s, sizeof s - 1));
    assert_true(kbuf_append(&b, "", 1));
    assert_string_equal((char *)b.data, "a&amp;b&lt;c&gt;d&quot;e&#39;f\\x01g");
    kbuf_free(&b);
}

static void test_empty_and_invalid(void **state)
{
    (void)state;
    char *p = page_of(heat_empty);
    assert_non_null(strstr(p, "<li class=calm>No key near a limit and nothing throttled.</li>"));
    assert_non_null(strstr(p, "<p class=quiet>No tables.</p>"));
    assert_non_null(strstr(p, "throttling off"));
    free(p);
    kbuf out = KBUF_INIT;
    char err[200] = "";
    assert_int_equal(heat_page_render("{\"a\":1}", 7, &out, err, sizeof err), KURA_E_INVALID);
    assert_non_null(strstr(err, "not a heat report"));
    assert_int_equal(heat_page_render("nope", 4, &out, err, sizeof err), KURA_E_INVALID);
    kbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_and_hot_key),
        cmocka_unit_test(test_odd_key_escaped),
        cmocka_unit_test(test_html_escape),
        cmocka_unit_test(test_empty_and_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
