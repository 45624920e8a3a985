"""test_table_arn.py - This file contains the tests over HTTP of tables named by their ARN
(DynamoDB's TableArn, accepted wherever the model takes one): every item, table, batch,
transaction and TTL operation acts on the table an ARN of the client's region names, and the
answer names the table as the request did (ConsumedCapacity.TableName, BatchGetItem's
Responses, BatchWriteItem's ItemCollectionMetrics); an ARN of another region or account is a
missing table (ResourceNotFoundException), a malformed one fails the table name's pattern
(ValidationException). Also TransactGetItems' cancellation for a Key that does not match its
table's key schema.
"""

import pytest

from conftest import make_client, unique_name, wait_active


def arn(name, region="us-east-1", account="000000000000"):
    return "arn:aws:dynamodb:%s:%s:table/%s" % (region, account, name)


def error_of(fn, **kw):
    with pytest.raises(Exception) as e:
        fn(**kw)
    err = e.value.response["Error"]
    return err["Code"], err["Message"]


@pytest.fixture(scope="module")
def table(ddb):
    """A table with a sort key and an LSI (so writes answer ItemCollectionMetrics)."""
    name = unique_name("arn")
    ddb.create_table(
        TableName=arn(name), BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "l")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "lsi1", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}]}])
    wait_active(ddb, name)
    return name


KEY = {"pk": {"S": "a"}, "sk": {"S": "1"}}


def test_items_by_arn(ddb, table):
    a = arn(table)
    r = ddb.put_item(TableName=a, Item=dict(KEY, l={"S": "x"}, v={"N": "1"}),
                     ReturnConsumedCapacity="TOTAL", ReturnItemCollectionMetrics="SIZE")
    assert r["ConsumedCapacity"]["TableName"] == a
    assert r["ItemCollectionMetrics"]["ItemCollectionKey"] == {"pk": {"S": "a"}}
    r = ddb.get_item(TableName=a, Key=KEY, ReturnConsumedCapacity="TOTAL")
    assert r["Item"]["v"] == {"N": "1"} and r["ConsumedCapacity"]["TableName"] == a
    # by name, answered by name
    r = ddb.get_item(TableName=table, Key=KEY, ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["TableName"] == table
    r = ddb.update_item(TableName=a, Key=KEY, UpdateExpression="SET v = v + :one",
                        ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"v": {"N": "2"}}
    r = ddb.query(TableName=a, IndexName="lsi1", KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "a"}}, ReturnConsumedCapacity="INDEXES")
    assert r["Count"] == 1 and r["ConsumedCapacity"]["TableName"] == a
    r = ddb.scan(TableName=a, ReturnConsumedCapacity="TOTAL")
    assert r["Count"] == 1 and r["ConsumedCapacity"]["TableName"] == a
    r = ddb.delete_item(TableName=a, Key=KEY, ReturnValues="ALL_OLD")
    assert r["Attributes"]["v"] == {"N": "2"}
    assert "Item" not in ddb.get_item(TableName=table, Key=KEY)


def test_tables_and_ttl_by_arn(ddb, table):
    a = arn(table)
    d = ddb.describe_table(TableName=a)["Table"]
    assert d["TableName"] == table and d["TableArn"] == a
    d = ddb.update_table(TableName=a, BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert d["TableName"] == table
    r = ddb.update_time_to_live(TableName=a, TimeToLiveSpecification={"Enabled": True,
                                                                      "AttributeName": "exp"})
    assert r["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "exp"}
    r = ddb.describe_time_to_live(TableName=a)["TimeToLiveDescription"]
    assert r["AttributeName"] == "exp"
    # an eu-west-1 client names the same table by its eu-west-1 ARN
    eu = make_client(ddb.meta.endpoint_url, region="eu-west-1")
    d = eu.describe_table(TableName=arn(table, "eu-west-1"))["Table"]
    assert d["TableArn"] == arn(table, "eu-west-1")


def test_batches_keyed_as_requested(ddb, table):
    a = arn(table)
    r = ddb.batch_write_item(
        RequestItems={a: [{"PutRequest": {"Item": dict(KEY, l={"S": "x"})}},
                          {"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"S": "2"}}}}]},
        ReturnConsumedCapacity="TOTAL", ReturnItemCollectionMetrics="SIZE")
    assert r["UnprocessedItems"] == {}
    assert [c["TableName"] for c in r["ConsumedCapacity"]] == [a]
    assert list(r["ItemCollectionMetrics"]) == [a]
    r = ddb.batch_get_item(RequestItems={a: {"Keys": [KEY]}}, ReturnConsumedCapacity="TOTAL")
    assert list(r["Responses"]) == [a] and len(r["Responses"][a]) == 1
    assert [c["TableName"] for c in r["ConsumedCapacity"]] == [a]
    r = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": a, "Key": KEY}}],
                               ReturnConsumedCapacity="TOTAL")
    assert r["Responses"][0]["Item"]["l"] == {"S": "x"}
    assert r["ConsumedCapacity"][0]["TableName"] == a
    r = ddb.transact_write_items(
        TransactItems=[{"Delete": {"TableName": a, "Key": KEY}}], ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"][0]["TableName"] == a


def test_other_scope_and_malformed(ddb, table):
    nf = ("ResourceNotFoundException", "Requested resource not found")
    assert error_of(ddb.get_item, TableName=arn(table, "eu-west-1"), Key=KEY) == nf
    assert error_of(ddb.describe_table, TableName=arn(table, account="123456789012")) == nf
    assert error_of(ddb.batch_get_item,
                    RequestItems={arn(table, "eu-west-1"): {"Keys": [KEY]}}) == nf
    assert error_of(ddb.transact_get_items, TransactItems=[
        {"Get": {"TableName": arn(table, "eu-west-1"), "Key": KEY}}]) == nf
    bad = arn(table) + "/index/lsi1"
    assert error_of(ddb.get_item, TableName=bad, Key=KEY) == (
        "ValidationException",
        "1 validation error detected: Value '%s' at 'tableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" % bad)


def test_transact_get_key_not_of_schema(ddb, table):
    """DynamoDB cancels the transaction: ValidationError at the Get, None elsewhere."""
    ddb.put_item(TableName=table, Item=KEY)
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as e:
        ddb.transact_get_items(TransactItems=[
            {"Get": {"TableName": table, "Key": KEY}},
            {"Get": {"TableName": table, "Key": {"pk": {"S": "a"}}}}])
    resp = e.value.response
    assert resp["Error"]["Message"] == ("Transaction cancelled, please refer cancellation "
                                        "reasons for specific reasons [None, ValidationError]")
    assert resp["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ValidationError",
         "Message": "The provided key element does not match the schema"}]
    # a key value DynamoDB refuses before looking at the schema stays a ValidationException
    assert error_of(ddb.transact_get_items, TransactItems=[
        {"Get": {"TableName": table, "Key": {"pk": {"S": ""}, "sk": {"S": "1"}}}}]) == (
        "ValidationException",
        "One or more parameter values were invalid: The AttributeValue for a key attribute "
        "cannot contain an empty string value. Key: pk")
