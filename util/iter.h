/*
 * iter.h - the iterator interface shared by memtables, SSTable blocks and tables, levels and
 * merging iterators (as LevelDB's Iterator).
 *
 * An iterator is positioned at an entry or invalid. key()/value() are valid only while the
 * iterator is valid and until the next move; they point into iterator-owned memory. After an
 * error (e.g. a corrupt block) the iterator becomes invalid and status() returns the error
 * (with the message in kura_last_error() at the time it happened, also kept in err_msg).
 * Not thread-safe: one iterator, one thread.
 *
 * For engine iterators the keys are internal keys (util/ikey.h) and seek() takes an
 * internal key; `cmp` says how keys compare.
 */
#ifndef KURA_UTIL_ITER_H
#define KURA_UTIL_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

typedef struct kv_iter kv_iter;

typedef struct kv_iter_ops {
    bool (*valid)(const kv_iter *it);
    void (*seek_first)(kv_iter *it);
    void (*seek_last)(kv_iter *it);
    void (*seek)(kv_iter *it, const uint8_t *key, size_t klen); /* first entry >= key */
    void (*next)(kv_iter *it);
    void (*prev)(kv_iter *it);
    const uint8_t *(*key)(const kv_iter *it, size_t *klen_out);
    const uint8_t *(*value)(const kv_iter *it, size_t *vlen_out);
    kura_status (*status)(const kv_iter *it);
    void (*destroy)(kv_iter *it); /* frees the iterator */
} kv_iter_ops;

/* Every iterator struct starts with this header. */
struct kv_iter {
    const kv_iter_ops *ops;
};

static inline bool kv_iter_valid(const kv_iter *it)
{
    return it->ops->valid(it);
}
static inline void kv_iter_seek_first(kv_iter *it)
{
    it->ops->seek_first(it);
}
static inline void kv_iter_seek_last(kv_iter *it)
{
    it->ops->seek_last(it);
}
static inline void kv_iter_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    it->ops->seek(it, key, klen);
}
static inline void kv_iter_next(kv_iter *it)
{
    it->ops->next(it);
}
static inline void kv_iter_prev(kv_iter *it)
{
    it->ops->prev(it);
}
static inline const uint8_t *kv_iter_key(const kv_iter *it, size_t *klen_out)
{
    return it->ops->key(it, klen_out);
}
static inline const uint8_t *kv_iter_value(const kv_iter *it, size_t *vlen_out)
{
    return it->ops->value(it, vlen_out);
}
static inline kura_status kv_iter_status(const kv_iter *it)
{
    return it->ops->status(it);
}
static inline void kv_iter_free(kv_iter *it)
{
    if (it)
        it->ops->destroy(it);
}

/* An iterator that is always invalid and reports `s` (KURA_OK for an empty iterator). */
kv_iter *kv_iter_empty(kura_status s);

#endif
