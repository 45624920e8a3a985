/*
 * table_tags.c - This file contains a table's tags: TagResource, UntagResource and
 * ListTagsOfResource on table ARNs, and the checks CreateTable's Tags share with them.
 *
 * The tags are a field of the table's definition (engine/table.h: tags, ntags, sorted by key;
 * docs/format/catalog.md, version 5), changed under tables_mu and made durable with the
 * definition (a synchronous write) before the call returns, like UpdateTable's settings: a
 * change whose definition cannot be written is undone. The messages are DynamoDB's: the
 * modelled constraints of the Tag shape (botocore's service-2.json: TagKeyString 1..128,
 * TagValueString 0..256) in the "1 validation error detected" form, and the ARN and empty-list
 * refusals as dynalite copies them from DynamoDB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unictype.h>
#include <unistr.h>

#include "engine/table_int.h"
#include "util/status.h"

enum { TAGS_MAX = 50, TAG_KEY_MAX = 128, TAG_VALUE_MAX = 256 };

#define TAG_PATTERN "[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*"

/* ---- Checks ---------------------------------------------------------------------------------- */

/* Length in UTF-16 units, as DynamoDB's model counts it (s is UTF-8). */
static size_t utf16_len(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xC0) != 0x80 ? (*p >= 0xF0 ? 2 : 1) : 0;
    return n;
}

/* Whether every character of s is of the tag pattern: a letter (\p{L}), a separator (\p{Z}:
 * spaces, line and paragraph separators), a number (\p{N}), by the Unicode general categories
 * of libunistring, or one of _.:/=+-@. Invalid UTF-8 is refused. */
static bool tag_chars_ok(const char *s)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + strlen(s);
    while (p < end) {
        ucs4_t c;
        int n = u8_mbtoucr(&c, p, (size_t)(end - p));
        if (n <= 0)
            return false;
        p += n;
        bool extra = c < 0x80 && strchr("_.:/=+-@", (int)c);
        if (!extra && !uc_is_general_category(c, UC_CATEGORY_L) &&
            !uc_is_general_category(c, UC_CATEGORY_Z) && !uc_is_general_category(c, UC_CATEGORY_N))
            return false;
    }
    return true;
}

static kura_status tag_violation(const char *v, size_t i, const char *member, const char *what)
{
    return kura_err(KURA_E_INVALID, "1 validation error detected: Value %s%s%s at "
                    "'tags.%zu.member.%s' failed to satisfy constraint: %s",
                    v ? "'" : "", v ? v : "null", v ? "'" : "", i + 1, member, what);
}

kura_status tags_check(const kura_tag *tags, size_t n)
{
    if (n == 0)
        return kura_err(KURA_E_INVALID, "Atleast one Tag needs to be provided as Input.");
    if (n > TAGS_MAX)
        return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: The number "
                        "of tags exceeds the limit of %d", TAGS_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *k = tags[i].key, *v = tags[i].value;
        if (!k || !v)
            return tag_violation(NULL, i, k ? "value" : "key", "Member must not be null");
        size_t kn = utf16_len(k), vn = utf16_len(v);
        if (kn < 1)
            return tag_violation(k, i, "key", "Member must have length greater than or equal "
                                 "to 1");
        if (kn > TAG_KEY_MAX)
            return tag_violation(k, i, "key", "Member must have length less than or equal to "
                                 "128");
        if (vn > TAG_VALUE_MAX)
            return tag_violation(v, i, "value", "Member must have length less than or equal to "
                                 "256");
        if (!tag_chars_ok(k))
            return tag_violation(k, i, "key", "Member must satisfy regular expression pattern: "
                                 TAG_PATTERN);
        if (!tag_chars_ok(v))
            return tag_violation(v, i, "value", "Member must satisfy regular expression "
                                 "pattern: " TAG_PATTERN);
    }
    for (size_t i = 0; i < n; i++)
        if (strncmp(tags[i].key, "aws:", 4) == 0)
            return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: Tag "
                            "keys starting with the aws: prefix are reserved for AWS use: %s",
                            tags[i].key);
    return KURA_OK;
}

/* The table named by a table ARN of scope sc, pinned (table_release). */
kura_status arn_table_acquire(kura_db *db, const arn_scope *sc, const char *arn,
                              kura_table **t_out)
{
    if (!arn)
        return kura_err(KURA_E_INVALID, "Invalid TableArn");
    arn_parts p;
    if (!arn_split(arn, &p) || p.rest || p.table_len < 3)
        return kura_err(KURA_E_INVALID, "Invalid TableArn: Invalid ResourceArn provided as "
                        "input %s", arn);
    /* another region's or account's table is not one of these (arn.h) */
    if (!arn_in_scope(&p, sc) || table_acquire(db, p.table, t_out))
        return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found: "
                        "ResourceArn: %s not found", arn);
    return KURA_OK;
}

/* ---- The tag set ------------------------------------------------------------------------------ */

void tags_free(kura_tag *tags, uint32_t n)
{
    for (uint32_t i = 0; tags && i < n; i++) {
        free((char *)tags[i].key);
        free((char *)tags[i].value);
    }
    free(tags);
}

static int tag_cmp(const void *a, const void *b)
{
    return strcmp(((const kura_tag *)a)->key, ((const kura_tag *)b)->key);
}

/* A sorted owned copy of `old` (nold) with `add` (nadd) applied and the `del` keys (ndel)
 * removed, in *out / *n_out; false when out of memory. */
static bool tags_merge(const kura_tag *old, uint32_t nold, const kura_tag *add, size_t nadd,
                       const char *const *del, size_t ndel, kura_tag **out, uint32_t *n_out)
{
    kura_tag *v = calloc(nold + nadd + 1, sizeof *v);
    uint32_t n = 0;
    bool ok = v != NULL;
    for (size_t i = 0; ok && i < nold + nadd; i++) {
        const kura_tag *x = i < nold ? &old[i] : &add[i - nold];
        uint32_t j = 0;
        while (j < n && strcmp(v[j].key, x->key) != 0)
            j++;
        char *val = strdup(x->value);
        if (!val) {
            ok = false;
        } else if (j < n) {
            free((char *)v[j].value);
            v[j].value = val;
        } else if (!(v[n].key = strdup(x->key))) {
            free(val);
            ok = false;
        } else {
            v[n++].value = val;
        }
    }
    for (size_t d = 0; ok && d < ndel; d++) {
        for (uint32_t j = 0; j < n; j++) {
            if (strcmp(v[j].key, del[d]) == 0) {
                free((char *)v[j].key);
                free((char *)v[j].value);
                v[j] = v[--n];
                break;
            }
        }
    }
    if (!ok) {
        tags_free(v, n);
        return false;
    }
    qsort(v, n, sizeof *v, tag_cmp);
    *out = v;
    *n_out = n;
    return true;
}

bool tags_set(kura_table *t, const kura_tag *tags, size_t n)
{
    kura_tag *v;
    uint32_t nv;
    if (!tags_merge(t->tags, t->ntags, tags, n, NULL, 0, &v, &nv))
        return false;
    tags_free(t->tags, t->ntags);
    t->tags = v;
    t->ntags = nv;
    return true;
}

/* t's tags changed by `add` / `del` and the definition written, or t left as it was. */
static kura_status tags_change(kura_db *db, kura_table *t, const kura_tag *add, size_t nadd,
                               const char *const *del, size_t ndel)
{
    kura_tag *v;
    uint32_t nv;
    kura_status s = KURA_OK;
    kmutex_lock(&db->tables_mu);
    if (!tags_merge(t->tags, t->ntags, add, nadd, del, ndel, &v, &nv)) {
        s = kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    } else if (nv > TAGS_MAX) {
        tags_free(v, nv);
        s = kura_err(KURA_E_INVALID, "One or more parameter values were invalid: The number of "
                     "tags exceeds the limit of %d", TAGS_MAX);
    } else {
        kura_tag *old = t->tags;
        uint32_t nold = t->ntags;
        t->tags = v;
        t->ntags = nv;
        if ((s = def_write(db, t, false)) != KURA_OK) {
            t->tags = old;
            t->ntags = nold;
            old = v;
            nold = nv;
        }
        tags_free(old, nold);
    }
    kmutex_unlock(&db->tables_mu);
    return s;
}

/* ---- The operations --------------------------------------------------------------------------- */

kura_status arn_tag_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                             const kura_tag *tags, size_t count)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    if ((s = tags_check(tags, count)) == KURA_OK)
        s = tags_change(db, t, tags, count, NULL, 0);
    table_release(t);
    return s;
}

kura_status arn_untag_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                               const char *const *keys, size_t count)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    if (count == 0)
        s = kura_err(KURA_E_INVALID, "Atleast one Tag Key needs to be provided as Input.");
    for (size_t i = 0; s == KURA_OK && i < count; i++) {
        size_t n = keys[i] ? utf16_len(keys[i]) : 0;
        if (!keys[i] || n < 1 || n > TAG_KEY_MAX)
            s = kura_err(KURA_E_INVALID, "1 validation error detected: Value %s%s%s at "
                         "'tagKeys.%zu.member' failed to satisfy constraint: Member must %s",
                         keys[i] ? "'" : "", keys[i] ? keys[i] : "null", keys[i] ? "'" : "",
                         i + 1, !keys[i] ? "not be null"
                                : n < 1 ? "have length greater than or equal to 1"
                                        : "have length less than or equal to 128");
    }
    if (s == KURA_OK)
        s = tags_change(db, t, NULL, 0, keys, count);
    table_release(t);
    return s;
}

kura_status arn_list_tags_of_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                      const char *next_token, size_t limit, kura_tag_list *out)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    if (next_token && (!next_token[0] || strlen(next_token) > TAG_KEY_MAX * 4)) {
        table_release(t);
        return kura_err(KURA_E_INVALID, "Invalid NextToken");
    }
    kura_tag_list l = {0};
    kmutex_lock(&db->tables_mu);
    uint32_t from = 0;
    while (next_token && from < t->ntags && strcmp(t->tags[from].key, next_token) <= 0)
        from++;
    size_t n = t->ntags - from;
    bool more = limit && n > limit;
    if (more)
        n = limit;
    bool ok = (l.tags = calloc(n + 1, sizeof *l.tags)) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        l.count = i + 1;
        ok = (l.tags[i].key = strdup(t->tags[from + i].key)) &&
             (l.tags[i].value = strdup(t->tags[from + i].value));
    }
    if (ok && more)
        ok = (l.next_token = strdup(l.tags[n - 1].key)) != NULL;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    if (!ok) {
        kura_tag_list_free(&l);
        return kura_err(KURA_E_NOMEM, "ListTagsOfResource: out of memory");
    }
    *out = l;
    return KURA_OK;
}

void kura_tag_list_free(kura_tag_list *l)
{
    if (!l)
        return;
    tags_free(l->tags, (uint32_t)l->count);
    free(l->next_token);
    l->tags = NULL;
    l->count = 0;
    l->next_token = NULL;
}
