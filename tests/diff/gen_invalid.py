"""gen_invalid.py - This file contains the invalid requests of the differential test's generator:
each has exactly one fault whose error (type, and message where DynamoDB's text is known) the
reference model derives on its own - a key of the wrong type or missing, a number out of range,
ADD with a string, an update of a key attribute, empty or oversized keys, an item over 400 KB, a
missing table, duplicate set members or batch keys, a key condition of the wrong type.
"""

from gen_expr import Expr, Op, b64


def invalid(g):
    """A request with one fault whose error the model knows."""
    r = g.rng
    t = g.table()
    (hn, ht), rk = g.tables[t]
    c = r.randint(0, 13)
    ex = Expr(r)
    if c == 0:  # key attribute of the wrong type
        key = g.key(t)
        key[hn] = {"N": "1"} if ht != "N" else {"S": "1"}
        return Op("single", "GetItem", {"TableName": t, "Key": key}, {}, "errors")
    if c == 1:  # sort key missing, or an extra attribute in the key
        key = g.key(t)
        if rk:
            del key[rk[0]]
        else:
            key["num"] = {"N": "1"}
        return Op("single", r.choice(["GetItem", "DeleteItem"]),
                  {"TableName": t, "Key": key}, {}, "errors")
    if c == 2:  # item without its partition key
        item = g.item(t)
        del item[hn]
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 3:  # item with a key attribute of the wrong type
        item = g.item(t)
        item[hn] = {"BOOL": True} if r.random() < 0.3 else (
            {"N": "1"} if ht != "N" else {"S": "1"})
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 4:  # a number out of range or too precise
        item = g.item(t)
        item["num"] = {"N": r.choice(["1e126", "-1E+126", "1e-131", "-1e-200",
                                      "1234567890123456789012345678901234567891",
                                      "1.234567890123456789012345678901234567891"])}
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 5:  # ADD with a string operand
        req = {"TableName": t, "Key": g.key(t)}
        req["UpdateExpression"] = "ADD %s %s" % (ex.name("num"), ex.value({"S": "1"}))
        return Op("single", "UpdateItem", ex.attach(req),
                  {"update": [("add", ["num"], ":v0")]}, "errors")
    if c == 6:  # updating a key attribute
        req = {"TableName": t, "Key": g.key(t)}
        req["UpdateExpression"] = "SET %s = %s" % (ex.name(hn),
                                                   ex.value(g.key_value(ht, True)))
        return Op("single", "UpdateItem", ex.attach(req),
                  {"update": [("set", [hn], ("val", ":v0"))]}, "errors")
    if c == 7:  # empty string/binary key value
        item = g.item(t)
        if ht == "N":
            item["num"] = {"NS": []}  # an empty set instead (no empty N exists)
        else:
            item[hn] = {ht: ""}
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 8:  # a table that does not exist
        return Op("single", r.choice(["GetItem", "DeleteItem"]),
                  {"TableName": "DiffNoSuchTable", "Key": g.key(t)}, {}, "errors")
    if c == 9:  # a set with duplicate members
        item = g.item(t)
        item["nums"] = {"NS": ["1", "1.0"]} if r.random() < 0.5 else {"SS": ["a", "a"]}
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 10:  # duplicate keys in a batch
        key = g.key(t)
        if r.random() < 0.5:
            return Op("single", "BatchGetItem",
                      {"RequestItems": {t: {"Keys": [key, dict(key)]}}}, {}, "errors")
        item = g.item(t)
        item.update(key)
        return Op("single", "BatchWriteItem",
                  {"RequestItems": {t: [{"PutRequest": {"Item": item}},
                                        {"DeleteRequest": {"Key": dict(key)}}]}},
                  {}, "errors")
    if c == 11:  # a key value over its size limit (or just at it: accepted)
        item = g.item(t)
        name, kt = rk if rk and r.random() < 0.5 else (hn, ht)
        limit = 2048 if name == hn else 1024
        if kt == "N":
            name, kt, limit = hn, ht, 2048
        if kt != "N":
            n = limit + r.choice([0, 1, 100])
            item[name] = {"S": "k" * n} if kt == "S" else {"B": b64(b"\x01" * n)}
            return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    if c == 12:  # an item over 400 KB
        item = g.item(t)
        item["txt"] = {"S": "x" * (400 * 1024 + r.randint(1, 2000))}
        return Op("single", "PutItem", {"TableName": t, "Item": item}, {}, "errors")
    # a key condition value of the wrong type
    bad = {"N": "1"} if ht != "N" else {"S": "1"}
    req = {"TableName": t,
           "KeyConditionExpression": "%s = %s" % (ex.name(hn), ex.value(bad))}
    return Op("single", "Query", ex.attach(req), {"key_hash": ":v0"}, "errors")
