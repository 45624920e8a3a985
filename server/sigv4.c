/*
 * sigv4.c - This file contains AWS Signature Version 4 verification: parsing the
 * Authorization header (or a presigned request's query arguments, SigV4 query
 * authentication), the checks DynamoDB makes before the signature (with its messages),
 * and the canonical request / string to sign / signing key / signature of the SigV4 spec
 * (docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html).
 *
 * The checks follow the order and the messages DynamoDB uses (copied by dynalite): missing
 * token, incomplete header, date format, expiry, Host signed, algorithm, credential shape,
 * credential scope, access key, signature. The computations (canonical request, signing key,
 * signature) are in sigv4_canon.c; CRYPTO_memcmp() makes the compares constant-time.
 */
#include "server/sigv4.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>

#include <openssl/crypto.h>

#define ALGORITHM "AWS4-HMAC-SHA256"
#define SERVICE "dynamodb"
#define TERMINATOR "aws4_request"

static const char T_MISSING[] = "MissingAuthenticationTokenException";
static const char T_INCOMPLETE[] = "IncompleteSignatureException";
static const char T_INVALID[] = "InvalidSignatureException";
static const char T_UNRECOGNIZED[] = "UnrecognizedClientException";

static const char MSG_MISMATCH[] =
    "The request signature we calculated does not match the signature you provided. Check "
    "your AWS Secret Access Key and signing method. Consult the service documentation for "
    "details.";

static bool fail(sigv4_error *err, const char *type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(sigv4_error *err, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->type = type;
    return false;
}

/* The first header named `name` (case-insensitive), or NULL. */
static const char *header(const sigv4_request *req, const char *name, size_t name_len)
{
    for (size_t i = 0; i < req->header_count; i++)
        if (strlen(req->headers[i].name) == name_len &&
            strncasecmp(req->headers[i].name, name, name_len) == 0)
            return req->headers[i].value ? req->headers[i].value : "";
    return NULL;
}

static bool has_query(const sigv4_request *req, const char *name)
{
    for (size_t i = 0; i < req->query_count; i++)
        if (strcmp(req->query[i].name, name) == 0) return true;
    return false;
}

/* The value of the first query argument named `name` ("" without '='), or NULL. */
static const char *query_value(const sigv4_request *req, const char *name)
{
    for (size_t i = 0; i < req->query_count; i++)
        if (strcmp(req->query[i].name, name) == 0)
            return req->query[i].value ? req->query[i].value : "";
    return NULL;
}

/* ---- Parsing the Authorization header and the date ------------------------------------- */

/* Finds "Key=value" among the header's comma/space separated parameters. */
static void auth_param(const char *params, const char *key, const char **val_out, size_t *len_out)
{
    size_t klen = strlen(key);
    const char *p = params;
    while (*p) {
        while (*p == ',' || *p == ' ')
            p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ' ')
            p++;
        if ((size_t)(p - start) > klen && strncmp(start, key, klen) == 0 && start[klen] == '=') {
            *val_out = start + klen + 1;
            *len_out = (size_t)(p - start) - klen - 1;
            return;
        }
    }
    *val_out = NULL;
    *len_out = 0;
}

/* "YYYYMMDDTHHMMSSZ" -> time; false if malformed. */
static bool parse_amz_date(const char *s, time_t *t_out)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z') return false;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !isdigit((unsigned char)s[i])) return false;
    const char *end = strptime(s, "%Y%m%dT%H%M%SZ", &tm);
    if (!end || *end) return false;
    *t_out = timegm(&tm);
    return true;
}

static void format_amz_date(time_t t, char out[17])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* The request's time from X-Amz-Date, else from Date (an HTTP date), as an ISO-8601 basic
 * string in auth->amz_date. */
static bool request_date(const sigv4_request *req, time_t *t_out, sigv4_auth *auth,
                         sigv4_error *err)
{
    const char *xdate = header(req, "x-amz-date", 10);
    if (xdate) {
        if (!parse_amz_date(xdate, t_out))
            return fail(err, T_INCOMPLETE,
                        "Date must be in ISO-8601 'basic format'. Got '%.200s'. See "
                        "http://en.wikipedia.org/wiki/ISO_8601",
                        xdate);
        memcpy(auth->amz_date, xdate, 17);
        return true;
    }
    const char *date = header(req, "date", 4);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (!end || *end)
        return fail(err, T_INCOMPLETE,
                    "Date must be in ISO-8601 'basic format'. Got '%.200s'. See "
                    "http://en.wikipedia.org/wiki/ISO_8601",
                    date);
    *t_out = timegm(&tm);
    format_amz_date(*t_out, auth->amz_date);
    return true;
}

static bool check_skew(time_t t, time_t now, const sigv4_auth *auth, sigv4_error *err)
{
    char now_s[17], bound_s[17];
    format_amz_date(now, now_s);
    if (t < now - SIGV4_MAX_SKEW_SECONDS) {
        format_amz_date(now - SIGV4_MAX_SKEW_SECONDS, bound_s);
        return fail(err, T_INVALID, "Signature expired: %s is now earlier than %s (%s - 15 min.)",
                    auth->amz_date, bound_s, now_s);
    }
    if (t > now + SIGV4_MAX_SKEW_SECONDS) {
        format_amz_date(now + SIGV4_MAX_SKEW_SECONDS, bound_s);
        return fail(err, T_INVALID,
                    "Signature not yet current: %s is still later than %s (%s + 15 min.)",
                    auth->amz_date, bound_s, now_s);
    }
    return true;
}

/* True if the ';'-separated list contains `name` (case-insensitive). */
static bool list_has(const char *list, size_t len, const char *name)
{
    size_t nlen = strlen(name), i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && list[j] != ';')
            j++;
        if (j - i == nlen && strncasecmp(list + i, name, nlen) == 0) return true;
        i = j + 1;
    }
    return false;
}

/* The four checks of the credential scope, reported together as DynamoDB does. */
static bool check_scope(const char *parts[5], const size_t lens[5], const sigv4_auth *auth,
                        sigv4_error *err)
{
    char msg[sizeof err->message] = "";
    size_t n = 0;
    bool region_ok = lens[2] > 0;
    for (size_t i = 0; i < lens[2]; i++) {
        char c = parts[2][i];
        region_ok &= (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    }
    if (!region_ok)
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Credential should be scoped to a valid region, not '%.*s'. ",
                              (int)lens[2], parts[2]);
    if (lens[3] != strlen(SERVICE) || memcmp(parts[3], SERVICE, lens[3]) != 0)
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Credential should be scoped to correct service: '" SERVICE "'. ");
    if (n < sizeof msg &&
        (lens[4] != strlen(TERMINATOR) || memcmp(parts[4], TERMINATOR, lens[4]) != 0))
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Credential should be scoped with a valid terminator: '" TERMINATOR
                              "', not '%.*s'. ",
                              (int)lens[4], parts[4]);
    if (n < sizeof msg && (lens[1] != 8 || memcmp(parts[1], auth->amz_date, 8) != 0))
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Date in Credential scope does not match YYYYMMDD from ISO-8601 "
                              "version of date from HTTP: '%.*s' != '%.8s', from '%s'.",
                              (int)lens[1], parts[1], auth->amz_date, auth->amz_date);
    if (n == 0) return true;
    if (n < sizeof msg && msg[n - 1] == ' ') msg[n - 1] = '\0';
    return fail(err, T_INVALID, "%s", msg);
}

/* Splits the credential (trailing slashes ignored) into its five parts. */
static bool check_credential(sigv4_auth *auth, const char *access_key, sigv4_error *err)
{
    size_t len = auth->credential_len;
    while (len > 0 && auth->credential[len - 1] == '/')
        len--;
    const char *parts[5];
    size_t lens[5], n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && auth->credential[i] != '/') continue;
        if (n < 5) {
            parts[n] = auth->credential + start;
            lens[n] = i - start;
        }
        n++;
        start = i + 1;
    }
    if (n != 5)
        return fail(err, T_INCOMPLETE,
                    "Credential must have exactly 5 slash-delimited elements, e.g. "
                    "keyid/date/region/service/term, got '%.*s'",
                    (int)(auth->credential_len > 400 ? 400 : auth->credential_len),
                    auth->credential);
    if (!check_scope(parts, lens, auth, err)) return false;
    if (lens[0] != strlen(access_key) || CRYPTO_memcmp(parts[0], access_key, lens[0]) != 0)
        return fail(err, T_UNRECOGNIZED, "The security token included in the request is invalid.");
    auth->scope_off = lens[0] + 1;
    auth->credential_len = len;
    return true;
}

/* The checks after the date's: Host signed, the algorithm, the credential. */
static bool check_rest(sigv4_auth *a, const char *alg, size_t alg_len, const char *access_key,
                       sigv4_error *err)
{
    if (!list_has(a->signed_headers, a->signed_headers_len, "host"))
        return fail(err, T_INVALID, "'Host' must be a 'SignedHeader' in the AWS Authorization.");
    if (alg_len != strlen(ALGORITHM) || strncmp(alg, ALGORITHM, alg_len) != 0)
        return fail(err, T_INCOMPLETE,
                    "Unsupported AWS 'algorithm': '%.*s' (only " ALGORITHM " for now). ",
                    (int)(alg_len > 200 ? 200 : alg_len), alg);
    return check_credential(a, access_key, err);
}

/* A presigned request's X-Amz-Expires: past it (from X-Amz-Date), the signature has expired;
 * without it, the 15 minutes of a signed request apply. */
static bool check_expires(const sigv4_request *req, time_t t, time_t now, const sigv4_auth *a,
                          sigv4_error *err)
{
    const char *v = query_value(req, "X-Amz-Expires");
    if (!v) return check_skew(t, now, a, err);
    long secs = 0;
    for (const char *p = v; *p && secs <= SIGV4_MAX_EXPIRES; p++)
        secs = isdigit((unsigned char)*p) ? secs * 10 + (*p - '0') : SIGV4_MAX_EXPIRES + 1;
    if (secs < 1 || secs > SIGV4_MAX_EXPIRES)
        return fail(err, T_INCOMPLETE,
                    "X-Amz-Expires must be a whole number of seconds from 1 to %d, not '%.40s'. "
                    "Re-examine the query-string parameters.",
                    SIGV4_MAX_EXPIRES, v);
    if (t > now + SIGV4_MAX_SKEW_SECONDS) return check_skew(t, now, a, err); /* not yet current */
    if (now <= t + secs) return true;
    char now_s[17], bound_s[17];
    format_amz_date(now, now_s);
    format_amz_date(now - secs, bound_s);
    return fail(err, T_INVALID, "Signature expired: %s is now earlier than %s (%s - %ld sec.)",
                a->amz_date, bound_s, now_s, secs);
}

/* sigv4_precheck for a presigned request (its arguments in the query string). */
static bool query_precheck(const sigv4_request *req, const char *access_key, time_t now,
                           sigv4_auth *auth_out, sigv4_error *err)
{
    static const char *const names[5] = {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature",
                                         "X-Amz-SignedHeaders", "X-Amz-Date"};
    const char *v[5];
    char msg[sizeof err->message] = "";
    size_t n = 0;
    for (int i = 0; i < 5; i++)
        if (!(v[i] = query_value(req, names[i])) || !*v[i])
            n += (size_t)snprintf(msg + n, sizeof msg - n,
                                  "AWS query-string parameters must include '%s'. ", names[i]);
    if (n) return fail(err, T_INCOMPLETE, "%sRe-examine the query-string parameters.", msg);
    sigv4_auth a;
    memset(&a, 0, sizeof a);
    a.query = true;
    a.credential = v[1], a.credential_len = strlen(v[1]);
    a.signature = v[2], a.signature_len = strlen(v[2]);
    a.signed_headers = v[3], a.signed_headers_len = strlen(v[3]);
    time_t t = 0;
    if (!parse_amz_date(v[4], &t))
        return fail(err, T_INCOMPLETE,
                    "Date must be in ISO-8601 'basic format'. Got '%.200s'. See "
                    "http://en.wikipedia.org/wiki/ISO_8601",
                    v[4]);
    memcpy(a.amz_date, v[4], 17);
    if (!check_expires(req, t, now, &a, err) ||
        !check_rest(&a, v[0], strlen(v[0]), access_key, err))
        return false;
    *auth_out = a;
    return true;
}

bool sigv4_precheck(const sigv4_request *req, const char *access_key, time_t now,
                    sigv4_auth *auth_out, sigv4_error *err_out)
{
    const char *h = header(req, "authorization", 13);
    bool query_auth = has_query(req, "X-Amz-Algorithm");
    if (h && query_auth)
        return fail(err_out, T_INVALID,
                    "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' "
                    "as HTTP header.");
    if (query_auth) return query_precheck(req, access_key, now, auth_out, err_out);
    while (h && *h == ' ')
        h++;
    if (!h || strncmp(h, "AWS4-", 5) != 0)
        return fail(err_out, T_MISSING, "Request is missing Authentication Token");

    sigv4_auth a;
    memset(&a, 0, sizeof a);
    const char *params = strchr(h, ' ');
    params = params ? params : h + strlen(h);
    auth_param(params, "Credential", &a.credential, &a.credential_len);
    auth_param(params, "Signature", &a.signature, &a.signature_len);
    auth_param(params, "SignedHeaders", &a.signed_headers, &a.signed_headers_len);
    char msg[sizeof err_out->message] = "";
    size_t n = 0;
    if (!a.credential_len)
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Authorization header requires 'Credential' parameter. ");
    if (!a.signature_len)
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Authorization header requires 'Signature' parameter. ");
    if (!a.signed_headers_len)
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Authorization header requires 'SignedHeaders' parameter. ");
    if (!header(req, "x-amz-date", 10) && !header(req, "date", 4))
        n += (size_t)snprintf(msg + n, sizeof msg - n,
                              "Authorization header requires existence of either a 'X-Amz-Date' "
                              "or a 'Date' header. ");
    if (n) return fail(err_out, T_INCOMPLETE, "%sAuthorization=%.600s", msg, h);

    time_t t = 0;
    if (!request_date(req, &t, &a, err_out) || !check_skew(t, now, &a, err_out) ||
        !check_rest(&a, h, (size_t)(params - h), access_key, err_out))
        return false;
    *auth_out = a;
    return true;
}

/* ---- The signature ------------------------------------------------------------------------ */

/* The scope's parts as NUL-terminated strings, for the signing key. */
static void scope_parts(const sigv4_auth *a, char date[9], char region[64], char service[64])
{
    const char *s = a->credential + a->scope_off, *end = a->credential + a->credential_len;
    const char *r = memchr(s, '/', (size_t)(end - s));
    const char *v = memchr(r + 1, '/', (size_t)(end - r - 1));
    const char *t = memchr(v + 1, '/', (size_t)(end - v - 1));
    snprintf(date, 9, "%.*s", (int)(r - s), s);
    snprintf(region, 64, "%.*s", (int)(v - r - 1), r + 1);
    snprintf(service, 64, "%.*s", (int)(t - v - 1), v + 1);
}

/* The canonical request of `req` as signed: a presigned request's without X-Amz-Signature.
 * Malloc'ed, NULL when out of memory. */
static char *signed_canonical_request(const sigv4_request *req, const sigv4_auth *auth,
                                      const char *payload_hash)
{
    if (!auth->query)
        return sigv4_canonical_request(req, auth->signed_headers, auth->signed_headers_len,
                                       payload_hash);
    sigv4_pair *q = malloc((req->query_count + 1) * sizeof *q);
    if (!q) return NULL;
    sigv4_request r = *req;
    r.query = q;
    r.query_count = 0;
    for (size_t i = 0; i < req->query_count; i++)
        if (strcmp(req->query[i].name, "X-Amz-Signature") != 0) q[r.query_count++] = req->query[i];
    char *creq =
        sigv4_canonical_request(&r, auth->signed_headers, auth->signed_headers_len, payload_hash);
    free(q);
    return creq;
}

bool sigv4_verify(const sigv4_request *req, const sigv4_auth *auth, const char *secret,
                  sigv4_error *err_out)
{
    char body_hash[65];
    sigv4_sha256_hex(req->body, req->body_len, body_hash);
    const char *payload_hash = header(req, "x-amz-content-sha256", 20);
    if (payload_hash && strcasecmp(payload_hash, body_hash) != 0)
        return fail(err_out, T_INVALID, "%s", MSG_MISMATCH);
    char *creq = signed_canonical_request(req, auth, payload_hash ? payload_hash : body_hash);
    char *sts = creq ? sigv4_string_to_sign(auth->amz_date, auth->credential + auth->scope_off,
                                            auth->credential_len - auth->scope_off, creq)
                     : NULL;
    free(creq);
    if (!sts) return fail(err_out, "InternalServerError", "out of memory");
    char date[9], region[64], service[64], sig[65];
    uint8_t key[32];
    scope_parts(auth, date, region, service);
    sigv4_signing_key(secret, date, region, service, key);
    sigv4_signature(key, sts, sig);
    OPENSSL_cleanse(key, sizeof key);
    free(sts);
    if (auth->signature_len != 64 || CRYPTO_memcmp(sig, auth->signature, 64) != 0)
        return fail(err_out, T_INVALID, "%s", MSG_MISMATCH);
    return true;
}

/* The third '/'-separated part of a credential (which ends at ',', ' ' or NUL). */
static bool credential_region(const char *cred, char *out, size_t cap)
{
    const char *p = cred;
    for (int slashes = 0; slashes < 2; p++) {
        if (!*p || *p == ',' || *p == ' ') return false;
        if (*p == '/') slashes++;
    }
    size_t n = 0;
    for (; p[n] && p[n] != '/'; n++) {
        char c = p[n];
        if (n + 1 >= cap || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    if (n == 0 || p[n] != '/') return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

bool sigv4_region(const char *authorization, const char *query_credential, char *region_out,
                  size_t cap)
{
    const char *cred = authorization ? strstr(authorization, "Credential=") : NULL;
    if (cred) return credential_region(cred + 11, region_out, cap);
    return query_credential && credential_region(query_credential, region_out, cap);
}
