"""refmodel.py - This file contains the reference model of the differential test: a deliberately
simple, in-memory implementation of the DynamoDB operations the generator (gen.py) emits,
producing exactly DynamoDB's response JSON.

Design. A table is a dict from the key tuple to the item; an item is kept in DynamoDB JSON
({"a": {"N": "1.5"}, ...}) with every number already in canonical form, so responses are just
copies of stored items. Nothing here is clever on purpose: Query sorts every item of the
partition on each call, Scan walks every item, sets are plain lists.

  - Numbers are decimal.Decimal with a context wide enough that + and - are exact; a result is
    then checked against DynamoDB's limits (38 significant digits, magnitude 1e-130 ..
    9.99..e+125) and printed in canonical form ("1.50" -> "1.5", "-0" -> "0", no exponent).
  - Strings order by their UTF-8 bytes, binaries by their bytes, numbers numerically.
  - Expressions are not parsed. The generator sends the expression text to kura and hands the
    model the same expression as a small tree (see gen.py for the node shapes); the model
    evaluates the tree directly. Names are already resolved in the tree (a path is a list of
    attribute names and list indexes); value operands name the ExpressionAttributeValues key.

Errors are raised as ModelError(type, message). message None means "DynamoDB's exact text is not
known to the model": the harness then compares only the error type.

Secondary indexes (LSIs, GSIs: the check of their key attributes on every write, Query and Scan
with IndexName) are in refindex.py.
"""

import base64
import copy
import decimal
import zlib

ERR_PREFIX = "com.amazonaws.dynamodb.v20120810#"

MSG_COND_FAILED = "The conditional request failed"
MSG_KEY_SCHEMA = "The provided key element does not match the schema"
MSG_BAD_PATH = "The document path provided in the update expression is invalid for update"
MSG_NO_ATTR = "The provided expression refers to an attribute that does not exist in the item"
MSG_OPERAND_TYPE = "An operand in the update expression has an incorrect data type"
MSG_DUP_KEYS = "Provided list of item keys contains duplicates"
MSG_NUM_DIGITS = "Attempting to store more than 38 significant digits in a Number"
MSG_NUM_OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger than "
                    "supported range")
MSG_NUM_UNDERFLOW = ("Number underflow. Attempting to store a number with magnitude smaller "
                     "than supported range")

# Wide enough that adding or subtracting any two in-range numbers is exact.
_CTX = decimal.Context(prec=600, Emax=999999, Emin=-999999, traps=[decimal.InvalidOperation])


class ModelError(Exception):
    def __init__(self, etype, message):
        Exception.__init__(self, etype, message)
        self.etype = etype
        self.message = message

    def body(self):
        b = {"__type": ERR_PREFIX + self.etype}
        if self.message is not None:
            b["message"] = self.message
        return b


def validation(message):
    return ModelError("ValidationException", message)


# ---- numbers ---------------------------------------------------------------------------------

def num_check(d):
    """Raises DynamoDB's ValidationException if Decimal d is out of range or too precise."""
    if d.is_zero():
        return
    sign, digits, exp = d.normalize(_CTX).as_tuple()
    adjusted = exp + len(digits) - 1
    if adjusted > 125:
        raise validation(MSG_NUM_OVERFLOW)
    if adjusted < -130:
        raise validation(MSG_NUM_UNDERFLOW)
    if len(digits) > 38:
        raise validation(MSG_NUM_DIGITS)


def num_parse(s):
    d = decimal.Decimal(s)
    num_check(d)
    return d


def num_format(d):
    """The canonical text DynamoDB returns: no exponent, no trailing zeros, "0" for zero."""
    if d.is_zero():
        return "0"
    return format(d.normalize(_CTX), "f")


def num_arith(a, b, subtract, message=None):
    """Exact a + b or a - b of two canonical number strings. The message of an out-of-range
    result is not compared (DynamoDB's wording for arithmetic results is not pinned down)."""
    x, y = decimal.Decimal(a), decimal.Decimal(b)
    r = _CTX.subtract(x, y) if subtract else _CTX.add(x, y)
    try:
        num_check(r)
    except ModelError as e:
        raise validation(message) from e
    return num_format(r)


# ---- values ----------------------------------------------------------------------------------

def vtype(v):
    return next(iter(v))


def canon_value(v):
    """A copy of request value v with every number in canonical form (raises on bad numbers)."""
    t = vtype(v)
    check_value(v)
    if t == "N":
        return {"N": num_format(num_parse(v["N"]))}
    if t == "NS":
        return {"NS": [num_format(num_parse(x)) for x in v["NS"]]}
    if t == "L":
        return {"L": [canon_value(x) for x in v["L"]]}
    if t == "M":
        return {"M": {k: canon_value(x) for k, x in v["M"].items()}}
    if t in ("SS", "BS"):
        return {t: list(v[t])}
    return dict(v)


def check_value(v):
    """DynamoDB's checks of a request value beyond numbers: sets are non-empty and without
    duplicate members. Applied to items and expression attribute values."""
    t = vtype(v)
    if t in ("SS", "NS", "BS"):
        members = set_members(t, v[t])
        if not members or len(set(members)) != len(members):
            raise validation(None)
    elif t == "L":
        for x in v["L"]:
            check_value(x)
    elif t == "M":
        for x in v["M"].values():
            check_value(x)


def canon_item(item):
    return {k: canon_value(v) for k, v in item.items()}


def sort_key(t, raw):
    """The ordering key of a scalar S, N or B value (raw: its JSON text)."""
    if t == "S":
        return raw.encode("utf-8")
    if t == "B":
        return base64.b64decode(raw)
    return decimal.Decimal(raw)


def values_equal(a, b):
    ta, tb = vtype(a), vtype(b)
    if ta != tb:
        return False
    x, y = a[ta], b[tb]
    if ta == "N":
        return decimal.Decimal(x) == decimal.Decimal(y)
    if ta == "B":
        return base64.b64decode(x) == base64.b64decode(y)
    if ta == "L":
        return len(x) == len(y) and all(values_equal(p, q) for p, q in zip(x, y))
    if ta == "M":
        return x.keys() == y.keys() and all(values_equal(x[k], y[k]) for k in x)
    if ta in ("SS", "NS", "BS"):
        et = ta[0]
        return (sorted(sort_key(et, m) for m in x) == sorted(sort_key(et, m) for m in y))
    return x == y


def value_size(v):
    """size(): characters of S (the generator keeps size() on ASCII strings), bytes of B,
    elements of L, M and sets; None for other types."""
    t = vtype(v)
    if t == "S":
        return len(v["S"])
    if t == "B":
        return len(base64.b64decode(v["B"]))
    if t in ("L", "M", "SS", "NS", "BS"):
        return len(v[t])
    return None


def rough_size(v):
    """A value's size as DynamoDB counts it, to within a few bytes per number (the generator's
    oversized items are far beyond 400 KB, its other items far below)."""
    t = vtype(v)
    if t in ("S", "B", "N"):
        return len(sort_key(t, v[t])) if t != "N" else len(v["N"]) // 2 + 1
    if t in ("BOOL", "NULL"):
        return 1
    if t == "L":
        return 3 + sum(1 + rough_size(x) for x in v["L"])
    if t == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + rough_size(x) for k, x in v["M"].items())
    return sum(rough_size({t[0]: m}) for m in v[t])


# ---- document paths --------------------------------------------------------------------------

def path_get(item, path):
    """The value at path (a list of names and list indexes) in item, or None."""
    cur = item.get(path[0])
    for step in path[1:]:
        if cur is None:
            return None
        if isinstance(step, int):
            if vtype(cur) != "L" or step >= len(cur["L"]):
                return None
            cur = cur["L"][step]
        else:
            if vtype(cur) != "M":
                return None
            cur = cur["M"].get(step)
    return cur


def project(item, paths):
    """The item reduced to the given paths, as DynamoDB builds it: nested maps keep only the
    projected names, projected list elements keep their relative order (compacted)."""
    tree = {}  # name -> node; node: ("v", value) | ("m", dict) | ("l", {index: node})

    def insert(nodes, path, value):
        head, rest = path[0], path[1:]
        if not rest:
            nodes[head] = ("v", copy.deepcopy(value))
            return
        kind = "l" if isinstance(rest[0], int) else "m"
        if head not in nodes:
            nodes[head] = (kind, {})
        insert(nodes[head][1], rest, value)

    for path in paths:
        v = path_get(item, path)
        if v is not None:
            insert(tree, path, v)

    def build(node):
        kind, x = node
        if kind == "v":
            return x
        if kind == "m":
            return {"M": {k: build(n) for k, n in x.items()}}
        return {"L": [build(x[i]) for i in sorted(x)]}

    return {k: build(n) for k, n in tree.items()}


# ---- conditions ------------------------------------------------------------------------------
# Condition nodes (tuples): ("exists", path), ("not_exists", path), ("cmp", op, lhs, rhs),
# ("between", operand, lo, hi), ("in", operand, [operands]), ("begins_with", path, operand),
# ("contains", path, operand), ("type", path, operand), ("and", a, b), ("or", a, b),
# ("not", a). Operands: ("path", path), ("val", ":name"), ("size", path).

def operand(item, values, op):
    kind = op[0]
    if kind == "path":
        return path_get(item, op[1])
    if kind == "val":
        return canon_value(values[op[1]])
    v = path_get(item, op[1])
    n = value_size(v) if v is not None else None
    return None if n is None else {"N": str(n)}


def ordered(a, b):
    """(ka, kb) ordering keys if a and b are comparable scalars of one type, else None."""
    if a is None or b is None:
        return None
    ta, tb = vtype(a), vtype(b)
    if ta != tb or ta not in ("S", "N", "B"):
        return None
    return sort_key(ta, a[ta]), sort_key(tb, b[tb])


def compare(op, a, b):
    if op == "=":
        return a is not None and b is not None and values_equal(a, b)
    if op == "<>":
        return not (a is not None and b is not None and values_equal(a, b))
    ks = ordered(a, b)
    if ks is None:
        return False
    x, y = ks
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def contains(container, needle):
    t = vtype(container)
    nt = vtype(needle)
    if t == "S":
        return nt == "S" and needle["S"] in container["S"]
    if t == "B":
        return nt == "B" and base64.b64decode(needle["B"]) in base64.b64decode(container["B"])
    if t in ("SS", "NS", "BS"):
        return nt == t[0] and any(values_equal({nt: m}, needle) for m in container[t])
    if t == "L":
        return any(values_equal(m, needle) for m in container["L"])
    return False


def evaluate(item, values, cond):
    k = cond[0]
    if k == "exists":
        return path_get(item, cond[1]) is not None
    if k == "not_exists":
        return path_get(item, cond[1]) is None
    if k == "cmp":
        return compare(cond[1], operand(item, values, cond[2]), operand(item, values, cond[3]))
    if k == "between":
        x = operand(item, values, cond[1])
        return (compare(">=", x, operand(item, values, cond[2]))
                and compare("<=", x, operand(item, values, cond[3])))
    if k == "in":
        x = operand(item, values, cond[1])
        return any(compare("=", x, operand(item, values, o)) for o in cond[2])
    if k == "begins_with":
        x, p = path_get(item, cond[1]), operand(item, values, cond[2])
        if x is None or vtype(x) != vtype(p) or vtype(x) not in ("S", "B"):
            return False
        t = vtype(x)
        return sort_key(t, x[t]).startswith(sort_key(t, p[t]))
    if k == "contains":
        x = path_get(item, cond[1])
        return x is not None and contains(x, operand(item, values, cond[2]))
    if k == "type":
        x = path_get(item, cond[1])
        return x is not None and vtype(x) == operand(item, values, cond[2])["S"]
    if k == "and":
        return evaluate(item, values, cond[1]) and evaluate(item, values, cond[2])
    if k == "or":
        return evaluate(item, values, cond[1]) or evaluate(item, values, cond[2])
    if k == "not":
        return not evaluate(item, values, cond[1])
    raise AssertionError("unknown condition node %r" % (cond,))


# ---- update expressions ----------------------------------------------------------------------
# Update actions (tuples, in expression order): ("set", path, rhs), ("remove", path),
# ("add", path, ":v"), ("delete", path, ":v"). rhs: ("val", ":v"), ("path", path),
# ("plus"|"minus", rhs, rhs), ("if_not_exists", path, rhs), ("list_append", rhs, rhs).

def rhs_value(item, values, rhs):
    k = rhs[0]
    if k == "val":
        return canon_value(values[rhs[1]])
    if k == "path":
        v = path_get(item, rhs[1])
        if v is None:
            raise validation(MSG_NO_ATTR)
        return v
    if k in ("plus", "minus"):
        a = rhs_value(item, values, rhs[1])
        if vtype(a) != "N":
            raise validation(MSG_OPERAND_TYPE)
        b = rhs_value(item, values, rhs[2])
        if vtype(b) != "N":
            raise validation(MSG_OPERAND_TYPE)
        return {"N": num_arith(a["N"], b["N"], k == "minus")}
    if k == "if_not_exists":
        v = path_get(item, rhs[1])
        return v if v is not None else rhs_value(item, values, rhs[2])
    if k == "list_append":
        a = rhs_value(item, values, rhs[1])
        if vtype(a) != "L":
            raise validation(MSG_OPERAND_TYPE)
        b = rhs_value(item, values, rhs[2])
        if vtype(b) != "L":
            raise validation(MSG_OPERAND_TYPE)
        return {"L": a["L"] + b["L"]}
    raise AssertionError("unknown update operand %r" % (rhs,))


def parent_of(item, path):
    """(container, last step) for path, where container is the dict or list holding it; raises
    DynamoDB's invalid-path error if the parent is missing or of the wrong type."""
    if len(path) == 1:
        return item, path[0]
    parent = path_get(item, path[:-1])
    last = path[-1]
    if parent is None:
        raise validation(MSG_BAD_PATH)
    if isinstance(last, int):
        if vtype(parent) != "L":
            raise validation(MSG_BAD_PATH)
        return parent["L"], last
    if vtype(parent) != "M":
        raise validation(MSG_BAD_PATH)
    return parent["M"], last


def container_get(c, step):
    if isinstance(c, list):
        return c[step] if step < len(c) else None
    return c.get(step)


def container_put(c, step, v):
    if isinstance(c, list):
        if step < len(c):
            c[step] = v
        else:
            c.append(v)
    else:
        c[step] = v


def container_del(c, step):
    if isinstance(c, list):
        if step < len(c):
            del c[step]
    else:
        c.pop(step, None)


def set_members(t, members):
    return [sort_key(t[0], m) for m in members]


def only_removes(actions):
    """Whether an update only removes attributes or deletes from sets: on a missing item it
    creates nothing (DynamoDB: no item, no Attributes, no stream record)."""
    return all(a[0] in ("remove", "delete") for a in actions)


def apply_update(item, values, actions):
    """Applies the actions to item (a deep copy is modified in place and returned). Every
    right-hand side is evaluated against the item as it was before the update, all of them
    first (in the order of the expression text), then the actions are applied in that order;
    with several faults, the first in that sequence is the error reported (as dynalite)."""
    old = item
    new = copy.deepcopy(item)
    resolved = [rhs_value(old, values, a[2]) if a[0] == "set" else None for a in actions]
    for a, v in zip(actions, resolved):
        c, step = parent_of(new, a[1])
        if a[0] == "set":
            container_put(c, step, copy.deepcopy(v))
        elif a[0] == "remove":
            container_del(c, step)
        elif a[0] == "add":
            arg = canon_value(values[a[2]])
            t = vtype(arg)
            cur = container_get(c, step)
            if cur is not None and vtype(cur) != t:
                raise validation(MSG_OPERAND_TYPE)
            if t == "N":
                base = cur["N"] if cur is not None else "0"
                container_put(c, step, {"N": num_arith(base, arg["N"], False)})
            else:
                members = list(cur[t]) if cur is not None else []
                have = set_members(t, members)
                for m in arg[t]:
                    if sort_key(t[0], m) not in have:
                        members.append(m)
                        have.append(sort_key(t[0], m))
                container_put(c, step, {t: members})
        elif a[0] == "delete":
            arg = canon_value(values[a[2]])
            t = vtype(arg)
            cur = container_get(c, step)
            if cur is None:
                continue
            if vtype(cur) != t:
                raise validation(MSG_OPERAND_TYPE)
            gone = set_members(t, arg[t])
            left = [m for m in cur[t] if sort_key(t[0], m) not in gone]
            if left:
                container_put(c, step, {t: left})
            else:
                container_del(c, step)
    return new


# ---- tables and operations -------------------------------------------------------------------

class Table:
    def __init__(self, name, hash_key, range_key, indexes=()):
        self.name = name
        self.hash_key = hash_key    # (attribute name, "S" | "N" | "B")
        self.range_key = range_key  # the same, or None
        self.indexes = list(indexes)  # refindex.Index: the LSIs, then the GSIs
        self.items = {}

    def key_attrs(self):
        return [self.hash_key] + ([self.range_key] if self.range_key else [])

    def key_tuple(self, item):
        return tuple(sort_key(t, item[n][t]) for n, t in self.key_attrs())

    def key_of(self, item):
        return {n: copy.deepcopy(item[n]) for n, _ in self.key_attrs()}

    def check_key_value(self, name, t, v):
        if t in ("S", "B") and v[t] == "":
            # DynamoDB words this differently for items and keys: compare the type only.
            raise validation(None)
        if t in ("S", "B") and len(sort_key(t, v[t])) > (2048 if name == self.hash_key[0]
                                                         else 1024):
            raise validation(None)  # key too long (DynamoDB's texts are irregular)
        if t == "N":
            num_parse(v["N"])

    def check_key(self, key):
        """Validates a Key parameter; returns its key tuple."""
        attrs = self.key_attrs()
        if len(key) != len(attrs):
            raise validation(MSG_KEY_SCHEMA)
        for n, t in attrs:
            if n not in key or vtype(key[n]) != t:
                raise validation(MSG_KEY_SCHEMA)
            self.check_key_value(n, t, key[n])
        return self.key_tuple(key)

    def check_item(self, item):
        """Validates an Item parameter (key part); returns the canonical item."""
        for n, t in self.key_attrs():
            if n not in item:
                raise validation("One or more parameter values were invalid: Missing the key %s "
                                 "in the item" % n)
            if vtype(item[n]) != t:
                raise validation("One or more parameter values were invalid: Type mismatch for "
                                 "key %s expected: %s actual: %s" % (n, t, vtype(item[n])))
            self.check_key_value(n, t, item[n])
        item = canon_item(item)
        if sum(len(k.encode("utf-8")) + rough_size(v) for k, v in item.items()) > 400 * 1024:
            raise validation(None)  # "Item size has exceeded the maximum allowed size"
        return item

    def check_indexes(self, item):
        """Every index's check of an item about to be written (after the table's own checks,
        before any condition), LSIs first."""
        for ix in self.indexes:
            ix.check_item(item)


class Model:
    """The reference: execute(op, request, meta) -> (ok, response). meta carries the structured
    form of the request's expressions (see gen.py). `bug` names a deliberately injected bug
    (for --self-test): "limit_off_by_one", or refindex's "index_not_sparse"."""

    def __init__(self, bug=None):
        self.tables = {}
        self.bug = bug

    def create_table(self, name, hash_key, range_key, indexes=()):
        for ix in indexes:
            ix.bug = self.bug
        self.tables[name] = Table(name, hash_key, range_key, indexes)

    def peek(self, table, key):
        """The stored item under key (a valid key of an existing table), or None."""
        t = self.tables[table]
        return t.items.get(t.key_tuple(key))

    def execute(self, op, req, meta):
        try:
            for v in req.get("ExpressionAttributeValues", {}).values():
                canon_value(v)  # every value is validated, used or not
            return True, getattr(self, "op_" + op)(req, meta)
        except ModelError as e:
            return False, e.body()

    def table(self, name):
        t = self.tables.get(name)
        if t is None:
            raise ModelError("ResourceNotFoundException", None)
        return t

    def check_condition(self, req, meta, old):
        cond = meta.get("condition")
        if cond is None:
            return
        if not evaluate(old or {}, req.get("ExpressionAttributeValues", {}), cond):
            e = ModelError("ConditionalCheckFailedException", MSG_COND_FAILED)
            if old is not None and req.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                body = e.body()
                body["Item"] = copy.deepcopy(old)
                raise _BodyError(e, body)
            raise e

    # PutItem, GetItem, DeleteItem, UpdateItem

    def op_PutItem(self, req, meta):
        t = self.table(req["TableName"])
        item = t.check_item(req["Item"])
        t.check_indexes(item)
        k = t.key_tuple(item)
        old = t.items.get(k)
        self.check_condition(req, meta, old)
        t.items[k] = item
        if old is not None and req.get("ReturnValues") == "ALL_OLD":
            return {"Attributes": copy.deepcopy(old)}
        return {}

    def op_GetItem(self, req, meta):
        t = self.table(req["TableName"])
        item = t.items.get(t.check_key(req["Key"]))
        if item is None:
            return {}
        paths = meta.get("projection")
        return {"Item": project(item, paths) if paths else copy.deepcopy(item)}

    def op_DeleteItem(self, req, meta):
        t = self.table(req["TableName"])
        k = t.check_key(req["Key"])
        old = t.items.get(k)
        self.check_condition(req, meta, old)
        t.items.pop(k, None)
        if old is not None and req.get("ReturnValues") == "ALL_OLD":
            return {"Attributes": copy.deepcopy(old)}
        return {}

    def op_UpdateItem(self, req, meta):
        t = self.table(req["TableName"])
        k = t.check_key(req["Key"])
        actions = meta.get("update", [])
        values = req.get("ExpressionAttributeValues", {})
        for a in actions:
            allowed = {"add": ("N", "SS", "NS", "BS"), "delete": ("SS", "NS", "BS")}
            if a[0] in allowed and vtype(values[a[2]]) not in allowed[a[0]]:
                raise validation(None)  # a parse-time operand type error
        keynames = [n for n, _ in t.key_attrs()]
        for a in actions:
            if a[1][0] in keynames:
                raise validation("One or more parameter values were invalid: Cannot update "
                                 "attribute %s. This attribute is part of the key" % a[1][0])
        old = t.items.get(k)
        self.check_condition(req, meta, old)
        base = old if old is not None else canon_item(req["Key"])
        new = apply_update(base, req.get("ExpressionAttributeValues", {}), actions)
        t.check_indexes(new)
        if old is None and only_removes(actions):
            return {}  # the item stays missing
        t.items[k] = new
        rv = req.get("ReturnValues", "NONE")
        paths = [a[1] for a in actions]
        attrs = None
        if rv == "ALL_OLD" and old is not None:
            attrs = copy.deepcopy(old)
        elif rv == "UPDATED_OLD" and old is not None:
            attrs = project(old, paths)
        elif rv == "ALL_NEW":
            attrs = copy.deepcopy(new)
        elif rv == "UPDATED_NEW":
            attrs = project(new, paths)
        return {"Attributes": attrs} if attrs else {}

    # Query and Scan

    def page(self, t, req, meta, rows):
        """Applies ExclusiveStartKey (rows are in result order), Limit, the filter, Select and
        the projection to a list of items; returns the page response."""
        start = req.get("ExclusiveStartKey")
        if start is not None:
            sk = t.key_tuple(start)
            keys = [t.key_tuple(r) for r in rows]
            rows = rows[keys.index(sk) + 1:] if sk in keys else self.after(t, rows, sk, meta)
        limit = req.get("Limit")
        if limit is not None and self.bug == "limit_off_by_one":
            limit += 1
        more = limit is not None and len(rows) >= limit
        scanned = rows[:limit] if limit is not None else rows
        values = req.get("ExpressionAttributeValues", {})
        filt = meta.get("filter")
        matched = [r for r in scanned if filt is None or evaluate(r, values, filt)]
        resp = {"Count": len(matched), "ScannedCount": len(scanned)}
        if req.get("Select") != "COUNT":
            paths = meta.get("projection")
            # (stored items are replaced, never modified, so a response may share them)
            resp["Items"] = [project(r, paths) if paths else r for r in matched]
        if more and scanned:
            resp["LastEvaluatedKey"] = t.key_of(scanned[-1])
        return resp

    def after(self, t, rows, sk, meta):
        """Rows after a start key that is not itself in rows: only used by Query, whose rows are
        sorted (Scan start keys always come from a previous page)."""
        back = meta.get("backward", False)
        return [r for r in rows if (t.key_tuple(r) < sk if back else t.key_tuple(r) > sk)]

    def op_Query(self, req, meta):
        t = self.table(req["TableName"])
        if "IndexName" in req:
            return refindex.query(self, t, req, meta)
        values = req.get("ExpressionAttributeValues", {})
        hname, htype = t.hash_key
        hv = canon_value(values[meta["key_hash"]])
        if vtype(hv) != htype:
            raise validation(None)
        rows = [it for it in t.items.values() if values_equal(it[hname], hv)]
        rc = meta.get("key_range")
        if rc is not None:
            rname, rtype = t.range_key
            args = [canon_value(values[a]) for a in rc[1:]]
            if any(vtype(a) != rtype for a in args):
                raise validation(None)
            if rc[0] == "begins_with" and rtype == "N":
                raise validation(None)
            if rc[0] == "begins_with":
                rows = [r for r in rows
                        if sort_key(rtype, r[rname][rtype]).startswith(
                            sort_key(rtype, args[0][rtype]))]
            elif rc[0] == "between":
                rows = [r for r in rows
                        if compare(">=", r[rname], args[0]) and compare("<=", r[rname], args[1])]
            else:
                rows = [r for r in rows if compare(rc[0], r[rname], args[0])]
        rows.sort(key=t.key_tuple, reverse=meta.get("backward", False))
        return self.page(t, req, meta, rows)

    def op_Scan(self, req, meta):
        """The whole table in key order. The harness compares Scan results as multisets of the
        union of all pages, so the order and page boundaries chosen here do not matter."""
        t = self.table(req["TableName"])
        if "IndexName" in req:
            return refindex.scan(self, t, req, meta)
        rows = sorted(t.items.values(), key=t.key_tuple)
        if "TotalSegments" in req:
            n, seg = req["TotalSegments"], req["Segment"]
            rows = [r for r in rows if zlib.crc32(repr(t.key_tuple(r)).encode()) % n == seg]
        return self.page(t, req, meta, rows)

    # Secondary indexes on a live table

    def op_UpdateTable(self, req, meta):
        return refindex.update_table(self, self.table(req["TableName"]), req, meta)

    # Batches

    def op_BatchWriteItem(self, req, meta):
        plan = []
        for name, reqs in req["RequestItems"].items():
            t = self.table(name)
            seen = set()
            for r in reqs:
                if "PutRequest" in r:
                    item = t.check_item(r["PutRequest"]["Item"])
                    t.check_indexes(item)
                    k = t.key_tuple(item)
                else:
                    item = None
                    k = t.check_key(r["DeleteRequest"]["Key"])
                if k in seen:
                    raise validation(MSG_DUP_KEYS)
                seen.add(k)
                plan.append((t, k, item))
        for t, k, item in plan:
            if item is None:
                t.items.pop(k, None)
            else:
                t.items[k] = item
        return {"UnprocessedItems": {}}

    def op_BatchGetItem(self, req, meta):
        out = {}
        projections = meta.get("projections", {})
        for name, spec in req["RequestItems"].items():
            t = self.table(name)
            seen = set()
            found = []
            for key in spec["Keys"]:
                k = t.check_key(key)
                if k in seen:
                    raise validation(MSG_DUP_KEYS)
                seen.add(k)
                item = t.items.get(k)
                if item is not None:
                    paths = projections.get(name)
                    found.append(project(item, paths) if paths else copy.deepcopy(item))
            out[name] = found
        return {"Responses": out, "UnprocessedKeys": {}}


    # Transactions

    def op_TransactWriteItems(self, req, meta):
        """kura's order: every action's table, key and item (ResourceNotFound and the request's
        ValidationExceptions), one action per item; then, on one state, every action in turn
        (its condition, then the new item): any failure cancels all with one reason per
        action; otherwise every write is applied."""
        plan, seen = [], set()
        for a, m in zip(req["TransactItems"], meta["actions"]):
            kind = m["kind"]
            body = a[kind]
            t = self.table(body["TableName"])
            if kind == "Put":
                item = t.check_item(body["Item"])
                t.check_indexes(item)
                k = t.key_tuple(item)
            else:
                item = None
                k = t.check_key(body["Key"])
            if kind == "Update":
                keynames = [n for n, _ in t.key_attrs()]
                values = body.get("ExpressionAttributeValues", {})
                for u in m.get("update", []):
                    allowed = {"add": ("N", "SS", "NS", "BS"), "delete": ("SS", "NS", "BS")}
                    if u[0] in allowed and vtype(values[u[2]]) not in allowed[u[0]]:
                        raise validation(None)
                for u in m.get("update", []):
                    if u[1][0] in keynames:
                        raise validation("One or more parameter values were invalid: Cannot "
                                         "update attribute %s. This attribute is part of the "
                                         "key" % u[1][0])
            plan.append((t, k, kind, body, m, item))
        for t, k, _, _, _, _ in plan:
            if (t.name, k) in seen:
                raise validation("Transaction request cannot include multiple operations on "
                                 "one item")
            seen.add((t.name, k))
        reasons, writes, failed = [], [], False
        for t, k, kind, body, m, item in plan:
            old = t.items.get(k)
            values = body.get("ExpressionAttributeValues", {})
            cond = m.get("condition")
            if cond is not None and not evaluate(old or {}, values, cond):
                r = {"Code": "ConditionalCheckFailed",
                     "Message": MSG_COND_FAILED + ("." if kind == "ConditionCheck" else "")}
                if old is not None and body.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD":
                    r["Item"] = copy.deepcopy(old)
                reasons.append(r)
                failed = True
                continue
            new = item
            if kind == "Update":
                try:
                    base = old if old is not None else canon_item(body["Key"])
                    new = apply_update(base, values, m.get("update", []))
                    t.check_indexes(new)
                except ModelError as e:
                    r = {"Code": "ValidationError"}
                    if e.message is not None:
                        r["Message"] = e.message
                    reasons.append(r)
                    failed = True
                    continue
            reasons.append({"Code": "None"})
            if kind == "Update" and old is None and only_removes(m.get("update", [])):
                new = None  # the item stays missing
            if kind != "ConditionCheck":
                writes.append((t, k, None if kind == "Delete" else new))
        if failed:
            msg = ("Transaction cancelled, please refer cancellation reasons for specific "
                   "reasons [%s]" % ", ".join(r["Code"] for r in reasons))
            e = ModelError("TransactionCanceledException", msg)
            body = e.body()
            body["CancellationReasons"] = reasons
            raise _BodyError(e, body)
        for t, k, new in writes:
            if new is None:
                t.items.pop(k, None)
            else:
                t.items[k] = new
        return {}

    def op_TransactGetItems(self, req, meta):
        out, seen = [], set()
        gets = []
        for a in req["TransactItems"]:
            body = a["Get"]
            t = self.table(body["TableName"])
            gets.append((t, t.check_key(body["Key"])))
        for t, k in gets:
            if (t.name, k) in seen:
                raise validation("Transaction request cannot include multiple operations on "
                                 "one item")
            seen.add((t.name, k))
        for (t, k), m in zip(gets, meta["actions"]):
            item = t.items.get(k)
            paths = m.get("projection")
            if item is None:
                out.append({})
            else:
                out.append({"Item": project(item, paths) if paths else copy.deepcopy(item)})
        return {"Responses": out}


class _BodyError(ModelError):
    """A ModelError whose response body carries more than the type and message."""

    def __init__(self, err, body):
        ModelError.__init__(self, err.etype, err.message)
        self._body = body

    def body(self):
        return self._body


# refindex builds on the helpers above (and Model calls it), so it is imported last.
import refindex  # noqa: E402
