/*
 * heat_report_stub.c - This file contains the PLACEHOLDER producer of the heat report
 * (heat_report.h): a fixed example report, the one of docs/server.md's contract, so that the
 * heat page, `kura heat` and their tests build and run before the engine's read-out of the
 * capacity accounting exists. The lead replaces this file with the real producer when the
 * branches merge (issue 24); nothing else calls it.
 *
 * The example: a table "Orders" (on-demand) with no hot key, and its GSI "StatusIndex"
 * whose key ACTIVE takes 96% of a partition's write limit and was throttled; its timeline
 * ends at the current second so that the page's charts look live. `table` and `window_s`
 * are checked as the real producer checks them but do not change the example.
 */
#include "server/heat_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"

static bool put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

/* The timeline of window_s seconds ending now: steady reads, writes ramping to the limit. */
static bool put_timeline(kbuf *b, time_t now, unsigned window_s, bool hot)
{
    char e[200];
    bool ok = put(b, "\"timeline\":[");
    for (unsigned i = 0; ok && i < window_s; i++) {
        double w = hot ? 900.0 + (i % 10) * 11.0 : 0.0;
        unsigned thr = hot && i % 10 >= 8 ? 17 : 0;
        snprintf(e, sizeof e,
                 "%s{\"t\":%lld,\"read\":%.1f,\"write\":%.1f,\"throttled_reads\":0,"
                 "\"throttled_writes\":%u}",
                 i ? "," : "", (long long)(now - (time_t)window_s + 1 + i), hot ? 0.0 : 12.5, w,
                 thr);
        ok = put(b, e);
    }
    return ok && put(b, "],");
}

static const char orders_rest[] =
    "\"hot_keys\":[],\"hot_items\":[],\"throttled_keys\":[],\"collections\":[],\"verdicts\":[]}";

static const char status_rest[] =
    "\"hot_keys\":[{\"key\":{\"status\":{\"S\":\"ACTIVE\"}},\"read\":0.0,\"write\":960.0,"
    "\"read_share\":0.0,\"write_share\":0.96,\"provisioned_share\":null,\"error\":0.0,"
    "\"throttled\":1204},{\"key\":{\"status\":{\"S\":\"SHIPPED\"}},\"read\":0.0,\"write\":"
    "35.0,\"read_share\":0.0,\"write_share\":0.035,\"provisioned_share\":null,\"error\":0.0,"
    "\"throttled\":0}],\"hot_items\":[],\"throttled_keys\":[{\"key\":{\"status\":{\"S\":"
    "\"ACTIVE\"}},\"throttled\":1204}],\"collections\":[],\"verdicts\":[\"GSI StatusIndex: "
    "key ACTIVE takes 96% of its partition's write limit; 1,204 writes throttled in the last "
    "minute\"]}";

kura_status heat_report_json(kura_db *db, const char *table, unsigned window_s, char **json_out,
                             size_t *len_out)
{
    (void)db;
    (void)table;
    if (window_s < 1 || window_s > HEAT_MAX_WINDOW_S) return KURA_E_INVALID;
    time_t now = time(NULL);
    char head[256];
    snprintf(head, sizeof head,
             "{\"generated_at_ms\":%lld,\"window_seconds\":%u,\"throttling\":true,"
             "\"key_limits\":{\"read\":3000,\"write\":1000},\"targets\":[",
             (long long)now * 1000, window_s);
    kbuf b = KBUF_INIT;
    bool ok =
        put(&b, head) &&
        put(&b, "{\"table\":\"Orders\",\"index\":null,\"kind\":\"table\",\"billing_mode\":"
                "\"PAY_PER_REQUEST\",\"provisioned\":null,\"rate\":{\"read\":12.5,\"write\":"
                "0.0},\"peak\":{\"read\":20.0,\"write\":0.0},\"throttled\":{\"reads\":0,"
                "\"writes\":0},") &&
        put_timeline(&b, now, window_s, false) && put(&b, orders_rest) &&
        put(&b, ",{\"table\":\"Orders\",\"index\":\"StatusIndex\",\"kind\":\"gsi\","
                "\"billing_mode\":\"PAY_PER_REQUEST\",\"provisioned\":null,\"rate\":{\"read\":"
                "0.0,\"write\":930.0},\"peak\":{\"read\":0.0,\"write\":1000.0},\"throttled\":"
                "{\"reads\":0,\"writes\":1204},") &&
        put_timeline(&b, now, window_s, true) && put(&b, status_rest) && put(&b, "]}") &&
        kbuf_append(&b, "", 1);
    if (!ok) {
        kbuf_free(&b);
        return KURA_E_NOMEM;
    }
    *json_out = (char *)b.data;
    *len_out = b.len - 1;
    return KURA_OK;
}
