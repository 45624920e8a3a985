/*
 * jdoc.c - This file contains api/'s JSON documents (jdoc.h): the arena, the tree built from
 * YAJL's parse callbacks, and the functions that read and change it.
 *
 * The arena hands out 8-byte aligned pieces of chunks (the first 8 KiB, each next twice the
 * last up to 1 MiB; a piece larger than a quarter of a chunk gets a chunk of its own); nothing
 * is freed before the document. YAJL allocates from it too (a freed or reallocated block of
 * YAJL's is left in place), so a parse makes no malloc of its own beyond the chunks.
 *
 * The builder keeps one stack of the open containers and one growing list of the members and
 * elements parsed but not yet closed into their container: when a container ends, its part
 * of the list is copied into an array of exactly its size (objects: member by member through
 * jd_object_setn, which is where duplicate names are merged).
 *
 * YAJL checks the JSON and decodes strings; on top of it: raw \v and \f refused (YAJL takes
 * them for white space), a pass over the raw text for \u escapes (YAJL turns a lone high
 * surrogate into '?' and lets a lone low one through as invalid UTF-8; jansson refused both,
 * and so do we), the strict UTF-8 check of every
 * decoded string with a byte >= 0x80 (YAJL's own check lets overlong forms and surrogates
 * through), numbers (YAJL hands over their text) and the nesting limit. Member names may hold
 * NUL (DynamoDB's attribute names are any UTF-8): members are name + length throughout, so
 * readers of names that may come from users take the length (jd_object_keylen_foreach).
 */
#include "api/jdoc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "util/hash.h"

/* ---- The arena ---------------------------------------------------------------------------- */

#define CHUNK_FIRST (8u * 1024)
#define CHUNK_MAX (1u << 20)

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    max_align_t data[];
} chunk;

struct jd_doc {
    chunk *head;   /* the chunk being filled (large pieces' chunks go behind it) */
    chunk *first;  /* the first chunk (CHUNK_FIRST), kept as a spare when the document goes */
    size_t next_cap;
};

static chunk *chunk_new(size_t cap)
{
    chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    c->next = NULL;
    c->cap = cap;
    c->used = 0;
    return c;
}

/*
 * Spare first chunks. Every request parses into a new document, and its first chunk is larger
 * than what glibc's per-thread cache holds (blocks up to 1032 bytes), so its malloc and its
 * free each took the lock of a malloc arena; kura-server runs more serving threads than it has
 * arenas, and those locks were its most frequent futex calls (~0.25 per GetItem, each a
 * possible sleep). A freed document instead leaves its first chunk in one of SPARE_SLOTS
 * slots, and a new one takes it from there: an atomic exchange, no lock. At most SPARE_SLOTS
 * chunks (64 KiB) are kept; jd_free_spares() frees them.
 */
#define SPARE_SLOTS 8
static _Atomic(chunk *) spare[SPARE_SLOTS];

/* Under AddressSanitizer a spare chunk's bytes are poisoned, so that a use of a freed
 * document's memory is still reported although the memory was not freed. */
#if defined(__SANITIZE_ADDRESS__)
#define JD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JD_ASAN 1
#endif
#endif
#ifdef JD_ASAN
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(c) ASAN_POISON_MEMORY_REGION((c)->data, (c)->cap)
#define SPARE_UNPOISON(c) ASAN_UNPOISON_MEMORY_REGION((c)->data, (c)->cap)
#else
#define SPARE_POISON(c) ((void)(c))
#define SPARE_UNPOISON(c) ((void)(c))
#endif
static atomic_uint spare_threads;
static _Thread_local unsigned spare_home = UINT_MAX; /* where this thread looks first */

static unsigned spare_start(void)
{
    if (spare_home == UINT_MAX) spare_home = atomic_fetch_add(&spare_threads, 1) % SPARE_SLOTS;
    return spare_home;
}

static chunk *spare_take(void)
{
    unsigned h = spare_start();
    for (unsigned i = 0; i < SPARE_SLOTS; i++) {
        _Atomic(chunk *) *slot = &spare[(h + i) % SPARE_SLOTS];
        chunk *c;
        if (atomic_load_explicit(slot, memory_order_relaxed) &&
            (c = atomic_exchange_explicit(slot, NULL, memory_order_acquire))) {
            SPARE_UNPOISON(c);
            return c;
        }
    }
    return NULL;
}

static void spare_put(chunk *c)
{
    unsigned h = spare_start();
    SPARE_POISON(c);
    for (unsigned i = 0; i < SPARE_SLOTS; i++) {
        _Atomic(chunk *) *slot = &spare[(h + i) % SPARE_SLOTS];
        chunk *empty = NULL;
        if (!atomic_load_explicit(slot, memory_order_relaxed) &&
            atomic_compare_exchange_strong_explicit(slot, &empty, c, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    SPARE_UNPOISON(c);
    free(c);
}

void jd_free_spares(void)
{
    for (unsigned i = 0; i < SPARE_SLOTS; i++) {
        chunk *c = atomic_exchange(&spare[i], NULL);
        if (c) SPARE_UNPOISON(c);
        free(c);
    }
}

jd_doc *jd_doc_new(void)
{
    jd_doc *d = malloc(sizeof *d);
    if (!d) return NULL;
    chunk *c = spare_take();
    if (c)
        c->used = 0;
    else if (!(c = chunk_new(CHUNK_FIRST))) {
        free(d);
        return NULL;
    }
    d->head = d->first = c;
    d->next_cap = 2 * CHUNK_FIRST;
    return d;
}

void jd_doc_free(jd_doc *d)
{
    if (!d) return;
    for (chunk *c = d->head, *next; c; c = next) {
        next = c->next;
        if (c == d->first) {
            c->next = NULL;
            spare_put(c);
        } else {
            free(c);
        }
    }
    free(d);
}

static void *arena_alloc(jd_doc *d, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    chunk *h = d->head;
    if (n <= h->cap - h->used) {
        void *p = (char *)h->data + h->used;
        h->used += n;
        return p;
    }
    if (n > d->next_cap / 4) { /* a chunk of its own, behind the current one */
        chunk *c = chunk_new(n);
        if (!c) return NULL;
        c->used = n;
        c->next = h->next;
        h->next = c;
        return c->data;
    }
    chunk *c = chunk_new(d->next_cap);
    if (!c) return NULL;
    if (d->next_cap < CHUNK_MAX) d->next_cap *= 2;
    c->next = h;
    d->head = c;
    c->used = n;
    return c->data;
}

static char *arena_strdup(jd_doc *d, const char *s, size_t n)
{
    char *p = arena_alloc(d, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* YAJL's allocator: a size word before each block, so that realloc can copy. */
static void *y_malloc(void *ctx, size_t n)
{
    size_t *p = arena_alloc(ctx, n + sizeof(size_t));
    if (!p) return NULL;
    *p = n;
    return p + 1;
}

static void *y_realloc(void *ctx, void *old, size_t n)
{
    if (!old) return y_malloc(ctx, n);
    size_t have = ((size_t *)old)[-1];
    if (n <= have) return old;
    void *p = y_malloc(ctx, n);
    if (p) memcpy(p, old, have);
    return p;
}

static void y_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

size_t jd_utf8_seq(const uint8_t *p, size_t n)
{
    uint8_t u = p[0];
    size_t len = u >= 0xC2 && u <= 0xDF   ? 2
                 : u >= 0xE0 && u <= 0xEF ? 3
                 : u >= 0xF0 && u <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || len > n) return 0;
    uint32_t cp = u & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp < least[len]) return 0;
    return len;
}

static bool utf8_valid(const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t k = jd_utf8_seq(p, (size_t)(end - p));
        if (k == 0) return false;
        p += k;
    }
    return true;
}

/* ---- Nodes ---------------------------------------------------------------------------------- */

static jd_t *node(jd_doc *d, jd_type type)
{
    jd_t *v = arena_alloc(d, sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->type = type;
    v->doc = d;
    return v;
}

jd_t *jd_object(jd_doc *d)
{
    return node(d, JD_OBJECT);
}

jd_t *jd_array(jd_doc *d)
{
    return node(d, JD_ARRAY);
}

jd_t *jd_stringn(jd_doc *d, const char *s, size_t n)
{
    jd_t *v = node(d, JD_STRING);
    if (!v || !(v->u.str.p = arena_strdup(d, s, n))) return NULL;
    v->u.str.len = n;
    return v;
}

jd_t *jd_string(jd_doc *d, const char *s)
{
    return s ? jd_stringn(d, s, strlen(s)) : NULL;
}

jd_t *jd_integer(jd_doc *d, jd_int_t i)
{
    jd_t *v = node(d, JD_INTEGER);
    if (v) v->u.i = i;
    return v;
}

jd_t *jd_real(jd_doc *d, double r)
{
    jd_t *v = node(d, JD_REAL);
    if (v) v->u.r = r;
    return v;
}

jd_t *jd_true(jd_doc *d)
{
    return node(d, JD_TRUE);
}

jd_t *jd_false(jd_doc *d)
{
    return node(d, JD_FALSE);
}

jd_t *jd_boolean(jd_doc *d, bool b)
{
    return node(d, b ? JD_TRUE : JD_FALSE);
}

jd_t *jd_null(jd_doc *d)
{
    return node(d, JD_NULL);
}

/* ---- Objects -------------------------------------------------------------------------------- */

static bool key_eq(const jd_member *m, const char *key, size_t n)
{
    return m->key_len == n && memcmp(m->key, key, n) == 0;
}

/* Adds member position pos to the index (which has room). */
static void index_put(jd_t *obj, size_t pos)
{
    const jd_member *m = &obj->u.obj.m[pos];
    size_t mask = obj->u.obj.index_cap - 1;
    for (size_t i = kura_hash64(m->key, m->key_len) & mask;; i = (i + 1) & mask) {
        if (!obj->u.obj.index[i]) {
            obj->u.obj.index[i] = (uint32_t)pos + 1;
            return;
        }
    }
}

/* Builds the index for the members (false: out of memory; lookups stay linear). */
static bool index_build(jd_t *obj)
{
    size_t cap = 64;
    while (cap < 2 * obj->u.obj.cap)
        cap *= 2;
    uint32_t *t = arena_alloc(obj->doc, cap * sizeof *t);
    if (!t) return false;
    memset(t, 0, cap * sizeof *t);
    obj->u.obj.index = t;
    obj->u.obj.index_cap = cap;
    for (size_t i = 0; i < obj->u.obj.n; i++)
        index_put(obj, i);
    return true;
}

/* The position of member key, removed or not, or obj->u.obj.n. */
static size_t find(const jd_t *obj, const char *key, size_t n)
{
    const jd_member *m = obj->u.obj.m;
    if (!obj->u.obj.index) {
        for (size_t i = 0; i < obj->u.obj.n; i++)
            if (key_eq(&m[i], key, n)) return i;
        return obj->u.obj.n;
    }
    size_t mask = obj->u.obj.index_cap - 1;
    for (size_t i = kura_hash64(key, n) & mask; obj->u.obj.index[i]; i = (i + 1) & mask) {
        size_t pos = obj->u.obj.index[i] - 1;
        if (key_eq(&m[pos], key, n)) return pos;
    }
    return obj->u.obj.n;
}

jd_t *jd_object_getn(const jd_t *obj, const char *key, size_t key_len)
{
    if (!jd_is_object(obj)) return NULL;
    size_t i = find(obj, key, key_len);
    return i < obj->u.obj.n ? obj->u.obj.m[i].val : NULL;
}

jd_t *jd_object_get(const jd_t *obj, const char *key)
{
    return jd_object_getn(obj, key, strlen(key));
}

/* Room for one more member (the index, when there is one, is rebuilt for the new size). */
static bool object_grow(jd_t *obj)
{
    if (obj->u.obj.n < obj->u.obj.cap) return true;
    size_t cap = obj->u.obj.cap ? 2 * obj->u.obj.cap : 8;
    jd_member *m = arena_alloc(obj->doc, cap * sizeof *m);
    if (!m) return false;
    if (obj->u.obj.n) memcpy(m, obj->u.obj.m, obj->u.obj.n * sizeof *m);
    obj->u.obj.m = m;
    obj->u.obj.cap = cap;
    obj->u.obj.index = NULL;
    if (cap >= JD_INDEX_MIN) index_build(obj);
    return true;
}

/* Sets member key (already in the arena when owned) to value. */
static int object_put(jd_t *obj, const char *key, size_t key_len, bool owned, jd_t *value)
{
    if (!jd_is_object(obj) || !value) return -1;
    size_t i = find(obj, key, key_len);
    if (i < obj->u.obj.n) {
        if (!obj->u.obj.m[i].val) obj->u.obj.live++;
        obj->u.obj.m[i].val = value;
        return 0;
    }
    if (!object_grow(obj)) return -1;
    if (!owned && !(key = arena_strdup(obj->doc, key, key_len))) return -1;
    obj->u.obj.m[i] = (jd_member){key, key_len, value};
    obj->u.obj.n++;
    obj->u.obj.live++;
    if (obj->u.obj.index) index_put(obj, i);
    return 0;
}

int jd_object_setn(jd_t *obj, const char *key, size_t key_len, jd_t *value)
{
    return object_put(obj, key, key_len, false, value);
}

int jd_object_set(jd_t *obj, const char *key, jd_t *value)
{
    return object_put(obj, key, strlen(key), false, value);
}

int jd_object_update(jd_t *obj, const jd_t *other)
{
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(other, key, key_len, val)
    {
        if (jd_object_setn(obj, key, key_len, val) != 0) return -1;
    }
    return 0;
}

int jd_object_deln(jd_t *obj, const char *key, size_t key_len)
{
    if (!jd_is_object(obj)) return -1;
    size_t i = find(obj, key, key_len);
    if (i == obj->u.obj.n || !obj->u.obj.m[i].val) return -1;
    obj->u.obj.m[i].val = NULL;
    obj->u.obj.live--;
    return 0;
}

int jd_object_del(jd_t *obj, const char *key)
{
    return jd_object_deln(obj, key, strlen(key));
}

/* ---- Arrays --------------------------------------------------------------------------------- */

int jd_array_append(jd_t *arr, jd_t *value)
{
    if (!jd_is_array(arr) || !value) return -1;
    if (arr->u.arr.n == arr->u.arr.cap) {
        size_t cap = arr->u.arr.cap ? 2 * arr->u.arr.cap : 8;
        jd_t **v = arena_alloc(arr->doc, cap * sizeof *v);
        if (!v) return -1;
        if (arr->u.arr.n) memcpy(v, arr->u.arr.v, arr->u.arr.n * sizeof *v);
        arr->u.arr.v = v;
        arr->u.arr.cap = cap;
    }
    arr->u.arr.v[arr->u.arr.n++] = value;
    return 0;
}

int jd_array_set(jd_t *arr, size_t i, jd_t *value)
{
    if (!jd_is_array(arr) || !value || i >= arr->u.arr.n) return -1;
    arr->u.arr.v[i] = value;
    return 0;
}

jd_t *jd_deep_copy(jd_doc *d, const jd_t *v)
{
    if (!v) return NULL;
    switch (v->type) {
    case JD_OBJECT: {
        jd_t *o = jd_object(d);
        const char *key;
        size_t key_len;
        jd_t *val;
        if (!o) return NULL;
        jd_object_keylen_foreach(v, key, key_len, val)
        {
            if (jd_object_setn(o, key, key_len, jd_deep_copy(d, val)) != 0) return NULL;
        }
        return o;
    }
    case JD_ARRAY: {
        jd_t *a = jd_array(d);
        if (!a) return NULL;
        for (size_t i = 0; i < v->u.arr.n; i++)
            if (jd_array_append(a, jd_deep_copy(d, v->u.arr.v[i])) != 0) return NULL;
        return a;
    }
    case JD_STRING:
        return jd_stringn(d, v->u.str.p, v->u.str.len);
    default: {
        jd_t *c = node(d, v->type);
        if (c) c->u = v->u;
        return c;
    }
    }
}

/* ---- Parsing -------------------------------------------------------------------------------- */

typedef struct pending {
    const char *key; /* in the arena; NULL inside an array */
    size_t key_len;
    jd_t *val;
} pending;

typedef struct frame {
    jd_t *node;
    size_t first; /* its first pending entry */
    const char *key;
    size_t key_len;
} frame;

/* The stack and the list start in the builder itself (on jd_parse's stack): a request's JSON
 * fits in them, so a parse mallocs neither. */
#define INLINE_FRAMES 16
#define INLINE_PENDING 48

typedef struct builder {
    jd_doc *d;
    jd_t *root;
    frame *stack; /* inline_stack, or malloc'd once that is full */
    size_t depth, stack_cap;
    pending *list; /* inline_list, or malloc'd once that is full */
    size_t n, cap;
    frame inline_stack[INLINE_FRAMES];
    pending inline_list[INLINE_PENDING];
    const char *key; /* the member name just parsed */
    size_t key_len;
    const char *error; /* set by a callback that stops the parse */
    yajl_handle h;
    bool finishing;    /* inside yajl_complete_parse: all of the text is consumed */
    size_t root_end;   /* where the root value ends in the text */
} builder;

static int fail(builder *b, const char *msg)
{
    b->error = msg;
    return 0;
}

/* `a` (n elements of `size` bytes, the builder's inline array or a malloc'd one) moved to or
 * reallocated as a malloc'd array of cap; NULL if out of memory (a is left as it was). */
static void *grow(void *a, void *inline_a, size_t n, size_t cap, size_t size)
{
    if (a != inline_a) return realloc(a, cap * size);
    void *m = malloc(cap * size);
    if (m) memcpy(m, a, n * size);
    return m;
}

/* Adds a complete value to the open container, or makes it the root. */
static int add(builder *b, jd_t *v, const char *key, size_t key_len)
{
    if (!v) return fail(b, "out of memory");
    if (b->depth == 0) {
        b->root = v;
        b->root_end = b->finishing ? SIZE_MAX : yajl_get_bytes_consumed(b->h);
        return 1;
    }
    if (b->n == b->cap) {
        size_t cap = 2 * b->cap;
        pending *l = grow(b->list, b->inline_list, b->n, cap, sizeof *l);
        if (!l) return fail(b, "out of memory");
        b->list = l;
        b->cap = cap;
    }
    b->list[b->n++] = (pending){key, key_len, v};
    return 1;
}

static int add_value(builder *b, jd_t *v)
{
    return add(b, v, b->key, b->key_len);
}

static int cb_null(void *ctx)
{
    builder *b = ctx;
    return add_value(b, jd_null(b->d));
}

static int cb_boolean(void *ctx, int v)
{
    builder *b = ctx;
    return add_value(b, jd_boolean(b->d, v != 0));
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    builder *b = ctx;
    char text[64], *end;
    if (n >= sizeof text) { /* a long number: as text in the arena */
        char *p = arena_strdup(b->d, s, n);
        if (!p) return fail(b, "out of memory");
        s = p;
    } else {
        memcpy(text, s, n);
        text[n] = '\0';
        s = text;
    }
    errno = 0;
    if (!memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n)) {
        long long i = strtoll(s, &end, 10);
        if (errno == ERANGE) return fail(b, "too big integer");
        return add_value(b, jd_integer(b->d, (jd_int_t)i));
    }
    double r = strtod(s, &end);
    if (errno == ERANGE && (r == HUGE_VAL || r == -HUGE_VAL))
        return fail(b, "real number overflow");
    return add_value(b, jd_real(b->d, r));
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    builder *b = ctx;
    if (!utf8_valid((const char *)s, n)) return fail(b, "invalid UTF-8 string");
    return add_value(b, jd_stringn(b->d, (const char *)s, n));
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
    builder *b = ctx;
    if (!utf8_valid((const char *)s, n)) return fail(b, "invalid UTF-8 member name");
    if (!(b->key = arena_strdup(b->d, (const char *)s, n))) return fail(b, "out of memory");
    b->key_len = n;
    return 1;
}

static int open_container(builder *b, jd_t *v)
{
    if (!v) return fail(b, "out of memory");
    if (b->depth == JD_MAX_DEPTH) return fail(b, "maximum parsing depth reached");
    if (b->depth == b->stack_cap) {
        size_t cap = 2 * b->stack_cap;
        frame *s = grow(b->stack, b->inline_stack, b->depth, cap, sizeof *s);
        if (!s) return fail(b, "out of memory");
        b->stack = s;
        b->stack_cap = cap;
    }
    b->stack[b->depth++] = (frame){v, b->n, b->key, b->key_len};
    b->key = NULL;
    b->key_len = 0;
    return 1;
}

static int cb_start_map(void *ctx)
{
    builder *b = ctx;
    return open_container(b, jd_object(b->d));
}

static int cb_start_array(void *ctx)
{
    builder *b = ctx;
    return open_container(b, jd_array(b->d));
}

static int close_container(builder *b)
{
    frame f = b->stack[--b->depth];
    jd_t *v = f.node;
    size_t count = b->n - f.first;
    const pending *p = count ? b->list + f.first : NULL;
    if (v->type == JD_ARRAY && count) {
        if (!(v->u.arr.v = arena_alloc(b->d, count * sizeof *v->u.arr.v)))
            return fail(b, "out of memory");
        for (size_t i = 0; i < count; i++)
            v->u.arr.v[i] = p[i].val;
        v->u.arr.n = v->u.arr.cap = count;
    } else if (count) {
        if (!(v->u.obj.m = arena_alloc(b->d, count * sizeof *v->u.obj.m)))
            return fail(b, "out of memory");
        v->u.obj.cap = count;
        if (count >= JD_INDEX_MIN) index_build(v);
        for (size_t i = 0; i < count; i++)
            if (object_put(v, p[i].key, p[i].key_len, true, p[i].val) != 0)
                return fail(b, "out of memory");
    }
    b->n = f.first;
    return add(b, v, f.key, f.key_len);
}

static int cb_end(void *ctx)
{
    return close_container(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

static int hex(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The \uXXXX escape at s[0..n), or -1 if there is none. */
static long escape_at(const char *s, size_t n)
{
    if (n < 6 || s[0] != '\\' || s[1] != 'u') return -1;
    long cp = 0;
    for (int i = 2; i < 6; i++) {
        int h = hex(s[i]);
        if (h < 0) return -1;
        cp = cp * 16 + h;
    }
    return cp;
}

/* False if a \u escape of the text is half of a surrogate pair without the other half.
 * Backslashes appear only inside strings (anywhere else YAJL refuses the text), each
 * starting an escape whose next character is not looked at again. */
static bool surrogates_paired(const char *s, size_t n)
{
    const char *end = s + n;
    for (const char *p = memchr(s, '\\', n); p; p = memchr(p, '\\', (size_t)(end - p))) {
        long cp = escape_at(p, (size_t)(end - p));
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            long low = escape_at(p + 6, (size_t)(end - p - 6));
            if (low < 0xDC00 || low > 0xDFFF) return false;
            p += 12;
        } else {
            p += p + 1 < end ? 2 : 1;
        }
        if (p >= end) break;
    }
    return true;
}

/* Whether json[from..len) is JSON white space only (YAJL lets an unfinished token after the
 * value through, e.g. {}"abc). */
static bool only_space(const char *json, size_t len, size_t from)
{
    for (size_t i = from; i < len; i++)
        if (json[i] != ' ' && json[i] != '\t' && json[i] != '\n' && json[i] != '\r') return false;
    return true;
}

static void set_error(char *err, size_t cap, const char *msg)
{
    if (cap) snprintf(err, cap, "%s", msg);
}

/* YAJL's message without its "lexical error: " / "parse error: " heading and line end. */
static void yajl_error(yajl_handle h, const char *json, size_t len, char *err, size_t cap)
{
    unsigned char *m = yajl_get_error(h, 0, (const unsigned char *)json, len);
    const char *text = m ? (const char *)m : "invalid JSON";
    const char *colon = strstr(text, ": ");
    if (colon) text = colon + 2;
    if (cap) {
        snprintf(err, cap, "%s", text);
        size_t n = strlen(err);
        while (n && (err[n - 1] == '\n' || err[n - 1] == ' ' || err[n - 1] == '.'))
            err[--n] = '\0';
    }
    if (m) yajl_free_error(h, m);
}

jd_t *jd_parse(jd_doc *d, const char *json, size_t len, unsigned flags, char *err, size_t cap)
{
    /* YAJL takes \v and \f for white space; JSON has no place for them, raw, anywhere (a
     * string must escape them) */
    if (memchr(json, '\v', len) || memchr(json, '\f', len)) {
        set_error(err, cap, "invalid character: a raw \\v or \\f");
        return NULL;
    }
    builder b = {.d = d};
    b.stack = b.inline_stack;
    b.stack_cap = INLINE_FRAMES;
    b.list = b.inline_list;
    b.cap = INLINE_PENDING;
    yajl_alloc_funcs af = {y_malloc, y_realloc, y_free, d};
    yajl_handle h = b.h = yajl_alloc(&callbacks, &af, &b);
    if (!h) {
        set_error(err, cap, "out of memory");
        return NULL;
    }
    yajl_config(h, yajl_dont_validate_strings, 1); /* cb_string and cb_map_key check, strictly */
    yajl_status st = yajl_parse(h, (const unsigned char *)json, len);
    b.finishing = true;
    if (st == yajl_status_ok) st = yajl_complete_parse(h);
    jd_t *root = NULL;
    if (st == yajl_status_ok && b.root && !only_space(json, len, b.root_end)) {
        set_error(err, cap, "end of file expected");
    } else if (st == yajl_status_ok && b.root) {
        root = b.root;
    } else if (b.error) {
        set_error(err, cap, b.error);
    } else if (st == yajl_status_ok) {
        set_error(err, cap, "'[' or '{' expected");
    } else {
        yajl_error(h, json, len, err, cap);
    }
    yajl_free(h);
    if (b.stack != b.inline_stack) free(b.stack);
    if (b.list != b.inline_list) free(b.list);
    if (root && !(flags & JD_DECODE_ANY) && root->type != JD_OBJECT && root->type != JD_ARRAY) {
        set_error(err, cap, "'[' or '{' expected");
        return NULL;
    }
    if (root && !surrogates_paired(json, len)) {
        set_error(err, cap, "invalid Unicode escape: a lone surrogate");
        return NULL;
    }
    return root;
}
