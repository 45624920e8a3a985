/*
 * table_gsi.c - UpdateTable's GlobalSecondaryIndexUpdates: Create (a GSI added to a live
 * table, backfilled in the background), Delete (dropped in the background), Update (its
 * provisioned throughput).
 *
 * DynamoDB's rules, with DynamoDB Local 1.25.1's messages: at most one Create or Delete per
 * request and none while another index of the table is being created or deleted
 * (LimitExceededException "Subscriber limit exceeded: Only 1 online index can be created or
 * deleted simultaneously per table"; ResourceInUseException when the request names the index
 * in progress); a Create of an existing name is a ValidationException, a Delete or Update of a
 * missing one ResourceNotFoundException. The new index itself is checked as CreateTable checks
 * its indexes (table_check_index.c), on a CreateTable request made of the table as it is plus
 * the new index, so that every limit (20 GSIs, 100 NonKeyAttributes across indexes) and every
 * message is the same; its key attributes come from the request's AttributeDefinitions or the
 * table's, and one defined in both must keep its type.
 *
 * The definition changes under tables_mu and is durable (def_write) before the index's trees
 * are touched, so a crash leaves either no index, a CREATING one (built again at open) or a
 * DELETING one (dropped at open). GSIs are appended to an array that never moves while the
 * table is open (room for 20), and a dropped one stays there as IDX_DELETED until it closes,
 * so readers may hold a definition without a lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_index.h"
#include "engine/table_int.h"
#include "engine/tcap.h"
#include "util/status.h"

#define MSG_ONE_AT_A_TIME                                                                          \
    "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously "    \
    "per table"

/* The GSI called `name` that is not dropped: its position in t->gsi, or -1. */
static int gsi_find(const kura_table *t, const char *name)
{
    for (uint32_t i = 0; name && i < t->ngsi; i++)
        if (t->gsi[i].status != IDX_DELETED && !strcmp(t->gsi[i].name, name))
            return (int)i;
    return -1;
}

static const kura_attribute_definition *def_of(const kura_attribute_definition *d, size_t n,
                                              const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].attribute_name, name))
            return &d[i];
    return NULL;
}

/* An index definition as a CreateTable request gives it; `ks` has room for 8 elements. */
static void as_req(const idx_def *x, kura_key_schema_element *ks, const char **nka,
                   kura_index_def *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < x->nhash; i++)
        ks[n++] = (kura_key_schema_element){x->hash[i].name, false};
    for (uint32_t i = 0; i < x->nrange; i++)
        ks[n++] = (kura_key_schema_element){x->range[i].name, true};
    for (uint32_t i = 0; i < x->ninclude; i++)
        nka[i] = x->include[i];
    *out = (kura_index_def){.index_name = x->name, .key_schema = ks, .key_schema_count = n,
                            .projection = {x->projection, x->ninclude ? nka : NULL,
                                           x->ninclude},
                            .has_provisioned_throughput = x->rcu || x->wcu,
                            .read_capacity_units = x->rcu, .write_capacity_units = x->wcu};
}

/* The new index checked as CreateTable would check it on this table; *defs_out the merged
 * attribute definitions (malloc'ed array, names borrowed). tables_mu held. */
static kura_status check_create(const kura_table *t, const kura_update_table_req *req,
                                const kura_index_def *nx, kura_attribute_definition **defs_out,
                                size_t *ndefs_out)
{
    size_t nd = t->nattr_defs, cap = t->nattr_defs + req->attribute_definitions_count;
    kura_attribute_definition *defs = calloc(cap ? cap : 1, sizeof *defs);
    uint32_t nl = t->nlsi, ng = 0;
    kura_index_def *lsi = calloc(nl ? nl : 1, sizeof *lsi);
    kura_index_def *gsi = calloc(IDX_MAX_GSI + 1, sizeof *gsi);
    kura_key_schema_element(*ks)[8] = calloc(nl + IDX_MAX_GSI + 1, sizeof *ks);
    const char *(*nka)[IDX_MAX_NON_KEY] = calloc(nl + IDX_MAX_GSI + 1, sizeof *nka);
    kura_status s = KURA_OK;
    if (!defs || !lsi || !gsi || !ks || !nka)
        s = kura_err(KURA_E_NOMEM, "UpdateTable: out of memory");
    if (s == KURA_OK)
        s = table_check_name_lengths(req->attribute_definitions,
                                     req->attribute_definitions_count, NULL, 0);
    for (size_t i = 0; s == KURA_OK && i < nd; i++)
        defs[i] = t->attr_defs[i];
    for (size_t i = 0; s == KURA_OK && i < req->attribute_definitions_count; i++) {
        const kura_attribute_definition *a = &req->attribute_definitions[i];
        const kura_attribute_definition *old = def_of(defs, nd, a->attribute_name);
        if (old && old->attribute_type != a->attribute_type)
            s = kura_err(KURA_E_INVALID, "invalid attribute, SchemaElement redefined should be "
                                         "of same type as previously defined");
        else if (!old)
            defs[nd++] = *a;
    }
    for (uint32_t i = 0; s == KURA_OK && i < nl; i++)
        as_req(&t->lsi[i], ks[i], nka[i], &lsi[i]);
    for (uint32_t i = 0; s == KURA_OK && i < t->ngsi; i++)
        if (t->gsi[i].status != IDX_DELETED) {
            as_req(&t->gsi[i], ks[nl + ng], nka[nl + ng], &gsi[ng]);
            ng++;
        }
    if (s == KURA_OK) {
        gsi[ng++] = *nx;
        kura_key_schema_element tks[2] = {{t->pk_name, false}, {t->sk_name, true}};
        kura_create_table_req r = {
            .table_name = t->name, .attribute_definitions = defs,
            .attribute_definitions_count = nd, .key_schema = tks,
            .key_schema_count = t->sk_name ? 2 : 1, .billing_mode = t->billing,
            .local_secondary_indexes = nl ? lsi : NULL, .local_secondary_indexes_count = nl,
            .global_secondary_indexes = gsi, .global_secondary_indexes_count = ng};
        s = table_check_indexes(&r);
        if (s == KURA_E_INVALID && strstr(kura_last_error(), "GlobalSecondaryIndex count"))
            s = kura_err(KURA_E_LIMIT_EXCEEDED, "Subscriber limit exceeded: %s",
                         kura_last_error());
        if (s == KURA_OK)
            s = settings_check_gsi(nx, t->billing == KURA_BILLING_PAY_PER_REQUEST);
    }
    free(lsi);
    free(gsi);
    free(ks);
    free(nka);
    if (s != KURA_OK) {
        free(defs);
        return s;
    }
    *defs_out = defs;
    *ndefs_out = nd;
    return KURA_OK;
}

/* Appends the CREATING definition; durable when this returns KURA_OK. tables_mu held. */
static kura_status add_definition(kura_db *db, kura_table *t, const kura_index_def *nx,
                                  const kura_attribute_definition *defs, size_t nd)
{
    if (!t->gsi && !(t->gsi = calloc(IDX_MAX_GSI, sizeof *t->gsi)))
        return kura_err(KURA_E_NOMEM, "UpdateTable: out of memory");
    kura_attribute_definition *nattr = calloc(nd, sizeof *nattr);
    idx_def *x = &t->gsi[t->ngsi];
    memset(x, 0, sizeof *x);
    bool ok = nattr && def_index_from_req(nx, IDX_GLOBAL, t->billing == KURA_BILLING_PROVISIONED,
                                          t->next_index_id, x);
    for (size_t i = 0; ok && i < nd; i++) {
        nattr[i].attribute_type = defs[i].attribute_type;
        ok = (nattr[i].attribute_name = strdup(defs[i].attribute_name)) != NULL;
    }
    for (uint32_t i = 0; ok && i < x->nhash + x->nrange; i++) {
        idx_key_attr *a = i < x->nhash ? &x->hash[i] : &x->range[i - x->nhash];
        a->type = def_of(nattr, nd, a->name)->attribute_type; /* checked: defined */
    }
    if (!ok) {
        for (size_t i = 0; nattr && i < nd; i++)
            free((char *)nattr[i].attribute_name);
        free(nattr);
        idx_def_clear(x);
        return kura_err(KURA_E_NOMEM, "UpdateTable: out of memory");
    }
    x->status = IDX_CREATING;
    kura_attribute_definition *old = t->attr_defs;
    size_t nold = t->nattr_defs;
    t->attr_defs = nattr;
    t->nattr_defs = nd;
    t->next_index_id++;
    __atomic_store_n(&t->ngsi, t->ngsi + 1, __ATOMIC_RELEASE);
    kura_status s = def_write(db, t, false);
    if (s != KURA_OK) { /* as if it never happened */
        __atomic_store_n(&t->ngsi, t->ngsi - 1, __ATOMIC_RELEASE);
        t->next_index_id--;
        t->attr_defs = old;
        t->nattr_defs = nold;
        old = nattr;
        nold = nd;
        idx_def_clear(x);
    }
    for (size_t i = 0; i < nold; i++)
        free((char *)old[i].attribute_name);
    free(old);
    return s;
}

/* The one Create or Delete of the request, or NULL; LimitExceeded if there are more. */
static kura_status the_one(const kura_update_table_req *req, const kura_gsi_update **one_out)
{
    const kura_gsi_update *one = NULL;
    for (size_t i = 0; i < req->global_secondary_index_updates_count; i++) {
        const kura_gsi_update *u = &req->global_secondary_index_updates[i];
        if (u->action == KURA_GSI_UPDATE)
            continue;
        if (one)
            return kura_err(KURA_E_LIMIT_EXCEEDED, MSG_ONE_AT_A_TIME);
        one = u;
    }
    *one_out = one;
    return KURA_OK;
}

static const char *action_name(const kura_gsi_update *u)
{
    return u->action == KURA_GSI_CREATE ? u->create.index_name : u->index_name;
}

/* What may not start while an index is being created or deleted: another Create or Delete,
 * and any action on it; a Delete of an index being rebuilt (kura_rebuild_index). tables_mu
 * held. */
static kura_status check_busy(const kura_table *t, const kura_update_table_req *req,
                              const kura_gsi_update *one)
{
    const char *rebuilt = t->ix_rebuilding ? table_index_def(t, t->ix_rebuild_pos)->name : NULL;
    if (rebuilt && one && one->action == KURA_GSI_DELETE && one->index_name &&
        !strcmp(one->index_name, rebuilt))
        return kura_err(KURA_E_RESOURCE_IN_USE, "Attempt to change a resource which is still "
                                                "in use: Index is being rebuilt.");
    for (uint32_t i = 0; i < t->ngsi; i++) {
        const idx_def *x = &t->gsi[i];
        if (x->status != IDX_CREATING && x->status != IDX_DELETING)
            continue;
        for (size_t j = 0; j < req->global_secondary_index_updates_count; j++) {
            const char *n = action_name(&req->global_secondary_index_updates[j]);
            if (n && !strcmp(n, x->name))
                return kura_err(KURA_E_RESOURCE_IN_USE,
                                "Attempt to change a resource which is still in use: Index is "
                                "being %s.",
                                x->status == IDX_CREATING ? "created" : "deleted");
        }
        if (one)
            return kura_err(KURA_E_LIMIT_EXCEEDED, MSG_ONE_AT_A_TIME);
    }
    return KURA_OK;
}

/* The Update actions: their throughput and settings, by the billing mode the request leaves
 * the table in. tables_mu held; written with the definition. */
static kura_status apply_updates(kura_table *t, const kura_update_table_req *req)
{
    kura_billing_mode mode = req->billing_mode ? req->billing_mode : t->billing;
    for (size_t i = 0; i < req->global_secondary_index_updates_count; i++) {
        const kura_gsi_update *u = &req->global_secondary_index_updates[i];
        if (u->action != KURA_GSI_UPDATE)
            continue;
        int g = gsi_find(t, u->index_name);
        if (g < 0)
            return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
        if (!u->has_provisioned_throughput && !u->on_demand.given && !u->warm.given)
            return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: One of "
                            "ProvisionedThroughput, OnDemandThroughput or WarmThroughput must be "
                            "specified for index: %s", u->index_name);
        kura_status s = settings_check_gsi_update(&t->gsi[g], u,
                                                  mode == KURA_BILLING_PAY_PER_REQUEST);
        if (s != KURA_OK)
            return s;
        if (!u->has_provisioned_throughput)
            continue;
        if (mode == KURA_BILLING_PAY_PER_REQUEST)
            return kura_err(KURA_E_INVALID,
                            "One or more parameter values were invalid: ProvisionedThroughput "
                            "should not be specified for index: %s when BillingMode is "
                            "PAY_PER_REQUEST",
                            u->index_name);
        if (u->read_capacity_units < 1 || u->read_capacity_units > TABLE_CAPACITY_MAX ||
            u->write_capacity_units < 1 || u->write_capacity_units > TABLE_CAPACITY_MAX)
            return kura_err(KURA_E_INVALID, "Given value %" PRIu64 " for %s is out of bounds",
                            u->read_capacity_units < 1 ||
                                    u->read_capacity_units > TABLE_CAPACITY_MAX
                                ? u->read_capacity_units
                                : u->write_capacity_units,
                            u->read_capacity_units < 1 ||
                                    u->read_capacity_units > TABLE_CAPACITY_MAX
                                ? "ReadCapacityUnits"
                                : "WriteCapacityUnits");
    }
    for (size_t i = 0; i < req->global_secondary_index_updates_count; i++) {
        const kura_gsi_update *u = &req->global_secondary_index_updates[i];
        if (u->action != KURA_GSI_UPDATE)
            continue;
        idx_def *x = &t->gsi[gsi_find(t, u->index_name)];
        if (u->has_provisioned_throughput && t->billing == KURA_BILLING_PROVISIONED &&
            (u->read_capacity_units < x->rcu || u->write_capacity_units < x->wcu)) {
            kura_status d = tcap_decrease(t->cap, x->id); /* DynamoDB's daily limit */
            if (d != KURA_OK)
                return d;
        }
        if (u->has_provisioned_throughput) {
            x->rcu = u->read_capacity_units;
            x->wcu = u->write_capacity_units;
        }
        settings_gsi_apply(x, &u->on_demand, &u->warm);
    }
    return KURA_OK;
}

kura_status table_gsi_update(kura_db *db, kura_table *t, const kura_update_table_req *req)
{
    const kura_gsi_update *one = NULL;
    kura_status s = the_one(req, &one);
    if (s != KURA_OK)
        return s;
    kmutex_lock(&db->tables_mu);
    s = check_busy(t, req, one);
    kura_attribute_definition *defs = NULL;
    size_t nd = 0;
    int drop = -1;
    if (s == KURA_OK && one && one->action == KURA_GSI_DELETE) {
        drop = gsi_find(t, one->index_name);
        if (drop < 0)
            s = kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    } else if (s == KURA_OK && one) {
        const char *name = one->create.index_name;
        bool exists = gsi_find(t, name) >= 0;
        for (uint32_t i = 0; name && i < t->nlsi && !exists; i++)
            exists = !strcmp(t->lsi[i].name, name);
        if (exists)
            s = kura_err(KURA_E_INVALID, "Attempting to create an index which already exists");
        else
            s = check_create(t, req, &one->create, &defs, &nd);
    }
    /* Update actions: their throughput */
    if (s == KURA_OK)
        s = apply_updates(t, req);
    if (s == KURA_OK && one && one->action == KURA_GSI_CREATE) {
        s = add_definition(db, t, &one->create, defs, nd);
    } else if (s == KURA_OK && drop >= 0) {
        t->gsi[drop].status = IDX_DELETING;
        if ((s = def_write(db, t, false)) != KURA_OK)
            t->gsi[drop].status = IDX_ACTIVE;
    } else if (s == KURA_OK) {
        s = def_write(db, t, false); /* Update actions only */
    }
    kmutex_unlock(&db->tables_mu);
    free(defs);
    if (s != KURA_OK || !one)
        return s;
    /* the definition is durable: the rest happens in the background (a failure there leaves
     * the index CREATING or DELETING, which the next open completes) */
    if (one->action == KURA_GSI_CREATE)
        return table_index_add_gsi(db, t);
    return table_index_drop_gsi(db, t, t->nlsi + (uint32_t)drop);
}
