/*
 * execute_fuzz.c - libFuzzer target: kura_execute (the DynamoDB JSON API) on arbitrary
 * request bodies.
 *
 * This file contains a fuzz target for api/. A database in a temporary directory is opened
 * once (KURA_RELAXED) with three tables of different key types (fz1: S; fz2: N + B;
 * fz3: B + S). The first input byte picks the operation (byte % 15: the operations kura has,
 * TransactWriteItems and TransactGetItems last, so that the seeds of the older 14-entry list
 * keep their operation), the rest is the request body. Whatever the input, kura_execute must
 * not crash, must return a response that is a JSON object, and an error response must carry
 * "__type" (com.amazonaws.dynamodb.v20120810#...) and "message" (or "Message", as DynamoDB's
 * model spells it for TransactionCanceledException and two others; a body that is not JSON
 * is answered with com.amazon.coral.service#SerializationException alone), agree with
 * kura_execute_error_type() and with the returned status. An InternalServerError
 * is a finding unless the status is a storage failure (I/O, corruption, no space, read-only,
 * out of memory). Seeds: corpus/execute_fuzz/ (first byte = the operation index).
 */
#include <ftw.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"

static const char *const fz_ops[] = {
    "CreateTable", "DescribeTable", "ListTables",     "DeleteTable",        "UpdateTable",
    "PutItem",     "GetItem",       "UpdateItem",     "DeleteItem",         "Query",
    "Scan",        "BatchGetItem",  "BatchWriteItem", "TransactWriteItems", "TransactGetItems",
};
#define FZ_NOPS (sizeof fz_ops / sizeof fz_ops[0])

static kura_db *fz_db;
static char fz_dir[4096];

static void fz_fail(const char *what, const char *op, const char *out)
{
    fprintf(stderr, "execute_fuzz: %s (operation %s): %s\n", what, op, out ? out : "(null)");
    abort();
}

static int fz_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void fz_cleanup(void)
{
    kura_close(fz_db);
    nftw(fz_dir, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static void fz_exec_ok(const char *op, const char *body)
{
    char *out = NULL;
    size_t len;
    if (kura_execute(fz_db, op, body, strlen(body), &out, &len) != KURA_OK)
        fz_fail("setup request failed", op, out);
    kura_free(out);
}

static void fz_init(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(fz_dir, sizeof fz_dir, "%s/kura-execute-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fz_dir)) fz_fail("mkdtemp failed", "-", fz_dir);
    /* CI's fuzz run repeats exactly (run_fuzz.sh): jansson would seed its hash function from
     * /dev/urandom, which changes the memcmp calls libFuzzer records, and a syncer thread
     * woken by the clock would add coverage to whichever input runs at that moment. */
    json_object_seed(1);
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.relaxed_sync_ms = UINT32_MAX;
    o.memtable_budget_bytes = 8 << 20;
    o.background_threads = 1;
    if (kura_open(fz_dir, &o, &fz_db) != KURA_OK)
        fz_fail("kura_open failed", "-", kura_last_error());
    atexit(fz_cleanup);
    fz_exec_ok("CreateTable",
               "{\"TableName\":\"fz1\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
               "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
               "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
    fz_exec_ok("CreateTable",
               "{\"TableName\":\"fz2\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
               "\"AttributeType\":\"N\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"B\"}],"
               "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
               "\"sk\",\"KeyType\":\"RANGE\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
    fz_exec_ok("CreateTable",
               "{\"TableName\":\"fz3\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
               "\"AttributeType\":\"B\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],"
               "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
               "\"sk\",\"KeyType\":\"RANGE\"}],\"ProvisionedThroughput\":{\"ReadCapacityUnits\":1,"
               "\"WriteCapacityUnits\":1},\"KuraPartitions\":3}");
}

static bool fz_storage_failure(kura_status s)
{
    return s == KURA_E_IO || s == KURA_E_CORRUPTION || s == KURA_E_NOSPC || s == KURA_E_READONLY ||
           s == KURA_E_NOMEM;
}

static void fz_check_response(const char *op, kura_status s, const char *out, size_t len)
{
    if (strlen(out) != len)
        fz_fail("response length differs from its NUL-terminated length", op, out);
    json_t *j = json_loadb(out, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(j)) fz_fail("response is not a JSON object", op, out);
    const char *type = json_string_value(json_object_get(j, "__type"));
    const char *etype = kura_execute_error_type();
    if (s == KURA_OK) {
        if (type || etype) fz_fail("success with an error type", op, out);
    } else if (type && !strcmp(type, "com.amazon.coral.service#SerializationException")) {
        /* a body that is not JSON: Coral's error alone, as DynamoDB answers it */
        if (json_object_size(j) != 1 || !etype || strcmp(etype, "SerializationException") != 0)
            fz_fail("a not-JSON answer with more than its __type", op, out);
    } else {
        static const char prefix[] = "com.amazonaws.dynamodb.v20120810#";
        if (!type || strncmp(type, prefix, sizeof prefix - 1) != 0 ||
            !(json_is_string(json_object_get(j, "message")) ||
              json_is_string(json_object_get(j, "Message"))))
            fz_fail("error body without __type or message", op, out);
        if (!etype || strcmp(type + sizeof prefix - 1, etype) != 0)
            fz_fail("__type differs from kura_execute_error_type()", op, out);
        if (strcmp(etype, "InternalServerError") == 0 && !fz_storage_failure(s))
            fz_fail("InternalServerError that is not a storage failure", op, out);
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_db) fz_init();
    if (size == 0) return 0;
    const char *op = fz_ops[data[0] % FZ_NOPS];
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(fz_db, op, (const char *)data + 1, size - 1, &out, &len);
    if (!out) {
        if (s != KURA_E_NOMEM) fz_fail("no response without running out of memory", op, NULL);
        return 0;
    }
    fz_check_response(op, s, out, len);
    kura_free(out);
    return 0;
}
