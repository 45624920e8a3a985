"""test_region.py - the region and account of ARNs over HTTP: boto3 clients configured for
eu-west-1 and for us-east-1 against the same kura-server each see their own region in every
ARN (TableArn, IndexArn, LatestStreamArn, ListStreams, DescribeStream) and in GetRecords'
awsRegion, and tag with their own region's ARNs; an ARN of the other region names nothing
(ResourceNotFoundException, as DynamoDB, where each region is its own set of tables and
streams). An unsigned request (kura-server without --auth takes them) gets the server's
--region (default us-east-1), and every ARN its --account-id (default 000000000000, DynamoDB
Local's): kura cannot tell an access key's account. The region also comes from a presigned
URL's X-Amz-Credential, and with --auth from the verified credential scope.
"""

import subprocess
import urllib.parse

import pytest

from conftest import (call, make_client, raw_request, read_stream, server_binary,
                      streams_client, unique_name, wait_active)

EU, US = "eu-west-1", "us-east-1"


def prefix(region, account="000000000000"):
    return "arn:aws:dynamodb:%s:%s:table/" % (region, account)


def error_of(fn, **kw):
    with pytest.raises(Exception) as e:
        fn(**kw)
    err = e.value.response["Error"]
    return err["Code"], err["Message"]


@pytest.fixture(scope="module")
def clients(server):
    return {r: (make_client(server.url, region=r), streams_client(server.url, region=r))
            for r in (EU, US)}


def create(ddb, name):
    r = ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "g")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "lsi1", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "g", "KeyType": "RANGE"}]}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi1", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        Tags=[{"Key": "made", "Value": "here"}])
    wait_active(ddb, name)
    return r["TableDescription"]


def check_desc(d, region, account="000000000000", indexes=True):
    arn = prefix(region, account) + d["TableName"]
    assert d["TableArn"] == arn
    if indexes:  # DeleteTable's description has none, as DynamoDB's
        assert d["LocalSecondaryIndexes"][0]["IndexArn"] == arn + "/index/lsi1"
        assert d["GlobalSecondaryIndexes"][0]["IndexArn"] == arn + "/index/gsi1"
    assert d["LatestStreamArn"] == arn + "/stream/" + d["LatestStreamLabel"]


def test_table_arns_in_the_client_region(clients):
    eu, us = clients[EU][0], clients[US][0]
    name = unique_name("rg")
    check_desc(create(eu, name), EU)
    check_desc(eu.describe_table(TableName=name)["Table"], EU)
    check_desc(us.describe_table(TableName=name)["Table"], US)
    d = eu.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    check_desc(d["TableDescription"], EU)
    check_desc(us.describe_table(TableName=name)["Table"], US)
    check_desc(eu.delete_table(TableName=name)["TableDescription"], EU, indexes=False)


def test_streams_in_the_client_region(clients):
    (eu, eus), (us, uss) = clients[EU], clients[US]
    name = unique_name("rs")
    eu_arn = create(eu, name)["LatestStreamArn"]
    us_arn = us.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert eu_arn.startswith(prefix(EU) + name + "/stream/")
    assert us_arn == eu_arn.replace(EU, US, 1)
    assert eus.list_streams(TableName=name)["Streams"] == [
        {"StreamArn": eu_arn, "TableName": name, "StreamLabel": eu_arn.rsplit("/", 1)[1]}]
    assert [s["StreamArn"] for s in uss.list_streams(TableName=name)["Streams"]] == [us_arn]
    assert eus.describe_stream(StreamArn=eu_arn)["StreamDescription"]["StreamArn"] == eu_arn
    assert uss.describe_stream(StreamArn=us_arn)["StreamDescription"]["StreamArn"] == us_arn
    # the other region's ARN: no such stream in this region
    for client, arn in ((uss, eu_arn), (eus, us_arn)):
        assert error_of(client.describe_stream, StreamArn=arn) == (
            "ResourceNotFoundException", "Requested resource not found: Stream: %s not found" % arn)
    shard = eus.describe_stream(StreamArn=eu_arn)["StreamDescription"]["Shards"][0]["ShardId"]
    assert error_of(uss.get_shard_iterator, StreamArn=eu_arn, ShardId=shard,
                    ShardIteratorType="TRIM_HORIZON") == (
        "ResourceNotFoundException", "Requested resource not found: Stream: %s not found" % eu_arn)
    eu.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "b"}, "g": {"S": "c"}})
    for client, arn, region in ((eus, eu_arn, EU), (uss, us_arn, US)):
        records = read_stream(client, arn)
        assert [r["eventName"] for r in records] == ["INSERT"]
        assert records[0]["awsRegion"] == region


def test_tags_in_the_client_region(clients):
    eu, us = clients[EU][0], clients[US][0]
    name = unique_name("rt")
    create(eu, name)
    eu_arn, us_arn = prefix(EU) + name, prefix(US) + name
    eu.tag_resource(ResourceArn=eu_arn, Tags=[{"Key": "k", "Value": "eu"}])
    got = eu.list_tags_of_resource(ResourceArn=eu_arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in got) == [("k", "eu"), ("made", "here")]
    # one table, named in each region by that region's ARN
    us.untag_resource(ResourceArn=us_arn, TagKeys=["made"])
    assert us.list_tags_of_resource(ResourceArn=us_arn)["Tags"] == [{"Key": "k", "Value": "eu"}]
    for client, arn in ((us, eu_arn), (eu, us_arn), (eu, prefix(EU, "111122223333") + name)):
        msg = "Requested resource not found: ResourceArn: %s not found" % arn
        assert error_of(client.list_tags_of_resource, ResourceArn=arn) == (
            "ResourceNotFoundException", msg)
        assert error_of(client.tag_resource, ResourceArn=arn,
                        Tags=[{"Key": "x", "Value": "y"}]) == ("ResourceNotFoundException", msg)
    assert eu.list_tags_of_resource(ResourceArn=eu_arn)["Tags"] == [{"Key": "k", "Value": "eu"}]


def test_unsigned_and_presigned(server, clients):
    name = unique_name("ru")
    create(clients[EU][0], name)
    r = call(server, "DescribeTable", {"TableName": name}, auth=False)
    assert r.status == 200, r
    check_desc(r.json()["Table"], US)  # the server's default region
    cred = urllib.parse.quote("AKIDKURATEST/20261128/ca-central-1/dynamodb/aws4_request", safe="")
    r = call(server, "DescribeTable", {"TableName": name}, auth=False,
             path="/?X-Amz-Credential=" + cred)
    assert r.status == 200, r
    check_desc(r.json()["Table"], "ca-central-1")


def test_server_region_and_account(server_factory):
    srv = server_factory(["--region", "ap-southeast-2", "--account-id", "123456789012"])
    name = unique_name("ra")
    eu = make_client(srv.url, region=EU)
    check_desc(create(eu, name), EU, "123456789012")
    r = call(srv, "DescribeTable", {"TableName": name}, auth=False)
    check_desc(r.json()["Table"], "ap-southeast-2", "123456789012")
    r = raw_request(srv, {"TableName": name}, auth=False,
                    headers={"X-Amz-Target": "DynamoDBStreams_20120810.ListStreams"})
    assert r.status == 200, r
    assert r.json()["Streams"][0]["StreamArn"].startswith(
        prefix("ap-southeast-2", "123456789012") + name + "/stream/")


def test_signed_with_auth(server_factory):
    srv = server_factory(["--auth", "AKIDREGION:region-secret"])
    ddb = make_client(srv.url, "AKIDREGION", "region-secret", region="eu-north-1")
    name = unique_name("rv")
    check_desc(create(ddb, name), "eu-north-1")


@pytest.mark.parametrize("args", [["--region", "EU-WEST-1"], ["--region", ""],
                                  ["--account-id", "12345"], ["--account-id", "12345678901a"]])
def test_bad_flags(request, args):
    proc = subprocess.run([server_binary(request.config), "--in-memory", "--port", "0"] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2, proc
    assert args[0].encode() in proc.stderr
