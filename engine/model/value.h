/*
 * value.h - the in-memory form of DynamoDB attribute values (kura_value, opaque in kura.h).
 *
 * A value is a small tagged node. Strings and binaries have a byte array (always
 * NUL-terminated one byte past len, so S values can be used as C strings); numbers are held
 * inline as a canonical kura_num; maps, lists and sets have an array of child nodes stored
 * inline (not pointers).
 *
 * Storage. A value built piece by piece (val_set_bytes, val_map_put, ...) owns a malloc'ed
 * array per container and per string; attribute names of at most VAL_NAME_INLINE_MAX bytes
 * are kept in the attribute itself, longer ones are malloc'ed. A value made whole by
 * val_decode() or val_copy() is packed instead: all its arrays, names and bytes lie in one
 * val_block, a single allocation with a reference count, and each node whose storage is in
 * the block holds one reference on it (an S or B value with bytes, a container with
 * elements). Such a node records the block in its `blk` field; a container also says whether
 * its array is in the block (`in_blk`) and each attribute where its name is (`name_kind`).
 * The block is freed when the last node holding it is cleared, so a packed value behaves
 * exactly like a built one: every function here reads, modifies, moves (also a child out of
 * its tree) and clears it the same way. Modifying a packed container never writes outside its
 * own array: growing it moves the elements to a malloc'ed array (the names stay in the block,
 * which the container keeps holding). The count is atomic, so the parts of one decoded value
 * may end up in values used by different threads.
 *
 * Invariants of the storage fields (code outside engine/model only reads values, and builds
 * them with the functions here or with zeroed nodes, whose fields mean "owned, no block"):
 *  - S, B: blk == NULL: p is malloc'ed and owned; else p lies in blk and is not freed alone;
 *  - M, L, sets: blk is NULL or a block the node holds one reference on; in_blk: the array
 *    lies in blk (then cap == the room reserved there for it), else it is malloc'ed (or NULL
 *    when cap is 0);
 *  - an attribute's name is malloc'ed (VAL_NAME_OWNED), in the map's blk (VAL_NAME_BLK) or
 *    in the attribute itself (VAL_NAME_INLINE: name points at name_inl, so attributes are
 *    moved only by value.c, which re-points the names of those it moves);
 *  - a node whose blk is NULL owns no block reference, so zero-initialised nodes and nodes
 *    from val_set_* / val_init_container are plain owned values.
 *
 * Invariants kept by every function here:
 *  - a map's attributes are sorted by name (memcmp of the bytes, shorter first on a tie) and
 *    names are unique, so lookups are binary searches and two equal maps have equal arrays;
 *  - a set's elements have the set's element type (S for SS, N for NS, B for BS); the order
 *    of set members and list elements is the order they were added in.
 * Uniqueness of set members, non-empty sets and nesting depth are checked by
 * val_validate() (engine/model/validate.c), not by the builders, because DynamoDB reports
 * them as request errors with specific messages.
 *
 * Nothing here does I/O. Thread safety: none needed; a value belongs to one thread at a time.
 */
#ifndef KURA_MODEL_VALUE_H
#define KURA_MODEL_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kura.h"
#include "engine/model/number.h"
#include "util/buf.h"
#include "util/status.h"

typedef struct kura_attr kura_attr;
/* The shared storage of a packed value (see above; engine/model/value.c). */
typedef struct val_block val_block;

struct kura_value {
    uint8_t type; /* kura_type; 0 = empty (after val_clear or zero-initialisation) */
    union {
        struct {
            uint8_t *p; /* len bytes + a NUL; never NULL for an S or B value */
            uint32_t len;
            val_block *blk; /* NULL: p is owned; else p lies in this block */
        } bytes;        /* S, B */
        kura_num num;   /* N */
        bool boolean;   /* BOOL */
        struct {
            kura_value *v;
            uint32_t n, cap;
            val_block *blk; /* NULL, or a block this node holds a reference on */
            bool in_blk;    /* v lies in blk */
        } list;         /* L, SS, NS, BS */
        struct {
            kura_attr *a;
            uint32_t n, cap;
            val_block *blk; /* NULL, or a block this node holds a reference on */
            bool in_blk;    /* a lies in blk */
        } map;          /* M */
    } u;
};

/* Where an attribute's name lies (kura_attr.name_kind). */
enum {
    VAL_NAME_OWNED,  /* malloc'ed, freed with the attribute */
    VAL_NAME_INLINE, /* in the attribute's name_inl */
    VAL_NAME_BLK,    /* in the map's block */
};
/* The longest name kept inline. */
#define VAL_NAME_INLINE_MAX 18

struct kura_attr {
    char *name; /* name_len bytes + a NUL; where: name_kind */
    uint32_t name_len;
    uint8_t name_kind;
    char name_inl[VAL_NAME_INLINE_MAX + 1];
    kura_value value;
};

/* Maximum nesting of maps and lists DynamoDB accepts (an item's attributes are depth 1). */
#define VAL_MAX_DEPTH 32

/* ---- Building (dst is overwritten, not freed first: pass an empty/cleared value) --------- */

kura_status val_set_bytes(kura_value *dst, kura_type type, const void *p, size_t len); /* S/B */
void val_set_num(kura_value *dst, const kura_num *n);
void val_set_bool(kura_value *dst, bool b);
void val_set_null(kura_value *dst);
void val_init_container(kura_value *dst, kura_type type); /* M, L, SS, NS, BS: empty */

/* Frees what `v` owns and leaves it empty (type 0). val_clear of an empty value is a no-op. */
void val_clear(kura_value *v);
/* Moves src into dst (dst must be empty); src becomes empty. */
void val_move(kura_value *dst, kura_value *src);
/* Deep copy into dst (must be empty), packed into one block (engine/model/pack.c; a lone S or
 * B value gets a plain owned array). KURA_E_NOMEM leaves dst empty. */
kura_status val_copy(kura_value *dst, const kura_value *src);

/* Maps. val_map_get returns the attribute's value or NULL. val_map_put moves *v into the map
 * (replacing and freeing an existing attribute of that name); *v is empty afterwards, also on
 * failure (then it was freed). val_map_remove frees the attribute and returns whether it
 * existed. */
kura_value *val_map_get(const kura_value *m, const char *name, size_t name_len);
kura_status val_map_put(kura_value *m, const char *name, size_t name_len, kura_value *v);
bool val_map_remove(kura_value *m, const char *name, size_t name_len);

/* Lists and sets: moves *v to the end (*v empty afterwards, also on failure). */
kura_status val_list_push(kura_value *l, kura_value *v);
/* Removes and frees element i of a list or set, shifting the rest down. */
void val_list_remove(kura_value *l, uint32_t i);

/* ---- Comparing --------------------------------------------------------------------------- */

/* DynamoDB equality: same type and same value; N numerically; sets as sets (same members in
 * any order); maps attribute by attribute; lists element by element. */
bool val_equal(const kura_value *a, const kura_value *b);
/* Order of two values of the same scalar type S, N or B (S and B: unsigned bytes, shorter
 * first on a tie; N: numeric). Negative, zero or positive. Undefined for other types. */
int val_cmp_scalar(const kura_value *a, const kura_value *b);
/* Whether set `s` (SS/NS/BS) has a member equal to `elem`. */
bool val_set_contains(const kura_value *s, const kura_value *elem);

/* The DynamoDB name of a type ("S", "N", ..., "BOOL", "NULL", "M", "L", "SS", "NS", "BS"). */
const char *val_type_name(kura_type t);

/* ---- Size and validation (engine/model/size.c, validate.c) -------------------------------- */

/* Size as DynamoDB computes it, in bytes: S = UTF-8 bytes; B = bytes; N = 1 + one byte per
 * two significant digits (rounded up) ... (see size.c for the exact rule and its source);
 * BOOL, NULL = 1; M and L = 3 + per element (1 + the element's size, plus for M the name);
 * sets = the sum of their members. val_item_size(item) = sum over attributes of
 * (name bytes + value size). */
size_t val_size(const kura_value *v);
size_t val_item_size(const kura_value *item);

/* Checks what DynamoDB checks of every attribute value in a request: sets non-empty and
 * without duplicates, nesting at most VAL_MAX_DEPTH, N already valid by construction.
 * Returns KURA_E_INVALID with DynamoDB's message. */
kura_status val_validate(const kura_value *v);
/* Checks an item for PutItem (val_validate of every attribute, item size <= 400 KB:
 * "Item size has exceeded the maximum allowed size"). */
kura_status val_validate_item(const kura_value *item);

/* ---- Binary item codec (engine/model/codec.c, docs/format/item.md) ----------------------- */

/* Appends the compact binary encoding of `v` (any type; items are M) to `out`. */
kura_status val_encode(const kura_value *v, kbuf *out);
/* Decodes exactly `len` bytes at `p` into dst (must be empty). KURA_E_CORRUPTION ("item:
 * ...", the caller adds file/offset context) on truncated, trailing or invalid bytes,
 * including non-canonical numbers, unsorted or duplicate map names, and depth > 32. */
kura_status val_decode(const uint8_t *p, size_t len, kura_value *dst);
/* Checks exactly what val_decode() checks, with its messages, without building the value:
 * bytes it accepts can be walked without further checks (api/json_write.c's jw_item_encoded
 * does). */
kura_status val_check_encoded(const uint8_t *p, size_t len);
/* The encoding of attribute `name` of the encoded item (an M) at p[0..len) without decoding
 * the item: *val_out points at its value's bytes (tag included: val_decode reads them) in
 * the input, *vlen_out is their length; NULL and 0 when the item has no such attribute. The
 * attributes before it are checked as val_decode checks them, the ones after it not at all
 * (KURA_E_CORRUPTION with val_decode's messages). */
kura_status val_encoded_attr(const uint8_t *p, size_t len, const char *name, size_t nlen,
                             const uint8_t **val_out, size_t *vlen_out);

/* ---- Packing (engine/model/pack.c; used by the codec and val_copy) ----------------------- */

/* The room a packed value needs: node arrays (8-byte aligned sizes), bytes (names and S/B
 * values, each with its NUL) and the references its nodes hold. */
typedef struct val_pack_size {
    size_t arr, str, refs;
} val_pack_size;

/* The free space of a new block, handed out front to back while a value is packed. */
typedef struct val_pack {
    val_block *blk;
    uint8_t *arr, *str;
} val_pack;

/* Heap nodes (the public kura_value pointers, engine/model/value_api.c). val_new_bytes makes a
 * heap S or B node in one allocation with its bytes (NULL with a message on failure); such a
 * node must be freed with val_free_node(v, val_shell_of(v)), the shell being taken while v
 * still holds its value (before val_clear or a move), as kura_value_free() does. For any
 * other heap node val_shell_of() is NULL and val_free_node() is free(). */
kura_value *val_new_bytes(kura_type type, const void *p, size_t len);
val_block *val_shell_of(const kura_value *v);
void val_free_node(kura_value *v, val_block *shell);

/* Allocates a block for `sz`, its count set to sz->refs, and points *pk at its space. NULL
 * when out of memory (no message set). */
val_block *val_block_new(const val_pack_size *sz, val_pack *pk);
/* Drops one reference; the last one frees the block. */
void val_block_release(val_block *b);

/* Makes dst (empty) an S or B value whose `len` bytes (and NUL) are copied into the pack. */
static inline void val_pack_bytes(val_pack *pk, kura_value *dst, kura_type type, const void *p,
                                  size_t len)
{
    uint8_t *q = pk->str;
    memcpy(q, p, len);
    q[len] = 0;
    pk->str += len + 1;
    *dst = (kura_value){.type = (uint8_t)type};
    dst->u.bytes.p = q;
    dst->u.bytes.len = (uint32_t)len;
    dst->u.bytes.blk = pk->blk;
}

/* Makes dst (empty) a container of type `type` with room for exactly `n` > 0 elements in the
 * pack and count n; the caller fills every element (val_pack_name for map names). Returns
 * the array (kura_attr * for M, kura_value * otherwise). */
static inline void *val_pack_container(val_pack *pk, kura_value *dst, kura_type type,
                                       uint32_t n)
{
    void *arr = pk->arr;
    *dst = (kura_value){.type = (uint8_t)type};
    if (type == KURA_M) {
        pk->arr += (size_t)n * sizeof(kura_attr);
        dst->u.map.a = arr;
        dst->u.map.n = dst->u.map.cap = n;
        dst->u.map.blk = pk->blk;
        dst->u.map.in_blk = true;
    } else {
        pk->arr += (size_t)n * sizeof(kura_value);
        dst->u.list.v = arr;
        dst->u.list.n = dst->u.list.cap = n;
        dst->u.list.blk = pk->blk;
        dst->u.list.in_blk = true;
    }
    return arr;
}

/* Sets attribute a's name to a copy in the pack. */
static inline void val_pack_name(val_pack *pk, kura_attr *a, const void *name, size_t len)
{
    char *q = (char *)pk->str;
    memcpy(q, name, len);
    q[len] = 0;
    pk->str += len + 1;
    a->name = q;
    a->name_len = (uint32_t)len;
    a->name_kind = VAL_NAME_BLK;
}

/* ---- Keys (engine/model/key.c, docs/format/keys.md) --------------------------------------- */

/* A table's (or index's) primary key: partition key and optional sort key. */
typedef struct key_schema {
    const char *pk_name; /* borrowed; NUL-terminated */
    kura_type pk_type;   /* KURA_S, KURA_N or KURA_B */
    const char *sk_name; /* NULL: no sort key */
    kura_type sk_type;
} key_schema;

/* Appends the order-preserving, prefix-free encoding of the S, N or B value `v`. */
kura_status key_enc_value(const kura_value *v, kbuf *out);
/* Appends the encoding of the S or B value `v` WITHOUT its terminator: every encoding of a
 * value that begins with v's bytes starts with these bytes, and only those do (begins_with
 * on a sort key is the key range [prefix, prefix followed by 0xFF...)). KURA_E_INVALID for
 * other types. */
kura_status key_enc_prefix(const kura_value *v, kbuf *out);
/* Decodes one encoded value of type `type` from the start of p[0..len) into dst (empty),
 * setting *used_out. KURA_E_CORRUPTION on bad bytes. */
kura_status key_dec_value(const uint8_t *p, size_t len, kura_type type, kura_value *dst,
                          size_t *used_out);

typedef enum key_source {
    KEY_FROM_ITEM, /* PutItem's Item: may hold other attributes; messages "... in the item" */
    KEY_FROM_KEY,  /* a Key parameter: exactly the key attributes */
} key_source;

/* Builds the storage key hash64(enc(pk)) big-endian || enc(pk) || enc(sk) of `m` into
 * `out` (appended) after checking the key attributes as DynamoDB does, with its messages:
 * missing attribute, wrong type, empty S/B, partition key > 2048 bytes, sort key > 1024
 * bytes, and for KEY_FROM_KEY extra attributes ("The provided key element does not match
 * the schema"). Returns KURA_E_INVALID. */
kura_status key_build(const key_schema *ks, const kura_value *m, key_source src, kbuf *out);
/* Whether map `m` has exactly the schema's key attributes, each of its type: a Key parameter
 * key_build(KEY_FROM_KEY) refuses with KEY_MSG_SCHEMA when it has not. */
bool key_matches_schema(const key_schema *ks, const kura_value *m);
#define KEY_MSG_SCHEMA "The provided key element does not match the schema"
/* The hash prefix alone: hash64(enc(pk)) of an encoded partition key. */
uint64_t key_hash(const uint8_t *enc_pk, size_t len);
/* Decodes a storage key back into a map of the key attributes (dst empty). */
kura_status key_parse(const key_schema *ks, const uint8_t *p, size_t len, kura_value *dst);

#endif
