/*
 * item_pre.c - This file contains what the item operations do with a request whose
 * expressions were parsed ahead (item_pre, engine/item_int.h): PartiQL's plan cache parses
 * a statement's expressions once and runs its plan again with other parameters, so a
 * statement run again costs neither the parse of its condition and update text nor the
 * check of its names and values maps, only what GetItem or UpdateItem cost themselves.
 *
 * The operation borrows the parsed expressions (never frees them) and checks, with the table
 * pinned as it always pins it, that the table's key names are still those the plan was made
 * for: a table dropped and created again with another key makes the plan stale, and the
 * operation does nothing.
 */
#include "engine/item_int.h"

#include <string.h>

kura_status item_pre_exprs(const item_pre *pre, const kura_expression_attributes *ea,
                           const char *update, const char *cond, const char *proj,
                           const char *value_exprs, item_exprs *out)
{
    if (pre && pre->ex) {
        *out = *pre->ex;
        return KURA_OK;
    }
    return item_exprs_parse(ea, update, cond, proj, value_exprs, out);
}

void item_pre_done(const item_pre *pre, item_exprs *ex)
{
    if (pre && pre->ex)
        memset(ex, 0, sizeof *ex); /* borrowed */
    else
        item_exprs_free(ex);
}

static bool same_name(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool item_pre_stale(item_pre *pre, const kura_table *t)
{
    if (!pre || !pre->hash)
        return false;
    pre->stale = !same_name(t->ks.pk_name, pre->hash) || !same_name(t->ks.sk_name, pre->range);
    return pre->stale;
}
