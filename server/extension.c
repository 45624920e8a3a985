/*
 * extension.c - This file contains kura-server's extension endpoints: what kura serves beside
 * DynamoDB's API, under the path /kura/ (docs/server.md, "Extensions"):
 *
 *   GET  /kura/indexes[?TableName=T[&IndexName=I]]   every index's lag (index_admin.h)
 *   POST /kura/index-wait  {"TableName","IndexName"?,"TimeoutMillis"?}   wait, then {}
 *   POST /kura/rebuild-index  {"TableName","IndexName"}   rebuild the index, then {}
 *   POST /kura/check       {"TableName"?}   the integrity check (check_admin.h)
 *   GET  /kura/heat[?window=N&table=T]        the heat report's JSON (heat_http.c)
 *   GET  /kura/heat.html[?window=N&table=T]   the heat page (heat_page.h)
 *
 * Why a path and no X-Amz-Target: an AWS SDK sends every DynamoDB operation as POST with
 * X-Amz-Target DynamoDB_20120810.<Operation> to the endpoint's path ("/"), so a request to
 * /kura/... without that header can never be one of its calls, and nothing in the
 * DynamoDB_20120810 namespace changes meaning (an unknown operation stays
 * UnknownOperationException). A request that does carry X-Amz-Target is DynamoDB's, whatever
 * its path (http.c does not look at a POST's path, as DynamoDB Local does not).
 *
 * An extension request goes through the same checks as any other except the method and the
 * content type (curl -d sends a form's type): the 16 MB limit and, with --auth, the SigV4
 * signature over its method, path, query and body. Its answer carries the usual headers
 * (respond.c) and errors have DynamoDB's shape.
 *
 * A wait runs on the serving thread, which serves its other connections only after it: the
 * extension is for tests and tools, which wait for milliseconds, and a serving thread never
 * waits on anything that needs a serving thread (an index's applier is a thread of its own).
 * A rebuild too runs on the serving thread and answers once the rebuilt index has replaced
 * the old one (a scan of the table: seconds for a large one); the other serving threads go on,
 * and GET /kura/indexes shows "Rebuilding": true meanwhile. A shutdown waits for it.
 * A check reads the whole database, seconds or more: it runs on a thread of its own
 * (srv_ext_slow, http.c), one check at a time, while the serving threads go on serving.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/check_admin.h"
#include "server/index_admin.h"
#include "server/server.h"

#define EXT_PREFIX "/kura/"

bool srv_ext_match(struct MHD_Connection *conn, const char *url)
{
    return strncmp(url, EXT_PREFIX, sizeof EXT_PREFIX - 1) == 0 &&
           !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target");
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, const char *method,
                              const char *url, const char *message, const char *reqid, bool close)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s %.200s: %s", method, url, message);
    return srv_respond_error(conn, status, "UnknownOperationException", msg, reqid, close);
}

#define EXT_CHECK "/kura/check"

bool srv_ext_slow(const char *method, const char *url)
{
    return strcmp(url, EXT_CHECK) == 0 && strcmp(method, MHD_HTTP_METHOD_POST) == 0;
}

void srv_ext_run_slow(kura_db *db, const char *url, const char *body, size_t len,
                      ixadm_reply *rep)
{
    (void)url; /* the only one: EXT_CHECK */
    chkadm_json(db, body, len, rep);
}

enum MHD_Result srv_ext_answer(kura_db *db, struct MHD_Connection *conn, const char *method,
                               const char *url, const char *body, size_t len, const char *reqid,
                               bool close)
{
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    ixadm_reply rep;
    if (srv_heat_match(url)) return srv_heat_answer(db, conn, method, url, reqid, close);
    if (strcmp(url, "/kura/indexes") == 0) {
        if (!get)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, method, url, "this extension takes GET",
                          reqid, close);
        const char *table = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "TableName");
        const char *index = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "IndexName");
        ixadm_stats(db, table, index, &rep);
    } else if (strcmp(url, "/kura/index-wait") == 0) {
        if (!post)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, method, url, "this extension takes POST",
                          reqid, close);
        ixadm_wait_json(db, body, len, &rep);
    } else if (strcmp(url, "/kura/rebuild-index") == 0) {
        if (!post)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, method, url, "this extension takes POST",
                          reqid, close);
        ixadm_rebuild_json(db, body, len, &rep);
    } else if (strcmp(url, EXT_CHECK) == 0) { /* a POST is slow: not answered here */
        return refuse(conn, MHD_HTTP_BAD_REQUEST, method, url, "this extension takes POST",
                      reqid, close);
    } else {
        return refuse(conn, MHD_HTTP_NOT_FOUND, method, url,
                      "no such kura extension (there are GET /kura/indexes, "
                      "POST /kura/index-wait, POST /kura/rebuild-index, POST /kura/check, "
                      "GET /kura/heat and GET /kura/heat.html)",
                      reqid, close);
    }
    if (rep.status >= 500) srv_log_error(reqid, url, rep.type, rep.message);
    if (!rep.body)
        return srv_respond_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "InternalServerError",
                                 "out of memory", reqid, close);
    return srv_respond(conn, rep.status, rep.body, rep.len, free, reqid, close);
}
