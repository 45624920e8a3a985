"""test_throttle.py - This file contains the load tests of kura-server --throttle (issue 24):
DynamoDB's per-partition-key limit (1,000 WCU a second per partition-key value, one second of
burst), a PROVISIONED table's throughput after its burst, a GSI on a low-cardinality attribute
back-pressuring the base table's writes, BatchWriteItem's UnprocessedItems and
TransactWriteItems' ThrottlingError under a hot key, BatchGetItem's UnprocessedKeys past a
key's 3,000 RCU, the SDK's own retries losing and doubling nothing, the same load never
throttled without --throttle, and GET /kura/heat naming the hot key.

Why the loads look as they do. The tests count outcomes, never durations. Items are 10 KB (10
WCU each) so a few hundred puts exceed 1,000 WCU on one key even from a slow client. The
sender is paced to at most one request every PACE_S seconds (about 2,860 WCU a second): above
the 1,000 WCU of one key, below the 4,000 WCU a new on-demand table serves in a second, so the
same load spread over cold keys or shards must never be throttled. What a key can have
accepted is bounded by its burst plus its refill over the measured elapsed time; when the
client was too slow for the load to exceed that bound (a very loaded machine), the test skips
saying so rather than pass without having tested anything.
"""

import json
import re
import time
import urllib.request

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import call, make_client, read_all, unique_name, wait_active, wait_until

PACE_S = 0.0035          # at most one request per 3.5 ms: <= ~2,860 WCU/s of 10 WCU items
PAD = "d" * 9900         # an item of ~9.9 KB: 10 WCU
KEY_WCU = 1000           # a partition-key value's write limit, units a second
MSG_GSI = ("Throughput exceeds the current capacity for one or more global secondary indexes. "
           "DynamoDB is automatically scaling your index so please try again shortly.")
MSG_PEAK = ("Throughput exceeds the current capacity of your table or index. DynamoDB is "
            "automatically scaling your table or index so please try again shortly. If "
            "exceptions persist, check if you have a hot partition: "
            "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
            "bp-partition-key-design.html")
MSG_PROVISIONED = ("The level of configured provisioned throughput for the table was exceeded. "
                   "Consider increasing your provisioning level with the UpdateTable API.")


@pytest.fixture(scope="module")
def thr_server(server_factory):
    return server_factory(args=["--throttle"], in_memory=True)


@pytest.fixture(scope="module")
def thr(thr_server):
    return make_client(thr_server.url)


def create(client, name, range_key=True, gsi=None, provisioned=None):
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        attrs.append({"AttributeName": "sk", "AttributeType": "S"})
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
    kw = {"BillingMode": "PAY_PER_REQUEST"}
    if provisioned:
        kw = {"BillingMode": "PROVISIONED",
              "ProvisionedThroughput": {"ReadCapacityUnits": provisioned[0],
                                        "WriteCapacityUnits": provisioned[1]}}
    if gsi:
        attrs.append({"AttributeName": gsi[1], "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": gsi[0],
            "KeySchema": [{"AttributeName": gsi[1], "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    client.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=schema, **kw)
    wait_active(client, name)
    return name


class Load:
    """The outcomes of a paced sequence of requests: accepted indexes, refusals (index, code,
    message) and the elapsed time from the first send to the last answer."""

    def __init__(self):
        self.ok, self.refused, self.elapsed = [], [], 0.0

    def codes(self):
        return {(code, msg) for _, code, msg in self.refused}


def paced(n, send, pace=PACE_S):
    """Calls send(i) for i in 0..n-1, no two calls less than `pace` seconds apart; a
    ClientError counts as a refusal of i. Returns a Load."""
    load = Load()
    t0 = last = time.monotonic()
    for i in range(n):
        now = time.monotonic()
        if i and now < last + pace:
            time.sleep(last + pace - now)
        last = time.monotonic()
        try:
            send(i)
            load.ok.append(i)
        except ClientError as e:
            load.refused.append((i, e.response["Error"]["Code"], e.response["Error"]["Message"]))
    load.elapsed = time.monotonic() - t0
    return load


def skip_if_slow(units_sent, elapsed, limit=KEY_WCU, burst_s=1.0, what="the hot key"):
    """Skips when `units_sent` over `elapsed` seconds could all fit in `limit` units a second
    plus `burst_s` seconds of burst: the client was too slow to exceed the limit."""
    if units_sent <= limit * (burst_s + elapsed) * 1.1:
        pytest.skip("client too slow: %d units in %.2f s never exceed %s's %d units a second "
                    "(plus its burst)" % (units_sent, elapsed, what, limit))


def put_hot(client, table, pk_of):
    def send(i):
        client.put_item(TableName=table, Item={"pk": {"S": pk_of(i)}, "sk": {"S": "%06d" % i},
                                               "d": {"S": PAD}})
    return send


def heat(server, table, window=None):
    q = "?table=" + table + ("&window=%d" % window if window else "")
    with urllib.request.urlopen(server.url + "/kura/heat" + q, timeout=30) as r:
        assert r.status == 200
        return json.loads(r.read().decode("utf-8"))


def item_count(client, table):
    return len(read_all(client, "scan", TableName=table, ConsistentRead=True))


# ---- one hot key against cold keys and shards ---------------------------------------------------

@pytest.fixture(scope="module")
def hot_load(thr):
    """400 puts of 10 WCU on one partition-key value, paced: the load of the tests below."""
    table = create(thr, unique_name("hot"))
    load = paced(400, put_hot(thr, table, lambda i: "hot"))
    return table, load


def test_hot_key_throttles(thr, hot_load):
    table, load = hot_load
    skip_if_slow(400 * 10, load.elapsed)
    assert load.refused, "400 puts of 10 WCU on one key in %.2f s: none throttled" % load.elapsed
    assert load.codes() == {("ThrottlingException", MSG_PEAK)}
    # at most a second of burst plus the refill over the elapsed time got through
    assert len(load.ok) * 10 <= KEY_WCU * (1.0 + load.elapsed) + 10
    assert len(load.ok) >= 100  # the first second's worth (the burst) fits
    # every acknowledged put is there, no refused one is
    got = {it["sk"]["S"] for it in read_all(thr, "query", TableName=table, ConsistentRead=True,
                                             KeyConditionExpression="pk = :p",
                                             ExpressionAttributeValues={":p": {"S": "hot"}})}
    assert got == {"%06d" % i for i in load.ok}


def test_heat_names_hot_key(thr_server, hot_load):
    table, load = hot_load
    if not load.refused:
        pytest.skip("the hot-key load was not throttled (see test_hot_key_throttles)")
    rep = heat(thr_server, table)
    assert rep["throttling"] is True
    assert rep["key_limits"] == {"read": 3000, "write": 1000}
    (tg,) = [t for t in rep["targets"] if t["table"] == table and t["kind"] == "table"]
    assert tg["index"] is None and tg["billing_mode"] == "PAY_PER_REQUEST"
    assert tg["throttled"]["writes"] == len(load.refused)
    assert tg["hot_keys"][0]["key"] == {"pk": {"S": "hot"}}
    assert tg["hot_keys"][0]["throttled"] == len(load.refused)
    assert tg["throttled_keys"][0] == {"key": {"pk": {"S": "hot"}}, "throttled": len(load.refused)}
    assert sum(s["throttled_writes"] for s in tg["timeline"]) == len(load.refused)
    want = re.compile(r"^Table %s: key hot takes \d+%% of its partition's write limit in its "
                      r"busiest second; "
                      r"%s writes throttled in the last minute$"
                      % (re.escape(table), "{:,}".format(len(load.refused))))
    assert any(want.match(v) for v in tg["verdicts"]), tg["verdicts"]


def test_cold_keys_same_rate_not_throttled(thr):
    table = create(thr, unique_name("cold"))
    load = paced(400, put_hot(thr, table, lambda i: "cold-%03d" % (i % 100)))
    assert load.refused == []
    assert item_count(thr, table) == 400


def test_ten_shards_not_throttled(thr):
    table = create(thr, unique_name("shard"))
    load = paced(400, put_hot(thr, table, lambda i: "hot#%d" % (i % 10)))
    assert load.refused == []
    assert item_count(thr, table) == 400


# ---- a provisioned table: burst, throttle, UpdateTable ------------------------------------------

def test_provisioned_burst_then_throttle_then_update(thr):
    table = create(thr, unique_name("prov"), range_key=False, provisioned=(1000, 100))

    def send(i):
        thr.put_item(TableName=table, Item={"pk": {"S": "p%04d" % i}, "d": {"S": PAD}})
    load = paced(100, send, pace=0)
    skip_if_slow(100 * 10, load.elapsed, limit=100, what="the table's 100 WCU")
    assert load.ok[:10] == list(range(10)), "the burst (one second: 100 WCU) was refused"
    assert load.refused
    assert load.codes() == {("ProvisionedThroughputExceededException", MSG_PROVISIONED)}
    assert len(load.ok) * 10 <= 100 * (1.0 + load.elapsed) + 10
    assert item_count(thr, table) == len(load.ok)
    for i, _, _ in load.refused[:5]:
        assert "Item" not in thr.get_item(TableName=table, Key={"pk": {"S": "p%04d" % i}})

    thr.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 1000,
                                                             "WriteCapacityUnits": 10000})
    desc = wait_active(thr, table)
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 10000
    time.sleep(0.1)  # >= 10 WCU even at the old rate: the first put fits
    # paced at ~2,860 WCU/s, well under the new 10,000 WCU/s: every put fits
    after = paced(50, lambda i: send(1000 + i))
    assert after.refused == [], (after.ok, after.elapsed)
    assert item_count(thr, table) == len(load.ok) + 50


def test_provisioned_update_credits_new_rate_from_update(thr):
    table = create(thr, unique_name("provup"), range_key=False, provisioned=(1000, 100))

    def send(i):
        thr.put_item(TableName=table, Item={"pk": {"S": "p%04d" % i}, "d": {"S": PAD}})
    before = paced(30, send, pace=0)
    assert before.refused  # the 100 WCU burst is spent
    thr.update_table(TableName=table, ProvisionedThroughput={"ReadCapacityUnits": 1000,
                                                             "WriteCapacityUnits": 1000})
    wait_active(thr, table)
    time.sleep(2.0)  # >= 2,000 WCU at the new rate (200 at the old one)
    load = paced(300, lambda i: send(100 + i), pace=0)
    if load.elapsed >= 2.5:
        pytest.skip("client too slow (%.2f s) to tell the rates apart" % load.elapsed)
    # at the old rate for the 2 s: at most 20 + 100 a second of puts; at the new: 200 + that
    assert len(load.ok) > 25 + 100 * load.elapsed, (len(load.ok), load.elapsed)


# ---- a GSI on a low-cardinality attribute ------------------------------------------------------

STATUS = ["ACTIVE"] * 8 + ["PENDING", "DONE"]


def test_gsi_low_cardinality_throttles_base_writes(thr):
    table = create(thr, unique_name("gsi"), range_key=False, gsi=("StatusIndex", "status"))

    def send(i):
        thr.put_item(TableName=table, Item={"pk": {"S": "o%05d" % i},
                                            "status": {"S": STATUS[i % 10]}, "d": {"S": PAD}})
    load = paced(600, send)
    skip_if_slow(480 * 10, load.elapsed, what="the GSI key ACTIVE")
    assert load.refused, "480 ACTIVE puts of 10 WCU in %.2f s: none throttled" % load.elapsed
    assert load.codes() == {("ThrottlingException", MSG_GSI)}
    # only ACTIVE's index partition was hot: PENDING and DONE (60 each) all went through
    assert all(STATUS[i % 10] == "ACTIVE" for i, _, _ in load.refused)
    # nothing half-applied: a refused put left no base item (and so no index entry)
    for i, _, _ in load.refused:
        r = thr.get_item(TableName=table, Key={"pk": {"S": "o%05d" % i}}, ConsistentRead=True)
        assert "Item" not in r, "refused put %d is in the table" % i
    assert item_count(thr, table) == len(load.ok)
    active_ok = sum(1 for i in load.ok if STATUS[i % 10] == "ACTIVE")

    def index_count():
        return len(read_all(thr, "query", TableName=table, IndexName="StatusIndex",
                            KeyConditionExpression="#s = :s",
                            ExpressionAttributeNames={"#s": "status"},
                            ExpressionAttributeValues={":s": {"S": "ACTIVE"}})) == active_ok
    wait_until(index_count, timeout=60, what="StatusIndex holding exactly the accepted puts")


# ---- BatchWriteItem and TransactWriteItems under a hot key --------------------------------------

def test_batch_write_unprocessed_then_retried(thr):
    table = create(thr, unique_name("batch"))
    item = lambda i: {"PutRequest": {"Item": {"pk": {"S": "hot"}, "sk": {"S": "%06d" % i},
                                              "d": {"S": PAD}}}}
    unprocessed, errors = [], set()

    def send(b):
        reqs = [item(b * 25 + j) for j in range(25)]
        try:
            r = thr.batch_write_item(RequestItems={table: reqs})
        except ClientError as e:
            errors.add((e.response["Error"]["Code"], e.response["Error"]["Message"]))
            unprocessed.extend(reqs)  # all refused: the error, nothing written
            return
        unprocessed.extend(r.get("UnprocessedItems", {}).get(table, []))
    load = paced(16, send, pace=25 * PACE_S)
    assert load.refused == []
    skip_if_slow(400 * 10, load.elapsed)
    assert unprocessed, "400 puts of 10 WCU on one key in batches: none unprocessed"
    assert errors <= {("ThrottlingException", MSG_PEAK)}
    first_unprocessed = len(unprocessed)
    pending, rounds = unprocessed, 0
    while pending:
        rounds += 1
        assert rounds <= 500, "%d items still unprocessed" % len(pending)
        time.sleep(0.05)
        batch, pending = pending[:25], pending[25:]
        try:
            r = thr.batch_write_item(RequestItems={table: batch})
            pending += r.get("UnprocessedItems", {}).get(table, [])
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ThrottlingException"
            pending += batch
    got = [it["sk"]["S"] for it in read_all(thr, "query", TableName=table, ConsistentRead=True,
                                            KeyConditionExpression="pk = :p",
                                            ExpressionAttributeValues={":p": {"S": "hot"}})]
    assert sorted(got) == ["%06d" % i for i in range(400)], \
        "after retrying %d unprocessed items" % first_unprocessed


def test_batch_get_unprocessed_keys_then_retried(thr):
    """Reads of one key past 3,000 RCU a second: 10 items of 40 KB (10 RCU each, strongly
    consistent, whatever the projection) read in batches of 10, paced under the table's
    12,000 RCU."""
    table = create(thr, unique_name("bget"))
    for j in range(10):
        thr.put_item(TableName=table, Item={"pk": {"S": "hot"}, "sk": {"S": "%02d" % j},
                                            "d": {"S": "r" * 40000}})
    keys = [{"pk": {"S": "hot"}, "sk": {"S": "%02d" % j}} for j in range(10)]
    read, unprocessed, errors = [], [], set()

    def send(b):
        req = {table: {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": "sk"}}
        try:
            r = thr.batch_get_item(RequestItems=req)
        except ClientError as e:
            errors.add((e.response["Error"]["Code"], e.response["Error"]["Message"]))
            unprocessed.append(req)
            return
        read.extend(it["sk"]["S"] for it in r["Responses"][table])
        if r.get("UnprocessedKeys"):
            unprocessed.append(r["UnprocessedKeys"])
    load = paced(150, send, pace=0.01)
    assert load.refused == []
    skip_if_slow(150 * 100, load.elapsed, limit=3000, what="the hot key's 3,000 RCU")
    assert unprocessed, "150 batches of 100 RCU on one key: no key unprocessed"
    assert errors <= {("ThrottlingException", MSG_PEAK)}
    rounds = 0
    while unprocessed:
        rounds += 1
        assert rounds <= 1000, "keys still unprocessed: %r" % unprocessed[:1]
        time.sleep(0.02)
        req = unprocessed.pop(0)
        try:
            r = thr.batch_get_item(RequestItems=req)
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ThrottlingException"
            unprocessed.append(req)
            continue
        read.extend(it["sk"]["S"] for it in r["Responses"][table])
        if r.get("UnprocessedKeys"):
            unprocessed.append(r["UnprocessedKeys"])
    # every key of every batch read exactly once, in the first answer or a retry
    assert sorted(read) == sorted(["%02d" % j for j in range(10)] * 150)


BIG = "b" * 300000  # 300 WCU: a put or two empties a key's second of burst


def test_transact_write_hot_key_cancelled_with_throttling_error(thr_server, thr):
    table = create(thr, unique_name("txn"))
    cancelled = 0
    for attempt in range(10):
        # empty the hot key's bucket: puts until one is refused
        for n in range(100):
            try:
                thr.put_item(TableName=table, Item={"pk": {"S": "hot"}, "sk": {"S": "fill"},
                                                    "d": {"S": BIG}})
            except ClientError as e:
                assert e.response["Error"]["Code"] == "ThrottlingException"
                break
        else:
            pytest.fail("100 puts of 300 WCU on one key: none throttled")
        cold = "cold-%d" % attempt
        r = call(thr_server, "TransactWriteItems", {"TransactItems": [
            {"Put": {"TableName": table, "Item": {"pk": {"S": "hot"}, "sk": {"S": "t%d" % attempt},
                                                  "d": {"S": BIG}}}},
            {"Put": {"TableName": table, "Item": {"pk": {"S": cold}, "sk": {"S": "x"}}}}]})
        if r.status == 200:
            continue  # the key refilled between the refusal and the transaction: try again
        assert r.status == 400, r
        assert r.error_type == "TransactionCanceledException", r
        body = r.json()
        assert [x["Code"] for x in body["CancellationReasons"]] == ["ThrottlingError", "None"], body
        assert "[ThrottlingError, None]" in r.message, r.message
        # nothing of the cancelled transaction was applied
        for key in ({"pk": {"S": "hot"}, "sk": {"S": "t%d" % attempt}},
                    {"pk": {"S": cold}, "sk": {"S": "x"}}):
            assert "Item" not in thr.get_item(TableName=table, Key=key, ConsistentRead=True)
        cancelled += 1
    assert cancelled >= 1, "10 transactions right after a throttled put: none cancelled"


# ---- the SDK's own retries -------------------------------------------------------------------

def test_sdk_retries_lose_and_double_nothing(thr_server):
    cfg = Config(retries={"mode": "standard", "max_attempts": 20}, parameter_validation=False,
                 connect_timeout=10, read_timeout=60)
    sdk = boto3.client("dynamodb", endpoint_url=thr_server.url, region_name="us-east-1",
                       aws_access_key_id="AKIDKURATEST", aws_secret_access_key="x", config=cfg)
    table = create(sdk, unique_name("sdk"))
    n, retries = 200, 0
    t0 = time.monotonic()
    for i in range(n):
        r = sdk.update_item(TableName=table, Key={"pk": {"S": "hot"}, "sk": {"S": "%06d" % i}},
                            UpdateExpression="SET d = :d ADD n :one",
                            ExpressionAttributeValues={":d": {"S": PAD}, ":one": {"N": "1"}})
        retries += r["ResponseMetadata"]["RetryAttempts"]
    elapsed = time.monotonic() - t0
    if retries == 0:
        skip_if_slow(n * 10, elapsed)
    assert retries > 0, "%d updates of 10 WCU on one key in %.2f s: none retried" % (n, elapsed)
    items = read_all(sdk, "query", TableName=table, ConsistentRead=True,
                     KeyConditionExpression="pk = :p",
                     ExpressionAttributeValues={":p": {"S": "hot"}})
    assert sorted(it["sk"]["S"] for it in items) == ["%06d" % i for i in range(n)]
    doubled = [it["sk"]["S"] for it in items if it["n"]["N"] != "1"]
    assert doubled == [], "applied more than once: %r" % doubled


# ---- without --throttle nothing is throttled ----------------------------------------------------

def test_default_server_never_throttles(server_factory):
    srv = server_factory(in_memory=True)
    c = make_client(srv.url)
    table = create(c, unique_name("nothr"))
    load = paced(400, put_hot(c, table, lambda i: "hot"), pace=0)
    assert load.refused == []
    reqs = [{"PutRequest": {"Item": {"pk": {"S": "hot"}, "sk": {"S": "b%03d" % j},
                                     "d": {"S": PAD}}}} for j in range(25)]
    for _ in range(8):
        r = c.batch_write_item(RequestItems={table: reqs})
        assert r["UnprocessedItems"] == {}
    assert item_count(c, table) == 425
    rep = heat(srv, table)
    assert rep["throttling"] is False
    (tg,) = [t for t in rep["targets"] if t["table"] == table]
    assert tg["throttled"] == {"reads": 0, "writes": 0}
