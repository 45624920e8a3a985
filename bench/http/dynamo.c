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

/* Writes the head of a request calling `target` up to and including "Content-Length: " into
 * buf[0..cap); returns its length, or 0 if it does not fit. */
static size_t head_prefix(const hb_reqgen *g, const char *target, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
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
                     "Content-Length: ",
                     g->host, target, g->amz_date, g->amz_date);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

void hb_reqgen_init(hb_reqgen *g, const struct sockaddr_in *addr, const char *table)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof ip);
    snprintf(g->host, sizeof g->host, "%s:%u", ip, ntohs(addr->sin_port));
    snprintf(g->table, sizeof g->table, "%s", table);
    g->gsi = false;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(g->amz_date, sizeof g->amz_date, "%Y%m%dT%H%M%SZ", &tm);
    for (int op = 0; op < HB_NOPS; op++)
        g->head_len[op] = head_prefix(g, hb_op_target((hb_op)op), g->head[op], sizeof g->head[op]);
}

const char *hb_op_target(hb_op op)
{
    switch (op) {
    case HB_OP_PUT:
        return "PutItem";
    case HB_OP_GET:
        return "GetItem";
    case HB_OP_QUERY:
    case HB_OP_QUERY_GSI:
        return "Query";
    case HB_OP_UPDATE:
        return "UpdateItem";
    case HB_OP_PQ_GET:
    case HB_OP_PQ_UPDATE:
        return "ExecuteStatement";
    default:
        return "ListTables";
    }
}

/* Appends head[0..head_len) (up to "Content-Length: "), the length and the body to out. */
static bool assemble(const char *head, size_t head_len, const char *body, size_t len, kbuf *out)
{
    char num[24];
    size_t n = sizeof num;
    memcpy(num + (n -= 4), "\r\n\r\n", 4);
    size_t v = len;
    do {
        num[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (head_len == 0 || !kbuf_reserve(out, head_len + sizeof num - n + len)) return false;
    kbuf_append(out, head, head_len);
    kbuf_append(out, num + n, sizeof num - n);
    kbuf_append(out, body, len);
    return true;
}

bool hb_req_http(const hb_reqgen *g, const char *target, const char *body, size_t len, kbuf *out)
{
    char head[768];
    return assemble(head, head_prefix(g, target, head, sizeof head), body, len, out);
}

/* Writes the strings pieces[0..n) one after another at p; returns the end. The request bodies
 * are put together from pieces rather than printf'ed: kura-http-bench runs on the machine it
 * measures, and its snprintf calls were ~4% of it during PutItem. */
static char *put_pieces(char *p, const char *const *pieces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p = bench_put_str(p, pieces[i]);
    return p;
}

#define PUT_PIECES(p, ...) \
    put_pieces(p, (const char *const[]){__VA_ARGS__}, \
               sizeof (const char *const[]){__VA_ARGS__} / sizeof(const char *))

bool hb_req_item(const hb_reqgen *g, hb_op op, uint64_t index, kbuf *out)
{
    char body[2048], b64[4 * sizeof ((bench_item_fields *)0)->data / 3 + 8];
    char *p = body;
    bench_item_fields f;
    switch (op) {
    case HB_OP_PUT:
        bench_item_fields_make(index, &f);
        EVP_EncodeBlock((unsigned char *)b64, f.data, (int)sizeof f.data);
        p = PUT_PIECES(p, "{\"TableName\":\"", g->table, "\",\"Item\":{\"pk\":{\"S\":\"", f.pk,
                       "\"},\"sk\":{\"S\":\"", f.sk, "\"},");
        if (g->gsi) /* grp: "team" + the pk's 12 digits */
            p = PUT_PIECES(p, "\"grp\":{\"S\":\"team", f.pk + 4, "\"},");
        p = PUT_PIECES(p, "\"name\":{\"S\":\"", f.name,
                       "\"},\"email\":{\"S\":\"", f.email,
                       "\"},\"n\":{\"N\":\"0\"},\"price\":{\"N\":\"", f.price,
                       "\"},\"active\":{\"BOOL\":", f.active ? "true" : "false",
                       "},\"tags\":{\"SS\":[\"", f.tag[0], "\",\"", f.tag[1], "\",\"", f.tag[2],
                       "\"]},\"profile\":{\"M\":{\"city\":{\"S\":\"", f.city,
                       "\"},\"zip\":{\"S\":\"", f.zip, "\"}}},\"data\":{\"B\":\"", b64,
                       "\"}}}");
        break;
    case HB_OP_GET:
        bench_item_key_make(index, &f);
        p = PUT_PIECES(p, "{\"TableName\":\"", g->table, "\",\"Key\":{\"pk\":{\"S\":\"", f.pk,
                       "\"},\"sk\":{\"S\":\"", f.sk, "\"}}}");
        break;
    case HB_OP_QUERY:
        bench_item_key_make(index, &f);
        p = PUT_PIECES(p, "{\"TableName\":\"", g->table,
                       "\",\"KeyConditionExpression\":\"pk = :p\","
                       "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"",
                       f.pk, "\"}}}");
        break;
    case HB_OP_QUERY_GSI:
        bench_item_key_make(index, &f);
        p = PUT_PIECES(p, "{\"TableName\":\"", g->table, "\",\"IndexName\":\"" HB_GSI_NAME
                       "\",\"KeyConditionExpression\":\"grp = :g\","
                       "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"team",
                       f.pk + 4, "\"}}}");
        break;
    case HB_OP_UPDATE:
        bench_item_key_make(index, &f);
        p = PUT_PIECES(p, "{\"TableName\":\"", g->table, "\",\"Key\":{\"pk\":{\"S\":\"", f.pk,
                       "\"},\"sk\":{\"S\":\"", f.sk, "\"}},\"UpdateExpression\":"
                       "\"SET n = n + :one\",\"ExpressionAttributeValues\":{\":one\":"
                       "{\"N\":\"1\"}}}");
        break;
    case HB_OP_PQ_GET:
    case HB_OP_PQ_UPDATE:
        bench_item_key_make(index, &f);
        p = PUT_PIECES(p, op == HB_OP_PQ_GET ? "{\"Statement\":\"SELECT * FROM \\\""
                                             : "{\"Statement\":\"UPDATE \\\"",
                       g->table, op == HB_OP_PQ_GET ? "\\\" WHERE" : "\\\" SET n = n + 1 WHERE",
                       " pk = ? AND sk = ?\",\"Parameters\":[{\"S\":\"", f.pk,
                       "\"},{\"S\":\"", f.sk, "\"}]}");
        break;
    default:
        p = bench_put_str(p, "{}");
        break;
    }
    return assemble(g->head[op], g->head_len[op], body, (size_t)(p - body), out);
}

/* The table: on-demand, warm to 1 M units a second so that kura-server --throttle measures
 * the throttle's cost, not its limit (DynamoDB's new on-demand table serves 4,000 WCU). */
size_t hb_create_table_body(const hb_reqgen *g, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "{\"TableName\":\"%s\",\"AttributeDefinitions\":["
                     "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},%s"
                     "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],\"KeySchema\":["
                     "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
                     "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],%s"
                     "\"BillingMode\":\"PAY_PER_REQUEST\",\"WarmThroughput\":{"
                     "\"ReadUnitsPerSecond\":1000000,\"WriteUnitsPerSecond\":1000000}}",
                     g->table,
                     g->gsi ? "{\"AttributeName\":\"grp\",\"AttributeType\":\"S\"}," : "",
                     g->gsi ? "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"" HB_GSI_NAME "\","
                              "\"KeySchema\":[{\"AttributeName\":\"grp\",\"KeyType\":\"HASH\"},"
                              "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
                              "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
                            : "");
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
    case HB_OP_PQ_GET:
        return strstr(body, "\"Items\":[{") != NULL;
    case HB_OP_QUERY:
    case HB_OP_QUERY_GSI:
        return json_uint(body, "\"Count\"") == HB_ITEMS_PER_PK;
    default:
        return true;
    }
}

long long hb_resp_count(const char *body)
{
    return json_uint(body, "\"Count\"");
}
