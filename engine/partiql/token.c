/*
 * token.c - This file contains PartiQL's NextToken: the LastEvaluatedKey of a Query or Scan
 * page in kura's value encoding (docs/format/item.md), hex-encoded. The token is opaque to
 * callers; decoding checks the encoding (val_check_encoded) before trusting it, and the
 * engine then checks the key against the table's key schema like any ExclusiveStartKey.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "engine/partiql/partiql.h"
#include "util/status.h"

#define MSG_BAD_TOKEN "Invalid NextToken"

kura_status pq_token_encode(const kura_value *key, char **token_out)
{
    static const char hex[] = "0123456789abcdef";
    kbuf enc = KBUF_INIT;
    kura_status s = val_encode(key, &enc);
    if (s != KURA_OK) {
        kbuf_free(&enc);
        return s;
    }
    char *t = malloc(2 * enc.len + 1);
    if (!t) {
        kbuf_free(&enc);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < enc.len; i++) {
        t[2 * i] = hex[enc.data[i] >> 4];
        t[2 * i + 1] = hex[enc.data[i] & 15];
    }
    t[2 * enc.len] = '\0';
    kbuf_free(&enc);
    *token_out = t;
    return KURA_OK;
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

kura_status pq_token_decode(const char *token, kura_value **key_out)
{
    size_t n = strlen(token);
    if (n == 0 || n % 2) return kura_err(KURA_E_INVALID, MSG_BAD_TOKEN);
    uint8_t *enc = malloc(n / 2);
    if (!enc) return kura_err(KURA_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n / 2; i++) {
        int hi = unhex(token[2 * i]), lo = unhex(token[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(enc);
            return kura_err(KURA_E_INVALID, MSG_BAD_TOKEN);
        }
        enc[i] = (uint8_t)(hi << 4 | lo);
    }
    kura_status s = val_check_encoded(enc, n / 2);
    kura_value *key = s == KURA_OK ? kura_value_null() : NULL;
    if (s == KURA_OK && !key) s = kura_err(KURA_E_NOMEM, "out of memory");
    if (s == KURA_OK) {
        val_clear(key);
        s = val_decode(enc, n / 2, key);
    }
    free(enc);
    if (s == KURA_OK && kura_value_type(key) != KURA_M) s = KURA_E_INVALID;
    if (s != KURA_OK) {
        kura_value_free(key);
        return s == KURA_E_NOMEM ? s : kura_err(KURA_E_INVALID, MSG_BAD_TOKEN);
    }
    *key_out = key;
    return KURA_OK;
}
