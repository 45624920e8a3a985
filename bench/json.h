/*
 * json.h - a small streaming JSON writer for kura-bench's results file.
 *
 * Output is pretty-printed, one member per line. Strings are escaped ("\\", "\"", control
 * characters as \u00XX); bytes >= 0x80 are written as \u00XX too, so the file is valid
 * JSON (ASCII) whatever the bytes of a path or CPU name. Numbers that are not finite become
 * null. Nesting deeper than BENCH_JSON_MAX_DEPTH is a programmer error (assert).
 */
#ifndef KURA_BENCH_JSON_H
#define KURA_BENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_JSON_MAX_DEPTH 16

typedef struct bench_json {
    FILE *f; /* borrowed */
    int depth;
    bool comma[BENCH_JSON_MAX_DEPTH]; /* a member was written at this depth */
} bench_json;

void bj_init(bench_json *j, FILE *f);

/* `key` names the member inside an object; NULL for array elements and the top level. */
void bj_object_begin(bench_json *j, const char *key);
void bj_object_end(bench_json *j);
void bj_array_begin(bench_json *j, const char *key);
void bj_array_end(bench_json *j);
void bj_string(bench_json *j, const char *key, const char *val);
void bj_u64(bench_json *j, const char *key, uint64_t v);
void bj_double(bench_json *j, const char *key, double v);

#endif
