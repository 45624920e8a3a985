/*
 * dynamo.c - DynamoDB requests and response checks of kura-http-bench (see dynamo.h).
 *
 * The items are bench/item_fields.h's, so the HTTP benchmark writes the very items the
 * in-process item benchmarks write. The JSON is the one bench/engine_items.c's kura-json
 * engine sends.
 */
#include "bench/http/dynamo.h"

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/item_fields.h"
#include "bench/keys.h"

void hb_reqgen_init(hb_reqgen *g, const struct sockaddr_in *addr, const char *table)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof ip);
    snprintf(g->host, sizeof g->host, "%s:%u", ip, ntohs(addr->sin_port));
    snprintf(g->table, sizeof g->table, "%s", table);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(g->amz_date, sizeof g->amz_date, "%Y%m%dT%H%M%SZ", &tm);
}

const char *hb_op_target(hb_op op)
{
    switch (op) {
    case HB_OP_PUT:
        return "PutItem";
    case HB_OP_GET:
        return "GetItem";
    case HB_OP_QUERY:
        return "Query";
    default:
        return "ListTables";
    }
}

bool hb_req_http(const hb_reqgen *g, const char *target, const char *body, size_t len, kbuf *out)
{
    char head[768];
    int n = snprintf(head, sizeof head,
                     "POST / HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "Accept-Encoding: identity\r\n"
                     "Content-Type: application/x-amz-json-1.0\r\n"
                     "User-Agent: kura-http-bench\r\n"
                     "X-Amz-Target: DynamoDB_20120810.%s\r\n"
                     "X-Amz-Date: %s\r\n"
                     "Authorization: AWS4-HMAC-SHA256 Credential=AKIDKURABENCH/%.8s/us-east-1/"
                     "dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;"
                     "x-amz-target, Signature="
                     "0000000000000000000000000000000000000000000000000000000000000000\r\n"
                     "Content-Length: %zu\r\n"
                     "\r\n",
                     g->host, target, g->amz_date, g->amz_date, len);
    if (n <= 0 || (size_t)n >= sizeof head || !kbuf_reserve(out, (size_t)n + len)) return false;
    kbuf_append(out, head, (size_t)n);
    kbuf_append(out, body, len);
    return true;
}

static int put_body(const hb_reqgen *g, uint64_t index, char *body, size_t cap)
{
    bench_item_fields f;
    bench_item_fields_make(index, &f);
    char b64[4 * sizeof f.data / 3 + 8];
    EVP_EncodeBlock((unsigned char *)b64, f.data, (int)sizeof f.data);
    return snprintf(body, cap,
                    "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"%s\"},"
                    "\"sk\":{\"S\":\"%s\"},\"name\":{\"S\":\"%s\"},\"email\":{\"S\":\"%s\"},"
                    "\"n\":{\"N\":\"0\"},\"price\":{\"N\":\"%s\"},\"active\":{\"BOOL\":%s},"
                    "\"tags\":{\"SS\":[\"%s\",\"%s\",\"%s\"]},\"profile\":{\"M\":{\"city\":"
                    "{\"S\":\"%s\"},\"zip\":{\"S\":\"%s\"}}},\"data\":{\"B\":\"%s\"}}}",
                    g->table, f.pk, f.sk, f.name, f.email, f.price, f.active ? "true" : "false",
                    f.tag[0], f.tag[1], f.tag[2], f.city, f.zip, b64);
}

bool hb_req_item(const hb_reqgen *g, hb_op op, uint64_t index, kbuf *out)
{
    char body[2048];
    int n;
    bench_item_fields f;
    switch (op) {
    case HB_OP_PUT:
        n = put_body(g, index, body, sizeof body);
        break;
    case HB_OP_GET:
        bench_item_key_make(index, &f);
        n = snprintf(body, sizeof body,
                     "{\"TableName\":\"%s\",\"Key\":{\"pk\":{\"S\":\"%s\"},\"sk\":{\"S\":\"%s\"}}}",
                     g->table, f.pk, f.sk);
        break;
    case HB_OP_QUERY:
        bench_item_key_make(index, &f);
        n = snprintf(body, sizeof body,
                     "{\"TableName\":\"%s\",\"KeyConditionExpression\":\"pk = :p\","
                     "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"%s\"}}}",
                     g->table, f.pk);
        break;
    default:
        n = snprintf(body, sizeof body, "{}");
        break;
    }
    if (n <= 0 || (size_t)n >= sizeof body) return false;
    return hb_req_http(g, hb_op_target(op), body, (size_t)n, out);
}

size_t hb_create_table_body(const hb_reqgen *g, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "{\"TableName\":\"%s\",\"AttributeDefinitions\":["
                     "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],\"KeySchema\":["
                     "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                     "\"BillingMode\":\"PAY_PER_REQUEST\"}",
                     g->table);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* The unsigned integer after `"name":` (JSON may put spaces after the colon), or -1. */
static long long json_uint(const char *body, const char *name)
{
    const char *p = strstr(body, name);
    if (!p) return -1;
    p += strlen(name);
    while (*p == ' ')
        p++;
    if (*p != ':') return -1;
    p++;
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9') return -1;
    return strtoll(p, NULL, 10);
}

bool hb_resp_ok(hb_op op, const char *body)
{
    switch (op) {
    case HB_OP_GET:
        return strstr(body, "\"Item\"") != NULL;
    case HB_OP_QUERY:
        return json_uint(body, "\"Count\"") == HB_ITEMS_PER_PK;
    default:
        return true;
    }
}
