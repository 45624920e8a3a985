/*
 * server_sigv4_test.c - This file contains the tests of kura-server's SigV4 verification
 * (server/sigv4.c): AWS's published vectors for the signing key and for the canonical
 * request / string to sign / signature of the aws-sig-v4-test-suite requests, DynamoDB
 * requests signed by botocore (SigV4Auth, generated offline and pasted here), and every
 * rejection with DynamoDB's error type and message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "server/sigv4.h"

#define EX_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define DDB_KEY "AKIDKURA"
#define DDB_SECRET "kura/secret+KEY"
#define MISMATCH                                                                                   \
    "The request signature we calculated does not match the signature you provided. Check "        \
    "your AWS Secret Access Key and signing method. Consult the service documentation for "        \
    "details."

static time_t at(int y, int mo, int d, int h, int mi, int s)
{
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    return timegm(&tm);
}

static void hex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

/* ---- AWS's vectors ------------------------------------------------------------------------ */

static void test_signing_key_vectors(void **state)
{
    (void)state;
    uint8_t key[32];
    char h[65];
    /* "Examples of how to derive a signing key for Signature Version 4" (AWS docs) */
    sigv4_signing_key(EX_SECRET, "20120215", "us-east-1", "iam", key);
    hex(key, 32, h);
    assert_string_equal(h, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
    sigv4_signing_key(EX_SECRET, "20150830", "us-east-1", "iam", key);
    hex(key, 32, h);
    assert_string_equal(h, "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
    sigv4_sha256_hex("", 0, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

typedef struct suite_case {
    const char *name, *method, *path;
    sigv4_pair query[4];
    size_t query_count;
    sigv4_pair headers[4];
    size_t header_count;
    const char *signed_headers, *creq, *sts, *signature;
} suite_case;

#define EX_CREQ_TAIL "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" EMPTY_SHA
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define EX_STS "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
#define EX_HOST                                                                                    \
    {                                                                                              \
        "Host", "example.amazonaws.com"                                                            \
    }
#define EX_DATE                                                                                    \
    {                                                                                              \
        "X-Amz-Date", "20150830T123600Z"                                                           \
    }

/* aws-sig-v4-test-suite: get-vanilla, post-vanilla, get-vanilla-query-order-key-case,
 * get-header-value-trim, and a query needing escapes (values as libmicrohttpd decodes them);
 * the expected strings and signatures are the suite's, re-checked with botocore. */
static const suite_case suite[] = {
    {"get-vanilla",
     "GET",
     "/",
     {{0}},
     0,
     {EX_HOST, EX_DATE},
     2,
     "host;x-amz-date",
     "GET\n/\n\nhost:example.amazonaws.com\n" EX_CREQ_TAIL,
     EX_STS "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
    {"post-vanilla",
     "POST",
     "/",
     {{0}},
     0,
     {EX_HOST, EX_DATE},
     2,
     "host;x-amz-date",
     "POST\n/\n\nhost:example.amazonaws.com\n" EX_CREQ_TAIL,
     EX_STS "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"get-vanilla-query-order-key-case",
     "GET",
     "/",
     {{"Param2", "value2"}, {"Param1", "value1"}},
     2,
     {EX_HOST, EX_DATE},
     2,
     "host;x-amz-date",
     "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n" EX_CREQ_TAIL,
     EX_STS "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
     "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
    {"get-header-value-trim",
     "GET",
     "/",
     {{0}},
     0,
     {EX_HOST, {"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}, EX_DATE},
     4,
     "host;my-header1;my-header2;x-amz-date",
     "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\n"
     "x-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" EMPTY_SHA,
     EX_STS "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
     "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
    {"query-escapes (botocore)",
     "POST",
     "/",
     {{"b", "x y"}, {"a", "/~"}, {"a", "0"}},
     3,
     {EX_HOST, EX_DATE},
     2,
     "host;x-amz-date",
     "POST\n/\na=%2F~&a=0&b=x%20y\nhost:example.amazonaws.com\n" EX_CREQ_TAIL,
     NULL,
     "64bd14573534c66ced89bd1e4b37dec760e46dd467c4765484f129b478ba92f0"},
};

static void test_aws_suite_vectors(void **state)
{
    (void)state;
    uint8_t key[32];
    sigv4_signing_key(EX_SECRET, "20150830", "us-east-1", "service", key);
    for (size_t i = 0; i < sizeof suite / sizeof suite[0]; i++) {
        const suite_case *c = &suite[i];
        print_message("case %s\n", c->name);
        sigv4_request req = {c->method,  c->path,         c->query, c->query_count,
                             c->headers, c->header_count, "",       0};
        char *creq =
            sigv4_canonical_request(&req, c->signed_headers, strlen(c->signed_headers), EMPTY_SHA);
        assert_non_null(creq);
        assert_string_equal(creq, c->creq);
        const char scope[] = "20150830/us-east-1/service/aws4_request";
        char *sts = sigv4_string_to_sign("20150830T123600Z", scope, sizeof scope - 1, creq);
        assert_non_null(sts);
        if (c->sts) assert_string_equal(sts, c->sts);
        char sig[65];
        sigv4_signature(key, sts, sig);
        assert_string_equal(sig, c->signature);
        free(sts);
        free(creq);
    }
}

/* ---- DynamoDB requests signed by botocore ------------------------------------------------ */

/* A request whose headers and body a test may change. */
typedef struct ddb_req {
    sigv4_pair headers[10];
    size_t n;
    sigv4_pair query[8];
    size_t nq;
    const char *body;
    sigv4_request req;
} ddb_req;

static const char GETITEM_BODY[] = "{\"TableName\":\"Music\",\"Key\":{\"Artist\":{\"S\":\"No One "
                                   "You Know\"},\"SongTitle\":{\"S\":\"Call Me Today\"}}}";
static const char PUT_BODY[] = "{\"TableName\":\"t\",\"Item\":{\"k\":{\"S\":\"\xc3\xbc\"}}}";
#define PUT_SHA "f93eb9101cd046fcea2d6d348e379e3d8278cacd3fbc7777b33464ca081e65d2"

/* botocore 1.43 SigV4Auth(Credentials("AKIDKURA", "kura/secret+KEY"), "dynamodb",
 * "us-east-1") at 2026-11-21T14:00:00Z, POST http://127.0.0.1:8000/. */
static void ddb_getitem(ddb_req *r)
{
    memset(r, 0, sizeof *r);
    sigv4_pair h[] = {
        {"Host", "127.0.0.1:8000"},
        {"Content-Type", "application/x-amz-json-1.0"},
        {"X-Amz-Target", "DynamoDB_20120810.GetItem"},
        {"User-Agent", "Boto3/1.26"},
        {"X-Amz-Date", "20261121T140000Z"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
         "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
         "Signature=92ed0631b94c72296b9dcf0d317a1bb39c83b188bc4068171a2ae5795a793042"},
        {"Content-Length", "95"},
    };
    memcpy(r->headers, h, sizeof h);
    r->n = sizeof h / sizeof h[0];
    r->body = GETITEM_BODY;
}

static void ddb_listtables_token(ddb_req *r)
{
    memset(r, 0, sizeof *r);
    sigv4_pair h[] = {
        {"Content-Type", "application/x-amz-json-1.0"},
        {"X-Amz-Target", "DynamoDB_20120810.ListTables"},
        {"X-Amz-Date", "20261121T140000Z"},
        {"X-Amz-Security-Token", "TOKEN123"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
         "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, "
         "Signature=a946065a029121aa073d9457f3d7781183f587badec59c4510038ecc8d79799c"},
        {"host", "127.0.0.1:8000"},
    };
    memcpy(r->headers, h, sizeof h);
    r->n = sizeof h / sizeof h[0];
    r->body = "{}";
}

static void ddb_put_sha256(ddb_req *r)
{
    memset(r, 0, sizeof *r);
    sigv4_pair h[] = {
        {"Host", "127.0.0.1:8000"},
        {"Content-Type", "application/x-amz-json-1.0"},
        {"X-Amz-Target", "DynamoDB_20120810.PutItem"},
        {"X-Amz-Content-SHA256", PUT_SHA},
        {"X-Amz-Date", "20261121T140000Z"},
        {"Authorization",
         "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
         "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target, "
         "Signature=8ea2bc1ac0e3d865a3ac63be882708fe064a0dedb802594fae25e821579c6887"},
    };
    memcpy(r->headers, h, sizeof h);
    r->n = sizeof h / sizeof h[0];
    r->body = PUT_BODY;
}

static sigv4_request *as_req(ddb_req *r)
{
    sigv4_request q = {"POST", "/", r->query, r->nq, r->headers, r->n, r->body, strlen(r->body)};
    r->req = q;
    return &r->req;
}

static void set_header(ddb_req *r, const char *name, const char *value)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcasecmp(r->headers[i].name, name) == 0) {
            r->headers[i].value = value;
            return;
        }
    r->headers[r->n].name = name;
    r->headers[r->n++].value = value;
}

static void del_header(ddb_req *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcasecmp(r->headers[i].name, name) == 0) {
            memmove(&r->headers[i], &r->headers[i + 1], (r->n - i - 1) * sizeof r->headers[0]);
            r->n--;
            return;
        }
}

static const time_t *signed_at(void)
{
    static time_t t;
    t = at(2026, 11, 21, 14, 0, 0);
    return &t;
}

/* Runs both phases at `now` with kura-server's key and `secret`. */
static bool check(ddb_req *r, time_t now, const char *secret, sigv4_error *err)
{
    sigv4_auth auth;
    sigv4_request *req = as_req(r);
    memset(err, 0, sizeof *err);
    return sigv4_precheck(req, DDB_KEY, now, &auth, err) && sigv4_verify(req, &auth, secret, err);
}

static void expect_reject(ddb_req *r, time_t now, const char *secret, const char *type,
                          const char *message)
{
    sigv4_error err;
    bool ok = check(r, now, secret, &err);
    if (ok) fail_msg("accepted, expected %s: %s", type, message);
    assert_string_equal(err.type, type);
    assert_string_equal(err.message, message);
}

static void test_botocore_requests_accepted(void **state)
{
    (void)state;
    void (*makers[])(ddb_req *) = {ddb_getitem, ddb_listtables_token, ddb_put_sha256};
    for (size_t i = 0; i < 3; i++) {
        ddb_req r;
        sigv4_error err;
        makers[i](&r);
        bool ok = check(&r, *signed_at(), DDB_SECRET, &err);
        if (!ok) fail_msg("request %zu rejected: %s: %s", i, err.type, err.message);
        /* the clock may be up to 15 minutes off either way */
        assert_true(check(&r, *signed_at() + 15 * 60, DDB_SECRET, &err));
        assert_true(check(&r, *signed_at() - 15 * 60, DDB_SECRET, &err));
    }
    /* trailing slashes after the credential are ignored */
    ddb_req r;
    ddb_getitem(&r);
    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request//,"
               " SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
               "Signature=92ed0631b94c72296b9dcf0d317a1bb39c83b188bc4068171a2ae5795a793042");
    sigv4_error err;
    assert_true(check(&r, *signed_at(), DDB_SECRET, &err));
}

static void test_reject_missing_token(void **state)
{
    (void)state;
    ddb_req r;
    ddb_getitem(&r);
    del_header(&r, "Authorization");
    const char *msg = "Request is missing Authentication Token";
    expect_reject(&r, *signed_at(), DDB_SECRET, "MissingAuthenticationTokenException", msg);
    set_header(&r, "Authorization", "Basic dXNlcjpwYXNz");
    expect_reject(&r, *signed_at(), DDB_SECRET, "MissingAuthenticationTokenException", msg);
    set_header(&r, "Authorization", "");
    expect_reject(&r, *signed_at(), DDB_SECRET, "MissingAuthenticationTokenException", msg);
    /* X-Amz-Algorithm in the query string makes it a presigned request, checked as one */
    del_header(&r, "Authorization");
    r.query[0].name = "X-Amz-Algorithm";
    r.query[0].value = "AWS4-HMAC-SHA256";
    r.nq = 1;
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "AWS query-string parameters must include 'X-Amz-Credential'. AWS query-string "
                  "parameters must include 'X-Amz-Signature'. AWS query-string parameters must "
                  "include 'X-Amz-SignedHeaders'. AWS query-string parameters must include "
                  "'X-Amz-Date'. Re-examine the query-string parameters.");
    ddb_getitem(&r);
    r.query[0].name = "X-Amz-Algorithm";
    r.query[0].value = "AWS4-HMAC-SHA256";
    r.nq = 1;
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException",
                  "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as "
                  "HTTP header.");
}

static void test_reject_malformed_header(void **state)
{
    (void)state;
    ddb_req r;
    ddb_getitem(&r);
    set_header(&r, "Authorization", "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Authorization header requires 'Signature' parameter. Authorization header "
                  "requires 'SignedHeaders' parameter. Authorization=AWS4-HMAC-SHA256 "
                  "Credential=AKIDKURA/20261121/us-east-1");
    set_header(&r, "Authorization", "AWS4-HMAC-SHA256 Signature=ab, SignedHeaders=host");
    del_header(&r, "X-Amz-Date");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Authorization header requires 'Credential' parameter. Authorization header "
                  "requires existence of either a 'X-Amz-Date' or a 'Date' header. "
                  "Authorization=AWS4-HMAC-SHA256 Signature=ab, SignedHeaders=host");

    ddb_getitem(&r);
    set_header(&r, "X-Amz-Date", "2026-11-21T14:00:00Z");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Date must be in ISO-8601 'basic format'. Got '2026-11-21T14:00:00Z'. See "
                  "http://en.wikipedia.org/wiki/ISO_8601");

    ddb_getitem(&r);
    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
               "SignedHeaders=content-type;x-amz-date;x-amz-target, Signature=00");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException",
                  "'Host' must be a 'SignedHeader' in the AWS Authorization.");

    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA1 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
               "SignedHeaders=host, Signature=00");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA1' (only AWS4-HMAC-SHA256 for "
                  "now). ");

    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb, "
               "SignedHeaders=host, Signature=00");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Credential must have exactly 5 slash-delimited elements, e.g. "
                  "keyid/date/region/service/term, got 'AKIDKURA/20261121/us-east-1/dynamodb'");

    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261120/US_EAST/s3/aws4, "
               "SignedHeaders=host, Signature=00");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException",
                  "Credential should be scoped to a valid region, not 'US_EAST'. Credential "
                  "should be scoped to correct service: 'dynamodb'. Credential should be scoped "
                  "with a valid terminator: 'aws4_request', not 'aws4'. Date in Credential "
                  "scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                  "'20261120' != '20261121', from '20261121T140000Z'.");
}

static void test_reject_clock_skew(void **state)
{
    (void)state;
    ddb_req r;
    ddb_getitem(&r);
    expect_reject(&r, *signed_at() + 15 * 60 + 1, DDB_SECRET, "InvalidSignatureException",
                  "Signature expired: 20261121T140000Z is now earlier than 20261121T140001Z "
                  "(20261121T141501Z - 15 min.)");
    expect_reject(&r, *signed_at() - 15 * 60 - 1, DDB_SECRET, "InvalidSignatureException",
                  "Signature not yet current: 20261121T140000Z is still later than "
                  "20261121T135959Z (20261121T134459Z + 15 min.)");
}

static void test_reject_unknown_key(void **state)
{
    (void)state;
    ddb_req r;
    ddb_getitem(&r);
    sigv4_auth auth;
    sigv4_error err;
    assert_false(sigv4_precheck(as_req(&r), "AKIDOTHER", *signed_at(), &auth, &err));
    assert_string_equal(err.type, "UnrecognizedClientException");
    assert_string_equal(err.message, "The security token included in the request is invalid.");
    assert_false(sigv4_precheck(as_req(&r), "AKIDKURAX", *signed_at(), &auth, &err));
    assert_string_equal(err.type, "UnrecognizedClientException");
}

static void test_reject_wrong_signature(void **state)
{
    (void)state;
    ddb_req r;
    ddb_getitem(&r);
    expect_reject(&r, *signed_at(), "kura/secret+KEZ", "InvalidSignatureException", MISMATCH);
    /* a changed body, a changed signed header, a truncated or upper-cased signature */
    r.body = "{\"TableName\":\"Music\",\"Key\":{\"Artist\":{\"S\":\"No One You Know\"},"
             "\"SongTitle\":{\"S\":\"Call Me Tomorrow\"}}}";
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    ddb_getitem(&r);
    set_header(&r, "X-Amz-Target", "DynamoDB_20120810.DeleteItem");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    ddb_getitem(&r);
    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
               "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
               "Signature=92ed0631b94c72296b9dcf0d317a1bb39c83b188bc4068171a2ae5795a79304");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    set_header(&r, "Authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/us-east-1/dynamodb/aws4_request, "
               "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
               "Signature=92ED0631B94C72296B9DCF0D317A1BB39C83B188BC4068171A2AE5795A793042");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    /* an unsigned header may change */
    ddb_getitem(&r);
    set_header(&r, "User-Agent", "curl/8");
    sigv4_error err;
    assert_true(check(&r, *signed_at(), DDB_SECRET, &err));
}

static void test_reject_payload_hash(void **state)
{
    (void)state;
    ddb_req r;
    ddb_put_sha256(&r);
    /* the signed x-amz-content-sha256 must be the body's hash */
    r.body = "{\"TableName\":\"t\",\"Item\":{\"k\":{\"S\":\"u\"}}}";
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    ddb_put_sha256(&r);
    set_header(&r, "X-Amz-Content-SHA256", "UNSIGNED-PAYLOAD");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
}

/* The Date header instead of X-Amz-Date (signed here with the module's own steps, whose
 * output the vectors above pin down). */
static void test_date_header(void **state)
{
    (void)state;
    ddb_req r;
    memset(&r, 0, sizeof r);
    set_header(&r, "Host", "localhost:8000");
    set_header(&r, "Date", "Sat, 21 Nov 2026 14:00:00 GMT");
    r.body = "{}";
    const char signed_h[] = "date;host";
    char hash[65];
    sigv4_sha256_hex("{}", 2, hash);
    char *creq = sigv4_canonical_request(as_req(&r), signed_h, sizeof signed_h - 1, hash);
    const char scope[] = "20261121/eu-west-3/dynamodb/aws4_request";
    char *sts = sigv4_string_to_sign("20261121T140000Z", scope, sizeof scope - 1, creq);
    uint8_t key[32];
    char sig[65], auth[512];
    sigv4_signing_key(DDB_SECRET, "20261121", "eu-west-3", "dynamodb", key);
    sigv4_signature(key, sts, sig);
    snprintf(auth, sizeof auth,
             "AWS4-HMAC-SHA256 Credential=AKIDKURA/%s, SignedHeaders=%s, Signature=%s", scope,
             signed_h, sig);
    set_header(&r, "Authorization", auth);
    sigv4_error err;
    bool ok = check(&r, *signed_at() + 60, DDB_SECRET, &err);
    if (!ok) fail_msg("%s: %s", err.type, err.message);
    set_header(&r, "Date", "21 Nov 2026");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Date must be in ISO-8601 'basic format'. Got '21 Nov 2026'. See "
                  "http://en.wikipedia.org/wiki/ISO_8601");
    free(sts);
    free(creq);
}

/* sigv4_region: the credential scope's region from the header, else the presigned query. */
static void test_region(void **state)
{
    (void)state;
    char r[33];
    const char *hdr = "AWS4-HMAC-SHA256 Credential=AKIDKURA/20261121/eu-west-1/dynamodb/"
                      "aws4_request, SignedHeaders=host;x-amz-date, Signature=abc";
    assert_true(sigv4_region(hdr, NULL, r, sizeof r));
    assert_string_equal(r, "eu-west-1");
    /* the header wins over the query */
    assert_true(sigv4_region(hdr, "AKID/20261121/ap-south-1/dynamodb/aws4_request", r, sizeof r));
    assert_string_equal(r, "eu-west-1");
    assert_true(sigv4_region(NULL, "AKID/20261121/ap-south-1/dynamodb/aws4_request", r, sizeof r));
    assert_string_equal(r, "ap-south-1");
    /* unsigned, or no region to take */
    strcpy(r, "unchanged");
    assert_false(sigv4_region(NULL, NULL, r, sizeof r));
    assert_false(sigv4_region("AWS4-HMAC-SHA256 SignedHeaders=host", NULL, r, sizeof r));
    assert_false(sigv4_region("AWS4-HMAC-SHA256 Credential=AKID/20261121, Signature=x", NULL, r,
                              sizeof r));
    assert_false(sigv4_region("AWS4-HMAC-SHA256 Credential=AKID/20261121//dynamodb/aws4_request",
                              NULL, r, sizeof r));
    assert_false(sigv4_region("AWS4-HMAC-SHA256 Credential=AKID/20261121/EU:1/dynamodb/x", NULL,
                              r, sizeof r));
    assert_false(sigv4_region(NULL, "AKID/20261121/eu-west-1", r, sizeof r));
    assert_string_equal(r, "unchanged");
    /* longer than the buffer */
    char small[5];
    assert_false(sigv4_region(hdr, NULL, small, sizeof small));
    assert_true(sigv4_region("Credential=A/d/abcd/dynamodb/aws4_request", NULL, small,
                             sizeof small));
    assert_string_equal(small, "abcd");
}

/* ---- Presigned requests (query authentication) ------------------------------------------- */

#define PRE_SIG "40accf893cc942a047b3340f7ae31a0064a4afdc09d73df0b07ee4a32f53d096"
/* botocore 1.43 SigV4QueryAuth(Credentials("AKIDKURA", "kura/secret+KEY"), "dynamodb",
 * "us-east-1", expires=300) at 2026-11-21T14:00:00Z, POST http://127.0.0.1:8000/ with the
 * GetItem body kept as the body (SigV4QueryAuth would move it into the query string) and so
 * signed by its SHA-256. */
static void ddb_presigned(ddb_req *r)
{
    memset(r, 0, sizeof *r);
    sigv4_pair h[] = {
        {"Host", "127.0.0.1:8000"},
        {"Content-Type", "application/x-amz-json-1.0"},
        {"X-Amz-Target", "DynamoDB_20120810.GetItem"},
        {"Content-Length", "95"},
    };
    sigv4_pair q[] = {
        {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
        {"X-Amz-Credential", "AKIDKURA/20261121/us-east-1/dynamodb/aws4_request"},
        {"X-Amz-Date", "20261121T140000Z"},
        {"X-Amz-Expires", "300"},
        {"X-Amz-SignedHeaders", "content-type;host;x-amz-target"},
        {"X-Amz-Signature", PRE_SIG},
    };
    memcpy(r->headers, h, sizeof h);
    r->n = sizeof h / sizeof h[0];
    memcpy(r->query, q, sizeof q);
    r->nq = sizeof q / sizeof q[0];
    r->body = GETITEM_BODY;
}

static void set_query(ddb_req *r, const char *name, const char *value)
{
    for (size_t i = 0; i < r->nq; i++)
        if (strcmp(r->query[i].name, name) == 0) {
            r->query[i].value = value;
            return;
        }
    r->query[r->nq].name = name;
    r->query[r->nq++].value = value;
}

static void del_query(ddb_req *r, const char *name)
{
    for (size_t i = 0; i < r->nq; i++)
        if (strcmp(r->query[i].name, name) == 0) {
            memmove(&r->query[i], &r->query[i + 1], (r->nq - i - 1) * sizeof r->query[0]);
            r->nq--;
            return;
        }
}

static void test_presigned_accepted(void **state)
{
    (void)state;
    ddb_req r;
    sigv4_error err;
    ddb_presigned(&r);
    if (!check(&r, *signed_at(), DDB_SECRET, &err))
        fail_msg("rejected: %s: %s", err.type, err.message);
    /* valid until X-Amz-Expires after its date, from 15 minutes before it */
    assert_true(check(&r, *signed_at() + 300, DDB_SECRET, &err));
    assert_true(check(&r, *signed_at() - 15 * 60, DDB_SECRET, &err));
    /* arguments in any order; an extra unsigned header */
    ddb_presigned(&r);
    sigv4_pair first = r.query[0];
    r.query[0] = r.query[5];
    r.query[5] = first;
    set_header(&r, "User-Agent", "curl");
    assert_true(check(&r, *signed_at(), DDB_SECRET, &err));
    /* the region is the credential's */
    char region[16];
    assert_true(sigv4_region(NULL, r.query[1].value, region, sizeof region));
    assert_string_equal(region, "us-east-1");
}

static void test_presigned_rejected(void **state)
{
    (void)state;
    ddb_req r;
    ddb_presigned(&r);
    expect_reject(&r, *signed_at() + 301, DDB_SECRET, "InvalidSignatureException",
                  "Signature expired: 20261121T140000Z is now earlier than 20261121T140001Z "
                  "(20261121T140501Z - 300 sec.)");
    expect_reject(&r, *signed_at() - 15 * 60 - 1, DDB_SECRET, "InvalidSignatureException",
                  "Signature not yet current: 20261121T140000Z is still later than "
                  "20261121T135959Z (20261121T134459Z + 15 min.)");
    expect_reject(&r, *signed_at(), DDB_SECRET "x", "InvalidSignatureException", MISMATCH);
    r.body = "{\"TableName\":\"Music\"}";
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    /* the query string is signed: a longer expiry is another signature */
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Expires", "3000");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Signature", "00");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
    /* without X-Amz-Expires: the 15 minutes of a signed request (and another signature) */
    ddb_presigned(&r);
    del_query(&r, "X-Amz-Expires");
    expect_reject(&r, *signed_at() + 15 * 60 + 1, DDB_SECRET, "InvalidSignatureException",
                  "Signature expired: 20261121T140000Z is now earlier than 20261121T140001Z "
                  "(20261121T141501Z - 15 min.)");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException", MISMATCH);
}

static void test_presigned_incomplete(void **state)
{
    (void)state;
    ddb_req r;
    ddb_presigned(&r);
    del_query(&r, "X-Amz-Signature");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "AWS query-string parameters must include 'X-Amz-Signature'. Re-examine the "
                  "query-string parameters.");
    ddb_presigned(&r);
    del_query(&r, "X-Amz-Credential");
    set_query(&r, "X-Amz-Date", "");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "AWS query-string parameters must include 'X-Amz-Credential'. AWS query-string "
                  "parameters must include 'X-Amz-Date'. Re-examine the query-string "
                  "parameters.");
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Date", "2026-11-21");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Date must be in ISO-8601 'basic format'. Got '2026-11-21'. See "
                  "http://en.wikipedia.org/wiki/ISO_8601");
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Expires", "604801");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "X-Amz-Expires must be a whole number of seconds from 1 to 604800, not "
                  "'604801'. Re-examine the query-string parameters.");
    ddb_presigned(&r);
    set_query(&r, "X-Amz-SignedHeaders", "content-type;x-amz-target");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException",
                  "'Host' must be a 'SignedHeader' in the AWS Authorization.");
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Algorithm", "AWS4-HMAC-SHA1");
    expect_reject(&r, *signed_at(), DDB_SECRET, "IncompleteSignatureException",
                  "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA1' (only AWS4-HMAC-SHA256 for "
                  "now). ");
    ddb_presigned(&r);
    set_query(&r, "X-Amz-Credential", "OTHERKEY/20261121/us-east-1/dynamodb/aws4_request");
    expect_reject(&r, *signed_at(), DDB_SECRET, "UnrecognizedClientException",
                  "The security token included in the request is invalid.");
    ddb_presigned(&r);
    set_header(&r, "Authorization", "AWS4-HMAC-SHA256 Credential=x");
    expect_reject(&r, *signed_at(), DDB_SECRET, "InvalidSignatureException",
                  "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as "
                  "HTTP header.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signing_key_vectors),
        cmocka_unit_test(test_aws_suite_vectors),
        cmocka_unit_test(test_botocore_requests_accepted),
        cmocka_unit_test(test_reject_missing_token),
        cmocka_unit_test(test_reject_malformed_header),
        cmocka_unit_test(test_reject_clock_skew),
        cmocka_unit_test(test_reject_unknown_key),
        cmocka_unit_test(test_reject_wrong_signature),
        cmocka_unit_test(test_reject_payload_hash),
        cmocka_unit_test(test_date_header),
        cmocka_unit_test(test_region),
        cmocka_unit_test(test_presigned_accepted),
        cmocka_unit_test(test_presigned_rejected),
        cmocka_unit_test(test_presigned_incomplete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
