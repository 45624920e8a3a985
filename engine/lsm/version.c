/*
 * version.c - files, versions, point lookups through the levels and level iterators.
 */
#include "engine/lsm/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/concat_iter.h"
#include "util/ikey.h"
#include "util/status.h"

bool ptr_push(void ***arr, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        void **a = realloc(*arr, ncap * sizeof *a);
        if (!a)
            return false;
        *arr = a;
        *cap = ncap;
    }
    (*arr)[(*n)++] = p;
    return true;
}

kura_status file_meta_open(io_env *io, block_cache *cache, const char *dir, uint64_t number,
                           uint64_t file_size, uint64_t entries, uint64_t min_seq,
                           uint64_t max_seq, const uint8_t *smallest, size_t slen,
                           const uint8_t *largest, size_t llen, file_meta **f_out)
{
    file_meta *f = calloc(1, sizeof *f);
    size_t plen = strlen(dir) + 32;
    if (!f || !(f->path = malloc(plen)) || !kbuf_append(&f->smallest, smallest, slen) ||
        !kbuf_append(&f->largest, largest, llen)) {
        if (f) {
            free(f->path);
            kbuf_free(&f->smallest);
            free(f);
        }
        return kura_err(KURA_E_NOMEM, "%s: out of memory opening table %llu", dir,
                        (unsigned long long)number);
    }
    snprintf(f->path, plen, "%s/%06llu.sst", dir, (unsigned long long)number);
    f->refs = 1;
    f->io = io;
    f->number = number;
    f->file_size = file_size;
    f->entries = entries;
    f->min_seq = min_seq;
    f->max_seq = max_seq;
    kura_status s = sst_reader_open(io, f->path, file_size, cache, &f->reader);
    if (s == KURA_E_NOT_FOUND) /* the manifest names it: its absence is damage */
        s = kura_err(KURA_E_CORRUPTION, "%s: table named by the manifest is missing", f->path);
    if (s != KURA_OK) {
        free(f->path);
        kbuf_free(&f->smallest);
        kbuf_free(&f->largest);
        free(f);
        return s;
    }
    *f_out = f;
    return KURA_OK;
}

void file_meta_ref(file_meta *f)
{
    __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void file_meta_unref(file_meta *f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    sst_reader_close(f->reader);
    if (__atomic_load_n(&f->obsolete, __ATOMIC_ACQUIRE))
        io_unlink(f->io, f->path); /* a leftover is removed at the next open */
    free(f->path);
    kbuf_free(&f->smallest);
    kbuf_free(&f->largest);
    free(f);
}

version *version_new(void)
{
    version *v = calloc(1, sizeof *v);
    if (v)
        v->refs = 1;
    return v;
}

void version_ref(version *v)
{
    __atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
}

void version_unref(version *v)
{
    if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (int l = 0; l < LSM_LEVELS; l++) {
        for (size_t i = 0; i < v->nfiles[l]; i++)
            file_meta_unref(v->files[l][i]);
        free(v->files[l]);
    }
    free(v);
}

uint64_t version_level_bytes(const version *v, int level)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < v->nfiles[level]; i++)
        sum += v->files[level][i]->file_size;
    return sum;
}

void version_score(version *v, const lsm_options *o)
{
    const int last = LSM_LEVELS - 1;
    uint64_t bytes_last = version_level_bytes(v, last);
    int base = last;
    for (uint64_t t = bytes_last; base > 1 && t / 10 >= o->level1_bytes; t /= 10)
        base--;
    /* never below a level that holds data: level 0 must merge into the newest data under it,
     * or that older data would shadow what level 0 pushes past it */
    for (int l = 1; l < base; l++)
        if (v->nfiles[l]) {
            base = l;
            break;
        }
    v->base_level = base;
    int best = 0;
    double best_score = (double)v->nfiles[0] / o->l0_compaction_trigger;
    uint64_t target = bytes_last;
    for (int l = last - 1; l >= 1; l--) {
        target /= 10;
        uint64_t t = target > o->level1_bytes ? target : o->level1_bytes;
        double score = (double)version_level_bytes(v, l) / (double)t;
        if (score > best_score) {
            best = l;
            best_score = score;
        }
    }
    v->compaction_level = best;
    v->compaction_score = best_score;
}

static inline const uint8_t *ukey_of(const kbuf *ik, size_t *len)
{
    *len = ik->len - IKEY_TRAILER;
    return ik->data;
}

/* Whether the user key lies within f's user-key range. */
static bool file_covers(const file_meta *f, const uint8_t *uk, size_t len)
{
    size_t slen, llen;
    const uint8_t *s = ukey_of(&f->smallest, &slen), *l = ukey_of(&f->largest, &llen);
    return ukey_cmp(uk, len, s, slen) >= 0 && ukey_cmp(uk, len, l, llen) <= 0;
}

/* The first file of a sorted level whose largest key is >= the user key. */
static size_t find_file(file_meta *const *files, size_t n, const uint8_t *uk, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        size_t llen;
        const uint8_t *l = ukey_of(&files[mid]->largest, &llen);
        if (ukey_cmp(l, llen, uk, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static kura_status get_from(file_meta *f, const uint8_t *ikey, size_t iklen, bool fill_cache,
                            kbuf *val_out, bool *done)
{
    unsigned type;
    bool found = false;
    kura_status s = sst_reader_get(f->reader, ikey, iklen, fill_cache, val_out, &type, &found);
    if (s != KURA_OK)
        return s;
    if (!found)
        return KURA_OK;
    *done = true;
    return type == IKEY_TYPE_VALUE ? KURA_OK : KURA_E_NOT_FOUND;
}

kura_status version_get(version *v, const uint8_t *ikey, size_t iklen, bool fill_cache,
                        kbuf *val_out, bool *found_out)
{
    const uint8_t *uk = ikey;
    size_t uklen = iklen - IKEY_TRAILER;
    bool done = false;
    kura_status s;
    for (size_t i = v->nfiles[0]; i-- > 0;) {
        file_meta *f = v->files[0][i];
        if (!file_covers(f, uk, uklen))
            continue;
        s = get_from(f, ikey, iklen, fill_cache, val_out, &done);
        if (done || s != KURA_OK)
            goto out;
    }
    for (int l = 1; l < LSM_LEVELS; l++) {
        size_t n = v->nfiles[l];
        if (!n)
            continue;
        size_t i = find_file(v->files[l], n, uk, uklen);
        if (i == n || !file_covers(v->files[l][i], uk, uklen))
            continue;
        s = get_from(v->files[l][i], ikey, iklen, fill_cache, val_out, &done);
        if (done || s != KURA_OK)
            goto out;
    }
    s = KURA_E_NOT_FOUND;
out:
    *found_out = done;
    return s;
}

kura_status version_overlapping(const version *v, int level, const uint8_t *lo, size_t lolen,
                                const uint8_t *hi, size_t hilen, file_meta ***files, size_t *n,
                                size_t *cap)
{
    size_t start = *n;
restart:
    for (size_t i = 0; i < v->nfiles[level]; i++) {
        file_meta *f = v->files[level][i];
        size_t slen, llen;
        const uint8_t *s = ukey_of(&f->smallest, &slen), *l = ukey_of(&f->largest, &llen);
        if (lo && ukey_cmp(l, llen, lo, lolen) < 0)
            continue;
        if (hi && ukey_cmp(s, slen, hi, hilen) > 0)
            continue;
        if (level == 0) {
            /* widen the range and start over if this file extends it */
            if (lo && ukey_cmp(s, slen, lo, lolen) < 0) {
                lo = s, lolen = slen;
                *n = start;
                goto restart;
            }
            if (hi && ukey_cmp(l, llen, hi, hilen) > 0) {
                hi = l, hilen = llen;
                *n = start;
                goto restart;
            }
        }
        if (!ptr_push((void ***)files, n, cap, f))
            return kura_err(KURA_E_NOMEM, "compaction: out of memory");
    }
    return KURA_OK;
}

bool version_key_may_exist_below(const version *v, int level, const uint8_t *ukey, size_t len)
{
    for (int l = level + 1; l < LSM_LEVELS; l++) {
        size_t n = v->nfiles[l];
        size_t i = find_file(v->files[l], n, ukey, len);
        if (i < n && file_covers(v->files[l][i], ukey, len))
            return true;
    }
    return false;
}

/* ---- level iterators ---- */

typedef struct level_iter_arg {
    file_meta **files;
    bool fill_cache;
    const uint8_t **largest;
    size_t *largest_len;
} level_iter_arg;

static kv_iter *open_level_file(void *arg, size_t i)
{
    level_iter_arg *a = arg;
    kv_iter *it = sst_reader_iter(a->files[i]->reader, a->fill_cache);
    return it ? it : kv_iter_empty(KURA_E_NOMEM);
}

static void free_level_arg(void *arg)
{
    level_iter_arg *a = arg;
    free(a->largest);
    free(a->largest_len);
    free(a);
}

kv_iter *version_files_iter(file_meta **files, size_t n, bool fill_cache)
{
    level_iter_arg *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->files = files;
    a->fill_cache = fill_cache;
    a->largest = malloc((n ? n : 1) * sizeof *a->largest);
    a->largest_len = malloc((n ? n : 1) * sizeof *a->largest_len);
    if (!a->largest || !a->largest_len) {
        free_level_arg(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        a->largest[i] = files[i]->largest.data;
        a->largest_len[i] = files[i]->largest.len;
    }
    return concat_iter_new(n, a->largest, a->largest_len, open_level_file, a, free_level_arg);
}

kura_status version_add_iters(version *v, bool fill_cache, kv_iter ***its, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < v->nfiles[0]; i++) {
        kv_iter *it = sst_reader_iter(v->files[0][i]->reader, fill_cache);
        if (!it || !ptr_push((void ***)its, n, cap, it)) {
            kv_iter_free(it);
            return kura_err(KURA_E_NOMEM, "iterator: out of memory");
        }
    }
    for (int l = 1; l < LSM_LEVELS; l++) {
        if (!v->nfiles[l])
            continue;
        kv_iter *it = version_files_iter(v->files[l], v->nfiles[l], fill_cache);
        if (!it || !ptr_push((void ***)its, n, cap, it)) {
            kv_iter_free(it);
            return kura_err(KURA_E_NOMEM, "iterator: out of memory");
        }
    }
    return KURA_OK;
}
