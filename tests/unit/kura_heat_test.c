/*
 * kura_heat_test.c - This file contains the tests of `kura heat`'s renderers (kura_heat.h):
 * the text report of a fixture (heat_fixture.h) line by line (the hot key's bar against the
 * limit, an over-limit key, a two-attribute key, the verdict, the offline note), that a key's
 * control characters never reach the output raw, that what is not a heat report is refused;
 * and that the PNG is a valid PNG of the stated size, read back with cairo, with the hot bar
 * drawn.
 */
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "heat_fixture.h"
#include "tools/kura_heat.h"

/* The text of a report (NUL-terminated, malloc'ed). */
static char *text_of(const char *json, bool offline)
{
    kbuf out = KBUF_INIT;
    char err[200];
    kura_status s = kura_heat_text(json, strlen(json), offline, &out, err, sizeof err);
    if (s != KURA_OK) fail_msg("kura_heat_text: %s: %s", kura_status_str(s), err);
    assert_true(kbuf_append(&out, "", 1));
    return (char *)out.data;
}

static void test_hot_key_line(void **state)
{
    (void)state;
    char *t = text_of(heat_fixture, false);
    char bar[KURA_HEAT_BAR_WIDTH + 1];
    memset(bar, '#', 38); /* 96% of 40 */
    memset(bar + 38, ' ', 2);
    bar[KURA_HEAT_BAR_WIDTH] = '\0';
    char want[256];
    snprintf(want, sizeof want, "\n  ACTIVE                             0.0     960.0      1,204  %s"
                                "| W 96%%\n", bar);
    if (!strstr(t, want)) fail_msg("no line\n%s\nin\n%s", want, t);
    assert_non_null(strstr(t, "\nOrders / GSI StatusIndex (gsi, PAY_PER_REQUEST)\n"
                              "  rate 0.0 RCU/s 930.0 WCU/s; peak second 0.0 / 1000.0; "
                              "throttled 0 reads, 1,204 writes\n"));
    free(t);
}

static void test_over_limit_and_items(void **state)
{
    (void)state;
    char *t = text_of(heat_fixture, false);
    char bar[KURA_HEAT_BAR_WIDTH + 1];
    memset(bar, '#', KURA_HEAT_BAR_WIDTH);
    bar[KURA_HEAT_BAR_WIDTH] = '\0';
    char want[256];
    snprintf(want, sizeof want, "  42%*s", 26, "");
    assert_non_null(strstr(t, want));
    snprintf(want, sizeof want, "%s> W 150%%, 1500%% of provisioned\n", bar);
    if (!strstr(t, want)) fail_msg("no %s in\n%s", want, t);
    assert_non_null(strstr(t, "\n  pk=dev-7, day=20 "));
    assert_non_null(strstr(t, "  throttled keys: 42 (4)\n"));
    assert_non_null(strstr(t, "  largest collections (bytes): dev-7 (123,456)\n"));
    assert_non_null(strstr(t, "; provisioned 5 RCU, 100 WCU\n"));
    free(t);
}

static void test_verdict(void **state)
{
    (void)state;
    char *t = text_of(heat_fixture, false);
    assert_non_null(strstr(t, "\n  ! GSI StatusIndex: key ACTIVE takes 96% of its partition's "
                              "write limit; 1,204 writes throttled in the last minute\n"));
    assert_null(strstr(t, "no key near a limit"));
    assert_null(strstr(t, "no live traffic"));
    free(t);
    t = text_of(heat_fixture, true);
    assert_non_null(strstr(t, "\nno live traffic: the rates come from a running kura-server "
                              "(--server)\n"));
    /* offline: the tables and indexes, provisioned throughput and collections, no rates */
    assert_non_null(strstr(t, "\nEvents (table, PROVISIONED)\n  provisioned 5 RCU, 100 WCU\n"
                              "  largest collections (bytes): dev-7 (123,456)\n"));
    assert_non_null(strstr(t, "\nOrders / GSI StatusIndex (gsi, PAY_PER_REQUEST)\n"));
    assert_null(strstr(t, "rate "));
    assert_null(strstr(t, "ACTIVE"));
    free(t);
}

static void test_odd_key_escaped(void **state)
{
    (void)state;
    char *t = text_of(heat_fixture, false);
    /* the key column is 28 bytes: the value cut with "..." */
    assert_non_null(strstr(t, "\n  line1\\x0aline2\\x1b[31m<sc... "));
    assert_null(strchr(t, '\x1b'));
    for (char *line = t; (line = strstr(line, "line1")) != NULL; line++)
        assert_true(line[5] == '\\');
    free(t);
}

static void test_empty_and_invalid(void **state)
{
    (void)state;
    char *t = text_of(heat_empty, false);
    assert_string_equal(t, "kura heat: window 60 s, throttling off; per partition-key value at "
                           "most 3,000 RCU and 1,000 WCU a second\nno tables\n");
    free(t);
    kbuf out = KBUF_INIT;
    char err[200] = "";
    assert_int_equal(kura_heat_text("[1]", 3, false, &out, err, sizeof err), KURA_E_INVALID);
    assert_non_null(strstr(err, "not a heat report"));
    assert_int_equal(kura_heat_text("{\"targets\":", 11, false, &out, err, sizeof err),
                     KURA_E_INVALID);
    kbuf_free(&out);
}

/* Whether the image has a pixel of exactly this colour (RGB24). */
static bool has_colour(cairo_surface_t *sf, uint32_t rgb)
{
    cairo_surface_flush(sf);
    const unsigned char *d = cairo_image_surface_get_data(sf);
    int w = cairo_image_surface_get_width(sf), h = cairo_image_surface_get_height(sf);
    int stride = cairo_image_surface_get_stride(sf);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if ((((const uint32_t *)(d + (size_t)y * stride))[x] & 0xffffff) == rgb) return true;
    return false;
}

static void test_png(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("kura_heat_png");
    char path[4096], err[300];
    snprintf(path, sizeof path, "%s/heat.png", dir);
    int w = 0, h = 0, ew = 0, eh = 0;
    assert_kura_ok(kura_heat_png(heat_fixture, strlen(heat_fixture), path, &w, &h, err,
                                 sizeof err));
    cairo_surface_t *sf = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(sf), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_image_surface_get_width(sf), KURA_HEAT_PNG_WIDTH);
    assert_int_equal(w, KURA_HEAT_PNG_WIDTH);
    assert_int_equal(cairo_image_surface_get_height(sf), h);
    assert_true(has_colour(sf, 0xc62828)); /* the bars of the keys past 80% */
    assert_true(has_colour(sf, 0xe65100)); /* the write line */
    cairo_surface_destroy(sf);
    /* no targets: only the header, shorter */
    assert_kura_ok(kura_heat_png(heat_empty, strlen(heat_empty), path, &ew, &eh, err, sizeof err));
    sf = cairo_image_surface_create_from_png(path);
    assert_int_equal(cairo_surface_status(sf), CAIRO_STATUS_SUCCESS);
    assert_int_equal(cairo_image_surface_get_height(sf), eh);
    assert_true(eh > 0 && eh < h);
    assert_false(has_colour(sf, 0xc62828));
    cairo_surface_destroy(sf);
    snprintf(path, sizeof path, "%s/no/such/dir/heat.png", dir);
    assert_int_equal(kura_heat_png(heat_fixture, strlen(heat_fixture), path, &w, &h, err,
                                   sizeof err),
                     KURA_E_IO);
    assert_non_null(strstr(err, "cannot write the PNG"));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hot_key_line),     cmocka_unit_test(test_over_limit_and_items),
        cmocka_unit_test(test_verdict),          cmocka_unit_test(test_odd_key_escaped),
        cmocka_unit_test(test_empty_and_invalid), cmocka_unit_test(test_png),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    /* cairo's and fontconfig's caches, so that a leak check (valgrind, the ASan build's
     * LeakSanitizer) sees only what the renderers leak */
    cairo_debug_reset_static_data();
    FcFini();
    return failed;
}
