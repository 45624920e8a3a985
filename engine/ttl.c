/*
 * ttl.c - This file contains the Time to Live setting of a table: UpdateTimeToLive,
 * DescribeTimeToLive, the clock, and what counts as expired. The sweeper that acts on the
 * setting is engine/ttl_sweep.c.
 *
 * The setting is three fields of the table's definition (engine/table.h: ttl_attr,
 * ttl_enabled, ttl_changed; docs/format/catalog.md, version 3), changed under tables_mu and
 * made durable with the definition before the call returns, like UpdateTable's settings.
 * Enabling shows ENABLED at once, as DynamoDB answers right after UpdateTimeToLive (suites
 * checked against DynamoDB, e.g. ScyllaDB Alternator's test_ttl.py, expect exactly that; the
 * model's ENABLING is not what DynamoDB shows then). Disabling shows DISABLING for
 * kura_options.ttl_transition_ms after the change, then DISABLED. The sweeper only looks at
 * ttl_enabled, so it deletes from the moment TTL is enabled and stops the moment it is
 * disabled.
 */
#include "engine/ttl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/table_int.h"
#include "util/status.h"

enum { TTL_ATTR_MAX = 255, TTL_DEFAULT_TRANSITION_MS = 1000 };
#define TTL_DEFAULT_CHANGE_INTERVAL_MS (3600u * 1000u)

int64_t ttl_now(const kura_db *db)
{
    if (db->opts.ttl_clock)
        return db->opts.ttl_clock(db->opts.ttl_clock_arg);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec;
}

/* Now with the real clock's milliseconds, for the times of changes (an injected clock has
 * whole seconds). */
static double now_precise(const kura_db *db)
{
    if (db->opts.ttl_clock)
        return (double)db->opts.ttl_clock(db->opts.ttl_clock_arg);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

static void num_of_int(int64_t v, kura_num *out)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    memset(out, 0, sizeof *out);
    num_parse(buf, (size_t)n, out); /* an int64 always parses */
}

void ttl_window_at(int64_t now, ttl_window *w)
{
    num_of_int(now, &w->now);
    num_of_int(now - TTL_MAX_AGE_S, &w->oldest);
}

kura_status ttl_expired_encoded(const uint8_t *p, size_t len, const char *attr, size_t attr_len,
                                const ttl_window *w, bool *expired_out, kura_num *when_out)
{
    const uint8_t *vp;
    size_t vlen;
    kura_status s = val_encoded_attr(p, len, attr, attr_len, &vp, &vlen);
    if (s != KURA_OK)
        return s;
    *expired_out = false;
    if (!vp || *vp != KURA_N)
        return KURA_OK;
    kura_value v = {0};
    if ((s = val_decode(vp, vlen, &v)) != KURA_OK) /* a number: nothing allocated */
        return s;
    *expired_out = num_cmp(&v.u.num, &w->now) < 0 && num_cmp(&v.u.num, &w->oldest) >= 0;
    if (*expired_out && when_out)
        *when_out = v.u.num;
    val_clear(&v);
    return KURA_OK;
}

/* ---- UpdateTimeToLive, DescribeTimeToLive ---------------------------------------------- */

static kura_status check_spec(const kura_update_time_to_live_req *r)
{
    if (!r->attribute_name)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                        "'timeToLiveSpecification.attributeName' failed to "
                                        "satisfy constraint: Member must not be null");
    size_t n = strlen(r->attribute_name);
    if (n < 1 || n > TTL_ATTR_MAX)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value '%s' at "
                        "'timeToLiveSpecification.attributeName' failed to satisfy "
                        "constraint: Member must have length %s", r->attribute_name,
                        n < 1 ? "greater than or equal to 1" : "less than or equal to 255");
    return KURA_OK;
}

/* DynamoDB's refusals of a change to t's setting at `now` (tables_mu held). */
static kura_status check_change(const kura_db *db, const kura_table *t,
                                const kura_update_time_to_live_req *r, double now)
{
    uint32_t iv = db->opts.ttl_change_interval_ms ? db->opts.ttl_change_interval_ms
                                                  : TTL_DEFAULT_CHANGE_INTERVAL_MS;
    bool same = t->ttl_attr && !strcmp(t->ttl_attr, r->attribute_name);
    if (r->enabled && t->ttl_enabled)
        return same ? kura_err(KURA_E_INVALID, "TimeToLive is already enabled")
                    : kura_err(KURA_E_INVALID, "TimeToLive is active on a different "
                               "AttributeName: current AttributeName is %s", t->ttl_attr);
    if (!r->enabled && !t->ttl_enabled)
        return kura_err(KURA_E_INVALID, "TimeToLive is already disabled");
    if (!r->enabled && !same)
        return kura_err(KURA_E_INVALID, "TimeToLive is active on a different AttributeName: "
                        "current AttributeName is %s", t->ttl_attr);
    if (t->ttl_attr && (now - t->ttl_changed) * 1000.0 < (double)iv)
        return kura_err(KURA_E_INVALID,
                        "Time to live has been modified multiple times within a fixed interval");
    return KURA_OK;
}

kura_status kura_update_time_to_live(kura_db *db, const kura_update_time_to_live_req *req)
{
    kura_status s = table_name_check(req->table_name, "tableName");
    if (s != KURA_OK || (s = check_spec(req)) != KURA_OK)
        return s;
    kura_table *t;
    if ((s = table_acquire_named(db, req->table_name, &t)) != KURA_OK)
        return s;
    double now = now_precise(db);
    kmutex_lock(&db->tables_mu);
    if ((s = check_change(db, t, req, now)) == KURA_OK) {
        char *attr = strdup(req->attribute_name);
        if (!attr) {
            s = kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
        } else {
            char *old_attr = t->ttl_attr;
            bool old_on = t->ttl_enabled;
            double old_at = t->ttl_changed;
            t->ttl_attr = attr;
            t->ttl_enabled = req->enabled;
            t->ttl_changed = now;
            if ((s = def_write(db, t, false)) != KURA_OK) {
                t->ttl_attr = old_attr;
                t->ttl_enabled = old_on;
                t->ttl_changed = old_at;
                old_attr = attr;
            }
            free(old_attr);
        }
    }
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    return s;
}

kura_status kura_describe_time_to_live(kura_db *db, const char *table_name,
                                       kura_time_to_live_description *desc_out)
{
    kura_status s = table_name_check(table_name, "tableName");
    if (s != KURA_OK)
        return s;
    kura_table *t;
    if ((s = table_acquire_named(db, table_name, &t)) != KURA_OK)
        return s;
    uint32_t tr = db->opts.ttl_transition_ms ? db->opts.ttl_transition_ms
                                             : TTL_DEFAULT_TRANSITION_MS;
    double now = now_precise(db);
    kura_time_to_live_description d = {.time_to_live_status = "DISABLED"};
    kmutex_lock(&db->tables_mu);
    bool moving = t->ttl_attr && (now - t->ttl_changed) * 1000.0 < (double)tr;
    if (t->ttl_enabled)
        d.time_to_live_status = "ENABLED";
    else if (moving)
        d.time_to_live_status = "DISABLING";
    if ((t->ttl_enabled || moving) && !(d.attribute_name = strdup(t->ttl_attr)))
        s = kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    if (s == KURA_OK)
        *desc_out = d;
    return s;
}

void kura_time_to_live_description_free(kura_time_to_live_description *d)
{
    if (!d)
        return;
    free(d->attribute_name);
    d->attribute_name = NULL;
}
