"""test_item_collections.py - This file contains the conformance tests of item collections over
HTTP: ReturnItemCollectionMetrics SIZE on PutItem, UpdateItem, DeleteItem and BatchWriteItem of
a table with a local secondary index (the response members, their order and their numbers as
DynamoDB prints them), nothing on a table without an LSI or with NONE, the enum check, and
ItemCollectionSizeLimitExceededException with the limit lowered to a few KB
(kura-server --item-collection-limit).

The shapes are DynamoDB's documented ones (API reference, PutItem/BatchWriteItem
"ItemCollectionMetrics"; the error list of "Error handling": "Collection size exceeded").
DynamoDB Local 1.25.1 accepts the parameter but never returns the metrics nor the error, so it
cannot serve as the reference here; kura follows the documentation and the member order of
DynamoDB's SDK models (Attributes, ConsumedCapacity, ItemCollectionMetrics; UnprocessedItems,
ItemCollectionMetrics, ConsumedCapacity).
"""

import json

import pytest
from botocore.exceptions import ClientError

from conftest import call, make_client, unique_name

LIMIT = 4096
ENUM_MSG = ("1 validation error detected: Value '%s' at 'returnItemCollectionMetrics' failed "
            "to satisfy constraint: Member must satisfy enum value set: [SIZE, NONE]")


@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory(args=["--item-collection-limit", str(LIMIT)])


@pytest.fixture(scope="module")
def client(srv):
    return make_client(srv.url)


def ordered(resp):
    """The response body as (key, value) pairs in the order the server wrote them."""
    return json.loads(resp.body.decode("utf-8"), object_pairs_hook=list)


def ok(srv, op, body):
    r = call(srv, op, body)
    assert r.status == 200, (op, body, r)
    return r


def create(srv, name, lsi):
    defs = [{"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"}]
    body = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}]}
    if lsi:
        defs.append({"AttributeName": "x", "AttributeType": "S"})
        body["LocalSecondaryIndexes"] = [{
            "IndexName": "ByX",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "x", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}]
    body["AttributeDefinitions"] = defs
    ok(srv, "CreateTable", body)
    return name


@pytest.fixture(scope="module")
def tables(srv):
    return create(srv, unique_name("lsi"), True), create(srv, unique_name("plain"), False)


def item(pk, sk, x=None, pad=0):
    it = {"pk": {"S": pk}, "sk": {"S": sk}}
    if x is not None:
        it["x"] = {"S": x}
    if pad:
        it["filler"] = {"S": "p" * pad}
    return it


def metrics_of(pk):
    return {"ItemCollectionKey": {"pk": {"S": pk}}, "SizeEstimateRangeGB": [0.0, 1.0]}


def test_put_update_delete_return_metrics(srv, tables):
    lsi, _ = tables
    r = ok(srv, "PutItem", {"TableName": lsi, "Item": item("a", "1", "q"),
                            "ReturnItemCollectionMetrics": "SIZE"})
    assert r.json() == {"ItemCollectionMetrics": metrics_of("a")}
    # DynamoDB prints the bounds as doubles
    assert b'"SizeEstimateRangeGB":[0.0,1.0]' in r.body, r.body

    r = ok(srv, "PutItem", {"TableName": lsi, "Item": item("a", "1", "r"),
                            "ReturnValues": "ALL_OLD", "ReturnConsumedCapacity": "TOTAL",
                            "ReturnItemCollectionMetrics": "SIZE"})
    pairs = ordered(r)
    assert [k for k, _ in pairs] == ["Attributes", "ConsumedCapacity", "ItemCollectionMetrics"]
    assert r.json()["ItemCollectionMetrics"] == metrics_of("a")

    r = ok(srv, "UpdateItem", {"TableName": lsi, "Key": {"pk": {"S": "b"}, "sk": {"S": "1"}},
                               "UpdateExpression": "SET x = :x",
                               "ExpressionAttributeValues": {":x": {"S": "v"}},
                               "ReturnValues": "ALL_NEW",
                               "ReturnItemCollectionMetrics": "SIZE"})
    assert [k for k, _ in ordered(r)] == ["Attributes", "ItemCollectionMetrics"]
    assert r.json()["ItemCollectionMetrics"] == metrics_of("b")

    # a delete, also of an item that does not exist, reports its collection
    for sk in ("1", "missing"):
        r = ok(srv, "DeleteItem", {"TableName": lsi, "Key": {"pk": {"S": "b"}, "sk": {"S": sk}},
                                   "ReturnItemCollectionMetrics": "SIZE"})
        assert r.json() == {"ItemCollectionMetrics": metrics_of("b")}


def test_no_metrics_without_lsi_or_without_size(srv, tables):
    lsi, plain = tables
    for table, rm in ((plain, "SIZE"), (lsi, "NONE"), (lsi, None)):
        body = {"TableName": table, "Item": item("c", "1", "q")}
        if rm:
            body["ReturnItemCollectionMetrics"] = rm
        assert ok(srv, "PutItem", body).json() == {}
        body = {"TableName": table, "Key": {"pk": {"S": "c"}, "sk": {"S": "1"}}}
        if rm:
            body["ReturnItemCollectionMetrics"] = rm
        assert ok(srv, "DeleteItem", body).json() == {}


@pytest.mark.parametrize("op", ["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"])
def test_enum_is_checked(srv, tables, op):
    lsi, _ = tables
    body = {"PutItem": {"TableName": lsi, "Item": item("d", "1")},
            "UpdateItem": {"TableName": lsi, "Key": {"pk": {"S": "d"}, "sk": {"S": "1"}}},
            "DeleteItem": {"TableName": lsi, "Key": {"pk": {"S": "d"}, "sk": {"S": "1"}}},
            "BatchWriteItem": {"RequestItems": {lsi: [{"PutRequest": {"Item": item("d", "1")}}]}},
            }[op]
    body["ReturnItemCollectionMetrics"] = "size"
    r = call(srv, op, body)
    assert r.status == 400, r
    assert r.error_type == "ValidationException", r
    assert r.message == ENUM_MSG % "size"


def test_batch_write_metrics(srv, tables):
    lsi, plain = tables
    r = ok(srv, "BatchWriteItem", {
        "RequestItems": {
            lsi: [{"PutRequest": {"Item": item("e", "1", "q")}},
                  {"PutRequest": {"Item": item("f", "1")}},
                  {"DeleteRequest": {"Key": {"pk": {"S": "e"}, "sk": {"S": "0"}}}}],
            plain: [{"PutRequest": {"Item": item("e", "1")}}]},
        "ReturnItemCollectionMetrics": "SIZE", "ReturnConsumedCapacity": "TOTAL"})
    assert [k for k, _ in ordered(r)] == ["UnprocessedItems", "ItemCollectionMetrics",
                                          "ConsumedCapacity"]
    got = r.json()
    assert got["UnprocessedItems"] == {}
    # one entry per request on the table with the LSI, none for the other table
    assert got["ItemCollectionMetrics"] == {
        lsi: [metrics_of("e"), metrics_of("f"), metrics_of("e")]}

    # only tables without an LSI, or NONE: no member at all
    for body in ({"RequestItems": {plain: [{"PutRequest": {"Item": item("g", "1")}}]},
                  "ReturnItemCollectionMetrics": "SIZE"},
                 {"RequestItems": {lsi: [{"PutRequest": {"Item": item("g", "1")}}]},
                  "ReturnItemCollectionMetrics": "NONE"}):
        assert ok(srv, "BatchWriteItem", body).json() == {"UnprocessedItems": {}}


def test_boto3_parses_the_metrics(client, tables):
    lsi, _ = tables
    resp = client.put_item(TableName=lsi, Item=item("h", "1", "q"),
                           ReturnItemCollectionMetrics="SIZE")
    assert resp["ItemCollectionMetrics"] == {"ItemCollectionKey": {"pk": {"S": "h"}},
                                             "SizeEstimateRangeGB": [0.0, 1.0]}
    resp = client.batch_write_item(RequestItems={lsi: [{"PutRequest": {"Item": item("h", "2")}}]},
                                   ReturnItemCollectionMetrics="SIZE")
    assert resp["ItemCollectionMetrics"][lsi][0]["ItemCollectionKey"] == {"pk": {"S": "h"}}


def test_collection_size_limit(srv, client, tables):
    lsi, plain = tables
    # each item counts twice (the table and the ALL LSI): ~1 KB, so a handful fit in 4 KB
    n = 0
    while True:
        r = call(srv, "PutItem", {"TableName": lsi, "Item": item("big", "%02d" % n, "q", 500)})
        if r.status != 200:
            break
        n += 1
        assert n < 10, "the limit of %d bytes never refused a put" % LIMIT
    assert n >= 2
    assert r.status == 400, r
    assert r.error_type == "ItemCollectionSizeLimitExceededException", r
    assert r.message == "Collection size exceeded"
    refused = {"pk": {"S": "big"}, "sk": {"S": "%02d" % n}}
    assert ok(srv, "GetItem", {"TableName": lsi, "Key": refused}).json() == {}  # nothing written

    # boto3 knows the error type
    with pytest.raises(client.exceptions.ItemCollectionSizeLimitExceededException):
        client.put_item(TableName=lsi, Item=item("big", "%02d" % n, "q", 500))
    # an update that grows an item is refused too; one that shrinks it passes
    r = call(srv, "UpdateItem", {"TableName": lsi, "Key": {"pk": {"S": "big"}, "sk": {"S": "00"}},
                                 "UpdateExpression": "SET more = :m",
                                 "ExpressionAttributeValues": {":m": {"S": "m" * 1000}}})
    assert r.error_type == "ItemCollectionSizeLimitExceededException", r
    ok(srv, "UpdateItem", {"TableName": lsi, "Key": {"pk": {"S": "big"}, "sk": {"S": "00"}},
                           "UpdateExpression": "REMOVE filler"})
    # a BatchWriteItem that would exceed it fails with the same error
    r = call(srv, "BatchWriteItem", {"RequestItems": {lsi: [
        {"PutRequest": {"Item": item("big", "b1", "q", 3000)}}]}})
    assert r.error_type == "ItemCollectionSizeLimitExceededException", r
    # deletes pass and make room; other partition keys and tables without an LSI are not held
    ok(srv, "DeleteItem", {"TableName": lsi, "Key": {"pk": {"S": "big"}, "sk": {"S": "01"}}})
    ok(srv, "PutItem", {"TableName": lsi, "Item": item("big", "%02d" % n, "q", 500)})
    ok(srv, "PutItem", {"TableName": lsi, "Item": item("other", "1", "q", 500)})
    for i in range(12):
        ok(srv, "PutItem", {"TableName": plain, "Item": item("big", "%02d" % i, None, 500)})
