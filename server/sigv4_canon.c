/*
 * sigv4_canon.c - This file contains the computations of Signature Version 4: the canonical
 * request (URI, query and header canonicalisation), the string to sign, the signing key's
 * HMAC chain and the signature, as the spec defines them
 * (docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html). sigv4.c decides
 * what to check; this file only computes, so AWS's test vectors pin it down.
 */
#include "server/sigv4.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "util/buf.h"

#define ALGORITHM "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 percent-encoding as SigV4 wants it: upper-case hex, '/' kept if `keep_slash`. */
static bool uri_encode(kbuf *b, const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (unreserved(*p) || (keep_slash && *p == '/')) {
            if (!kbuf_put_u8(b, *p)) return false;
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            if (!kbuf_append(b, esc, 3)) return false;
        }
    }
    return true;
}

typedef struct enc_pair {
    char *s; /* "enc(name)=enc(value)" */
    size_t name_len;
} enc_pair;

static int enc_pair_cmp(const void *a, const void *b)
{
    const enc_pair *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    if (x->name_len != y->name_len) return x->name_len < y->name_len ? -1 : 1;
    return strcmp(x->s + x->name_len, y->s + y->name_len);
}

/* The canonical query string: encoded pairs sorted by name, then value, joined by '&'. */
static bool canonical_query(kbuf *b, const sigv4_request *req)
{
    if (!req->query_count) return true;
    enc_pair *pairs = calloc(req->query_count, sizeof *pairs);
    bool ok = pairs != NULL;
    for (size_t i = 0; ok && i < req->query_count; i++) {
        kbuf e = {0};
        ok = uri_encode(&e, req->query[i].name, false);
        pairs[i].name_len = e.len;
        ok = ok && kbuf_put_u8(&e, '=') &&
             uri_encode(&e, req->query[i].value ? req->query[i].value : "", false) &&
             kbuf_put_u8(&e, '\0');
        pairs[i].s = (char *)e.data;
        if (!ok) kbuf_free(&e), pairs[i].s = NULL;
    }
    if (ok) qsort(pairs, req->query_count, sizeof *pairs, enc_pair_cmp);
    for (size_t i = 0; ok && i < req->query_count; i++)
        ok = (i == 0 || kbuf_put_u8(b, '&')) && kbuf_append(b, pairs[i].s, strlen(pairs[i].s));
    for (size_t i = 0; pairs && i < req->query_count; i++)
        free(pairs[i].s);
    free(pairs);
    return ok;
}

/* Appends a header value trimmed, with every run of spaces/tabs collapsed to one space. */
static bool put_trimmed(kbuf *b, const char *v)
{
    bool space = false, any = false;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t') {
            space = any;
            continue;
        }
        if ((space && !kbuf_put_u8(b, ' ')) || !kbuf_put_u8(b, (uint8_t)*v)) return false;
        space = false;
        any = true;
    }
    return true;
}

/* "name:value\n" for each signed header, in the order of the signed list. */
static bool canonical_headers(kbuf *b, const sigv4_request *req, const char *list, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && list[j] != ';')
            j++;
        for (size_t k = i; k < j; k++)
            if (!kbuf_put_u8(b, (uint8_t)tolower((unsigned char)list[k]))) return false;
        if (!kbuf_put_u8(b, ':')) return false;
        bool first = true;
        for (size_t h = 0; h < req->header_count; h++) {
            const sigv4_pair *p = &req->headers[h];
            if (strlen(p->name) != j - i || strncasecmp(p->name, list + i, j - i) != 0) continue;
            if ((!first && !kbuf_put_u8(b, ',')) || !put_trimmed(b, p->value ? p->value : ""))
                return false;
            first = false;
        }
        if (!kbuf_put_u8(b, '\n')) return false;
        i = j + 1;
    }
    return true;
}

char *sigv4_canonical_request(const sigv4_request *req, const char *signed_headers,
                              size_t signed_headers_len, const char *payload_hash)
{
    kbuf b = {0};
    const char *path = req->path && req->path[0] ? req->path : "/";
    bool ok = kbuf_append(&b, req->method, strlen(req->method)) && kbuf_put_u8(&b, '\n') &&
              uri_encode(&b, path, true) && kbuf_put_u8(&b, '\n') && canonical_query(&b, req) &&
              kbuf_put_u8(&b, '\n') &&
              canonical_headers(&b, req, signed_headers, signed_headers_len) &&
              kbuf_put_u8(&b, '\n') && kbuf_append(&b, signed_headers, signed_headers_len) &&
              kbuf_put_u8(&b, '\n') && kbuf_append(&b, payload_hash, strlen(payload_hash)) &&
              kbuf_put_u8(&b, '\0');
    if (!ok) {
        kbuf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

static void to_hex(const uint8_t *p, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void sigv4_sha256_hex(const void *p, size_t n, char hex_out[65])
{
    uint8_t md[SHA256_DIGEST_LENGTH];
    SHA256(p ? p : (const void *)"", n, md);
    to_hex(md, sizeof md, hex_out);
}

char *sigv4_string_to_sign(const char *amz_date, const char *scope, size_t scope_len,
                           const char *canonical_request)
{
    char hash[65];
    sigv4_sha256_hex(canonical_request, strlen(canonical_request), hash);
    char *out = NULL;
    if (asprintf(&out, ALGORITHM "\n%s\n%.*s\n%s", amz_date, (int)scope_len, scope, hash) < 0)
        return NULL;
    return out;
}

static void hmac(const void *key, size_t key_len, const char *msg, uint8_t out[32])
{
    unsigned int len = 32;
    HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, strlen(msg), out, &len);
}

void sigv4_signing_key(const char *secret, const char *date, const char *region,
                       const char *service, uint8_t key_out[32])
{
    size_t slen = strlen(secret);
    char *k = malloc(slen + 5);
    uint8_t a[32], b[32];
    if (k) {
        memcpy(k, "AWS4", 4);
        memcpy(k + 4, secret, slen + 1);
        hmac(k, slen + 4, date, a);
        OPENSSL_cleanse(k, slen + 4);
        free(k);
    } else {
        memset(a, 0, sizeof a); /* out of memory: a key no client can match */
    }
    hmac(a, 32, region, b);
    hmac(b, 32, service, a);
    hmac(a, 32, TERMINATOR, key_out);
    OPENSSL_cleanse(a, sizeof a);
    OPENSSL_cleanse(b, sizeof b);
}

void sigv4_signature(const uint8_t key[32], const char *string_to_sign, char hex_out[65])
{
    uint8_t mac[32];
    hmac(key, 32, string_to_sign, mac);
    to_hex(mac, sizeof mac, hex_out);
}
