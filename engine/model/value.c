/*
 * value.c - This file contains the in-memory attribute value tree (value.h): building values,
 * clearing, moving and copying them, the sorted attribute array of maps, lists and sets,
 * DynamoDB equality and scalar order, and the DynamoDB type names.
 *
 * Containers keep their children inline in one array that grows by doubling, so appending is
 * amortized O(1). A built tree costs one allocation per container and per string; a packed one
 * (decoded or copied, pack.c) keeps its arrays, names and bytes in one shared block, and the
 * functions here honour the storage fields of value.h: they free only what a node owns, drop
 * the node's block reference when it is cleared, and move a packed array to a malloc'ed one
 * when it has to grow.
 * A map's array is sorted by name (memcmp, shorter first on a tie): lookups are binary
 * searches and inserting shifts the tail, which is cheap for the few dozen attributes an item
 * has. Set equality compares members as sets: small sets pairwise, large ones by sorting
 * pointers to their members, so it stays O(n log n).
 *
 * The recursive functions (clear, equal) recurse once per nesting level; values that
 * come from requests or from disk are at most VAL_MAX_DEPTH deep (validate.c, codec.c).
 */
#include "engine/model/value.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Sets at most this large are compared pairwise (no allocation); larger ones are sorted. */
#define VAL_SET_PAIRWISE_MAX 16

static kura_status val_nomem(void)
{
    return kura_err(KURA_E_NOMEM, "out of memory");
}

/* used by assertions only */
__attribute__((unused)) static inline bool val_is_listlike(uint8_t t)
{
    return t == KURA_L || t == KURA_SS || t == KURA_NS || t == KURA_BS;
}

/* ---- Building ---------------------------------------------------------------------------- */

kura_status val_set_bytes(kura_value *dst, kura_type type, const void *p, size_t len)
{
    assert(type == KURA_S || type == KURA_B);
    if (len > UINT32_MAX - 1)
        return kura_err(KURA_E_INVALID, "value of %zu bytes is too large", len);
    uint8_t *copy = malloc(len + 1);
    if (!copy) return val_nomem();
    if (len) memcpy(copy, p, len);
    copy[len] = 0;
    memset(dst, 0, sizeof *dst);
    dst->type = (uint8_t)type;
    dst->u.bytes.p = copy;
    dst->u.bytes.len = (uint32_t)len;
    return KURA_OK;
}

void val_set_num(kura_value *dst, const kura_num *n)
{
    memset(dst, 0, sizeof *dst);
    dst->type = KURA_N;
    dst->u.num = *n;
}

void val_set_bool(kura_value *dst, bool b)
{
    memset(dst, 0, sizeof *dst);
    dst->type = KURA_BOOL;
    dst->u.boolean = b;
}

void val_set_null(kura_value *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->type = KURA_NULL;
}

void val_init_container(kura_value *dst, kura_type type)
{
    assert(type == KURA_M || val_is_listlike((uint8_t)type));
    memset(dst, 0, sizeof *dst);
    dst->type = (uint8_t)type;
}

void val_clear(kura_value *v)
{
    switch (v->type) {
    case KURA_S:
    case KURA_B:
        if (v->u.bytes.blk)
            val_block_release(v->u.bytes.blk);
        else
            free(v->u.bytes.p);
        break;
    case KURA_M:
        for (uint32_t i = 0; i < v->u.map.n; i++) {
            kura_attr *a = &v->u.map.a[i];
            if (a->name_kind == VAL_NAME_OWNED) free(a->name);
            val_clear(&a->value);
        }
        if (!v->u.map.in_blk) free(v->u.map.a);
        if (v->u.map.blk) val_block_release(v->u.map.blk);
        break;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        for (uint32_t i = 0; i < v->u.list.n; i++)
            val_clear(&v->u.list.v[i]);
        if (!v->u.list.in_blk) free(v->u.list.v);
        if (v->u.list.blk) val_block_release(v->u.list.blk);
        break;
    default:
        break;
    }
    memset(v, 0, sizeof *v);
}

void val_move(kura_value *dst, kura_value *src)
{
    *dst = *src;
    memset(src, 0, sizeof *src);
}

/* ---- Maps -------------------------------------------------------------------------------- */

static inline int val_name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen && blen && a[0] != b[0]) return (uint8_t)a[0] - (uint8_t)b[0];
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0) return c;
    return alen < blen ? -1 : alen > blen;
}

/* Binary search: the index of `name`, or of where it would be inserted (then *found false). */
static uint32_t val_map_find(const kura_value *m, const char *name, size_t name_len, bool *found)
{
    uint32_t lo = 0, hi = m->u.map.n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const kura_attr *a = &m->u.map.a[mid];
        int c = val_name_cmp(a->name, a->name_len, name, name_len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

kura_value *val_map_get(const kura_value *m, const char *name, size_t name_len)
{
    if (m->type != KURA_M) return NULL;
    bool found;
    uint32_t i = val_map_find(m, name, name_len, &found);
    return found ? &m->u.map.a[i].value : NULL;
}

/* Makes room for one more element in the array *arr of `n` elements of `elem` bytes and
 * room for *cap, growing it to `first` elements, then by doubling. An array in a block
 * (*in_blk) is never reallocated: growing it moves the elements to a malloc'ed array. */
static bool val_grow(void **arr, uint32_t n, uint32_t *cap, bool *in_blk, size_t elem,
                     uint32_t first)
{
    if (n < *cap) return true;
    if (n == UINT32_MAX) return false;
    uint32_t ncap = *cap ? (*cap > UINT32_MAX / 2 ? UINT32_MAX : *cap * 2) : first;
    void *p;
    if (*in_blk) {
        if ((p = malloc((size_t)ncap * elem)) != NULL) memcpy(p, *arr, (size_t)n * elem);
    } else {
        p = realloc(*arr, (size_t)ncap * elem);
    }
    if (!p) return false;
    *arr = p;
    *cap = ncap;
    *in_blk = false;
    return true;
}

/* Re-points the inline names of attributes a[from, to) after they moved. */
static void val_attrs_moved(kura_attr *a, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        if (a[i].name_kind == VAL_NAME_INLINE) a[i].name = a[i].name_inl;
}

/* Room for one more attribute (maps start at 8: an item rarely needs more than one grow). */
static bool val_map_grow(kura_value *m)
{
    kura_attr *old = m->u.map.a;
    if (!val_grow((void **)&m->u.map.a, m->u.map.n, &m->u.map.cap, &m->u.map.in_blk,
                  sizeof(kura_attr), 8))
        return false;
    if (m->u.map.a != old) val_attrs_moved(m->u.map.a, 0, m->u.map.n);
    return true;
}

kura_status val_map_put(kura_value *m, const char *name, size_t name_len, kura_value *v)
{
    assert(m->type == KURA_M);
    bool found;
    uint32_t i = val_map_find(m, name, name_len, &found);
    if (found) {
        val_clear(&m->u.map.a[i].value);
        val_move(&m->u.map.a[i].value, v);
        return KURA_OK;
    }
    bool inl = name_len <= VAL_NAME_INLINE_MAX;
    char *copy = NULL;
    if (!inl && name_len < UINT32_MAX) copy = malloc(name_len + 1);
    if ((!inl && !copy) || !val_map_grow(m)) {
        free(copy);
        val_clear(v);
        return val_nomem();
    }
    kura_attr *a = m->u.map.a;
    memmove(&a[i + 1], &a[i], (size_t)(m->u.map.n - i) * sizeof *a);
    val_attrs_moved(a, i + 1, m->u.map.n + 1);
    if (inl) copy = a[i].name_inl;
    if (name_len) memcpy(copy, name, name_len);
    copy[name_len] = 0;
    a[i].name = copy;
    a[i].name_len = (uint32_t)name_len;
    a[i].name_kind = inl ? VAL_NAME_INLINE : VAL_NAME_OWNED;
    val_move(&a[i].value, v);
    m->u.map.n++;
    return KURA_OK;
}

bool val_map_remove(kura_value *m, const char *name, size_t name_len)
{
    if (m->type != KURA_M) return false;
    bool found;
    uint32_t i = val_map_find(m, name, name_len, &found);
    if (!found) return false;
    kura_attr *a = m->u.map.a;
    if (a[i].name_kind == VAL_NAME_OWNED) free(a[i].name);
    val_clear(&a[i].value);
    memmove(&a[i], &a[i + 1], (size_t)(m->u.map.n - i - 1) * sizeof *a);
    m->u.map.n--;
    val_attrs_moved(a, i, m->u.map.n);
    return true;
}

/* ---- Lists and sets ---------------------------------------------------------------------- */

kura_status val_list_push(kura_value *l, kura_value *v)
{
    assert(val_is_listlike(l->type));
    if (!val_grow((void **)&l->u.list.v, l->u.list.n, &l->u.list.cap, &l->u.list.in_blk,
                  sizeof(kura_value), 4)) {
        val_clear(v);
        return val_nomem();
    }
    val_move(&l->u.list.v[l->u.list.n++], v);
    return KURA_OK;
}

void val_list_remove(kura_value *l, uint32_t i)
{
    assert(val_is_listlike(l->type) && i < l->u.list.n);
    kura_value *e = l->u.list.v;
    val_clear(&e[i]);
    memmove(&e[i], &e[i + 1], (size_t)(l->u.list.n - i - 1) * sizeof *e);
    l->u.list.n--;
}

/* ---- Comparing --------------------------------------------------------------------------- */

int val_cmp_scalar(const kura_value *a, const kura_value *b)
{
    assert(a->type == b->type);
    if (a->type == KURA_N) return num_cmp(&a->u.num, &b->u.num);
    return val_name_cmp((const char *)a->u.bytes.p, a->u.bytes.len, (const char *)b->u.bytes.p,
                        b->u.bytes.len);
}

bool val_set_contains(const kura_value *s, const kura_value *elem)
{
    for (uint32_t i = 0; i < s->u.list.n; i++)
        if (s->u.list.v[i].type == elem->type && val_cmp_scalar(&s->u.list.v[i], elem) == 0)
            return true;
    return false;
}

static int val_ptr_cmp(const void *x, const void *y)
{
    return val_cmp_scalar(*(const kura_value *const *)x, *(const kura_value *const *)y);
}

/* Sorts pointers to the members of `s` and drops duplicates; returns the distinct count. */
static uint32_t val_sorted_members(const kura_value *s, const kura_value **out)
{
    uint32_t n = s->u.list.n, k = 0;
    for (uint32_t i = 0; i < n; i++)
        out[i] = &s->u.list.v[i];
    qsort(out, n, sizeof *out, val_ptr_cmp);
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || val_cmp_scalar(out[k - 1], out[i]) != 0) out[k++] = out[i];
    return k;
}

/* Set equality (members in any order, duplicates ignored). On allocation failure of the large
 * path it falls back to the quadratic comparison: slower, never wrong. */
static bool val_set_equal(const kura_value *a, const kura_value *b)
{
    uint32_t na = a->u.list.n, nb = b->u.list.n;
    const kura_value **pa = NULL, **pb = NULL;
    if (na > VAL_SET_PAIRWISE_MAX || nb > VAL_SET_PAIRWISE_MAX) {
        pa = malloc(((size_t)na + 1) * sizeof *pa);
        pb = malloc(((size_t)nb + 1) * sizeof *pb);
    }
    bool eq = true;
    if (pa && pb) {
        uint32_t ka = val_sorted_members(a, pa), kb = val_sorted_members(b, pb);
        eq = ka == kb;
        for (uint32_t i = 0; eq && i < ka; i++)
            eq = val_cmp_scalar(pa[i], pb[i]) == 0;
    } else {
        for (uint32_t i = 0; eq && i < na; i++)
            eq = val_set_contains(b, &a->u.list.v[i]);
        for (uint32_t i = 0; eq && i < nb; i++)
            eq = val_set_contains(a, &b->u.list.v[i]);
    }
    free(pa);
    free(pb);
    return eq;
}

bool val_equal(const kura_value *a, const kura_value *b)
{
    if (a->type != b->type) return false;
    switch (a->type) {
    case KURA_S:
    case KURA_B:
    case KURA_N:
        return val_cmp_scalar(a, b) == 0;
    case KURA_BOOL:
        return a->u.boolean == b->u.boolean;
    case KURA_M:
        if (a->u.map.n != b->u.map.n) return false;
        for (uint32_t i = 0; i < a->u.map.n; i++) {
            const kura_attr *x = &a->u.map.a[i], *y = &b->u.map.a[i];
            if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0 ||
                !val_equal(&x->value, &y->value))
                return false;
        }
        return true;
    case KURA_L:
        if (a->u.list.n != b->u.list.n) return false;
        for (uint32_t i = 0; i < a->u.list.n; i++)
            if (!val_equal(&a->u.list.v[i], &b->u.list.v[i])) return false;
        return true;
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        return val_set_equal(a, b);
    default: /* NULL, empty */
        return true;
    }
}

const char *val_type_name(kura_type t)
{
    static const char *const names[] = {"",  "S", "N",  "B",  "BOOL", "NULL",
                                        "M", "L", "SS", "NS", "BS"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "";
}
