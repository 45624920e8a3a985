/*
 * heat_fixture.h - a heat report (docs/server.md, "The heat report") shared by the tests of
 * its renderers (kura_heat_test.c: text and PNG; server_heat_page_test.c: the page): a table
 * with an odd key (a newline, an escape sequence and markup in its value), an over-limit key
 * and a two-attribute key; and a GSI whose key ACTIVE takes 96% of the write limit, with its
 * verdict.
 */
#ifndef KURA_TESTS_HEAT_FIXTURE_H
#define KURA_TESTS_HEAT_FIXTURE_H

static const char heat_fixture[] =
    "{\"generated_at_ms\":1764326400123,\"window_seconds\":60,\"throttling\":true,"
    "\"key_limits\":{\"read\":3000,\"write\":1000},\"targets\":["
    "{\"table\":\"Events\",\"index\":null,\"kind\":\"table\",\"billing_mode\":\"PROVISIONED\","
    "\"provisioned\":{\"read\":5,\"write\":100},\"rate\":{\"read\":1.5,\"write\":80.0},"
    "\"peak\":{\"read\":3.0,\"write\":120.0},\"throttled\":{\"reads\":0,\"writes\":7},"
    "\"timeline\":[{\"t\":1764326399,\"read\":1.0,\"write\":90.0,\"throttled_reads\":0,"
    "\"throttled_writes\":7},{\"t\":1764326400,\"read\":2.0,\"write\":70.0,"
    "\"throttled_reads\":0,\"throttled_writes\":0}],"
    "\"hot_keys\":[{\"key\":{\"pk\":{\"S\":\"line1\\nline2\\u001b[31m<script>alert(1)</script>"
    "\"}},\"read\":0.5,\"write\":40.0,\"read_share\":0.0002,\"write_share\":0.04,"
    "\"provisioned_share\":0.4,\"error\":0.0,\"throttled\":3},"
    "{\"key\":{\"pk\":{\"N\":\"42\"}},\"read\":0.0,\"write\":1500.0,\"read_share\":0.0,"
    "\"write_share\":1.5,\"provisioned_share\":15.0,\"error\":0.0,\"throttled\":4}],"
    "\"hot_items\":[{\"key\":{\"pk\":{\"S\":\"dev-7\"},\"day\":{\"N\":\"20\"}},\"read\":0.0,"
    "\"write\":30.0,\"read_share\":0.0,\"write_share\":0.03,\"provisioned_share\":0.3,"
    "\"error\":1.0,\"throttled\":0}],"
    "\"throttled_keys\":[{\"key\":{\"pk\":{\"N\":\"42\"}},\"throttled\":4}],"
    "\"collections\":[{\"key\":{\"pk\":{\"S\":\"dev-7\"}},\"size_bytes\":123456}],"
    "\"verdicts\":[]},"
    "{\"table\":\"Orders\",\"index\":\"StatusIndex\",\"kind\":\"gsi\",\"billing_mode\":"
    "\"PAY_PER_REQUEST\",\"provisioned\":null,\"rate\":{\"read\":0.0,\"write\":930.0},"
    "\"peak\":{\"read\":0.0,\"write\":1000.0},\"throttled\":{\"reads\":0,\"writes\":1204},"
    "\"timeline\":[{\"t\":1764326400,\"read\":0.0,\"write\":990.0,\"throttled_reads\":0,"
    "\"throttled_writes\":17}],"
    "\"hot_keys\":[{\"key\":{\"status\":{\"S\":\"ACTIVE\"}},\"read\":0.0,\"write\":960.0,"
    "\"read_share\":0.0,\"write_share\":0.96,\"provisioned_share\":null,\"error\":0.0,"
    "\"throttled\":1204}],\"hot_items\":[],"
    "\"throttled_keys\":[{\"key\":{\"status\":{\"S\":\"ACTIVE\"}},\"throttled\":1204}],"
    "\"collections\":[],\"verdicts\":[\"GSI StatusIndex: key ACTIVE takes 96% of its "
    "partition's write limit; 1,204 writes throttled in the last minute\"]}]}";

static const char heat_empty[] =
    "{\"generated_at_ms\":1,\"window_seconds\":60,\"throttling\":false,"
    "\"key_limits\":{\"read\":3000,\"write\":1000},\"targets\":[]}";

#endif
