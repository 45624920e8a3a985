"""test_partiql_diff.py - This file contains the differential test of PartiQL: one randomized
workload (seeded_rng: fixed by KURA_TEST_SEED) run twice, as PartiQL statements
(ExecuteStatement, ExecuteTransaction) against table A and as the equivalent GetItem, PutItem,
UpdateItem, DeleteItem, Query, Scan and TransactWriteItems requests against table B, which has
the same schema. Every answer is compared (items, returned attributes, the error kind, a
transaction's cancellation reasons), and so are the two tables' final contents.

The equivalences are DynamoDB's PartiQL semantics (docs/partiql.md): INSERT is a PutItem if
attribute_not_exists(pk) whose failure is DuplicateItemException; UPDATE carries
attribute_exists(pk) AND the other WHERE terms, DELETE the other terms alone; SELECT on the full key is a GetItem, on the
partition key a Query (ORDER BY sk DESC = ScanIndexForward false), otherwise a Scan.
"""

import pytest
from botocore.exceptions import ClientError

from conftest import create_table, scaled, seeded_rng, unique_name

PKS = ["p0", "p1", "p2"]
SKS = list(range(8))


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def outcome(fn):
    """("ok", response) or ("err", the error code), with a PartiQL-only error named as the
    operation that stands for it would name it."""
    try:
        return ("ok", fn())
    except ClientError as e:
        code = e.response["Error"]["Code"]
        if code == "DuplicateItemException":
            code = "ConditionalCheckFailedException"
        reasons = [r["Code"] for r in e.response.get("CancellationReasons", [])]
        # an INSERT's failure in a transaction: ValidationError "Duplicate primary key ..."
        reasons = ["ConditionalCheckFailed" if c in ("DuplicateItem", "ValidationError") else c
                   for c in reasons]
        return ("err", code, reasons)


class Workload:
    def __init__(self, ddb, a, b, rng):
        self.ddb, self.a, self.b, self.rng = ddb, a, b, rng
        self.steps = 0

    def key(self):
        return self.rng.choice(PKS), self.rng.choice(SKS)

    def compare(self, what, x, y):
        assert x == y, "step %d (%s): PartiQL %r != API %r" % (self.steps, what, x, y)

    # --- the operations: each returns (PartiQL outcome, API outcome) normalised ----------

    def insert(self):
        pk, sk = self.key()
        n = self.rng.randrange(100)
        tags = sorted({"t%d" % self.rng.randrange(4) for _ in range(self.rng.randrange(1, 3))})
        use_params = self.rng.random() < 0.5
        if use_params:
            stmt = "INSERT INTO \"%s\" VALUE {'pk': ?, 'sk': ?, 'n': ?, 'tags': ?, 'l': [?]}" % self.a
            params = [S(pk), N(sk), N(n), {"SS": tags}, S("x")]
            x = outcome(lambda: self.ddb.execute_statement(Statement=stmt, Parameters=params))
        else:
            stmt = ("INSERT INTO \"%s\" VALUE {'pk': '%s', 'sk': %d, 'n': %d, 'tags': <<%s>>, "
                    "'l': ['x']}" % (self.a, pk, sk, n, ", ".join("'%s'" % t for t in tags)))
            x = outcome(lambda: self.ddb.execute_statement(Statement=stmt))
        item = {"pk": S(pk), "sk": N(sk), "n": N(n), "tags": {"SS": tags}, "l": {"L": [S("x")]}}
        y = outcome(lambda: self.ddb.put_item(TableName=self.b, Item=item,
                                              ConditionExpression="attribute_not_exists(pk)"))
        return x[0:1] + x[2:] if x[0] == "ok" else x, y[0:1] + y[2:] if y[0] == "ok" else y

    def get(self):
        pk, sk = self.key()
        x = outcome(lambda: self.ddb.execute_statement(
            Statement="SELECT * FROM \"%s\" WHERE pk = '%s' AND sk = %d" % (self.a, pk, sk)))
        y = outcome(lambda: self.ddb.get_item(TableName=self.b, Key={"pk": S(pk), "sk": N(sk)},
                                              ConsistentRead=True))
        return (("ok", x[1]["Items"]) if x[0] == "ok" else x,
                ("ok", [y[1]["Item"]] if "Item" in y[1] else []) if y[0] == "ok" else y)

    def update(self):
        pk, sk = self.key()
        d = self.rng.randrange(1, 5)
        bound = self.rng.randrange(100)
        tag = "t%d" % self.rng.randrange(4)
        form = self.rng.randrange(3)
        if form == 0:
            pset, uexpr = "SET n = n + %d" % d, "SET n = n + :d"
        elif form == 1:
            pset, uexpr = ("SET tags = set_add(tags, <<'%s'>>) SET l = list_append(l, [%d])"
                           % (tag, d), "ADD tags :t SET l = list_append(l, :l)")
        else:
            pset, uexpr = "REMOVE l SET m = %d" % d, "REMOVE l SET m = :d"
        stmt = ("UPDATE \"%s\" %s WHERE pk = '%s' AND sk = %d AND n < %d RETURNING ALL NEW *"
                % (self.a, pset, pk, sk, bound))
        x = outcome(lambda: self.ddb.execute_statement(Statement=stmt))
        values = {":b": N(bound)}
        if form in (0, 2):
            values[":d"] = N(d)
        else:
            values[":t"] = {"SS": [tag]}
            values[":l"] = {"L": [N(d)]}
        y = outcome(lambda: self.ddb.update_item(
            TableName=self.b, Key={"pk": S(pk), "sk": N(sk)}, UpdateExpression=uexpr,
            ConditionExpression="attribute_exists(pk) AND n < :b",
            ExpressionAttributeValues=values, ReturnValues="ALL_NEW"))
        return (("ok", x[1]["Items"]) if x[0] == "ok" else x,
                ("ok", [y[1]["Attributes"]]) if y[0] == "ok" else y)

    def delete(self):
        pk, sk = self.key()
        bound = self.rng.choice([None, self.rng.randrange(100)])
        extra = "" if bound is None else " AND n < %d" % bound
        x = outcome(lambda: self.ddb.execute_statement(
            Statement="DELETE FROM \"%s\" WHERE pk = '%s' AND sk = %d%s RETURNING ALL OLD *"
            % (self.a, pk, sk, extra)))
        kw = {} if bound is None else {"ConditionExpression": "n < :b",
                                       "ExpressionAttributeValues": {":b": N(bound)}}
        y = outcome(lambda: self.ddb.delete_item(
            TableName=self.b, Key={"pk": S(pk), "sk": N(sk)}, ReturnValues="ALL_OLD", **kw))
        return (("ok", x[1]["Items"]) if x[0] == "ok" else x,
                ("ok", [y[1]["Attributes"]] if "Attributes" in y[1] else []) if y[0] == "ok" else y)

    def pages(self, fn, key):
        out, token = [], None
        while True:
            r = fn(token)
            out += r["Items"]
            token = r.get(key)
            if not token:
                return out

    def query(self):
        pk = self.rng.choice(PKS)
        lo = self.rng.randrange(8)
        hi = self.rng.randrange(100)
        desc = self.rng.random() < 0.5
        limit = self.rng.choice([None, 1, 2, 5])
        stmt = ("SELECT * FROM \"%s\" WHERE pk = '%s' AND sk >= %d AND n < %d%s"
                % (self.a, pk, lo, hi, " ORDER BY sk DESC" if desc else ""))

        def px(token):
            kw = {"Limit": limit} if limit else {}
            if token:
                kw["NextToken"] = token
            return self.ddb.execute_statement(Statement=stmt, ConsistentRead=True, **kw)

        def py(start):
            kw = {"Limit": limit} if limit else {}
            if start:
                kw["ExclusiveStartKey"] = start
            return self.ddb.query(
                TableName=self.b, KeyConditionExpression="pk = :p AND sk >= :lo",
                FilterExpression="n < :hi", ScanIndexForward=not desc, ConsistentRead=True,
                ExpressionAttributeValues={":p": S(pk), ":lo": N(lo), ":hi": N(hi)}, **kw)

        return (outcome(lambda: self.pages(px, "NextToken")),
                outcome(lambda: self.pages(py, "LastEvaluatedKey")))

    def scan(self):
        lo = self.rng.randrange(50)
        tag = "t%d" % self.rng.randrange(4)
        x = outcome(lambda: self.pages(lambda t: self.ddb.execute_statement(
            Statement="SELECT pk, sk, n FROM \"%s\" WHERE n >= %d OR contains(tags, '%s')"
            % (self.a, lo, tag), **({"NextToken": t} if t else {})), "NextToken"))
        y = outcome(lambda: self.pages(lambda s: self.ddb.scan(
            TableName=self.b, FilterExpression="n >= :lo OR contains(tags, :t)",
            ProjectionExpression="pk, sk, n",
            ExpressionAttributeValues={":lo": N(lo), ":t": S(tag)},
            **({"ExclusiveStartKey": s} if s else {})), "LastEvaluatedKey"))
        key = lambda i: (i["pk"]["S"], int(i["sk"]["N"]))  # noqa: E731
        return (("ok", sorted(x[1], key=key)) if x[0] == "ok" else x,
                ("ok", sorted(y[1], key=key)) if y[0] == "ok" else y)

    def transaction(self):
        keys = []
        while len(keys) < self.rng.randrange(2, 4):
            k = self.key()
            if k not in keys:
                keys.append(k)
        stmts, actions = [], []
        for pk, sk in keys:
            kind = self.rng.randrange(3)
            key = {"pk": S(pk), "sk": N(sk)}
            if kind == 0:
                stmts.append({"Statement": "INSERT INTO \"%s\" VALUE {'pk': '%s', 'sk': %d, "
                                           "'n': 1}" % (self.a, pk, sk)})
                actions.append({"Put": {"TableName": self.b, "Item": dict(key, n=N(1)),
                                        "ConditionExpression": "attribute_not_exists(pk)"}})
            elif kind == 1:
                stmts.append({"Statement": "UPDATE \"%s\" SET n = n + 10 WHERE pk = '%s' AND "
                                           "sk = %d" % (self.a, pk, sk)})
                actions.append({"Update": {"TableName": self.b, "Key": key,
                                           "UpdateExpression": "SET n = n + :d",
                                           "ConditionExpression": "attribute_exists(pk)",
                                           "ExpressionAttributeValues": {":d": N(10)}}})
            else:
                stmts.append({"Statement": "DELETE FROM \"%s\" WHERE pk = '%s' AND sk = %d "
                                           "AND n < 50" % (self.a, pk, sk)})
                actions.append({"Delete": {"TableName": self.b, "Key": key,
                                           "ConditionExpression": "n < :m",
                                           "ExpressionAttributeValues": {":m": N(50)}}})
        x = outcome(lambda: self.ddb.execute_transaction(TransactStatements=stmts))
        y = outcome(lambda: self.ddb.transact_write_items(TransactItems=actions))
        return (("ok",) if x[0] == "ok" else x, ("ok",) if y[0] == "ok" else y)

    def step(self):
        self.steps += 1
        ops = [(self.insert, 4), (self.get, 2), (self.update, 4), (self.delete, 2),
               (self.query, 2), (self.scan, 1), (self.transaction, 2)]
        fn = self.rng.choices([o for o, _ in ops], weights=[w for _, w in ops])[0]
        x, y = fn()
        self.compare(fn.__name__, x, y)
        return fn.__name__, x[0]


def scan_all(ddb, name):
    items, start = [], None
    while True:
        kw = {"ExclusiveStartKey": start} if start else {}
        r = ddb.scan(TableName=name, ConsistentRead=True, **kw)
        items += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return sorted(items, key=lambda i: (i["pk"]["S"], int(i["sk"]["N"])))


def test_partiql_matches_item_api(ddb):
    a, b = unique_name("pqa"), unique_name("pqb")
    for name in (a, b):
        create_table(ddb, name, ("pk", "S"), ("sk", "N"))
    try:
        w = Workload(ddb, a, b, seeded_rng("partiql_diff"))
        seen = set()
        for _ in range(scaled(600, 100)):
            seen.add(w.step())
        # the workload reached both outcomes of every write, and reads that found items
        for op in ("insert", "update", "delete", "transaction"):
            assert (op, "ok") in seen and (op, "err") in seen, (op, sorted(seen))
        final_a, final_b = scan_all(ddb, a), scan_all(ddb, b)
        assert final_a == final_b
        assert final_a, "the workload left no items: it compared nothing at the end"
    finally:
        for name in (a, b):
            ddb.delete_table(TableName=name)
