/*
 * value_api.c - This file contains the public attribute-value functions of kura.h
 * (kura_value_*), except the DynamoDB JSON conversions (engine/api).
 *
 * A public kura_value is a heap-allocated node of the value tree of value.h: the constructors
 * malloc one node and fill it with the val_* builders (S and B: one allocation for the node
 * and its bytes, val_new_bytes in pack.c), and the container functions move the caller's node
 * into the container and free the now-empty node, which is how "takes ownership in every
 * case" is kept without copying. Accessors return pointers into the tree,
 * valid until the container is modified or freed (kura.h).
 */
#include "engine/model/value.h"

#include <stdlib.h>
#include <string.h>

/* malloc, not calloc: every constructor fills the node, and glibc serves small mallocs from
 * its per-thread cache, which calloc bypasses. */
static kura_value *value_alloc(void)
{
    kura_value *v = malloc(sizeof *v);
    if (!v) kura_err(KURA_E_NOMEM, "out of memory");
    return v;
}

kura_value *kura_value_s(const char *s, size_t len)
{
    return val_new_bytes(KURA_S, s, len);
}

kura_value *kura_value_b(const void *p, size_t len)
{
    return val_new_bytes(KURA_B, p, len);
}

kura_value *kura_value_n(const char *num, size_t len)
{
    kura_num n;
    if (num_parse(num, len, &n) != KURA_OK) return NULL; /* message set by num_parse */
    kura_value *v = value_alloc();
    if (v) val_set_num(v, &n);
    return v;
}

kura_value *kura_value_bool(bool b)
{
    kura_value *v = value_alloc();
    if (v) val_set_bool(v, b);
    return v;
}

kura_value *kura_value_null(void)
{
    kura_value *v = value_alloc();
    if (v) val_set_null(v);
    return v;
}

static kura_value *value_container(kura_type type)
{
    kura_value *v = value_alloc();
    if (v) val_init_container(v, type);
    return v;
}

kura_value *kura_value_map(void)
{
    return value_container(KURA_M);
}

kura_value *kura_value_list(void)
{
    return value_container(KURA_L);
}

kura_value *kura_value_set(kura_type set_type)
{
    if (set_type != KURA_SS && set_type != KURA_NS && set_type != KURA_BS) {
        kura_err(KURA_E_INVALID, "kura_value_set: type %d is not a set type", (int)set_type);
        return NULL;
    }
    return value_container(set_type);
}

kura_value *kura_value_clone(const kura_value *v)
{
    if (!v) return NULL;
    kura_value *c = value_alloc();
    if (c && val_copy(c, v) != KURA_OK) {
        free(c);
        return NULL;
    }
    return c;
}

void kura_value_free(kura_value *v)
{
    if (!v) return;
    val_block *shell = val_shell_of(v);
    val_clear(v);
    val_free_node(v, shell);
}

kura_status kura_value_map_put(kura_value *m, const char *name, size_t name_len, kura_value *v)
{
    if (!v) return kura_err(KURA_E_INVALID, "kura_value_map_put: no value");
    if (!m || m->type != KURA_M) {
        kura_value_free(v);
        return kura_err(KURA_E_INVALID, "kura_value_map_put: not a map");
    }
    val_block *shell = val_shell_of(v);
    kura_status st = val_map_put(m, name, name_len, v); /* *v is empty afterwards */
    val_free_node(v, shell);
    return st;
}

/* The element type a set holds. */
static kura_type value_set_elem(kura_type set_type)
{
    return set_type == KURA_SS ? KURA_S : set_type == KURA_NS ? KURA_N : KURA_B;
}

kura_status kura_value_append(kura_value *list_or_set, kura_value *v)
{
    if (!v) return kura_err(KURA_E_INVALID, "kura_value_append: no value");
    kura_value *l = list_or_set;
    kura_type t = l ? (kura_type)l->type : (kura_type)0;
    const char *why = NULL;
    if (t != KURA_L && t != KURA_SS && t != KURA_NS && t != KURA_BS)
        why = "not a list or set";
    else if (t != KURA_L && v->type != value_set_elem(t))
        why = "element type does not match the set";
    if (why) {
        kura_value_free(v);
        return kura_err(KURA_E_INVALID, "kura_value_append: %s", why);
    }
    val_block *shell = val_shell_of(v);
    kura_status st = val_list_push(l, v);
    val_free_node(v, shell);
    return st;
}

kura_type kura_value_type(const kura_value *v)
{
    return v ? (kura_type)v->type : (kura_type)0;
}

const char *kura_value_bytes(const kura_value *v, size_t *len_out)
{
    if (!v || (v->type != KURA_S && v->type != KURA_B)) return NULL;
    if (len_out) *len_out = v->u.bytes.len;
    return (const char *)v->u.bytes.p;
}

size_t kura_value_num(const kura_value *v, char *buf, size_t cap)
{
    if (!v || v->type != KURA_N || !buf) return 0;
    char tmp[NUM_FORMAT_MAX];
    size_t len = num_format(&v->u.num, tmp, sizeof tmp);
    if (len + 1 > cap) return 0;
    memcpy(buf, tmp, len + 1);
    return len;
}

bool kura_value_boolean(const kura_value *v)
{
    return v && v->type == KURA_BOOL && v->u.boolean;
}

size_t kura_value_count(const kura_value *v)
{
    if (!v) return 0;
    switch (v->type) {
    case KURA_M:
        return v->u.map.n;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        return v->u.list.n;
    default:
        return 0;
    }
}

const kura_value *kura_value_at(const kura_value *v, size_t i, const char **name_out,
                                size_t *name_len_out)
{
    if (i >= kura_value_count(v)) return NULL;
    if (v->type != KURA_M) return &v->u.list.v[i];
    const kura_attr *a = &v->u.map.a[i];
    if (name_out) *name_out = a->name;
    if (name_len_out) *name_len_out = a->name_len;
    return &a->value;
}

const kura_value *kura_value_get(const kura_value *m, const char *name, size_t name_len)
{
    if (!m || m->type != KURA_M) return NULL;
    return val_map_get(m, name, name_len);
}
