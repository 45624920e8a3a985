/*
 * item_fields.h - the DynamoDB-shaped items every item-level benchmark writes (kura-bench's
 * item workloads, bench/items.h, and kura-http-bench), so that they all store the same
 * items: item `index` has an S partition key of 16 bytes shared by BENCH_ITEMS_PER_PK
 * consecutive items, an S sort key, and 8 more attributes of mixed types (S, N, BOOL, SS, M,
 * B), about 400 bytes as DynamoDB counts them.
 */
#ifndef KURA_BENCH_ITEM_FIELDS_H
#define KURA_BENCH_ITEM_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define BENCH_ITEMS_PER_PK 20

/* The attribute values of one item as strings and bytes (attribute names: pk, sk, name,
 * email, n (0), price, active, tags (SS), profile (M: city, zip), data (B)). */
typedef struct bench_item_fields {
    char pk[17], sk[16], name[48], email[56], city[24], zip[24], tag[3][24];
    char price[48];
    uint8_t data[224];
    bool active;
} bench_item_fields;

/* Copies the string s to p (no NUL); returns the end. The benchmarks put their fields and
 * requests together with it rather than printf (see item_fields.c). */
static inline char *bench_put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* Fills every field of item `index`. */
void bench_item_fields_make(uint64_t index, bench_item_fields *f);
/* Fills only pk and sk (all a GetItem, UpdateItem or Query needs). */
void bench_item_key_make(uint64_t index, bench_item_fields *f);

#endif
