/*
 * stream_table.c - a table's change streams (stream_table.h): the StreamSpecification checks,
 * a stream made with its table, enabling and disabling one with UpdateTable, and how
 * DescribeTable shows them.
 *
 * Enabling and disabling hold every item lock of the table (in address order, the order
 * transactions take them, so no cycle): no write of the table is between reading its old item
 * and returning, so the WAL positions taken then split the writes exactly into those before
 * (without images, or of the previous stream) and those after.
 */
#include "engine/stream_table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/stream.h"
#include "engine/table_int.h"
#include "util/status.h"

enum {
    DAY_MS = 24u * 3600u * 1000u,
    /* the streams a table keeps at once (enabled, and disabled within the retention): each
     * costs its definition record 2 varints per partition */
    STREAMS_MAX = 1000,
};

uint64_t stream_retention_ms(const kura_db *db)
{
    return db->opts.stream_retention_ms ? db->opts.stream_retention_ms : DAY_MS;
}

const char *kura_stream_view_type_name(kura_stream_view_type v)
{
    static const char *const names[] = {
        [KURA_STREAM_KEYS_ONLY] = "KEYS_ONLY", [KURA_STREAM_NEW_IMAGE] = "NEW_IMAGE",
        [KURA_STREAM_OLD_IMAGE] = "OLD_IMAGE",
        [KURA_STREAM_NEW_AND_OLD_IMAGES] = "NEW_AND_OLD_IMAGES"};
    return v > KURA_STREAM_VIEW_UNSET && v <= KURA_STREAM_NEW_AND_OLD_IMAGES ? names[v] : NULL;
}

kura_status stream_spec_check(const kura_stream_specification *sp)
{
    bool typed = sp->stream_view_type != KURA_STREAM_VIEW_UNSET;
    if (typed && !kura_stream_view_type_name(sp->stream_view_type))
        return kura_err(KURA_E_INVALID, "Invalid StreamViewType: %d",
                        (int)sp->stream_view_type);
    if (sp->stream_enabled && !typed)
        return kura_err(KURA_E_INVALID, "Invalid StreamViewType: Stream ViewType must not be "
                                        "null or empty when enabling streams.");
    if (!sp->stream_enabled && typed)
        return kura_err(KURA_E_INVALID, "Invalid StreamViewType: Stream StreamEnabled was "
                                        "false but a StreamViewType was present.");
    return KURA_OK;
}

bool stream_arn_parse(const arn_scope *sc, const char *arn, char *table, size_t cap,
                      uint64_t *label_ms_out)
{
    arn_parts p;
    if (!arn_split(arn, &p) || !arn_in_scope(&p, sc) || !p.rest ||
        strncmp(p.rest, "/stream/", 8) != 0 || p.table_len == 0 || p.table_len >= cap)
        return false;
    if (!stream_label_parse(p.rest + 8, label_ms_out))
        return false;
    memcpy(table, p.table, p.table_len);
    table[p.table_len] = 0;
    return true;
}

/* Skips `n` characters of class `ok` at *p (at least min, at most max). */
static bool arn_part(const char **p, int (*ok)(int), size_t min, size_t max)
{
    size_t n = 0;
    while ((*p)[n] && ok((unsigned char)(*p)[n]) && n <= max)
        n++;
    *p += n;
    return n >= min && n <= max;
}

static int arn_word(int c) { return isalnum(c) || c == '-'; }
static int arn_name(int c) { return isalnum(c) || c == '_' || c == '-' || c == '.'; }
static int arn_digit(int c) { return isdigit(c); }

static bool arn_lit(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0)
        return false;
    *p += n;
    return true;
}

bool stream_arn_wellformed(const char *arn)
{
    uint64_t label;
    const char *p = arn;
    return p && arn_lit(&p, "arn:") && arn_part(&p, arn_word, 1, 32) &&
           arn_lit(&p, ":dynamodb:") && arn_part(&p, arn_word, 1, 64) && arn_lit(&p, ":") &&
           arn_part(&p, arn_digit, 12, 12) && arn_lit(&p, ":table/") &&
           arn_part(&p, arn_name, 3, 255) && arn_lit(&p, "/stream/") &&
           stream_label_parse(p, &label);
}

static void stream_clear(table_stream *x)
{
    free(x->start);
    free(x->end);
    memset(x, 0, sizeof *x);
}

void table_streams_free(kura_table *t)
{
    for (uint32_t i = 0; i < t->nstreams; i++)
        stream_clear(&t->streams[i]);
    free(t->streams);
    t->streams = NULL;
    t->nstreams = 0;
}

/* Where each partition's writer is now. */
static void wal_tails(kura_table *t, lsm_wal_pos *out)
{
    for (uint32_t p = 0; p < t->partitions; p++)
        out[p] = lsm_wal_tail(t->tree->parts[p]);
}

/* The partitions keep their WAL segments for the retention from now on. */
static kura_status retain_wals(kura_db *db, kura_table *t)
{
    kura_status s = tree_add_flags(db, t->tree, TREE_STREAM);
    for (uint32_t p = 0; s == KURA_OK && p < t->partitions; p++)
        lsm_set_wal_retain_ms(t->tree->parts[p], stream_retention_ms(db));
    return s;
}

/* A new enabled stream appended to t's (tables_mu held, or t not listed yet): its label after
 * every earlier one's, its shards starting at the writers' positions. */
static kura_status stream_append(kura_table *t, kura_stream_view_type view)
{
    if (t->nstreams >= STREAMS_MAX)
        return kura_err(KURA_E_LIMIT_EXCEEDED, "Subscriber limit exceeded: table %s keeps %u "
                        "streams (enabled, or disabled within the retention); no more can be "
                        "enabled until the oldest expire", t->name, (unsigned)STREAMS_MAX);
    table_stream *v = realloc(t->streams, (t->nstreams + 1) * sizeof *v);
    if (!v)
        return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    t->streams = v;
    table_stream *x = &v[t->nstreams];
    memset(x, 0, sizeof *x);
    if (!(x->start = calloc(t->partitions, sizeof *x->start)))
        return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    x->label_ms = kwall_ms();
    if (t->nstreams && x->label_ms <= t->streams[t->nstreams - 1].label_ms)
        x->label_ms = t->streams[t->nstreams - 1].label_ms + 1; /* labels name one stream */
    x->view = view;
    wal_tails(t, x->start);
    t->nstreams++;
    return KURA_OK;
}

kura_status table_stream_create(kura_db *db, kura_table *t, kura_stream_view_type view)
{
    kura_status s = retain_wals(db, t);
    if (s == KURA_OK)
        s = stream_append(t, view);
    if (s == KURA_OK)
        atomic_store(&t->stream_on, true);
    return s;
}

/* Drops the disabled streams past the retention, the last one excepted (it names
 * LatestStreamArn). tables_mu held. */
static void prune(kura_db *db, kura_table *t, uint64_t now)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < t->nstreams; i++) {
        table_stream *x = &t->streams[i];
        if (i + 1 < t->nstreams && x->closed_ms && x->closed_ms + stream_retention_ms(db) <= now)
            stream_clear(x);
        else
            t->streams[keep++] = *x;
    }
    t->nstreams = keep;
}

/* Under every item lock and tables_mu. */
static kura_status update_locked(kura_db *db, kura_table *t, const kura_stream_specification *sp)
{
    table_stream *last = t->nstreams ? &t->streams[t->nstreams - 1] : NULL;
    bool on = last && !last->closed_ms;
    if (sp->stream_enabled && on)
        return kura_err(KURA_E_INVALID, "Table already has an enabled stream");
    if (!sp->stream_enabled && !on)
        return kura_err(KURA_E_INVALID, "Table has no stream to disable");
    kura_status s;
    if (sp->stream_enabled) {
        if ((s = stream_append(t, sp->stream_view_type)) != KURA_OK)
            return s;
        atomic_store(&t->stream_on, true);
        if ((s = def_write(db, t, false)) != KURA_OK) {
            atomic_store(&t->stream_on, false);
            stream_clear(&t->streams[--t->nstreams]);
        }
        return s;
    }
    if (!(last->end = calloc(t->partitions, sizeof *last->end)))
        return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    wal_tails(t, last->end);
    last->closed_ms = kwall_ms();
    if (last->closed_ms < last->label_ms)
        last->closed_ms = last->label_ms; /* the wall clock went back */
    atomic_store(&t->stream_on, false);
    if ((s = def_write(db, t, false)) != KURA_OK) {
        atomic_store(&t->stream_on, true);
        last->closed_ms = 0;
        free(last->end);
        last->end = NULL;
    }
    return s;
}

kura_status table_stream_update(kura_db *db, kura_table *t, const kura_stream_specification *sp)
{
    table_lock_items(t);
    kura_status s = sp->stream_enabled ? retain_wals(db, t) : KURA_OK;
    if (s == KURA_OK) {
        kmutex_lock(&db->tables_mu);
        prune(db, t, kwall_ms());
        s = update_locked(db, t, sp);
        kmutex_unlock(&db->tables_mu);
    }
    table_unlock_items(t);
    return s;
}

bool table_stream_describe(const kura_table *t, kura_table_description *d)
{
    if (!t->nstreams)
        return true;
    const table_stream *last = &t->streams[t->nstreams - 1];
    d->stream_enabled = !last->closed_ms;
    d->stream_view_type = d->stream_enabled ? last->view : KURA_STREAM_VIEW_UNSET;
    char label[STREAM_LABEL_LEN + 1];
    stream_label(last->label_ms, label);
    if (!(d->latest_stream_label = strdup(label)))
        return false;
    if (asprintf(&d->latest_stream_arn, "%s/stream/%s", d->table_arn, label) < 0) {
        d->latest_stream_arn = NULL;
        return false;
    }
    return true;
}

const table_stream *table_stream_find(kura_db *db, const kura_table *t, uint64_t label_ms,
                                      uint64_t now)
{
    for (uint32_t i = 0; i < t->nstreams; i++) {
        const table_stream *x = &t->streams[i];
        if (x->label_ms != label_ms)
            continue;
        if (x->closed_ms && x->closed_ms + stream_retention_ms(db) <= now)
            return NULL; /* past the retention: gone, as DynamoDB's */
        return x;
    }
    return NULL;
}
