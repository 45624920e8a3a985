/*
 * table_policy.c - This file contains a table's resource-based policy: PutResourcePolicy,
 * GetResourcePolicy and DeleteResourcePolicy on table ARNs, and CreateTable's ResourcePolicy.
 *
 * The policy is a field of the table's definition (engine/table.h: policy, policy_rev;
 * docs/format/catalog.md, version 6), changed under tables_mu and durable (a synchronous
 * definition write) before the call returns; a change whose definition cannot be written is
 * undone. kura keeps policies and gives them back; it does not evaluate them (no IAM), so the
 * checks are DynamoDB's on the document as text: at most 20 KB, valid JSON (an object).
 *
 * Revision ids are decimal strings, as DynamoDB's: the milliseconds since the epoch of the
 * change, at least one more than the table's last, so that an id names one policy text of
 * the table. PutResourcePolicy of the text the table has already returns its id unchanged
 * (DynamoDB: "idempotent ... will return the same revision ID").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yajl/yajl_parse.h>

#include "engine/arn.h"
#include "engine/table_int.h"
#include "util/status.h"

static const char NO_POLICY[] = "NO_POLICY";

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Whether `text` is one JSON object (yajl without callbacks only checks the grammar). */
static bool json_object_ok(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", text[i]))
        i++;
    if (i == len || text[i] != '{')
        return false;
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    if (!h)
        return false;
    bool ok = yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
              yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

kura_status policy_check(const char *policy)
{
    if (!policy)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at 'policy' "
                        "failed to satisfy constraint: Member must not be null");
    size_t n = strlen(policy);
    if (n > POLICY_MAX_BYTES)
        return kura_err(KURA_E_INVALID, "Resource-based policy document size (%zu bytes) "
                        "exceeds the maximum of 20 KB (%d bytes)", n, POLICY_MAX_BYTES);
    if (!json_object_ok(policy, n))
        return kura_err(KURA_E_INVALID, "Invalid policy document: the resource-based policy "
                        "must be a JSON object");
    return KURA_OK;
}

/* t's policy set to a copy of `policy` with the next revision id; false: out of memory (t
 * unchanged). tables_mu held, or t not yet listed. */
static bool policy_set(kura_table *t, const char *policy)
{
    char *copy = strdup(policy);
    if (!copy)
        return false;
    uint64_t rev = now_ms();
    free(t->policy);
    t->policy = copy;
    t->policy_rev = rev > t->policy_rev ? rev : t->policy_rev + 1;
    return true;
}

bool policy_set_new(kura_table *t, const char *policy)
{
    return policy_set(t, policy);
}

/* ExpectedRevisionId against the table's policy (tables_mu held): DynamoDB's
 * PolicyNotFoundException when it does not match. */
static kura_status expect(const kura_table *t, const char *arn, const char *expected)
{
    char cur[24];
    snprintf(cur, sizeof cur, "%" PRIu64, t->policy_rev);
    if (!expected || (t->policy ? !strcmp(expected, cur) : !strcmp(expected, NO_POLICY)))
        return KURA_OK;
    if (!t->policy)
        return kura_err(KURA_E_POLICY_NOT_FOUND, "Resource-based policy not found for the "
                        "provided ResourceArn: %s", arn);
    return kura_err(KURA_E_POLICY_NOT_FOUND, "Resource-based policy not found for the provided "
                    "ResourceArn: Requested update for policy with revision id %s, but the "
                    "policy associated to target resource %s has revision id %s.",
                    expected, arn, cur);
}

static kura_status rev_out(uint64_t rev, char **out)
{
    if (asprintf(out, "%" PRIu64, rev) < 0) {
        *out = NULL;
        return kura_err(KURA_E_NOMEM, "resource policy: out of memory");
    }
    return KURA_OK;
}

kura_status arn_put_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn, const char *policy,
                                     const char *expected_revision_id, char **revision_id_out)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    if ((s = policy_check(policy)) != KURA_OK) {
        table_release(t);
        return s;
    }
    kmutex_lock(&db->tables_mu);
    s = expect(t, resource_arn, expected_revision_id);
    if (s == KURA_OK && !(t->policy && !strcmp(t->policy, policy))) {
        char *old = t->policy;
        uint64_t old_rev = t->policy_rev;
        t->policy = NULL; /* kept for the undo */
        if (!policy_set(t, policy)) {
            t->policy = old;
            s = kura_err(KURA_E_NOMEM, "PutResourcePolicy: out of memory");
        } else if ((s = def_write(db, t, false)) != KURA_OK) {
            free(t->policy);
            t->policy = old;
            t->policy_rev = old_rev;
        } else {
            free(old);
        }
    }
    uint64_t rev = t->policy_rev;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    return s == KURA_OK ? rev_out(rev, revision_id_out) : s;
}

kura_status arn_get_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn, char **policy_out,
                                     char **revision_id_out)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    char *policy = NULL;
    kmutex_lock(&db->tables_mu);
    uint64_t rev = t->policy_rev;
    if (!t->policy)
        s = expect(t, resource_arn, "");
    else if (!(policy = strdup(t->policy)))
        s = kura_err(KURA_E_NOMEM, "GetResourcePolicy: out of memory");
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    if (s == KURA_OK && (s = rev_out(rev, revision_id_out)) == KURA_OK)
        *policy_out = policy;
    else
        free(policy);
    return s;
}

kura_status arn_delete_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                        const char *expected_revision_id,
                                        char **revision_id_out)
{
    kura_table *t;
    kura_status s = arn_table_acquire(db, sc, resource_arn, &t);
    if (s != KURA_OK)
        return s;
    kmutex_lock(&db->tables_mu);
    char *old = t->policy;
    uint64_t rev = t->policy_rev;
    /* NO_POLICY names no policy to delete: any expected id needs a policy */
    if (expected_revision_id && !strcmp(expected_revision_id, NO_POLICY))
        expected_revision_id = "";
    s = expect(t, resource_arn, expected_revision_id);
    if (s == KURA_OK && old) {
        t->policy = NULL;
        if ((s = def_write(db, t, false)) != KURA_OK)
            t->policy = old;
        else
            free(old);
    }
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    if (s != KURA_OK)
        return s;
    *revision_id_out = NULL;
    return old ? rev_out(rev, revision_id_out) : KURA_OK;
}

kura_status kura_put_resource_policy(kura_db *db, const char *resource_arn, const char *policy,
                                     const char *expected_revision_id, char **revision_id_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_put_resource_policy(db, &sc, resource_arn, policy, expected_revision_id, revision_id_out);
}

kura_status kura_get_resource_policy(kura_db *db, const char *resource_arn, char **policy_out,
                                     char **revision_id_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_get_resource_policy(db, &sc, resource_arn, policy_out, revision_id_out);
}

kura_status kura_delete_resource_policy(kura_db *db, const char *resource_arn,
                                        const char *expected_revision_id,
                                        char **revision_id_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_delete_resource_policy(db, &sc, resource_arn, expected_revision_id, revision_id_out);
}
