"""test_transactions.py - This file contains the conformance tests of TransactWriteItems and
TransactGetItems over HTTP: a Put + Update + Delete + ConditionCheck transaction across two
tables, every cancellation reason kura produces (ConditionalCheckFailed with and without the
ALL_OLD item, ValidationError, ItemCollectionSizeLimitExceeded), the request-level
ValidationExceptions, ResourceNotFoundException, TransactGetItems across tables with
projections and a missing item, ConsumedCapacity, the error body as botocore parses it
(e.response["CancellationReasons"]), all-or-nothing under concurrent transfers, and
ClientRequestToken (test_client_request_token_*).

The reference is DynamoDB Local 1.25.1 (amplify-dynamodb-simulator 2.9.30), request by request,
and DynamoDB's documentation where the two differ:
  - TransactionCanceledException's body is {"__type", "CancellationReasons", "Message"} in that
    order (both Local and DynamoDB's model spell it "Message"); each reason is {"Code":"None"}
    or {["Item":{..},]"Code":..,"Message":..};
  - a transaction's ConsumedCapacity names its units' kind ("WriteCapacityUnits" /
    "ReadCapacityUnits"), one entry per table; the figures are the documentation's: a
    transactional write of an item up to 1 KB costs 2 write units, a read up to 4 KB 2 read
    units. Local charges reads so (2.0 per item, also a missing one) but writes twice that
    (4.0 for one small Put, and 4.0 again for each LSI entry);
  - Local does not check the enums, the token's minimum length nor UpdateExpression's presence,
    answers a type error with InternalFailure and words constraint errors without "1 validation
    error detected: " and without quotes around the value; kura reports them as DynamoDB does
    for every other operation (schema.h).
The server runs with --item-collection-limit 4096 (as test_item_collections.py) so that a
transaction can be cancelled with ItemCollectionSizeLimitExceeded.
"""

import json
import threading

import pytest
from botocore.exceptions import ClientError

from conftest import call, make_client, scaled, seeded_rng, unique_name

LIMIT = 4096
CANCELLED = "Transaction cancelled, please refer cancellation reasons for specific reasons [%s]"
CCF = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
# a ConditionCheck's reason ends with a full stop (DynamoDB Local 1.25.1; the message the API
# reference lists for ConditionalCheckFailed), a Put's, Update's or Delete's does not
CCF_CHECK = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed."}
NONE = {"Code": "None"}


@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory(args=["--item-collection-limit", str(LIMIT)])


@pytest.fixture(scope="module")
def client(srv):
    return make_client(srv.url)


def ordered(resp):
    """The response body with every object as a list of [key, value] pairs, in the order the
    server wrote them."""
    return json.loads(resp.body.decode("utf-8"),
                      object_pairs_hook=lambda pairs: [list(p) for p in pairs])


def ok(srv, op, body):
    r = call(srv, op, body)
    assert r.status == 200, (op, body, r)
    return r.json()


def fails(srv, op, body, error_type, message=None):
    r = call(srv, op, body)
    assert r.status == 400 and r.error_type == error_type, (body, r)
    if message is not None:
        assert r.message == message, r
    return r


def create(srv, name, keys=(("pk", "S"),), lsi=False):
    defs = [{"AttributeName": k, "AttributeType": t} for k, t in keys]
    schema = [{"AttributeName": k, "KeyType": kt} for (k, _), kt in zip(keys, ("HASH", "RANGE"))]
    body = {"TableName": name, "BillingMode": "PAY_PER_REQUEST", "KeySchema": schema,
            "AttributeDefinitions": defs}
    if lsi:
        defs.append({"AttributeName": "x", "AttributeType": "S"})
        body["LocalSecondaryIndexes"] = [{
            "IndexName": "ByX",
            "KeySchema": [{"AttributeName": keys[0][0], "KeyType": "HASH"},
                          {"AttributeName": "x", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}]
    ok(srv, "CreateTable", body)
    return name


@pytest.fixture(scope="module")
def tables(srv):
    """users (user_id), stock (product_id), orders (customer, order_id: N), lsi (pk, sk + LSI)."""
    return {
        "users": create(srv, unique_name("users"), (("user_id", "S"),)),
        "stock": create(srv, unique_name("stock"), (("product_id", "S"),)),
        "orders": create(srv, unique_name("orders"), (("customer", "S"), ("order_id", "N"))),
        "lsi": create(srv, unique_name("lsi"), (("pk", "S"), ("sk", "S")), lsi=True),
    }


def get(srv, table, key):
    return ok(srv, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


def user(uid):
    return {"user_id": {"S": uid}}


def product(pid):
    return {"product_id": {"S": pid}}


# ---- a transaction of every action across two tables ---------------------------------------

def test_put_update_delete_condition_check_across_two_tables(srv, client, tables):
    users, stock = tables["users"], tables["stock"]
    client.put_item(TableName=stock, Item={**product("item-A"), "stock": {"N": "20"}})
    client.put_item(TableName=stock, Item={**product("item-B"), "stock": {"N": "0"}})
    client.put_item(TableName=users, Item={**user("user-C"), "status": {"S": "active"}})
    resp = client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": users, "Item": {**user("user-A"), "status": {"S": "active"}},
                     "ConditionExpression": "attribute_not_exists(user_id)"}},
            {"Update": {"TableName": stock, "Key": product("item-A"),
                        "UpdateExpression": "SET stock = stock - :n",
                        "ConditionExpression": "stock >= :n",
                        "ExpressionAttributeValues": {":n": {"N": "5"}}}},
            {"Delete": {"TableName": users, "Key": user("user-C")}},
            {"ConditionCheck": {"TableName": stock, "Key": product("item-B"),
                                "ConditionExpression": "#s = :zero",
                                "ExpressionAttributeNames": {"#s": "stock"},
                                "ExpressionAttributeValues": {":zero": {"N": "0"}}}},
        ],
        ReturnConsumedCapacity="TOTAL")
    # 2 write units per item up to 1 KB, per table in order of first appearance
    assert resp["ConsumedCapacity"] == [
        {"TableName": users, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0},
        {"TableName": stock, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    assert get(srv, users, user("user-A")) == {**user("user-A"), "status": {"S": "active"}}
    assert get(srv, stock, product("item-A")) == {**product("item-A"), "stock": {"N": "15"}}
    assert get(srv, users, user("user-C")) is None
    assert get(srv, stock, product("item-B")) == {**product("item-B"), "stock": {"N": "0"}}

    # without ReturnConsumedCapacity the answer is {}
    r = call(srv, "TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": stock, "Key": product("item-A"),
                    "UpdateExpression": "ADD stock :n",
                    "ExpressionAttributeValues": {":n": {"N": "1"}}}}]})
    assert r.status == 200 and r.body == b"{}", r


# ---- cancellation reasons --------------------------------------------------------------------

def test_condition_failed_with_and_without_item(srv, tables):
    users, stock = tables["users"], tables["stock"]
    ok(srv, "PutItem", {"TableName": stock, "Item": {**product("cf-1"), "stock": {"N": "3"}}})
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("cf-u"), "status": {"S": "x"}}})
    body = {"TransactItems": [
        {"Put": {"TableName": users, "Item": {**user("cf-new")}}},
        {"Update": {"TableName": stock, "Key": product("cf-1"),
                    "UpdateExpression": "SET stock = stock - :n", "ConditionExpression": "stock >= :n",
                    "ExpressionAttributeValues": {":n": {"N": "10"}},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        {"ConditionCheck": {"TableName": users, "Key": user("cf-u"),
                            "ConditionExpression": "#s = :s",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {":s": {"S": "banned"}}}},
        {"Delete": {"TableName": users, "Key": user("cf-missing"),
                    "ConditionExpression": "attribute_exists(user_id)",
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
    ], "ReturnConsumedCapacity": "TOTAL"}
    r = fails(srv, "TransactWriteItems", body, "TransactionCanceledException")
    # the exact body, members in DynamoDB's order; no Item for a missing item even with ALL_OLD
    assert ordered(r) == json.loads(json.dumps([
        ["__type", "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"],
        ["CancellationReasons", [
            [["Code", "None"]],
            [["Item", [["product_id", [["S", "cf-1"]]], ["stock", [["N", "3"]]]]],
             ["Code", "ConditionalCheckFailed"], ["Message", "The conditional request failed"]],
            [["Code", "ConditionalCheckFailed"], ["Message", "The conditional request failed."]],
            [["Code", "ConditionalCheckFailed"], ["Message", "The conditional request failed"]]]],
        ["Message", CANCELLED % "None, ConditionalCheckFailed, ConditionalCheckFailed, "
                                "ConditionalCheckFailed"]]))
    # nothing was written
    assert get(srv, users, user("cf-new")) is None
    assert get(srv, stock, product("cf-1"))["stock"] == {"N": "3"}


def test_validation_error_reason(srv, tables):
    users, stock = tables["users"], tables["stock"]
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("big"), "a": {"S": "x" * 300000}}})
    body = {"TransactItems": [
        {"Put": {"TableName": stock, "Item": product("ve-1")}},
        {"Update": {"TableName": users, "Key": user("big"), "UpdateExpression": "SET b = :b",
                    "ExpressionAttributeValues": {":b": {"S": "y" * 200000}}}}]}
    r = fails(srv, "TransactWriteItems", body, "TransactionCanceledException",
              CANCELLED % "None, ValidationError")
    assert r.json()["CancellationReasons"] == [
        NONE, {"Code": "ValidationError",
               "Message": "Item size to update has exceeded the maximum allowed size"}]
    assert get(srv, stock, product("ve-1")) is None
    assert "b" not in get(srv, users, user("big"))


def test_item_collection_size_limit_reason(srv, tables):
    lsi, users = tables["lsi"], tables["users"]
    pad = "p" * 500
    n = 0
    while True:  # each ~0.5 KB item counts twice (the table and the ALL LSI)
        r = call(srv, "PutItem", {"TableName": lsi, "Item": {
            "pk": {"S": "coll"}, "sk": {"S": "%02d" % n}, "x": {"S": "q"}, "f": {"S": pad}}})
        if r.status != 200:
            assert r.error_type == "ItemCollectionSizeLimitExceededException", r
            break
        n += 1
        assert n < 10, "the limit of %d bytes never refused a put" % LIMIT
    body = {"TransactItems": [
        {"Put": {"TableName": users, "Item": user("isl-1")}},
        {"Put": {"TableName": lsi, "Item": {"pk": {"S": "coll"}, "sk": {"S": "new"},
                                            "x": {"S": "q"}, "f": {"S": pad * 3}}}}]}
    r = fails(srv, "TransactWriteItems", body, "TransactionCanceledException",
              CANCELLED % "None, ItemCollectionSizeLimitExceeded")
    assert r.json()["CancellationReasons"] == [
        NONE, {"Code": "ItemCollectionSizeLimitExceeded", "Message": "Collection size exceeded"}]
    assert get(srv, users, user("isl-1")) is None
    # a delete in the full collection passes (it does not grow it)
    ok(srv, "TransactWriteItems", {"TransactItems": [
        {"Delete": {"TableName": lsi, "Key": {"pk": {"S": "coll"}, "sk": {"S": "00"}}}}]})


def test_botocore_parses_cancellation_reasons(client, tables):
    stock = tables["stock"]
    client.put_item(TableName=stock, Item={**product("bc-1"), "stock": {"N": "1"}})
    with pytest.raises(ClientError) as ei:
        client.transact_write_items(TransactItems=[
            {"ConditionCheck": {"TableName": stock, "Key": product("bc-1"),
                                "ConditionExpression": "stock > :z",
                                "ExpressionAttributeValues": {":z": {"N": "5"}},
                                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
            {"Put": {"TableName": stock, "Item": product("bc-2")}}])
    e = ei.value
    msg = CANCELLED % "ConditionalCheckFailed, None"
    assert e.response["Error"]["Code"] == "TransactionCanceledException"
    assert e.response["Error"]["Message"] == msg
    assert e.response["Message"] == msg  # the modelled member
    assert e.response["CancellationReasons"] == [
        {"Item": {**product("bc-1"), "stock": {"N": "1"}}, **CCF_CHECK}, NONE]
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    # the client's modelled exception class catches it
    with pytest.raises(client.exceptions.TransactionCanceledException):
        client.transact_write_items(TransactItems=[
            {"ConditionCheck": {"TableName": stock, "Key": product("bc-1"),
                                "ConditionExpression": "attribute_not_exists(product_id)"}}])


# ---- request errors ------------------------------------------------------------------------------

def test_request_validation_errors(srv, client, tables):
    users = tables["users"]
    W = "TransactWriteItems"
    fails(srv, W, {"TransactItems": []}, "ValidationException",
          "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
          "constraint: Member must have length greater than or equal to 1")
    puts = [{"Put": {"TableName": users, "Item": user("many-%03d" % i)}} for i in range(101)]
    r = fails(srv, W, {"TransactItems": puts}, "ValidationException")
    assert r.message.startswith("1 validation error detected: Value '[com.amazonaws.dynamodb."
                                "v20120810.TransactWriteItem@"), r.message[:200]
    assert r.message.endswith("]' at 'transactItems' failed to satisfy constraint: Member "
                              "must have length less than or equal to 100"), r.message[-200:]
    assert get(srv, users, user("many-000")) is None
    ok(srv, W, {"TransactItems": puts[:100]})  # 100 is the limit
    assert get(srv, users, user("many-099")) == user("many-099")
    fails(srv, W, {"TransactItems": [
        {"Put": {"TableName": users, "Item": {**user("dup"), "a": {"S": "1"}}}},
        {"Update": {"TableName": users, "Key": user("dup"), "UpdateExpression": "SET b = :b",
                    "ExpressionAttributeValues": {":b": {"S": "2"}}}}]},
          "ValidationException",
          "Transaction request cannot include multiple operations on one item")
    fails(srv, W, {"TransactItems": [
        {"ConditionCheck": {"TableName": users, "Key": user("dup")}}]},
          "ValidationException",
          "1 validation error detected: Value null at "
          "'transactItems.1.member.conditionCheck.conditionExpression' failed to satisfy "
          "constraint: Member must not be null")
    fails(srv, W, {"TransactItems": [{}]}, "ValidationException",
          "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request")
    fails(srv, W, {"TransactItems": [{"Put": {"TableName": users, "Item": user("two")},
                                      "Delete": {"TableName": users, "Key": user("two")}}]},
          "ValidationException",
          "TransactItems can only contain one of Check, Put, Update or Delete")
    fails(srv, W, {"TransactItems": [{"Put": {}}], "ClientRequestToken": "t" * 37},
          "ValidationException",
          "3 validation errors detected: Value null at 'transactItems.1.member.put.item' "
          "failed to satisfy constraint: Member must not be null; Value null at "
          "'transactItems.1.member.put.tableName' failed to satisfy constraint: Member must not "
          "be null; Value '%s' at 'clientRequestToken' failed to satisfy constraint: Member must "
          "have length less than or equal to 36" % ("t" * 37))
    fails(srv, "TransactGetItems", {"TransactItems": [{}]}, "ValidationException",
          "1 validation error detected: Value null at 'transactItems.1.member.get' failed to "
          "satisfy constraint: Member must not be null")
    fails(srv, W, {"TransactItems": [{"Put": []}]}, "SerializationException",
          "Unrecognized collection type class com.amazonaws.dynamodb.v20120810.Put")
    # boto3 maps them to ClientError with the code
    with pytest.raises(ClientError) as ei:
        client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": users, "Key": user("d")}},
            {"Delete": {"TableName": users, "Key": user("d")}}])
    assert ei.value.response["Error"]["Code"] == "ValidationException"


def test_resource_not_found(srv, tables):
    for op, body in (
            ("TransactWriteItems", {"TransactItems": [
                {"Put": {"TableName": tables["users"], "Item": user("rnf")}},
                {"Put": {"TableName": "no-such-table", "Item": user("rnf")}}]}),
            ("TransactGetItems", {"TransactItems": [
                {"Get": {"TableName": "no-such-table", "Key": user("rnf")}}]})):
        r = fails(srv, op, body, "ResourceNotFoundException")
        assert r.message.startswith("Requested resource not found"), r
    assert get(srv, tables["users"], user("rnf")) is None


# ---- TransactGetItems ------------------------------------------------------------------------------

def test_transact_get_items_across_tables(srv, client, tables):
    users, orders = tables["users"], tables["orders"]
    client.put_item(TableName=users, Item={**user("g-1"), "status": {"S": "active"},
                                           "profile": {"M": {"name": {"S": "Sato"},
                                                             "age": {"N": "41"}}}})
    client.put_item(TableName=orders, Item={"customer": {"S": "g-1"}, "order_id": {"N": "7"},
                                            "total": {"N": "145"}, "state": {"S": "PENDING"}})
    resp = client.transact_get_items(TransactItems=[
        {"Get": {"TableName": users, "Key": user("g-1"),
                 "ProjectionExpression": "#p.#n, #s",
                 "ExpressionAttributeNames": {"#p": "profile", "#n": "name", "#s": "status"}}},
        {"Get": {"TableName": orders, "Key": {"customer": {"S": "g-1"}, "order_id": {"N": "8"}}}},
        {"Get": {"TableName": orders, "Key": {"customer": {"S": "g-1"}, "order_id": {"N": "7"}}}},
    ], ReturnConsumedCapacity="TOTAL")
    assert resp["Responses"] == [
        {"Item": {"profile": {"M": {"name": {"S": "Sato"}}}, "status": {"S": "active"}}},
        {},
        {"Item": {"customer": {"S": "g-1"}, "order_id": {"N": "7"}, "total": {"N": "145"},
                  "state": {"S": "PENDING"}}}]
    # 2 read units per item up to 4 KB, a missing item included, as DynamoDB Local charges;
    # one entry per table (in no order DynamoDB defines)
    assert sorted(resp["ConsumedCapacity"], key=lambda c: c["TableName"] != users) == [
        {"TableName": users, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0},
        {"TableName": orders, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}]
    # the raw body: ConsumedCapacity before Responses (DynamoDB's model, DynamoDB Local)
    r = call(srv, "TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": users, "Key": user("nobody")}}],
        "ReturnConsumedCapacity": "INDEXES"})
    assert r.status == 200
    assert ordered(r) == [
        ["ConsumedCapacity", [[["TableName", users], ["CapacityUnits", 2.0],
                               ["ReadCapacityUnits", 2.0], ["Table", [["CapacityUnits", 2.0]]]]]],
        ["Responses", [[]]]]
    assert ok(srv, "TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": users, "Key": user("nobody")}}]}) == {"Responses": [{}]}


# ---- ConsumedCapacity and ItemCollectionMetrics ---------------------------------------------------

def test_consumed_capacity_and_metrics(srv, tables):
    lsi, users = tables["lsi"], tables["users"]
    body = {"TransactItems": [
        {"Put": {"TableName": lsi, "Item": {"pk": {"S": "m"}, "sk": {"S": "1"}, "x": {"S": "1"}}}},
        {"Put": {"TableName": users, "Item": {**user("cap-1"), "pad": {"S": "z" * 1500}}}},
        {"Put": {"TableName": lsi, "Item": {"pk": {"S": "n"}, "sk": {"S": "1"}}}}],
        "ReturnConsumedCapacity": "INDEXES", "ReturnItemCollectionMetrics": "SIZE"}
    r = call(srv, "TransactWriteItems", body)
    assert r.status == 200, r
    got = ordered(r)
    assert [k for k, _ in got] == ["ConsumedCapacity", "ItemCollectionMetrics"]
    cc = r.json()["ConsumedCapacity"]
    assert [c["TableName"] for c in cc] == [lsi, users]
    # a 1.5 KB item: 2 KB of writes, twice
    assert cc[1] == {"TableName": users, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0,
                     "Table": {"WriteCapacityUnits": 4.0, "CapacityUnits": 4.0}}
    assert cc[0]["Table"] == {"WriteCapacityUnits": 4.0, "CapacityUnits": 4.0}
    assert set(cc[0]["LocalSecondaryIndexes"]) == {"ByX"}
    units = cc[0]["Table"]["CapacityUnits"] + cc[0]["LocalSecondaryIndexes"]["ByX"]["CapacityUnits"]
    assert cc[0]["CapacityUnits"] == cc[0]["WriteCapacityUnits"] == units
    # ItemCollectionMetrics: per table with an LSI, one entry per written item
    assert r.json()["ItemCollectionMetrics"] == {lsi: [
        {"ItemCollectionKey": {"pk": {"S": "m"}}, "SizeEstimateRangeGB": [0.0, 1.0]},
        {"ItemCollectionKey": {"pk": {"S": "n"}}, "SizeEstimateRangeGB": [0.0, 1.0]}]}
    # TOTAL: no "Table"; NONE and absent: nothing
    r = ok(srv, "TransactWriteItems", {"TransactItems": [
        {"Delete": {"TableName": users, "Key": user("cap-1")}}], "ReturnConsumedCapacity": "TOTAL"})
    assert r == {"ConsumedCapacity": [{"TableName": users, "CapacityUnits": 4.0,
                                       "WriteCapacityUnits": 4.0}]}
    assert ok(srv, "TransactWriteItems", {"TransactItems": [
        {"Delete": {"TableName": users, "Key": user("cap-1")}}],
        "ReturnConsumedCapacity": "NONE", "ReturnItemCollectionMetrics": "SIZE"}) == {}


# ---- atomicity under concurrency ---------------------------------------------------------------------

def test_concurrent_transfers_keep_the_total(srv, tables):
    """Writers move stock between products of two tables with conditional transactions while a
    reader checks the total in every TransactGetItems snapshot."""
    users, stock = tables["users"], tables["stock"]
    n_accounts, per_account = 6, 100
    accounts = [(users, user("acct-%d" % i)) for i in range(n_accounts // 2)] + \
               [(stock, product("acct-%d" % i)) for i in range(n_accounts // 2)]
    for table, key in accounts:
        ok(srv, "PutItem", {"TableName": table, "Item": {**key, "bal": {"N": str(per_account)}}})
    total = n_accounts * per_account
    rounds = scaled(60, 10)
    errors = []
    stop = threading.Event()

    def writer(w):
        rng = seeded_rng("transfers", w)
        for _ in range(rounds):
            (ta, ka), (tb, kb) = rng.sample(accounts, 2)
            amount = str(rng.randint(1, 30))
            r = call(srv, "TransactWriteItems", {"TransactItems": [
                {"Update": {"TableName": ta, "Key": ka, "UpdateExpression": "SET bal = bal - :a",
                            "ConditionExpression": "bal >= :a",
                            "ExpressionAttributeValues": {":a": {"N": amount}}}},
                {"Update": {"TableName": tb, "Key": kb, "UpdateExpression": "SET bal = bal + :a",
                            "ExpressionAttributeValues": {":a": {"N": amount}}}}]})
            if r.status != 200 and r.error_type != "TransactionCanceledException":
                errors.append(r)
                return

    def reader():
        body = {"TransactItems": [{"Get": {"TableName": t, "Key": k}} for t, k in accounts]}
        while not stop.is_set():
            r = call(srv, "TransactGetItems", body)
            if r.status != 200:
                errors.append(r)
                return
            got = sum(int(x["Item"]["bal"]["N"]) for x in r.json()["Responses"])
            if got != total:
                errors.append("a snapshot saw a total of %d, not %d" % (got, total))
                return

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    rd = threading.Thread(target=reader)
    rd.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    rd.join()
    assert not errors, errors[:3]
    final = sum(int(get(srv, t, k)["bal"]["N"]) for t, k in accounts)
    assert final == total


# ---- ClientRequestToken ----------------------------------------------------------------------------

def test_client_request_token_replay_and_mismatch(srv, tables):
    """DynamoDB's idempotency: the same token with the same request within 10 minutes succeeds
    without writing again; with another request it is IdempotentParameterMismatchException."""
    users = tables["users"]
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("tok"), "n": {"N": "0"}}})
    token = "tok-" + unique_name("r")
    body = {"TransactItems": [
        {"Update": {"TableName": users, "Key": user("tok"), "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}}],
        "ClientRequestToken": token}
    assert ok(srv, "TransactWriteItems", body) == {}
    assert get(srv, users, user("tok"))["n"] == {"N": "1"}
    # a replay: success, nothing written again (also after another write of the item)
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("tok"), "n": {"N": "10"}}})
    assert ok(srv, "TransactWriteItems", body) == {}
    assert get(srv, users, user("tok"))["n"] == {"N": "10"}
    # the same token with another request
    other = json.loads(json.dumps(body))
    other["TransactItems"][0]["Update"]["ExpressionAttributeValues"][":one"] = {"N": "2"}
    r = fails(srv, "TransactWriteItems", other, "IdempotentParameterMismatchException",
              "DynamoDB rejected the request because you retried a request with a different "
              "payload but with an idempotent token that was already used.")
    assert "Message" in r.json(), r  # DynamoDB's model spells this member "Message"
    assert get(srv, users, user("tok"))["n"] == {"N": "10"}
    # a replay writes nothing, so it reports no write units (DynamoDB's documentation: the
    # read units of reading the items; DynamoDB Local: ReadCapacityUnits 2.0)
    replay = ok(srv, "TransactWriteItems", dict(body, ClientRequestToken=token + "-cap",
                                                ReturnConsumedCapacity="TOTAL"))
    assert replay["ConsumedCapacity"][0]["WriteCapacityUnits"] == 2.0, replay
    replay = ok(srv, "TransactWriteItems", dict(body, ClientRequestToken=token + "-cap",
                                                ReturnConsumedCapacity="TOTAL"))
    assert all("WriteCapacityUnits" not in c for c in replay.get("ConsumedCapacity", [])), replay
    assert get(srv, users, user("tok"))["n"] == {"N": "11"}
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("tok"), "n": {"N": "10"}}})
    # a new token is a new request
    body["ClientRequestToken"] = token + "-2"
    assert ok(srv, "TransactWriteItems", body) == {}
    assert get(srv, users, user("tok"))["n"] == {"N": "11"}


def test_client_request_token_cancelled_is_not_remembered(srv, tables):
    """A cancelled transaction is not a use of its token: once its condition holds, the same
    request with the same token runs (DynamoDB remembers tokens of successful requests)."""
    users = tables["users"]
    token = "tok-" + unique_name("c")
    body = {"TransactItems": [
        {"Put": {"TableName": users, "Item": {**user("tok-c"), "v": {"S": "new"}},
                 "ConditionExpression": "attribute_exists(user_id)"}}],
        "ClientRequestToken": token}
    fails(srv, "TransactWriteItems", body, "TransactionCanceledException",
          CANCELLED % "ConditionalCheckFailed")
    ok(srv, "PutItem", {"TableName": users, "Item": {**user("tok-c"), "v": {"S": "old"}}})
    assert ok(srv, "TransactWriteItems", body) == {}
    assert get(srv, users, user("tok-c"))["v"] == {"S": "new"}
