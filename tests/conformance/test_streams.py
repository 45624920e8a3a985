"""test_streams.py - DynamoDB Streams against kura-server (issue 17): StreamSpecification at
CreateTable, UpdateTable and DescribeTable; ListStreams, DescribeStream, GetShardIterator and
GetRecords through boto3's dynamodbstreams client; the record shapes of every view type;
INSERT, MODIFY and REMOVE from every write operation, nothing for a write that changes nothing;
the errors DynamoDB sends.

Developed against DynamoDB Local 1.25.1 (KURA_ENDPOINT=http://127.0.0.1:8001); where Local
differs from DynamoDB's documentation the documentation wins and the test says so: Local
rounds ApproximateCreationDateTime down to the minute (DynamoDB: to the second) and names its
region "ddblocal" whatever the client's (DynamoDB and kura: the region the client signed for,
test_region.py). A table's stream has one shard per partition in kura (one in Local), so
every reading goes over all shards and orders records per item.
"""

import time

import boto3
import pytest
from botocore.config import Config

from conftest import make_client, unique_name, wait_active

VIEWS = ("KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES")


@pytest.fixture(scope="module")
def streams(server):
    cfg = Config(retries={"max_attempts": 0}, parameter_validation=False)
    return boto3.client("dynamodbstreams", endpoint_url=server.url, region_name="us-east-1",
                        aws_access_key_id="AKIDKURATEST", aws_secret_access_key="kura-test-secret",
                        config=cfg)


@pytest.fixture(scope="module")
def ddb(server):
    return make_client(server.url)


def stream_table(ddb, view="NEW_AND_OLD_IMAGES", range_key=False):
    name = unique_name("st")
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        attrs.append({"AttributeName": "sk", "AttributeType": "S"})
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
    desc = ddb.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=schema,
                            BillingMode="PAY_PER_REQUEST",
                            StreamSpecification={"StreamEnabled": True,
                                                 "StreamViewType": view})["TableDescription"]
    wait_active(ddb, name)
    return name, desc


def error_of(fn, **kw):
    with pytest.raises(Exception) as e:
        fn(**kw)
    err = e.value.response["Error"]
    return err["Code"], err["Message"]


def read_stream(streams, arn, want=None, timeout=10.0):
    """Every record of the stream from TRIM_HORIZON, shard by shard (in each shard's order);
    waits until at least `want` records came (records appear within ms of the write)."""
    deadline = time.monotonic() + timeout
    while True:
        shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        records = []
        for sh in shards:
            it = streams.get_shard_iterator(StreamArn=arn, ShardId=sh["ShardId"],
                                            ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while it:
                page = streams.get_records(ShardIterator=it)
                records.extend(page["Records"])
                if not page["Records"]:
                    break
                it = page.get("NextShardIterator")
        if want is None or len(records) >= want or time.monotonic() > deadline:
            return records
        time.sleep(0.05)


def by_item(records):
    """The records' (eventName, pk) per item, in order."""
    out = {}
    for r in records:
        out.setdefault(r["dynamodb"]["Keys"]["pk"]["S"], []).append(r["eventName"])
    return out


def test_create_and_describe(ddb, streams):
    name, desc = stream_table(ddb)
    assert desc["StreamSpecification"] == {"StreamEnabled": True,
                                           "StreamViewType": "NEW_AND_OLD_IMAGES"}
    label = desc["LatestStreamLabel"]
    assert len(label) == 23 and label[10] == "T" and label[19] == "."
    assert desc["LatestStreamArn"] == desc["TableArn"] + "/stream/" + label
    t = ddb.describe_table(TableName=name)["Table"]
    assert t["StreamSpecification"] == desc["StreamSpecification"]
    assert t["LatestStreamArn"] == desc["LatestStreamArn"]
    listed = streams.list_streams(TableName=name)["Streams"]
    assert listed == [{"StreamArn": desc["LatestStreamArn"], "TableName": name,
                       "StreamLabel": label}]
    sd = streams.describe_stream(StreamArn=desc["LatestStreamArn"])["StreamDescription"]
    assert sd["StreamArn"] == desc["LatestStreamArn"]
    assert sd["StreamLabel"] == label
    assert sd["StreamStatus"] == "ENABLED"
    assert sd["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert sd["TableName"] == name
    assert sd["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert sd["Shards"], sd
    for sh in sd["Shards"]:
        assert sh["ShardId"].startswith("shardId-")
        assert 21 <= len(sh["SequenceNumberRange"]["StartingSequenceNumber"]) <= 40
        assert "EndingSequenceNumber" not in sh["SequenceNumberRange"]


def test_events_of_every_write(ddb, streams):
    name, desc = stream_table(ddb)
    arn = desc["LatestStreamArn"]
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})      # INSERT
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"N": "1"}})      # nothing
    ddb.update_item(TableName=name, Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "2"}})               # MODIFY
    ddb.update_item(TableName=name, Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "2"}})               # nothing
    ddb.delete_item(TableName=name, Key={"pk": {"S": "a"}})                      # REMOVE
    ddb.delete_item(TableName=name, Key={"pk": {"S": "zz"}})                     # nothing
    ddb.batch_write_item(RequestItems={name: [
        {"PutRequest": {"Item": {"pk": {"S": "b"}}}},
        {"PutRequest": {"Item": {"pk": {"S": "c"}}}}]})                          # 2 INSERTs
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": name, "Item": {"pk": {"S": "d"}}}},
        {"Delete": {"TableName": name, "Key": {"pk": {"S": "b"}}}}])             # INSERT, REMOVE
    records = read_stream(streams, arn, want=7)
    assert by_item(records) == {"a": ["INSERT", "MODIFY", "REMOVE"], "b": ["INSERT", "REMOVE"],
                                "c": ["INSERT"], "d": ["INSERT"]}
    a = [r for r in records if r["dynamodb"]["Keys"]["pk"]["S"] == "a"]
    for r in records:
        assert r["eventVersion"] == "1.1"
        assert r["eventSource"] == "aws:dynamodb"
        assert r["awsRegion"]
        assert r["eventID"]
        assert r["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert r["dynamodb"]["ApproximateCreationDateTime"]
    assert a[0]["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert "OldImage" not in a[0]["dynamodb"]
    assert a[1]["dynamodb"]["OldImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert a[1]["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}}
    assert a[2]["dynamodb"]["OldImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}}
    assert "NewImage" not in a[2]["dynamodb"]
    # SizeBytes: the sizes of Keys and the images the record carries
    assert [r["dynamodb"]["SizeBytes"] for r in a] == [9, 15, 9]
    # sequence numbers grow within a shard
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in a]
    assert seqs == sorted(seqs)


@pytest.mark.parametrize("view", VIEWS)
def test_view_types(ddb, streams, view):
    name, desc = stream_table(ddb, view=view, range_key=True)
    key = {"pk": {"S": "p"}, "sk": {"S": "s"}}
    ddb.put_item(TableName=name, Item=dict(key, v={"S": "one"}))
    ddb.put_item(TableName=name, Item=dict(key, v={"S": "two"}))
    records = read_stream(streams, desc["LatestStreamArn"], want=2)
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY"]
    m = records[1]["dynamodb"]
    assert m["Keys"] == key
    assert m["StreamViewType"] == view
    assert ("NewImage" in m) == (view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"))
    assert ("OldImage" in m) == (view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"))
    if "NewImage" in m:
        assert m["NewImage"]["v"] == {"S": "two"}
    if "OldImage" in m:
        assert m["OldImage"]["v"] == {"S": "one"}


def test_iterators(ddb, streams):
    name, desc = stream_table(ddb)
    arn = desc["LatestStreamArn"]
    for i in range(5):
        ddb.put_item(TableName=name, Item={"pk": {"S": "k"}, "n": {"N": str(i)}})
    records = read_stream(streams, arn, want=5)
    assert len(records) == 5
    seqs = [r["dynamodb"]["SequenceNumber"] for r in records]
    shard = None
    for sh in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=sh["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        if streams.get_records(ShardIterator=it)["Records"]:
            shard = sh["ShardId"]
    at = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="AT_SEQUENCE_NUMBER",
                                    SequenceNumber=seqs[2])["ShardIterator"]
    got = streams.get_records(ShardIterator=at)["Records"]
    assert [r["dynamodb"]["SequenceNumber"] for r in got] == seqs[2:]
    after = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                       ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                       SequenceNumber=seqs[2])["ShardIterator"]
    got = streams.get_records(ShardIterator=after)["Records"]
    assert [r["dynamodb"]["SequenceNumber"] for r in got] == seqs[3:]
    # Limit, and the next iterator goes on where the page ended
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    page = streams.get_records(ShardIterator=it, Limit=2)
    assert [r["dynamodb"]["SequenceNumber"] for r in page["Records"]] == seqs[:2]
    page = streams.get_records(ShardIterator=page["NextShardIterator"], Limit=10)
    assert [r["dynamodb"]["SequenceNumber"] for r in page["Records"]] == seqs[2:]
    # LATEST: only what comes after
    latest = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                        ShardIteratorType="LATEST")["ShardIterator"]
    assert streams.get_records(ShardIterator=latest)["Records"] == []


def test_errors(ddb, streams):
    name, desc = stream_table(ddb)
    arn = desc["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    assert error_of(streams.get_shard_iterator, StreamArn=arn,
                    ShardId="shardId-00000000000000000000-00000000",
                    ShardIteratorType="TRIM_HORIZON") == \
        ("ResourceNotFoundException", "Shard does not exist")
    assert error_of(streams.get_shard_iterator, StreamArn=arn + "x", ShardId=shard,
                    ShardIteratorType="LATEST") == ("ValidationException", "Invalid StreamArn")
    assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=shard,
                    ShardIteratorType="AT_SEQUENCE_NUMBER")[0] == "ValidationException"
    assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=shard,
                    ShardIteratorType="BOGUS")[0] == "ValidationException"
    assert error_of(streams.get_records, ShardIterator="garbage") == \
        ("ValidationException", "Invalid ShardIterator")
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert error_of(streams.get_records, ShardIterator=it, Limit=0)[0] == "ValidationException"
    assert error_of(streams.get_records, ShardIterator=it, Limit=1001)[0] == "ValidationException"
    assert error_of(streams.describe_stream,
                    StreamArn=desc["TableArn"] + "/stream/2020-01-01T00:00:00.000")[0] == \
        "ResourceNotFoundException"


def test_update_table_streams(ddb, streams):
    name, desc = stream_table(ddb)
    old_arn = desc["LatestStreamArn"]
    assert error_of(ddb.update_table, TableName=name,
                    StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}) \
        == ("ValidationException", "Table already has an enabled stream")
    assert error_of(ddb.update_table, TableName=name,
                    StreamSpecification={"StreamEnabled": True})[0] == "ValidationException"
    ddb.put_item(TableName=name, Item={"pk": {"S": "before"}})
    read_stream(streams, old_arn, want=1)
    ddb.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    t = ddb.describe_table(TableName=name)["Table"]
    assert "StreamSpecification" not in t or not t["StreamSpecification"]["StreamEnabled"]
    assert t["LatestStreamArn"] == old_arn
    assert error_of(ddb.update_table, TableName=name,
                    StreamSpecification={"StreamEnabled": False}) == \
        ("ValidationException", "Table has no stream to disable")
    sd = streams.describe_stream(StreamArn=old_arn)["StreamDescription"]
    assert sd["StreamStatus"] == "DISABLED"
    # the disabled stream is still readable, its shards closed
    assert by_item(read_stream(streams, old_arn)) == {"before": ["INSERT"]}
    ddb.put_item(TableName=name, Item={"pk": {"S": "between"}})  # no stream: no record
    new = ddb.update_table(TableName=name, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    assert new["LatestStreamArn"] != old_arn
    ddb.put_item(TableName=name, Item={"pk": {"S": "after"}})
    assert by_item(read_stream(streams, new["LatestStreamArn"], want=1)) == {"after": ["INSERT"]}
    listed = [s["StreamArn"] for s in streams.list_streams(TableName=name)["Streams"]]
    assert sorted(listed) == sorted([old_arn, new["LatestStreamArn"]])


def test_create_table_errors(ddb):
    base = dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                BillingMode="PAY_PER_REQUEST")
    assert error_of(ddb.create_table, TableName=unique_name("st"),
                    StreamSpecification={"StreamEnabled": True}, **base)[0] == \
        "ValidationException"
    assert error_of(ddb.create_table, TableName=unique_name("st"),
                    StreamSpecification={"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"},
                    **base)[0] == "ValidationException"
    assert error_of(ddb.create_table, TableName=unique_name("st"),
                    StreamSpecification={"StreamEnabled": True, "StreamViewType": "BAD"},
                    **base)[0] == "ValidationException"
