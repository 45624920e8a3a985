/*
 * json.c - the streaming JSON writer (format and escaping rules in json.h).
 */
#include "bench/json.h"

#include <assert.h>
#include <math.h>

void bj_init(bench_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->comma[0] = false;
}

static void bj_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p >= 0x80)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Starts a member: the comma after the previous one, the newline, the indent, the key. */
static void bj_member(bench_json *j, const char *key)
{
    if (j->comma[j->depth])
        fputc(',', j->f);
    if (j->depth > 0)
        fputc('\n', j->f);
    j->comma[j->depth] = true;
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
    if (key != NULL) {
        bj_escaped(j->f, key);
        fputs(": ", j->f);
    }
}

static void bj_open(bench_json *j, const char *key, char c)
{
    bj_member(j, key);
    fputc(c, j->f);
    assert(j->depth + 1 < BENCH_JSON_MAX_DEPTH);
    j->depth++;
    j->comma[j->depth] = false;
}

static void bj_close(bench_json *j, char c)
{
    assert(j->depth > 0);
    bool had_members = j->comma[j->depth];
    j->depth--;
    if (had_members) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void bj_object_begin(bench_json *j, const char *key)
{
    bj_open(j, key, '{');
}

void bj_object_end(bench_json *j)
{
    bj_close(j, '}');
}

void bj_array_begin(bench_json *j, const char *key)
{
    bj_open(j, key, '[');
}

void bj_array_end(bench_json *j)
{
    bj_close(j, ']');
}

void bj_string(bench_json *j, const char *key, const char *val)
{
    bj_member(j, key);
    bj_escaped(j->f, val);
}

void bj_u64(bench_json *j, const char *key, uint64_t v)
{
    bj_member(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void bj_double(bench_json *j, const char *key, double v)
{
    bj_member(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.10g", v);
    else
        fputs("null", j->f);
}
