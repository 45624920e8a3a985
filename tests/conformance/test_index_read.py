"""test_index_read.py - This file contains the conformance tests of Query and Scan with IndexName
over HTTP: a table with an LSI (KEYS_ONLY), a GSI with a multi-attribute key (two HASH and two
RANGE attributes, projection ALL) and a GSI with an INCLUDE projection. Every key condition
operator against an oracle, forwards and backwards, paginated (every item exactly once, in index
order, LastEvaluatedKey = the index's and the table's key attributes); Scan and parallel Scan of
each index; sparse items absent; projections, Select, an LSI's whole items read from the table;
ConsumedCapacity with INDEXES; every error a read on an index answers, with its exact message.

Expected messages and capacity shapes are DynamoDB Local 1.25.1's (engine/page.h says where kura
keeps DynamoDB's or dynalite's wording instead). Multi-attribute GSI keys are newer than the
installed botocore's validation, so the clients here send unvalidated requests (conftest's ddb).

GSIs are maintained asynchronously: after writing, a test reads a GSI by polling until it shows
what was written, with a deadline (never a sleep of a fixed length).
"""

import functools
import time

import pytest
from botocore.exceptions import ClientError

from conftest import call, unique_name

INVALID = "One or more parameter values were invalid: "
NITEMS = 120
DEADLINE_S = 30.0
R1 = ["a", "ab", "abc", "b", "ba", "c"]


def S(s):
    return {"S": s}


def N(n):
    return {"N": str(n)}


def B(bs):
    return {"B": bytes(bs)}


def make_item(i):
    it = {"pk": S("p%d" % (i % 4)), "sk": N(i), "b": N(i * 3), "a": S("a%d" % i),
          "r2": B([i % 4, i % 7])}
    if i % 7:
        it["x"] = S("x%03d" % ((i * 37) % 100))
    if i % 5:
        it["g"] = S("g%d" % (i % 3))
    if i % 13:
        it["h"] = N((i // 3) % 2)
    if i % 11:
        it["r1"] = S(R1[i % 6])
    if i % 4 != 3:
        it["c"] = S("c%d" % (i % 4))
    return it


ITEMS = [make_item(i) for i in range(NITEMS)]

INDEXES = {
    # name: (HASH attributes, RANGE attributes, projection type, NonKeyAttributes)
    "ByX": (["pk"], ["x"], "KEYS_ONLY", []),
    "Multi": (["g", "h"], ["r1", "r2"], "ALL", []),
    "ByC": (["c"], ["x"], "INCLUDE", ["a"]),
}


def create_body(name):
    def ks(hash_attrs, range_attrs):
        return ([{"AttributeName": a, "KeyType": "HASH"} for a in hash_attrs] +
                [{"AttributeName": a, "KeyType": "RANGE"} for a in range_attrs])

    def proj(kind, incl):
        p = {"ProjectionType": kind}
        if incl:
            p["NonKeyAttributes"] = incl
        return p

    defs = [("pk", "S"), ("sk", "N"), ("x", "S"), ("g", "S"), ("h", "N"), ("r1", "S"),
            ("r2", "B"), ("c", "S")]
    return {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in defs],
        "KeySchema": ks(["pk"], ["sk"]),
        "BillingMode": "PAY_PER_REQUEST",
        "LocalSecondaryIndexes": [
            {"IndexName": "ByX", "KeySchema": ks(["pk"], ["x"]),
             "Projection": proj("KEYS_ONLY", None)}],
        "GlobalSecondaryIndexes": [
            {"IndexName": n, "KeySchema": ks(h, r), "Projection": proj(k, inc)}
            for n, (h, r, k, inc) in INDEXES.items() if n != "ByX"],
    }


# ---- the oracle ------------------------------------------------------------------------------

def plain(v):
    """A comparable Python value of an S, N or B attribute value."""
    if "S" in v:
        return v["S"].encode("utf-8")
    if "N" in v:
        return float(v["N"])
    return bytes(v["B"])


def has_keys(index, item):
    h, r, _, _ = INDEXES[index]
    return all(a in item for a in h + r)


def projected(index, item):
    h, r, kind, incl = INDEXES[index]
    if kind == "ALL":
        return dict(item)
    keep = set(h + r + incl + ["pk", "sk"])
    return {k: v for k, v in item.items() if k in keep}


def holds(term, item):
    name, op, v1, v2 = term
    if name not in item or list(item[name])[0] != list(v1)[0]:
        return False
    a, b = plain(item[name]), plain(v1)
    if op == "begins_with":
        return a.startswith(b)
    if op == "BETWEEN":
        return b <= a <= plain(v2)
    return {"=": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def index_order(index, item):
    _, r, _, _ = INDEXES[index]
    return tuple(plain(item[a]) for a in r + ["pk", "sk"])


def expected(index, terms):
    out = [it for it in ITEMS if has_keys(index, it) and all(holds(t, it) for t in terms)]
    return sorted(out, key=functools.partial(index_order, index))


def condition(terms):
    parts, names, values = [], {}, {}
    for i, (name, op, v1, v2) in enumerate(terms):
        names["#k%d" % i] = name
        values[":a%d" % i] = v1
        if op == "BETWEEN":
            values[":b%d" % i] = v2
            parts.append("#k%d BETWEEN :a%d AND :b%d" % (i, i, i))
        elif op == "begins_with":
            parts.append("begins_with(#k%d, :a%d)" % (i, i))
        else:
            parts.append("#k%d %s :a%d" % (i, op, i))
    return " AND ".join(parts), names, values


def lek_of(index, item):
    h, r, _, _ = INDEXES[index]
    return {a: item[a] for a in set(h + r + ["pk", "sk"])}


# ---- fixtures --------------------------------------------------------------------------------

def poll(fn, what, deadline_s=DEADLINE_S):
    """Calls fn() until it returns true (GSIs are eventually consistent); fails after the
    deadline with `what`."""
    end = time.monotonic() + deadline_s
    while True:
        if fn():
            return
        if time.monotonic() > end:
            pytest.fail("%s: not seen within %.0f s" % (what, deadline_s))
        time.sleep(0.02)


def scan_all(ddb, **kw):
    items, esk = [], None
    while True:
        if esk:
            kw["ExclusiveStartKey"] = esk
        r = ddb.scan(**kw)
        items += r.get("Items", [])
        esk = r.get("LastEvaluatedKey")
        if not esk:
            return items


def gsi_count(ddb, table, index):
    return len(scan_all(ddb, TableName=table, IndexName=index))


@pytest.fixture(scope="module")
def table(ddb, server):
    name = unique_name("rd_idxread")
    r = call(server, "CreateTable", create_body(name))
    assert r.status == 200, r
    for i in range(0, NITEMS, 25):
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": it}}
                                                  for it in ITEMS[i:i + 25]]})
    for index in ("Multi", "ByC"):
        want = sum(has_keys(index, it) for it in ITEMS)
        poll(lambda: gsi_count(ddb, name, index) == want, "GSI %s caught up" % index)
    yield name
    ddb.delete_table(TableName=name)


def query_all(ddb, table, index, terms, limit=None, forward=True, **extra):
    expr, names, values = condition(terms)
    items, pages, esk = [], 0, None
    while True:
        kw = dict(TableName=table, IndexName=index, KeyConditionExpression=expr,
                  ExpressionAttributeNames=names, ExpressionAttributeValues=values,
                  ScanIndexForward=forward, **extra)
        if limit:
            kw["Limit"] = limit
        if esk:
            kw["ExclusiveStartKey"] = esk
        r = ddb.query(**kw)
        pages += 1
        page = r.get("Items", [])
        items += page
        esk = r.get("LastEvaluatedKey")
        if limit:
            assert r["ScannedCount"] <= limit
        if esk and page and "ProjectionExpression" not in extra:
            assert esk == lek_of(index, page[-1]), (esk, page[-1])
        if not esk:
            return items
        assert pages < 10000


def check_query(ddb, table, index, terms):
    want = [projected(index, it) for it in expected(index, terms)]
    for forward in (True, False):
        for limit in (None, 1, 4):
            got = query_all(ddb, table, index, terms, limit=limit, forward=forward)
            assert got == (want if forward else want[::-1]), (index, terms, forward, limit)
    return len(want)


OPS = ["=", "<", "<=", ">", ">="]


# ---- queries ---------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS + ["BETWEEN", "begins_with", None])
def test_query_lsi(ddb, table, op):
    total = 0
    for p in range(4):
        terms = [("pk", "=", S("p%d" % p), None)]
        if op == "BETWEEN":
            terms.append(("x", op, S("x020"), S("x060")))
        elif op == "begins_with":
            terms.append(("x", op, S("x0"), None))
        elif op:
            terms.append(("x", op, S("x037"), None))
        total += check_query(ddb, table, "ByX", terms)
    if op is None:  # sparse: the items without x are in no LSI query
        assert total == sum(1 for it in ITEMS if "x" in it)


@pytest.mark.parametrize("op", OPS + ["BETWEEN", "begins_with", None])
def test_query_gsi_multi_attribute_key(ddb, table, op):
    total = 0
    for g in range(3):
        for h in range(2):
            base = [("h", "=", N(h), None), ("g", "=", S("g%d" % g), None)]  # any order
            if op is None:
                total += check_query(ddb, table, "Multi", base)
                continue
            if op == "BETWEEN":
                check_query(ddb, table, "Multi", base + [("r1", op, S("ab"), S("b"))])
                check_query(ddb, table, "Multi", base + [("r1", "=", S("abc"), None),
                                                         ("r2", op, B([1, 0]), B([2, 9]))])
            elif op == "begins_with":
                check_query(ddb, table, "Multi", base + [("r1", op, S("a"), None)])
                check_query(ddb, table, "Multi", base + [("r1", "=", S("c"), None),
                                                         ("r2", op, B([1]), None)])
            else:
                check_query(ddb, table, "Multi", base + [("r1", op, S("ab"), None)])
                check_query(ddb, table, "Multi", base + [("r1", "=", S("ba"), None),
                                                         ("r2", op, B([2, 3]), None)])
    if op is None:
        assert total == sum(1 for it in ITEMS if has_keys("Multi", it))


@pytest.mark.parametrize("op", OPS + ["BETWEEN", "begins_with", None])
def test_query_gsi_include(ddb, table, op):
    for c in range(4):
        terms = [("c", "=", S("c%d" % c), None)]
        if op == "BETWEEN":
            terms.append(("x", op, S("x010"), S("x090")))
        elif op == "begins_with":
            terms.append(("x", op, S("x1"), None))
        elif op:
            terms.append(("x", op, S("x050"), None))
        n = check_query(ddb, table, "ByC", terms)
        if op is None:
            assert (n == 0) == (c == 3)


def test_query_paginator(ddb_validating, table):
    """boto3's paginator follows an index's LastEvaluatedKey."""
    pages = ddb_validating.get_paginator("query").paginate(
        TableName=table, IndexName="ByC", KeyConditionExpression="c = :c",
        ExpressionAttributeValues={":c": S("c1")}, PaginationConfig={"PageSize": 3})
    got = [it for page in pages for it in page["Items"]]
    assert got == [projected("ByC", it) for it in expected("ByC", [("c", "=", S("c1"), None)])]


# ---- scans -----------------------------------------------------------------------------------

def sk_of(item):
    return int(item["sk"]["N"])


@pytest.mark.parametrize("index", list(INDEXES))
def test_scan_index(ddb, table, index):
    want = {i: projected(index, it) for i, it in enumerate(ITEMS) if has_keys(index, it)}
    for limit in (None, 1, 7):
        kw = {"Limit": limit} if limit else {}
        got = scan_all(ddb, TableName=table, IndexName=index, **kw)
        assert sorted(sk_of(it) for it in got) == sorted(want), limit  # each exactly once
        assert all(it == want[sk_of(it)] for it in got)
    for total in (2, 3, 5):
        seen = []
        for seg in range(total):
            seen += [sk_of(it) for it in scan_all(ddb, TableName=table, IndexName=index,
                                                  Segment=seg, TotalSegments=total, Limit=3)]
        assert sorted(seen) == sorted(want), total


def test_scan_index_count_and_filter(ddb, table):
    r = ddb.scan(TableName=table, IndexName="ByX", Select="COUNT")
    assert r["Count"] == r["ScannedCount"] == sum(1 for it in ITEMS if "x" in it)
    assert "Items" not in r
    # a Scan's filter may name attributes the index does not store (evaluated on the items)
    r = ddb.scan(TableName=table, IndexName="ByC", FilterExpression="b = :b",
                 ExpressionAttributeValues={":b": N(30)})
    assert r["Items"] == [projected("ByC", ITEMS[10])]
    # and the index's key attributes
    r = ddb.scan(TableName=table, IndexName="ByC", FilterExpression="c = :c",
                 ExpressionAttributeValues={":c": S("c2")})
    assert sorted(sk_of(it) for it in r["Items"]) == \
        [i for i, it in enumerate(ITEMS) if it.get("c") == S("c2") and "x" in it]


# ---- projections and Select ------------------------------------------------------------------

def test_select_and_projection(ddb, table):
    q = dict(TableName=table, IndexName="ByX", KeyConditionExpression="pk = :p",
             ExpressionAttributeValues={":p": S("p1")})
    want = expected("ByX", [("pk", "=", S("p1"), None)])
    assert ddb.query(**q)["Items"] == [projected("ByX", it) for it in want]
    assert ddb.query(Select="ALL_PROJECTED_ATTRIBUTES", **q)["Items"] == \
        [projected("ByX", it) for it in want]
    # the LSI reads what it does not store from the table
    assert ddb.query(Select="ALL_ATTRIBUTES", **q)["Items"] == want
    r = ddb.query(ProjectionExpression="b, x, a", Limit=3, **q)
    assert r["Items"] == [{"a": it["a"], "b": it["b"], "x": it["x"]} for it in want[:3]]
    assert r["LastEvaluatedKey"] == lek_of("ByX", want[2])
    r = ddb.query(Select="COUNT", **q)
    assert r["Count"] == len(want) and "Items" not in r
    # a filter on the table's sort key is allowed on an index
    r = ddb.query(FilterExpression="sk < :s",
                  **dict(q, ExpressionAttributeValues={":p": S("p1"), ":s": N(41)}))
    assert [sk_of(it) for it in r["Items"]] == \
        [sk_of(it) for it in want if sk_of(it) < 41]
    # a GSI with ALL returns whole items for ALL_ATTRIBUTES
    r = ddb.query(TableName=table, IndexName="Multi", Select="ALL_ATTRIBUTES",
                  KeyConditionExpression="g = :g AND h = :h",
                  ExpressionAttributeValues={":g": S("g1"), ":h": N(0)})
    assert r["Items"] == expected("Multi", [("g", "=", S("g1"), None), ("h", "=", N(0), None)])
    # INCLUDE: the listed attribute, by name
    r = ddb.query(TableName=table, IndexName="ByC", KeyConditionExpression="c = :c",
                  FilterExpression="a = :a", ProjectionExpression="a, pk",
                  ExpressionAttributeValues={":c": S("c1"), ":a": S("a101")})
    assert r["Items"] == [{"a": S("a101"), "pk": S("p1")}]


def test_gsi_follows_writes(ddb, table):
    key = {"pk": S("p2"), "sk": N(2)}
    q = dict(TableName=table, IndexName="ByC", KeyConditionExpression="c = :c AND x = :x",
             ExpressionAttributeValues={":c": S("c2"), ":x": S("x999")})
    assert ddb.query(**q)["Count"] == 0
    ddb.update_item(TableName=table, Key=key, UpdateExpression="SET x = :x",
                    ExpressionAttributeValues={":x": S("x999")})
    poll(lambda: ddb.query(**q)["Count"] == 1, "the update in ByC")
    # the LSI is current at once
    r = ddb.query(TableName=table, IndexName="ByX", KeyConditionExpression="pk = :p AND x = :x",
                  ExpressionAttributeValues={":p": S("p2"), ":x": S("x999")})
    assert r["Count"] == 1
    ddb.put_item(TableName=table, Item=ITEMS[2])  # back as it was
    poll(lambda: ddb.query(**q)["Count"] == 0, "the put in ByC")


# ---- capacity --------------------------------------------------------------------------------

def test_consumed_capacity(ddb, table):
    q = dict(TableName=table, IndexName="ByX", KeyConditionExpression="pk = :p",
             ExpressionAttributeValues={":p": S("p1")}, Limit=1)
    r = ddb.query(Select="ALL_ATTRIBUTES", ReturnConsumedCapacity="INDEXES", **q)
    assert r["ConsumedCapacity"] == {
        "TableName": table, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 0.5},
        "LocalSecondaryIndexes": {"ByX": {"CapacityUnits": 0.5}}}
    r = ddb.query(Select="ALL_ATTRIBUTES", ReturnConsumedCapacity="TOTAL", **q)
    assert r["ConsumedCapacity"] == {"TableName": table, "CapacityUnits": 1.0}
    r = ddb.query(ReturnConsumedCapacity="INDEXES", ConsistentRead=True, **q)
    assert r["ConsumedCapacity"] == {
        "TableName": table, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 0.0},
        "LocalSecondaryIndexes": {"ByX": {"CapacityUnits": 1.0}}}
    r = ddb.scan(TableName=table, IndexName="Multi", Limit=1, ReturnConsumedCapacity="INDEXES")
    assert r["ConsumedCapacity"] == {
        "TableName": table, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
        "GlobalSecondaryIndexes": {"Multi": {"CapacityUnits": 0.5}}}
    # the items read from the table for an LSI are charged one by one
    r = ddb.query(Select="ALL_ATTRIBUTES", ReturnConsumedCapacity="INDEXES",
                  **dict(q, Limit=3))
    assert r["ConsumedCapacity"]["Table"] == {"CapacityUnits": 1.5}


# ---- errors ----------------------------------------------------------------------------------

Q = {"IndexName": "ByC", "KeyConditionExpression": "c = :c",
     "ExpressionAttributeValues": {":c": S("c1")}}
QX = {"IndexName": "ByX", "KeyConditionExpression": "pk = :p",
      "ExpressionAttributeValues": {":p": S("p1")}}
SCALARS = "Key attributes must be scalars; list random access '[]' and map lookup '.' are not " \
          "allowed: "
ESK_EMPTY_INDEX = ("The provided starting key is invalid: One or more parameter values are not "
                   "valid. A value specified for a secondary index key is not supported. The "
                   "AttributeValue for a key attribute cannot contain an empty string value. "
                   "IndexName: ByC, IndexKey: ")


def with_values(base, **values):
    d = dict(base)
    d["ExpressionAttributeValues"] = dict(base["ExpressionAttributeValues"], **values)
    return d


def esk(**attrs):
    out = {"pk": S("p1"), "sk": N(1), "c": S("c1"), "x": S("x")}
    for k, v in attrs.items():
        if v is None:
            out.pop(k)
        else:
            out[k] = v
    return out


ERRORS = [
    ("no_index_query", "Query", dict(Q, IndexName="Nope"),
     "The table does not have the specified index: Nope"),
    ("no_index_scan", "Scan", {"IndexName": "Nope"},
     "The table does not have the specified index: Nope"),
    ("consistent_gsi_query", "Query", dict(Q, ConsistentRead=True),
     "Consistent read cannot be true when querying a GSI"),
    ("consistent_gsi_scan", "Scan", {"IndexName": "Multi", "ConsistentRead": True},
     "Consistent read cannot be true when scanning a GSI"),
    ("all_attributes_gsi_query", "Query", dict(Q, Select="ALL_ATTRIBUTES"),
     INVALID + "Select type ALL_ATTRIBUTES is not supported for global secondary index ByC "
               "because its projection type is not ALL"),
    ("all_attributes_gsi_scan", "Scan", {"IndexName": "ByC", "Select": "ALL_ATTRIBUTES"},
     INVALID + "Select type ALL_ATTRIBUTES is not supported for global secondary index ByC "
               "because its projection type is not ALL"),
    ("all_projected_table_query", "Query",
     dict(QX, IndexName=None, Select="ALL_PROJECTED_ATTRIBUTES"),
     "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ("all_projected_table_scan", "Scan", {"Select": "ALL_PROJECTED_ATTRIBUTES"},
     "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ("all_projected_with_projection", "Scan",
     {"IndexName": "ByC", "Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "x"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
    ("gsi_projection_one", "Query", dict(Q, ProjectionExpression="b"),
     INVALID + "Global secondary index ByC does not project [b]"),
    ("gsi_projection_order", "Query", dict(Q, ProjectionExpression="q, a, A"),
     INVALID + "Global secondary index ByC does not project [A, q]"),
    ("gsi_projection_scan", "Scan", {"IndexName": "ByC", "ProjectionExpression": "b, zz"},
     INVALID + "Global secondary index ByC does not project [zz, b]"),
    ("gsi_projection_nested", "Query", dict(Q, ProjectionExpression="b[1].c, zz.y"),
     INVALID + "Global secondary index ByC does not project [zz, b]"),
    ("gsi_filter_not_projected", "Query",
     with_values(dict(Q, FilterExpression="b = :n AND zz = :n AND a = :n"), **{":n": N(1)}),
     INVALID + "Secondary index ByC does not project one or more filter attributes: [b, zz]"),
    ("lsi_filter_not_projected", "Query",
     with_values(dict(QX, FilterExpression="size(b) > :n"), **{":n": N(1)}),
     INVALID + "Secondary index ByX does not project one or more filter attributes: [b]"),
    ("filter_index_key_gsi", "Query", with_values(dict(Q, FilterExpression="x = :s"),
                                                  **{":s": S("s")}),
     "Filter Expression can only contain non-primary key attributes: Primary key attribute: x"),
    ("filter_index_key_lsi", "Query",
     with_values(dict(QX, FilterExpression="x = :s AND pk = :s"), **{":s": S("s")}),
     "Filter Expression can only contain non-primary key attributes: Primary key attribute: pk"),
    ("nested_index_key", "Query", dict(Q, ProjectionExpression="a, h.q"), SCALARS + "IndexKey: h"),
    ("nested_table_key_first", "Query", dict(Q, ProjectionExpression="x[0], sk.q"),
     SCALARS + "Key: sk"),
    ("nested_index_key_on_table", "Scan", {"FilterExpression": "attribute_exists(x.q)"},
     SCALARS + "IndexKey: x"),
    ("order_nested_before_consistent", "Query",
     dict(Q, ProjectionExpression="h.q", ConsistentRead=True), SCALARS + "IndexKey: h"),
    ("order_filter_before_select", "Query",
     with_values(dict(Q, FilterExpression="b = :n", ProjectionExpression="b", Select="COUNT"),
                 **{":n": N(1)}),
     INVALID + "Secondary index ByC does not project one or more filter attributes: [b]"),
    ("order_select_before_projection", "Query",
     dict(Q, ProjectionExpression="b", Select="COUNT"),
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ("key_condition_missing_hash", "Query",
     dict(Q, KeyConditionExpression="x = :c"), "Query condition missed key schema element: c"),
    ("key_condition_multi_missing_hash", "Query",
     {"IndexName": "Multi", "KeyConditionExpression": "g = :g",
      "ExpressionAttributeValues": {":g": S("g1")}},
     "Query condition missed key schema element: h"),
    ("esk_size", "Query", dict(Q, ExclusiveStartKey=esk(c=None, x=None)),
     "Exclusive Start Key must have same size as table's key schema"),
    ("esk_missing", "Query", dict(Q, ExclusiveStartKey=esk(x=None, q=S("x"))),
     "The provided starting key is invalid"),
    ("esk_type", "Query", dict(Q, ExclusiveStartKey=esk(c=N(1))),
     "The provided key element does not match the schema"),
    ("esk_empty_table_key", "Query", dict(Q, ExclusiveStartKey=esk(pk=S(""), c=S(""))),
     "The provided starting key is invalid: One or more parameter values are not valid. The "
     "AttributeValue for a key attribute cannot contain an empty string value. Key: pk"),
    ("esk_empty_index_key", "Query", dict(Q, ExclusiveStartKey=esk(x=S(""))),
     ESK_EMPTY_INDEX + "x"),
    ("esk_outside", "Query", dict(Q, ExclusiveStartKey=esk(c=S("c2"))),
     "The provided starting key is outside query boundaries based on provided conditions"),
    ("esk_range_predicate", "Query",
     with_values(dict(Q, KeyConditionExpression="c = :c AND x > :x",
                      ExclusiveStartKey=esk(x=S("x1"))), **{":x": S("x5")}),
     "The provided starting key does not match the range key predicate"),
    ("esk_one_row", "Query",
     with_values(dict(Q, KeyConditionExpression="c = :c AND x > :x",
                      ExclusiveStartKey=esk(c=S("c2"), x=S("x7"))), **{":x": S("x5")}),
     "The query can return at most one row and cannot be restarted"),
    ("esk_scan_size", "Scan", {"IndexName": "ByC", "ExclusiveStartKey": esk(x=None)},
     "Exclusive Start Key must have same size as table's key schema"),
    ("esk_scan_empty", "Scan", {"IndexName": "ByC", "ExclusiveStartKey": esk(c=S(""))},
     ESK_EMPTY_INDEX + "c"),
]


@pytest.mark.parametrize("label,op,req,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(server, table, label, op, req, message):
    body = {k: v for k, v in dict(req, TableName=table).items() if v is not None}
    r = call(server, op, body)
    assert r.status == 400, r
    assert r.error_type == "ValidationException", r
    assert r.message == message


def test_lsi_consistent_read_allowed(ddb, table):
    r = ddb.query(TableName=table, ConsistentRead=True, **QX)
    assert r["Count"] == len(expected("ByX", [("pk", "=", S("p1"), None)]))
    r = ddb.scan(TableName=table, IndexName="ByX", ConsistentRead=True, Select="COUNT")
    assert r["Count"] == sum(1 for it in ITEMS if "x" in it)


def test_esk_segment(ddb, table):
    # a start key read from one segment is refused by the others
    for total in (2, 3):
        for seg in range(total):
            r = ddb.scan(TableName=table, IndexName="ByC", Segment=seg, TotalSegments=total,
                         Limit=1)
            lek = r.get("LastEvaluatedKey")
            if not lek:
                continue
            other = (seg + 1) % total
            with pytest.raises(ClientError) as e:
                ddb.scan(TableName=table, IndexName="ByC", Segment=other, TotalSegments=total,
                         ExclusiveStartKey=lek)
            assert e.value.response["Error"]["Message"] == (
                "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
                "ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d"
                % (total, other))
            ddb.scan(TableName=table, IndexName="ByC", Segment=seg, TotalSegments=total,
                     ExclusiveStartKey=lek)
