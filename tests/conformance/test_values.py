"""test_values.py - This file contains the conformance tests of DynamoDB's value types and size
limits through kura-server: binary values (B and BS round trips with every byte value, binary
sort keys ordered by unsigned bytes), unicode (non-ASCII attribute names and values, emoji,
sort keys ordered by UTF-8 bytes rather than UTF-16 code units), numbers (38 significant
digits, the range limits, the canonical form DynamoDB returns, numeric sort order) and the
limits (400 KB items counted in UTF-8 bytes, 2048-byte partition and 1024-byte sort keys).
"""

import base64

import pytest
from botocore.exceptions import ClientError

from conftest import call


def error(fn, **kw):
    with pytest.raises(ClientError) as ei:
        fn(**kw)
    err = ei.value.response["Error"]
    return err["Code"], err["Message"]


def query_all(ddb, name, pk, forward=True):
    items, start = [], None
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        r = ddb.query(TableName=name, KeyConditionExpression="pk = :p", ScanIndexForward=forward,
                      ExpressionAttributeValues={":p": pk}, **kw)
        items += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return items


# ---- binary ----------------------------------------------------------------------------------

def test_binary_round_trip(ddb, make_table, server):
    name = make_table(("pk", "B"))
    every_byte = bytes(range(256))
    item = {"pk": {"B": b"\x00\xff\x00"}, "all": {"B": every_byte}, "zero": {"B": b"\x00"},
            "ff": {"B": b"\xff" * 1000},
            "bs": {"BS": [b"\x00", b"\xff", b"\x00\x00", every_byte, b"\x80"]},
            "nested": {"M": {"l": {"L": [{"B": b"\xfe\xff"}, {"BS": [b"\x01"]}]}}}}
    ddb.put_item(TableName=name, Item=item)
    got = ddb.get_item(TableName=name, Key={"pk": {"B": b"\x00\xff\x00"}})["Item"]
    assert got["all"]["B"] == every_byte and got["zero"]["B"] == b"\x00"
    assert got["ff"]["B"] == b"\xff" * 1000
    assert sorted(got["bs"]["BS"]) == sorted(item["bs"]["BS"])
    assert got["nested"] == item["nested"]
    # on the wire: standard base64, as sent
    r = call(server, "GetItem", {"TableName": name,
                                 "Key": {"pk": {"B": base64.b64encode(b"\x00\xff\x00").decode()}},
                                 "ProjectionExpression": "zero, ff"})
    assert r.json() == {"Item": {"zero": {"B": "AA=="},
                                 "ff": {"B": base64.b64encode(b"\xff" * 1000).decode()}}}
    # a key that differs only after a NUL byte is another item
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"B": b"\x00\xff"}})
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"B": b"\x00\xff\x00\x00"}})
    code, msg = error(ddb.put_item, TableName=name,
                      Item={"pk": {"B": b"k"}, "bs": {"BS": [b"\x01", b"\x01"]}})
    assert code == "ValidationException" and "contains duplicates" in msg
    code, msg = error(ddb.put_item, TableName=name, Item={"pk": {"B": b""}})
    assert (code, msg) == ("ValidationException",
                           "One or more parameter values are not valid. The AttributeValue for a "
                           "key attribute cannot contain an empty binary value. Key: pk")
    # invalid base64 on the wire
    r = call(server, "PutItem", {"TableName": name, "Item": {"pk": {"B": "not base64!"}}})
    assert r.status == 400, r
    assert r.error_type in ("SerializationException", "ValidationException"), r


def test_binary_sort_order(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "B"))
    keys = [b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\x80\x00", b"\xfe", b"\xff",
            b"\xff\x00", b"\xff\xff", b"a", b"ab"]
    for k in keys:
        ddb.put_item(TableName=name, Item={"pk": {"S": "b"}, "sk": {"B": k}})
    got = [i["sk"]["B"] for i in query_all(ddb, name, {"S": "b"})]
    assert got == sorted(keys)  # Python orders bytes unsigned, lexicographically
    got = [i["sk"]["B"] for i in query_all(ddb, name, {"S": "b"}, forward=False)]
    assert got == sorted(keys, reverse=True)
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND begins_with(sk, :x)",
                  ExpressionAttributeValues={":p": {"S": "b"}, ":x": {"B": b"\xff"}})
    assert [i["sk"]["B"] for i in r["Items"]] == [b"\xff", b"\xff\x00", b"\xff\xff"]
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": {"S": "b"}, ":a": {"B": b"\x7f"},
                                             ":b": {"B": b"\x80\x00"}})
    assert [i["sk"]["B"] for i in r["Items"]] == [b"\x7f", b"\x80", b"\x80\x00"]


# ---- unicode ---------------------------------------------------------------------------------

def test_unicode_names_and_values(ddb, make_table):
    name = make_table(("pk", "S"))
    item = {"pk": {"S": "ユーザー#001"}, "名前": {"S": "山田太郎"}, "emoji 😀": {"S": "🎉🚀"},
            "Ωmega": {"M": {"ключ": {"S": "значение"}, "🔑": {"N": "1"}}},
            "mixed": {"SS": ["é", "e\u0301", "𝄞"]}, "nul": {"S": "a\u0000b"}}
    ddb.put_item(TableName=name, Item=item)
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "ユーザー#001"}})["Item"]
    assert got.keys() == item.keys()
    assert got["名前"] == {"S": "山田太郎"} and got["emoji 😀"] == {"S": "🎉🚀"}
    assert got["Ωmega"] == item["Ωmega"] and got["nul"] == {"S": "a\u0000b"}
    # é precomposed and decomposed are different strings (no normalisation)
    assert sorted(got["mixed"]["SS"]) == sorted(["é", "e\u0301", "𝄞"])
    r = ddb.update_item(TableName=name, Key={"pk": {"S": "ユーザー#001"}},
                        UpdateExpression="SET #n = :v, #o.#k = :w",
                        ExpressionAttributeNames={"#n": "名前", "#o": "Ωmega", "#k": "🔑"},
                        ExpressionAttributeValues={":v": {"S": "花子"}, ":w": {"N": "2"}},
                        ReturnValues="UPDATED_NEW")
    assert r["Attributes"] == {"名前": {"S": "花子"}, "Ωmega": {"M": {"🔑": {"N": "2"}}}}
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "ユーザー#001"}},
                       ProjectionExpression="#e", ExpressionAttributeNames={"#e": "emoji 😀"})
    assert got["Item"] == {"emoji 😀": {"S": "🎉🚀"}}
    r = ddb.scan(TableName=name, FilterExpression="contains(#e, :c)",
                 ExpressionAttributeNames={"#e": "emoji 😀"},
                 ExpressionAttributeValues={":c": {"S": "🚀"}})
    assert r["Count"] == 1


def test_unicode_sort_order_is_utf8_bytes(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "S"))
    # UTF-16 code-unit order would put U+1F600 (surrogates D83D DE00) before U+FFFD; UTF-8
    # byte order (DynamoDB's) puts it after (F0 9F 98 80 > EF BF BD).
    keys = ["A", "Z", "a", "z", "~", "\u007f", "é", "\u0800", "\ue000", "\ufffd", "😀", "𝄞",
            "a😀", "aé", "ab", "\U0010fffd"]
    for k in keys:
        ddb.put_item(TableName=name, Item={"pk": {"S": "u"}, "sk": {"S": k}})
    want = sorted(keys, key=lambda s: s.encode("utf-8"))
    assert [i["sk"]["S"] for i in query_all(ddb, name, {"S": "u"})] == want
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk > :x",
                  ExpressionAttributeValues={":p": {"S": "u"}, ":x": {"S": "\ufffd"}})
    assert [i["sk"]["S"] for i in r["Items"]] == [k for k in want
                                                  if k.encode() > "\ufffd".encode()]
    assert "😀" in [i["sk"]["S"] for i in r["Items"]]


# ---- numbers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("sent,returned", [
    ("12.50", "12.5"), ("0012", "12"), ("1e3", "1000"), ("1E+2", "100"), ("-0", "0"),
    ("0.0", "0"), ("-0.00100", "-0.001"), ("-1.5e-3", "-0.0015"), (".5", "0.5"),
    ("5.", "5"), ("1.000000000000000000000000000000000000000000000000", "1"),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("-0.12345678901234567890123456789012345678", "-0.12345678901234567890123456789012345678"),
    ("9.9999999999999999999999999999999999999E+125",
     "999999999999999999999999999999999999990000000000000000000000000000000000000000000000000"
     "000000000000000000000000000000000000000"),
    ("1E-130", "0." + "0" * 129 + "1"),
    ("123456789012345678901234567890123456780000", "123456789012345678901234567890123456780000"),
])
def test_number_canonical_form(ddb, make_table, server, sent, returned):
    name = make_table(("pk", "S"))
    r = call(server, "PutItem", {"TableName": name, "Item": {"pk": {"S": "n"}, "v": {"N": sent},
                                                             "s": {"NS": [sent, "42"]}}})
    assert r.status == 200, r
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "n"}})["Item"]
    assert got["v"] == {"N": returned}
    assert sorted(got["s"]["NS"]) == sorted([returned, "42"])


@pytest.mark.parametrize("sent,message", [
    ("123456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number"),
    ("1.23456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number"),
    ("1E+126", "Number overflow. Attempting to store a number with magnitude larger than "
               "supported range"),
    ("-1E+126", "Number overflow. Attempting to store a number with magnitude larger than "
                "supported range"),
    ("1E-131", "Number underflow. Attempting to store a number with magnitude smaller than "
               "supported range"),
    ("abc", None), ("1e", None), ("--1", None), ("", None), ("0x10", None), ("NaN", None),
    ("Infinity", None), ("1 ", None),
])
def test_number_rejected(ddb, make_table, server, sent, message):
    name = make_table(("pk", "S"))
    r = call(server, "PutItem", {"TableName": name, "Item": {"pk": {"S": "n"}, "v": {"N": sent}}})
    assert r.status == 400 and r.error_type == "ValidationException", (sent, r)
    if message:
        assert r.message == message
    assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "n"}})


def test_number_arithmetic_is_exact(ddb, make_table):
    name = make_table(("pk", "S"))
    key = {"pk": {"S": "acc"}}
    ddb.put_item(TableName=name, Item={"pk": {"S": "acc"},
                                       "v": {"N": "0.1"}, "big": {"N": "9" * 38}})
    for _ in range(2):
        ddb.update_item(TableName=name, Key=key, UpdateExpression="ADD v :x",
                        ExpressionAttributeValues={":x": {"N": "0.1"}})
    assert ddb.get_item(TableName=name, Key=key)["Item"]["v"] == {"N": "0.3"}
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="SET v = v - :x",
                        ExpressionAttributeValues={":x": {"N": "0.30000000000000000000000001"}},
                        ReturnValues="UPDATED_NEW")
    assert r["Attributes"]["v"] == {"N": "-0.00000000000000000000000001"}
    # 38 nines + 1 = 1E+38 (one significant digit) is fine; + 0.1 needs 39 digits
    r = ddb.update_item(TableName=name, Key=key, UpdateExpression="ADD big :one",
                        ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW")
    assert r["Attributes"]["big"] == {"N": "1" + "0" * 38}
    code, msg = error(ddb.update_item, TableName=name, Key=key, UpdateExpression="ADD big :x",
                      ExpressionAttributeValues={":x": {"N": "0.1"}})
    assert code == "ValidationException" and "significant digits" in msg, msg
    assert ddb.get_item(TableName=name, Key=key)["Item"]["big"] == {"N": "1" + "0" * 38}


def test_number_sort_order(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "N"))
    nums = ["-1E+125", "-100", "-10", "-9.99", "-1.5", "-1", "-0.001", "-1E-130", "0", "1E-130",
            "0.001", "0.5", "1", "1.5", "2", "9.99", "10", "10.01", "100", "1E+20", "9E+125"]
    for n in reversed(nums):
        ddb.put_item(TableName=name, Item={"pk": {"S": "n"}, "sk": {"N": n}})
    from decimal import Decimal
    got = [Decimal(i["sk"]["N"]) for i in query_all(ddb, name, {"S": "n"})]
    assert got == sorted(Decimal(n) for n in nums)
    got = [Decimal(i["sk"]["N"]) for i in query_all(ddb, name, {"S": "n"}, forward=False)]
    assert got == sorted((Decimal(n) for n in nums), reverse=True)
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
                  ExpressionAttributeValues={":p": {"S": "n"}, ":a": {"N": "-1.5"},
                                             ":b": {"N": "1.50"}})
    assert [i["sk"]["N"] for i in r["Items"]] == ["-1.5", "-1", "-0.001", "-" + "0." + "0" * 129
                                                  + "1", "0", "0." + "0" * 129 + "1", "0.001",
                                                  "0.5", "1", "1.5"]


# ---- limits ----------------------------------------------------------------------------------

def test_item_size_limit(ddb, make_table):
    name = make_table(("pk", "S"))
    # size = attribute name bytes + value bytes: "pk" + "k" + "v" + payload = 409600
    ddb.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "x" * 409596}})
    assert len(ddb.get_item(TableName=name, Key={"pk": {"S": "k"}})["Item"]["v"]["S"]) == 409596
    code, msg = error(ddb.put_item, TableName=name,
                      Item={"pk": {"S": "k"}, "v": {"S": "x" * 409597}})
    assert (code, msg) == ("ValidationException",
                           "Item size has exceeded the maximum allowed size")
    # counted in UTF-8 bytes: 136,532 x 'あ' (3 bytes) = 409,596 bytes + 4 = 409,600 fits; one
    # more character does not, although it is far fewer than 409,600 characters
    ddb.put_item(TableName=name, Item={"pk": {"S": "k"}, "v": {"S": "あ" * 136532}})
    code, msg = error(ddb.put_item, TableName=name,
                      Item={"pk": {"S": "k"}, "v": {"S": "あ" * 136533}})
    assert code == "ValidationException", msg
    # attribute names count too
    code, msg = error(ddb.put_item, TableName=name,
                      Item={"pk": {"S": "k"}, "v" * 10: {"S": "x" * 409596}})
    assert code == "ValidationException", msg
    # an update may not grow an item past the limit
    code, msg = error(ddb.update_item, TableName=name, Key={"pk": {"S": "k"}},
                      UpdateExpression="SET w = :w",
                      ExpressionAttributeValues={":w": {"S": "y" * 10}})
    assert (code, msg) == ("ValidationException",
                           "Item size to update has exceeded the maximum allowed size")
    assert len(ddb.get_item(TableName=name, Key={"pk": {"S": "k"}})["Item"]["v"]["S"]) == 136532


def test_key_size_limits(ddb, make_table):
    name = make_table(("pk", "S"), ("sk", "B"))
    ddb.put_item(TableName=name, Item={"pk": {"S": "p" * 2048}, "sk": {"B": b"\xff" * 1024}})
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "p" * 2048}, "sk": {"B": b"\xff" * 1024}})
    assert got["Item"]["sk"]["B"] == b"\xff" * 1024
    assert error(ddb.put_item, TableName=name,
                 Item={"pk": {"S": "p" * 2049}, "sk": {"B": b"x"}}) == (
        "ValidationException", "One or more parameter values were invalid: Size of hashkey has "
                               "exceeded the maximum size limit of2048 bytes")
    assert error(ddb.put_item, TableName=name,
                 Item={"pk": {"S": "p"}, "sk": {"B": b"x" * 1025}}) == (
        "ValidationException", "One or more parameter values were invalid: Aggregated size of "
                               "all range keys has exceeded the size limit of 1024 bytes")
    # measured in UTF-8 bytes: 1025 x 'é' = 2050 bytes, over the 2048 of a partition key
    code, _ = error(ddb.get_item, TableName=name,
                    Key={"pk": {"S": "é" * 1025}, "sk": {"B": b"x"}})
    assert code == "ValidationException"
    ddb.put_item(TableName=name, Item={"pk": {"S": "é" * 1024}, "sk": {"B": b"x"}})


def test_nesting_and_empty_values(ddb, make_table):
    name = make_table(("pk", "S"))
    deep = {"S": "leaf"}
    for _ in range(31):
        deep = {"M": {"d": deep}}
    ddb.put_item(TableName=name, Item={"pk": {"S": "deep"}, "v": deep})  # 32 levels
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "deep"}})["Item"]["v"]
    assert got == deep
    code, msg = error(ddb.put_item, TableName=name,
                      Item={"pk": {"S": "deeper"}, "v": {"M": {"d": deep}}})
    assert code == "ValidationException", msg
    assert msg.startswith("Nesting Levels have exceeded supported limits"), msg
    # empty strings and binaries are fine outside keys; empty sets are not
    ddb.put_item(TableName=name, Item={"pk": {"S": "e"}, "s": {"S": ""}, "b": {"B": b""},
                                       "l": {"L": []}, "m": {"M": {}}})
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "e"}})["Item"]
    assert got == {"pk": {"S": "e"}, "s": {"S": ""}, "b": {"B": b""}, "l": {"L": []},
                   "m": {"M": {}}}
    code, msg = error(ddb.put_item, TableName=name, Item={"pk": {"S": "e"}, "ss": {"SS": []}})
    assert (code, msg) == ("ValidationException",
                           "One or more parameter values were invalid: An string set  may not be "
                           "empty")
