/*
 * walscan.c - parsing the framing of an intact WAL or MANIFEST (see walscan.h and
 * docs/format/wal.md: 32 KiB blocks; 11-byte headers crc32 | length16 | type8 | durable32,
 * little-endian; block tails shorter than a header are zero-filled).
 */
#include "crash/walscan.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCK = 32768, HEADER = 11, TYPE_FULL = 1, TYPE_LAST = 4 };

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool push_region(walscan *w, size_t *cap, walscan_region r)
{
    if (w->nregions == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        walscan_region *nr = realloc(w->regions, nc * sizeof *nr);
        if (!nr)
            return false;
        w->regions = nr;
        *cap = nc;
    }
    w->regions[w->nregions++] = r;
    return true;
}

static bool push_end(walscan *w, size_t *cap, uint64_t end)
{
    if (w->nrecords == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        uint64_t *ne = realloc(w->record_end, nc * sizeof *ne);
        if (!ne)
            return false;
        w->record_end = ne;
        *cap = nc;
    }
    w->record_end[w->nrecords++] = end;
    return true;
}

bool walscan_parse(const uint8_t *p, size_t n, walscan *out)
{
    walscan w;
    memset(&w, 0, sizeof w);
    size_t rcap = 0, ecap = 0;
    uint64_t pos = 0;
    bool ok = true;
    while (ok && pos < n) {
        uint64_t block_end = (pos / BLOCK + 1) * BLOCK;
        if (block_end - pos < HEADER) { /* a trailer */
            uint64_t end = block_end < n ? block_end : n;
            ok = push_region(&w, &rcap, (walscan_region){pos, end, true, 0, 0});
            pos = end;
            continue;
        }
        if (n - pos < HEADER) {
            ok = false;
            break;
        }
        uint32_t len = (uint32_t)p[pos + 4] | (uint32_t)p[pos + 5] << 8;
        walscan_region r = {pos, pos + HEADER + len, false, p[pos + 6], le32(p + pos + 7)};
        if (r.type < TYPE_FULL || r.type > TYPE_LAST || r.end > block_end || r.end > n) {
            ok = false;
            break;
        }
        ok = push_region(&w, &rcap, r);
        if (ok && (r.type == TYPE_FULL || r.type == TYPE_LAST))
            ok = push_end(&w, &ecap, r.end);
        if (r.durable_off > w.max_durable)
            w.max_durable = r.durable_off;
        w.last_frag = pos;
        pos = r.end;
    }
    if (!ok) {
        walscan_free(&w);
        return false;
    }
    *out = w;
    return true;
}

void walscan_free(walscan *w)
{
    free(w->regions);
    free(w->record_end);
    memset(w, 0, sizeof *w);
}

uint64_t walscan_region_start(const walscan *w, uint64_t off)
{
    for (size_t i = 0; i < w->nregions; i++)
        if (off >= w->regions[i].off && off < w->regions[i].end)
            return w->regions[i].off;
    return off;
}

size_t walscan_records_within(const walscan *w, uint64_t len)
{
    size_t k = 0;
    while (k < w->nrecords && w->record_end[k] <= len)
        k++;
    return k;
}
