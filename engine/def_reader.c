/*
 * This file contains the reader of a table definition record's fields (def_reader.h).
 */
#include "engine/def_reader.h"

#include <stdlib.h>
#include <string.h>

#include "util/coding.h"

uint64_t def_rd_varint(def_reader *r)
{
    uint64_t v = 0;
    const uint8_t *q = r->bad ? NULL : dec_varint64(r->p, r->end, &v);
    if (!q)
        r->bad = true;
    else
        r->p = q;
    return v;
}

uint8_t def_rd_u8(def_reader *r)
{
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return 0;
    }
    return *r->p++;
}

uint64_t def_rd_fixed64(def_reader *r)
{
    if (r->bad || r->end - r->p < 8) {
        r->bad = true;
        return 0;
    }
    uint64_t v = dec_fixed64(r->p);
    r->p += 8;
    return v;
}

char *def_rd_str(def_reader *r, size_t min, size_t max, bool no_nul)
{
    uint64_t n = def_rd_varint(r);
    if (r->bad || n < min || n > max || n > (uint64_t)(r->end - r->p) ||
        (no_nul && memchr(r->p, 0, n))) {
        r->bad = true;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        r->bad = true;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}
