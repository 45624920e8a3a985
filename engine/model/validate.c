/*
 * validate.c - This file contains the checks DynamoDB applies to every attribute value of a
 * request (val_validate) and to an item before it is written (val_validate_item), with
 * DynamoDB's messages.
 *
 * One depth-first pass in attribute order, so the first error reported is the first one
 * DynamoDB meets. Per value: a map or list deeper than the nesting limit, then for a set:
 * empty, then duplicate members; then the children. Numbers are valid by construction
 * (number.h). Messages, as DynamoDB (dynalite's validations/index.js, DynamoDB Local 1.25.1):
 *
 *   One or more parameter values were invalid: An string set  may not be empty     (sic)
 *   One or more parameter values were invalid: An number set  may not be empty
 *   One or more parameter values were invalid: Binary sets should not be empty
 *   One or more parameter values were invalid: Input collection [a, b, a] contains duplicates.
 *   Input collection contains duplicates                                          (NS)
 *   One or more parameter values were invalid: Input collection [YQ==, YQ==]of type BS
 *     contains duplicates.                                        (sic; members in base64)
 *   Nesting Levels have exceeded supported limits                    (a request value)
 *   Nesting Levels have exceeded supported limits: Attributes in the item have nested levels
 *     beyond supported limit                                         (an item)
 *   Item size has exceeded the maximum allowed size
 *   One or more parameter values were invalid: Attribute name is too large, must be less
 *     than 65536 bytes                   (a name of an item's attribute or a map's member)
 *
 * Nesting, as DynamoDB Local measures it: an item's attributes are depth 1 and the children of
 * a map or list at depth d are at depth d + 1; a map or list may sit at depth 31 at most, so
 * counting the item itself there are at most VAL_MAX_DEPTH (32) levels of maps and lists
 * (scalars may sit at depth 32).
 */
#include "engine/model/value.h"

#include <stdlib.h>
#include <string.h>

/* The 400 KB item limit. */
#define VAL_ITEM_MAX 409600
/* The deepest a map or list may sit (attributes are depth 1). */
#define VAL_CONTAINER_DEPTH_MAX (VAL_MAX_DEPTH - 1)
/* Sets at most this large are checked for duplicates pairwise, larger ones by sorting. */
#define VAL_DUP_PAIRWISE_MAX 16
/* Room for the member list of a duplicates message; kura_err keeps 512 bytes anyway. */
#define VAL_MSG_CAP 480

#define VAL_MSG_INVALID "One or more parameter values were invalid: "
/* DynamoDB's limit on an attribute name (64 KB; key attributes: 255, table_check.c). */
#define VAL_NAME_MAX 65535

static kura_status val_check_name(const struct kura_attr *a)
{
    if (a->name_len <= VAL_NAME_MAX) return KURA_OK;
    return kura_err(KURA_E_INVALID, VAL_MSG_INVALID "Attribute name is too large, must be less "
                                                    "than %u bytes",
                    VAL_NAME_MAX + 1);
}

/* A bounded string builder for messages: appends are cut at VAL_MSG_CAP. */
typedef struct val_msg {
    char s[VAL_MSG_CAP + 1];
    size_t len;
} val_msg;

static void msg_add(val_msg *m, const void *p, size_t n)
{
    if (n > VAL_MSG_CAP - m->len) n = VAL_MSG_CAP - m->len;
    memcpy(m->s + m->len, p, n);
    m->len += n;
    m->s[m->len] = 0;
}

static void msg_add_base64(val_msg *m, const uint8_t *p, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n && m->len < VAL_MSG_CAP; i += 3) {
        uint32_t w = (uint32_t)p[i] << 16;
        if (i + 1 < n) w |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) w |= p[i + 2];
        char q[4] = {tbl[w >> 18], tbl[(w >> 12) & 63], tbl[(w >> 6) & 63], tbl[w & 63]};
        if (i + 1 >= n) q[2] = '=';
        if (i + 2 >= n) q[3] = '=';
        msg_add(m, q, 4);
    }
}

/* "[m1, m2, ...]" of an SS (as text) or a BS (in base64). */
static void msg_add_members(val_msg *m, const kura_value *set)
{
    msg_add(m, "[", 1);
    for (uint32_t i = 0; i < set->u.list.n; i++) {
        const kura_value *e = &set->u.list.v[i];
        if (i) msg_add(m, ", ", 2);
        if (set->type == KURA_BS)
            msg_add_base64(m, e->u.bytes.p, e->u.bytes.len);
        else
            msg_add(m, e->u.bytes.p, e->u.bytes.len);
    }
    msg_add(m, "]", 1);
}

static int val_member_ptr_cmp(const void *x, const void *y)
{
    return val_cmp_scalar(*(const kura_value *const *)x, *(const kura_value *const *)y);
}

/* Whether set `s` holds two equal members. Large sets are sorted through an array of
 * pointers; if that allocation fails the pairwise check runs instead. */
static bool val_set_has_dup(const kura_value *s)
{
    uint32_t n = s->u.list.n;
    const kura_value *e = s->u.list.v;
    const kura_value **p = n > VAL_DUP_PAIRWISE_MAX ? malloc((size_t)n * sizeof *p) : NULL;
    bool dup = false;
    if (p) {
        for (uint32_t i = 0; i < n; i++)
            p[i] = &e[i];
        qsort(p, n, sizeof *p, val_member_ptr_cmp);
        for (uint32_t i = 1; !dup && i < n; i++)
            dup = val_cmp_scalar(p[i - 1], p[i]) == 0;
        free(p);
        return dup;
    }
    for (uint32_t i = 0; !dup && i < n; i++)
        for (uint32_t j = i + 1; !dup && j < n; j++)
            dup = val_cmp_scalar(&e[i], &e[j]) == 0;
    return dup;
}

static kura_status val_check_set(const kura_value *s)
{
    static const char *const empty[] = {"An string set  may not be empty",
                                        "An number set  may not be empty",
                                        "Binary sets should not be empty"};
    int k = s->type == KURA_SS ? 0 : s->type == KURA_NS ? 1 : 2;
    if (s->u.list.n == 0) return kura_err(KURA_E_INVALID, VAL_MSG_INVALID "%s", empty[k]);
    if (!val_set_has_dup(s)) return KURA_OK;
    if (s->type == KURA_NS) return kura_err(KURA_E_INVALID, "Input collection contains duplicates");
    val_msg m = {.len = 0};
    msg_add_members(&m, s);
    return kura_err(KURA_E_INVALID, VAL_MSG_INVALID "Input collection %s%s", m.s,
                    s->type == KURA_SS ? " contains duplicates."
                                       : "of type BS contains duplicates.");
}

/* Validates `v` at depth `depth`; `in_item` chooses the nesting message. */
static kura_status val_check(const kura_value *v, int depth, bool in_item)
{
    kura_status st = KURA_OK;
    switch (v->type) {
    case KURA_M:
    case KURA_L:
        if (depth > VAL_CONTAINER_DEPTH_MAX)
            return kura_err(KURA_E_INVALID, "Nesting Levels have exceeded supported limits%s",
                            in_item ? ": Attributes in the item have nested levels beyond "
                                      "supported limit"
                                    : "");
        if (v->type == KURA_M) {
            for (uint32_t i = 0; st == KURA_OK && i < v->u.map.n; i++) {
                st = val_check_name(&v->u.map.a[i]);
                if (st == KURA_OK) st = val_check(&v->u.map.a[i].value, depth + 1, in_item);
            }
        } else {
            for (uint32_t i = 0; st == KURA_OK && i < v->u.list.n; i++)
                st = val_check(&v->u.list.v[i], depth + 1, in_item);
        }
        return st;
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        return val_check_set(v);
    case KURA_S:
    case KURA_N:
    case KURA_B:
    case KURA_BOOL:
    case KURA_NULL:
        return KURA_OK;
    default:
        return kura_err(KURA_E_INVALID, "Supplied AttributeValue is empty, must contain exactly "
                                        "one of the supported datatypes");
    }
}

kura_status val_validate(const kura_value *v)
{
    return val_check(v, 1, false);
}

kura_status val_validate_item(const kura_value *item)
{
    if (item->type != KURA_M) return kura_err(KURA_E_INVALID, "an item must be a map");
    for (uint32_t i = 0; i < item->u.map.n; i++) {
        kura_status st = val_check_name(&item->u.map.a[i]);
        if (st == KURA_OK) st = val_check(&item->u.map.a[i].value, 1, true);
        if (st != KURA_OK) return st;
    }
    if (val_item_size(item) > VAL_ITEM_MAX)
        return kura_err(KURA_E_INVALID, "Item size has exceeded the maximum allowed size");
    return KURA_OK;
}
