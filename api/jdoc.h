/*
 * jdoc.h - api/'s JSON documents: a request body parsed by YAJL (Debian libyajl-dev, its
 * callback parser) into a tree whose nodes, strings and arrays all live in one arena owned by
 * the document, freed in one go when the request ends.
 *
 * Why not a general-purpose JSON library's tree: jansson (which api/ used first) spent ~11 us
 * of the ~15 us a JSON PutItem cost on parsing a 734-byte body (a hash table, a malloc per
 * string and per object); YAJL's callbacks into this arena take ~1.5 us. See
 * docs/data-model.md, "Request JSON".
 *
 * What a document accepts is what jansson's json_loadb(JSON_ALLOW_NUL) accepted:
 *   - strings of any bytes incl. U+0000 (every string carries its length and is also
 *     NUL-terminated), strictly valid UTF-8 (no overlong forms, surrogates or code points
 *     past U+10FFFF, raw or as \u escapes; a \uD800-\uDBFF escape must be followed by a
 *     \uDC00-\uDFFF one);
 *   - numbers: without fraction or exponent an integer (int64; larger is an error), else a
 *     real (double; overflow is an error);
 *   - a duplicate member name: the last value wins, in the first one's position;
 *   - nesting up to JD_MAX_DEPTH; one value, nothing but white space after it; at the top an
 *     object or array unless JD_DECODE_ANY.
 * Objects keep their members in order; lookups are linear and switch to a hash index past
 * JD_INDEX_MIN members. Removing a member leaves a hole the iterators skip.
 *
 * The functions are named and behave as jansson's were (jd_object_get -> jd_object_get),
 * except that every new node is made in a document and nothing is reference counted: a node
 * lives as long as its document, and may be placed in several containers of it.
 */
#ifndef KURA_API_JDOC_H
#define KURA_API_JDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JD_MAX_DEPTH 2048
#define JD_INDEX_MIN 24
#define JD_DECODE_ANY 1u

typedef enum jd_type {
    JD_OBJECT,
    JD_ARRAY,
    JD_STRING,
    JD_INTEGER,
    JD_REAL,
    JD_TRUE,
    JD_FALSE,
    JD_NULL
} jd_type;

typedef struct jd_doc jd_doc;
typedef struct jd_t jd_t;
typedef int64_t jd_int_t;

typedef struct jd_member {
    const char *key; /* NUL-terminated, may hold NULs before key_len */
    size_t key_len;
    jd_t *val;       /* NULL: removed */
} jd_member;

struct jd_t {
    jd_type type;
    jd_doc *doc;
    union {
        struct {
            const char *p; /* NUL-terminated */
            size_t len;
        } str;
        jd_int_t i;
        double r;
        struct {
            jd_member *m;
            size_t n, cap, live;
            uint32_t *index; /* NULL or a hash table of n member positions + 1 (0 = empty) */
            size_t index_cap;
        } obj;
        struct {
            jd_t **v;
            size_t n, cap;
        } arr;
    } u;
};

/* A new empty document; NULL when out of memory. */
jd_doc *jd_doc_new(void);
void jd_doc_free(jd_doc *d);

/* Frees the first chunks that freed documents left for new ones to reuse (at most 64 KiB; see
 * jdoc.c); documents made afterwards allocate again. */
void jd_free_spares(void);

/* Parses json[0..len) into d. NULL on failure, with a one-line message in err[0..err_cap). */
jd_t *jd_parse(jd_doc *d, const char *json, size_t len, unsigned flags, char *err,
               size_t err_cap);

/* Length of the UTF-8 sequence at p[0..n) (p[0] >= 0x80), or 0 when it is not valid UTF-8
 * (overlong, surrogate, past U+10FFFF, cut short). */
size_t jd_utf8_seq(const uint8_t *p, size_t n);

/* ---- Reading (a NULL node is no value of any type) --------------------------------------- */

static inline bool jd_is_object(const jd_t *v) { return v && v->type == JD_OBJECT; }
static inline bool jd_is_array(const jd_t *v) { return v && v->type == JD_ARRAY; }
static inline bool jd_is_string(const jd_t *v) { return v && v->type == JD_STRING; }
static inline bool jd_is_integer(const jd_t *v) { return v && v->type == JD_INTEGER; }
static inline bool jd_is_real(const jd_t *v) { return v && v->type == JD_REAL; }
static inline bool jd_is_number(const jd_t *v) { return jd_is_integer(v) || jd_is_real(v); }
static inline bool jd_is_true(const jd_t *v) { return v && v->type == JD_TRUE; }
static inline bool jd_is_false(const jd_t *v) { return v && v->type == JD_FALSE; }
static inline bool jd_is_boolean(const jd_t *v) { return jd_is_true(v) || jd_is_false(v); }
static inline bool jd_is_null(const jd_t *v) { return v && v->type == JD_NULL; }

static inline const char *jd_string_value(const jd_t *v)
{
    return jd_is_string(v) ? v->u.str.p : NULL;
}
static inline size_t jd_string_length(const jd_t *v)
{
    return jd_is_string(v) ? v->u.str.len : 0;
}
static inline jd_int_t jd_integer_value(const jd_t *v)
{
    return jd_is_integer(v) ? v->u.i : 0;
}
static inline double jd_real_value(const jd_t *v)
{
    return jd_is_real(v) ? v->u.r : 0.0;
}
static inline double jd_number_value(const jd_t *v)
{
    return jd_is_integer(v) ? (double)v->u.i : jd_real_value(v);
}
static inline size_t jd_array_size(const jd_t *v)
{
    return jd_is_array(v) ? v->u.arr.n : 0;
}
static inline jd_t *jd_array_get(const jd_t *v, size_t i)
{
    return jd_is_array(v) && i < v->u.arr.n ? v->u.arr.v[i] : NULL;
}
static inline size_t jd_object_size(const jd_t *v)
{
    return jd_is_object(v) ? v->u.obj.live : 0;
}
jd_t *jd_object_get(const jd_t *obj, const char *key);
jd_t *jd_object_getn(const jd_t *obj, const char *key, size_t key_len);

/* The position of the first member at or after i that is not removed (obj->u.obj.n: none). */
static inline size_t jd_member_next(const jd_t *obj, size_t i)
{
    while (i < obj->u.obj.n && !obj->u.obj.m[i].val)
        i++;
    return i;
}

/* for each member (key, value) in order; the body may set or remove members of obj. */
#define jd_object_keylen_foreach(O_, K_, L_, V_)                                                \
    for (size_t jd_i_ = jd_is_object(O_) ? jd_member_next((O_), 0) : 0;                         \
         jd_is_object(O_) && jd_i_ < (O_)->u.obj.n &&                                           \
         ((K_) = (O_)->u.obj.m[jd_i_].key, (L_) = (O_)->u.obj.m[jd_i_].key_len,                 \
         (V_) = (O_)->u.obj.m[jd_i_].val, 1);                                                   \
         jd_i_ = jd_member_next((O_), jd_i_ + 1))
#define jd_object_foreach(O_, K_, V_)                                                           \
    for (size_t jd_i_ = jd_is_object(O_) ? jd_member_next((O_), 0) : 0;                         \
         jd_is_object(O_) && jd_i_ < (O_)->u.obj.n &&                                           \
         ((K_) = (O_)->u.obj.m[jd_i_].key, (V_) = (O_)->u.obj.m[jd_i_].val, 1);                 \
         jd_i_ = jd_member_next((O_), jd_i_ + 1))

/* ---- Making and changing (NULL / -1 when out of memory) ------------------------------------ */

static inline jd_doc *jd_doc_of(const jd_t *v) { return v->doc; }
jd_t *jd_object(jd_doc *d);
jd_t *jd_array(jd_doc *d);
jd_t *jd_stringn(jd_doc *d, const char *s, size_t n); /* copies s */
jd_t *jd_string(jd_doc *d, const char *s);
jd_t *jd_integer(jd_doc *d, jd_int_t i);
jd_t *jd_real(jd_doc *d, double r);
jd_t *jd_true(jd_doc *d);
jd_t *jd_false(jd_doc *d);
jd_t *jd_boolean(jd_doc *d, bool b);
jd_t *jd_null(jd_doc *d);
/* A copy of v and everything under it, made in d. */
jd_t *jd_deep_copy(jd_doc *d, const jd_t *v);

/* Sets (replacing in place, or appending) member key of obj to value; value may be NULL
 * (out of memory earlier): then -1. The key is copied. */
int jd_object_set(jd_t *obj, const char *key, jd_t *value);
int jd_object_setn(jd_t *obj, const char *key, size_t key_len, jd_t *value);
/* Sets every member of other in obj. */
int jd_object_update(jd_t *obj, const jd_t *other);
/* Removes member key (0) or finds none (-1). */
int jd_object_del(jd_t *obj, const char *key);
int jd_object_deln(jd_t *obj, const char *key, size_t key_len);
int jd_array_append(jd_t *arr, jd_t *value);
int jd_array_set(jd_t *arr, size_t i, jd_t *value);

#endif
