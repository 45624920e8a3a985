"""gen_index.py - This file contains the secondary-index side of the differential test's
generator: random LSIs and GSIs on the test's tables, the values of their key attributes,
Query and Scan with IndexName, and UpdateTable's Create and Delete of GSIs.

Design. The index key attributes are mostly attributes of their own (IKEYS) with small value
pools, so that many items share a GSI's HASH values and a Query pages through several entries;
the generator's N attributes num, date and x.y, and for GSIs the table's own key attributes,
may be index keys too. Every write may add, change or remove them (PutItem, BatchWriteItem,
UpdateItem's SET/REMOVE/ADD and arithmetic), and now and then gives one a value of another
type or an empty S/B: refused with DynamoDB's message if the attribute is a key of one of the
table's indexes, an ordinary value otherwise.

The schemas come from their own random stream derived from the seed (the op stream does not
shift them), redrawn until the tables have at least one LSI, a GSI with one HASH and at most
one RANGE attribute and, unless "multi_key_gsi" is skipped, a GSI with several HASH attributes
and one with several RANGE attributes. An index Query
takes its HASH values (and the RANGE values it starts from) from an item of the model that has
an entry, most of the time, so it finds something.
"""

import base64
import decimal
import random

from gen_expr import Expr, Op, b64, overlaps, render
from refindex import Index, cond_names

# Index key attributes of their own: name -> type. gs1 has non-ASCII strings (UTF-8 and UTF-16
# orders differ: U+FF21 < U+1F600 in UTF-8 only); gs2 stays ASCII (it may be copied into txt,
# whose size() the model counts in characters).
IKEYS = {"gs1": "S", "gs2": "S", "gn1": "N", "gn2": "N", "gb1": "B"}
POOL = {
    "gs1": ["a", "ab", "b", "B", "a b", "\u00e9", "\uff21", "\U0001F600"],
    "gs2": ["x", "xy", "y", "a", "0", "-"],
    "gn1": ["1", "1.0", "10e-1", "2", "-1", "0", "-0", "0.5", "10", "1e2"],
    "gn2": ["-100", "-1.5", "0", "3", "3.00", "7", "1E-5",
            "99999999999999999999999999999999999999"],
    "gb1": [b64(x) for x in (b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\xff", b"ab")],
}
# Other attributes that may be index keys (their generator values are never empty).
OTHER_KEYS = {"num": "N", "date": "N", "x.y": "N"}
PREFIX_S = ["a", "\u00e9", "\U0001F600", "x", "B"]
PREFIX_B = [b64(x) for x in (b"\x00", b"\x7f", b"\x80", b"a")]
OTHER_TYPES = ["S", "N", "B", "BOOL", "NULL", "SS", "L", "M"]
MAX_GSIS = 3  # per table (each one costs kura work on every write)


# ---- schemas ---------------------------------------------------------------------------------

def schemas(seed, tables, attrs, skip):
    """{table name: [Index, ...] (LSIs, then GSIs)} for the test's tables (name, hash, range);
    attrs: the non-key attribute names (INCLUDE candidates)."""
    if "indexes" in skip:
        return {name: [] for name, _, _ in tables}
    rng = random.Random(seed * 1000003 + 11)
    multi = "multi_key_gsi" not in skip
    for _ in range(1000):
        out = {name: table_indexes(rng, h, r, attrs, multi) for name, h, r in tables}
        every = [ix for ixs in out.values() for ix in ixs]
        gsis = [ix for ix in every if ix.kind == "GSI"]
        if (any(ix.kind == "LSI" for ix in every)
                and any(len(ix.hash_attrs) == 1 and len(ix.range_attrs) <= 1 for ix in gsis)
                and (not multi or (any(len(ix.hash_attrs) > 1 for ix in gsis)
                                   and any(len(ix.range_attrs) > 1 for ix in gsis)))):
            return out
    raise AssertionError("no index schema satisfies the constraints")


def table_indexes(rng, h, r, attrs, multi):
    """The indexes of one table keyed (h, r): 0-2 LSIs if it has a sort key, 0-MAX_GSIS
    GSIs of different key schemas."""
    cands = dict(IKEYS, **OTHER_KEYS)
    out, seen = [], set()
    for i in range(rng.randint(0, 2) if r else 0):
        a = rng.choice(sorted(set(cands) - seen))
        seen.add(a)
        out.append(Index("L%d-%s" % (i, a), "LSI", [h], [(a, cands[a])],
                         *projection(rng, [h[0], r[0], a], attrs)))
    for i in range(rng.randint(0, MAX_GSIS)):
        ix = random_gsi(rng, "G%d" % i, h, r, attrs, multi)
        if all(shape(ix) != shape(x) for x in out):
            out.append(ix)
    return out


def random_gsi(rng, prefix, h, r, attrs, multi):
    """A GSI on a table keyed (h, r): random key attributes (HASH mostly from IKEYS, whose
    small pools make entries share them) and projection, named <prefix>-<HASH attributes>."""
    cands = sorted(dict(IKEYS, **OTHER_KEYS).items()) + [h] + ([r] if r else [])
    if multi:
        nh, nr = rng.choice([1, 1, 1, 1, 2, 3, 4]), rng.choice([0, 1, 1, 1, 2, 3, 4])
    else:
        nh, nr = 1, rng.choice([0, 1])
    ks = []
    for j in range(nh + nr):
        left = [c for c in cands if c not in ks]
        pool = [c for c in left if c[0] in IKEYS] if j < nh and rng.random() < 0.75 else []
        ks.append(rng.choice(pool or left))
    keys = [n for n, _ in ks] + [h[0]] + ([r[0]] if r else [])
    return Index("%s-%s" % (prefix, ".".join(n for n, _ in ks[:nh])), "GSI", ks[:nh], ks[nh:],
                 *projection(rng, keys, attrs))


def shape(ix):
    return tuple(ix.hash_attrs), tuple(ix.range_attrs)


def projection(rng, keys, attrs):
    c = rng.random()
    if c < 0.3:
        return "KEYS_ONLY", ()
    if c < 0.65:
        return "ALL", ()
    return "INCLUDE", rng.sample([a for a in attrs if a not in keys], rng.randint(1, 3))


def create_request(name, h, r, indexes):
    """The CreateTable request of a test table with its indexes."""
    keys = [{"AttributeName": h[0], "KeyType": "HASH"}]
    types = [h]
    if r:
        keys.append({"AttributeName": r[0], "KeyType": "RANGE"})
        types.append(r)
    for ix in indexes:
        types += [a for a in ix.key_attrs() if a not in types]
    req = {"TableName": name, "KeySchema": keys,
           "AttributeDefinitions": [{"AttributeName": n, "AttributeType": t} for n, t in types],
           "BillingMode": "PAY_PER_REQUEST"}
    lsis = [ix.request() for ix in indexes if ix.kind == "LSI"]
    gsis = [ix.request() for ix in indexes if ix.kind == "GSI"]
    if lsis:
        req["LocalSecondaryIndexes"] = lsis
    if gsis:
        req["GlobalSecondaryIndexes"] = gsis
    return req


# ---- online index changes --------------------------------------------------------------------

def ddl(g, model):
    """UpdateTable GlobalSecondaryIndexUpdates: a Create of a random GSI on a table with fewer
    than MAX_GSIS GSIs, or a Delete of one of its GSIs. After a Delete the harness waits until
    kura has dropped the index; after a Create up to 300 more ops run while kura builds it
    (none reads it) before a "settle" op (Generator.settle) waits until it is ACTIVE. With
    "gsi_backfill_violations" skipped, a new GSI is keyed only on attributes every item of the
    table holds with the right type."""
    r = g.rng
    t = r.choice(sorted(g.tables))
    h, rk = g.tables[t]
    gsis = [ix for ix in g.indexes[t] if ix.kind == "GSI"]
    ix = None
    if not gsis or (len(gsis) < MAX_GSIS and r.random() < 0.6):
        for _ in range(20):
            new = random_gsi(r, "U%d" % g.ddl_count, h, rk, g.attrs,
                             "multi_key_gsi" not in g.skip)
            if (all(shape(new) != shape(x) for x in gsis)
                    and ("gsi_backfill_violations" not in g.skip
                         or not violations(model.tables[t], new))):
                ix = new
                break
    if ix is not None:
        g.ddl_count += 1
        g.indexes[t].append(ix)
        g.building = [t, ix.name, r.randint(0, 300)]  # writes meanwhile meet the backfill
        defs = [{"AttributeName": n, "AttributeType": typ} for n, typ in ix.key_attrs()]
        req = {"TableName": t, "AttributeDefinitions": defs,
               "GlobalSecondaryIndexUpdates": [{"Create": ix.request()}]}
        return Op("ddl", "UpdateTable", req, {"index": ix.name, "create": True}, "online_gsi")
    if not gsis:
        return None
    ix = r.choice(gsis)
    g.indexes[t].remove(ix)
    req = {"TableName": t, "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": ix.name}}]}
    return Op("ddl", "UpdateTable", req, {"index": ix.name, "create": False}, "online_gsi")


def violations(table, ix):
    """Whether an item of the table holds a key attribute of ix of another type or empty."""
    return any(n in it and (vtype_of(it[n]) != typ or (typ != "N" and it[n][typ] == ""))
               for it in table.items.values() for n, typ in ix.key_attrs())


# ---- values ----------------------------------------------------------------------------------

def value(g, name, faults=True):
    """A value of index key attribute `name` (IKEYS) from its pool; with `faults`, 4.5% of
    the time a value of another type (for S and B, a third of those an empty value)."""
    r = g.rng
    t = IKEYS[name]
    if faults and r.random() < 0.045:
        if t != "N" and r.random() < 0.33:
            return {t: ""}
        other = r.choice([x for x in OTHER_TYPES if x != t])
        if other in ("S", "B"):
            return {other: "a" if other == "S" else "AA=="}
        return g.typed(other)
    return {t: r.choice(POOL[name])}


def key_value(g, t, name, typ):
    """A value for a key condition on `name` of index attribute type `typ`."""
    if name in IKEYS:
        return {typ: g.rng.choice(POOL[name])}
    h, rk = g.tables[t]
    if name in (h[0], rk and rk[0]):
        return g.key_value(typ, name == h[0])
    return {"N": g.num()}


# ---- reads -----------------------------------------------------------------------------------

def readable(g):
    """The (table, index) pairs a read may name: every index but the GSI being built."""
    return [(t, ix) for t in sorted(g.indexes) for ix in g.indexes[t]
            if g.building is None or [t, ix.name] != g.building[:2]]


def key_terms(g, ex, t, ix, src):
    """The key condition: [(attribute, op, [placeholders])] and its text (terms shuffled).
    HASH values and the equalities on RANGE attributes come from `src` (an item with an entry)
    when there is one. Now and then it has a fault (fault())."""
    r = g.rng
    raw = []
    for n, typ in ix.hash_attrs:
        raw.append([n, "=", [src[n] if src else key_value(g, t, n, typ)]])
    k = r.randint(0, len(ix.range_attrs))
    for j, (n, typ) in enumerate(ix.range_attrs[:k]):
        near = src[n] if src and r.random() < 0.6 else key_value(g, t, n, typ)
        if j < k - 1:
            raw.append([n, "=", [near]])
            continue
        op = r.choice(["=", "<", "<=", ">", ">=", "between"] + (["begins_with"] * 2
                                                               if typ != "N" else []))
        if op == "between":
            lo, hi = sorted([near, key_value(g, t, n, typ)],
                            key=lambda v: order_key(typ, v[typ]))
            raw.append([n, op, [lo, hi]])
        elif op == "begins_with":
            raw.append([n, op, [prefix(g, typ, near)]])
        else:
            raw.append([n, op, [near]])
    fault(g, ix, raw)
    terms, texts = [], []
    for n, op, vals in raw:
        phs = [ex.value(v) for v in vals]
        terms.append((n, op, phs))
        name = ex.name(n)
        if op == "between":
            texts.append("%s BETWEEN %s AND %s" % (name, phs[0], phs[1]))
        elif op == "begins_with":
            texts.append("begins_with(%s, %s)" % (name, phs[0]))
        else:
            texts.append("%s %s %s" % (name, op, phs[0]))
    r.shuffle(texts)
    return terms, " AND ".join(texts)


def fault(g, ix, raw):
    """Now and then one fault in the key condition raw ([attribute, op, [values]], HASH terms
    first): a value of the wrong type (3%), an empty S/B (1.5%), or a shape the key schema
    refuses (3%): a HASH attribute left out or compared with < or >=, a RANGE attribute left
    out before the last one given, a term on an attribute outside the key schema."""
    r = g.rng
    x = r.random()
    single = [t for t in raw if t[1] != "between" and t[1] != "begins_with"]
    nh = len(ix.hash_attrs)
    if x < 0.03 and single:
        t = r.choice(single)
        t[2] = [{"S": "1"} if vtype_of(t[2][0]) != "S" else {"N": "1"}]
    elif x < 0.045:
        empty = [t for t in single if vtype_of(t[2][0]) != "N"]
        if empty:
            t = r.choice(empty)
            t[2] = [{vtype_of(t[2][0]): ""}]
    elif x < 0.075:
        c = r.choice(["drop_hash", "drop_range", "hash_op", "extra"])
        if c == "drop_hash" and len(raw) > 1:
            del raw[r.randrange(nh)]
        elif c == "drop_range" and len(raw) - nh > 1:
            del raw[r.randrange(nh, len(raw) - 1)]
        elif c == "hash_op":
            raw[r.randrange(nh)][1] = r.choice(["<", ">="])
        else:
            other = [n for n in ("gs2", "gn1", "num", "txt") if n not in ix.key_names()]
            raw.append([r.choice(other), "=", [{"N": "1"} if r.random() < 0.5
                                                else {"S": "a"}]])


def prefix(g, typ, near):
    r = g.rng
    if typ == "S":
        s = near["S"]
        return {"S": s[:r.randint(1, len(s))] if s and r.random() < 0.6 else r.choice(PREFIX_S)}
    bs = base64.b64decode(near["B"])
    if bs and r.random() < 0.6:
        return {"B": b64(bs[:r.randint(1, len(bs))])}
    return {"B": r.choice(PREFIX_B)}


def projected_names(g, model, t, ix):
    table = model.tables[t]
    if ix.projection == "ALL":
        return sorted(g.attrs) + [n for n, _ in table.key_attrs()]
    return [n for n in sorted(set(g.attrs) | set(ix.key_names()) |
                              {n for n, _ in table.key_attrs()}) if ix.projects(table, n)]


def read_options(g, model, ex, t, ix, req, meta, is_query):
    """Filter, Limit, Select, ProjectionExpression and ConsistentRead of an index read. Filters
    and projections are mostly ones the index accepts: a Query's filter names neither index key
    attributes nor attributes the index does not project (others pass one time in twenty), a
    GSI's projection only projected attributes (others pass one time in ten)."""
    r = g.rng
    table = model.tables[t]
    for _ in range(6 if r.random() < 0.35 else 0):
        saved = dict(ex.values)
        cond = g.condition(ex, t)
        names = cond_names(cond)
        bad = is_query and any(n in ix.key_names() or not ix.projects(table, n)
                               for n in names)
        if not bad or r.random() < 0.05:
            req["FilterExpression"] = render(cond, ex)
            meta["filter"] = cond
            break
        ex.values = saved  # drop the values of the refused filter
    if r.random() < 0.7:
        req["Limit"] = r.randint(1, 8) if is_query else r.randint(3, 30)
    c = r.random()
    if c < 0.12:
        req["Select"] = "COUNT"
    elif c < 0.22 and (ix.kind == "LSI" or ix.projection == "ALL" or r.random() < 0.2):
        req["Select"] = "ALL_ATTRIBUTES"
    elif c < 0.32:
        req["Select"] = "ALL_PROJECTED_ATTRIBUTES"
    elif c < 0.7:
        paths = projection_paths(g, model, t, ix)
        if paths:
            req["ProjectionExpression"] = ", ".join(ex.path(p) for p in paths)
            meta["projection"] = paths
            if r.random() < 0.4:
                req["Select"] = "SPECIFIC_ATTRIBUTES"
    c = r.random()
    if ix.kind == "LSI" and c < 0.2:
        req["ConsistentRead"] = r.random() < 0.5
    elif ix.kind == "GSI" and c < 0.03:
        req["ConsistentRead"] = True
    elif ix.kind == "GSI" and c < 0.15:
        req["ConsistentRead"] = False


def projection_paths(g, model, t, ix):
    """1-4 non-overlapping paths: top-level projected attributes or any path (a GSI keeps a
    path it does not project one time in ten)."""
    r = g.rng
    table = model.tables[t]
    names = projected_names(g, model, t, ix)
    paths = []
    for _ in range(r.randint(1, 4)):
        p = g.any_path() if r.random() < 0.5 else [r.choice(names)]
        if ix.kind == "GSI" and not ix.projects(table, p[0]) and r.random() > 0.1:
            continue
        if all(not overlaps(p, q) for q in paths):
            paths.append(p)
    return paths


def query(g, model):
    r = g.rng
    t, ix = r.choice(readable(g))
    ex = Expr(r)
    have = [it for it in model.tables[t].items.values()
            if all(n in it for n in ix.key_names())]
    src = r.choice(have) if have and r.random() < 0.8 else None
    terms, text = key_terms(g, ex, t, ix, src)
    name = ix.name if r.random() > 0.01 else "NoSuchIndex"
    req = {"TableName": t, "IndexName": name, "KeyConditionExpression": text}
    meta = {"index": ix.name, "key_terms": terms}
    if r.random() < 0.4:
        req["ScanIndexForward"] = r.random() < 0.5
        meta["backward"] = not req["ScanIndexForward"]
    read_options(g, model, ex, t, ix, req, meta, True)
    return Op("query", "Query", ex.attach(req), meta, "index_reads")


def scan(g, model, segments=False):
    r = g.rng
    t, ix = r.choice(readable(g))
    ex = Expr(r)
    req = {"TableName": t, "IndexName": ix.name}
    meta = {"index": ix.name}
    read_options(g, model, ex, t, ix, req, meta, False)
    op = Op("scan", "Scan", ex.attach(req), meta, "index_reads")
    if segments:
        op.kind = "segments"
        meta["total_segments"] = r.randint(1, 5)
    return op


# ---- helpers ---------------------------------------------------------------------------------

def vtype_of(v):
    return next(iter(v))


def order_key(t, raw):
    if t == "S":
        return raw.encode("utf-8")
    if t == "B":
        return base64.b64decode(raw)
    return decimal.Decimal(raw)
