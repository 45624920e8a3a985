/*
 * damage.c - damaged copies of a template database and message matching (see damage.h).
 */
#include "crash/damage.h"

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/scratch.h"

void damage_tmpl_target(damage_tmpl *t, const char *subdir, const char *pattern)
{
    char *dir = scratch_join(t->dir, subdir), *paths[8];
    size_t n = scratch_find(dir, pattern, paths, 8);
    if (n != 1)
        fail_msg("%s: %zu files match %s, expected 1", dir, n, pattern);
    t->rel = scratch_join(subdir, damage_base_name(paths[0]));
    t->bytes = scratch_read(paths[0], &t->size);
    scratch_free_paths(paths, n);
    free(dir);
}

void damage_tmpl_free(damage_tmpl *t)
{
    test_rmrf(t->dir);
    free(t->rel);
    free(t->bytes);
    memset(t, 0, sizeof *t);
}

static const char *damage_str(damage d, char *buf, size_t cap)
{
    static const char *const kinds[] = {"bit flip", "zeroed page", "truncation"};
    snprintf(buf, cap, "%s at %llu", kinds[d.kind], (unsigned long long)d.off);
    if (d.kind == DMG_FLIP)
        snprintf(buf + strlen(buf), cap - strlen(buf), " (bit %u)", d.bit);
    return buf;
}

bool damage_copy(const damage_tmpl *t, damage d, uint64_t seed, damage_case *c)
{
    uint8_t *b = malloc(t->size + 1);
    if (!b)
        fail_msg("out of memory");
    memcpy(b, t->bytes, t->size);
    size_t n = t->size;
    if (d.kind == DMG_FLIP && d.off < n)
        b[d.off] ^= (uint8_t)(1u << (d.bit & 7));
    else if (d.kind == DMG_ZERO_PAGE && d.off < n)
        memset(b + d.off, 0, d.off + 512 <= n ? 512 : n - d.off);
    else if (d.kind == DMG_TRUNCATE && d.off < n)
        n = d.off;
    uint64_t first = 0;
    while (first < n && b[first] == t->bytes[first])
        first++;
    if (first == n && n == t->size) {
        free(b);
        return false;
    }
    c->dir = test_mkdtemp("fault-corrupt");
    c->path = scratch_join(c->dir, t->rel);
    scratch_copy_dir(t->dir, c->dir);
    scratch_write(c->path, b, n);
    size_t rn;
    uint8_t *raw = scratch_read(c->path, &rn); /* the raw reader: bypasses the engine */
    if (rn != n || (rn == t->size && !memcmp(raw, t->bytes, rn)))
        fail_msg("canary: the damage did not reach %s", c->path);
    free(raw);
    free(b);
    c->first = first;
    char ds[64];
    snprintf(c->what, sizeof c->what, "%s, %s (seed %llu)", t->rel,
             damage_str(d, ds, sizeof ds), (unsigned long long)seed);
    return true;
}

void damage_case_done(damage_case *c)
{
    test_rmrf(c->dir);
    free(c->path);
    c->dir = c->path = NULL;
}

bool damage_names(const char *msg, const char *name, int64_t off)
{
    char want[48];
    snprintf(want, sizeof want, "offset %lld", (long long)off);
    if (!strstr(msg, name))
        return false;
    if (off == DAMAGE_NO_OFFSET)
        return true;
    if (off == DAMAGE_ANY_OFFSET)
        return strstr(msg, "offset ") != NULL;
    size_t wl = strlen(want);
    for (const char *p = strstr(msg, want); p; p = strstr(p + 1, want))
        if (p[wl] < '0' || p[wl] > '9')
            return true;
    return false;
}

const char *damage_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
