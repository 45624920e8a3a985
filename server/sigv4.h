/*
 * sigv4.h - AWS Signature Version 4 verification for kura-server (--auth KEY:SECRET).
 *
 * This file declares pure functions: a request is described by plain strings (method, path,
 * query arguments, headers, body), the clock is a parameter, nothing here touches the network
 * or global state, so the unit test drives them with AWS's published vectors and with
 * requests signed by botocore.
 *
 * A request is checked in two phases, in the order DynamoDB checks (dynalite's index.js):
 *
 *   sigv4_precheck()  needs only the headers, so a request that would be rejected anyway is
 *                     refused before its body is read: the Authorization header present and
 *                     well formed, the date valid and within 15 minutes of `now`, Host signed,
 *                     the algorithm, the credential scope, the access key known.
 *   sigv4_verify()    rebuilds the canonical request and the string to sign, derives the
 *                     signing key from the secret and compares signatures in constant time.
 *
 * A presigned request (query authentication: X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
 * X-Amz-SignedHeaders, X-Amz-Signature and optionally X-Amz-Expires in the query string, no
 * Authorization header) goes through the same checks from its query arguments: a missing
 * argument is IncompleteSignatureException "AWS query-string parameters must include
 * 'X-Amz-Signature'. Re-examine the query-string parameters." (DynamoDB's words, as dynalite
 * copies them); it is valid from 15 minutes before X-Amz-Date until X-Amz-Expires seconds
 * (1..604800) after it, or 15 minutes after it without X-Amz-Expires; its canonical query
 * string is every argument but X-Amz-Signature; its payload is signed like a header-signed
 * request's (the body's hash: a DynamoDB request's body is its operation).
 *
 * A rejection fills a sigv4_error with DynamoDB's error type and message, e.g.
 * MissingAuthenticationTokenException "Request is missing Authentication Token".
 * The payload hash is the hex SHA-256 of the body; an x-amz-content-sha256 header, when sent,
 * is what the client signed and must equal that hash (UNSIGNED-PAYLOAD is refused: the body
 * of a DynamoDB request is always signed).
 */
#ifndef KURA_SERVER_SIGV4_H
#define KURA_SERVER_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SIGV4_MAX_SKEW_SECONDS (15 * 60)
/* The longest X-Amz-Expires of a presigned request: 7 days, as SigV4 allows. */
#define SIGV4_MAX_EXPIRES (7 * 24 * 3600)

/* A header or a query argument as received (names compared case-insensitively for headers,
 * values already percent-decoded for query arguments). Borrowed. */
typedef struct sigv4_pair {
    const char *name;
    const char *value; /* NULL for a query argument without '=' */
} sigv4_pair;

/* One HTTP request. Every pointer is borrowed for the duration of a call. */
typedef struct sigv4_request {
    const char *method;      /* "POST" */
    const char *path;        /* percent-decoded path, "/" */
    const sigv4_pair *query; /* decoded query arguments, in any order */
    size_t query_count;
    const sigv4_pair *headers; /* every header; a name may repeat */
    size_t header_count;
    const void *body;
    size_t body_len;
} sigv4_request;

/* The parsed Authorization header (or a presigned request's query arguments). Its strings
 * point into the header value or the query arguments of the request given to
 * sigv4_precheck(), so it lives as long as that request. */
typedef struct sigv4_auth {
    bool query; /* a presigned request: X-Amz-Signature is left out of the canonical query */
    const char *credential; /* "AKID/20150830/us-east-1/dynamodb/aws4_request" */
    size_t credential_len;
    const char *signed_headers; /* "host;x-amz-date" */
    size_t signed_headers_len;
    const char *signature; /* hex */
    size_t signature_len;
    size_t scope_off;  /* offset of "date/region/service/aws4_request" in credential */
    char amz_date[17]; /* "20150830T123600Z", the request's time */
} sigv4_auth;

/* A rejection: DynamoDB's error type ("InvalidSignatureException") and message. */
typedef struct sigv4_error {
    const char *type; /* static string */
    char message[1024];
} sigv4_error;

/* Phase one (headers only). `access_key` is the one key the server knows; `now` the current
 * time. Returns true with *auth_out filled, or false with *err_out filled. */
bool sigv4_precheck(const sigv4_request *req, const char *access_key, time_t now,
                    sigv4_auth *auth_out, sigv4_error *err_out);

/* Phase two: the signature over the request (with its body) under `secret`. Returns true if
 * it matches, otherwise false with *err_out filled. */
bool sigv4_verify(const sigv4_request *req, const sigv4_auth *auth, const char *secret,
                  sigv4_error *err_out);

/* The region of a request's credential scope ("AKID/20150830/eu-west-1/dynamodb/aws4_request"),
 * from the Authorization header's Credential (`authorization`, NULL when absent), else from a
 * presigned URL's X-Amz-Credential query argument (`query_credential`, decoded; NULL when
 * absent). It does not verify anything: kura-server without --auth answers in the region the
 * client signed for too. Copies the region into region_out (cap bytes) and returns true, or
 * returns false when neither names one of 1..cap-1 characters of [a-z0-9-]. */
bool sigv4_region(const char *authorization, const char *query_credential, char *region_out,
                  size_t cap);

/* ---- The steps, exposed for the test vectors ------------------------------------------- */

/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
void sigv4_signing_key(const char *secret, const char *date, const char *region,
                       const char *service, uint8_t key_out[32]);

/* The canonical request: method, canonical URI, canonical query string, canonical headers
 * (the signed ones, lower-case names, trimmed values with inner runs of spaces collapsed,
 * repeated headers joined by ','), the signed header list and `payload_hash`. Returns a
 * malloc'ed NUL-terminated string (caller frees), or NULL when out of memory. */
char *sigv4_canonical_request(const sigv4_request *req, const char *signed_headers,
                              size_t signed_headers_len, const char *payload_hash);

/* "AWS4-HMAC-SHA256\n" amz_date "\n" scope "\n" hex(SHA256(canonical_request)), malloc'ed
 * (caller frees), NULL when out of memory. */
char *sigv4_string_to_sign(const char *amz_date, const char *scope, size_t scope_len,
                           const char *canonical_request);

/* hex(HMAC(key, string_to_sign)) into hex_out (64 digits + NUL). */
void sigv4_signature(const uint8_t key[32], const char *string_to_sign, char hex_out[65]);

/* hex(SHA256(p, n)) into hex_out (64 digits + NUL). */
void sigv4_sha256_hex(const void *p, size_t n, char hex_out[65]);

#endif
