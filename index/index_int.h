/*
 * index_int.h - what the files of index/ share and nothing outside index/ uses: the length of
 * the hash prefix, DynamoDB's messages that more than one file prints, the check of one key
 * attribute, and the projected attributes of an item (index/project.c).
 */
#ifndef KURA_INDEX_INDEX_INT_H
#define KURA_INDEX_INDEX_INT_H

#include "index/index.h"
#include "util/status.h"

/* The big-endian hash64 in front of every entry key (docs/format/index.md). */
#define IDX_HASH_LEN 8

/* DynamoDB's message for an empty S/B value of an index key attribute, in an item (PutItem)
 * and in a Query's key condition alike (DynamoDB Local 1.25.1 prints both exactly so). */
#define IDX_MSG_EMPTY                                                                              \
    "One or more parameter values are not valid. A value specified for a secondary index key "     \
    "is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. "  \
    "IndexName: %s, IndexKey: %s"

/* Key attribute i of the index, HASH attributes first: i < nhash + nrange. */
static inline const idx_key_attr *idx_key_at(const idx_def *d, uint32_t i)
{
    return i < d->nhash ? &d->hash[i] : &d->range[i - d->nhash];
}

/* The value `v` (present) of key attribute `ka` of index `d`: KURA_E_INVALID with DynamoDB's
 * message for the wrong type (index.h, idx_check_item) or an empty S/B. */
kura_status idx_check_attr(const idx_def *d, const idx_key_attr *ka, const kura_value *v);

/* The empty-value message for `v` (S or B) of key attribute `name` of `d`. */
kura_status idx_err_empty(const idx_def *d, const char *name, const kura_value *v);


/* Whether the projections of two items are equal (val_equal), without building them. */
bool idx_projection_equal(const idx_def *d, const key_schema *table, const kura_value *a,
                          const kura_value *b);

#endif
