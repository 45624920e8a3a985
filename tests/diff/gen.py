"""gen.py - This file contains the seeded random generator of the differential test: long
sequences of DynamoDB requests over four tables with different key schemas, each request paired
with the structured form of its expressions for the reference model (refmodel.py).

Design. The key space is small (a few partition keys, a handful of sort keys per table) so that
writes collide and conditions go both ways. Attribute names have fixed types (num is always N,
txt always an ASCII S, ...) except `v`, which takes any type; that keeps size() and the ordered
comparators meaningful while type mismatches still arise (ADD to txt, num + txt, v of any
type). Every expression is built twice at once: as text with placeholders (#n, :v) for kura and
as a tuple tree for the model (node shapes in refmodel.py). Placeholders are registered only
when used, so no request carries an unused name or value (a ValidationException in DynamoDB).

Secondary indexes: gen_index.py makes the tables' random LSIs and GSIs, the values of their key
attributes (IKEYS, part of ATTRS) and the Query and Scan requests with IndexName.

An Op is one step of the test: `kind` "single" (one request), "query" (a Query followed through
every page), "scan" (a Scan through every page, compared as a multiset), "segments" (a parallel
scan: every segment through every page), "ddl" (an UpdateTable that creates or deletes a GSI) or
"settle" (the wait until kura has built the GSI created last). `cls` names the class of the op
for the skip flags.

Skip flags (Generator.skip) turn off a class of ops whose kura behaviour is known to be wrong, so
the rest of the test keeps running while the bug is open. See SKIP_FLAGS.
"""

import base64
import decimal
import random

import gen_index
import gen_invalid
from gen_expr import Expr, Op, b64, overlaps, render, render_action  # Op: diff_test uses gen.Op

# Op classes that can be switched off with --skip (each flag documents what it removes).
SKIP_FLAGS = {
    "updated_list_paths": "UPDATED_OLD/UPDATED_NEW on updates that touch a list element",
    "updated_nested": "UPDATED_OLD/UPDATED_NEW on updates of nested paths (DynamoDB Local "
                      "returns the whole top-level attribute there)",
    "errors": "the deliberately invalid requests",
    "segments": "parallel scans (Segment/TotalSegments)",
    "batch": "BatchGetItem and BatchWriteItem",
    "size_fn": "size() in conditions and filters",
    "rvoccf": "ReturnValuesOnConditionCheckFailure",
    "nested_update": "update actions on nested paths (a.b, l[i])",
    "projection": "ProjectionExpression",
    "indexes": "secondary indexes (the tables are created without LSIs and GSIs)",
    "multi_key_gsi": "GSIs with more than one HASH or RANGE attribute (DynamoDB Local)",
    "index_reads": "Query and Scan with IndexName (the writes still maintain the indexes)",
    "online_gsi": "UpdateTable Create and Delete of GSIs on the live tables",
    "gsi_backfill_violations": "UpdateTable Create of a GSI while an item holds one of its key "
                               "attributes with the wrong type or empty (DynamoDB leaves such "
                               "items out of the index)",
    "transactions": "TransactWriteItems and TransactGetItems",
}

# Skipped unless --include-known-bugs: op classes where kura is known to be wrong, so that CI
# tests the rest. Remove a flag here once its bug is fixed.
KNOWN_BUGS = {}

# Tables: name, hash key (name, type), range key or None.
TABLES = [
    ("DiffStrNum", ("pk", "S"), ("sk", "N")),
    ("DiffStrStr", ("PK", "S"), ("SK", "S")),
    ("DiffNum", ("uid", "N"), None),
    ("DiffStrBin", ("part", "S"), ("bk", "B")),
]



# Key pools. Numbers include equal values written differently ("1" / "1.0" / "10e-1"), strings
# whose UTF-8 order differs from their UTF-16 order (U+FF21 vs U+1F600), and binaries whose
# unsigned order differs from a signed one (0x7f < 0x80).
HASH_S = ["p1", "p2", "p\u00e9", "P", "p10"]
HASH_N = ["-10", "-1.5", "0", "1", "1.0", "10e-1", "2", "1e2", "1E-5", "123456789012345678901234567890",
          "-9.9999999999999999999999999999999999999E+125", "1e-130"]
RANGE_N = ["-100", "-1.5", "-0", "0", "0.5", "1", "1.00", "2", "10", "1e2", "1E-5",
           "99999999999999999999999999999999999999", "-1e125", "3.14159"]
RANGE_S = ["a", "ab", "abc", "abd", "b", "B", "a b", "aa", "\u00e9", "\u00e9a", "z",
           "\u65e5\u672c", "\uff21", "\U0001F600", "0", "a\u0000b"]
RANGE_B = [b64(x) for x in (b"\x00", b"\x00\x00", b"\x00\x01", b"\x01", b"\x7f", b"\x80",
                            b"\xff", b"\xff\xff", b"ab", b"abc", b"a")]
PREFIX_S = ["a", "ab", "\u00e9", "z", "A", "\U0001F600"]
PREFIX_B = [b64(x) for x in (b"\x00", b"\xff", b"a", b"ab", b"\x80")]

# Small pools for list elements, set members and contains() needles, so they meet often.
SMALL_S = ["a", "b", "ab", "", "z", "xy"]
SMALL_B = [b64(x) for x in (b"\x00", b"\x01", b"ab", b"\xff")]
NUMS = ["0", "1", "-1", "1.5", "-1.50", "0.001", "100", "1e3", "2.5E-3", "7", "42", "-0",
        "12345678901234567890123456789012345678", "-9.9999999999999999999999999999999999999E+125",
        "1E-130", "1e125", "0.1", "3.14159", "1000000000000000000000", "-0.000000000000000001"]
ASCII = "abcxyz AZ09-_."
UNICODE = ["\u00e9", "\u65e5", "\U0001F600", "\uff21", "a", "\u0000", "\u00ff"]

# Non-key attributes: name -> type ("any": v).
ATTRS = {"num": "N", "txt": "S", "uni": "S", "bin": "B", "flag": "BOOL", "nil": "NULL",
         "lst": "L", "doc": "M", "strs": "SS", "nums": "NS", "bins": "BS", "v": "any",
         "date": "N", "my-attr": "S", "x.y": "N", **gen_index.IKEYS}
SIZED = ["txt", "bin", "lst", "doc", "strs", "nums", "bins"]  # size() targets (no multibyte S)
ORDERED = {"num": "N", "txt": "S", "bin": "B", "date": "N", "x.y": "N", **gen_index.IKEYS}
NO_COPY = ("uni", "v", "gs1")  # not copied into other attributes: size() stays on ASCII strings


class Generator:
    def __init__(self, seed, skip=()):
        self.rng = random.Random(seed)
        self.skip = set(skip)
        for s in self.skip:
            if s not in SKIP_FLAGS:
                raise ValueError("unknown skip flag %r (known: %s)" % (s, ", ".join(SKIP_FLAGS)))
        self.tables = {name: (h, r) for name, h, r in TABLES}
        self.attrs = list(ATTRS)
        # {table: [refindex.Index]}: LSIs, then GSIs (diff_test creates the tables with them)
        self.indexes = gen_index.schemas(seed, TABLES, self.attrs, self.skip)
        self.ddl_count = 0  # GSIs created by UpdateTable so far (their names: U<n>-...)
        self.building = None  # [table, index, ops left]: a GSI kura may still be building

    # ---- values --------------------------------------------------------------------------

    def num(self):
        r = self.rng
        if r.random() < 0.8:
            return r.choice(NUMS)
        if r.random() < 0.5:
            return str(r.randint(-1000, 1000))
        digits = "".join(r.choice("0123456789") for _ in range(r.randint(1, 37)))
        return "%s%s.%se%d" % (r.choice(["", "-"]), r.choice("123456789"), digits,
                               r.randint(-120, 86))

    def small_s(self):
        return self.rng.choice(SMALL_S)

    def ascii(self, lo=0, hi=10):
        return "".join(self.rng.choice(ASCII) for _ in range(self.rng.randint(lo, hi)))

    def unicode(self):
        return "".join(self.rng.choice(UNICODE) for _ in range(self.rng.randint(0, 5)))

    def binary(self, lo=0, hi=6):
        return b64(bytes(self.rng.randint(0, 255) for _ in range(self.rng.randint(lo, hi))))

    def uniq(self, make, n, keyf=lambda x: x):
        out, seen = [], set()
        for _ in range(n * 3):
            x = make()
            k = keyf(x)
            if k not in seen:
                seen.add(k)
                out.append(x)
            if len(out) == n:
                break
        return out

    def set_of(self, t):
        n = self.rng.randint(1, 4)
        if t == "SS":
            return {"SS": self.uniq(lambda: self.small_s() if self.rng.random() < 0.6
                                    else self.ascii(0, 4), n)}
        if t == "BS":
            return {"BS": self.uniq(lambda: self.rng.choice(SMALL_B) if self.rng.random() < 0.6
                                    else self.binary(0, 3), n, lambda x: base64.b64decode(x))}
        return {"NS": self.uniq(self.num, n, lambda x: decimal.Decimal(x))}

    def typed(self, t, depth=0):
        r = self.rng
        if t == "N":
            return {"N": self.num()}
        if t == "S":
            return {"S": self.ascii()}
        if t == "B":
            return {"B": self.binary()}
        if t == "BOOL":
            return {"BOOL": r.random() < 0.5}
        if t == "NULL":
            return {"NULL": True}
        if t in ("SS", "NS", "BS"):
            return self.set_of(t)
        if t == "L":
            return {"L": [self.elem(depth + 1) for _ in range(r.randint(0, 4))]}
        if t == "M":
            return self.doc(depth)
        return self.anyval(depth)

    def elem(self, depth):
        r = self.rng.random()
        if r < 0.3:
            return {"N": self.num()}
        if r < 0.6:
            return {"S": self.small_s() if self.rng.random() < 0.6 else self.ascii(0, 4)}
        if r < 0.7:
            return {"BOOL": True}
        if depth < 3:
            return {"M": {"x": {"N": self.num()}}}
        return {"NULL": True}

    def doc(self, depth=0):
        m = {}
        r = self.rng
        if r.random() < 0.7:
            m["x"] = {"N": self.num()}
        if r.random() < 0.6:
            m["y"] = {"S": self.ascii()}
        if r.random() < 0.4:
            m["name"] = {"S": self.ascii()}
        if r.random() < 0.5 and depth < 3:
            sub = {}
            if r.random() < 0.7:
                sub["w"] = {"N": self.num()}
            if r.random() < 0.7:
                sub["z"] = {"L": [self.elem(depth + 2) for _ in range(r.randint(0, 3))]}
            m["deep"] = {"M": sub}
        return {"M": m}

    def anyval(self, depth=0):
        ts = ["N", "S", "B", "BOOL", "NULL", "SS", "NS", "BS"] + (["L", "M"] if depth < 2 else [])
        t = self.rng.choice(ts)
        if t == "S" and self.rng.random() < 0.3:
            return {"S": self.unicode()}
        return self.typed(t, depth + 1)

    def attr_value(self, name, faults=True):
        t = ATTRS[name]
        if name in gen_index.IKEYS:
            return gen_index.value(self, name, faults)
        if name == "uni":
            return {"S": self.unicode()}
        return self.typed(t) if t != "any" else self.anyval()

    # ---- keys and items ------------------------------------------------------------------

    def key_value(self, t, is_hash):
        r = self.rng
        if t == "N":
            return {"N": r.choice(HASH_N if is_hash else RANGE_N)}
        if t == "S":
            return {"S": r.choice(HASH_S if is_hash else RANGE_S)}
        return {"B": r.choice(RANGE_B)}

    def key(self, table):
        h, rk = self.tables[table]
        k = {h[0]: self.key_value(h[1], True)}
        if rk:
            k[rk[0]] = self.key_value(rk[1], False)
        return k

    def key_part(self, table, w):
        """The key of a PutRequest/DeleteRequest, copied exactly."""
        src = w["PutRequest"]["Item"] if "PutRequest" in w else w["DeleteRequest"]["Key"]
        h, rk = self.tables[table]
        return {n: dict(src[n]) for n in [h[0]] + ([rk[0]] if rk else [])}

    def item(self, table, faults=True):
        """A random item; `faults`: index key attributes may have a wrong type or be empty."""
        it = self.key(table)
        for name in ATTRS:
            if self.rng.random() < (0.7 if name in gen_index.IKEYS else 0.45):
                it[name] = self.attr_value(name, faults)
        return it

    def table(self):
        return self.rng.choice(list(self.tables))

    # ---- paths, conditions, projections --------------------------------------------------

    def any_path(self):
        r = self.rng
        c = r.random()
        if c < 0.55:
            return [r.choice(list(ATTRS))]
        return r.choice([["doc", "x"], ["doc", "y"], ["doc", "name"], ["doc", "deep"],
                         ["doc", "deep", "w"], ["doc", "deep", "z", 0], ["lst", 0], ["lst", 1],
                         ["lst", 3], ["lst", 0, "x"], ["doc", "deep", "z"]])

    def compare_value(self, path):
        """A value for comparing with path: mostly of the path's own type."""
        t = ORDERED.get(path[0]) if len(path) == 1 else None
        if path == ["doc", "x"] or path == ["doc", "deep", "w"] or path == ["lst", 0, "x"]:
            t = "N"
        if path == ["doc", "y"] or path == ["doc", "name"]:
            t = "S"
        if t is None or self.rng.random() < 0.1:
            t = self.rng.choice(["N", "S", "B"])
        return {"N": self.num()} if t == "N" else self.typed(t)

    def condition(self, ex, table, depth=0, allow_keys=True):
        r = self.rng
        if depth < 2 and r.random() < 0.35:
            k = r.choice(["and", "or", "not"])
            if k == "not":
                return ("not", self.condition(ex, table, depth + 1, allow_keys))
            return (k, self.condition(ex, table, depth + 1, allow_keys),
                    self.condition(ex, table, depth + 1, allow_keys))
        path = self.any_path()
        if allow_keys and r.random() < 0.15:
            h, rk = self.tables[table]
            kn, kt = r.choice([h] + ([rk] if rk else []))
            path = [kn]
            if r.random() < 0.5:
                return ("cmp", r.choice(["=", "<", ">=", "<>"]), ("path", path),
                        ("val", ex.value(self.key_value(kt, kn == h[0]))))
        c = r.random()
        if c < 0.2:
            return ("exists", path)
        if c < 0.35:
            return ("not_exists", path)
        if c < 0.55:
            op = r.choice(["=", "<>", "<", "<=", ">", ">="])
            if op in ("=", "<>") and r.random() < 0.4:
                return ("cmp", op, ("path", path), ("val", ex.value(self.attr_like(path))))
            if r.random() < 0.15:  # two distinct paths (DynamoDB rejects a = a)
                lhs, rhs = r.sample(["num", "date", "x.y"], 2)
                return ("cmp", op, ("path", [lhs]), ("path", [rhs]))
            return ("cmp", op, ("path", path), ("val", ex.value(self.compare_value(path))))
        if c < 0.62:
            lo, hi = sorted([self.num(), self.num()], key=float_key)
            return ("between", ("path", path), ("val", ex.value({"N": lo})),
                    ("val", ex.value({"N": hi})))
        if c < 0.7:
            return ("in", ("path", path),
                    [("val", ex.value(self.attr_like(path))) for _ in range(r.randint(1, 3))])
        if c < 0.78:
            t = r.choice(["S", "B"])
            v = {"S": r.choice(PREFIX_S + ["", "a", "x"])} if t == "S" else \
                {"B": r.choice(PREFIX_B)}
            return ("begins_with", path, ("val", ex.value(v)))
        if c < 0.86:
            if r.random() < 0.7:
                path = [r.choice(["lst", "strs", "nums", "bins", "txt", "bin", "v"])]
            needle = r.choice([{"N": r.choice(NUMS[:8])}, {"S": self.small_s()},
                               {"B": r.choice(SMALL_B)}])
            return ("contains", path, ("val", ex.value(needle)))
        if c < 0.92 or "size_fn" in self.skip:
            t = r.choice(["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"])
            return ("type", path, ("val", ex.value({"S": t})))
        sp = [r.choice(SIZED)]
        return ("cmp", r.choice(["=", "<", ">", "<>", ">="]), ("size", sp),
                ("val", ex.value({"N": str(r.randint(0, 5))})))

    def attr_like(self, path):
        if len(path) == 1 and path[0] in ATTRS:
            return self.attr_value(path[0])
        return self.anyval(1)

    def projection(self, ex, table):
        """1-4 non-overlapping paths, or None."""
        if "projection" in self.skip or self.rng.random() < 0.6:
            return None, None
        h, rk = self.tables[table]
        cands = [self.any_path() for _ in range(self.rng.randint(1, 4))]
        if self.rng.random() < 0.3:
            cands.append([h[0]])
        paths = []
        for p in cands:
            if all(not overlaps(p, q) for q in paths):
                paths.append(p)
        return ", ".join(ex.path(p) for p in paths), paths

    # ---- operations ----------------------------------------------------------------------

    def settle(self):
        """The op that waits until kura has built the GSI created last, or None."""
        if self.building is None:
            return None
        t, name, _ = self.building
        self.building = None
        return Op("settle", "DescribeTable", {"TableName": t}, {"index": name, "create": True},
                  "online_gsi")

    def next_op(self, model):
        r = self.rng
        if self.building is not None:
            self.building[2] -= 1
            if self.building[2] < 0:
                return self.settle()
        x = r.random()
        if (x < 0.0005 and "online_gsi" not in self.skip and "indexes" not in self.skip
                and self.building is None):
            op = gen_index.ddl(self, model)
            if op is not None:
                return op
        if x < 0.06 and "errors" not in self.skip:
            return gen_invalid.invalid(self)
        if x < 0.23:
            return self.put(model)
        if x < 0.32:
            return self.get()
        if x < 0.56:
            return self.update(model)
        if x < 0.63:
            return self.delete()
        indexed = "index_reads" not in self.skip and gen_index.readable(self)
        if x < 0.73 or (x < 0.87 and not indexed):
            return self.query()
        if x < 0.755:
            return self.scan()
        if x < 0.765 and "segments" not in self.skip:
            return self.segments()
        if x < 0.845:
            return gen_index.query(self, model)
        if x < 0.865 or (x < 0.87 and "segments" in self.skip):
            return gen_index.scan(self, model)
        if x < 0.87:
            return gen_index.scan(self, model, segments=True)
        if x < 0.95 and "transactions" not in self.skip:
            return self.transact_write(model) if x < 0.935 else self.transact_get()
        if "batch" not in self.skip:
            return self.batch_write() if x < 0.975 else self.batch_get()
        return self.put(model)

    def maybe_condition(self, ex, table, req, meta, p=0.4):
        if self.rng.random() < p:
            cond = self.condition(ex, table)
            req["ConditionExpression"] = render(cond, ex)
            meta["condition"] = cond
            if "rvoccf" not in self.skip and self.rng.random() < 0.4:
                req["ReturnValuesOnConditionCheckFailure"] = self.rng.choice(["ALL_OLD", "NONE"])

    def put(self, model):
        t = self.table()
        ex = Expr(self.rng)
        req = {"TableName": t, "Item": self.item(t)}
        meta = {}
        self.maybe_condition(ex, t, req, meta, 0.5)
        if self.rng.random() < 0.5:
            req["ReturnValues"] = self.rng.choice(["NONE", "ALL_OLD"])
        return Op("single", "PutItem", ex.attach(req), meta, "put")

    def get(self):
        t = self.table()
        ex = Expr(self.rng)
        req = {"TableName": t, "Key": self.key(t)}
        meta = {}
        text, paths = self.projection(ex, t)
        if paths:
            req["ProjectionExpression"] = text
            meta["projection"] = paths
        if self.rng.random() < 0.3:
            req["ConsistentRead"] = self.rng.random() < 0.5
        return Op("single", "GetItem", ex.attach(req), meta, "get")

    def delete(self):
        t = self.table()
        ex = Expr(self.rng)
        req = {"TableName": t, "Key": self.key(t)}
        meta = {}
        self.maybe_condition(ex, t, req, meta)
        if self.rng.random() < 0.5:
            req["ReturnValues"] = self.rng.choice(["NONE", "ALL_OLD"])
        return Op("single", "DeleteItem", ex.attach(req), meta, "delete")

    def update_action(self, ex, name, item, nested_ok):
        """One action on attribute `name`, as (text, tree) or None."""
        r = self.rng
        t = ATTRS[name]
        cur = item.get(name) if item else None
        if r.random() < 0.12:
            return "REMOVE", ("remove", [name])
        if name in gen_index.IKEYS and r.random() < 0.6:  # add, change, retype a key value
            return "SET", ("set", [name], ("val", ex.value(self.attr_value(name))))
        if t == "N" or (t == "any" and r.random() < 0.3):
            c = r.random()
            if c < 0.25:
                return "SET", ("set", [name], ("val", ex.value({"N": self.num()})))
            if c < 0.5:
                op = r.choice(["plus", "minus"])
                src = name if r.random() < 0.85 else r.choice(["num", "date", "txt"])
                return "SET", ("set", [name], (op, ("path", [src]),
                                                 ("val", ex.value({"N": self.num()}))))
            if c < 0.65:
                return "SET", ("set", [name], ("if_not_exists", [name],
                                                 ("val", ex.value({"N": self.num()}))))
            return "ADD", ("add", [name], ex.value({"N": self.num()}))
        if t in ("SS", "NS", "BS") or (t == "any" and r.random() < 0.3):
            st = t if t != "any" else r.choice(["SS", "NS", "BS"])
            c = r.random()
            if c < 0.45:
                return "ADD", ("add", [name], ex.value(self.set_of(st)))
            if c < 0.8:
                dv = self.set_of(st)
                if cur is not None and vtype_of(cur) == st and r.random() < 0.6:
                    dv = {st: list(cur[st])[:r.randint(1, len(cur[st]))]}
                return "DELETE", ("delete", [name], ex.value(dv))
            return "SET", ("set", [name], ("val", ex.value(self.set_of(st))))
        if t == "L" and r.random() < 0.75:
            c = r.random()
            lv = {"L": [self.elem(1) for _ in range(r.randint(0, 3))]}
            if c < 0.25:
                return "SET", ("set", [name], ("list_append", ("path", [name]),
                                                 ("val", ex.value(lv))))
            if c < 0.4:
                return "SET", ("set", [name], ("list_append", ("val", ex.value(lv)),
                                                 ("path", [name])))
            if c < 0.55:
                return "SET", ("set", [name], ("list_append",
                                                 ("if_not_exists", [name],
                                                  ("val", ex.value({"L": []}))),
                                                 ("val", ex.value(lv))))
            if nested_ok:
                n = len(cur["L"]) if cur is not None and vtype_of(cur) == "L" else 2
                i = r.randint(0, n + 1)
                if c < 0.8:
                    return "SET", ("set", [name, i], ("val", ex.value(self.elem(1))))
                return "REMOVE", ("remove", [name, i])
        if t == "M" and nested_ok and r.random() < 0.7:
            c = r.random()
            if c < 0.3:
                return "SET", ("set", ["doc", "x"], ("val", ex.value({"N": self.num()})))
            if c < 0.45:
                return "SET", ("set", ["doc", "x"], ("plus", ("path", ["doc", "x"]),
                                                     ("val", ex.value({"N": self.num()}))))
            if c < 0.6:
                return "SET", ("set", ["doc", "deep", "w"], ("val", ex.value({"N": self.num()})))
            if c < 0.7:
                return "SET", ("set", ["doc", "name"], ("val", ex.value({"S": self.ascii()})))
            if c < 0.85:
                return "REMOVE", ("remove", r.choice([["doc", "y"], ["doc", "deep"],
                                                      ["doc", "deep", "w"]]))
            return "SET", ("set", ["doc", "deep", "z", 0], ("val", ex.value(self.elem(2))))
        if r.random() < 0.1:  # a copy (of another type: a retype)
            src = r.choice([a for a in ATTRS if a not in NO_COPY])
            return "SET", ("set", [name], ("path", [src]))
        return "SET", ("set", [name], ("val", ex.value(self.attr_value(name))))

    def update(self, model):
        r = self.rng
        t = self.table()
        key = self.key(t)
        item = model.peek(t, key)
        ex = Expr(r)
        rv = r.choice(["NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW", None])
        nested_ok = "nested_update" not in self.skip
        names = r.sample(list(ATTRS), r.randint(1, 4))
        ikeys = [n for ix in self.indexes[t] for n in ix.key_names() if n in ATTRS]
        if ikeys and r.random() < 0.35:  # an action on a key attribute of an index
            n = r.choice(ikeys)
            names = names if n in names else names[:3] + [n]
        actions = []
        clauses = {}
        for n in names:
            saved = dict(ex.values)
            a = self.update_action(ex, n, item, nested_ok)
            path = a[1][1]
            if rv in ("UPDATED_OLD", "UPDATED_NEW") and (
                    ("updated_list_paths" in self.skip
                     and any(isinstance(s, int) for s in path))
                    or ("updated_nested" in self.skip and len(path) > 1)):
                ex.values = saved  # drop the values of the skipped action
                continue
            clauses.setdefault(a[0], []).append((render_action(a[1], ex), a[1]))
        req = {"TableName": t, "Key": key}
        if clauses:
            kws = list(clauses)
            r.shuffle(kws)
            req["UpdateExpression"] = " ".join(
                kw + " " + ", ".join(text for text, _ in clauses[kw]) for kw in kws)
            # The model applies the actions in the order of the text (which decides the error
            # reported when several actions fail).
            actions = [tree for kw in kws for _, tree in clauses[kw]]
        meta = {"update": actions}
        if not actions and rv in ("UPDATED_OLD", "UPDATED_NEW"):
            rv = "ALL_NEW"  # (DynamoDB Local fails with InternalFailure on this corner)
        self.maybe_condition(ex, t, req, meta, 0.35)
        if rv is not None:
            req["ReturnValues"] = rv
        return Op("single", "UpdateItem", ex.attach(req), meta, "update")

    def key_condition(self, ex, t):
        r = self.rng
        (hn, ht), rk = self.tables[t]
        hv = self.key_value(ht, True)
        meta = {"key_hash": None}
        meta["key_hash"] = ex.value(hv)
        htext = "%s = %s" % (ex.name(hn), meta["key_hash"])
        if rk is None or r.random() < 0.3:
            return htext, meta
        rn, rt = rk
        c = r.random()
        if c < 0.5:
            op = r.choice(["=", "<", "<=", ">", ">="])
            ph = ex.value(self.key_value(rt, False))
            rtext = "%s %s %s" % (ex.name(rn), op, ph)
            meta["key_range"] = (op, ph)
        elif c < 0.75 or rt == "N":
            a, b = self.key_value(rt, False), self.key_value(rt, False)
            a, b = sorted([a, b], key=lambda v: key_order(rt, v[rt]))
            pa, pb = ex.value(a), ex.value(b)
            rtext = "%s BETWEEN %s AND %s" % (ex.name(rn), pa, pb)
            meta["key_range"] = ("between", pa, pb)
        else:
            v = {"S": r.choice(PREFIX_S)} if rt == "S" else {"B": r.choice(PREFIX_B)}
            ph = ex.value(v)
            rtext = "begins_with(%s, %s)" % (ex.name(rn), ph)
            meta["key_range"] = ("begins_with", ph)
        if r.random() < 0.5:
            return htext + " AND " + rtext, meta
        return rtext + " AND " + htext, meta

    def read_options(self, ex, t, req, meta, is_query):
        r = self.rng
        if r.random() < 0.35:
            cond = self.condition(ex, t, allow_keys=not is_query)
            req["FilterExpression"] = render(cond, ex)
            meta["filter"] = cond
        if r.random() < 0.7:
            req["Limit"] = r.randint(1, 8)
        if r.random() < 0.15:
            req["Select"] = "COUNT"
        else:
            text, paths = self.projection(ex, t)
            if paths:
                req["ProjectionExpression"] = text
                meta["projection"] = paths
        if r.random() < 0.2:
            req["ConsistentRead"] = r.random() < 0.5

    def query(self):
        t = self.table()
        ex = Expr(self.rng)
        text, meta = self.key_condition(ex, t)
        req = {"TableName": t, "KeyConditionExpression": text}
        if self.rng.random() < 0.4:
            req["ScanIndexForward"] = self.rng.random() < 0.5
            meta["backward"] = not req["ScanIndexForward"]
        self.read_options(ex, t, req, meta, True)
        if self.tables[t][1] is None:
            # A partition of a hash-only table holds one item at most. Whether a Limit that
            # this one item reaches yields a LastEvaluatedKey differs between DynamoDB Local
            # (no) and dynalite (yes), so such queries carry no Limit.
            req.pop("Limit", None)
        return Op("query", "Query", ex.attach(req), meta, "query")

    def scan(self):
        t = self.table()
        ex = Expr(self.rng)
        req = {"TableName": t}
        meta = {}
        self.read_options(ex, t, req, meta, False)
        if "Limit" in req:
            req["Limit"] = self.rng.randint(3, 30)
        return Op("scan", "Scan", ex.attach(req), meta, "scan")

    def segments(self):
        op = self.scan()
        op.kind = "segments"
        op.cls = "segments"
        op.meta["total_segments"] = self.rng.randint(1, 5)
        return op

    def batch_write(self):
        r = self.rng
        reqs = {}
        n = r.randint(1, 25)
        total = 0
        seen = set()
        faults = r.random() < 0.15  # a fault in one item refuses the whole batch
        for _ in range(n):
            if total == 25:
                break
            t = self.table()
            if r.random() < 0.7:
                item = self.item(t, faults)
                k = key_id(self.tables[t], item)
                w = {"PutRequest": {"Item": item}}
            else:
                key = self.key(t)
                k = key_id(self.tables[t], key)
                w = {"DeleteRequest": {"Key": key}}
            if (t, k) in seen:
                continue  # (see batch_get)
            seen.add((t, k))
            reqs.setdefault(t, []).append(w)
            total += 1
            if r.random() < 0.003 and total < 25:
                reqs[t].append({"DeleteRequest": {"Key": self.key_part(t, w)}})
                total += 1
        return Op("single", "BatchWriteItem", {"RequestItems": reqs}, {}, "batch")

    def transact_write(self, model):
        """TransactWriteItems of 1..5 actions made by the single-item generators: Put, Update,
        Delete (their ReturnValues dropped) and ConditionCheck (a Delete's key with a
        condition). Now and then one item twice (the request is refused)."""
        r = self.rng
        items, metas, seen = [], [], set()
        for _ in range(r.randint(1, 5)):
            c = r.random()
            if c < 0.3:
                op = self.put(model)
                kind, keyof = "Put", op.req["Item"]
            elif c < 0.65:
                op = self.update(model)
                kind, keyof = "Update", op.req["Key"]
                if "UpdateExpression" not in op.req:
                    continue
            elif c < 0.8:
                op = self.delete()
                kind, keyof = "Delete", op.req["Key"]
            else:
                op = self.delete()
                kind, keyof = "ConditionCheck", op.req["Key"]
                if "condition" not in op.meta:
                    ex = Expr(r)
                    cond = self.condition(ex, op.req["TableName"])
                    op.req["ConditionExpression"] = render(cond, ex)
                    op.meta["condition"] = cond
                    for m in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
                        op.req.pop(m, None)
                    ex.attach(op.req)
            t = op.req["TableName"]
            k = (t, key_id(self.tables[t], keyof))
            if k in seen and r.random() < 0.9:
                continue
            seen.add(k)
            body = {f: v for f, v in op.req.items() if f != "ReturnValues"}
            items.append({kind: body})
            metas.append(dict(op.meta, kind=kind))
        if not items:
            return self.put(model)
        return Op("single", "TransactWriteItems", {"TransactItems": items}, {"actions": metas},
                  "transactions")

    def transact_get(self):
        """TransactGetItems of 1..6 Gets (with projections) over the tables."""
        r = self.rng
        items, metas, seen = [], [], set()
        for _ in range(r.randint(1, 6)):
            op = self.get()
            t = op.req["TableName"]
            k = (t, key_id(self.tables[t], op.req["Key"]))
            if k in seen and r.random() < 0.9:
                continue
            seen.add(k)
            body = {f: v for f, v in op.req.items() if f != "ConsistentRead"}
            items.append({"Get": body})
            metas.append(op.meta)
        return Op("single", "TransactGetItems", {"TransactItems": items}, {"actions": metas},
                  "transactions")

    def batch_get(self):
        r = self.rng
        reqs = {}
        meta = {"projections": {}}
        for t in r.sample(list(self.tables), r.randint(1, 3)):
            keys, seen = [], set()
            for _ in range(r.randint(1, 10)):
                key = self.key(t)
                k = key_id(self.tables[t], key)
                if k in seen:
                    # Numerically equal keys written differently ("1", "10e-1") are left out:
                    # whether DynamoDB calls them duplicates is not pinned down.
                    continue
                seen.add(k)
                keys.append(key)
                if r.random() < 0.003:
                    keys.append(dict(key))  # a true duplicate: a ValidationException
            spec = {"Keys": keys}
            ex = Expr(r)
            text, paths = self.projection(ex, t)
            if paths:
                spec["ProjectionExpression"] = text
                meta["projections"][t] = paths
                if ex.names:
                    spec["ExpressionAttributeNames"] = {ph: n for n, ph in ex.names.items()}
            if r.random() < 0.2:
                spec["ConsistentRead"] = True
            reqs[t] = spec
        return Op("single", "BatchGetItem", {"RequestItems": reqs}, meta, "batch")

    # ---- invalid requests ----------------------------------------------------------------

# ---- helpers ---------------------------------------------------------------------------------

def vtype_of(v):
    return next(iter(v))


def float_key(s):
    return decimal.Decimal(s)


def key_order(t, raw):
    if t == "S":
        return raw.encode("utf-8")
    if t == "B":
        return base64.b64decode(raw)
    return decimal.Decimal(raw)


def key_id(schema, item):
    (hn, ht), rk = schema
    parts = [key_order(ht, item[hn][ht])]
    if rk:
        parts.append(key_order(rk[1], item[rk[0]][rk[1]]))
    return tuple(parts)
