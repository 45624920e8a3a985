/*
 * json.h - This file contains the streaming JSON writer of kura-bench's and
 * kura-http-bench's results files, a thin layer over YAJL's generator (yajl_gen).
 *
 * Output is pretty-printed: one member per line, two spaces of indent, an empty array or
 * object as [] or {}, and a newline after the top-level value. Strings are written as UTF-8
 * with JSON's escapes ("\\", "\"", control characters); a string that is not valid UTF-8 (a
 * path or a CPU name in another encoding) is written with every byte >= 0x80 replaced by
 * '?', so the file is always valid JSON. Integers are exact (the whole uint64_t range),
 * doubles have 10 significant digits, and a double that is not finite becomes null.
 *
 * Misuse is a programmer error (assert): a member without a key inside an object or with
 * one inside an array, closing what is not open, nesting deeper than YAJL's 128 levels, or
 * writing after the top-level value is complete.
 */
#ifndef KURA_BENCH_JSON_H
#define KURA_BENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

typedef struct bench_json {
    yajl_gen gen; /* owned */
    FILE *f;      /* borrowed; output goes straight to it */
    /* The innermost container, opened by the caller but not yet by YAJL: it is known to be
     * empty only when it closes (see json.c). `pending_key` is borrowed from the caller. */
    bool pending;
    char pending_kind; /* '{' or '[' */
    const char *pending_key;
} bench_json;

/* Starts a document written to `f` (borrowed until bj_free). false when out of memory. */
bool bj_init(bench_json *j, FILE *f);

/* Frees the generator; it does not close `f`. A zeroed bench_json is a no-op. */
void bj_free(bench_json *j);

/*
 * `key` names the member inside an object; NULL for array elements and the top level.
 * Keys and strings are borrowed for the call, except the key of a container, which must
 * stay valid until the next call on `j` (it is written once the container is known to be
 * empty or not). Write errors show in ferror(f).
 */
void bj_object_begin(bench_json *j, const char *key);
void bj_object_end(bench_json *j);
void bj_array_begin(bench_json *j, const char *key);
void bj_array_end(bench_json *j);
void bj_string(bench_json *j, const char *key, const char *val);
void bj_u64(bench_json *j, const char *key, uint64_t v);
void bj_double(bench_json *j, const char *key, double v);

#endif
