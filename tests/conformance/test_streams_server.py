"""test_streams_server.py - kura-server's side of DynamoDB Streams that test_streams.py (written
against DynamoDB Local) cannot check: the userIdentity of Time to Live deletes (the sweeper runs
every 50 ms with its clock two hours ahead, so an item expires at once), the X-Amz-Target
prefixes (each service's operations only under its own), boto3's dynamodbstreams client signing
for --auth, ExpiredIteratorException under a short --stream-iterator-ttl-ms, the AWS CLI's
`aws dynamodbstreams` commands the README shows, and `kura streams list|read`.
"""

import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import (make_client, raw_request, read_stream, server_binary, streams_client,
                      unique_name, wait_active, wait_until)

OFFSET = 7200  # the sweeping server's TTL clock runs this many seconds ahead
# the API reference's Identity (boto3 drops the lower-case names of Lambda's events)
SERVICE_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def stream_table(ddb, view="NEW_AND_OLD_IMAGES"):
    name = unique_name("sts")
    desc = ddb.create_table(TableName=name,
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            BillingMode="PAY_PER_REQUEST",
                            StreamSpecification={"StreamEnabled": True,
                                                 "StreamViewType": view})["TableDescription"]
    wait_active(ddb, name)
    return name, desc["LatestStreamArn"]


# ---- Time to Live deletes --------------------------------------------------------------------

@pytest.fixture(scope="module")
def sweeping(server_factory):
    return server_factory(args=["--ttl-sweep-ms", "50", "--ttl-clock-offset", str(OFFSET)])


def test_ttl_delete_has_service_identity(sweeping):
    ddb, streams = make_client(sweeping.url), streams_client(sweeping.url)
    name, arn = stream_table(ddb)
    now = int(time.time())
    ddb.put_item(TableName=name, Item={"pk": {"S": "expired"}, "exp": {"N": str(now + 60)}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "kept"}, "exp": {"N": str(now + 2 * OFFSET)}})
    ddb.put_item(TableName=name, Item={"pk": {"S": "user"}})
    ddb.delete_item(TableName=name, Key={"pk": {"S": "user"}})
    ddb.update_time_to_live(TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})
    wait_until(lambda: "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "expired"}},
                                                  ConsistentRead=True))
    records = read_stream(streams, arn)
    removes = {r["dynamodb"]["Keys"]["pk"]["S"]: r for r in records if r["eventName"] == "REMOVE"}
    assert sorted(removes) == ["expired", "user"], records
    ttl = removes["expired"]
    assert ttl["userIdentity"] == SERVICE_IDENTITY
    assert ttl["dynamodb"]["OldImage"] == {"pk": {"S": "expired"}, "exp": {"N": str(now + 60)}}
    assert "NewImage" not in ttl["dynamodb"]
    # a user's delete, and every other record, carries no identity
    assert all("userIdentity" not in r for r in records if r is not ttl)


# ---- The service prefixes, signatures, iterator expiry ----------------------------------------

def test_target_prefixes(server):
    r = raw_request(server, {}, headers={"X-Amz-Target": "DynamoDBStreams_20120810.ListStreams"})
    assert r.status == 200 and "Streams" in r.json(), r
    for target in ("DynamoDB_20120810.ListStreams", "DynamoDB_20120810.GetRecords",
                   "DynamoDBStreams_20120810.ListTables", "DynamoDBStreams_20120810.PutItem",
                   "DynamoDBStreams_20120810.", "DynamoDBStreams_20120810.listStreams"):
        r = raw_request(server, {}, headers={"X-Amz-Target": target})
        assert (r.status, r.error_type) == (400, "UnknownOperationException"), (target, r)


def test_signed_streams_client(server_factory):
    srv = server_factory(args=["--auth", "AKIDSTREAMS:streams-secret"])
    ddb = make_client(srv.url, access_key="AKIDSTREAMS", secret="streams-secret")
    name, arn = stream_table(ddb, view="KEYS_ONLY")
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})
    good = streams_client(srv.url, "AKIDSTREAMS", "streams-secret")
    assert [s["StreamArn"] for s in good.list_streams(TableName=name)["Streams"]] == [arn]
    assert [r["dynamodb"]["Keys"] for r in read_stream(good, arn)] == [{"pk": {"S": "a"}}]
    bad = streams_client(srv.url, "AKIDSTREAMS", "wrong-secret")
    with pytest.raises(Exception) as e:
        bad.list_streams()
    assert e.value.response["Error"]["Code"] == "InvalidSignatureException"


def test_expired_iterator(server_factory):
    srv = server_factory(args=["--stream-iterator-ttl-ms", "50"])
    ddb, streams = make_client(srv.url), streams_client(srv.url)
    name, arn = stream_table(ddb)
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    time.sleep(0.3)
    with pytest.raises(Exception) as e:
        streams.get_records(ShardIterator=it)
    assert e.value.response["Error"]["Code"] == "ExpiredIteratorException"
    # a fresh one works
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                    ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert streams.get_records(ShardIterator=it)["Records"] == []


# ---- The AWS CLI, as the README shows it -----------------------------------------------------

def test_awscli_streams(server, tmp_path_factory):
    binary = next((p for p in ("/usr/bin/aws", shutil.which("aws"))
                   if p and os.access(p, os.X_OK)), None)
    if binary is None:
        pytest.fail("the AWS CLI (Debian awscli) is not installed")
    home = str(tmp_path_factory.mktemp("awshome"))
    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null",
               AWS_SHARED_CREDENTIALS_FILE="/dev/null", AWS_PAGER="", HOME=home,
               AWS_MAX_ATTEMPTS="1")

    def aws(service, *args, query=None):
        cmd = [binary, service, "--endpoint-url", server.url, "--output",
               "text" if query else "json"] + list(args)
        if query:
            cmd += ["--query", query]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=120)
        assert proc.returncode == 0, (cmd, proc.stdout, proc.stderr)
        out = proc.stdout.decode()
        return out.strip() if query else json.loads(out)

    name, arn = stream_table(make_client(server.url))
    make_client(server.url).put_item(TableName=name, Item={"pk": {"S": "cli"}})
    assert aws("dynamodbstreams", "list-streams", "--table-name", name)["Streams"][0][
        "StreamArn"] == arn
    assert aws("dynamodb", "describe-table", "--table-name", name,
               query="Table.LatestStreamArn") == arn
    records = []
    shards = aws("dynamodbstreams", "describe-stream", "--stream-arn", arn)
    for sh in shards["StreamDescription"]["Shards"]:
        it = aws("dynamodbstreams", "get-shard-iterator", "--stream-arn", arn, "--shard-id",
                 sh["ShardId"], "--shard-iterator-type", "TRIM_HORIZON", query="ShardIterator")
        records += aws("dynamodbstreams", "get-records", "--shard-iterator", it)["Records"]
    assert [(r["eventName"], r["dynamodb"]["Keys"]) for r in records] == [
        ("INSERT", {"pk": {"S": "cli"}})]


# ---- kura streams ------------------------------------------------------------------------------

def cli_binary(config):
    path = os.environ.get("KURA_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(server_binary(config))), "kura")
    if not os.access(path, os.X_OK):
        pytest.fail("no kura binary at %r (set KURA_CLI)" % path)
    return path


def test_cli_streams(request, tmp_path_factory):
    binary = cli_binary(request.config)
    data = os.path.join(str(tmp_path_factory.mktemp("streams-cli", numbered=True)), "data")

    def kura(*args, stdin=""):
        proc = subprocess.run([binary, "--data", data] + list(args), input=stdin.encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    table = {"TableName": "clist", "BillingMode": "PAY_PER_REQUEST",
             "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
             "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    rc, out, err = kura("exec", "CreateTable", stdin=json.dumps(dict(table, StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})))
    assert rc == 0, (out, err)
    arn = json.loads(out)["TableDescription"]["LatestStreamArn"]
    rc, out, err = kura("exec", "CreateTable", stdin=json.dumps(dict(table, TableName="cplain")))
    assert rc == 0, (out, err)
    puts = ["PutItem " + json.dumps({"TableName": "clist", "Item": {"pk": {"S": "k%d" % i},
                                                                     "n": {"N": str(i)}}})
            for i in range(20)]
    rc, out, err = kura("pipe", stdin="\n".join(puts) + "\n")
    assert rc == 0 and all(line == "0 {}" for line in out.splitlines()), (out, err)

    rc, out, err = kura("streams", "list")
    assert rc == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"StreamArn": arn, "TableName": "clist", "StreamLabel": arn.rsplit("/", 1)[1]}]
    rc, out, err = kura("streams", "list", "cplain")
    assert (rc, out) == (0, ""), err

    rc, out, err = kura("streams", "read", "clist")
    assert rc == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert sorted(r["dynamodb"]["Keys"]["pk"]["S"] for r in records) == sorted(
        "k%d" % i for i in range(20))
    assert all(r["eventName"] == "INSERT" and r["dynamodb"]["StreamViewType"] == "NEW_IMAGE"
               for r in records)
    rc, out2, err = kura("streams", "read", arn)
    assert (rc, out2) == (0, out), err

    # resume one shard after a record read before: exactly the records that followed it
    rc, out, err = kura("exec", "DescribeStream", stdin=json.dumps({"StreamArn": arn}))
    shards = [sh["ShardId"] for sh in json.loads(out)["StreamDescription"]["Shards"]]
    for shard in shards:
        rc, out, err = kura("streams", "read", "clist", "--shard", shard)
        assert rc == 0, err
        mine = [json.loads(line) for line in out.splitlines()]
        if len(mine) < 2:
            continue
        first = mine[0]["dynamodb"]["SequenceNumber"]
        rc, out, err = kura("streams", "read", "clist", "--shard", shard, "--after", first)
        assert rc == 0, err
        assert [json.loads(line) for line in out.splitlines()] == mine[1:]

    # errors: a table without a stream, no such table, a bad shard; usage
    rc, out, err = kura("streams", "read", "cplain")
    assert (rc, out) == (1, "") and "has no stream" in err, err
    rc, out, err = kura("streams", "read", "nosuch")
    assert rc == 1 and "not found" in err, err
    rc, out, err = kura("streams", "read", "clist", "--shard",
                        "shardId-00000000000000000000-00000000")
    assert rc == 1 and "Shard does not exist" in err, err
    rc, out, err = kura("streams", "read", "clist", "--after", "0" * 25)
    assert rc == 2, err
    rc, out, err = kura("streams", "bogus")
    assert rc == 2, err
