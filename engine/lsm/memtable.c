/*
 * memtable.c - the memtable: a lock-free-for-readers skiplist of internal keys in an arena.
 *
 * This file contains the skiplist (after LevelDB's db/skiplist.h), its iterator, and the
 * memtable wrapper (reference count, entry encoding, point lookups).
 *
 * Layout. Every entry is one arena allocation:
 *
 *     mt_node { entry pointer, next[height] } | varint ikey_len | ikey | varint vlen | value
 *
 * `entry` points just past next[height], at the varint. Nodes are never unlinked or changed
 * once published, so a pointer into an entry is valid as long as the memtable is.
 *
 * Concurrency. One writer (the caller serialises mt_add); readers take no lock. A new node is
 * fully written (entry bytes and its own next[] links, with relaxed stores since nobody can
 * see it yet) before it is linked in, level 0 first, with release stores of the
 * predecessors' next[] pointers; readers load next[] with acquire, so a reader that reaches
 * a node also sees its contents. `max_height` is read relaxed: a reader that sees a new,
 * larger height before the head's new links finds NULL there and simply drops a level.
 *
 * Insert hint. The writer keeps `splice[]`, the predecessors at every level of the last key
 * inserted (for each level: the greatest node <= that key). When the next key sorts after
 * the last one (sequential loads, and any key that happens to be larger), the search starts
 * from the splice instead of the head. Appending keys in order then costs about one
 * comparison per level (the successors are NULL or just past the key) instead of a full
 * search, which makes fillseq-style loads cheap; other keys cost what a search from the head
 * costs, plus one comparison with the last key.
 *
 * Bloom filter. A point lookup first checks a blocked bloom filter over the user keys (one
 * 64-byte block per key, 6 bits in it): most lookups are for keys that are not in the
 * memtable, and the filter answers those with one cache miss instead of a skiplist search of
 * ~20. The writer sets a key's bits before linking its node, and a reader only looks for
 * keys whose sequence number it acquired after the write was published, so a reader never
 * misses a key it may see. Bits are set and read with relaxed atomics.
 *
 * Hash index. A key the filter lets through is found by its hash, not by the skiplist: every
 * node is also on the chain of bucket hash(user key) mod nbuckets (newest first, pushed with a
 * release store once the node is written, read with acquire like the links), and the lookup
 * takes, among the chain's nodes of that user key, the one with the greatest sequence number
 * <= the snapshot, which is the node the skiplist search finds first. A search of ~20 nodes,
 * a cache miss each in a large memtable (6% of kura-server's GetItem time), becomes one or two:
 * about one bucket per 128 bytes of memtable, so chains stay short. Ordered reads (seeks,
 * iteration) still use the skiplist.
 */
#include "engine/lsm/memtable.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/arena.h"
#include "util/coding.h"
#include "util/hash.h"
#include "util/ikey.h"
#include "util/status.h"

enum {
    MT_MAX_HEIGHT = 12,
    MT_ARENA_BLOCK = 32 * 1024,
    MT_BLOOM_MIN_BLOCKS = 64,        /* 4 KiB */
    MT_BLOOM_MAX_BLOCKS = 64 * 1024, /* 4 MiB */
    MT_BLOOM_PROBES = 6,
    MT_BUCKETS_MIN = 1024,
    MT_BUCKET_BYTES = 128,           /* of memtable per hash bucket */
};

typedef struct mt_node {
    const uint8_t *entry;   /* varint ikey_len | ikey | varint vlen | value; NULL for head */
    struct mt_node *hnext;  /* the next (older) node of its hash bucket */
    struct mt_node *next[]; /* `height` links, accessed with __atomic builtins */
} mt_node;

struct memtable {
    arena *arena;
    mt_node *head;   /* MT_MAX_HEIGHT links, no entry */
    int max_height;  /* levels in use; written by the writer, read relaxed by anyone */
    int refs;        /* atomic */
    uint64_t entries; /* atomic (single writer, any reader) */
    uint64_t *bloom;  /* bloom_blocks blocks of 8 words (512 bits) */
    size_t bloom_blocks; /* a power of two */
    mt_node **buckets;   /* the hash index: nbuckets chains (a power of two) */
    size_t nbuckets;
    /* writer-only state */
    uint64_t rng;                     /* xorshift64 state for node heights */
    mt_node *last;                    /* last node inserted, NULL before the first */
    mt_node *splice[MT_MAX_HEIGHT];   /* greatest node <= last at each level (head if none) */
};

/* ---- Nodes ------------------------------------------------------------------------------ */

static inline mt_node *node_next(const mt_node *n, int level)
{
    return __atomic_load_n(&n->next[level], __ATOMIC_ACQUIRE);
}

static inline const uint8_t *entry_decode_len(const uint8_t *p, size_t *len_out)
{
    if (*p < 0x80) {
        *len_out = *p;
        return p + 1;
    }
    uint64_t v = 0;
    p = dec_varint64(p, p + VARINT64_MAX, &v); /* written by mt_add: always well-formed */
    *len_out = (size_t)v;
    return p;
}

static inline const uint8_t *node_key(const mt_node *n, size_t *len_out)
{
    return entry_decode_len(n->entry, len_out);
}

static inline const uint8_t *node_value(const mt_node *n, size_t *len_out)
{
    size_t klen;
    const uint8_t *k = node_key(n, &klen);
    return entry_decode_len(k + klen, len_out);
}

/* Compares node n's internal key with the internal key (uk, trailer). */
static inline int node_cmp(const mt_node *n, const uint8_t *uk, size_t uklen, uint64_t trailer)
{
    size_t len;
    const uint8_t *k = node_key(n, &len);
    int c = ukey_cmp(k, len - IKEY_TRAILER, uk, uklen);
    if (c)
        return c;
    uint64_t t = dec_fixed64(k + len - IKEY_TRAILER);
    return t > trailer ? -1 : t < trailer;
}

static inline int max_height(const memtable *m)
{
    return __atomic_load_n(&m->max_height, __ATOMIC_RELAXED);
}

/* ---- Searches (any thread) -------------------------------------------------------------- */

/* The first node >= (uk, trailer), or NULL; *lt_out (if not NULL) gets the last node before
 * it, or the head if there is none. */
static mt_node *search(const memtable *m, const uint8_t *uk, size_t uklen, uint64_t trailer,
                       mt_node **lt_out)
{
    mt_node *x = m->head, *known_ge = NULL;
    int level = max_height(m) - 1;
    for (;;) {
        mt_node *next = node_next(x, level);
        /* `known_ge` was compared at the level above: don't compare it again */
        if (next && next != known_ge && node_cmp(next, uk, uklen, trailer) < 0) {
            x = next;
            continue;
        }
        if (level == 0) {
            if (lt_out)
                *lt_out = x;
            return next;
        }
        known_ge = next;
        level--;
    }
}

static mt_node *find_ge(const memtable *m, const uint8_t *uk, size_t uklen, uint64_t trailer)
{
    return search(m, uk, uklen, trailer, NULL);
}

/* The last node < (uk, trailer), or the head if there is none. */
static mt_node *find_lt(const memtable *m, const uint8_t *uk, size_t uklen, uint64_t trailer)
{
    mt_node *lt;
    search(m, uk, uklen, trailer, &lt);
    return lt;
}

/* The last node, or the head if the list is empty. */
static mt_node *find_last(const memtable *m)
{
    mt_node *x = m->head;
    for (int level = max_height(m) - 1; level >= 0; level--) {
        for (mt_node *next; (next = node_next(x, level)) != NULL;)
            x = next;
    }
    return x;
}

/* ---- Insertion (the one writer) --------------------------------------------------------- */

static int random_height(memtable *m)
{
    uint64_t x = m->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    m->rng = x;
    int h = 1;
    while (h < MT_MAX_HEIGHT && (x & 3) == 0) { /* branching factor 4 */
        h++;
        x >>= 2;
    }
    return h;
}

/*
 * Sets m->splice[0..max_height-1] to the predecessors of (uk, trailer): at each level the
 * greatest node < key. Starts from the previous splice when the key sorts after the last key
 * inserted (see the top comment), else from the head.
 */
static void find_splice(memtable *m, const uint8_t *uk, size_t uklen, uint64_t trailer)
{
    /* the writer reads its own fields (max_height, links) without ordering */
    bool follow = m->last && node_cmp(m->last, uk, uklen, trailer) < 0;
    mt_node *x = m->head, *known_ge = NULL;
    for (int level = m->max_height - 1; level >= 0; level--) {
        /* While x has not moved past the old splice, the old splice at this level is as
         * close or closer (old splice <= last < key). Once x moved, x > last: keep x. */
        if (follow)
            x = m->splice[level];
        for (;;) {
            mt_node *next = __atomic_load_n(&x->next[level], __ATOMIC_RELAXED);
            if (next && next != known_ge && node_cmp(next, uk, uklen, trailer) < 0) {
                x = next;
                continue;
            }
            assert(!next || next == known_ge || node_cmp(next, uk, uklen, trailer) > 0);
            known_ge = next;
            break;
        }
        if (x != m->splice[level])
            follow = false;
        m->splice[level] = x;
    }
}

static mt_node *node_new(memtable *m, int height, size_t entry_len)
{
    size_t links = sizeof(mt_node) + (size_t)height * sizeof(mt_node *);
    mt_node *n = arena_alloc(m->arena, links + entry_len);
    if (!n)
        return NULL;
    n->entry = (const uint8_t *)n + links;
    return n;
}

/* ---- Bloom filter ----------------------------------------------------------------------- */

static inline uint64_t *bloom_block(const memtable *m, uint64_t h)
{
    return m->bloom + ((h >> 32) & (m->bloom_blocks - 1)) * 8;
}

static void bloom_add(memtable *m, uint64_t h)
{
    uint64_t *b = bloom_block(m, h);
    uint32_t delta = (uint32_t)(h >> 17) | 1, pos = (uint32_t)h;
    for (int i = 0; i < MT_BLOOM_PROBES; i++, pos += delta)
        __atomic_fetch_or(&b[(pos >> 6) & 7], UINT64_C(1) << (pos & 63), __ATOMIC_RELAXED);
}

static bool bloom_may_contain(const memtable *m, uint64_t h)
{
    const uint64_t *b = bloom_block(m, h);
    uint32_t delta = (uint32_t)(h >> 17) | 1, pos = (uint32_t)h;
    for (int i = 0; i < MT_BLOOM_PROBES; i++, pos += delta)
        if (!(__atomic_load_n(&b[(pos >> 6) & 7], __ATOMIC_RELAXED) & (UINT64_C(1) << (pos & 63))))
            return false;
    return true;
}

kura_status mt_add(memtable *m, uint64_t seq, unsigned type, const uint8_t *key, size_t klen,
                   const uint8_t *val, size_t vlen)
{
    assert(type == IKEY_TYPE_VALUE || type == IKEY_TYPE_DELETE);
    assert(seq <= IKEY_MAX_SEQ);
    if (type == IKEY_TYPE_DELETE)
        vlen = 0;
    size_t iklen = klen + IKEY_TRAILER;
    size_t entry_len = varint_len(iklen) + iklen + varint_len(vlen) + vlen;
    int height = random_height(m);
    mt_node *x = node_new(m, height, entry_len);
    if (!x)
        return kura_err(KURA_E_NOMEM, "memtable: out of memory adding a %zu-byte entry",
                        entry_len);
    uint8_t *p = (uint8_t *)x->entry;
    p += enc_varint64(p, iklen);
    ikey_encode(p, key, klen, seq, type);
    p += iklen;
    p += enc_varint64(p, vlen);
    if (vlen)
        memcpy(p, val, vlen);

    uint64_t h = kura_hash64(key, klen);
    bloom_add(m, h); /* before the node is published */
    mt_node **bucket = &m->buckets[h & (m->nbuckets - 1)];
    x->hnext = __atomic_load_n(bucket, __ATOMIC_RELAXED);
    __atomic_store_n(bucket, x, __ATOMIC_RELEASE); /* publishes x to point lookups */
    uint64_t trailer = ikey_pack(seq, type);
    find_splice(m, key, klen, trailer);
    if (height > m->max_height) {
        for (int i = m->max_height; i < height; i++)
            m->splice[i] = m->head;
        /* Readers may see the new height before the links: they find NULL and go down. */
        __atomic_store_n(&m->max_height, height, __ATOMIC_RELAXED);
    }
    for (int i = 0; i < height; i++) {
        mt_node *pred = m->splice[i];
        __atomic_store_n(&x->next[i], __atomic_load_n(&pred->next[i], __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&pred->next[i], x, __ATOMIC_RELEASE); /* publishes x at level i */
        m->splice[i] = x;
    }
    m->last = x;
    __atomic_add_fetch(&m->entries, 1, __ATOMIC_RELAXED);
    return KURA_OK;
}

/* ---- Memtable --------------------------------------------------------------------------- */

/* The filter and the hash index are large zeroed arrays (1.25 MiB for a 16 MiB memtable) that
 * fill only as the memtable does. They are mapped pages of their own, not calloc'd: glibc
 * raises its mmap threshold past the size of a freed mmap'd chunk, after which calloc serves
 * such arrays from the heap and zeroes them with memset, touching every page; so each new
 * memtable made 1.25 MiB resident up front, and an idle kura-server kept ~5 MiB of untouched
 * filters and buckets after kura_release_memory(). Fresh anonymous pages are zero and cost
 * nothing until written, and munmap() gives them back at once. */
static void *zeroed_pages(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void free_pages(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

static void mt_free(memtable *m)
{
    arena_free(m->arena);
    free_pages(m->bloom, m->bloom_blocks * 64);
    free_pages(m->buckets, m->nbuckets * sizeof *m->buckets);
    free(m);
}

memtable *mt_new(void)
{
    return mt_new_sized(0);
}

memtable *mt_new_sized(size_t expected_bytes)
{
    memtable *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    /* ~10 bits per entry of ~80 bytes: one 512-bit block per 4 KiB of memtable */
    size_t blocks = MT_BLOOM_MIN_BLOCKS;
    while (blocks < MT_BLOOM_MAX_BLOCKS && blocks * 4096 < expected_bytes)
        blocks *= 2;
    m->bloom_blocks = blocks;
    m->bloom = zeroed_pages(blocks * 64);
    size_t nbuckets = MT_BUCKETS_MIN;
    while (nbuckets * MT_BUCKET_BYTES < expected_bytes)
        nbuckets *= 2;
    m->nbuckets = nbuckets;
    m->buckets = zeroed_pages(nbuckets * sizeof *m->buckets);
    m->arena = arena_new(MT_ARENA_BLOCK);
    if (m->arena && m->bloom && m->buckets)
        m->head = node_new(m, MT_MAX_HEIGHT, 0);
    if (!m->head) {
        mt_free(m);
        return NULL;
    }
    m->head->entry = NULL;
    m->head->hnext = NULL;
    for (int i = 0; i < MT_MAX_HEIGHT; i++) {
        m->head->next[i] = NULL;
        m->splice[i] = m->head;
    }
    m->max_height = 1;
    m->refs = 1;
    m->rng = 0x9e3779b97f4a7c15ull;
    return m;
}

void mt_ref(memtable *m)
{
    __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
}

void mt_unref(memtable *m)
{
    if (!m)
        return;
    int left = __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
    assert(left >= 0);
    if (left == 0)
        mt_free(m);
}

bool mt_get_ref(memtable *m, const uint8_t *key, size_t klen, uint64_t snapshot,
                const uint8_t **val_out, size_t *vlen_out, unsigned *type_out)
{
    uint64_t h = kura_hash64(key, klen);
    if (!bloom_may_contain(m, h))
        return false;
    const uint8_t *best = NULL;
    size_t best_len = 0;
    uint64_t best_seq = 0;
    for (mt_node *n = __atomic_load_n(&m->buckets[h & (m->nbuckets - 1)], __ATOMIC_ACQUIRE); n;
         n = __atomic_load_n(&n->hnext, __ATOMIC_ACQUIRE)) {
        size_t iklen;
        const uint8_t *ik = node_key(n, &iklen);
        if (ukey_cmp(ik, iklen - IKEY_TRAILER, key, klen) != 0)
            continue;
        uint64_t seq = ikey_seq(ik, iklen);
        if (seq <= snapshot && (!best || seq > best_seq)) { /* whatever order they came in */
            best = ik;
            best_len = iklen;
            best_seq = seq;
        }
    }
    if (!best)
        return false;
    unsigned type = ikey_type(best, best_len);
    if (type == IKEY_TYPE_VALUE) {
        size_t vlen;
        *val_out = entry_decode_len(best + best_len, &vlen);
        *vlen_out = vlen;
    }
    *type_out = type;
    return true;
}

bool mt_get(memtable *m, const uint8_t *key, size_t klen, uint64_t snapshot, kbuf *val_out,
            unsigned *type_out)
{
    const uint8_t *v = NULL;
    size_t vlen = 0;
    unsigned type;
    if (!mt_get_ref(m, key, klen, snapshot, &v, &vlen, &type))
        return false;
    if (type == IKEY_TYPE_VALUE) {
        if (!kbuf_reserve(val_out, vlen > val_out->len ? vlen - val_out->len : 0)) {
            kura_err(KURA_E_NOMEM, "memtable: out of memory copying a %zu-byte value", vlen);
            type = MT_TYPE_NOMEM;
        } else {
            kbuf_clear(val_out);
            kbuf_append(val_out, v, vlen); /* cannot fail: reserved above */
        }
    }
    *type_out = type;
    return true;
}

size_t mt_usage(const memtable *m)
{
    /* the hash index (1/16 of the memtable's expected size) is not counted: counted, it made
     * memtables switch 6% earlier, and the extra flushes cost fillrandom ~10% and, through
     * the shape of the tree they left, readrandom ~10% (kura-bench, 1M keys, alternated) */
    return arena_usage(m->arena) + m->bloom_blocks * 64;
}

uint64_t mt_entries(const memtable *m)
{
    return __atomic_load_n(&m->entries, __ATOMIC_RELAXED);
}

/* ---- Iterator --------------------------------------------------------------------------- */

typedef struct mt_iter_s {
    kv_iter base;
    const memtable *m;
    mt_node *node; /* NULL when invalid */
} mt_iter_s;

static bool it_valid(const kv_iter *it)
{
    return ((const mt_iter_s *)it)->node != NULL;
}

static void it_seek_first(kv_iter *it)
{
    mt_iter_s *mi = (mt_iter_s *)it;
    mi->node = node_next(mi->m->head, 0);
}

static void it_seek_last(kv_iter *it)
{
    mt_iter_s *mi = (mt_iter_s *)it;
    mt_node *n = find_last(mi->m);
    mi->node = n == mi->m->head ? NULL : n;
}

static void it_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    mt_iter_s *mi = (mt_iter_s *)it;
    assert(klen >= IKEY_TRAILER);
    mi->node = find_ge(mi->m, key, klen - IKEY_TRAILER, ikey_trailer(key, klen));
}

static void it_next(kv_iter *it)
{
    mt_iter_s *mi = (mt_iter_s *)it;
    assert(mi->node);
    mi->node = node_next(mi->node, 0);
}

/* No back links: search for the last node before the current one, as LevelDB does. */
static void it_prev(kv_iter *it)
{
    mt_iter_s *mi = (mt_iter_s *)it;
    assert(mi->node);
    size_t len;
    const uint8_t *k = node_key(mi->node, &len);
    mt_node *n = find_lt(mi->m, k, len - IKEY_TRAILER, ikey_trailer(k, len));
    mi->node = n == mi->m->head ? NULL : n;
}

static const uint8_t *it_key(const kv_iter *it, size_t *klen_out)
{
    return node_key(((const mt_iter_s *)it)->node, klen_out);
}

static const uint8_t *it_value(const kv_iter *it, size_t *vlen_out)
{
    return node_value(((const mt_iter_s *)it)->node, vlen_out);
}

static kura_status it_status(const kv_iter *it)
{
    (void)it;
    return KURA_OK;
}

static void it_destroy(kv_iter *it)
{
    free(it);
}

static const kv_iter_ops mt_iter_ops = {
    it_valid, it_seek_first, it_seek_last, it_seek,   it_next,
    it_prev,  it_key,        it_value,     it_status, it_destroy,
};

kv_iter *mt_iter(memtable *m)
{
    mt_iter_s *mi = malloc(sizeof *mi);
    if (!mi)
        return NULL;
    mi->base.ops = &mt_iter_ops;
    mi->m = m;
    mi->node = NULL;
    return &mi->base;
}
