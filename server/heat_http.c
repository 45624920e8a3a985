/*
 * heat_http.c - This file contains how kura-server serves the heat report (server.h,
 * srv_heat_answer): GET /kura/heat answers the producer's JSON (heat_report.h) as it is, GET
 * /kura/heat.html renders the same report into the heat page (heat_page.h) at request time.
 * Both take ?window=N (seconds, 1..60, default 60) and ?table=T; errors have DynamoDB's shape
 * as the other extensions' do (extension.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/heat_page.h"
#include "server/heat_report.h"
#include "server/server.h"

#define HEAT_JSON "/kura/heat"
#define HEAT_HTML "/kura/heat.html"

bool srv_heat_match(const char *url)
{
    return strcmp(url, HEAT_JSON) == 0 || strcmp(url, HEAT_HTML) == 0;
}

static enum MHD_Result bad(struct MHD_Connection *conn, const char *type, const char *msg,
                           const char *reqid, bool close)
{
    return srv_respond_error(conn, MHD_HTTP_BAD_REQUEST, type, msg, reqid, close);
}

/* ?window=N: 1..HEAT_MAX_WINDOW_S, digits only; absent: the default. */
static bool parse_window(const char *arg, unsigned *window_out)
{
    *window_out = HEAT_DEFAULT_WINDOW_S;
    if (!arg) return true;
    if (!*arg || strspn(arg, "0123456789") != strlen(arg) || strlen(arg) > 4) return false;
    unsigned long w = strtoul(arg, NULL, 10);
    *window_out = (unsigned)w;
    return w >= 1 && w <= HEAT_MAX_WINDOW_S;
}

/* The producer failed: its status as DynamoDB's error. */
static enum MHD_Result report_error(struct MHD_Connection *conn, kura_status s, const char *url,
                                    const char *reqid, bool close)
{
    const char *msg = kura_last_error();
    if (!msg || !*msg) msg = kura_status_str(s);
    if (s == KURA_E_RESOURCE_NOT_FOUND)
        return bad(conn, "ResourceNotFoundException", msg, reqid, close);
    if (s == KURA_E_INVALID) return bad(conn, "ValidationException", msg, reqid, close);
    srv_log_error(reqid, url, "InternalServerError", msg);
    return srv_respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError", msg,
                             reqid, close);
}

/* The page for the report `json` (owned: freed here). */
static enum MHD_Result answer_page(struct MHD_Connection *conn, char *json, size_t len,
                                   const char *reqid, bool close)
{
    kbuf html = KBUF_INIT;
    char err[200];
    kura_status s = heat_page_render(json, len, &html, err, sizeof err);
    free(json);
    if (s != KURA_OK) {
        kbuf_free(&html);
        const char *msg = s == KURA_E_NOMEM ? "out of memory" : err;
        srv_log_error(reqid, HEAT_HTML, "InternalServerError", msg);
        return srv_respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError",
                                 msg, reqid, close);
    }
    return srv_respond_as(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)html.data,
                          html.len, free, reqid, close);
}

enum MHD_Result srv_heat_answer(kura_db *db, struct MHD_Connection *conn, const char *method,
                                const char *url, const char *reqid, bool close)
{
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s %s: this extension takes GET", method, url);
        return srv_respond_error(conn, MHD_HTTP_BAD_REQUEST, "UnknownOperationException", msg,
                                 reqid, close);
    }
    unsigned window;
    const char *w = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "window");
    const char *table = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "table");
    if (!parse_window(w, &window))
        return bad(conn, "ValidationException",
                   "window must be a whole number of seconds from 1 to 60", reqid, close);
    if (table && !*table) table = NULL;
    char *json = NULL;
    size_t len = 0;
    kura_status s = heat_report_json(db, table, window, &json, &len);
    if (s != KURA_OK) return report_error(conn, s, url, reqid, close);
    if (strcmp(url, HEAT_HTML) == 0) return answer_page(conn, json, len, reqid, close);
    return srv_respond(conn, MHD_HTTP_OK, json, len, free, reqid, close);
}
