/*
 * table_def.c - the encoding of a table definition, the value of a "table/<name>" record of
 * the system tree (docs/format/catalog.md, "Tables").
 *
 * The decoder checks every length against the record and reports a malformed record as
 * corruption; the caller adds the table's context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_int.h"
#include "util/coding.h"
#include "util/status.h"

enum { DEF_VERSION = 1 };

static bool put_double(kbuf *b, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return kbuf_put_fixed64(b, bits);
}

kura_status def_encode(const kura_table *t, kbuf *b)
{
    bool ok = kbuf_put_u8(b, DEF_VERSION) && kbuf_put_varint(b, t->id) &&
              put_double(b, t->created) && kbuf_put_varint(b, t->partitions) &&
              kbuf_put_u8(b, (uint8_t)t->billing) && kbuf_put_varint(b, t->rcu) &&
              kbuf_put_varint(b, t->wcu) && put_double(b, t->last_ppr) &&
              kbuf_put_u8(b, t->deletion_protection) &&
              kbuf_put_lenbytes(b, t->table_id, strlen(t->table_id)) &&
              kbuf_put_lenbytes(b, t->name, strlen(t->name)) &&
              kbuf_put_varint(b, t->nattr_defs);
    for (size_t i = 0; ok && i < t->nattr_defs; i++) {
        const char *n = t->attr_defs[i].attribute_name;
        ok = kbuf_put_lenbytes(b, n, strlen(n)) &&
             kbuf_put_u8(b, (uint8_t)t->attr_defs[i].attribute_type);
    }
    ok = ok && kbuf_put_lenbytes(b, t->pk_name, strlen(t->pk_name)) &&
         kbuf_put_u8(b, t->sk_name != NULL);
    if (ok && t->sk_name)
        ok = kbuf_put_lenbytes(b, t->sk_name, strlen(t->sk_name));
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
}

/* A bounds-checked reader over a definition record; `bad` latches the first failure. */
typedef struct def_reader {
    const uint8_t *p, *end;
    bool bad;
} def_reader;

static uint64_t rd_varint(def_reader *r)
{
    uint64_t v = 0;
    const uint8_t *q = r->bad ? NULL : dec_varint64(r->p, r->end, &v);
    if (!q)
        r->bad = true;
    else
        r->p = q;
    return v;
}

static uint8_t rd_u8(def_reader *r)
{
    if (r->bad || r->p >= r->end) {
        r->bad = true;
        return 0;
    }
    return *r->p++;
}

static double rd_double(def_reader *r)
{
    double d = 0;
    if (r->bad || r->end - r->p < 8) {
        r->bad = true;
        return 0;
    }
    uint64_t bits = dec_fixed64(r->p);
    memcpy(&d, &bits, sizeof d);
    r->p += 8;
    return d;
}

/* A malloc'ed NUL-terminated copy of a length-prefixed string (NULL when bad). */
static char *rd_str(def_reader *r)
{
    uint64_t n = rd_varint(r);
    if (r->bad || n > (uint64_t)(r->end - r->p) || n > 4096) {
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

kura_status def_decode(const uint8_t *p, size_t len, kura_table *t)
{
    def_reader r = {p, p + len, false};
    if (rd_u8(&r) != DEF_VERSION)
        return kura_err(KURA_E_CORRUPTION, "sys: table definition of unknown version");
    t->id = rd_varint(&r);
    t->created = rd_double(&r);
    t->partitions = (uint32_t)rd_varint(&r);
    t->billing = (kura_billing_mode)rd_u8(&r);
    t->rcu = rd_varint(&r);
    t->wcu = rd_varint(&r);
    t->last_ppr = rd_double(&r);
    t->deletion_protection = rd_u8(&r) != 0;
    char *uuid = rd_str(&r);
    if (uuid)
        snprintf(t->table_id, sizeof t->table_id, "%s", uuid);
    free(uuid);
    t->name = rd_str(&r);
    uint64_t n = rd_varint(&r);
    if (!r.bad && n >= 1 && n <= 64 && (t->attr_defs = calloc(n, sizeof *t->attr_defs))) {
        for (uint64_t i = 0; i < n && !r.bad; i++) {
            t->attr_defs[i].attribute_name = rd_str(&r);
            t->attr_defs[i].attribute_type = (kura_type)rd_u8(&r);
            t->nattr_defs = i + 1;
        }
    } else {
        r.bad = true;
    }
    t->pk_name = rd_str(&r);
    if (rd_u8(&r))
        t->sk_name = rd_str(&r);
    if (r.bad || r.p != r.end || !t->pk_name)
        return kura_err(KURA_E_CORRUPTION, "sys: table definition of %zu bytes is malformed",
                        len);
    return KURA_OK;
}
