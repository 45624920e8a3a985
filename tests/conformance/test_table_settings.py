"""test_table_settings.py - This file contains the conformance tests of the table settings and
resource-based policies over HTTP: TableClass and SSESpecification through boto3 (Debian's
botocore 1.29 has those shapes), DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput
and Put/Get/DeleteResourcePolicy as raw JSON (newer than that botocore); what CreateTable and
UpdateTable set is what DescribeTable shows, also after a restart of kura-server; DeleteTable
of a protected table; billing mode switches with their GSI rules; revision ids and
ExpectedRevisionId; PolicyNotFoundException.
"""

import json

import pytest
from botocore.exceptions import ClientError

from conftest import call, make_client, unique_name

KEYS = dict(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "g", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
GSI = {"IndexName": "gidx", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
       "Projection": {"ProjectionType": "ALL"}}


def ok(server, op, body):
    r = call(server, op, body)
    assert r.status == 200, r
    return r.json()


def refused(server, op, body):
    r = call(server, op, body)
    assert r.status == 400, r
    return r.error_type, r.message


def describe(server, name):
    return ok(server, "DescribeTable", {"TableName": name})["Table"]


def test_class_and_sse_with_boto3(ddb):
    name = unique_name("cls")
    d = ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         TableClass="STANDARD_INFREQUENT_ACCESS",
                         SSESpecification={"Enabled": True, "SSEType": "KMS",
                                           "KMSMasterKeyId": "alias/my-key"},
                         GlobalSecondaryIndexes=[GSI], **KEYS)["TableDescription"]
    assert d["TableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    sse = d["SSEDescription"]
    assert sse["Status"] == "ENABLED" and sse["SSEType"] == "KMS"
    assert sse["KMSMasterKeyArn"].startswith("arn:aws:kms:")
    assert sse["KMSMasterKeyArn"].endswith(":alias/my-key")
    d = ddb.update_table(TableName=name, TableClass="STANDARD")["TableDescription"]
    assert d["TableClassSummary"]["TableClass"] == "STANDARD"
    assert "LastUpdateDateTime" in d["TableClassSummary"]
    d = ddb.update_table(TableName=name, SSESpecification={"Enabled": False})["TableDescription"]
    assert "SSEDescription" not in d
    with pytest.raises(ClientError) as e:
        ddb.update_table(TableName=name, SSESpecification={"Enabled": False})
    assert e.value.response["Error"] == {"Code": "ValidationException",
                                         "Message": "Table is already encrypted by default"}
    # a table created without a class or key has neither summary
    plain = unique_name("plain")
    d = ddb.create_table(TableName=plain, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=KEYS["AttributeDefinitions"][:1],
                         KeySchema=KEYS["KeySchema"])["TableDescription"]
    assert "TableClassSummary" not in d and "SSEDescription" not in d


def test_raw_settings_durable(server_factory):
    srv = server_factory()
    name = unique_name("raw")
    body = dict(TableName=name, BillingMode="PAY_PER_REQUEST", DeletionProtectionEnabled=True,
                OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": -1},
                WarmThroughput={"ReadUnitsPerSecond": 15000},
                GlobalSecondaryIndexes=[dict(GSI, OnDemandThroughput={"MaxWriteRequestUnits": 9},
                                             WarmThroughput={"WriteUnitsPerSecond": 5000})],
                ResourcePolicy=json.dumps({"Version": "2012-10-17", "Statement": []}), **KEYS)
    created = ok(srv, "CreateTable", body)["TableDescription"]
    arn = created["TableArn"]

    def check(t):
        assert t["DeletionProtectionEnabled"] is True
        assert t["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": -1}
        assert t["WarmThroughput"] == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 4000,
                                       "Status": "ACTIVE"}
        g = t["GlobalSecondaryIndexes"][0]
        assert g["OnDemandThroughput"] == {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 9}
        assert g["WarmThroughput"] == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 5000,
                                       "Status": "ACTIVE"}
        p = ok(srv, "GetResourcePolicy", {"ResourceArn": arn})
        assert json.loads(p["Policy"]) == {"Version": "2012-10-17", "Statement": []}
        return p["RevisionId"]

    check(created)
    rev = check(describe(srv, name))
    srv.stop()
    srv.start()
    assert check(describe(srv, name)) == rev
    assert refused(srv, "DeleteTable", {"TableName": name}) == (
        "ValidationException", "Resource cannot be deleted as it is currently protected against "
        "deletion. Disable deletion protection first.")
    ok(srv, "UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
    ok(srv, "DeleteTable", {"TableName": name})
    assert refused(srv, "GetResourcePolicy", {"ResourceArn": arn})[0] == \
        "ResourceNotFoundException"


def test_billing_switches(server):
    name = unique_name("bill")
    ok(server, "CreateTable", dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                                   GlobalSecondaryIndexes=[GSI], **KEYS))
    pt = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6}
    assert refused(server, "UpdateTable", {"TableName": name, "BillingMode": "PROVISIONED",
                                           "ProvisionedThroughput": pt}) == (
        "ValidationException", "One or more parameter values were invalid: "
        "ProvisionedThroughput must be specified for index: gidx")
    t = ok(server, "UpdateTable", {
        "TableName": name, "BillingMode": "PROVISIONED", "ProvisionedThroughput": pt,
        "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "gidx",
                                                    "ProvisionedThroughput": pt}}]})
    t = t["TableDescription"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["WriteCapacityUnits"] == 6
    assert "OnDemandThroughput" not in t
    assert refused(server, "UpdateTable", {
        "TableName": name, "OnDemandThroughput": {"MaxReadRequestUnits": 3}}) == (
        "ValidationException", "One or more parameter values were invalid: OnDemandThroughput "
        "can only be specified when BillingMode is PAY_PER_REQUEST")
    assert refused(server, "UpdateTable", {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                                           "ProvisionedThroughput": pt}) == (
        "ValidationException", "One or more parameter values were invalid: Neither "
        "ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
        "PAY_PER_REQUEST")
    t = ok(server, "UpdateTable", {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                                   "OnDemandThroughput": {"MaxWriteRequestUnits": 50}})
    t = t["TableDescription"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert t["OnDemandThroughput"] == {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": 50}


def test_resource_policies(server):
    name = unique_name("pol")
    arn = ok(server, "CreateTable", dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                                         AttributeDefinitions=KEYS["AttributeDefinitions"][:1],
                                         KeySchema=KEYS["KeySchema"]))["TableDescription"]["TableArn"]
    assert refused(server, "GetResourcePolicy", {"ResourceArn": arn}) == (
        "PolicyNotFoundException",
        "Resource-based policy not found for the provided ResourceArn: " + arn)
    assert refused(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{not json"}) == (
        "ValidationException",
        "Invalid policy document: the resource-based policy must be a JSON object")
    assert refused(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{}",
                                                 "ExpectedRevisionId": "123"})[0] == \
        "PolicyNotFoundException"
    rev = ok(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{}",
                                           "ExpectedRevisionId": "NO_POLICY"})["RevisionId"]
    assert rev.isdigit()
    # the same document again: the same revision; another: a new, larger one
    assert ok(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{}"}) == \
        {"RevisionId": rev}
    assert refused(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{\"a\":1}",
                                                 "ExpectedRevisionId": "NO_POLICY"})[0] == \
        "PolicyNotFoundException"
    rev2 = ok(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": "{\"a\":1}",
                                            "ExpectedRevisionId": rev})["RevisionId"]
    assert int(rev2) > int(rev)
    assert ok(server, "GetResourcePolicy", {"ResourceArn": arn}) == {"Policy": "{\"a\":1}",
                                                                     "RevisionId": rev2}
    too_big = "{" + " " * 20480 + "}"
    assert refused(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": too_big})[0] == \
        "ValidationException"
    assert refused(server, "DeleteResourcePolicy", {"ResourceArn": arn,
                                                    "ExpectedRevisionId": rev})[0] == \
        "PolicyNotFoundException"
    assert ok(server, "DeleteResourcePolicy", {"ResourceArn": arn,
                                               "ExpectedRevisionId": rev2}) == {"RevisionId": rev2}
    assert ok(server, "DeleteResourcePolicy", {"ResourceArn": arn}) == {}
    assert refused(server, "GetResourcePolicy", {"ResourceArn": arn})[0] == \
        "PolicyNotFoundException"
    assert refused(server, "GetResourcePolicy", {"ResourceArn": "nope"}) == (
        "ValidationException", "Invalid TableArn: Invalid ResourceArn provided as input nope")
