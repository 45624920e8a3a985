/*
 * req_account.c - This file contains the JSON API's two operations about the service rather
 * than a table: DescribeEndpoints and DescribeLimits. Both take an empty request ({};
 * unknown members are dropped by the deserializer, as DynamoDB drops them) and never fail.
 *
 * DescribeEndpoints answers {"Endpoints":[{"Address":"<host[:port]>","CachePeriodInMinutes":
 * 1440}]}: the one endpoint is the address the request came to (kura_request_context's
 * endpoint: kura-server passes the Host header), cached for a day as DynamoDB says.
 *
 * DescribeLimits answers DynamoDB's default quotas of a new account in a region:
 * 80,000 read and write capacity units for the account, 40,000 for one table (and each of its
 * GSIs), the figures of DynamoDB's "Service, account, and table quotas" page and of
 * DynamoDB Local 1.25.1's answer. kura does not throttle by them (docs/data-model.md).
 */
#include <string.h>

#include "api/api_int.h"

/* DescribeEndpoints' CachePeriodInMinutes: DynamoDB's (a day). */
#define ENDPOINT_CACHE_MINUTES 1440

static kura_status run_describe_endpoints(api_call *c)
{
    const char *addr = c->ctx->endpoint;
    if (!addr || !*addr) addr = KURA_DEFAULT_ENDPOINT;
    /* the address comes from a header: bytes that are not UTF-8 are written as U+FFFD rather
     * than failing a call that cannot fail at DynamoDB */
    kura_status s = jw_raw(&c->out, "\"Endpoints\":[{\"Address\":");
    if (s == KURA_OK) s = jw_message(&c->out, addr);
    if (s == KURA_OK) s = api_out_int(c, "CachePeriodInMinutes", ENDPOINT_CACHE_MINUTES);
    return s == KURA_OK ? jw_raw(&c->out, "}]") : s;
}

/* DynamoDB's default quotas (capacity units) of a new account, per region. */
#define ACCOUNT_MAX_CAPACITY_UNITS 80000
#define TABLE_MAX_CAPACITY_UNITS 40000

static kura_status run_describe_limits(api_call *c)
{
    kura_status s = api_out_int(c, "AccountMaxReadCapacityUnits", ACCOUNT_MAX_CAPACITY_UNITS);
    if (s == KURA_OK)
        s = api_out_int(c, "AccountMaxWriteCapacityUnits", ACCOUNT_MAX_CAPACITY_UNITS);
    if (s == KURA_OK) s = api_out_int(c, "TableMaxReadCapacityUnits", TABLE_MAX_CAPACITY_UNITS);
    if (s == KURA_OK) s = api_out_int(c, "TableMaxWriteCapacityUnits", TABLE_MAX_CAPACITY_UNITS);
    return s;
}

const api_op api_op_describe_endpoints = {"DescribeEndpoints", run_describe_endpoints};
const api_op api_op_describe_limits = {"DescribeLimits", run_describe_limits};
