/*
 * table_insights_list.c - This file contains ListContributorInsights: the summaries of the
 * tables' and GSIs' Contributor Insights (engine/table_insights.c keeps the setting), in pages.
 *
 * The order is that of (table name, index name), the table's own entry (index "") before its
 * GSIs, bytewise, so that a page can resume after any entry even when tables or GSIs came or
 * went in between. The NextToken is opaque to clients: the hex digits of the last entry's
 * table name, a dot, and those of its index name (none for the table's entry); anything else
 * is DynamoDB's ValidationException.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_insights.h"
#include "engine/table_int.h"
#include "util/status.h"

enum { LIST_MAX = 100, NAME_MAX_BYTES = 255 };

/* An entry before sorting: names borrowed from the table while tables_mu is held, copied
 * (owned) once chosen. */
typedef struct ci_entry {
    char *table, *index;
    uint8_t status, mode;
} ci_entry;

static int entry_cmp(const char *ta, const char *ia, const char *tb, const char *ib)
{
    int c = strcmp(ta, tb);
    return c ? c : strcmp(ia ? ia : "", ib ? ib : "");
}

static int entry_qsort(const void *a, const void *b)
{
    const ci_entry *x = a, *y = b;
    return entry_cmp(x->table, x->index, y->table, y->index);
}

/* Appends t's entries to v (room for 1 + IDX_MAX_GSI more): all of them with `all`, else the
 * ENABLED ones. Copies the names; false when out of memory. tables_mu held. */
static bool add_table(const kura_table *t, bool all, ci_entry *v, size_t *n)
{
    for (int64_t g = -1; g < (int64_t)t->ngsi; g++) {
        const idx_def *x = g < 0 ? NULL : &t->gsi[g];
        if (x && (x->status == IDX_DELETED || x->status == IDX_DELETING))
            continue;
        const idx_insights *ci = x ? &x->ci : &t->ci;
        if (!all && ci->status != INSIGHTS_ENABLED)
            continue;
        ci_entry *e = &v[(*n)++];
        e->status = ci->status;
        e->mode = ci->mode;
        if (!(e->table = strdup(t->name)) || (x && !(e->index = strdup(x->name))))
            return false;
    }
    return true;
}

static void entries_free(ci_entry *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].table);
        free(v[i].index);
    }
    free(v);
}

/* Every entry listed (one table's, or every ENABLED one), sorted. */
static kura_status collect(kura_db *db, const char *table_name, ci_entry **v_out, size_t *n_out)
{
    kura_table *one = NULL;
    kura_status s = KURA_OK;
    if (table_name && (s = table_acquire_named(db, table_name, &one)) != KURA_OK)
        return s;
    kmutex_lock(&db->tables_mu);
    size_t ntables = one ? 1 : db->ntables, n = 0;
    ci_entry *v = calloc(ntables * (1 + IDX_MAX_GSI) + 1, sizeof *v);
    bool ok = v != NULL;
    for (size_t i = 0; ok && i < ntables; i++)
        ok = add_table(one ? one : db->tables[i], one != NULL, v, &n);
    kmutex_unlock(&db->tables_mu);
    if (one)
        table_release(one);
    if (!ok) {
        entries_free(v, n + 1);
        return kura_err(KURA_E_NOMEM, "ListContributorInsights: out of memory");
    }
    qsort(v, n, sizeof *v, entry_qsort);
    *v_out = v;
    *n_out = n;
    return KURA_OK;
}

/* ---- NextToken -------------------------------------------------------------------------- */

static char *hex_of(const char *s, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        *out++ = digits[*p >> 4];
        *out++ = digits[*p & 15];
    }
    return out;
}

static char *token_of(const char *table, const char *index)
{
    size_t tl = strlen(table), il = index ? strlen(index) : 0;
    char *tok = malloc(2 * (tl + il) + 2);
    if (!tok)
        return NULL;
    char *p = hex_of(table, tok);
    *p++ = '.';
    p = index ? hex_of(index, p) : p;
    *p = '\0';
    return tok;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes `len` hex digits into out (room for NAME_MAX_BYTES + 1): a name of 3..255
 * [a-zA-Z0-9_.-] characters. */
static bool unhex_name(const char *h, size_t len, char *out)
{
    if (len % 2 || len / 2 < 3 || len / 2 > NAME_MAX_BYTES)
        return false;
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hex_digit(h[2 * i]), lo = hex_digit(h[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        char c = (char)(hi << 4 | lo);
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
        out[i] = c;
    }
    out[len / 2] = '\0';
    return true;
}

/* The entry a token names into table/index (index "" for a table's entry). */
static bool token_parse(const char *tok, char *table, char *index)
{
    const char *dot = strchr(tok, '.');
    if (!dot || !unhex_name(tok, (size_t)(dot - tok), table))
        return false;
    index[0] = '\0';
    return !dot[1] || unhex_name(dot + 1, strlen(dot + 1), index);
}

/* ---- ListContributorInsights ---------------------------------------------------------------- */

kura_status kura_list_contributor_insights(kura_db *db, const char *table_name,
                                           const char *next_token, uint32_t max_results,
                                           kura_contributor_insights_list *list_out)
{
    kura_status s = table_name ? table_name_check(table_name, "tableName") : KURA_OK;
    if (s != KURA_OK)
        return s;
    if (max_results > LIST_MAX) /* the model's ListContributorInsightsLimit */
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value '%u' at "
                        "'maxResults' failed to satisfy constraint: Member must have value less "
                        "than or equal to %d", max_results, LIST_MAX);
    max_results = max_results ? max_results : LIST_MAX;
    char tt[NAME_MAX_BYTES + 1], ti[NAME_MAX_BYTES + 1];
    if (next_token && !token_parse(next_token, tt, ti))
        return kura_err(KURA_E_INVALID, "Invalid NextToken");
    ci_entry *v = NULL;
    size_t n = 0;
    if ((s = collect(db, table_name, &v, &n)) != KURA_OK)
        return s;
    size_t first = 0;
    while (next_token && first < n && entry_cmp(v[first].table, v[first].index, tt, ti) <= 0)
        first++;
    size_t count = n - first < max_results ? n - first : max_results;
    kura_contributor_insights_list l = {.summaries = calloc(count + 1, sizeof *l.summaries)};
    bool ok = l.summaries != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        ci_entry *e = &v[first + i];
        bool on = e->status == INSIGHTS_ENABLED;
        l.summaries[i] = (kura_contributor_insights_summary){
            .table_name = e->table, .index_name = e->index,
            .status = on ? "ENABLED" : "DISABLED",
            .mode = on ? (kura_contributor_insights_mode)e->mode : KURA_CI_MODE_UNSET};
        e->table = e->index = NULL; /* moved */
        l.count = i + 1;
    }
    if (ok && first + count < n && count > 0) {
        const kura_contributor_insights_summary *last = &l.summaries[count - 1];
        ok = (l.next_token = token_of(last->table_name, last->index_name)) != NULL;
    }
    entries_free(v, n);
    if (!ok) {
        kura_contributor_insights_list_free(&l);
        return kura_err(KURA_E_NOMEM, "ListContributorInsights: out of memory");
    }
    *list_out = l;
    return KURA_OK;
}

void kura_contributor_insights_list_free(kura_contributor_insights_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; l->summaries && i < l->count; i++) {
        free(l->summaries[i].table_name);
        free(l->summaries[i].index_name);
    }
    free(l->summaries);
    free(l->next_token);
    memset(l, 0, sizeof *l);
}
