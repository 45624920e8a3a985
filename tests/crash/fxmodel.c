/*
 * fxmodel.c - the model of FxItems' items (fxwork.h) and its checker: which versions of each
 * writer's items may be there after a crash, and whether a transaction is all there.
 *
 * Per item the model keeps `base`, the version that must survive, and the versions written
 * since (pending, in op order). A version is the tag (j, e) of the write that made it, or
 * absent; the whole item is a function of the tag (fx_item_json), so the checker compares
 * each item found with the one its tag makes. An item may be absent where an allowed
 * version is a delete or doomed (its exp is before the TTL clock: the sweeper may have
 * deleted it). Ops up to settled[t] are in base.
 */
#include "crash/fxwork_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fx_ver {
    bool exists;
    uint64_t j; /* 0: never written */
    uint32_t e;
} fx_ver;

typedef struct fx_pend {
    uint64_t opno;
    fx_ver v;
} fx_pend;

typedef struct fx_cell {
    fx_ver base;
    fx_pend *p;
    size_t n, cap;
} fx_cell;

/* What the check found of an item. */
typedef struct fx_obs {
    bool seen;
    fx_ver v;
} fx_obs;

struct fxm {
    fx_config cfg;
    uint64_t next[FX_MAX_WRITERS];    /* the first op not attempted */
    uint64_t acked[FX_MAX_WRITERS];   /* the last op acknowledged */
    uint64_t settled[FX_MAX_WRITERS]; /* ops up to this one are in base */
    fx_cell *cells;                   /* [t * keys_per_writer + k] */
    fxm_stats st;
};

static fx_cell *cell(const fxm *m, uint32_t t, uint32_t k)
{
    return &m->cells[(size_t)t * m->cfg.keys_per_writer + k];
}

fxm *fxm_new(const fx_config *c)
{
    if (c->nwriters < 1 || c->nwriters > FX_MAX_WRITERS || c->keys_per_writer < 4 ||
        c->keys_per_writer > FX_MAX_KEYS || c->pad_max > FX_MAX_PAD)
        return NULL;
    fxm *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    m->cfg = *c;
    m->cells = calloc((size_t)c->nwriters * c->keys_per_writer, sizeof *m->cells);
    if (!m->cells)
        abort();
    for (uint32_t t = 0; t < c->nwriters; t++)
        m->next[t] = 1;
    return m;
}

void fxm_free(fxm *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < (size_t)m->cfg.nwriters * m->cfg.keys_per_writer; i++)
        free(m->cells[i].p);
    free(m->cells);
    free(m);
}

uint64_t fxm_next(const fxm *m, uint32_t t)
{
    return m->next[t];
}

const fxm_stats *fxm_get_stats(const fxm *m)
{
    return &m->st;
}

void fxm_attempt(fxm *m, uint32_t t)
{
    fx_op op;
    fx_gen(&m->cfg, t, m->next[t], &op);
    for (uint32_t i = 0; i < op.n; i++) {
        fx_cell *c = cell(m, t, op.e[i].key);
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 4;
            c->p = realloc(c->p, c->cap * sizeof *c->p);
            if (!c->p)
                abort();
        }
        c->p[c->n++] = (fx_pend){op.j, {op.e[i].action != FX_E_DELETE, op.j, i}};
    }
    m->next[t]++;
}

/* Versions of writer t's items up to op `upto` become the base. */
static void collapse(fxm *m, uint32_t t, uint64_t upto)
{
    for (uint32_t k = 0; k < m->cfg.keys_per_writer; k++) {
        fx_cell *c = cell(m, t, k);
        size_t keep = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->p[i].opno <= upto)
                c->base = c->p[i].v;
            else
                c->p[keep++] = c->p[i];
        }
        c->n = keep;
    }
    if (upto > m->settled[t])
        m->settled[t] = upto;
}

void fxm_ack(fxm *m, uint32_t t)
{
    m->acked[t] = m->next[t] - 1;
    if (m->cfg.durable_acks)
        collapse(m, t, m->acked[t]);
}

void fxm_durable(fxm *m)
{
    for (uint32_t t = 0; t < m->cfg.nwriters; t++)
        collapse(m, t, m->acked[t]);
}

kura_status fxm_run(fxm *m, kura_db *db, uint32_t t, char *why, size_t cap)
{
    uint64_t j = m->next[t];
    fxm_attempt(m, t);
    kura_status s = fx_item_exec(&m->cfg, db, t, j, why, cap);
    if (s == KURA_OK)
        fxm_ack(m, t);
    return s;
}

/* ---- the check ------------------------------------------------------------------------------ */

typedef struct check_ctx {
    fxm *m;
    fx_obs *obs; /* per cell */
    uint8_t *bulk_seen;
    uint32_t bulk_found;
    char *why;
    size_t cap;
    char *want, *got; /* canonical JSON buffers */
} check_ctx;

enum { CANON_CAP = FX_MAX_PAD + 4096 };

static bool same_ver(fx_ver a, fx_ver b)
{
    return a.exists == b.exists && (!a.exists || (a.j == b.j && a.e == b.e));
}

/* Whether version v may show as absent: a delete, or doomed. */
static bool may_vanish(const fxm *m, uint32_t t, fx_ver v)
{
    return !v.exists || fx_item_doomed(&m->cfg, t, v.j, v.e);
}

static bool fail(check_ctx *x, const char *fmt, uint32_t t, uint32_t k, const char *more)
{
    char key[128];
    fx_key_json(t, k, key, sizeof key);
    snprintf(x->why, x->cap, fmt, key, more);
    return false;
}

/* The item as its tag makes it equals what was read. */
static bool whole_item(check_ctx *x, const kura_value *item, uint32_t t, uint32_t k, uint64_t j,
                       uint32_t e)
{
    kura_value *want = NULL;
    size_t n = fx_item_json(&x->m->cfg, t, k, j, e, x->want, CANON_CAP);
    bool ok = n < CANON_CAP && kura_value_from_json(x->want, n, true, &want) == KURA_OK &&
              fx_canon(want, x->want, CANON_CAP) && fx_canon(item, x->got, CANON_CAP) &&
              !strcmp(x->want, x->got);
    kura_value_free(want);
    if (!ok)
        snprintf(x->why, x->cap, "item %.300s is not what its tag makes: %.300s", x->got,
                 x->want);
    return ok;
}

static bool on_item(void *arg, const kura_value *item)
{
    check_ctx *x = arg;
    fxm *m = x->m;
    uint32_t t, k, tt, e;
    uint64_t j;
    if (!fx_key_parse(item, &t, &k) || !fx_tag_parse(item, &tt, &j, &e) || tt != t) {
        fx_canon(item, x->got, CANON_CAP);
        snprintf(x->why, x->cap, "an item no writer wrote: %.400s", x->got);
        return false;
    }
    if (t == FX_BULK_T) {
        if (k >= m->cfg.bulk || j != k || x->bulk_seen[k]++)
            return fail(x, "bulk item %s found twice or never written%s", t, k, "");
        x->bulk_found++;
        return whole_item(x, item, t, k, j, e);
    }
    if (t >= m->cfg.nwriters || k >= m->cfg.keys_per_writer)
        return fail(x, "item %s of no writer%s", t, k, "");
    fx_obs *o = &x->obs[(size_t)t * m->cfg.keys_per_writer + k];
    if (o->seen)
        return fail(x, "item %s found twice%s", t, k, "");
    *o = (fx_obs){true, {true, j, e}};
    return whole_item(x, item, t, k, j, e);
}

/* The item found is an allowed version. */
static bool check_cell(check_ctx *x, uint32_t t, uint32_t k)
{
    fxm *m = x->m;
    const fx_cell *c = cell(m, t, k);
    fx_ver got = x->obs[(size_t)t * m->cfg.keys_per_writer + k].v;
    bool ok = same_ver(got, c->base) || (!got.exists && may_vanish(m, t, c->base));
    bool by_ttl = !got.exists && c->base.exists;
    for (size_t i = 0; i < c->n && !ok; i++) {
        ok = same_ver(got, c->p[i].v) || (!got.exists && may_vanish(m, t, c->p[i].v));
        by_ttl &= c->p[i].v.exists;
    }
    if (!ok) {
        char more[200];
        snprintf(more, sizeof more, " holds %s%llu.%u; durable %s%llu.%u, %zu versions since",
                 got.exists ? "" : "nothing, not ", (unsigned long long)got.j, got.e,
                 c->base.exists ? "" : "absent after ", (unsigned long long)c->base.j,
                 c->base.e, c->n);
        return fail(x, "item %s%s (a lost write, or one never made)", t, k, more);
    }
    m->st.doomed_gone += by_ttl;
    return true;
}

/* How entry i (version v, op j) of a transaction shows: 1 there, -1 not there, 0 unknown. */
static int txn_entry(check_ctx *x, uint32_t t, uint32_t k, uint64_t j, fx_ver v)
{
    fxm *m = x->m;
    const fx_cell *c = cell(m, t, k);
    fx_ver got = x->obs[(size_t)t * m->cfg.keys_per_writer + k].v;
    if (got.exists)
        return got.j == j ? 1 : got.j < j ? -1 : 0;
    bool could_yes = may_vanish(m, t, v), could_no = may_vanish(m, t, c->base);
    for (size_t i = 0; i < c->n; i++) {
        if (c->p[i].opno > j)
            could_yes |= may_vanish(m, t, c->p[i].v);
        else if (c->p[i].opno < j)
            could_no |= may_vanish(m, t, c->p[i].v);
    }
    return could_yes == could_no ? 0 : could_yes ? 1 : -1;
}

/* Every transaction not in base is all there or not at all. */
static bool check_txns(check_ctx *x, uint32_t t)
{
    fxm *m = x->m;
    for (uint64_t j = m->settled[t] + 1; j < m->next[t]; j++) {
        fx_op op;
        fx_gen(&m->cfg, t, j, &op);
        if (op.type != FX_TXN)
            continue;
        int yes = 0, no = 0;
        for (uint32_t i = 0; i < op.n; i++) {
            int r = txn_entry(x, t, op.e[i].key, j, (fx_ver){op.e[i].action != FX_E_DELETE, j, i});
            yes += r > 0;
            no += r < 0;
        }
        if (yes && no) {
            snprintf(x->why, x->cap, "transaction op %llu of writer %u is half there: %d of its "
                                     "%u items written, %d not",
                     (unsigned long long)j, t, yes, op.n, no);
            return false;
        }
        if (j > m->acked[t]) {
            m->st.txn_applied += yes > 0;
            m->st.txn_absent += no > 0;
        }
    }
    return true;
}

bool fxm_check(fxm *m, kura_db *db, bool commit, char *why, size_t cap)
{
    size_t ncells = (size_t)m->cfg.nwriters * m->cfg.keys_per_writer;
    check_ctx x = {.m = m, .obs = calloc(ncells, sizeof *x.obs),
                   .bulk_seen = calloc(m->cfg.bulk + 1, 1), .why = why, .cap = cap,
                   .want = malloc(CANON_CAP), .got = malloc(CANON_CAP)};
    if (!x.obs || !x.bulk_seen || !x.want || !x.got)
        abort();
    char swhy[512];
    kura_status s = fx_scan(db, FX_ITEMS, on_item, &x, swhy, sizeof swhy);
    bool ok = s == KURA_OK;
    if (!ok && s != KURA_E_INVALID)
        snprintf(why, cap, "%s", swhy);
    if (ok && x.bulk_found != m->cfg.bulk) {
        snprintf(why, cap, "%u of the %u bulk items are there", x.bulk_found, m->cfg.bulk);
        ok = false;
    }
    for (uint32_t t = 0; ok && t < m->cfg.nwriters; t++)
        for (uint32_t k = 0; ok && k < m->cfg.keys_per_writer; k++)
            ok = check_cell(&x, t, k);
    for (uint32_t t = 0; ok && t < m->cfg.nwriters; t++)
        ok = check_txns(&x, t);
    if (ok && commit) {
        for (uint32_t t = 0; t < m->cfg.nwriters; t++) {
            for (uint32_t k = 0; k < m->cfg.keys_per_writer; k++) {
                fx_cell *c = cell(m, t, k);
                c->base = x.obs[(size_t)t * m->cfg.keys_per_writer + k].v;
                c->n = 0;
            }
            m->settled[t] = m->next[t] - 1;
            m->acked[t] = m->next[t] - 1;
        }
    }
    free(x.obs);
    free(x.bulk_seen);
    free(x.want);
    free(x.got);
    return ok;
}
