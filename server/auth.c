/*
 * auth.c - This file contains the glue between libmicrohttpd and the SigV4 checks: it copies
 * the pointers of a request's headers and query arguments into a sigv4_request (no string is
 * copied: libmicrohttpd keeps them until the request completes) and runs sigv4.c's two phases.
 *
 * libmicrohttpd hands the handler a percent-decoded path and decoded query arguments; SigV4
 * re-encodes them, which gives the client's canonical form for every path an SDK sends
 * (DynamoDB's is "/"). It also finds the region a request was signed for, with or without
 * --auth (srv_auth_region).
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

typedef struct collect {
    sigv4_pair *pairs;
    size_t n, cap;
    bool nomem;
} collect;

static enum MHD_Result collect_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    collect *c = cls;
    (void)kind;
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 32;
        sigv4_pair *np = realloc(c->pairs, ncap * sizeof *np);
        if (!np) {
            c->nomem = true;
            return MHD_NO;
        }
        c->pairs = np;
        c->cap = ncap;
    }
    c->pairs[c->n].name = key ? key : "";
    c->pairs[c->n].value = value;
    c->n++;
    return MHD_YES;
}

bool srv_auth_precheck(struct MHD_Connection *conn, const char *method, const char *url,
                       const srv_config *cfg, srv_auth_req *ar, sigv4_error *err_out)
{
    collect c = {NULL, 0, 0, false};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_one, &c);
    size_t nheaders = c.n;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_one, &c);
    memset(ar, 0, sizeof *ar);
    ar->pairs = c.pairs;
    if (c.nomem) {
        err_out->type = "InternalServerError";
        strcpy(err_out->message, "out of memory");
        return false;
    }
    ar->req.method = method;
    ar->req.path = url;
    ar->req.headers = c.pairs;
    ar->req.header_count = nheaders;
    ar->req.query = c.pairs ? c.pairs + nheaders : NULL;
    ar->req.query_count = c.n - nheaders;
    return sigv4_precheck(&ar->req, cfg->auth_key, time(NULL), &ar->auth, err_out);
}

bool srv_auth_verify(srv_auth_req *ar, const void *body, size_t len, const srv_config *cfg,
                     sigv4_error *err_out)
{
    ar->req.body = body;
    ar->req.body_len = len;
    return sigv4_verify(&ar->req, &ar->auth, cfg->auth_secret, err_out);
}

bool srv_auth_region(struct MHD_Connection *conn, char *region_out, size_t cap)
{
    const char *hdr = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "X-Amz-Credential");
    return sigv4_region(hdr, arg, region_out, cap);
}

void srv_auth_free(srv_auth_req *ar)
{
    free(ar->pairs);
    ar->pairs = NULL;
}
