/*
 * json.c - This file contains the results files' JSON writer (contract in json.h), on YAJL's
 * generator.
 *
 * YAJL does the structure (commas, indentation, the state checks behind json.h's asserts)
 * and the string escapes. Three things it does not do as the files need, done here:
 *
 *   - Numbers. yajl_gen_integer takes a long long (a uint64_t above 2^63 would not fit)
 *     and yajl_gen_double prints 20 significant digits (0.1 as 0.10000000000000000555) and
 *     refuses NaN and infinities. Numbers are therefore formatted here ("%llu", "%.10g")
 *     and handed to yajl_gen_number, which writes its text as given; non-finite ones
 *     become yajl_gen_null.
 *   - Empty containers. YAJL's beautifier prints an empty array as "[", a blank line, and
 *     "]" on a third line. So a container is opened in YAJL only when its first member
 *     arrives; one that closes with none is written as the text "[]" or "{}" through
 *     yajl_gen_number, which YAJL places like any other value.
 *   - Invalid UTF-8. With yajl_gen_validate_utf8 YAJL refuses such a string without
 *     writing anything; it is then written again with its bytes >= 0x80 as '?'.
 *
 * So the output is byte for byte the layout of the results files already in docs/bench/,
 * except in strings with non-ASCII bytes (written as UTF-8 now, where each byte >= 0x80 was
 * escaped as \u00XX, which turned UTF-8 into Latin-1 look-alikes) or with control
 * characters other than \n and \t (YAJL writes \r, \b and \f as such, the rest as \u001F
 * with upper-case hex).
 */
#include "bench/json.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void bj_print(void *ctx, const char *s, size_t len)
{
    fwrite(s, 1, len, (FILE *)ctx);
}

bool bj_init(bench_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->gen = yajl_gen_alloc(NULL);
    if (j->gen == NULL)
        return false;
    yajl_gen_config(j->gen, yajl_gen_beautify, 1);
    yajl_gen_config(j->gen, yajl_gen_indent_string, "  ");
    yajl_gen_config(j->gen, yajl_gen_validate_utf8, 1);
    yajl_gen_config(j->gen, yajl_gen_print_callback, bj_print, (void *)f);
    return true;
}

void bj_free(bench_json *j)
{
    if (j->gen != NULL)
        yajl_gen_free(j->gen);
    j->gen = NULL;
}

/* Every yajl_gen status other than ok here is a misuse of this writer (json.h). */
static void bj_check(yajl_gen_status st)
{
    assert(st == yajl_gen_status_ok);
    (void)st;
}

static void bj_raw_string(bench_json *j, const char *s)
{
    size_t len = strlen(s);
    yajl_gen_status st = yajl_gen_string(j->gen, (const unsigned char *)s, len);
    if (st != yajl_gen_invalid_string) {
        bj_check(st);
        return;
    }
    char *ascii = malloc(len + 1);
    if (ascii == NULL) {
        bj_check(yajl_gen_string(j->gen, (const unsigned char *)"?", 1));
        return;
    }
    for (size_t i = 0; i < len; i++)
        ascii[i] = (unsigned char)s[i] >= 0x80 ? '?' : s[i];
    bj_check(yajl_gen_string(j->gen, (const unsigned char *)ascii, len));
    free(ascii);
}

/* Opens the pending container in YAJL: it has a member now. */
static void bj_flush(bench_json *j)
{
    if (!j->pending)
        return;
    j->pending = false;
    if (j->pending_key != NULL)
        bj_raw_string(j, j->pending_key);
    bj_check(j->pending_kind == '{' ? yajl_gen_map_open(j->gen) : yajl_gen_array_open(j->gen));
}

/* Starts a member: opens its container if that was pending, writes the key. */
static void bj_member(bench_json *j, const char *key)
{
    bj_flush(j);
    if (key != NULL)
        bj_raw_string(j, key);
}

static void bj_number(bench_json *j, const char *key, const char *text)
{
    bj_member(j, key);
    bj_check(yajl_gen_number(j->gen, text, strlen(text)));
}

static void bj_open(bench_json *j, const char *key, char kind)
{
    bj_flush(j);
    j->pending = true;
    j->pending_kind = kind;
    j->pending_key = key;
}

static void bj_close(bench_json *j, char kind)
{
    if (!j->pending) {
        bj_check(kind == '{' ? yajl_gen_map_close(j->gen) : yajl_gen_array_close(j->gen));
        return;
    }
    assert(j->pending_kind == kind);
    j->pending = false;
    bj_number(j, j->pending_key, kind == '{' ? "{}" : "[]");
}

void bj_object_begin(bench_json *j, const char *key)
{
    bj_open(j, key, '{');
}

void bj_object_end(bench_json *j)
{
    bj_close(j, '{');
}

void bj_array_begin(bench_json *j, const char *key)
{
    bj_open(j, key, '[');
}

void bj_array_end(bench_json *j)
{
    bj_close(j, '[');
}

void bj_string(bench_json *j, const char *key, const char *val)
{
    bj_member(j, key);
    bj_raw_string(j, val);
}

void bj_u64(bench_json *j, const char *key, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    bj_number(j, key, text);
}

void bj_double(bench_json *j, const char *key, double v)
{
    if (!isfinite(v)) {
        bj_member(j, key);
        bj_check(yajl_gen_null(j->gen));
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "%.10g", v);
    bj_number(j, key, text);
}
