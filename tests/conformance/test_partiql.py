"""test_partiql.py - This file contains the conformance tests of DynamoDB's PartiQL over HTTP
(docs/partiql.md): ExecuteStatement's SELECT as GetItem, Query (sort-key conditions, ORDER BY,
filters, indexes) and Scan, paging by Limit and by the 1 MB rule through NextToken, INSERT /
UPDATE / DELETE with their conditions, RETURNING and errors (DuplicateItemException,
ConditionalCheckFailedException with the ALL_OLD item, a WHERE without the full key), syntax
errors, parameters, ConsumedCapacity; BatchExecuteStatement's per-statement Responses and
refusals; ExecuteTransaction's reads, writes, cancellation reasons and ClientRequestToken.

The expected texts are DynamoDB's where docs/partiql.md does not list them as kura's choice.
"""

import pytest
from botocore.exceptions import ClientError

from conftest import call, create_table, unique_name

SYNTAX = "Statement wasn't well formed, can't be processed: "
NO_KEY = "Where clause does not contain a mandatory equality on all key attributes"
DUPLICATE = "Duplicate primary key exists in table"
CCF = "The conditional request failed"


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def run(ddb, statement, **kw):
    return ddb.execute_statement(Statement=statement, **kw)


def error(ddb, statement, **kw):
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement=statement, **kw)
    return e.value.response


def expect_error(ddb, statement, code, message, **kw):
    r = error(ddb, statement, **kw)
    assert (r["Error"]["Code"], r["Error"]["Message"]) == (code, message)
    return r


@pytest.fixture
def table(ddb):
    """A table pk (S) + sk (N) with items a/0..9 (n = sk * 10) and b/0..2."""
    name = unique_name("pq")
    create_table(ddb, name, ("pk", "S"), ("sk", "N"))
    for sk in range(10):
        ddb.put_item(TableName=name, Item={"pk": S("a"), "sk": N(sk), "n": N(sk * 10),
                                           "tag": S("t%d" % (sk % 3))})
    for sk in range(3):
        ddb.put_item(TableName=name, Item={"pk": S("b"), "sk": N(sk), "n": N(sk)})
    yield name
    ddb.delete_table(TableName=name)


def sks(items):
    return [int(i["sk"]["N"]) for i in items]


def test_select_full_key_is_getitem(ddb, table):
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 3' % table)
    assert r["Items"] == [{"pk": S("a"), "sk": N(3), "n": N(30), "tag": S("t0")}]
    assert "NextToken" not in r
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 42' % table)
    assert r["Items"] == []
    r = run(ddb, 'SELECT n, tag FROM "%s" WHERE sk = 4 AND pk = \'a\'' % table)
    assert r["Items"] == [{"n": N(40), "tag": S("t1")}]


def test_select_partition_is_query(ddb, table):
    q = 'SELECT * FROM "%s" WHERE pk = \'a\'' % table
    assert sks(run(ddb, q)["Items"]) == list(range(10))
    assert sks(run(ddb, q + " ORDER BY sk DESC")["Items"]) == list(range(9, -1, -1))
    assert sks(run(ddb, q + " ORDER BY sk ASC")["Items"]) == list(range(10))
    assert sks(run(ddb, q + " AND sk > 6")["Items"]) == [7, 8, 9]
    assert sks(run(ddb, q + " AND sk <= 1")["Items"]) == [0, 1]
    assert sks(run(ddb, q + " AND sk BETWEEN 2 AND 4 ORDER BY sk DESC")["Items"]) == [4, 3, 2]
    assert sks(run(ddb, q + " AND tag = 't1'")["Items"]) == [1, 4, 7]
    assert sks(run(ddb, q + " AND sk >= 3 AND n < 60")["Items"]) == [3, 4, 5]
    assert sks(run(ddb, q + " AND sk IN (1, 8)")["Items"]) == [1, 8]


def test_select_scan(ddb, table):
    r = run(ddb, 'SELECT * FROM "%s"' % table)
    assert len(r["Items"]) == 13
    r = run(ddb, 'SELECT pk, sk FROM "%s" WHERE sk = 2' % table)
    assert sorted((i["pk"]["S"], i["sk"]["N"]) for i in r["Items"]) == [("a", "2"), ("b", "2")]
    assert all(set(i) == {"pk", "sk"} for i in r["Items"])
    r = run(ddb, 'SELECT * FROM "%s" WHERE tag IS MISSING' % table)
    assert sorted(sks(r["Items"])) == [0, 1, 2]
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' OR pk = \'b\' AND NOT sk < 2' % table)
    assert len(r["Items"]) == 11
    r = run(ddb, 'SELECT * FROM "%s" WHERE begins_with(tag, \'t2\') AND n BETWEEN 0 AND 60'
            % table)
    assert sorted(sks(r["Items"])) == [2, 5]


def test_paging_limit_and_next_token(ddb, table):
    q = 'SELECT * FROM "%s" WHERE pk = \'a\'' % table
    got, token, pages = [], None, 0
    while True:
        kw = {"Limit": 3}
        if token:
            kw["NextToken"] = token
        r = run(ddb, q, **kw)
        got += sks(r["Items"])
        pages += 1
        token = r.get("NextToken")
        if not token:
            break
        assert r["LastEvaluatedKey"] == {"pk": S("a"), "sk": r["Items"][-1]["sk"]}
    assert got == list(range(10))
    assert pages == 4
    expect_error(ddb, q, "ValidationException", "Invalid NextToken", NextToken="zz")


def test_paging_one_megabyte(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    big = "x" * 100000
    for sk in range(25):
        ddb.put_item(TableName=name, Item={"pk": S("p"), "sk": N(sk), "v": S(big)})
    got, pages, token = [], 0, None
    while True:
        kw = {"NextToken": token} if token else {}
        r = run(ddb, 'SELECT sk FROM "%s" WHERE pk = \'p\'' % name, **kw)
        got += sks(r["Items"])
        pages += 1
        token = r.get("NextToken")
        if not token:
            break
    assert got == list(range(25))
    assert pages >= 3  # 2.5 MB read in pages of 1 MB


def test_insert(ddb, table):
    r = run(ddb, "INSERT INTO \"%s\" VALUE {'pk': 'c', 'sk': 1, 'l': [1, 'x', TRUE, NULL], "
                 "'m': {'k': <<'s1', 's2'>>}, 'ns': <<1, 2.5>>, 'q': 'it''s'}" % table)
    assert r["Items"] == []
    item = ddb.get_item(TableName=table, Key={"pk": S("c"), "sk": N(1)})["Item"]
    assert item["l"] == {"L": [N(1), S("x"), {"BOOL": True}, {"NULL": True}]}
    assert sorted(item["m"]["M"]["k"]["SS"]) == ["s1", "s2"]
    assert sorted(item["ns"]["NS"]) == ["1", "2.5"]
    assert item["q"] == S("it's")
    expect_error(ddb, "INSERT INTO \"%s\" VALUE {'pk': 'c', 'sk': 1, 'z': 0}" % table,
                 "DuplicateItemException", DUPLICATE)
    item2 = ddb.get_item(TableName=table, Key={"pk": S("c"), "sk": N(1)})["Item"]
    assert item2 == item  # the refused insert changed nothing


def test_parameters(ddb, table):
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = ? AND sk = ?' % table,
            Parameters=[S("a"), N(5)])
    assert sks(r["Items"]) == [5]
    run(ddb, "INSERT INTO \"%s\" VALUE {'pk': ?, 'sk': ?, 'b': ?, 'l': [?]}" % table,
        Parameters=[S("d"), N(1), {"B": b"\x01\x02"}, {"SS": ["x"]}])
    item = ddb.get_item(TableName=table, Key={"pk": S("d"), "sk": N(1)})["Item"]
    assert item["b"] == {"B": b"\x01\x02"} and item["l"] == {"L": [{"SS": ["x"]}]}
    msg = "Number of parameters in request and statement don't match."
    expect_error(ddb, 'SELECT * FROM "%s" WHERE pk = ?' % table, "ValidationException", msg)
    expect_error(ddb, 'SELECT * FROM "%s" WHERE pk = ?' % table, "ValidationException", msg,
                 Parameters=[S("a"), S("b")])


def test_update(ddb, table):
    def upd(assign, returning=""):
        return run(ddb, 'UPDATE "%s" %s WHERE pk = \'a\' AND sk = 1 %s'
                   % (table, assign, returning))

    r = upd("SET n = n + 5 SET l = [1] SET s = <<'x'>>", "RETURNING ALL NEW *")
    assert r["Items"] == [{"pk": S("a"), "sk": N(1), "n": N(15), "tag": S("t1"),
                           "l": {"L": [N(1)]}, "s": {"SS": ["x"]}}]
    r = upd("SET l = list_append(l, [2, 3]), s = set_add(s, <<'y'>>)", "RETURNING MODIFIED NEW *")
    assert r["Items"][0]["l"] == {"L": [N(1), N(2), N(3)]}
    assert sorted(r["Items"][0]["s"]["SS"]) == ["x", "y"]
    r = upd("SET s = set_delete(s, <<'x'>>) REMOVE tag, l[0] SET n = n - 1",
            "RETURNING MODIFIED OLD *")
    assert r["Items"][0]["n"] == N(15) and r["Items"][0]["tag"] == S("t1")
    r = upd("SET n = 0", "RETURNING ALL OLD *")
    assert r["Items"][0]["n"] == N(14)
    item = ddb.get_item(TableName=table, Key={"pk": S("a"), "sk": N(1)})["Item"]
    assert item == {"pk": S("a"), "sk": N(1), "n": N(0), "l": {"L": [N(2), N(3)]},
                    "s": {"SS": ["y"]}}
    assert upd("SET z = 1")["Items"] == []


def raw_error(server, op, body, code, message):
    r = call(server, op, body)
    assert r.status == 400, r.body
    body = r.json()
    assert (r.error_type, body.get("message", body.get("Message"))) == (code, message)
    return body


def test_update_conditions(ddb, server, table):
    missing = 'UPDATE "%s" SET n = 1 WHERE pk = \'zz\' AND sk = 1' % table
    expect_error(ddb, missing, "ConditionalCheckFailedException", CCF)
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": S("zz"), "sk": N(1)})
    cond = 'UPDATE "%s" SET n = 1 WHERE pk = \'a\' AND sk = 2 AND n > 100' % table
    # Debian's botocore lacks ExecuteStatement's ReturnValuesOnConditionCheckFailure: raw JSON
    r = raw_error(server, "ExecuteStatement",
                  {"Statement": cond, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
                  "ConditionalCheckFailedException", CCF)
    assert r["Item"] == {"pk": S("a"), "sk": N(2), "n": N(20), "tag": S("t2")}
    r = raw_error(server, "ExecuteStatement", {"Statement": cond},
                  "ConditionalCheckFailedException", CCF)
    assert "Item" not in r
    run(ddb, 'UPDATE "%s" SET n = 1 WHERE pk = \'a\' AND sk = 2 AND n = 20' % table)
    expect_error(ddb, 'UPDATE "%s" SET n = 1 WHERE pk = \'a\'' % table, "ValidationException",
                 NO_KEY)
    expect_error(ddb, 'UPDATE "%s" SET n = 1 WHERE pk = \'a\' OR sk = 1' % table,
                 "ValidationException", NO_KEY)
    expect_error(ddb, 'DELETE FROM "%s" WHERE sk = 1' % table, "ValidationException", NO_KEY)


def test_delete(ddb, table):
    r = run(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 3 RETURNING ALL OLD *' % table)
    assert r["Items"] == [{"pk": S("a"), "sk": N(3), "n": N(30), "tag": S("t0")}]
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": S("a"), "sk": N(3)})
    # deleting a missing item succeeds, as DeleteItem does (DynamoDB Local 1.25.1 agrees)
    assert run(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 3' % table)["Items"] == []
    expect_error(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 3 AND n = 30' % table,
                 "ConditionalCheckFailedException", CCF)
    expect_error(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 4 RETURNING ALL NEW *' % table,
                 "ValidationException", "Invalid returning clause: RETURNING ALL NEW *. Only "
                 "RETURNING ALL OLD * is allowed in DELETE statements.")
    expect_error(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 4 AND tag = \'x\'' % table,
                 "ConditionalCheckFailedException", CCF)
    assert run(ddb, 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 4' % table)["Items"] == []


@pytest.mark.parametrize("statement,detail", [
    ("SELEC * FROM t", "Unexpected token"),
    ("SELECT * FROM", "Unexpected end of statement"),
    ("SELECT * FROM select", "Unexpected keyword"),
    ("SELECT * FROM t WHERE a = 'x", "Unexpected token"),
    ("INSERT INTO t VALUE 1", "Unexpected token"),
    ("DELETE FROM", "Unexpected end of statement"),
])
def test_syntax_errors(ddb, statement, detail):
    expect_error(ddb, statement, "ValidationException", SYNTAX + detail)


@pytest.mark.parametrize("statement,message", [
    ("SELECT * FROM TABLE WHERE foo(a)", "Unrecognized function: foo"),
    ("SELECT * FROM TABLE WHERE a = <<1, 1>>", "Input collection contains duplicates"),
    ("DELETE FROM TABLE", NO_KEY),
    ("UPDATE TABLE SET a = 1", NO_KEY),
    ("SELECT * FROM TABLE WHERE a = MISSING", "MISSING must be compared using IS operator"),
    ("INSERT INTO TABLE VALUE {'pk': 'a'}", "Key attribute should be present in the item: Key sk"),
])
def test_refusals_in_dynamodb_words(ddb, table, statement, message):
    """The texts DynamoDB Local 1.25.1 (DynamoDB's PartiQL front end) gives."""
    expect_error(ddb, statement.replace("TABLE", '"%s"' % table), "ValidationException", message)


def test_unknown_table_and_index(ddb, table):
    expect_error(ddb, 'SELECT * FROM "nosuchtable"', "ResourceNotFoundException",
                 "Requested resource not found")
    expect_error(ddb, "INSERT INTO nosuchtable VALUE {'pk': 'a'}", "ResourceNotFoundException",
                 "Requested resource not found")
    expect_error(ddb, 'SELECT * FROM "%s"."nosuch"' % table, "ValidationException",
                 "The table does not have the specified index: nosuch")


def test_order_by_refusals(ddb, table):
    expect_error(ddb, 'SELECT * FROM "%s" ORDER BY sk' % table, "ValidationException",
                 "Must have WHERE clause in the statement when using ORDER BY clause.")
    expect_error(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' ORDER BY n' % table,
                 "ValidationException",
                 "Variable reference n in ORDER BY clause must be part of the primary key")
    expect_error(ddb, 'SELECT * FROM "%s" WHERE n > 5 ORDER BY sk' % table, "ValidationException",
                 "Must have at least one non-optional hash key condition in WHERE clause when "
                 "using ORDER BY clause.")


def test_index_query(ddb):
    name = unique_name("pqi")
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "byg", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                               {"AttributeName": "pk", "KeyType": "RANGE"}]}])
    try:
        for i in range(6):
            run(ddb, "INSERT INTO \"%s\" VALUE {'pk': 'k%d', 'g': 'g%d'}" % (name, i, i % 2))
        call_kura_wait(ddb, name)
        r = run(ddb, 'SELECT pk FROM "%s"."byg" WHERE g = \'g1\' ORDER BY pk DESC' % name)
        assert r["Items"] == [{"pk": S("k5")}, {"pk": S("k3")}, {"pk": S("k1")}]
    finally:
        ddb.delete_table(TableName=name)


def call_kura_wait(ddb, name):
    """GSIs apply asynchronously: wait for every earlier write (kura's extension)."""
    import conftest  # noqa: the server's URL comes from the client
    url = ddb.meta.endpoint_url
    host, port = url.split("//")[1].split(":")

    class S_:
        pass
    srv = S_()
    srv.host, srv.port = host, int(port)
    r = conftest.index_wait(srv, {"TableName": name})
    assert r.status == 200, r.body


def test_consumed_capacity(ddb, table):
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 1' % table,
            ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    r = run(ddb, 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 1' % table,
            ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 0.5}
    r = run(ddb, "INSERT INTO \"%s\" VALUE {'pk': 'cap', 'sk': 0}" % table,
            ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    assert "ConsumedCapacity" not in run(ddb, 'SELECT * FROM "%s"' % table)


def test_request_validation(server):
    r = call(server, "ExecuteStatement", {})
    assert r.status == 400 and r.error_type == "ValidationException"
    assert "statement" in r.json()["message"]
    r = call(server, "ExecuteStatement", {"Statement": "SELECT * FROM t", "Limit": 0})
    assert r.error_type == "ValidationException"
    assert "greater than or equal to 1" in r.json()["message"]


# ---- BatchExecuteStatement --------------------------------------------------------------------


def test_batch_reads(ddb, table):
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 1' % table},
        {"Statement": 'SELECT n FROM "%s" WHERE pk = ? AND sk = ?' % table,
         "Parameters": [S("b"), N(2)]},
        {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 99' % table},
        {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\'' % table},
        {"Statement": 'SELECT * FROM "nosuchtable" WHERE pk = \'a\''},
    ])["Responses"]
    assert r[0] == {"TableName": table,
                    "Item": {"pk": S("a"), "sk": N(1), "n": N(10), "tag": S("t1")}}
    assert r[1] == {"TableName": table, "Item": {"n": N(2)}}
    assert r[2] == {"TableName": table}
    assert r[3] == {"Error": {"Code": "ValidationError",
                              "Message": "Only single item select is supported"}}
    assert r[4]["Error"] == {"Code": "ResourceNotFound",
                             "Message": "Requested resource not found"}


def test_batch_writes(ddb, server, table):
    r = call(server, "BatchExecuteStatement", {"Statements": [
        {"Statement": "INSERT INTO \"%s\" VALUE {'pk': 'w', 'sk': 1}" % table},
        {"Statement": "INSERT INTO \"%s\" VALUE {'pk': 'a', 'sk': 1}" % table},
        {"Statement": 'UPDATE "%s" SET n = 7 WHERE pk = \'a\' AND sk = 2 AND n = 0' % table,
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        {"Statement": 'DELETE FROM "%s" WHERE pk = \'b\' AND sk = 0' % table},
        {"Statement": 'UPDATE "%s" SET n = 7 WHERE pk = \'a\'' % table},
        {"Statement": "SELEC"},
    ], "ReturnConsumedCapacity": "TOTAL"})
    assert r.status == 200, r.body
    r = r.json()
    resp = r["Responses"]
    # as DynamoDB Local 1.25.1: TableName on every statement that ran, none on one refused
    assert resp[0] == {"TableName": table}
    assert resp[1] == {"Error": {"Code": "DuplicateItem", "Message": DUPLICATE},
                       "TableName": table}
    assert resp[2] == {"Error": {"Code": "ConditionalCheckFailed", "Message": CCF,
                                 "Item": {"pk": S("a"), "sk": {"N": "2"}, "n": {"N": "20"},
                                          "tag": S("t2")}},
                       "TableName": table}
    assert resp[3] == {"TableName": table}
    assert resp[4] == {"Error": {"Code": "ValidationError", "Message": NO_KEY}}
    assert resp[5] == {"Error": {"Code": "ValidationError",
                                 "Message": SYNTAX + "Unexpected token"}}
    assert r["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 2.0}]
    assert "Item" in ddb.get_item(TableName=table, Key={"pk": S("w"), "sk": N(1)})
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": S("b"), "sk": N(0)})


def test_batch_refusals(ddb, table):
    with pytest.raises(ClientError) as e:
        ddb.batch_execute_statement(Statements=[
            {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 1' % table},
            {"Statement": 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 1' % table}])
    assert e.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Read and write requests together in the same batch is not supported."}
    assert "Item" in ddb.get_item(TableName=table, Key={"pk": S("a"), "sk": N(1)})
    with pytest.raises(ClientError) as e:
        ddb.batch_execute_statement(Statements=[{"Statement": "SELECT * FROM t"}] * 26)
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationException"
    assert "Member must have length less than or equal to 25" in err["Message"]


# ---- ExecuteTransaction -------------------------------------------------------------------------


def test_transaction_writes_and_reads(ddb, table):
    r = ddb.execute_transaction(TransactStatements=[
        {"Statement": "INSERT INTO \"%s\" VALUE {'pk': 'x', 'sk': 1, 'n': 1}" % table},
        {"Statement": 'UPDATE "%s" SET n = n + 1 WHERE pk = \'a\' AND sk = 5' % table},
        {"Statement": 'DELETE FROM "%s" WHERE pk = \'b\' AND sk = 1' % table},
    ], ReturnConsumedCapacity="TOTAL")
    assert r["Responses"] == []
    assert r["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 6.0,
                                      "WriteCapacityUnits": 6.0}]
    r = ddb.execute_transaction(TransactStatements=[
        {"Statement": 'SELECT * FROM "%s" WHERE pk = \'x\' AND sk = 1' % table},
        {"Statement": 'SELECT n FROM "%s" WHERE pk = ? AND sk = ?' % table,
         "Parameters": [S("a"), N(5)]},
        {"Statement": 'SELECT * FROM "%s" WHERE pk = \'b\' AND sk = 1' % table},
    ])
    assert r["Responses"] == [{"Item": {"pk": S("x"), "sk": N(1), "n": N(1)}},
                              {"Item": {"n": N(51)}}, {}]


def test_transaction_cancelled(ddb, server, table):
    r = call(server, "ExecuteTransaction", {"TransactStatements": [
            {"Statement": 'UPDATE "%s" SET n = 0 WHERE pk = \'a\' AND sk = 6' % table},
            {"Statement": "INSERT INTO \"%s\" VALUE {'pk': 'a', 'sk': 7}" % table},
            {"Statement": 'DELETE FROM "%s" WHERE pk = \'a\' AND sk = 5 AND n = 0' % table,
             "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
    ]})
    assert r.error_type == "TransactionCanceledException"
    r = r.json()
    assert r["Message"] == (
        "Transaction cancelled, please refer cancellation reasons for specific reasons "
        "[None, ValidationError, ConditionalCheckFailed]")
    assert r["CancellationReasons"] == [
        {"Code": "None"}, {"Code": "ValidationError", "Message": DUPLICATE},
        {"Item": {"pk": S("a"), "sk": N(5), "n": N(50), "tag": S("t2")},
         "Code": "ConditionalCheckFailed", "Message": CCF}]
    item = ddb.get_item(TableName=table, Key={"pk": S("a"), "sk": N(6)})["Item"]
    assert item["n"] == N(60)  # nothing was written


def test_transaction_refusals(ddb, table):
    def refused(statements, message):
        with pytest.raises(ClientError) as e:
            ddb.execute_transaction(TransactStatements=statements)
        assert e.value.response["Error"] == {"Code": "ValidationException", "Message": message}

    sel = {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\' AND sk = 1' % table}
    upd = {"Statement": 'UPDATE "%s" SET n = 1 WHERE pk = \'a\' AND sk = 1' % table}
    refused([sel, upd], "ExecuteTransaction API does not support both read and write "
                        "operations in the same request.")
    refused([sel, {"Statement": 'SELECT * FROM "%s" WHERE pk = \'a\'' % table}],
            "Validation failed in TransactStatements[1]: Select statements within "
            "ExecuteTransaction must specify the primary key in the where clause.")
    refused([{"Statement": 'UPDATE "%s" SET n = 1 WHERE pk = \'a\' AND sk = 1 RETURNING ALL NEW *'
                           % table}],
            "Validation failed in TransactStatements[0]: RETURNING clause is not supported in "
            "ExecuteTransaction.")
    refused([{"Statement": 'UPDATE "%s" SET n = 1 WHERE pk = \'a\'' % table}], NO_KEY)
    refused([{"Statement": "SELEC"}], SYNTAX + "Unexpected token")
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": "INSERT INTO nosuch VALUE {'pk': 'a'}"}])
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_transaction_client_request_token(ddb, table):
    stmts = [{"Statement": 'UPDATE "%s" SET n = n + 1 WHERE pk = \'a\' AND sk = 8' % table}]
    ddb.execute_transaction(TransactStatements=stmts, ClientRequestToken="tok-1")
    ddb.execute_transaction(TransactStatements=stmts, ClientRequestToken="tok-1")
    item = ddb.get_item(TableName=table, Key={"pk": S("a"), "sk": N(8)})["Item"]
    assert item["n"] == N(81)  # applied once
    other = [{"Statement": 'UPDATE "%s" SET n = n + 2 WHERE pk = \'a\' AND sk = 8' % table}]
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=other, ClientRequestToken="tok-1")
    assert e.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
