"""test_expressions.py - This file contains the conformance tests of DynamoDB's expressions
through kura-server: condition expressions (every comparator and function), update expressions
(SET/REMOVE/ADD/DELETE with paths, list_append, if_not_exists, arithmetic), projection
expressions on nested paths and list elements, filter expressions on Query and Scan, reserved
words and the expression-attribute checks, with DynamoDB's error messages.
"""

import pytest
from botocore.exceptions import ClientError

ITEM = {
    "pk": {"S": "e"},
    "s": {"S": "hello world"},
    "n": {"N": "10"},
    "b": {"B": b"\x01\x02"},
    "t": {"BOOL": True},
    "z": {"NULL": True},
    "ss": {"SS": ["red", "green"]},
    "ns": {"NS": ["1", "2", "3"]},
    "l": {"L": [{"S": "a"}, {"M": {"x": {"N": "5"}}}, {"L": [{"N": "0"}]}]},
    "m": {"M": {"a": {"M": {"b": {"S": "deep"}}}, "dotted.name": {"N": "1"}}},
}


@pytest.fixture(scope="module")
def etable(ddb):
    from conftest import create_table, unique_name
    name = unique_name("expr")
    create_table(ddb, name)
    ddb.put_item(TableName=name, Item=ITEM)
    yield name
    ddb.delete_table(TableName=name)


def cond_holds(ddb, table, expr, values=None, names=None):
    """Evaluates a condition on ITEM with a no-op conditional update (REMOVE of an absent
    attribute): True if it held, False on ConditionalCheckFailedException."""
    kw = {}
    if values:
        kw["ExpressionAttributeValues"] = values
    if names:
        kw["ExpressionAttributeNames"] = names
    try:
        ddb.update_item(TableName=table, Key={"pk": {"S": "e"}}, UpdateExpression="REMOVE nope",
                        ConditionExpression=expr, **kw)
        return True
    except ClientError as e:
        if e.response["Error"]["Code"] == "ConditionalCheckFailedException":
            return False
        raise


@pytest.mark.parametrize("expr,values,want", [
    ("n = :v", {":v": {"N": "10"}}, True),
    ("n = :v", {":v": {"N": "10.000"}}, True),
    ("n = :v", {":v": {"S": "10"}}, False),
    ("n <> :v", {":v": {"N": "11"}}, True),
    ("n < :v", {":v": {"N": "9.99"}}, False),
    ("n <= :v", {":v": {"N": "10"}}, True),
    ("n > :v", {":v": {"N": "-1e10"}}, True),
    ("n >= :v", {":v": {"N": "10.0000001"}}, False),
    ("s < :v", {":v": {"S": "hello x"}}, True),
    ("b < :v", {":v": {"B": b"\x01\x03"}}, True),
    ("n BETWEEN :a AND :b", {":a": {"N": "10"}, ":b": {"N": "11"}}, True),
    ("n BETWEEN :a AND :b", {":a": {"N": "11"}, ":b": {"N": "12"}}, False),
    ("n IN (:a, :b, :c)", {":a": {"N": "1"}, ":b": {"N": "10"}, ":c": {"S": "x"}}, True),
    ("n IN (:a)", {":a": {"N": "1"}}, False),
    ("attribute_exists(m.a.b)", None, True),
    ("attribute_exists(m.a.c)", None, False),
    ("attribute_not_exists(nothing)", None, True),
    ("attribute_exists(l[1].x)", None, True),
    ("attribute_exists(l[7])", None, False),
    ("attribute_type(ss, :t)", {":t": {"S": "SS"}}, True),
    ("attribute_type(z, :t)", {":t": {"S": "NULL"}}, True),
    ("attribute_type(n, :t)", {":t": {"S": "S"}}, False),
    ("begins_with(s, :p)", {":p": {"S": "hello"}}, True),
    ("begins_with(s, :p)", {":p": {"S": "world"}}, False),
    ("begins_with(b, :p)", {":p": {"B": b"\x01"}}, True),
    ("contains(s, :p)", {":p": {"S": "o w"}}, True),
    ("contains(ss, :p)", {":p": {"S": "red"}}, True),
    ("contains(ss, :p)", {":p": {"S": "blue"}}, False),
    ("contains(ns, :p)", {":p": {"N": "2"}}, True),
    ("contains(l, :p)", {":p": {"S": "a"}}, True),
    ("size(s) = :n", {":n": {"N": "11"}}, True),
    ("size(ss) = :n", {":n": {"N": "2"}}, True),
    ("size(l) > :n", {":n": {"N": "2"}}, True),
    ("size(m) = :n", {":n": {"N": "2"}}, True),
    ("size(b) = :n", {":n": {"N": "2"}}, True),
    ("NOT n = :v", {":v": {"N": "10"}}, False),
    ("n = :v OR s = :v", {":v": {"N": "10"}}, True),
    ("n = :v AND s = :v", {":v": {"N": "10"}}, False),
    ("(n = :a OR n = :b) AND NOT attribute_exists(q)", {":a": {"N": "1"}, ":b": {"N": "10"}},
     True),
    ("t = :t AND z = :z", {":t": {"BOOL": True}, ":z": {"NULL": True}}, True),
    ("m.#d = :one", {":one": {"N": "1"}}, True),
    ("l[2][0] = :zero", {":zero": {"N": "0"}}, True),
    ("#s = :v", {":v": {"S": "hello world"}}, True),
])
def test_condition(ddb, etable, expr, values, want):
    names = {}
    if "#d" in expr:
        names["#d"] = "dotted.name"
    if "#s" in expr:
        names["#s"] = "s"
    assert cond_holds(ddb, etable, expr, values, names or None) is want


def test_condition_on_missing_item(ddb, etable):
    for expr, want in (("attribute_not_exists(pk)", True), ("attribute_exists(pk)", False)):
        try:
            ddb.delete_item(TableName=etable, Key={"pk": {"S": "never"}}, ConditionExpression=expr)
            held = True
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ConditionalCheckFailedException"
            held = False
        assert held is want, expr


def expect_validation(fn, message, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    err = ei.value.response["Error"]
    assert err["Code"] == "ValidationException", err
    if message is not None:
        assert err["Message"] == message
    return err["Message"]


def test_reserved_words(ddb, etable):
    key = {"pk": {"S": "e"}}
    for word in ("status", "name", "data", "timestamp", "DATE", "Size"):
        expect_validation(ddb.update_item, "Invalid UpdateExpression: Attribute name is a reserved "
                          "keyword; reserved keyword: %s" % word, TableName=etable, Key=key,
                          UpdateExpression="SET %s = :v" % word,
                          ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.get_item, "Invalid ProjectionExpression: Attribute name is a reserved "
                      "keyword; reserved keyword: status", TableName=etable, Key=key,
                      ProjectionExpression="s, status")
    expect_validation(ddb.scan, "Invalid FilterExpression: Attribute name is a reserved keyword; "
                      "reserved keyword: name", TableName=etable,
                      FilterExpression="name = :v", ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.put_item, "Invalid ConditionExpression: Attribute name is a reserved "
                      "keyword; reserved keyword: data", TableName=etable,
                      Item={"pk": {"S": "r"}}, ConditionExpression="attribute_not_exists(data)")
    # aliased, they are ordinary names
    ddb.update_item(TableName=etable, Key={"pk": {"S": "r"}},
                    UpdateExpression="SET #st = :v, #nm = :v",
                    ExpressionAttributeNames={"#st": "status", "#nm": "name"},
                    ExpressionAttributeValues={":v": {"S": "ok"}})
    got = ddb.get_item(TableName=etable, Key={"pk": {"S": "r"}}, ProjectionExpression="#st",
                       ExpressionAttributeNames={"#st": "status"})["Item"]
    assert got == {"status": {"S": "ok"}}


def test_expression_attribute_checks(ddb, etable):
    key = {"pk": {"S": "e"}}
    expect_validation(ddb.update_item, "Value provided in ExpressionAttributeValues unused in "
                      "expressions: keys: {:unused}", TableName=etable, Key=key,
                      UpdateExpression="SET a = :v",
                      ExpressionAttributeValues={":v": {"S": "x"}, ":unused": {"S": "y"}})
    expect_validation(ddb.update_item, "Value provided in ExpressionAttributeNames unused in "
                      "expressions: keys: {#u}", TableName=etable, Key=key,
                      UpdateExpression="SET a = :v", ExpressionAttributeNames={"#u": "x"},
                      ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.update_item, "Invalid UpdateExpression: An expression attribute value "
                      "used in expression is not defined; attribute value: :nope",
                      TableName=etable, Key=key, UpdateExpression="SET a = :nope")
    expect_validation(ddb.update_item, "Invalid UpdateExpression: An expression attribute name "
                      "used in the document path is not defined; attribute name: #nope",
                      TableName=etable, Key=key, UpdateExpression="SET #nope = :v",
                      ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.update_item, 'Invalid UpdateExpression: Syntax error; token: "=", '
                      'near: "SET = :v"', TableName=etable, Key=key,
                      UpdateExpression="SET = :v", ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.update_item, "Invalid UpdateExpression: Two document paths overlap "
                      "with each other; must remove or rewrite one of these paths; path one: "
                      "[m, a], path two: [m, a, b]", TableName=etable, Key=key,
                      UpdateExpression="SET m.a = :v REMOVE m.a.b",
                      ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.update_item, "Invalid UpdateExpression: The \"SET\" section can only "
                      "be used once in an update expression;", TableName=etable, Key=key,
                      UpdateExpression="SET a = :v SET b = :v",
                      ExpressionAttributeValues={":v": {"S": "x"}})
    expect_validation(ddb.update_item, "Invalid ConditionExpression: Incorrect number of operands "
                      "for operator or function; operator or function: begins_with, number of "
                      "operands: 1", TableName=etable, Key=key, UpdateExpression="REMOVE q",
                      ConditionExpression="begins_with(s)")
    expect_validation(ddb.update_item, "Invalid ConditionExpression: Invalid function name; "
                      "function: nosuch", TableName=etable, Key=key, UpdateExpression="REMOVE q",
                      ConditionExpression="nosuch(s)")
    expect_validation(ddb.get_item, "ExpressionAttributeNames can only be specified when using "
                      "expressions", TableName=etable, Key=key,
                      ExpressionAttributeNames={"#a": "a"})
    expect_validation(ddb.put_item, "ExpressionAttributeValues must not be empty",
                      TableName=etable, Item={"pk": {"S": "x"}},
                      ConditionExpression="attribute_exists(a)", ExpressionAttributeValues={})
    # nothing above changed the item
    got = ddb.get_item(TableName=etable, Key=key)["Item"]
    assert "a" not in got and got["m"] == ITEM["m"]


def test_update_expressions(ddb, etable):
    key = {"pk": {"S": "up"}}
    ddb.put_item(TableName=etable, Item=dict(ITEM, pk={"S": "up"}))
    # `*` is not an operator of update expressions
    expect_validation(ddb.update_item, None, TableName=etable, Key=key,
                      UpdateExpression="SET n = n * :two",
                      ExpressionAttributeValues={":two": {"N": "2"}})
    r = ddb.update_item(
        TableName=etable, Key=key,
        UpdateExpression="SET n = n + :two, l[0] = :x, l[5] = :end, m.a.c = :x, "
                         "#new = if_not_exists(#new, :x), s = if_not_exists(s, :x) "
                         "REMOVE m.#d, l[2] ADD ns :more DELETE ss :red",
        ExpressionAttributeNames={"#new": "new attr", "#d": "dotted.name"},
        ExpressionAttributeValues={":two": {"N": "2"}, ":x": {"S": "X"}, ":end": {"N": "99"},
                                   ":more": {"NS": ["3", "4"]}, ":red": {"SS": ["red"]}},
        ReturnValues="ALL_NEW")["Attributes"]
    assert r["n"] == {"N": "12"}
    # l[5] past the end appends; REMOVE l[2] drops the third element
    assert r["l"] == {"L": [{"S": "X"}, {"M": {"x": {"N": "5"}}}, {"N": "99"}]}
    assert r["m"] == {"M": {"a": {"M": {"b": {"S": "deep"}, "c": {"S": "X"}}}}}
    assert r["new attr"] == {"S": "X"} and r["s"] == {"S": "hello world"}
    assert sorted(r["ns"]["NS"]) == ["1", "2", "3", "4"] and r["ss"] == {"SS": ["green"]}
    # deleting the last member of a set removes the attribute
    r = ddb.update_item(TableName=etable, Key=key, UpdateExpression="DELETE ss :g",
                        ExpressionAttributeValues={":g": {"SS": ["green"]}},
                        ReturnValues="ALL_NEW")["Attributes"]
    assert "ss" not in r
    # list_append both ways, arithmetic on a missing attribute fails
    r = ddb.update_item(TableName=etable, Key=key,
                        UpdateExpression="SET l = list_append(:front, l)",
                        ExpressionAttributeValues={":front": {"L": [{"N": "-1"}]}},
                        ReturnValues="UPDATED_NEW")["Attributes"]
    assert r["l"]["L"][0] == {"N": "-1"} and len(r["l"]["L"]) == 4
    expect_validation(ddb.update_item, "The document path provided in the update expression is "
                      "invalid for update", TableName=etable, Key=key,
                      UpdateExpression="SET nothere.x = :v",
                      ExpressionAttributeValues={":v": {"N": "1"}})
    expect_validation(ddb.update_item, "An operand in the update expression has an incorrect "
                      "data type", TableName=etable, Key=key,
                      UpdateExpression="SET s = s + :v",
                      ExpressionAttributeValues={":v": {"N": "1"}})
    expect_validation(ddb.update_item, "Invalid UpdateExpression: Incorrect operand type for "
                      "operator or function; operator: ADD, operand type: STRING, typeSet: "
                      "ALLOWED_FOR_ADD_OPERAND",
                      TableName=etable, Key=key, UpdateExpression="ADD s :v",
                      ExpressionAttributeValues={":v": {"S": "x"}})


def test_projection_expressions(ddb, etable):
    key = {"pk": {"S": "e"}}
    got = ddb.get_item(TableName=etable, Key=key,
                       ProjectionExpression="m.a.b, l[1].x, l[2], ns, absentattr")["Item"]
    assert got == {"m": {"M": {"a": {"M": {"b": {"S": "deep"}}}}},
                   "l": {"L": [{"M": {"x": {"N": "5"}}}, {"L": [{"N": "0"}]}]},
                   "ns": ITEM["ns"]}
    got = ddb.get_item(TableName=etable, Key=key, ProjectionExpression="absentattr")
    assert got["Item"] == {}
    expect_validation(ddb.get_item, "Invalid ProjectionExpression: Two document paths overlap "
                      "with each other; must remove or rewrite one of these paths; path one: "
                      "[m, a], path two: [m, a, b]", TableName=etable, Key=key,
                      ProjectionExpression="m.a, m.a.b")


def test_filter_expressions(ddb):
    from conftest import create_table, unique_name
    name = unique_name("filt")
    create_table(ddb, name, ("pk", "S"), ("sk", "N"))
    try:
        for i in range(20):
            item = {"pk": {"S": "f"}, "sk": {"N": str(i)}, "v": {"N": str(i % 5)}}
            if i % 3 == 0:
                item["tag"] = {"S": "three"}
            ddb.put_item(TableName=name, Item=item)
        r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk >= :lo",
                      FilterExpression="v IN (:a, :b) AND attribute_exists(tag)",
                      ExpressionAttributeValues={":p": {"S": "f"}, ":lo": {"N": "3"},
                                                 ":a": {"N": "0"}, ":b": {"N": "1"}})
        assert [i["sk"]["N"] for i in r["Items"]] == ["6", "15"]
        assert r["ScannedCount"] == 17
        r = ddb.scan(TableName=name,
                     FilterExpression="attribute_exists(tag) AND NOT contains(tag, :t) OR "
                                      "v = :four",
                     ExpressionAttributeValues={":t": {"S": "thr"}, ":four": {"N": "4"}})
        assert sorted(int(i["sk"]["N"]) for i in r["Items"]) == [4, 9, 14, 19]
        with pytest.raises(ClientError) as ei:
            ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                      FilterExpression="sk > :v",
                      ExpressionAttributeValues={":p": {"S": "f"}, ":v": {"N": "1"}})
        assert ei.value.response["Error"]["Message"] == (
            "Filter Expression can only contain non-primary key attributes: Primary key "
            "attribute: sk")
        # begins_with takes no number sort key
        expect_validation(ddb.query, None, TableName=name,
                          KeyConditionExpression="pk = :p AND begins_with(sk, :x)",
                          ExpressionAttributeValues={":p": {"S": "f"}, ":x": {"N": "1"}})
    finally:
        ddb.delete_table(TableName=name)


def test_begins_with_key_condition(ddb):
    from conftest import create_table, unique_name
    name = unique_name("bw")
    create_table(ddb, name, ("pk", "S"), ("sk", "S"))
    try:
        for sk in ("ORDER#1", "ORDER#2", "ORDER#10", "ORDERX", "PROFILE", "order#3"):
            ddb.put_item(TableName=name, Item={"pk": {"S": "u"}, "sk": {"S": sk}})
        r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND begins_with(sk, :o)",
                      ExpressionAttributeValues={":p": {"S": "u"}, ":o": {"S": "ORDER#"}})
        assert [i["sk"]["S"] for i in r["Items"]] == ["ORDER#1", "ORDER#10", "ORDER#2"]
    finally:
        ddb.delete_table(TableName=name)
