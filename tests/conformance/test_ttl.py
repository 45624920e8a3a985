"""test_ttl.py - This file contains the conformance tests of Time to Live over HTTP:
UpdateTimeToLive's and DescribeTimeToLive's request checks, response shapes and errors through
boto3 (and the raw JSON for exact member names), ENABLED at once after enabling (as
DynamoDB answers) and DISABLING -> DISABLED, "Time to live has been modified multiple times within a fixed interval"
at the default one-hour interval, and expired items disappearing from a table and its GSI
while items whose attribute is in the future, not a Number, missing or more than five years old
stay. The sweeper runs every 50 ms (--ttl-sweep-ms) and --ttl-clock-offset moves its clock, so
nothing waits for real expiry.


Shapes and messages are DynamoDB's documented ones (API reference UpdateTimeToLive,
DescribeTimeToLive; TimeToLiveSpecification {Enabled, AttributeName}, TimeToLiveDescription
{TimeToLiveStatus, AttributeName}).
"""

import time

import pytest
from botocore.exceptions import ClientError

from conftest import call, make_client, unique_name, wait_until

OFFSET = 7200  # the fast server's clock runs this many seconds ahead


@pytest.fixture(scope="module")
def fast(server_factory):
    """A server that allows changes 1 ms apart and shows DISABLING for 1 ms (on the
    real clock: an injected clock, such as --ttl-clock-offset's, counts whole seconds)."""
    return server_factory(args=["--ttl-change-interval-ms", "1", "--ttl-transition-ms", "1"])


@pytest.fixture(scope="module")
def sweeping(server_factory):
    """A server that sweeps every 50 ms with its TTL clock OFFSET seconds ahead."""
    return server_factory(args=["--ttl-sweep-ms", "50", "--ttl-clock-offset", str(OFFSET)])


@pytest.fixture(scope="module")
def slow(server_factory):
    """A server with DynamoDB's one-hour change interval and the default transition."""
    return server_factory()


def new_table(client, gsi=False):
    name = unique_name("ttl")
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    kw = {}
    if gsi:
        attrs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    client.create_table(TableName=name, AttributeDefinitions=attrs,
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        BillingMode="PAY_PER_REQUEST", **kw)
    return name


def error(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


def spec(enabled, attr="exp"):
    return {"Enabled": enabled, "AttributeName": attr}


def test_update_and_describe_shapes(fast):
    c = make_client(fast.url)
    name = new_table(c)
    assert c.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "DISABLED"}
    r = call(fast, "UpdateTimeToLive", {"TableName": name, "TimeToLiveSpecification": spec(True)})
    assert r.status == 200, r
    assert r.json() == {"TimeToLiveSpecification": {"Enabled": True, "AttributeName": "exp"}}
    time.sleep(0.01)  # past the 1 ms transition
    r = call(fast, "DescribeTimeToLive", {"TableName": name})
    assert r.json() == {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED",
                                                  "AttributeName": "exp"}}
    time.sleep(0.01)  # past the 1 ms change interval
    resp = c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(False))
    assert resp["TimeToLiveSpecification"] == {"Enabled": False, "AttributeName": "exp"}
    time.sleep(0.01)
    assert c.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "DISABLED"}


def test_errors(fast):
    c = make_client(fast.url)
    name = new_table(c)
    with pytest.raises(ClientError) as e:
        c.update_time_to_live(TableName="no-such-table", TimeToLiveSpecification=spec(True))
    assert error(e) == ("ResourceNotFoundException",
                        "Requested resource not found: Table: no-such-table not found")
    with pytest.raises(ClientError) as e:
        c.describe_time_to_live(TableName="no-such-table")
    assert error(e)[0] == "ResourceNotFoundException"
    cases = [
        ({"TableName": name},
         "1 validation error detected: Value null at 'timeToLiveSpecification' failed to "
         "satisfy constraint: Member must not be null"),
        ({"TableName": name, "TimeToLiveSpecification": {"AttributeName": "exp"}},
         "1 validation error detected: Value null at 'timeToLiveSpecification.enabled' failed "
         "to satisfy constraint: Member must not be null"),
        ({"TableName": name, "TimeToLiveSpecification": {"Enabled": True}},
         "1 validation error detected: Value null at 'timeToLiveSpecification.attributeName' "
         "failed to satisfy constraint: Member must not be null"),
        ({"TableName": name, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": ""}},
         "1 validation error detected: Value '' at 'timeToLiveSpecification.attributeName' "
         "failed to satisfy constraint: Member must have length greater than or equal to 1"),
    ]
    for body, msg in cases:
        r = call(fast, "UpdateTimeToLive", body)
        assert (r.status, r.error_type, r.message) == (400, "ValidationException", msg), body
    with pytest.raises(ClientError) as e:
        c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(False))
    assert error(e) == ("ValidationException", "TimeToLive is already disabled")
    c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True))
    time.sleep(0.01)
    with pytest.raises(ClientError) as e:
        c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True))
    assert error(e) == ("ValidationException", "TimeToLive is already enabled")
    with pytest.raises(ClientError) as e:
        c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True, "other"))
    assert error(e) == ("ValidationException", "TimeToLive is active on a different "
                        "AttributeName: current AttributeName is exp")


def test_change_within_the_interval(slow):
    c = make_client(slow.url)
    name = new_table(c)
    c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True))
    d = c.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert d["AttributeName"] == "exp"
    assert d["TimeToLiveStatus"] == "ENABLED"  # at once, as DynamoDB
    with pytest.raises(ClientError) as e:
        c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(False))
    assert error(e) == ("ValidationException",
                        "Time to live has been modified multiple times within a fixed interval")


def test_expired_items_disappear(sweeping):
    c = make_client(sweeping.url)
    name = new_table(c, gsi=True)
    now = int(time.time())
    items = {
        "expired": {"N": str(now + 60)},            # expired on the server's clock (+2 h)
        "future": {"N": str(now + OFFSET + 3600)},
        "string": {"S": str(now)},
        "old": {"N": str(now - 6 * 365 * 86400)},    # more than five years ago
        "missing": None,
    }
    for pk, exp in items.items():
        it = {"pk": {"S": pk}, "g": {"S": "all"}}
        if exp:
            it["exp"] = exp
        c.put_item(TableName=name, Item=it)
    # still there (not enabled yet), readable however expired
    assert "Item" in c.get_item(TableName=name, Key={"pk": {"S": "expired"}}, ConsistentRead=True)
    c.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True))
    wait_until(lambda: "Item" not in c.get_item(TableName=name, Key={"pk": {"S": "expired"}},
                                               ConsistentRead=True))

    def gsi_keys():
        r = c.query(TableName=name, IndexName="ByG", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "all"}})
        return sorted(i["pk"]["S"] for i in r["Items"])

    wait_until(lambda: gsi_keys() == ["future", "missing", "old", "string"])
    time.sleep(0.2)  # a few more sweeps
    r = c.scan(TableName=name)
    assert sorted(i["pk"]["S"] for i in r["Items"]) == ["future", "missing", "old", "string"]
