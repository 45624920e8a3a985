/*
 * schema_check.c - This file contains DynamoDB's rendering of a value in an attribute value's
 * messages (api_value_str, api/schema.h). The second request check itself, the modelled
 * constraints, is generated from DynamoDB's model and walked by validate.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/schema.h"
#include "util/buf.h"

char *api_value_str(const jd_t *v)
{
    char *out = NULL;
    if (jd_is_string(v)) return strndup(jd_string_value(v), jd_string_length(v));
    if (jd_is_integer(v))
        return asprintf(&out, "%lld", (long long)jd_integer_value(v)) < 0 ? NULL : out;
    if (jd_is_real(v)) return asprintf(&out, "%.17g", jd_real_value(v)) < 0 ? NULL : out;
    if (jd_is_boolean(v)) return strdup(jd_is_true(v) ? "true" : "false");
    if (jd_is_null(v)) return strdup("null");
    if (jd_is_object(v)) {
        kbuf b = KBUF_INIT;
        if (jw_json(&b, v) == KURA_OK && kbuf_put_u8(&b, '\0')) return (char *)b.data;
        kbuf_free(&b);
        return NULL;
    }
    /* an array: "[a, b]" with each element rendered the same way */
    size_t len = 1, cap = 64;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[0] = '[';
    for (size_t i = 0; i < jd_array_size(v); i++) {
        char *e = api_value_str(jd_array_get(v, i));
        size_t elen = e ? strlen(e) : 0;
        char *nb = e && len + elen + 4 > cap ? realloc(buf, cap = 2 * (len + elen + 4)) : buf;
        if (!e || !nb) {
            free(e);
            free(nb ? nb : buf);
            return NULL;
        }
        buf = nb;
        if (i) memcpy(buf + len, ", ", 2), len += 2;
        memcpy(buf + len, e, elen);
        len += elen;
        free(e);
    }
    buf[len++] = ']';
    buf[len] = '\0';
    return buf;
}
