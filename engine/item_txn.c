/*
 * item_txn.c - TransactWriteItems and TransactGetItems (kura.h, "Transactions").
 *
 * TransactWriteItems, in DynamoDB's order: the request (1..100 actions, each one of Put,
 * Update, Delete, ConditionCheck with what it needs, expressions parsed), the tables
 * (ResourceNotFound), the keys against the tables' schemas, no two actions on one item. Then
 * the step that makes it a transaction: the stripe locks of every item (engine/table.h) are
 * taken in one global order (their addresses), the same locks every single-item write holds
 * from its read to its write, so the transaction is serialized with every other write and two
 * transactions can never wait for each other in a cycle. Under the locks every item is read
 * and every condition evaluated on the same state; each Update builds its new item; tables
 * with a local secondary index check their item collections. If any action fails, nothing is
 * written and the result is TransactionCanceledException with one reason per action. Otherwise
 * the writes (with the old images a table with indexes needs) are split into one piece per
 * partition and committed by txn_commit (engine/txn.h): all visible at once, all or nothing
 * across a crash.
 *
 * TransactGetItems reads every item at one snapshot; a transaction's writes become visible
 * together, so the snapshot sees all or none of each.
 */
#include "engine/item_int.h"
#include "engine/table_collection.h"
#include "engine/table_index.h"
#include "engine/tcap.h"
#include "engine/txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hash.h"
#include "util/status.h"

enum { TXN_MAX_ACTIONS = 100, TXN_MAX_TOKEN = 36 };
#define TXN_MAX_BYTES (4u * 1024u * 1024u) /* the aggregate size of a transaction's items */

static kura_status nomem(void)
{
    return kura_err(KURA_E_NOMEM, "out of memory");
}

/* ---- TransactWriteItems ----------------------------------------------------------------------- */

typedef struct txn_act {
    const kura_transact_write_item *req;
    kura_table *t;
    item_exprs ex;
    kbuf key;       /* storage key */
    kura_value old; /* read under the locks */
    bool found;
    kura_value neu; /* Put: a copy of the item; Update: built; Delete / check: empty */
    bool writes;    /* Put, Update, Delete */
    coll_ticket tk; /* tables with an LSI, once registered */
    bool registered;
    bool measured;      /* the collection's size after the write is known: coll_size */
    uint64_t coll_size;
} txn_act;

static const char *op_name(kura_transact_op op)
{
    switch (op) {
    case KURA_TXN_PUT:
        return "put";
    case KURA_TXN_UPDATE:
        return "update";
    case KURA_TXN_DELETE:
        return "delete";
    default:
        return "conditionCheck";
    }
}

/* TransactItems: 1..100 of them. */
static kura_status check_count(const void *items, size_t n)
{
    if (!items || n == 0)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value '[]' at "
                                        "'transactItems' failed to satisfy constraint: Member "
                                        "must have length greater than or equal to 1");
    if (n > TXN_MAX_ACTIONS)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value at 'transactItems' "
                                        "failed to satisfy constraint: Member must have length "
                                        "less than or equal to %d",
                        TXN_MAX_ACTIONS);
    return KURA_OK;
}

/* The request's own checks (no table looked at yet). */
static kura_status write_check(const kura_transact_write_req *req)
{
    if (check_count(req->items, req->item_count) != KURA_OK)
        return KURA_E_INVALID;
    if (req->client_request_token &&
        (!req->client_request_token[0] || strlen(req->client_request_token) > TXN_MAX_TOKEN))
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value '%s' at "
                                        "'clientRequestToken' failed to satisfy constraint: "
                                        "Member must have length %s",
                        req->client_request_token,
                        req->client_request_token[0] ? "less than or equal to 36"
                                                     : "greater than or equal to 1");
    kura_status s = item_check_return_metrics(req->return_item_collection_metrics);
    for (size_t i = 0; i < req->item_count && s == KURA_OK; i++) {
        const kura_transact_write_item *a = &req->items[i];
        const char *what = op_name(a->op);
        if (a->op < KURA_TXN_CONDITION_CHECK || a->op > KURA_TXN_DELETE)
            return kura_err(KURA_E_INVALID, "TransactItems can only contain one of Check, Put, "
                                            "Update or Delete");
        if (!a->table_name)
            return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                            "'transactItems.%zu.member.%s.tableName' failed to "
                                            "satisfy constraint: Member must not be null",
                            i + 1, what);
        if (a->op == KURA_TXN_PUT ? !a->item : !a->key)
            return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                            "'transactItems.%zu.member.%s.%s' failed to satisfy "
                                            "constraint: Member must not be null",
                            i + 1, what, a->op == KURA_TXN_PUT ? "item" : "key");
        if (a->op == KURA_TXN_UPDATE && !a->update_expression)
            return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                            "'transactItems.%zu.member.update.updateExpression' "
                                            "failed to satisfy constraint: Member must not be "
                                            "null",
                            i + 1);
        if (a->op == KURA_TXN_CONDITION_CHECK && !a->condition_expression)
            return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                            "'transactItems.%zu.member.conditionCheck."
                                            "conditionExpression' failed to satisfy constraint: "
                                            "Member must not be null",
                            i + 1);
        const kura_value *m = a->op == KURA_TXN_PUT ? a->item : a->key;
        s = item_check_map_param(m, a->op == KURA_TXN_PUT ? "item" : "key");
        if (s == KURA_OK)
            s = a->op == KURA_TXN_PUT ? val_validate_item(m) : val_validate(m);
        if (s == KURA_OK)
            s = item_check_return_on_failure(a->return_values_on_condition_check_failure);
    }
    return s;
}

/* The parsed expressions and the table and key of every action. */
static kura_status write_prepare(kura_db *db, const kura_transact_write_req *req, txn_act *acts)
{
    kura_status s = KURA_OK;
    uint64_t bytes = 0;
    for (size_t i = 0; i < req->item_count && s == KURA_OK; i++) {
        txn_act *x = &acts[i];
        const kura_transact_write_item *a = x->req = &req->items[i];
        switch (a->op) {
        case KURA_TXN_UPDATE:
            s = item_exprs_parse(&a->expr, a->update_expression, a->condition_expression, NULL,
                                 "UpdateExpression and ConditionExpression are null", &x->ex);
            break;
        default:
            s = item_exprs_parse(&a->expr, NULL, a->condition_expression, NULL,
                                 "ConditionExpression is null", &x->ex);
            break;
        }
        if (a->op == KURA_TXN_PUT)
            bytes += val_item_size(a->item);
    }
    if (s == KURA_OK && bytes > TXN_MAX_BYTES)
        return kura_err(KURA_E_INVALID, "Transaction size has exceeded the maximum allowed size "
                                        "of 4 MB");
    for (size_t i = 0; i < req->item_count && s == KURA_OK; i++) {
        txn_act *x = &acts[i];
        const kura_transact_write_item *a = x->req;
        s = table_acquire(db, a->table_name, &x->t);
        if (s == KURA_OK)
            s = key_build(&x->t->ks, a->op == KURA_TXN_PUT ? a->item : a->key,
                          a->op == KURA_TXN_PUT ? KEY_FROM_ITEM : KEY_FROM_KEY, &x->key);
        if (s == KURA_OK && a->op == KURA_TXN_PUT)
            s = table_index_check_item(x->t, a->item);
        if (s == KURA_OK && a->op == KURA_TXN_UPDATE)
            s = item_check_key_untouched(x->t, x->ex.update);
        x->writes = a->op != KURA_TXN_CONDITION_CHECK;
    }
    for (size_t i = 0; i < req->item_count && s == KURA_OK; i++)
        for (size_t j = 0; j < i && s == KURA_OK; j++)
            if (acts[i].t == acts[j].t && acts[i].key.len == acts[j].key.len &&
                !memcmp(acts[i].key.data, acts[j].key.data, acts[i].key.len))
                s = kura_err(KURA_E_INVALID, "Transaction request cannot include multiple "
                                             "operations on one item");
    return s;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (kmutex *const *)a, y = (uintptr_t) * (kmutex *const *)b;
    return x < y ? -1 : x > y;
}

/* The distinct stripe locks of the actions' items, sorted: the order every transaction takes
 * them in. */
static size_t lock_set(txn_act *acts, size_t n, kmutex **locks)
{
    for (size_t i = 0; i < n; i++)
        locks[i] = table_item_lock(acts[i].t, acts[i].key.data, acts[i].key.len);
    qsort(locks, n, sizeof *locks, cmp_ptr);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || locks[k - 1] != locks[i])
            locks[k++] = locks[i];
    return k;
}

static void free_reasons(kura_cancellation_reason *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].message);
        kura_value_free(r[i].item);
    }
    free(r);
}

/* Sets reason i (code a static string, message copied). */
static kura_status set_reason(kura_cancellation_reason *r, const char *code, const char *msg)
{
    r->code = code;
    if (msg && !(r->message = strdup(msg)))
        return nomem();
    return KURA_OK;
}

/* Reserves every written item's growth in its item collection (tables with an LSI), last:
 * only a transaction that will be written reserves anything. Only the first registration may
 * wait for a collection; a later one that would (KURA_E_BUSY) makes the transaction cancel
 * what it holds, settle that collection holding nothing, and start again
 * (engine/table_collection.h). */
static kura_status register_collections(txn_act *acts, size_t n, bool want_metrics,
                                        kura_cancellation_reason *reasons, bool *canceled)
{
    kura_status s = KURA_OK;
    for (;;) {
        bool holding = false;
        size_t busy = n;
        for (size_t i = 0; i < n && s == KURA_OK && !*canceled; i++) {
            txn_act *x = &acts[i];
            if (!x->writes || !table_has_lsi(x->t))
                continue;
            const kura_value *old = x->found ? &x->old : NULL;
            const kura_value *neu = x->req->op == KURA_TXN_DELETE ? NULL : &x->neu;
            kura_status c = (holding ? table_coll_try_begin : table_coll_begin)(
                x->t, x->key.data, x->key.len, old, neu, want_metrics, &x->tk);
            if (c == KURA_E_BUSY) {
                busy = i;
                break;
            }
            if (c == KURA_E_COLLECTION_SIZE) {
                *canceled = true;
                s = set_reason(&reasons[i], "ItemCollectionSizeLimitExceeded", kura_last_error());
            } else if ((s = c) == KURA_OK) {
                x->registered = holding = true;
                x->measured = x->tk.measured; /* table_coll_end clears the ticket */
                x->coll_size = x->tk.size_after;
            }
        }
        if (busy == n)
            return s;
        for (size_t i = 0; i < busy; i++)
            if (acts[i].registered) {
                table_coll_cancel(acts[i].t, &acts[i].tk);
                acts[i].registered = false;
            }
        txn_act *x = &acts[busy];
        s = table_coll_settle(x->t, x->key.data, x->key.len, x->found ? &x->old : NULL,
                              x->req->op == KURA_TXN_DELETE ? NULL : &x->neu, want_metrics);
        if (s != KURA_OK)
            return s;
    }
}

/*
 * Under the locks: reads every item and evaluates every action. *canceled_out tells whether
 * any action failed; the reasons are then in reasons[0..n). Storage errors are returned.
 */
static kura_status evaluate(txn_act *acts, size_t n, bool want_metrics,
                            kura_cancellation_reason *reasons, bool *canceled_out)
{
    kura_status s = KURA_OK;
    bool canceled = false;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        txn_act *x = &acts[i];
        s = table_read(x->t, NULL, x->key.data, x->key.len, &x->old, &x->found);
        if (s != KURA_OK)
            break;
        reasons[i].code = "None";
        if (x->ex.cond && !expr_eval_condition(x->ex.cond, x->found ? &x->old : NULL)) {
            canceled = true;
            /* DynamoDB ends a ConditionCheck's message with a full stop, no other's */
            s = set_reason(&reasons[i], "ConditionalCheckFailed",
                           x->req->op == KURA_TXN_CONDITION_CHECK
                               ? "The conditional request failed."
                               : "The conditional request failed");
            if (s == KURA_OK && x->found &&
                x->req->return_values_on_condition_check_failure == KURA_RETURN_ALL_OLD) {
                kura_value copy = {0};
                if (val_copy(&copy, &x->old) != KURA_OK || !(reasons[i].item = item_value_take(&copy)))
                    s = nomem();
            }
            continue;
        }
        kura_status b = KURA_OK;
        if (x->req->op == KURA_TXN_PUT)
            b = val_copy(&x->neu, x->req->item) == KURA_OK ? KURA_OK : nomem();
        else if (x->req->op == KURA_TXN_UPDATE) {
            b = item_update_build(&x->ex, x->req->key, &x->old, x->found, true, &x->neu);
            if (b == KURA_OK && !x->found && x->ex.update && !expr_update_creates(x->ex.update)) {
                /* only REMOVE / DELETE: evaluated (a bad path fails as on an item with only
                 * its key), but a missing item stays missing */
                val_clear(&x->neu);
                x->writes = false;
            } else if (b == KURA_OK)
                b = table_index_check_item(x->t, &x->neu);
        }
        if (b == KURA_E_INVALID) { /* this action's item: a reason, not the request */
            canceled = true;
            s = set_reason(&reasons[i], "ValidationError", kura_last_error());
            continue;
        }
        if ((s = b) != KURA_OK)
            break;
    }
    if (s == KURA_OK && !canceled)
        s = register_collections(acts, n, want_metrics, reasons, &canceled);
    *canceled_out = canceled;
    return s;
}

/*
 * Under the locks, once every action passed: the capacity of the whole transaction admitted
 * or refused together (engine/tcap.h), each action charged twice its units (DynamoDB's
 * transactional writes) on its key and on its new item's GSI keys. A refusal cancels the
 * transaction with a ThrottlingError reason on the action refused, nothing written.
 */
static kura_status txn_admit(txn_act *acts, size_t n, tcap_op *caps,
                             kura_cancellation_reason *reasons, bool *canceled)
{
    for (size_t i = 0; i < n; i++) {
        txn_act *x = &acts[i];
        tcap_op_init(&caps[i], x->t, true);
        caps[i].skey = x->key.data;
        caps[i].klen = x->key.len;
        caps[i].txn = true;
        caps[i].item = x->writes && x->neu.type == KURA_M ? &x->neu : NULL;
        size_t o = x->found ? val_item_size(&x->old) : 0;
        size_t w = x->neu.type == KURA_M ? val_item_size(&x->neu) : 0;
        caps[i].est_half = tcap_write_half(o > w ? o : w, true);
    }
    size_t which = 0;
    kura_status s = tcap_admit_all(caps, n, &which);
    if (s != KURA_E_THROUGHPUT_EXCEEDED && s != KURA_E_THROTTLED)
        return s;
    *canceled = true;
    return set_reason(&reasons[which], "ThrottlingError", kura_last_error());
}

/* Appends a string (or its absence) to the request's canonical form. */
static bool canon_str(kbuf *b, const char *str)
{
    return str ? kbuf_put_u8(b, 1) && kbuf_put_lenbytes(b, str, strlen(str)) : kbuf_put_u8(b, 0);
}

static bool canon_value(kbuf *b, const kura_value *v)
{
    if (!v)
        return kbuf_put_u8(b, 0);
    kbuf e = KBUF_INIT;
    bool ok = val_encode(v, &e) == KURA_OK && kbuf_put_u8(b, 1) &&
              kbuf_put_lenbytes(b, e.data, e.len);
    kbuf_free(&e);
    return ok;
}

/* The hash of the request's actions: what makes a retry "the same request" for
 * ClientRequestToken. Items and maps are hashed in their encoding, which orders
 * attributes by name. */
static kura_status request_hash(const kura_transact_write_req *req, uint64_t *hash_out)
{
    kbuf b = KBUF_INIT;
    bool ok = true; /* what is written, not what is returned: ReturnConsumedCapacity and
                     * ReturnItemCollectionMetrics may differ between retries (as DynamoDB) */
    for (size_t i = 0; i < req->item_count && ok; i++) {
        const kura_transact_write_item *a = &req->items[i];
        ok = kbuf_put_u8(&b, (uint8_t)a->op) && canon_str(&b, a->table_name) &&
             canon_value(&b, a->item) && canon_value(&b, a->key) &&
             canon_str(&b, a->update_expression) && canon_str(&b, a->condition_expression) &&
             canon_value(&b, a->expr.names) && canon_value(&b, a->expr.values) &&
             kbuf_put_u8(&b, (uint8_t)a->return_values_on_condition_check_failure);
    }
    if (ok)
        *hash_out = kura_hash64(b.data, b.len);
    kbuf_free(&b);
    return ok ? KURA_OK : nomem();
}

/* The piece of the partition `part` in pieces[0..*n), added if missing. */
static txn_piece *piece_for(txn_piece *pieces, size_t *n, lsm_tree *part)
{
    for (size_t i = 0; i < *n; i++)
        if (pieces[i].part == part)
            return &pieces[i];
    txn_piece *p = &pieces[(*n)++];
    p->part = part;
    lsm_batch_init(&p->batch);
    return p;
}

/* The writes of the actions, one piece per partition, and their commit. */
static kura_status commit_writes(kura_db *db, txn_act *acts, size_t n, txn_token *tok)
{
    txn_piece *pieces = calloc(n, sizeof *pieces);
    if (!pieces)
        return nomem();
    size_t np = 0;
    kura_status s = KURA_OK;
    kbuf enc = KBUF_INIT, oenc = KBUF_INIT;
    uint64_t now = kwall_ms(); /* every change of a transaction has its time */
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        txn_act *x = &acts[i];
        if (!x->writes)
            continue;
        kura_tree *tree = x->t->tree;
        lsm_tree *part = tree->parts[kura_tree_partition_of(tree, x->key.data, x->key.len)];
        size_t had = np;
        txn_piece *p = piece_for(pieces, &np, part);
        /* a piece holds the writes of one table's partition: the meta entry first */
        if (np > had && atomic_load_explicit(&x->t->stream_on, memory_order_relaxed))
            s = lsm_batch_meta(&p->batch, now, 0);
        if (s != KURA_OK)
            break;
        bool del = x->req->op == KURA_TXN_DELETE;
        enc.len = 0;
        if (!del)
            s = val_encode(&x->neu, &enc);
        if (s == KURA_OK)
            s = del ? lsm_batch_delete(&p->batch, x->key.data, x->key.len)
                    : lsm_batch_put(&p->batch, x->key.data, x->key.len, enc.data, enc.len);
        if (s == KURA_OK && table_needs_images(x->t)) { /* the old image, for indexes, streams */
            oenc.len = 0;
            if (x->found)
                s = val_encode(&x->old, &oenc);
            if (s == KURA_OK)
                s = lsm_batch_image(&p->batch, x->key.data, x->key.len, oenc.data, oenc.len);
        }
    }
    if (s == KURA_OK && tok)
        tok->ms = now;
    if (s == KURA_OK)
        s = txn_commit(db, pieces, np, db->opts.durability == KURA_SYNC, tok);
    for (size_t i = 0; i < n && s == KURA_OK; i++)
        if (acts[i].writes)
            atomic_fetch_add_explicit(&acts[i].t->writes, 1, memory_order_relaxed);
    for (size_t i = 0; i < np; i++)
        lsm_batch_free(&pieces[i].batch);
    free(pieces);
    kbuf_free(&enc);
    kbuf_free(&oenc);
    return s;
}

/* "Transaction cancelled, please refer cancellation reasons for specific reasons [A, B]". */
static kura_status canceled_error(const kura_cancellation_reason *r, size_t n)
{
    char codes[TXN_MAX_ACTIONS * 34 + 1];
    size_t at = 0;
    codes[0] = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(codes + at, sizeof codes - at, "%s%s", i ? ", " : "", r[i].code);
    return kura_err(KURA_E_TXN_CANCELED, "Transaction cancelled, please refer cancellation "
                                         "reasons for specific reasons [%s]",
                    codes);
}

/* ConsumedCapacity and ItemCollectionMetrics of a committed transaction. Transactional
 * writes cost twice a write's units (DynamoDB bills a prepare and a commit); a ConditionCheck
 * a write's units of its item, twice. */
static kura_status write_results(const kura_transact_write_req *req, txn_act *acts, size_t n,
                                 kura_transact_write_res *res)
{
    kura_status s = KURA_OK;
    if (req->return_consumed_capacity != KURA_CAPACITY_NONE) {
        kura_table *tables[TXN_MAX_ACTIONS];
        double units[TXN_MAX_ACTIONS] = {0};
        kura_consumed_capacity ix[TXN_MAX_ACTIONS];
        for (size_t i = 0; i < n; i++) {
            tables[i] = acts[i].t;
            ix[i] = (kura_consumed_capacity){.present = true};
        }
        for (size_t i = 0; i < n && s == KURA_OK; i++) {
            txn_act *x = &acts[i];
            size_t first = 0;
            while (tables[first] != tables[i])
                first++;
            size_t ob = x->found ? val_item_size(&x->old) : 0;
            size_t nb = (x->req->op == KURA_TXN_PUT || x->req->op == KURA_TXN_UPDATE) &&
                                x->neu.type
                            ? val_item_size(&x->neu)
                            : 0;
            units[first] += 2 * capacity_write_units(ob > nb ? ob : nb);
            if (x->writes) /* the indexes' writes count double too */
                s = table_index_charge(x->t, x->found ? &x->old : NULL,
                                       x->req->op == KURA_TXN_DELETE ? NULL : &x->neu,
                                       req->return_consumed_capacity, &ix[first]);
        }
        for (size_t i = 0; i < n && s == KURA_OK; i++) {
            ix[i].capacity_units *= 2;
            ix[i].write_capacity_units *= 2;
            ix[i].read_capacity_units *= 2;
            ix[i].table_capacity_units *= 2;
            for (size_t k = 0; k < ix[i].index_count; k++)
                ix[i].indexes[k].capacity_units *= 2;
        }
        if (s == KURA_OK)
            s = item_capacity_per_table(req->return_consumed_capacity, tables, n, units, ix,
                                        &res->consumed_capacity, &res->consumed_capacity_count);
        for (size_t i = 0; i < n; i++)
            capacity_free(&ix[i]);
    }
    if (s == KURA_OK && req->return_item_collection_metrics == KURA_METRICS_SIZE) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            k += acts[i].measured;
        if (k && !(res->item_collection_metrics = calloc(k, sizeof *res->item_collection_metrics)))
            s = nomem();
        for (size_t i = 0; i < n && s == KURA_OK && k; i++) {
            txn_act *x = &acts[i];
            if (!x->measured)
                continue;
            s = table_coll_metrics(x->t, x->key.data, x->key.len, x->coll_size,
                                   &res->item_collection_metrics[res->item_collection_metrics_count]);
            if (s == KURA_OK)
                res->item_collection_metrics_count++;
        }
    }
    return s;
}

kura_status kura_transact_write_items(kura_db *db, const kura_transact_write_req *req,
                                      kura_transact_write_res *res_out)
{
    memset(res_out, 0, sizeof *res_out);
    kura_status s = write_check(req);
    if (s != KURA_OK)
        return s;
    size_t n = req->item_count;
    txn_act *acts = calloc(n, sizeof *acts);
    kura_cancellation_reason *reasons = calloc(n, sizeof *reasons);
    kmutex *locks[TXN_MAX_ACTIONS];
    tcap_op caps[TXN_MAX_ACTIONS];
    if (!acts || !reasons) {
        free(acts);
        free(reasons);
        return nomem();
    }
    for (size_t i = 0; i < n; i++)
        acts[i].key = (kbuf)KBUF_INIT;
    txn_token tok = {.token = req->client_request_token};
    bool running = false, replay = false;
    if (tok.token) {
        s = request_hash(req, &tok.hash);
        if (s == KURA_OK && (s = txn_token_begin(db, tok.token)) == KURA_OK)
            running = true;
        bool found = false;
        uint64_t hash = 0, ms = 0;
        if (s == KURA_OK)
            s = txn_token_get(db, tok.token, &found, &hash, &ms);
        uint64_t window = db->opts.idempotency_window_ms ? db->opts.idempotency_window_ms
                                                         : 600000u;
        if (s == KURA_OK && found && kwall_ms() < ms + window) {
            if (hash != tok.hash)
                s = kura_err(KURA_E_IDEMPOTENT_MISMATCH,
                             "DynamoDB rejected the request because you retried a request with "
                             "a different payload but with an idempotent token that was "
                             "already used.");
            else
                replay = true; /* committed before: success, nothing written again */
        }
    }
    if (s == KURA_OK && !replay)
        s = write_prepare(db, req, acts);
    size_t nlocks = 0;
    bool canceled = false;
    if (s == KURA_OK && !replay) {
        nlocks = lock_set(acts, n, locks);
        for (size_t i = 0; i < nlocks; i++)
            kmutex_lock(locks[i]);
        s = evaluate(acts, n, req->return_item_collection_metrics == KURA_METRICS_SIZE, reasons,
                     &canceled);
        if (s == KURA_OK && !canceled)
            s = txn_admit(acts, n, caps, reasons, &canceled);
        if (s == KURA_OK && !canceled)
            s = commit_writes(db, acts, n, tok.token ? &tok : NULL);
        for (size_t i = 0; s == KURA_OK && !canceled && i < n; i++)
            tcap_done(&caps[i], caps[i].est_half, true);
        for (size_t i = 0; i < n; i++)
            if (acts[i].registered)
                table_coll_end(acts[i].t, &acts[i].tk, s == KURA_OK && !canceled);
        for (size_t i = nlocks; i-- > 0;)
            kmutex_unlock(locks[i]);
    }
    if (running)
        txn_token_end(db, tok.token);
    kura_transact_write_res res = {0};
    if (s == KURA_OK && replay) {
        /* nothing consumed */
    } else if (s == KURA_OK && canceled) {
        s = canceled_error(reasons, n);
        res.cancellation_reasons = reasons;
        res.cancellation_reason_count = n;
        reasons = NULL;
        *res_out = res; /* the reasons are the result of a cancellation */
    } else if (s == KURA_OK) {
        s = write_results(req, acts, n, &res);
        if (s == KURA_OK)
            *res_out = res;
        else
            kura_transact_write_res_free(&res);
    }
    free_reasons(reasons, reasons ? n : 0);
    for (size_t i = 0; i < n; i++) {
        item_exprs_free(&acts[i].ex);
        kbuf_free(&acts[i].key);
        val_clear(&acts[i].old);
        val_clear(&acts[i].neu);
        table_release(acts[i].t);
    }
    free(acts);
    return s;
}

void kura_transact_write_res_free(kura_transact_write_res *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->consumed_capacity_count; i++)
        capacity_free(&r->consumed_capacity[i]);
    free(r->consumed_capacity);
    for (size_t i = 0; i < r->item_collection_metrics_count; i++)
        table_coll_metrics_free(&r->item_collection_metrics[i]);
    free(r->item_collection_metrics);
    free_reasons(r->cancellation_reasons, r->cancellation_reason_count);
    memset(r, 0, sizeof *r);
}

/* ---- TransactGetItems -------------------------------------------------------------------------- */

/* Each Get's table and storage key (and projection's check). A Key that does not match its
 * table's key schema is a reason to cancel (*reasons_out: one per Get, "None" for the others;
 * NULL when none is), as DynamoDB answers it; any other refusal fails the request, unless a
 * mismatch came before it in the list (the transaction is then cancelled with the reasons
 * found so far: DynamoDB Local 1.25.1 answers the first error in the list). */
static kura_status get_keys(kura_db *db, const kura_transact_get_req *req, kura_table **tables,
                            kbuf *keys, item_exprs *ex, kura_cancellation_reason **reasons_out)
{
    size_t n = req->item_count;
    kura_cancellation_reason *reasons = NULL;
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        const kura_transact_get_item *g = &req->items[i];
        s = table_acquire(db, g->table_name, &tables[i]);
        if (s == KURA_OK && !key_matches_schema(&tables[i]->ks, g->key)) {
            if (!reasons && !(reasons = calloc(n, sizeof *reasons)))
                s = nomem();
            else
                s = set_reason(&reasons[i], "ValidationError", KEY_MSG_SCHEMA);
            continue;
        }
        if (s == KURA_OK)
            s = key_build(&tables[i]->ks, g->key, KEY_FROM_KEY, &keys[i]);
        if (s == KURA_OK)
            s = item_check_projection_keys(tables[i], ex[i].proj);
        if (reasons && (s == KURA_E_INVALID || s == KURA_E_RESOURCE_NOT_FOUND))
            break; /* cancelled by the mismatch before it */
    }
    if (s == KURA_E_INVALID || s == KURA_E_RESOURCE_NOT_FOUND)
        s = reasons ? KURA_OK : s;
    for (size_t i = 0; reasons && i < n; i++)
        if (!reasons[i].code)
            reasons[i].code = "None";
    if (s != KURA_OK) {
        free_reasons(reasons, reasons ? n : 0);
        reasons = NULL;
    }
    *reasons_out = reasons;
    return s;
}

kura_status kura_transact_get_items(kura_db *db, const kura_transact_get_req *req,
                                    kura_transact_get_res *res_out)
{
    memset(res_out, 0, sizeof *res_out);
    if (check_count(req->items, req->item_count) != KURA_OK)
        return KURA_E_INVALID;
    size_t n = req->item_count;
    item_exprs ex[TXN_MAX_ACTIONS];
    kura_table *tables[TXN_MAX_ACTIONS] = {0};
    kbuf keys[TXN_MAX_ACTIONS];
    double units[TXN_MAX_ACTIONS] = {0};
    memset(ex, 0, sizeof ex);
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n; i++)
        keys[i] = (kbuf)KBUF_INIT;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        const kura_transact_get_item *g = &req->items[i];
        if (!g->table_name)
            s = kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                         "'transactItems.%zu.member.get.tableName' failed to "
                                         "satisfy constraint: Member must not be null",
                         i + 1);
        if (s == KURA_OK)
            s = item_check_map_param(g->key, "key");
        if (s == KURA_OK)
            s = val_validate(g->key);
        if (s == KURA_OK)
            s = item_exprs_parse(&g->expr, NULL, NULL, g->projection_expression, NULL, &ex[i]);
    }
    kura_cancellation_reason *reasons = NULL;
    if (s == KURA_OK)
        s = get_keys(db, req, tables, keys, ex, &reasons);
    if (s == KURA_OK && reasons) {
        s = canceled_error(reasons, n);
        res_out->cancellation_reasons = reasons;
        res_out->cancellation_reason_count = n;
    }
    for (size_t i = 0; i < n && s == KURA_OK; i++)
        for (size_t j = 0; j < i && s == KURA_OK; j++)
            if (tables[i] == tables[j] && keys[i].len == keys[j].len &&
                !memcmp(keys[i].data, keys[j].data, keys[i].len))
                s = kura_err(KURA_E_INVALID, "Transaction request cannot include multiple "
                                             "operations on one item");
    kura_transact_get_res res = {0};
    if (s == KURA_OK && !(res.items = calloc(n, sizeof *res.items)))
        s = nomem();
    if (s == KURA_OK)
        res.item_count = n;
    const kura_snapshot *snap = s == KURA_OK ? kura_snapshot_new(db) : NULL;
    if (s == KURA_OK && !snap)
        s = nomem();
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.snapshot = snap;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        kura_value item = {0};
        bool found = false;
        s = table_read(tables[i], &ro, keys[i].data, keys[i].len, &item, &found);
        size_t first = 0;
        while (tables[first] != tables[i])
            first++;
        if (s == KURA_OK) /* twice a strongly consistent read, also for a missing item */
            units[first] += 2 * capacity_read_units(found ? val_item_size(&item) : 0, true);
        if (s == KURA_OK && found && ex[i].proj) {
            kura_value proj = {0};
            s = expr_project(ex[i].proj, &item, &proj);
            val_clear(&item);
            val_move(&item, &proj);
        }
        if (s == KURA_OK && found && !(res.items[i] = item_value_take(&item)))
            s = nomem();
        val_clear(&item);
    }
    kura_snapshot_free(db, snap);
    if (s == KURA_OK && req->return_consumed_capacity != KURA_CAPACITY_NONE) {
        kura_consumed_capacity *cc = calloc(n, sizeof *cc);
        if (!cc)
            s = nomem();
        for (size_t i = 0; i < n && s == KURA_OK; i++) {
            bool first = true;
            for (size_t j = 0; j < i && first; j++)
                first = tables[j] != tables[i];
            if (first)
                s = capacity_fill(&cc[res.consumed_capacity_count++], req->return_consumed_capacity,
                                  tables[i]->name, units[i], true);
        }
        res.consumed_capacity = cc;
    }
    for (size_t i = 0; i < n; i++) {
        item_exprs_free(&ex[i]);
        kbuf_free(&keys[i]);
        table_release(tables[i]);
    }
    if (s != KURA_OK) {
        kura_transact_get_res_free(&res);
        return s;
    }
    *res_out = res;
    return KURA_OK;
}

void kura_transact_get_res_free(kura_transact_get_res *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->item_count; i++)
        kura_value_free(r->items[i]);
    free(r->items);
    for (size_t i = 0; i < r->consumed_capacity_count; i++)
        capacity_free(&r->consumed_capacity[i]);
    free(r->consumed_capacity);
    free_reasons(r->cancellation_reasons, r->cancellation_reason_count);
    memset(r, 0, sizeof *r);
}
