/*
 * heat_json.c - This file contains what the heat report's presentations share (heat_json.h):
 * lenient reads of its members, a partition key as one clean line of text, and numbers with
 * thousands separators.
 */
#include "server/heat_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"

double heatj_num(const jd_t *obj, const char *name)
{
    jd_t *v = jd_object_get(obj, name);
    return jd_is_number(v) ? jd_number_value(v) : 0.0;
}

const char *heatj_str(const jd_t *obj, const char *name, const char *dflt)
{
    jd_t *v = jd_object_get(obj, name);
    return jd_is_string(v) ? jd_string_value(v) : dflt;
}

bool heatj_clean_text(const char *s, size_t len, kbuf *b)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            if (!kbuf_append(b, e, 4)) return false;
        } else if (!kbuf_append(b, &s[i], 1)) {
            return false;
        }
    }
    return true;
}

/* One attribute value ({"S": "v"}) as text. */
static bool value_text(const jd_t *v, kbuf *b)
{
    const char *type;
    jd_t *inner;
    if (jd_object_size(v) == 1) {
        jd_object_foreach(v, type, inner)
        {
            if ((strcmp(type, "S") == 0 || strcmp(type, "N") == 0 || strcmp(type, "B") == 0) &&
                jd_is_string(inner))
                return heatj_clean_text(jd_string_value(inner), jd_string_length(inner), b);
        }
    }
    kbuf json = KBUF_INIT;
    bool ok = jw_json(&json, v) == KURA_OK && heatj_clean_text((const char *)json.data, json.len, b);
    kbuf_free(&json);
    return ok;
}

bool heatj_key_text(const jd_t *key, kbuf *b)
{
    if (!jd_is_object(key) || jd_object_size(key) == 0) return kbuf_append(b, "?", 1);
    bool one = jd_object_size(key) == 1, first = true;
    const char *name;
    size_t name_len;
    jd_t *v;
    jd_object_keylen_foreach(key, name, name_len, v)
    {
        if (!one && ((!first && !kbuf_append(b, ", ", 2)) ||
                     !heatj_clean_text(name, name_len, b) || !kbuf_append(b, "=", 1)))
            return false;
        if (!value_text(v, b)) return false;
        first = false;
    }
    return true;
}

void heatj_thousands(double v, char *buf, size_t cap)
{
    char digits[32];
    double r = round(v);
    if (!(fabs(r) < 1e18)) r = 0; /* NaN or absurd: nothing a report holds */
    int n = snprintf(digits, sizeof digits, "%lld", (long long)r);
    const char *d = digits;
    size_t o = 0;
    if (*d == '-') {
        if (o + 1 < cap) buf[o++] = '-';
        d++;
        n--;
    }
    for (int i = 0; i < n && o + 1 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0 && o + 2 < cap) buf[o++] = ',';
        buf[o++] = d[i];
    }
    if (cap) buf[o < cap ? o : cap - 1] = '\0';
}

jd_t *heatj_parse(jd_doc *doc, const char *json, size_t len, char *err, size_t err_cap)
{
    jd_t *root = jd_parse(doc, json, len, 0, err, err_cap);
    if (root && (!jd_is_object(root) || !jd_is_array(jd_object_get(root, "targets")))) {
        snprintf(err, err_cap, "not a heat report (an object with a \"targets\" array)");
        return NULL;
    }
    return root;
}
