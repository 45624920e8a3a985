/*
 * jdoc_fuzz.c - libFuzzer target: api/'s JSON documents (api/jdoc.c) against jansson.
 *
 * This file contains a differential fuzz target. The input is a JSON text; the first byte's
 * low bit picks JD_DECODE_ANY. jdoc must accept exactly what jansson's json_loadb
 * (JSON_ALLOW_NUL, plus JSON_DECODE_ANY with the flag) accepts, and an accepted text must
 * read the same: jw_json's text of the tree, read back by jansson and dumped with sorted keys,
 * equals jansson's own dump of the input. Then every object of the tree is read back member
 * by member through jd_object_getn (the hash index of large objects included). One exception:
 * a raw NUL byte is never JSON (not white space, not allowed unescaped in a string), and jdoc
 * must refuse it, but jansson's reader takes a NUL for the end of its buffer and reads on, so
 * it accepts e.g. [1<NUL>]: such inputs are only checked to be refused. A second: jdoc takes a
 * NUL (escaped) in a member name, as DynamoDB's attribute names may hold one, which jansson
 * refuses ("NUL byte in object key not supported"): such inputs are not compared. Seeds:
 * corpus/jdoc_fuzz/.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/jdoc.h"

static char *canon(const char *json, size_t n)
{
    json_t *j = json_loadb(json, n, JSON_ALLOW_NUL | JSON_DECODE_ANY, NULL);
    if (!j) return NULL;
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
                                JSON_REAL_PRECISION(15));
    json_decref(j);
    return s;
}

static void fail(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "jdoc_fuzz: %s: %.*s\n", what, (int)(size < 400 ? size : 400),
            (const char *)data);
    abort();
}

static void check_lookups(const jd_t *v, const uint8_t *data, size_t size)
{
    if (jd_is_array(v)) {
        for (size_t i = 0; i < jd_array_size(v); i++)
            check_lookups(jd_array_get(v, i), data, size);
        return;
    }
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(v, key, key_len, val)
    {
        if (jd_object_getn(v, key, key_len) != val) fail("a member cannot be found", data, size);
        check_lookups(val, data, size);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* CI's fuzz run repeats exactly (run_fuzz.sh): jansson would seed its hash function from
 * /dev/urandom, which changes the memcmp calls libFuzzer records. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    json_object_seed(1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    unsigned flags = data[0] & 1 ? JD_DECODE_ANY : 0;
    const char *json = (const char *)data + 1;
    size_t n = size - 1;
    jd_doc *d = jd_doc_new();
    if (!d) abort();
    char err[160];
    jd_t *v = jd_parse(d, json, n, flags, err, sizeof err);
    if (memchr(json, '\0', n)) {
        if (v) fail("jdoc accepts a raw NUL byte", data, size);
        jd_doc_free(d);
        return 0;
    }
    json_error_t jerr;
    json_t *j = json_loadb(json, n, JSON_ALLOW_NUL | (flags ? JSON_DECODE_ANY : 0), &jerr);
    if (v && !j && strstr(jerr.text, "NUL byte in object key")) {
        jd_doc_free(d);
        return 0;
    }
    if (!v != !j)
        fail(v ? "jdoc accepts what jansson refuses" : "jdoc refuses what jansson accepts", data,
             size);
    if (v) {
        kbuf b = KBUF_INIT;
        if (jw_json(&b, v) != KURA_OK) fail("jw_json failed", data, size);
        char *got = canon((const char *)b.data, b.len), *want = canon(json, n);
        if (!got || !want || strcmp(got, want) != 0) fail("the trees differ", data, size);
        free(got);
        free(want);
        kbuf_free(&b);
        check_lookups(v, data, size);
    } else if (!err[0]) {
        fail("refused without a message", data, size);
    }
    json_decref(j);
    jd_doc_free(d);
    return 0;
}
