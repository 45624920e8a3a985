/*
 * size.c - This file contains the size of items and attribute values as DynamoDB computes it
 * ("Item sizes and formats" in the DynamoDB developer guide), which decides the 400 KB item
 * limit, TableSizeBytes and the capacity units a request consumes.
 *
 *   S            UTF-8 bytes          B          bytes
 *   N            see below            BOOL, NULL 1
 *   SS, NS, BS   sum of the members' sizes
 *   M            3 + for each attribute: 1 + name bytes + value size
 *   L            3 + for each element:   1 + value size
 *   item         for each attribute: name bytes + value size
 *
 * A number's size follows its base-100 (centesimal) representation, as dynalite's
 * db/index.js valSize() does: the significant digits are grouped in pairs aligned on the
 * decimal point, one byte per pair, plus one byte, plus one more for a negative number; zero
 * is 1 byte. With the digits d1..dn and value 0.d1..dn x 10^exp (number.h), the pairs are
 * ceil(n / 2) when n is odd, and n / 2 when n is even and the first digit starts a pair
 * (exp even), n / 2 + 1 when it does not (exp odd). So 12 -> 2, 1.2 -> 3, 123 -> 3, -1 -> 3.
 * Strings are counted in UTF-8 bytes as the documentation says (dynalite counts UTF-16 code
 * units, which differs for non-ASCII text: /work/shared/scenarios/item_size_limit.json).
 */
#include "engine/model/value.h"

static size_t size_num(const kura_num *n)
{
    if (n->ndigits == 0) return 1;
    size_t pairs = ((size_t)n->ndigits + 1) / 2;
    if (n->ndigits % 2 == 0 && (n->exp % 2) != 0) pairs++;
    return 1 + pairs + (n->neg ? 1 : 0);
}

size_t val_size(const kura_value *v)
{
    size_t size = 0;
    switch (v->type) {
    case KURA_S:
    case KURA_B:
        return v->u.bytes.len;
    case KURA_N:
        return size_num(&v->u.num);
    case KURA_BOOL:
    case KURA_NULL:
        return 1;
    case KURA_M:
        size = 3;
        for (uint32_t i = 0; i < v->u.map.n; i++)
            size += 1 + v->u.map.a[i].name_len + val_size(&v->u.map.a[i].value);
        return size;
    case KURA_L:
        size = 3;
        for (uint32_t i = 0; i < v->u.list.n; i++)
            size += 1 + val_size(&v->u.list.v[i]);
        return size;
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        for (uint32_t i = 0; i < v->u.list.n; i++)
            size += val_size(&v->u.list.v[i]);
        return size;
    default:
        return 0;
    }
}

size_t val_item_size(const kura_value *item)
{
    size_t size = 0;
    if (item->type != KURA_M) return val_size(item);
    for (uint32_t i = 0; i < item->u.map.n; i++)
        size += item->u.map.a[i].name_len + val_size(&item->u.map.a[i].value);
    return size;
}
