"""refindex.py - This file contains the secondary indexes of the reference model (refmodel.py):
LSIs and GSIs as DynamoDB defines them, the check of an item's index key attributes on every
write, and Query and Scan with IndexName.

Design. An index stores nothing: its entries are derived from the table's items on every read,
which is as simple as a model can be and makes an index that drifts from its table impossible
in the model. An item has an entry iff it has every key attribute of the index (sparse
indexes). An index has 1..4 HASH and 0..4 RANGE attributes (an LSI: the table's partition key
and one RANGE attribute), each with its type from the table's AttributeDefinitions.

  - Writes. An item (PutItem, BatchWriteItem, the new image of UpdateItem) whose index key
    attribute has another type than the definition, or is an empty S/B, is refused with
    DynamoDB's message before anything is written: LSIs before GSIs, each index's key
    attributes in schema order (HASH, then RANGE), type before emptiness. Table.check_indexes.
  - Order. Within one tuple of HASH values, entries are in the order of the RANGE values (left
    to right, DynamoDB's order of S/N/B) and then of the table key (partition key, sort key):
    kura's entry keys end with enc(table_pk) || enc(table_sk) (docs/format/index.md). Across
    tuples the order is a hash order, so Scan results are compared as multisets.
  - Projections. An entry holds the table's and the index's key attributes, plus the
    NonKeyAttributes the item has (INCLUDE), or every attribute (ALL).
  - Reads. Query needs equality on every HASH attribute and takes RANGE attributes left to
    right, equality on all but the last given. Results carry the projected attributes; with a
    ProjectionExpression or Select ALL_ATTRIBUTES an LSI reads the table's item (a GSI refuses
    what it does not project). The filter of an index Query may name neither an index key
    attribute nor an attribute the index does not project; the filter of an index Scan may name
    anything and is evaluated on the table's item (as kura and DynamoDB Local 1.25.1 do), which
    after the index has caught up is the item the entry was made from. The checks run in
    kura's order (engine/query.c query_index, engine/scan.c scan_index_checks).

UpdateTable adds a GSI (its entries: the items that hold its key attributes with the right
types) or removes one.

The request's expressions come as trees (meta), as for tables: meta["key_terms"] is a list of
(attribute, op, [placeholders]) with op one of = < <= > >= between begins_with, in any shape
(the generator sends some that the key schema refuses).

Injected bug (Model.bug, for --self-test): "index_not_sparse" - an item has an entry as soon
as it has the HASH attributes (the model forgets that RANGE attributes are required too).
"""

import base64
import copy
import zlib

from refmodel import canon_value, compare, evaluate, project, sort_key, validation, vtype

MSG_INDEX_TYPE = ("One or more parameter values were invalid: Type mismatch for Index Key %s "
                  "Expected: %s Actual: %s IndexName: %s")
MSG_INDEX_EMPTY = ("One or more parameter values are not valid. A value specified for a "
                   "secondary index key is not supported. The AttributeValue for a key attribute "
                   "cannot contain an empty %s value. IndexName: %s, IndexKey: %s")
MSG_NO_INDEX = "The table does not have the specified index: %s"
MSG_COND_TYPE = ("One or more parameter values were invalid: Condition parameter type does not "
                 "match schema type")
MSG_KEY_NOT_SUPPORTED = "Query key condition not supported"
MSG_KEY_MISSED = "Query condition missed key schema element: %s"
MSG_FILTER_KEY = ("Filter Expression can only contain non-primary key attributes: Primary key "
                  "attribute: %s")
MSG_FILTER_PROJ = ("One or more parameter values were invalid: Secondary index %s does not "
                   "project one or more filter attributes: [%s]")
MSG_SELECT_ALL = ("One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not "
                  "supported for global secondary index %s because its projection type is not "
                  "ALL")


class Index:
    """One LSI or GSI: kind "LSI" | "GSI", hash_attrs and range_attrs lists of (name, type),
    projection "KEYS_ONLY" | "INCLUDE" | "ALL", nonkey the INCLUDE names."""

    def __init__(self, name, kind, hash_attrs, range_attrs, projection, nonkey=()):
        self.name = name
        self.kind = kind
        self.hash_attrs = list(hash_attrs)
        self.range_attrs = list(range_attrs)
        self.projection = projection
        self.nonkey = list(nonkey)
        self.bug = None  # the model's injected bug (Model.create_table, update_table)

    @classmethod
    def from_request(cls, kind, spec, types):
        """An Index from a CreateTable LocalSecondaryIndexes/GlobalSecondaryIndexes element;
        types: attribute name -> type from AttributeDefinitions."""
        hs = [(k["AttributeName"], types[k["AttributeName"]]) for k in spec["KeySchema"]
              if k["KeyType"] == "HASH"]
        rs = [(k["AttributeName"], types[k["AttributeName"]]) for k in spec["KeySchema"]
              if k["KeyType"] == "RANGE"]
        p = spec["Projection"]
        return cls(spec["IndexName"], kind, hs, rs, p["ProjectionType"],
                   p.get("NonKeyAttributes", ()))

    def request(self):
        """The index as a CreateTable element."""
        ks = [{"AttributeName": n, "KeyType": "HASH"} for n, _ in self.hash_attrs]
        ks += [{"AttributeName": n, "KeyType": "RANGE"} for n, _ in self.range_attrs]
        proj = {"ProjectionType": self.projection}
        if self.projection == "INCLUDE":
            proj["NonKeyAttributes"] = list(self.nonkey)
        return {"IndexName": self.name, "KeySchema": ks, "Projection": proj}

    def key_attrs(self):
        return self.hash_attrs + self.range_attrs

    def key_names(self):
        return [n for n, _ in self.key_attrs()]

    # Writes

    def check_item(self, item):
        """DynamoDB's refusal of an item whose key attribute has the wrong type or is empty."""
        for n, t in self.key_attrs():
            v = item.get(n)
            if v is None:
                continue
            if vtype(v) != t:
                raise validation(MSG_INDEX_TYPE % (n, t, vtype(v), self.name))
            if t != "N" and v[t] == "":
                raise validation(MSG_INDEX_EMPTY % ("string" if t == "S" else "binary",
                                                    self.name, n))
        hash_bytes, range_bytes = self.key_bytes(item)
        if hash_bytes > 2048:
            raise validation("One or more parameter values were invalid: Size of hashkey has "
                             "exceeded the maximum size limit of2048 bytes")
        if range_bytes > 1024:
            raise validation("One or more parameter values were invalid: Aggregated size of all "
                             "range keys has exceeded the size limit of 1024 bytes")

    def key_bytes(self, item):
        """The bytes of the S and B values of the HASH attributes and of the RANGE ones the item
        has, held to a table key's sizes (2,048 and 1,024) even when another key attribute is
        missing, as their types are."""
        def size(attrs):
            total = 0
            for n, t in attrs:
                v = item.get(n, {})
                if "S" in v:
                    total += len(v["S"].encode("utf-8"))
                elif "B" in v:
                    total += len(base64.b64decode(v["B"]))
            return total
        return size(self.hash_attrs), size(self.range_attrs)

    # Entries

    def has_entry(self, item):
        """Whether item has every key attribute with the right type and not empty (a write
        cannot give it another, but an item written before UpdateTable created the index can
        hold one: DynamoDB's backfill leaves such items out)."""
        needed = self.hash_attrs if self.bug == "index_not_sparse" else self.key_attrs()
        hash_bytes, range_bytes = self.key_bytes(item)
        return all(n in item and vtype(item[n]) == t and (t == "N" or item[n][t] != "")
                   for n, t in needed) and hash_bytes <= 2048 and range_bytes <= 1024

    def order(self, table, item):
        """The order of an entry within its HASH values: RANGE values, then the table key (a
        RANGE value missing - only with the injected bug - first)."""
        parts = [(1, sort_key(t, item[n][t])) if t in item.get(n, ()) else (0, b"")
                 for n, t in self.range_attrs]
        return tuple(parts) + table.key_tuple(item)

    def projects(self, table, name):
        return (self.projection == "ALL" or name in self.key_names()
                or name in [n for n, _ in table.key_attrs()]
                or (self.projection == "INCLUDE" and name in self.nonkey))

    def entry(self, table, item):
        """The attributes the index stores for item (sharing its values: stored items are
        replaced, never modified)."""
        if self.projection == "ALL":
            return item
        return {k: v for k, v in item.items() if self.projects(table, k)}

    def start_key_of(self, table, item):
        """A LastEvaluatedKey: the index's key attributes and the table's."""
        names = self.key_names() + [n for n, _ in table.key_attrs()]
        return {n: copy.deepcopy(item[n]) for n in names if n in item}

    def entries(self, table):
        return [it for it in table.items.values() if self.has_entry(it)]


# ---- reading an index ------------------------------------------------------------------------

def find(table, name):
    for ix in table.indexes:
        if ix.name == name:
            return ix
    raise validation(MSG_NO_INDEX % name)


def cond_names(cond):
    """The top-level attribute names a condition tree reads, in tree order."""
    out = []

    def add(path):
        if path[0] not in out:
            out.append(path[0])

    def walk(c):
        k = c[0]
        if k in ("exists", "not_exists"):
            add(c[1])
        elif k in ("begins_with", "contains", "type"):
            add(c[1])
            operand(c[2])
        elif k == "cmp":
            operand(c[2])
            operand(c[3])
        elif k == "between":
            for o in c[1:]:
                operand(o)
        elif k == "in":
            operand(c[1])
            for o in c[2]:
                operand(o)
        elif k in ("and", "or"):
            walk(c[1])
            walk(c[2])
        elif k == "not":
            walk(c[1])

    def operand(o):
        if o[0] in ("path", "size"):
            add(o[1])

    walk(cond)
    return out


def check_projection(table, ix, req, meta):
    """Select and ProjectionExpression against the index's projection: a GSI refuses names it
    does not project (DynamoDB Local lists them in a Java HashSet's order: the message is not
    compared) and Select ALL_ATTRIBUTES unless it projects ALL; an LSI reads the table."""
    paths = meta.get("projection") or []
    if ix.kind == "GSI" and any(not ix.projects(table, p[0]) for p in paths):
        raise validation(None)
    if (req.get("Select") == "ALL_ATTRIBUTES" and ix.kind == "GSI"
            and ix.projection != "ALL"):
        raise validation(MSG_SELECT_ALL % ix.name)


def check_key_terms(ix, values, meta):
    """The key condition against the index's key schema, in DynamoDB's order (dynalite's
    actions/query.js; kura's index/key_range.c): per key attribute in schema order, HASH before
    RANGE, whether a term names it, the type of its values, its operator, whether a value is an
    empty S/B. Every HASH attribute needs "="; RANGE attributes go left to right, "=" on all
    but the last given; no other terms. Returns {attribute: (op, [canonical values])}.
    Messages are compared for a classic key schema (one HASH, at most one RANGE attribute);
    DynamoDB's for the shapes only a multi-attribute key has are not known (None)."""
    terms = {n: (op, [canon_value(values[p]) for p in phs]) for n, op, phs in meta["key_terms"]}
    classic = len(ix.hash_attrs) == 1 and len(ix.range_attrs) <= 1
    n = len(terms)

    def fail(message):
        raise validation(message if classic else None)

    def check(name, t, need_eq):
        op, args = terms[name]
        if any(vtype(a) != t for a in args):
            raise validation(MSG_COND_TYPE)
        if need_eq and op != "=":
            fail(MSG_KEY_NOT_SUPPORTED)
        for a in args:
            if t != "N" and a[t] == "":
                raise validation(MSG_INDEX_EMPTY % ("string" if t == "S" else "binary",
                                                    ix.name, name))

    if classic and n > 2:
        raise validation("Conditions can be of length 1 or 2 only")
    matched = 0
    for i, (name, t) in enumerate(ix.hash_attrs):
        if i == 0 and not ix.range_attrs and n > len(ix.hash_attrs):
            fail(MSG_KEY_NOT_SUPPORTED)
        if name not in terms:
            fail(MSG_KEY_MISSED % name)
        check(name, t, True)
        matched += 1
    prev = None
    for name, t in ix.range_attrs:
        if name not in terms:
            if n > matched:
                fail(MSG_KEY_MISSED % name)
            break
        check(name, t, False)
        if prev is not None and prev != "=":
            fail(MSG_KEY_NOT_SUPPORTED)
        prev = terms[name][0]
        matched += 1
    if matched < n:
        fail(MSG_KEY_NOT_SUPPORTED)
    return terms


def term_holds(item, name, op, args):
    v = item.get(name)
    if op == "begins_with":
        t = vtype(args[0])
        return (v is not None and vtype(v) == t
                and sort_key(t, v[t]).startswith(sort_key(t, args[0][t])))
    if op == "between":
        return compare(">=", v, args[0]) and compare("<=", v, args[1])
    return compare(op, v, args[0])


def query(model, table, req, meta):
    ix = find(table, req["IndexName"])
    if ix.kind == "GSI" and req.get("ConsistentRead"):
        raise validation("Consistent read cannot be true when querying a GSI")
    values = req.get("ExpressionAttributeValues", {})
    terms = check_key_terms(ix, values, meta)
    filt = meta.get("filter")
    if filt is not None:
        names = cond_names(filt)
        for n in ix.key_names():
            if n in names:
                raise validation(MSG_FILTER_KEY % n)
        missing = sorted((n for n in names if not ix.projects(table, n)),
                         key=lambda s: s.encode("utf-8"))
        if missing:
            raise validation(MSG_FILTER_PROJ % (ix.name, ", ".join(missing)))
    check_projection(table, ix, req, meta)
    rows = [it for it in ix.entries(table)
            if all(term_holds(it, n, op, args) for n, (op, args) in terms.items())]
    backward = meta.get("backward", False)
    rows.sort(key=lambda it: ix.order(table, it), reverse=backward)
    start = req.get("ExclusiveStartKey")
    if start is not None:
        sk = ix.order(table, canon_start(start))
        rows = [r for r in rows if (ix.order(table, r) < sk if backward
                                    else ix.order(table, r) > sk)]
    return page(model, table, ix, req, meta, rows)


def canon_start(start):
    return {k: canon_value(v) for k, v in start.items()}


def scan(model, table, req, meta):
    """Every entry, in the order of the HASH values (the harness compares the union of kura's
    pages as a multiset; segments and start keys only come up in --against-model)."""
    ix = find(table, req["IndexName"])
    if ix.kind == "GSI" and req.get("ConsistentRead"):
        raise validation("Consistent read cannot be true when scanning a GSI")
    check_projection(table, ix, req, meta)

    def order(it):
        return tuple(sort_key(t, it[n][t]) for n, t in ix.hash_attrs), ix.order(table, it)

    rows = sorted(ix.entries(table), key=order)
    if "TotalSegments" in req:  # (only in --against-model: see refmodel's op_Scan)
        n, seg = req["TotalSegments"], req["Segment"]
        rows = [r for r in rows if zlib.crc32(repr(table.key_tuple(r)).encode()) % n == seg]
    if "ExclusiveStartKey" in req:
        sk = order(canon_start(req["ExclusiveStartKey"]))
        rows = [r for r in rows if order(r) > sk]
    return page(model, table, ix, req, meta, rows)


def page(model, table, ix, req, meta, rows):
    """Limit, the filter (on the table's item), Select and the projection; rows are items in
    result order after the start key."""
    limit = req.get("Limit")
    if limit is not None and model.bug == "limit_off_by_one":
        limit += 1
    more = limit is not None and len(rows) >= limit
    scanned = rows[:limit] if limit is not None else rows
    values = req.get("ExpressionAttributeValues", {})
    filt = meta.get("filter")
    matched = [r for r in scanned if filt is None or evaluate(r, values, filt)]
    resp = {"Count": len(matched), "ScannedCount": len(scanned)}
    select = req.get("Select")
    if select != "COUNT":
        paths = meta.get("projection")
        if paths:
            resp["Items"] = [project(r, paths) for r in matched]
        elif select == "ALL_ATTRIBUTES":
            resp["Items"] = matched
        else:
            resp["Items"] = [ix.entry(table, r) for r in matched]
    if more and scanned:
        resp["LastEvaluatedKey"] = ix.start_key_of(table, scanned[-1])
    return resp


def update_table(model, table, req, meta):
    """UpdateTable with one GlobalSecondaryIndexUpdates Create or Delete of a GSI (the generator
    sends only valid ones). The index is there, or gone, at once: the harness waits until kura
    has built or dropped it before the next operation. The response is not compared."""
    upd = req["GlobalSecondaryIndexUpdates"][0]
    if "Delete" in upd:
        table.indexes.remove(find(table, upd["Delete"]["IndexName"]))
        return {}
    types = dict(table.key_attrs())
    for ix in table.indexes:
        types.update(ix.key_attrs())
    types.update((a["AttributeName"], a["AttributeType"]) for a in req["AttributeDefinitions"])
    ix = Index.from_request("GSI", upd["Create"], types)
    ix.bug = model.bug
    table.indexes.append(ix)
    return {}


def from_create_table(body):
    """The indexes of a CreateTable request (LSIs, then GSIs, in the order given)."""
    types = {a["AttributeName"]: a["AttributeType"] for a in body["AttributeDefinitions"]}
    return ([Index.from_request("LSI", s, types) for s in body.get("LocalSecondaryIndexes", [])]
            + [Index.from_request("GSI", s, types)
               for s in body.get("GlobalSecondaryIndexes", [])])
