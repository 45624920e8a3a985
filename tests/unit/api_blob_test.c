/*
 * api_blob_test.c - tests of the Blob check of the request type pass (api/schema_types.c):
 * a B value is accepted exactly when its text is canonical base64, which is defined here as
 * "decoding it and encoding the bytes again gives the same text" (the check the pass used to
 * make, with OpenSSL), and compared with the pass on random texts built to sit near the
 * boundary: valid texts, then one character changed, padding added or removed, a non-ASCII
 * character or a NUL put in. Each refusal must carry one of DynamoDB's two messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "testutil.h"

/* The reference definition of canonical base64. */
static bool canonical(const char *s, size_t n)
{
    if (n == 0) return true;
    if (n % 4 || strlen(s) != n) return false;
    unsigned char raw[512], again[700];
    int len = EVP_DecodeBlock(raw, (const unsigned char *)s, (int)n);
    if (len < 0) return false;
    len -= (s[n - 1] == '=') + (s[n - 2] == '=');
    if (len < 0) return false;
    int len2 = EVP_EncodeBlock(again, raw, len);
    return len2 == (int)n && memcmp(again, s, n) == 0;
}

/* {"B":"<text>"} with the text JSON-escaped where needed (controls, quote, backslash). */
static size_t blob_json(const char *text, size_t n, char *out)
{
    size_t o = (size_t)sprintf(out, "{\"B\":\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20)
            o += (size_t)sprintf(out + o, "\\u%04x", c);
        else if (c == '"' || c == '\\')
            o += (size_t)sprintf(out + o, "\\%c", c);
        else
            out[o++] = (char)c;
    }
    return o + (size_t)sprintf(out + o, "\"}");
}

static void test_blob_check_matches_reencoding(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    static const char *const odd[] = {"=", "\xc3\xa9", " ", "\n", "-", "_", "\"", "*"};
    int accepted = 0, refused = 0;
    for (int iter = 0; iter < 30000; iter++) {
        unsigned char raw[64];
        size_t rawlen = test_rand(&rng) % 20;
        for (size_t i = 0; i < rawlen; i++)
            raw[i] = (unsigned char)test_rand(&rng);
        char text[256];
        size_t n = (size_t)EVP_EncodeBlock((unsigned char *)text, raw, (int)rawlen);
        int edits = (int)(test_rand(&rng) % 3);
        for (int e = 0; e < edits && n > 0; e++) {
            size_t at = test_rand(&rng) % n;
            switch (test_rand(&rng) % 4) {
            case 0: /* another base64 character (or '=') */
                text[at] = alphabet[test_rand(&rng) % (sizeof alphabet - 1)];
                break;
            case 1: { /* a character from outside the alphabet */
                const char *o = odd[test_rand(&rng) % (sizeof odd / sizeof odd[0])];
                size_t olen = strlen(o);
                memmove(text + at + olen, text + at + 1, n - at - 1);
                memcpy(text + at, o, olen);
                n += olen - 1;
                e = edits; /* the last edit: the others could cut the UTF-8 character */
                break;
            }
            case 2: /* a NUL */
                text[at] = '\0';
                break;
            default: /* drop the last character */
                n--;
                break;
            }
        }
        char body[1024];
        size_t blen = blob_json(text, n, body);
        kura_value *v = NULL;
        kura_status s = kura_value_from_json(body, blen, false, &v);
        bool want = canonical(text, n);
        if (want != (s == KURA_OK))
            fail_msg("%.*s: check %s, re-encoding %s", (int)blen, body,
                     s == KURA_OK ? "accepts" : "refuses", want ? "accepts" : "refuses");
        if (s == KURA_OK) {
            size_t len;
            const char *bytes = kura_value_bytes(v, &len);
            if (edits == 0) {
                assert_int_equal(len, rawlen);
                assert_memory_equal(bytes, raw, rawlen);
            }
            accepted++;
        } else {
            static const char length_msg[] =
                "Base64 encoded length is expected a multiple of 4 bytes but found: ";
            const char *msg = kura_last_error();
            if (strcmp(msg, "Invalid last non-pad Base64 character dectected") != 0 &&
                strncmp(msg, length_msg, sizeof length_msg - 1) != 0)
                fail_msg("%.*s: unexpected message %s", (int)blen, body, msg);
            refused++;
        }
        kura_value_free(v);
    }
    assert_true(accepted > 1000);
    assert_true(refused > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_check_matches_reencoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
