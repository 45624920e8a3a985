/*
 * table_count.c - DescribeTable's ItemCount and TableSizeBytes.
 *
 * The figures come from one pass over the table's items, each decoded for its DynamoDB size.
 * A table keeps its last figures with the value of its write counter they saw, so a
 * DescribeTable with no write since costs nothing. After writes:
 *
 *  - a table that was small at its last count (db->count_sync_items items and
 *    count_sync_bytes bytes: 10,000 and 16 MiB, a pass of ~10 ms) is counted in the request:
 *    exact figures, as DynamoDB Local gives. If the pass finds it has grown past the limits,
 *    it stops there and the table is treated as a larger one;
 *  - a larger table answers at once with its last figures and gets a recount on the
 *    database's count thread. A pass over 420,000 items (173 MB) took ~0.4 s, all of it on
 *    the caller's thread (in kura-server, a serving thread and the connections it serves)
 *    and again after every write. A recount starts no sooner than 10 times the previous
 *    one's duration after it ended (at least 1 s), so a table that is written and described
 *    all the time spends at most ~10% of a core on its counts. DynamoDB itself refreshes
 *    these figures about every six hours;
 *  - a table not counted since the database opened (or whose last background count failed)
 *    is counted in the request to the end, whatever its size: once per table and open.
 *
 * A background count pins its table (so DeleteTable waits for it) and polls two flags every
 * 1,024 items: counts_stop (kura_close, which then waits for the counts before it closes the
 * trees) and the table's `dropped` (DeleteTable); either makes it give up. A count that fails
 * (I/O error, corruption) leaves the figures as they were and makes the next DescribeTable
 * count in the request, which reports the error to its caller.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/table.h"
#include "engine/table_index.h"
#include "util/status.h"

enum { COUNT_POLL_ITEMS = 1024, COUNT_GAP_FACTOR = 10 };
#define COUNT_MIN_GAP_NS 1000000000ull

static bool count_stopped(kura_table *t)
{
    return atomic_load_explicit(&t->tree->db->counts_stop, memory_order_relaxed) ||
           atomic_load_explicit(&t->dropped, memory_order_relaxed);
}

/* How far a pass goes: to the end; until the table proves larger than the database's limits
 * for a count in the request; until count_stopped(t). */
typedef enum { PASS_ALL, PASS_SMALL, PASS_STOPPABLE } pass_kind;

enum { COUNT_MAX_INDEXES = IDX_MAX_LSI + IDX_MAX_GSI };

/* What a pass counts: the table's items and bytes, and per index its entries and bytes. */
typedef struct count_figs {
    uint64_t items, bytes;
    uint64_t ix_count[COUNT_MAX_INDEXES], ix_size[COUNT_MAX_INDEXES];
} count_figs;

/* The index figures of one item. */
static kura_status count_indexes(const kura_table *t, const kura_value *item, count_figs *f)
{
    for (uint32_t i = 0; i < table_nindexes(t) && i < COUNT_MAX_INDEXES; i++) {
        const idx_def *d = table_index_def(t, i);
        size_t n = 0;
        if (d->status == IDX_DELETED || !idx_has_entry(d, item) || !idx_indexable(d, item))
            continue;
        kura_status s = idx_projected_size(d, &t->ks, item, &n);
        if (s != KURA_OK)
            return s;
        f->ix_count[i]++;
        f->ix_size[i] += n;
    }
    return KURA_OK;
}

static void count_store(kura_table *t, const count_figs *f)
{
    t->item_count = f->items;
    t->size_bytes = f->bytes;
    memcpy(t->ix_count, f->ix_count, sizeof t->ix_count);
    memcpy(t->ix_size, f->ix_size, sizeof t->ix_size);
}

/* One pass over t's items; *gave_up when it stopped early (see pass_kind). */
static kura_status count_pass(kura_table *t, pass_kind kind, count_figs *figs, bool *gave_up)
{
    kura_db *db = t->tree->db;
    kura_iter *it = NULL;
    uint64_t items = 0, bytes = 0;
    memset(figs, 0, sizeof *figs);
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.fill_cache = false;
    *gave_up = false;
    kura_status s = kura_iter_new(t->tree, &ro, &it);
    if (s != KURA_OK)
        return s;
    for (kura_iter_seek_first(it); kura_iter_valid(it) && s == KURA_OK; kura_iter_next(it)) {
        if ((kind == PASS_STOPPABLE && items % COUNT_POLL_ITEMS == 0 && count_stopped(t)) ||
            (kind == PASS_SMALL &&
             (items >= db->count_sync_items || bytes > db->count_sync_bytes))) {
            *gave_up = true;
            break;
        }
        size_t vlen;
        const void *v = kura_iter_value(it, &vlen);
        kura_value item = {0};
        s = val_decode(v, vlen, &item);
        if (s == KURA_OK) {
            items++;
            bytes += val_item_size(&item);
            s = count_indexes(t, &item, figs);
        }
        val_clear(&item);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    figs->items = items;
    figs->bytes = bytes;
    return s;
}

/* Unpins t and ends its background count's share of db->counts_running. */
static void count_done(kura_db *db, kura_table *t)
{
    kmutex_lock(&db->tables_mu);
    t->refs--;
    db->counts_running--;
    kcond_broadcast(&db->tables_cv);
    kmutex_unlock(&db->tables_mu);
}

static void count_job(void *arg)
{
    kura_table *t = arg;
    kura_db *db = t->tree->db;
    /* sampled before the pass: a write racing with it makes the next describe count again */
    uint64_t w = atomic_load_explicit(&t->writes, memory_order_relaxed);
    uint64_t t0 = know_ns();
    count_figs *figs = malloc(sizeof *figs);
    bool gave_up = false;
    kura_status s = figs ? count_pass(t, PASS_STOPPABLE, figs, &gave_up)
                         : kura_err(KURA_E_NOMEM, "count: out of memory");
    uint64_t t1 = know_ns();
    uint64_t gap = (t1 - t0) * COUNT_GAP_FACTOR;
    kmutex_lock(&t->count_mu);
    if (s == KURA_OK && !gave_up) {
        count_store(t, figs);
        t->counted_writes = w;
    }
    free(figs);
    t->count_failed = s != KURA_OK;
    t->recounting = false;
    t->recount_after_ns = t1 + (gap > COUNT_MIN_GAP_NS ? gap : COUNT_MIN_GAP_NS);
    kmutex_unlock(&t->count_mu);
    count_done(db, t);
}

/* Queues a background count of t unless the database or the table is going away. count_mu
 * held (the job waits for it before it writes its figures). */
static void start_recount(kura_table *t)
{
    kura_db *db = t->tree->db;
    kmutex_lock(&db->tables_mu);
    bool go = !atomic_load(&db->counts_stop) && !atomic_load(&t->dropped);
    if (go && !db->count_pool)
        go = (db->count_pool = kpool_new(1)) != NULL;
    if (go) {
        t->refs++;
        db->counts_running++;
    }
    kmutex_unlock(&db->tables_mu);
    if (!go)
        return; /* out of memory for the thread, or closing: the last figures stand */
    t->recounting = true;
    if (!kpool_submit(db->count_pool, count_job, t)) {
        t->recounting = false;
        count_done(db, t);
    }
}

kura_status table_index_count(kura_table *t, uint32_t i, uint64_t *items_out, uint64_t *bytes_out)
{
    kmutex_lock(&t->count_mu);
    *items_out = i < COUNT_MAX_INDEXES ? t->ix_count[i] : 0;
    *bytes_out = i < COUNT_MAX_INDEXES ? t->ix_size[i] : 0;
    kmutex_unlock(&t->count_mu);
    return KURA_OK;
}

kura_status table_count(kura_table *t, uint64_t *items_out, uint64_t *bytes_out)
{
    kura_db *db = t->tree->db;
    kmutex_lock(&t->count_mu);
    uint64_t w = atomic_load_explicit(&t->writes, memory_order_relaxed);
    /* never counted since open, or the last background count failed: a full pass, here */
    bool full = !t->counted || t->count_failed;
    bool stale = full || w != t->counted_writes;
    bool small = t->item_count <= db->count_sync_items && t->size_bytes <= db->count_sync_bytes;
    bool recount = stale && !full && !small;
    kura_status s = KURA_OK;
    if (stale && (full || (small && !t->recounting))) {
        count_figs *figs = malloc(sizeof *figs);
        bool gave_up = false;
        s = figs ? count_pass(t, full ? PASS_ALL : PASS_SMALL, figs, &gave_up)
                 : kura_err(KURA_E_NOMEM, "count: out of memory");
        if (s == KURA_OK && !gave_up)
            count_store(t, figs);
        free(figs);
        if (s == KURA_OK && !gave_up) {
            t->counted_writes = w;
            t->counted = true;
            t->count_failed = false;
        }
        recount = s == KURA_OK && gave_up; /* it has grown past the limits since */
    }
    if (recount && !t->recounting && know_ns() >= t->recount_after_ns)
        start_recount(t);
    if (s == KURA_OK) {
        *items_out = t->item_count;
        *bytes_out = t->size_bytes;
    }
    kmutex_unlock(&t->count_mu);
    return s;
}

void table_counts_stop(kura_db *db)
{
    kmutex_lock(&db->tables_mu);
    atomic_store(&db->counts_stop, true);
    while (db->counts_running > 0)
        kcond_wait(&db->tables_cv, &db->tables_mu);
    kmutex_unlock(&db->tables_mu);
    kpool_free(db->count_pool);
    db->count_pool = NULL;
}
