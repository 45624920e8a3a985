"""test_operations.py - This file contains the conformance tests of every operation kura-server
serves and every error type it returns, through boto3 where boto3 can express the request and
through raw HTTP (http.client) where it cannot (malformed bodies, bad targets, newer shapes such
as ReturnValuesOnConditionCheckFailure, the exact error body).

Expected values are DynamoDB's: response shapes and error messages as DynamoDB sends them (the
scenario vectors in ../shared/scenarios, DynamoDB's documentation, dynalite's copies of the
messages). Pagination is checked three ways: Limit + ExclusiveStartKey, the 1 MB page limit
with large items, and boto3's paginators. Expressions, value types and size limits have their
own files (test_expressions.py, test_values.py).
"""

import json
import threading

import pytest
from botocore.exceptions import ClientError

from conftest import (b64, call, check_protocol_headers, create_table, http_head, make_client,
                      raw_request, scaled, socket_exchange, unique_name, wait_active)


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err.get("Message")


def expect_error(fn, code, message=None, contains=None, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    got_code, got_msg = error_of(ei)
    assert got_code == code, (got_code, got_msg)
    assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    if message is not None:
        assert got_msg == message
    if contains is not None:
        assert contains in (got_msg or ""), got_msg
    return got_msg


# ---- protocol --------------------------------------------------------------------------------

def test_response_headers_on_success_and_error(server):
    ok = call(server, "ListTables", {})
    assert ok.status == 200
    check_protocol_headers(ok)
    bad = call(server, "DescribeTable", {"TableName": "no-such-table-hdr"})
    assert bad.status == 400
    check_protocol_headers(bad)
    assert bad.json() == {
        "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
        "message": "Requested resource not found: Table: no-such-table-hdr not found"}
    # every response has its own request id
    other = call(server, "ListTables", {})
    assert other.headers["x-amzn-requestid"] != ok.headers["x-amzn-requestid"]


def test_content_type_json_accepted(server):
    # DynamoDB Local (and kura-server) also take application/json and no content type.
    for ct in ("application/json", None):
        r = call(server, "ListTables", {}, content_type=ct)
        assert r.status == 200, (ct, r)
        assert "TableNames" in r.json()


def test_malformed_json_is_serialization_exception(server):
    for body in (b"{not json", b"", b"{\"TableName\": }", b"\xff\xfe{}", b"{\"a\":1}}"):
        r = raw_request(server, body, target="DescribeTable")
        assert r.status == 400, (body, r)
        assert r.error_type == "SerializationException", (body, r)
        check_protocol_headers(r)


def test_wrong_member_type_is_serialization_exception(server):
    r = call(server, "DescribeTable", {"TableName": 5})
    assert r.status == 400 and r.error_type == "SerializationException", r
    r = call(server, "Query", {"TableName": "x", "Limit": "ten"})
    assert r.status == 400 and r.error_type == "SerializationException", r


def test_unknown_or_missing_target(server):
    for target in ("DynamoDB_20120810.NoSuchOperation", "DynamoDB_20120810.", "Bogus",
                   "DynamoDB_20120810.listtables"):
        r = raw_request(server, {}, headers={"X-Amz-Target": target})
        assert r.status == 400, (target, r)
        assert r.error_type == "UnknownOperationException", (target, r)
    r = raw_request(server, {}, target=None)
    assert r.status == 400 and r.error_type == "UnknownOperationException", r


def test_boto3_sees_error_codes(ddb):
    expect_error(ddb.describe_table, "ResourceNotFoundException",
                 "Requested resource not found: Table: nope-boto not found",
                 TableName="nope-boto")


# ---- tables ----------------------------------------------------------------------------------

def test_create_describe_delete_table(ddb):
    name = unique_name("tbl")
    resp = create_table(ddb, name, ("pk", "S"), ("sk", "N"), wait=False)
    desc = resp["TableDescription"]
    assert desc["TableName"] == name
    assert desc["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                                 {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert sorted(desc["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "N"}]
    assert desc["TableStatus"] in ("CREATING", "ACTIVE")
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["TableArn"].endswith(":table/" + name)
    assert desc["ItemCount"] == 0 and desc["TableSizeBytes"] == 0
    t = wait_active(ddb, name)
    assert t["TableName"] == name and t["KeySchema"] == desc["KeySchema"]

    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    expect_error(create_table, "ResourceInUseException", None, client=ddb, name=name,
                 hash_key=("pk", "S"))

    deleted = ddb.delete_table(TableName=name)["TableDescription"]
    assert deleted["TableName"] == name
    assert deleted["TableStatus"] == "DELETING"
    with pytest.raises(ClientError) as ei:
        for _ in range(200):  # DELETING may last a moment
            ddb.describe_table(TableName=name)
    assert error_of(ei) == ("ResourceNotFoundException",
                            "Requested resource not found: Table: %s not found" % name)
    expect_error(ddb.delete_table, "ResourceNotFoundException", TableName=name)
    expect_error(ddb.put_item, "ResourceNotFoundException",
                 "Requested resource not found", TableName=name, Item={"pk": {"S": "a"}})


def test_create_table_validation(ddb):
    name = unique_name("bad")
    expect_error(ddb.create_table, "ValidationException",
                 "One or more parameter values were invalid: Some index key attributes are not "
                 "defined in AttributeDefinitions. Keys: [pk], AttributeDefinitions: [other]",
                 TableName=name, BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "other", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    expect_error(ddb.create_table, "ValidationException",
                 "One or more parameter values were invalid: ReadCapacityUnits and "
                 "WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
                 TableName=name,
                 AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    expect_error(ddb.create_table, "ValidationException",
                 TableName="ab", BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    expect_error(ddb.create_table, "ValidationException", contains="regular expression",
                 TableName="bad name!", BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    expect_error(ddb.create_table, "ValidationException", contains="attributeType",
                 TableName=name, BillingMode="PAY_PER_REQUEST",
                 AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "BOOL"}],
                 KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    expect_error(ddb.describe_table, "ResourceNotFoundException", TableName=name)


def test_list_tables_pagination(ddb, ddb_validating):
    prefix = unique_name("lt")
    names = ["%s-%d" % (prefix, i) for i in range(5)]
    for n in names:
        create_table(ddb, n)
    try:
        got = []
        start = prefix + "-"  # sorts just before the first of ours
        while True:
            page = ddb.list_tables(ExclusiveStartTableName=start, Limit=2)
            assert len(page["TableNames"]) <= 2
            ours = [n for n in page["TableNames"] if n.startswith(prefix)]
            got += ours
            if len(ours) < len(page["TableNames"]) or "LastEvaluatedTableName" not in page:
                break
            assert page["LastEvaluatedTableName"] == page["TableNames"][-1]
            start = page["LastEvaluatedTableName"]
        assert got == names
        # boto3's paginator follows LastEvaluatedTableName through every table
        pages = list(ddb_validating.get_paginator("list_tables").paginate(
            PaginationConfig={"PageSize": 2}))
        assert len(pages) >= 3
        everything = [n for p in pages for n in p["TableNames"]]
        assert everything == sorted(everything)
        assert [n for n in everything if n.startswith(prefix)] == names
        expect_error(ddb.list_tables, "ValidationException", contains="limit", Limit=0)
        expect_error(ddb.list_tables, "ValidationException",
                     "1 validation error detected: Value '101' at 'limit' failed to satisfy "
                     "constraint: Member must have value less than or equal to 100", Limit=101)
    finally:
        for n in names:
            ddb.delete_table(TableName=n)


def test_update_table(ddb, make_table):
    name = make_table()
    t = ddb.update_table(TableName=name, BillingMode="PROVISIONED",
                         ProvisionedThroughput={"ReadCapacityUnits": 5,
                                                "WriteCapacityUnits": 7})["TableDescription"]
    assert t["TableName"] == name
    t = wait_active(ddb, name)
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert t["ProvisionedThroughput"]["WriteCapacityUnits"] == 7
    expect_error(ddb.update_table, "ValidationException",
                 contains="The provisioned throughput for the table will not change",
                 TableName=name,
                 ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7})
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    t = wait_active(ddb, name)
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    expect_error(ddb.update_table, "ValidationException", TableName=name)
    expect_error(ddb.update_table, "ResourceNotFoundException", TableName=name + "-x",
                 BillingMode="PAY_PER_REQUEST")
    # the data survives UpdateTable
    ddb.put_item(TableName=name, Item={"pk": {"S": "k"}})
    assert ddb.get_item(TableName=name, Key={"pk": {"S": "k"}})["Item"] == {"pk": {"S": "k"}}


# ---- items -----------------------------------------------------------------------------------

ALL_TYPES_ITEM = {
    "pk": {"S": "all-types"},
    "s": {"S": "hello"},
    "n": {"N": "-12.5"},
    "b": {"B": b"\x00\x01\xfe\xff"},
    "t": {"BOOL": True},
    "f": {"BOOL": False},
    "z": {"NULL": True},
    "m": {"M": {"inner": {"S": "x"}, "deep": {"M": {"l": {"L": [{"N": "1"}]}}}}},
    "l": {"L": [{"S": "a"}, {"N": "2"}, {"BOOL": False}, {"NULL": True}, {"L": []}, {"M": {}}]},
    "ss": {"SS": ["a", "b", "c"]},
    "ns": {"NS": ["1", "2.5", "-3"]},
    "bs": {"BS": [b"\x00", b"\xff", b"ab"]},
}


def normalize(item):
    """Sets are unordered: sort their members for comparison."""
    if isinstance(item, dict):
        out = {}
        for k, v in item.items():
            if k in ("SS", "NS", "BS") and isinstance(v, list):
                out[k] = sorted(v)
            else:
                out[k] = normalize(v)
        return out
    if isinstance(item, list):
        return [normalize(v) for v in item]
    return item


def test_put_get_delete_item(ddb, make_table):
    name = make_table()
    assert ddb.put_item(TableName=name, Item=ALL_TYPES_ITEM).keys() == {"ResponseMetadata"}
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "all-types"}}, ConsistentRead=True)
    assert normalize(got["Item"]) == normalize(ALL_TYPES_ITEM)
    # a missing item: no Item member at all
    missing = ddb.get_item(TableName=name, Key={"pk": {"S": "nope"}})
    assert "Item" not in missing
    # ReturnValues ALL_OLD on a replacing Put
    old = ddb.put_item(TableName=name, Item={"pk": {"S": "all-types"}, "v": {"N": "1"}},
                       ReturnValues="ALL_OLD")
    assert normalize(old["Attributes"]) == normalize(ALL_TYPES_ITEM)
    first = ddb.put_item(TableName=name, Item={"pk": {"S": "fresh"}}, ReturnValues="ALL_OLD")
    assert "Attributes" not in first
    # projection
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "all-types"}}, ProjectionExpression="v")
    assert got["Item"] == {"v": {"N": "1"}}
    # DeleteItem with ALL_OLD, then again (idempotent, nothing returned)
    d = ddb.delete_item(TableName=name, Key={"pk": {"S": "all-types"}}, ReturnValues="ALL_OLD")
    assert d["Attributes"] == {"pk": {"S": "all-types"}, "v": {"N": "1"}}
    d = ddb.delete_item(TableName=name, Key={"pk": {"S": "all-types"}}, ReturnValues="ALL_OLD")
    assert "Attributes" not in d
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "all-types"}})


def test_item_key_errors(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    expect_error(ddb.put_item, "ValidationException",
                 "One or more parameter values were invalid: Missing the key sk in the item",
                 TableName=name, Item={"pk": {"S": "a"}})
    expect_error(ddb.put_item, "ValidationException",
                 "One or more parameter values were invalid: Type mismatch for key sk expected: "
                 "N actual: S", TableName=name, Item={"pk": {"S": "a"}, "sk": {"S": "1"}})
    expect_error(ddb.get_item, "ValidationException",
                 "The provided key element does not match the schema",
                 TableName=name, Key={"pk": {"S": "a"}})
    expect_error(ddb.get_item, "ValidationException",
                 "The provided key element does not match the schema",
                 TableName=name, Key={"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": "y"}})
    expect_error(ddb.put_item, "ValidationException",
                 "One or more parameter values are not valid. The AttributeValue for a key "
                 "attribute cannot contain an empty string value. Key: pk",
                 TableName=name, Item={"pk": {"S": ""}, "sk": {"N": "1"}})
    expect_error(ddb.put_item, "ValidationException", contains="ReturnValues",
                 TableName=name, Item={"pk": {"S": "a"}, "sk": {"N": "1"}},
                 ReturnValues="ALL_NEW")
    expect_error(ddb.get_item, "ResourceNotFoundException", TableName=name + "-missing",
                 Key={"pk": {"S": "a"}, "sk": {"N": "1"}})


def test_update_item(ddb, make_table):
    name = make_table()
    key = {"pk": {"S": "u"}}
    # an update creates the item (upsert)
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="SET a = :a, c = :zero",
                        ExpressionAttributeValues={":a": {"S": "x"}, ":zero": {"N": "0"}},
                        ReturnValues="ALL_NEW")
    assert r["Attributes"] == {"pk": {"S": "u"}, "a": {"S": "x"}, "c": {"N": "0"}}
    r = ddb.update_item(TableName=name, Key=key,
                        UpdateExpression="ADD c :one, tags :t SET l = list_append("
                                         "if_not_exists(l, :empty), :l)",
                        ExpressionAttributeValues={":one": {"N": "1"}, ":t": {"SS": ["p", "q"]},
                                                   ":empty": {"L": []}, ":l": {"L": [{"N": "7"}]}},
                        ReturnValues="UPDATED_NEW")
    assert normalize(r["Attributes"]) == {"c": {"N": "1"}, "tags": {"SS": ["p", "q"]},
                                          "l": {"L": [{"N": "7"}]}}
    r = ddb.update_item(TableName=name, Key=key,
                        UpdateExpression="DELETE tags :t REMOVE a SET m = :m",
                        ExpressionAttributeValues={":t": {"SS": ["p"]},
                                                   ":m": {"M": {"x": {"N": "1"}}}},
                        ReturnValues="UPDATED_OLD")
    assert normalize(r["Attributes"]) == {"tags": {"SS": ["p", "q"]}, "a": {"S": "x"}}
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="SET m.y = m.x + :two",
                        ExpressionAttributeValues={":two": {"N": "2"}},
                        ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"m": {"M": {"y": {"N": "3"}}}}
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="REMOVE l[0]",
                        ReturnValues="ALL_OLD")
    assert r["Attributes"]["l"] == {"L": [{"N": "7"}]}
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="SET c = c - :one",
                        ExpressionAttributeValues={":one": {"N": "1"}})
    assert "Attributes" not in r
    got = ddb.get_item(TableName=name, Key=key)["Item"]
    assert got == {"pk": {"S": "u"}, "c": {"N": "0"}, "tags": {"SS": ["q"]}, "l": {"L": []},
                   "m": {"M": {"x": {"N": "1"}, "y": {"N": "3"}}}}
    # errors
    expect_error(ddb.update_item, "ValidationException",
                 "One or more parameter values were invalid: Cannot update attribute pk. This "
                 "attribute is part of the key", TableName=name, Key=key,
                 UpdateExpression="SET pk = :v", ExpressionAttributeValues={":v": {"S": "z"}})
    expect_error(ddb.update_item, "ValidationException",
                 "The provided expression refers to an attribute that does not exist in the item",
                 TableName=name, Key=key, UpdateExpression="SET x = nothere + :v",
                 ExpressionAttributeValues={":v": {"N": "1"}})
    expect_error(ddb.update_item, "ValidationException",
                 "An operand in the update expression has an incorrect data type",
                 TableName=name, Key=key, UpdateExpression="ADD m :v",
                 ExpressionAttributeValues={":v": {"N": "1"}})


def test_conditional_check_failed(ddb, make_table, server):
    name = make_table()
    key = {"pk": {"S": "c"}}
    ddb.put_item(TableName=name, Item={"pk": {"S": "c"}, "v": {"N": "1"}})
    msg = "The conditional request failed"
    expect_error(ddb.put_item, "ConditionalCheckFailedException", msg, TableName=name,
                 Item={"pk": {"S": "c"}}, ConditionExpression="attribute_not_exists(pk)")
    expect_error(ddb.update_item, "ConditionalCheckFailedException", msg, TableName=name,
                 Key=key, UpdateExpression="SET v = :n", ConditionExpression="v = :old",
                 ExpressionAttributeValues={":n": {"N": "3"}, ":old": {"N": "2"}})
    expect_error(ddb.delete_item, "ConditionalCheckFailedException", msg, TableName=name,
                 Key=key, ConditionExpression="v > :x",
                 ExpressionAttributeValues={":x": {"N": "5"}})
    # passing conditions apply
    ddb.update_item(TableName=name, Key=key, UpdateExpression="SET v = :n",
                    ConditionExpression="v = :old",
                    ExpressionAttributeValues={":n": {"N": "3"}, ":old": {"N": "1"}})
    # ReturnValuesOnConditionCheckFailure (newer than this botocore): raw JSON, the old item
    # rides in the error body
    for op, body in (
            ("PutItem", {"Item": {"pk": {"S": "c"}}, "ConditionExpression": "v = :x"}),
            ("UpdateItem", {"Key": key, "UpdateExpression": "SET w = :x",
                            "ConditionExpression": "v = :x"}),
            ("DeleteItem", {"Key": key, "ConditionExpression": "v = :x"})):
        body = dict(body, TableName=name, ReturnValuesOnConditionCheckFailure="ALL_OLD",
                    ExpressionAttributeValues={":x": {"N": "9"}})
        r = call(server, op, body)
        assert r.status == 400, (op, r)
        assert r.json() == {
            "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": msg, "Item": {"pk": {"S": "c"}, "v": {"N": "3"}}}, op
        body["ReturnValuesOnConditionCheckFailure"] = "NONE"
        r = call(server, op, body)
        assert r.status == 400 and "Item" not in r.json(), (op, r)
    # on a missing item there is nothing to return
    r = call(server, "DeleteItem", {"TableName": name, "Key": {"pk": {"S": "absent"}},
                                    "ConditionExpression": "attribute_exists(pk)",
                                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
    assert r.status == 400 and r.error_type == "ConditionalCheckFailedException", r
    assert "Item" not in r.json()
    assert ddb.get_item(TableName=name, Key=key)["Item"] == {"pk": {"S": "c"}, "v": {"N": "3"}}


# ---- Query and Scan --------------------------------------------------------------------------

def fill_sorted(ddb, name, pk, count):
    with_batch = [{"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"N": str(i)},
                                           "odd": {"BOOL": i % 2 == 1}}}}
                  for i in range(count)]
    for i in range(0, count, 25):
        r = ddb.batch_write_item(RequestItems={name: with_batch[i:i + 25]})
        assert r["UnprocessedItems"] == {}


def test_query(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    fill_sorted(ddb, name, "q", 30)
    fill_sorted(ddb, name, "other", 5)
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "q"}})
    assert [i["sk"]["N"] for i in r["Items"]] == [str(i) for i in range(30)]
    assert r["Count"] == 30 and r["ScannedCount"] == 30 and "LastEvaluatedKey" not in r
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": {"S": "q"}, ":a": {"N": "5"},
                                             ":b": {"N": "9"}},
                  ScanIndexForward=False)
    assert [i["sk"]["N"] for i in r["Items"]] == ["9", "8", "7", "6", "5"]
    for op, want in (("<", 3), ("<=", 4), (">", 26), (">=", 27), ("=", 1)):
        r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk %s :v" % op,
                      ExpressionAttributeValues={":p": {"S": "q"}, ":v": {"N": "3"}},
                      Select="COUNT")
        assert r["Count"] == want and "Items" not in r, op
    # filter: Count after the filter, ScannedCount before
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                  FilterExpression="odd = :t",
                  ExpressionAttributeValues={":p": {"S": "q"}, ":t": {"BOOL": True}},
                  ProjectionExpression="sk")
    assert r["Count"] == 15 and r["ScannedCount"] == 30
    assert r["Items"][:2] == [{"sk": {"N": "1"}}, {"sk": {"N": "3"}}]
    # errors
    expect_error(ddb.query, "ValidationException",
                 "Query condition missed key schema element: pk", TableName=name,
                 KeyConditionExpression="sk = :v", ExpressionAttributeValues={":v": {"N": "1"}})
    expect_error(ddb.query, "ValidationException", contains="Query key condition not supported",
                 TableName=name, KeyConditionExpression="pk > :v",
                 ExpressionAttributeValues={":v": {"S": "q"}})
    expect_error(ddb.query, "ValidationException",
                 "One or more parameter values were invalid: Condition parameter type does not "
                 "match schema type", TableName=name,
                 KeyConditionExpression="pk = :p AND sk = :v",
                 ExpressionAttributeValues={":p": {"S": "q"}, ":v": {"S": "1"}})
    expect_error(ddb.query, "ResourceNotFoundException", TableName=name + "-x",
                 KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "q"}})


def test_query_limit_and_exclusive_start_key(ddb, ddb_validating, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    fill_sorted(ddb, name, "p", 23)
    for forward in (True, False):
        got, start, pages = [], None, 0
        while True:
            kw = {"ExclusiveStartKey": start} if start else {}
            r = ddb.query(TableName=name, KeyConditionExpression="pk = :p", Limit=5,
                          ScanIndexForward=forward,
                          ExpressionAttributeValues={":p": {"S": "p"}}, **kw)
            pages += 1
            assert r["Count"] == len(r["Items"]) <= 5
            got += [int(i["sk"]["N"]) for i in r["Items"]]
            if "LastEvaluatedKey" not in r:
                break
            assert r["LastEvaluatedKey"] == {"pk": r["Items"][-1]["pk"],
                                             "sk": r["Items"][-1]["sk"]}
            start = r["LastEvaluatedKey"]
        assert got == sorted(range(23), reverse=not forward)
        assert pages == 5
    # a page that ends exactly at the last item still carries LastEvaluatedKey (DynamoDB)
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p", Limit=23,
                  ExpressionAttributeValues={":p": {"S": "p"}})
    assert r["Count"] == 23 and "LastEvaluatedKey" in r
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p", Limit=23,
                  ExclusiveStartKey=r["LastEvaluatedKey"],
                  ExpressionAttributeValues={":p": {"S": "p"}})
    assert r["Count"] == 0 and r["Items"] == [] and "LastEvaluatedKey" not in r
    # boto3's paginator
    pages = list(ddb_validating.get_paginator("query").paginate(
        TableName=name, KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "p"}}, PaginationConfig={"PageSize": 4}))
    assert [int(i["sk"]["N"]) for p in pages for i in p["Items"]] == list(range(23))
    assert len(pages) == 6
    # a start key outside the key condition
    expect_error(ddb.query, "ValidationException", contains="The provided starting key",
                 TableName=name, KeyConditionExpression="pk = :p", Limit=5,
                 ExclusiveStartKey={"pk": {"S": "zzz"}, "sk": {"N": "1"}},
                 ExpressionAttributeValues={":p": {"S": "p"}})
    expect_error(ddb.query, "ValidationException", contains="limit", TableName=name, Limit=0,
                 KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "p"}})


def big_items(ddb, name, pk, count, size):
    payload = "x" * size
    for i in range(count):
        ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "sk": {"N": str(i)},
                                           "n": {"N": str(i)}, "data": {"S": payload}})


def test_query_and_scan_one_megabyte_pages(ddb, ddb_validating, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    count, size = 25, 100 * 1024  # 2.5 MB in one partition
    big_items(ddb, name, "big", count, size)
    for op in ("query", "scan"):
        kw = dict(TableName=name)
        if op == "query":
            kw.update(KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": {"S": "big"}})
        got, start, counts = [], None, []
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            r = getattr(ddb, op)(ProjectionExpression="sk", **kw, **extra)
            counts.append(r["Count"])
            # a page reads about 1 MB: 10 items of 100 KB (DynamoDB: the item that crosses 1 MB
            # ends the page)
            assert r["ScannedCount"] <= 11
            got += [int(i["sk"]["N"]) for i in r["Items"]]
            if "LastEvaluatedKey" not in r:
                break
            start = r["LastEvaluatedKey"]
        assert sorted(got) == list(range(count)), op
        assert len(counts) == 3 and min(counts[:2]) >= 9, (op, counts)
        # a filter that matches nothing still pages by 1 MB read
        r = getattr(ddb, op)(FilterExpression="n < :neg",
                             **dict(kw, ExpressionAttributeValues=dict(
                                 kw.get("ExpressionAttributeValues", {}),
                                 **{":neg": {"N": "-1"}})))
        assert r["Count"] == 0 and r["ScannedCount"] in (10, 11) and "LastEvaluatedKey" in r
    pages = list(ddb_validating.get_paginator("scan").paginate(TableName=name))
    assert sum(p["Count"] for p in pages) == count and len(pages) == 3


def test_scan_and_parallel_segments(ddb, ddb_validating, make_table):
    name = make_table(("pk", "S"))
    n = scaled(200, 50)
    items = [{"PutRequest": {"Item": {"pk": {"S": "k%04d" % i}, "v": {"N": str(i)}}}}
             for i in range(n)]
    for i in range(0, n, 25):
        ddb.batch_write_item(RequestItems={name: items[i:i + 25]})
    full = ddb.scan(TableName=name)
    assert full["Count"] == n and full["ScannedCount"] == n and "LastEvaluatedKey" not in full
    all_keys = sorted(i["pk"]["S"] for i in full["Items"])
    assert all_keys == ["k%04d" % i for i in range(n)]
    # Limit pages: the union is the full scan, in the same order
    got, start = [], None
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        r = ddb.scan(TableName=name, Limit=7, **kw)
        assert r["Count"] <= 7
        got += [i["pk"]["S"] for i in r["Items"]]
        if "LastEvaluatedKey" not in r:
            break
        start = r["LastEvaluatedKey"]
    assert got == [i["pk"]["S"] for i in full["Items"]]
    # parallel scan: the segments partition the table
    for total in (1, 3, 4, 16):
        seen = []
        for seg in range(total):
            pages = ddb_validating.get_paginator("scan").paginate(
                TableName=name, Segment=seg, TotalSegments=total,
                PaginationConfig={"PageSize": 11})
            seen += [i["pk"]["S"] for p in pages for i in p["Items"]]
        assert sorted(seen) == all_keys, total
    # filter and select
    r = ddb.scan(TableName=name, FilterExpression="v < :x",
                 ExpressionAttributeValues={":x": {"N": "10"}}, Select="COUNT")
    assert r["Count"] == 10 and r["ScannedCount"] == n and "Items" not in r
    expect_error(ddb.scan, "ValidationException",
                 "The Segment parameter is required but was not present in the request when "
                 "parameter TotalSegments is present", TableName=name, TotalSegments=2)
    expect_error(ddb.scan, "ValidationException",
                 "The Segment parameter is zero-based and must be less than parameter "
                 "TotalSegments: Segment: 2 is not less than TotalSegments: 2",
                 TableName=name, Segment=2, TotalSegments=2)
    expect_error(ddb.scan, "ValidationException", contains="totalSegments", TableName=name,
                 Segment=0, TotalSegments=1000001)


# ---- batches ---------------------------------------------------------------------------------

def test_batch_get_item(ddb, make_table):
    a = make_table(("pk", "S"))
    b = make_table(("id", "N"))
    for i in range(60):
        ddb.put_item(TableName=a, Item={"pk": {"S": "a%d" % i}, "x": {"N": str(i)}})
        ddb.put_item(TableName=b, Item={"id": {"N": str(i)}, "y": {"S": "b%d" % i}})
    req = {a: {"Keys": [{"pk": {"S": "a%d" % i}} for i in range(50)] + [{"pk": {"S": "none"}}],
               "ProjectionExpression": "x"},
           b: {"Keys": [{"id": {"N": str(i)}} for i in range(49)], "ConsistentRead": True}}
    r = ddb.batch_get_item(RequestItems=req)  # 100 keys: the maximum
    assert r["UnprocessedKeys"] == {}
    assert sorted(int(i["x"]["N"]) for i in r["Responses"][a]) == list(range(50))
    assert all(i.keys() == {"x"} for i in r["Responses"][a])
    assert sorted(i["y"]["S"] for i in r["Responses"][b]) == sorted("b%d" % i for i in range(49))
    # 101 keys
    req[b]["Keys"].append({"id": {"N": "59"}})
    req[b]["Keys"].append({"id": {"N": "58"}})
    expect_error(ddb.batch_get_item, "ValidationException",
                 "Too many items requested for the BatchGetItem call", RequestItems=req)
    expect_error(ddb.batch_get_item, "ValidationException",
                 "Provided list of item keys contains duplicates",
                 RequestItems={a: {"Keys": [{"pk": {"S": "a1"}}, {"pk": {"S": "a1"}}]}})
    expect_error(ddb.batch_get_item, "ResourceNotFoundException",
                 RequestItems={a + "-missing": {"Keys": [{"pk": {"S": "a1"}}]}})
    expect_error(ddb.batch_get_item, "ValidationException",
                 "The provided key element does not match the schema",
                 RequestItems={a: {"Keys": [{"pk": {"N": "1"}}]}})


def test_batch_write_item(ddb, make_table):
    a = make_table(("pk", "S"))
    b = make_table(("pk", "S"), ("sk", "S"))
    ddb.put_item(TableName=a, Item={"pk": {"S": "gone"}})
    req = {a: [{"PutRequest": {"Item": {"pk": {"S": "w%d" % i}}}} for i in range(20)] +
              [{"DeleteRequest": {"Key": {"pk": {"S": "gone"}}}}],
           b: [{"PutRequest": {"Item": {"pk": {"S": "x"}, "sk": {"S": str(i)}}}}
               for i in range(4)]}
    r = ddb.batch_write_item(RequestItems=req)  # 25 requests: the maximum
    assert r["UnprocessedItems"] == {}
    assert ddb.scan(TableName=a, Select="COUNT")["Count"] == 20
    assert ddb.scan(TableName=b, Select="COUNT")["Count"] == 4
    req[b].append({"PutRequest": {"Item": {"pk": {"S": "x"}, "sk": {"S": "new"}}}})
    expect_error(ddb.batch_write_item, "ValidationException",
                 "Too many items requested for the BatchWriteItem call", RequestItems=req)
    expect_error(ddb.batch_write_item, "ValidationException", contains="25",
                 RequestItems={a: [{"PutRequest": {"Item": {"pk": {"S": "y%d" % i}}}}
                                   for i in range(26)]})
    expect_error(ddb.batch_write_item, "ValidationException",
                 "Provided list of item keys contains duplicates",
                 RequestItems={a: [{"PutRequest": {"Item": {"pk": {"S": "d"}}}},
                                   {"DeleteRequest": {"Key": {"pk": {"S": "d"}}}}]})
    expect_error(ddb.batch_write_item, "ResourceNotFoundException",
                 RequestItems={a + "-missing": [{"PutRequest": {"Item": {"pk": {"S": "d"}}}}]})
    # nothing of a rejected batch was applied
    assert "Item" not in ddb.get_item(TableName=a, Key={"pk": {"S": "y0"}})
    assert "Item" not in ddb.get_item(TableName=b, Key={"pk": {"S": "x"}, "sk": {"S": "new"}})


def test_raw_batch_shapes(server, make_table):
    # ReturnConsumedCapacity through the raw protocol: DynamoDB's capacity shape
    name = make_table()
    r = call(server, "PutItem", {"TableName": name, "Item": {"pk": {"S": "cap"}},
                                 "ReturnConsumedCapacity": "TOTAL"})
    assert r.status == 200, r
    assert r.json() == {"ConsumedCapacity": {"TableName": name, "CapacityUnits": 1.0}}
    r = call(server, "GetItem", {"TableName": name, "Key": {"pk": {"S": "cap"}},
                                 "ReturnConsumedCapacity": "TOTAL"})
    assert r.json()["ConsumedCapacity"] == {"TableName": name, "CapacityUnits": 0.5}
    # the body a binary-carrying response has is base64, as sent
    r = call(server, "PutItem", {"TableName": name,
                                 "Item": {"pk": {"S": "bin"}, "b": {"B": b64(b"\x00\xff")}}})
    assert r.status == 200 and r.json() == {}
    r = call(server, "GetItem", {"TableName": name, "Key": {"pk": {"S": "bin"}}})
    assert json.loads(r.body)["Item"]["b"] == {"B": "AP8="}


def test_body_over_16_mb_is_refused(server, make_table):
    name = make_table()
    body = (b'{"TableName":"' + name.encode() + b'","Item":{"pk":{"S":"big"},"v":{"S":"' +
            b"a" * (16 * 1024 * 1024) + b'"}}}')
    chunks = [http_head("PutItem", len(body))] + [body[i:i + (1 << 20)]
                                                   for i in range(0, len(body), 1 << 20)]
    # The server may answer (and close) as soon as it sees the Content-Length: the exchange
    # keeps reading while it writes.
    responses, raw, _ = socket_exchange(server, chunks, timeout=120)
    assert responses, "no HTTP response to a 16 MB body: %r" % raw[:300]
    r = responses[0]
    assert r.status in (400, 413), r
    assert r.json()["__type"].startswith("com.amazonaws.dynamodb.v20120810#"), r
    assert "16777216" in r.json()["message"], r
    assert call(server, "GetItem", {"TableName": name,
                                    "Key": {"pk": {"S": "big"}}}).json() == {}
    # a 15 MB body is not refused for its size; the item is, for its own size
    r = call(server, "PutItem", {"TableName": name, "Item": {"pk": {"S": "big"},
                                                             "v": {"S": "a" * (15 << 20)}}},
             timeout=120)
    assert r.status == 400 and r.error_type == "ValidationException", r
    assert r.message == "Item size has exceeded the maximum allowed size"
    call(server, "ListTables", {})  # still serving


def test_concurrent_clients(server, make_table):
    """Many keep-alive connections at once: every response is the right one, and ADD on one
    shared counter from every thread loses no increment."""
    name = make_table()
    threads_n, per = 16, scaled(40, 10)
    errors = []

    def worker(tid):
        client = make_client(server.url)
        try:
            for i in range(per):
                key = {"pk": {"S": "t%d-%d" % (tid, i)}}
                client.put_item(TableName=name, Item=dict(key, v={"N": str(i)},
                                                          owner={"S": "t%d" % tid}))
                got = client.get_item(TableName=name, Key=key)["Item"]
                if got != dict(key, v={"N": str(i)}, owner={"S": "t%d" % tid}):
                    errors.append(("mismatch", tid, i, got))
                client.update_item(TableName=name, Key={"pk": {"S": "shared"}},
                                   UpdateExpression="ADD c :one",
                                   ExpressionAttributeValues={":one": {"N": "1"}})
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(("exception", tid, repr(e)))

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads_n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    assert not errors, errors[:5]
    ddb = make_client(server.url)
    shared = ddb.get_item(TableName=name, Key={"pk": {"S": "shared"}}, ConsistentRead=True)
    assert shared["Item"]["c"] == {"N": str(threads_n * per)}
    assert ddb.scan(TableName=name, Select="COUNT")["Count"] == threads_n * per + 1


def test_large_response_checksum(server, make_table):
    # x-amz-crc32 over a ~1 MB body (boto3 verifies it too, on every response)
    name = make_table(("pk", "S"), ("sk", "N"))
    for i in range(12):
        call(server, "PutItem", {"TableName": name, "Item": {"pk": {"S": "p"}, "sk": {"N": str(i)},
                                                             "v": {"S": "é" * 40000}}})
    r = call(server, "Query", {"TableName": name, "KeyConditionExpression": "pk = :p",
                               "ExpressionAttributeValues": {":p": {"S": "p"}}})
    assert r.status == 200 and len(r.body) > 900000
    check_protocol_headers(r)
    assert r.json()["Count"] == 12
