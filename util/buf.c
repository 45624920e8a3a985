/*
 * buf.c - the slow path of kbuf growth (doubling).
 */
#include "util/buf.h"

bool kbuf_reserve_slow(kbuf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return false;
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return false;
    b->data = p;
    b->cap = cap;
    return true;
}
