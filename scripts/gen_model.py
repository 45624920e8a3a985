#!/usr/bin/env python3
"""gen_model.py - turns DynamoDB's service model (botocore's service-2.json of dynamodb and
dynamodbstreams) into the C tables of api/model_gen.c that api/validate.c walks a request
against (docs/data-model.md, "Request validation"), and into the test vectors of
tests/unit/validate_vectors.txt (tests/unit/api_validate_test.c): for every operation, requests
breaking each modelled constraint alone and several at once, with the message DynamoDB gives
for each, worked out here independently of the C validator.

Usage:
  scripts/gen_model.py [MODEL...]          regenerate api/model_gen.c and the vectors
  scripts/gen_model.py --check [MODEL...]  regenerate in memory; exit 1 if the committed files
                                           differ (drift), 77 (skipped) if the model they were
                                           made from is not installed
MODEL: a service-2.json[.gz] of dynamodb, then optionally one of dynamodbstreams. Default:
pyenv's Python 3.11 botocore, else the running Python's botocore.

Which model --check compares against: the committed file names the botocore version and the
SHA-256 of each model it was made from. --check looks at every model it can find (the paths
given, pyenv's botocore, the running Python's botocore, Debian's python3-botocore) and
  - regenerates from the one with those exact digests and compares byte for byte (a change to
    this script or a hand edit of the output fails);
  - fails when a NEWER botocore than the recorded one is installed whose model differs (the
    tables are out of date: regenerate);
  - exits 77 (CTest: skipped) with a message naming what it needs when only older models are
    installed (Debian 12's python3-botocore 1.29 predates TableArn) or none.
The verdict depends only on which botocore packages are installed, never on the run.
"""
import gzip
import hashlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_C = os.path.join(ROOT, "api", "model_gen.c")
OUT_VECTORS = os.path.join(ROOT, "tests", "unit", "validate_vectors.txt")
PYENV = "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/botocore"
DEBIAN = "/usr/lib/python3/dist-packages/botocore"
SERVICES = ("dynamodb", "dynamodbstreams")
JAVA_PREFIX = "com.amazonaws.dynamodb.v20120810."
MAX_ERRORS = 10
TABLE_NAME_SHAPE = "TableArn"  # table names that may also be ARNs: a semantic name check

# kura's own request members, type-checked by pass 1 (and kept) like the model's: (operation,
# member, shape name, shape). The shapes are not reachable from any operation's input, so pass
# 2 does not walk them: api/validate.c (extension_checks) checks their ranges itself.
KURA_EXTENSIONS = [
    ("CreateTable", "KuraPartitions", "KuraPartitions", {"type": "integer"}),
]

# The order pass 1 (api/schema_types.c) visits a structure's members in, where it is not the
# model's: the first member of the wrong JSON type is the one reported. These are the orders of
# dynalite's validations (which record DynamoDB's messages); the members not named follow in
# model order, then the structure's kura extensions.
PASS1_ORDER = {
    "CreateTableInput": ["AttributeDefinitions", "TableName", "BillingMode",
                         "ProvisionedThroughput", "KeySchema", "LocalSecondaryIndexes",
                         "GlobalSecondaryIndexes", "DeletionProtectionEnabled",
                         "StreamSpecification", "Tags", "SSESpecification", "TableClass",
                         "WarmThroughput", "ResourcePolicy", "OnDemandThroughput"],
    "ListTablesInput": ["Limit", "ExclusiveStartTableName"],
    "UpdateTableInput": ["TableName", "AttributeDefinitions", "ProvisionedThroughput",
                         "BillingMode", "GlobalSecondaryIndexUpdates",
                         "DeletionProtectionEnabled", "StreamSpecification", "SSESpecification",
                         "TableClass", "OnDemandThroughput", "WarmThroughput"],
    "PutItemInput": ["ReturnConsumedCapacity", "TableName", "Item", "ConditionalOperator",
                     "Expected", "ReturnValues", "ReturnItemCollectionMetrics",
                     "ConditionExpression", "ExpressionAttributeValues",
                     "ExpressionAttributeNames", "ReturnValuesOnConditionCheckFailure"],
    "GetItemInput": ["ReturnConsumedCapacity", "AttributesToGet", "TableName", "Key",
                     "ConsistentRead", "ProjectionExpression", "ExpressionAttributeNames"],
    "UpdateItemInput": ["ReturnConsumedCapacity", "TableName", "ReturnItemCollectionMetrics",
                        "ReturnValues", "Key", "ConditionalOperator", "Expected",
                        "AttributeUpdates", "ConditionExpression", "UpdateExpression",
                        "ExpressionAttributeValues", "ExpressionAttributeNames",
                        "ReturnValuesOnConditionCheckFailure"],
    "DeleteItemInput": ["ReturnConsumedCapacity", "TableName", "ReturnValues",
                        "ReturnItemCollectionMetrics", "Key", "ConditionalOperator", "Expected",
                        "ConditionExpression", "ExpressionAttributeValues",
                        "ExpressionAttributeNames", "ReturnValuesOnConditionCheckFailure"],
    "QueryInput": ["Select", "IndexName", "ReturnConsumedCapacity", "QueryFilter", "TableName",
                   "ConditionalOperator", "AttributesToGet", "Limit", "KeyConditions",
                   "ExclusiveStartKey", "ConsistentRead", "ScanIndexForward",
                   "KeyConditionExpression", "FilterExpression", "ProjectionExpression",
                   "ExpressionAttributeValues", "ExpressionAttributeNames"],
    "ScanInput": ["Select", "IndexName", "TotalSegments", "ReturnConsumedCapacity", "TableName",
                  "ConditionalOperator", "ScanFilter", "Segment", "Limit", "AttributesToGet",
                  "ExclusiveStartKey", "FilterExpression", "ProjectionExpression",
                  "ExpressionAttributeValues", "ExpressionAttributeNames", "ConsistentRead"],
    "BatchGetItemInput": ["ReturnConsumedCapacity", "RequestItems"],
    "BatchWriteItemInput": ["ReturnConsumedCapacity", "ReturnItemCollectionMetrics",
                            "RequestItems"],
    "ProvisionedThroughput": ["WriteCapacityUnits", "ReadCapacityUnits"],
    "CreateGlobalSecondaryIndexAction": ["Projection", "IndexName", "ProvisionedThroughput",
                                         "KeySchema"],
    "ExpectedAttributeValue": ["AttributeValueList", "ComparisonOperator", "Exists", "Value"],
    "AttributeValueUpdate": ["Action", "Value"],
    "WriteRequest": ["DeleteRequest", "PutRequest"],
    "ConditionCheck": ["TableName"],
    "Put": ["TableName"],
    "Delete": ["TableName"],
    "Update": ["TableName"],
    "Get": ["TableName"],
}


# ---- Finding and reading models ----------------------------------------------------------------

def botocore_dirs():
    """Installed botocore packages: [(version tuple, directory)]."""
    dirs = [PYENV, DEBIAN]
    try:
        import botocore

        dirs.append(os.path.dirname(botocore.__file__))
    except ImportError:
        pass
    found = {}
    for d in dirs:
        init = os.path.join(d, "__init__.py")
        if not os.path.exists(init):
            continue
        with open(init, encoding="utf-8") as f:
            m = re.search(r"__version__ = '([0-9.]+)'", f.read())
        if m:
            found[os.path.realpath(d)] = tuple(int(x) for x in m.group(1).split("."))
    return sorted(((v, d) for d, v in found.items()), reverse=True)


def service_file(botocore_dir, svc):
    base = os.path.join(botocore_dir, "data", svc)
    if not os.path.isdir(base):
        return None
    for ver in sorted(os.listdir(base), reverse=True):
        for name in ("service-2.json.gz", "service-2.json"):
            p = os.path.join(base, ver, name)
            if os.path.exists(p):
                return p
    return None


def read_model(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    return json.loads(raw), hashlib.sha256(raw).hexdigest()


def model_set(paths, version):
    """{svc: (model, sha)} from explicit paths, plus a label."""
    models = {}
    for svc, p in zip(SERVICES, paths):
        models[svc] = read_model(p)
    label = "botocore " + ".".join(map(str, version)) if version else "explicit model files"
    return models, label


# ---- Java patterns -> POSIX extended regular expressions ---------------------------------------

def java_class_ranges(body):
    """Code point ranges of a Java character class body (without brackets); (negated, ranges)."""
    neg = body.startswith("^")
    if neg:
        body = body[1:]
    items, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            e = body[i + 1]
            if e == "u":
                items.append(int(body[i + 2:i + 6], 16))
                i += 6
                continue
            if e == "x":
                items.append(int(body[i + 2:i + 4], 16))
                i += 4
                continue
            if e == "w":
                items.append(("w",))
                i += 2
                continue
            items.append({"t": 9, "n": 10, "r": 13}.get(e, ord(e)))
            i += 2
            continue
        items.append(ord(c) if c != "-" or not items or i + 1 == len(body) else "-")
        i += 1
    ranges, j = [], 0
    while j < len(items):
        it = items[j]
        if it == ("w",):
            ranges += [(48, 57), (65, 90), (95, 95), (97, 122)]
        elif j + 2 < len(items) and items[j + 1] == "-":
            ranges.append((it, items[j + 2]))
            j += 2
        else:
            ranges.append((it, it))
        j += 1
    # surrogate pairs written as \uD800\uDC00-\uDBFF\uDFFF mean U+10000..U+10FFFF
    if (0xD800, 0xD800) in ranges and (0xDC00, 0xDBFF) in ranges and (0xDFFF, 0xDFFF) in ranges:
        halves = ((0xD800, 0xD800), (0xDC00, 0xDBFF), (0xDFFF, 0xDFFF))
        ranges = [r for r in ranges if r not in halves]
        ranges.append((0x10000, 0x10FFFF))
    return neg, ranges


def ere_class(neg, ranges):
    """A POSIX bracket expression over bytes (a group for XML's characters). Code points past
    U+007F are matched by their UTF-8 bytes: only a class that accepts all of them, all but
    U+FFFE/U+FFFF (XML's characters), or none of them can be written, which is all DynamoDB's
    patterns need."""
    ascii_set = set()
    high = 0
    for lo, hi in ranges:
        for cp in range(lo, min(hi, 0x7F) + 1):
            ascii_set.add(cp)
        if hi >= 0x80:
            high += min(hi, 0x10FFFF) - max(lo, 0x80) + 1
    allowed_high = 0x10FFFF - 0x80 + 1 - 2048  # minus surrogates
    if high not in (0, allowed_high, allowed_high - 2):
        raise SystemExit(f"gen_model: cannot translate character class {ranges}")
    specials = [c for c in "][^-" if ord(c) in ascii_set]
    chars = sorted(ascii_set - {0} - {ord(c) for c in specials})
    body, k = "", 0
    while k < len(chars):
        m = k
        while m + 1 < len(chars) and chars[m + 1] == chars[m] + 1:
            m += 1
        body += chr(chars[k]) if k == m else chr(chars[k]) + "-" + chr(chars[m])
        k = m + 1
    # "]" must come first, "-" last, "^" anywhere but first
    first = "]" if "]" in specials else ""
    xml = high == allowed_high - 2  # all but U+FFFE and U+FFFF (UTF-8 EF BF BE, EF BF BF)
    rest = ("[" if "[" in specials else "") + (
        ("\x80-\xee\xf0-\xff" if xml else "\x80-\xff") if high and not neg else "")
    caret = "^" if "^" in specials else ""
    if caret and not (first or body or rest):
        raise SystemExit("gen_model: a class of only '^' cannot be written")
    tail = "-" if "-" in specials else ""
    bracket = "[" + ("^" if neg else "") + first + body + rest + caret + tail + "]"
    if xml and not neg:  # a character starting with EF: its two more bytes, but not BF BE/BF
        return "(" + bracket + "|\xef([\x80-\xbe][\x80-\xbf]|\xbf[\x80-\xbd]))"
    return bracket


def java_to_ere(pat):
    """DynamoDB's patterns match the whole value (Java's matches()): anchored ERE."""
    out, i = "", 0
    if pat.startswith("^"):
        pat = pat[1:]
    if pat.endswith("$") and not pat.endswith("\\$"):
        pat = pat[:-1]
    while i < len(pat):
        c = pat[i]
        if c == "[":
            j = i + 1
            while pat[j] != "]" or pat[j - 1] == "\\":
                j += 1
            out += ere_class(*java_class_ranges(pat[i + 1:j]))
            i = j + 1
        elif c == "\\" and pat[i + 1] == "p":
            j = pat.index("}", i)
            if pat[i + 2:j + 1] != "{Print}":
                raise SystemExit(f"gen_model: cannot translate {pat}")
            out += "[ -~]"
            i = j + 1
        elif c == "\\":
            out += "\\" + pat[i + 1]
            i += 2
        else:
            out += c
            i += 1
    return "^(" + out + ")$"


def python_pattern(pat):
    """The same pattern for Python's re (the test oracle), on code points."""
    p = pat.replace("\\p{Print}", "[\\x20-\\x7e]")
    p = p.replace("\\uD800\\uDC00-\\uDBFF\\uDFFF", "\\U00010000-\\U0010FFFF")
    return re.compile(p)


def java_hash(s):
    """Java's String.hashCode()."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def enum_set_order(values):
    """The order DynamoDB prints an enum's value set in: by String.hashCode() modulo 32 (64 past
    24 values), values in the same bucket later-in-the-model first. The rule gives every set
    DynamoDB is known to print (dynalite's recorded messages: [ALL_NEW, UPDATED_OLD, ALL_OLD,
    NONE, UPDATED_NEW], [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES],
    the 13 comparison operators, [B, N, S], [OR, AND], [ALL, INCLUDE, KEYS_ONLY], ...)."""
    cap = 32
    while len(values) > cap * 3 // 4:
        cap *= 2
    return sorted(values, key=lambda v: (java_hash(v) & (cap - 1), -values.index(v)))


def c_string(s, encoding="utf-8"):
    """A C string literal of s (an ERE is latin-1: each character one byte)."""
    out = '"'
    for ch in s.encode(encoding):
        c = chr(ch)
        if c in '"\\':
            out += "\\" + c
        elif 0x20 <= ch < 0x7F and c != "?":
            out += c
        else:
            out += "\\%03o" % ch
    return out + '"'


# ---- The shape table ---------------------------------------------------------------------------

TYPES = {"string": "MT_STRING", "boolean": "MT_BOOLEAN", "integer": "MT_INTEGER",
         "long": "MT_LONG", "blob": "MT_BLOB", "list": "MT_LIST", "map": "MT_MAP",
         "structure": "MT_STRUCT", "timestamp": "MT_TIMESTAMP", "double": "MT_DOUBLE"}


class Tables:
    """The shapes reachable from the operations' inputs, numbered in the order a walk from the
    operations (by name) first meets them; the strings of patterns and enums shared."""

    def __init__(self, models):
        self.shapes = []      # [(svc, name, shape dict)]
        self.ids = {}         # (svc, name) -> id
        self.ops = []         # [(op name, svc, input shape id or -1)]
        self.models = models
        for svc in SERVICES:
            if svc not in models:
                continue
            m = models[svc][0]
            for op in sorted(m["operations"]):
                inp = m["operations"][op].get("input")
                self.ops.append((op, svc, self.add(svc, inp["shape"]) if inp else -1))
        self.ops.sort()
        self.extensions = {}  # input shape id -> [(member name, shape id)]
        for op, member, sname, shape in KURA_EXTENSIONS:
            sid = len(self.shapes)
            self.ids[("kura", sname)] = sid
            self.shapes.append(("kura", sname, shape))
            inp = [o[2] for o in self.ops if o[0] == op][0]
            self.extensions.setdefault(inp, []).append((member, sid))
        self.checked = self.compute_checked()

    def add(self, svc, name):
        key = (svc, name)
        if key in self.ids:
            return self.ids[key]
        sid = len(self.shapes)
        self.ids[key] = sid
        shape = self.models[svc][0]["shapes"][name]
        self.shapes.append((svc, name, shape))
        for k in ("member", "key", "value"):
            if k in shape:
                self.add(svc, shape[k]["shape"])
        for mem in shape.get("members", {}).values():
            self.add(svc, mem["shape"])
        return sid

    def child(self, sid, k):
        svc, _, shape = self.shapes[sid]
        return self.ids[(svc, shape[k]["shape"])]

    def members(self, sid):
        svc, _, shape = self.shapes[sid]
        req = set(shape.get("required", []))
        return [(n, self.ids[(svc, m["shape"])], n in req)
                for n, m in shape.get("members", {}).items()]

    def pass1_order(self, sid):
        """Indexes into members(sid) in pass 1's order (PASS1_ORDER, then the model's)."""
        names = [m[0] for m in self.members(sid)]
        first = [names.index(n) for n in PASS1_ORDER.get(self.shapes[sid][1], [])]
        if len(set(first)) != len(first):
            raise SystemExit(f"gen_model: PASS1_ORDER of {self.shapes[sid][1]} repeats a member")
        return first + [i for i in range(len(names)) if i not in first]

    def own_checks(self, sid):
        _, name, s = self.shapes[sid]
        return any(k in s for k in ("min", "max", "pattern", "enum")) or name == TABLE_NAME_SHAPE

    def compute_checked(self):
        """Shapes whose value can break a constraint somewhere below (the rest is not walked)."""
        checked = [self.own_checks(i) for i in range(len(self.shapes))]
        changed = True
        while changed:
            changed = False
            for i, (_, _, s) in enumerate(self.shapes):
                if checked[i]:
                    continue
                kids = [self.child(i, k) for k in ("member", "key", "value") if k in s]
                kids += [m[1] for m in self.members(i)]
                if any(checked[k] for k in kids) or any(m[2] for m in self.members(i)):
                    checked[i] = True
                    changed = True
        return checked


def emit_c(t, source):
    patterns, enums, members, rows, walked, typed = [None], [], [], [], [], []
    # kura's extension members follow the model's in model_members (no structure's a..a+b
    # reaches them: pass 2 does not walk them), numbered from here
    ext_rows, ext_first = [], sum(len(s.get("members", {})) for _, _, s in t.shapes
                                  if s["type"] == "structure")
    for sid, (svc, name, s) in enumerate(t.shapes):
        flags = []
        if "min" in s:
            flags.append("MS_MIN")
        if "max" in s:
            flags.append("MS_MAX")
        if t.checked[sid]:
            flags.append("MS_CHECKED")
        if name == TABLE_NAME_SHAPE:
            flags.append("MS_TABLE_NAME")
        pat = 0
        if "pattern" in s:
            if s["pattern"] not in patterns:
                patterns.append(s["pattern"])
            pat = patterns.index(s["pattern"])
        e0, en = len(enums), len(s.get("enum", []))
        enums += enum_set_order(s.get("enum", []))
        a = b = c = d = e = f = 0
        if s["type"] == "structure":
            a, b = len(members), len(s.get("members", {}))
            c = len(walked)
            walked += [a + i for i, (_, msid, req) in enumerate(t.members(sid))
                       if req or t.checked[msid]]
            d = len(walked) - c
            e = len(typed)
            typed += [a + i for i in t.pass1_order(sid)]
            for mname, msid in t.extensions.get(sid, []):
                typed.append(ext_first + len(ext_rows))
                ext_rows.append(f"    {{{c_string(mname)}, {len(mname)}, {msid}, 0}}, "
                                f"/* kura's, of {name} */")
            f = len(typed) - e
            if b > 64:
                raise SystemExit(f"gen_model: {name} has more than 64 members (api/validate.c)")
            for mname, msid, req in t.members(sid):
                mflags = ((["MM_REQUIRED"] if req else []) +
                          (["MM_CHECKED"] if t.checked[msid] else []))
                members.append(f"    {{{c_string(mname)}, {len(mname)}, {msid}, "
                               f"{' | '.join(mflags) or '0'}}},")
        elif s["type"] == "list":
            a = t.child(sid, "member")
        elif s["type"] == "map":
            a, b = t.child(sid, "key"), t.child(sid, "value")
        rows.append(f"    /* {sid} {svc}:{name} */ {{{c_string(name)}, {TYPES[s['type']]}, "
                    f"{' | '.join(flags) or '0'}, {pat}, {e0}, {en}, {a}, {b}, {c}, {d}, "
                    f"{e}, {f}, {s.get('min', 0)}, {s.get('max', 0)}}},")
    lines = [
        "/*",
        " * model_gen.c - This file contains DynamoDB's request model as C tables (api/model.h):",
        " * GENERATED by scripts/gen_model.py from " + source + ".",
        " * Do not edit: regenerate with `scripts/gen_model.py` (CTest gen_model_check compares).",
        " */",
        '#include "api/model.h"',
        "",
        "const char *const model_source = " + c_string(source) + ";",
        "",
        "/* The patterns as DynamoDB prints them, and as anchored POSIX EREs over UTF-8 bytes. */",
        "const char *const model_patterns[] = {",
        "    NULL,",
    ]
    lines += [f"    {c_string(p)}," for p in patterns[1:]]
    lines += ["};", "const char *const model_pattern_eres[] = {", "    NULL,"]
    lines += [f"    {c_string(java_to_ere(p), 'latin-1')}," for p in patterns[1:]]
    lines += ["};", f"const unsigned model_pattern_count = {len(patterns)};", "",
              "const char *const model_enums[] = {"]
    lines += [f"    {c_string(e)}," for e in enums]
    lines += ["};", "", "const model_member model_members[] = {"] + members + ext_rows
    lines += ["};", "",
              "/* Each structure's members in the order pass 1 checks them (model_members "
              "indexes). */",
              "const uint16_t model_typed[] = {"]
    lines += ["    " + ", ".join(str(x) for x in typed[i:i + 16]) + ","
              for i in range(0, len(typed), 16)]
    lines += ["};", "",
              "/* Each structure's required or checked members (model_members indexes). */",
              "const uint16_t model_walked[] = {"]
    lines += ["    " + ", ".join(str(x) for x in walked[i:i + 16]) + ","
              for i in range(0, len(walked), 16)]
    lines += ["};", "",
              "/* name, type, flags, pattern, enum first, enum count, a, b, walked first, walked "
              "count, typed first, typed count, min, max */",
              "const model_shape model_shapes[] = {"] + rows
    lines += ["};", f"const unsigned model_shape_count = {len(t.shapes)};",
              f"const uint16_t model_attribute_value = {t.ids[('dynamodb', 'AttributeValue')]};",
              "",
              "/* Sorted by name (model_find_op searches it). */", "const model_op model_ops[] = {"]
    lines += [f"    {{{c_string(op)}, {sid}}}, /* {svc} */" for op, svc, sid in t.ops]
    lines += ["};", f"const unsigned model_op_count = {len(t.ops)};", ""]
    return "\n".join(lines)


# ---- The test oracle: DynamoDB's messages for a request, worked out in Python ------------------

NAME_PATTERN = "[a-zA-Z0-9_.-]+"
NAME_RE = re.compile(NAME_PATTERN)
# A table's ARN stands in for a table name (api/validate.c is_arn, engine/arn.c arn_split).
TABLE_ARN_RE = re.compile(r"arn:aws:dynamodb:[^:]+:[0-9]+:table/[a-zA-Z0-9_.-]{3,255}")


def lcfirst(s):
    return s[:1].lower() + s[1:]


def fnv1a(text):
    h = 0x811C9DC5
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def utf16_len(s):
    return sum(2 if ord(c) > 0xFFFF else 1 for c in s)


def enum_message(values):
    return f"Member must satisfy enum value set: [{', '.join(enum_set_order(values))}]"


class Oracle:
    def __init__(self, t):
        self.t = t
        self.res = {}

    def shape(self, sid):
        return self.t.shapes[sid][2]

    def render(self, v, sid):
        """DynamoDB's text of a value: Java's toString of what it deserialized."""
        s = self.shape(sid)
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, str):
            return v
        if isinstance(v, list):
            el = self.t.child(sid, "member") if s["type"] == "list" else sid
            return "[" + ", ".join(self.render(e, el) for e in v) + "]"
        if s["type"] == "map":
            vs = self.t.child(sid, "value")
            return "{" + ", ".join(f"{k}={self.render(e, vs)}" for k, e in v.items()) + "}"
        text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
        return "%s%s@%08x" % (JAVA_PREFIX, self.t.shapes[sid][1], fnv1a(text))

    def constraints(self, sid, value):
        """The messages of the constraints of shape sid that value breaks, in DynamoDB's order
        (pattern, enum, length, range); with value None: all of them, in the order a map's
        "Map keys/value must satisfy constraint: [...]" lists them."""
        s = self.shape(sid)
        out = []
        is_str = isinstance(value, str)
        length = (utf16_len(value) if is_str else
                  len(value) if isinstance(value, (list, dict)) else None)
        num = value if isinstance(value, int) and not isinstance(value, bool) else None
        if value is None:
            if s["type"] in ("string", "list", "map"):
                if "max" in s:
                    out.append(f"Member must have length less than or equal to {s['max']}")
                if "min" in s:
                    out.append(f"Member must have length greater than or equal to {s['min']}")
            if "pattern" in s:
                out.append(f"Member must satisfy regular expression pattern: {s['pattern']}")
            if "enum" in s:
                out.append(enum_message(s["enum"]))
            return out
        if "pattern" in s and is_str and not python_pattern(s["pattern"]).fullmatch(value):
            out.append(f"Member must satisfy regular expression pattern: {s['pattern']}")
        if "enum" in s and is_str and value not in s["enum"]:
            out.append(enum_message(s["enum"]))
        if s["type"] in ("string", "list", "map") and length is not None:
            if "min" in s and length < s["min"]:
                out.append(f"Member must have length greater than or equal to {s['min']}")
            if "max" in s and length > s["max"]:
                out.append(f"Member must have length less than or equal to {s['max']}")
        if s["type"] in ("integer", "long") and num is not None:
            if "min" in s and num < s["min"]:
                out.append(f"Member must have value greater than or equal to {s['min']}")
            if "max" in s and num > s["max"]:
                out.append(f"Member must have value less than or equal to {s['max']}")
        return out

    @staticmethod
    def name_breaks(value):
        """The semantic table-name check of a TableArn value that is not an ARN."""
        if not isinstance(value, str) or TABLE_ARN_RE.fullmatch(value):
            return []
        out = []
        if not NAME_RE.fullmatch(value):
            out.append(f"Member must satisfy regular expression pattern: {NAME_PATTERN}")
        if utf16_len(value) < 3:
            out.append("Member must have length greater than or equal to 3")
        if utf16_len(value) > 255:
            out.append("Member must have length less than or equal to 255")
        return out

    def fits(self, sid, v):
        t = self.shape(sid)["type"]
        return ((t == "string" and isinstance(v, str)) or
                (t in ("integer", "long") and isinstance(v, int) and not isinstance(v, bool)) or
                (t == "list" and isinstance(v, list)) or
                (t in ("map", "structure") and isinstance(v, dict)))

    def err(self, errs, path, v, sid, msg):
        shown = "null" if v is None else "'" + self.render(v, sid) + "'"
        errs.append(f"Value {shown} at '{'.'.join(path)}' failed to satisfy constraint: {msg}")

    def walk(self, sid, v, path, errs, names, own=True):
        s = self.shape(sid)
        if not self.fits(sid, v):
            return
        if own:
            for msg in self.constraints(sid, v):
                self.err(errs, path, v, sid, msg)
            if self.t.shapes[sid][1] == TABLE_NAME_SHAPE:
                for msg in self.name_breaks(v):
                    self.err(names, path, v, sid, msg)
        if s["type"] == "structure":
            for name, msid, req in self.t.members(sid):
                mv = v.get(name)
                if mv is None:
                    if req:
                        self.err(errs, path + [lcfirst(name)], None, msid,
                                 "Member must not be null")
                    continue
                if self.t.checked[msid]:
                    self.walk(msid, mv, path + [lcfirst(name)], errs, names)
        elif s["type"] == "list":
            el = self.t.child(sid, "member")
            if self.t.checked[el]:
                for i, e in enumerate(v):
                    self.element(el, e, path + [str(i + 1), "member"], errs, names, True)
        elif s["type"] == "map":
            self.map_entries(sid, v, path, errs, names)

    def element(self, sid, e, path, errs, names, own):
        if e is None:
            if self.shape(sid)["type"] in ("structure", "list", "map"):
                self.err(errs, path, None, sid, "Member must not be null")
            return
        self.walk(sid, e, path, errs, names, own)

    def map_entries(self, sid, v, path, errs, names):
        ks, vs = self.t.child(sid, "key"), self.t.child(sid, "value")
        for k in v:
            if self.constraints(ks, k):
                self.err(errs, path, v, sid, "Map keys must satisfy constraint: [" +
                         ", ".join(self.constraints(ks, None)) + "]")
            if self.t.shapes[ks][1] == TABLE_NAME_SHAPE and self.name_breaks(k):
                self.err(names, path, v, sid, "Map keys must satisfy constraint: [" +
                         ", ".join(["Member must have length less than or equal to 255",
                                    "Member must have length greater than or equal to 3",
                                    "Member must satisfy regular expression pattern: " +
                                    NAME_PATTERN]) + "]")
        for k, e in v.items():
            if e is not None and self.fits(vs, e) and self.constraints(vs, e):
                self.err(errs, path, v, sid, "Map value must satisfy constraint: [" +
                         ", ".join(self.constraints(vs, None)) + "]")
        if self.t.checked[vs]:
            for k, e in v.items():
                self.element(vs, e, path + [k, "member"], errs, names, False)

    def message(self, op, op_sid, req):
        errs, names = [], []
        self.walk(op_sid, req, [], errs, names)
        if op == "CreateTable" and "GlobalTableSourceArn" not in req:
            # kura's semantic check (api/validate.c): a table not made from a global table
            # source needs what the model no longer requires
            for name in ("AttributeDefinitions", "KeySchema"):
                if req.get(name) is None:
                    self.err(names, [lcfirst(name)], None, op_sid, "Member must not be null")
            keys = [m[1] for m in self.t.members(op_sid) if m[0] == "KeySchema"][0]
            bound = "Member must have length less than or equal to 2"
            if isinstance(req.get("KeySchema"), list) and len(req["KeySchema"]) > 2:
                self.err(names, ["keySchema"], req["KeySchema"], keys, bound)
            for i, lsi in enumerate(req.get("LocalSecondaryIndexes") or []):
                ks = lsi.get("KeySchema") if isinstance(lsi, dict) else None
                if isinstance(ks, list) and len(ks) > 2:
                    self.err(names, ["localSecondaryIndexes", str(i + 1), "member", "keySchema"],
                             ks, keys, bound)
        errs = (errs or names)[:MAX_ERRORS]
        if not errs:
            return ""
        n = len(errs)
        return f"{n} validation error{'s' if n > 1 else ''} detected: " + "; ".join(errs)


# ---- Test vectors ------------------------------------------------------------------------------

PATTERN_EXAMPLES = {
    "[a-zA-Z0-9_.-]+": "abc", "\\p{Print}+": "p", "^[^\\$]+$": "tok", "[,;:|\\t ]": ",",
    "[\\x20-\\x21\\x23-\\x2B\\x2D-\\x7E]*": "h", "([0-9a-f]{16})+": "0123456789abcdef",
    "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$": "bucket", "[0-9]{12}": "123456789012",
    "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*": "role",
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}":
        "01234567-89ab-cdef-0123-456789abcdef",
}
LONGEST = 2048  # longer strings and lists are not built (no DynamoDB input shape needs more)


# Strings each pattern is tried on (the C side matches a POSIX translation, the oracle Java's)
PATTERN_PROBES = ["abc", "a_b.c-d", "ABC123", "a b", "a$b", "$", "a\tb", ",", ";", "\t", " ",
                  "a\u00e9", "\u00e9\u00e9\u00e9", "\U0001F600x", "\ufffe", "a\x7f", "a\"b", "a,b",
                  "0123456789abcdef0123456789abcdef", "0123456789abcdeF", "123456789012",
                  "12345678901", "-bucket", "bucket-", "b.u_c-k", "x" * 127, "x" * 128,
                  "01234567-89ab-cdef-0123-456789abcdef", "01234567-89AB-cdef-0123-456789abcdef",
                  "a\nb", "a\rb", "[", "]", "^", "\\", "~", "a\x01"]


class Vectors:
    def __init__(self, t):
        self.t, self.o = t, Oracle(t)
        self.probed = set()

    def valid(self, sid, full, depth=0, salt=0):
        """A value of shape sid that breaks nothing: required members only, or (full) every
        member that has checks below it too."""
        _, name, s = self.t.shapes[sid]
        ty = s["type"]
        if ty == "string":
            if "enum" in s:
                return s["enum"][0]
            base = ("Tbl" if name == TABLE_NAME_SHAPE else
                    PATTERN_EXAMPLES.get(s.get("pattern"), "v"))
            if "pattern" in s and s["pattern"] not in PATTERN_EXAMPLES:
                raise SystemExit(f"gen_model: no example of pattern {s['pattern']}")
            if salt:
                base = base + str(salt) if "pattern" not in s or base.isalnum() else base
            n = max(s.get("min", 1), len(base))
            return (base * n)[:n] if "pattern" not in s else base
        if ty in ("integer", "long"):
            return s.get("min", s.get("max", 1) if s.get("max", 1) < 1 else 1)
        if ty == "boolean":
            return True
        if ty == "blob":
            return "AA=="
        if ty in ("timestamp", "double"):
            return 1
        if ty == "list":
            el = self.t.child(sid, "member")
            return [self.valid(el, full, depth + 1, i) for i in range(max(s.get("min", 1), 1))]
        if ty == "map":
            ks, vs = self.t.child(sid, "key"), self.t.child(sid, "value")
            return {self.valid(ks, full, depth + 1, i): self.valid(vs, full, depth + 1)
                    for i in range(max(s.get("min", 1), 1))}
        out = {}
        for mname, msid, req in self.t.members(sid):
            if req or (full and depth < 5 and self.t.checked[msid]):
                out[mname] = self.valid(msid, full, depth + 1)
        return out

    def breaks(self, sid, v):
        """Values of shape sid breaking one constraint each."""
        _, name, s = self.t.shapes[sid]
        ty, out = s["type"], []
        if ty == "string":
            if "min" in s and s["min"] > 0:
                out.append(v[:s["min"] - 1] if len(v) >= s["min"] else "")
            if "max" in s and s["max"] < LONGEST:
                out.append((v * (s["max"] + 1))[:s["max"] + 1])
            if "pattern" in s:
                out.append("!" * max(s.get("min", 1), 1))
                if s["pattern"] not in self.probed:  # the pattern's translation, once each
                    self.probed.add(s["pattern"])
                    out += [p for p in PATTERN_PROBES if p != v]
            if "enum" in s:
                out.append("NOT_" + s["enum"][0])
            if name == TABLE_NAME_SHAPE:
                out += ["ab", "a!b", "x" * 256, "a!",
                        "arn:aws:dynamodb:us-east-1:123456789012:table/Tbl",
                        "arn:aws:dynamodb:us-east-1:123456789012:table/T",
                        "arn:aws:dynamodb:us-east-1:123456789012:table/Tbl/index/I"]
        elif ty in ("integer", "long"):
            if "min" in s:
                out.append(s["min"] - 1)
            if "max" in s:
                out.append(s["max"] + 1)
        elif ty in ("list", "map"):
            if "min" in s and s["min"] > 0:
                out.append([] if ty == "list" else {})
            if "max" in s and s["max"] < LONGEST:
                if ty == "list":
                    out.append([v[0]] * (s["max"] + 1))
                else:
                    ks, vs = self.t.child(sid, "key"), self.t.child(sid, "value")
                    one = next(iter(v.values()))
                    out.append({self.valid(ks, False, 9, i + 1): one for i in range(s["max"] + 1)})
            if ty == "map":
                ks = self.t.child(sid, "key")
                if self.o.constraints(ks, ""):
                    out.append(dict(v, **{"": next(iter(v.values()))}))
                if self.t.shapes[ks][1] == TABLE_NAME_SHAPE:
                    out.append(dict(v, **{"ab": next(iter(v.values()))}))
        return out

    def positions(self, sid, v, at, shapes, depth=0):
        """(path in the request, the shapes along it, value, required) of every checked value
        inside v."""
        s = self.t.shapes[sid][2]
        if s["type"] == "structure" and isinstance(v, dict):
            for mname, msid, req in self.t.members(sid):
                if mname in v and self.t.checked[msid]:
                    yield at + [mname], shapes + [msid], v[mname], req
                    if depth < 6:
                        yield from self.positions(msid, v[mname], at + [mname], shapes + [msid],
                                                  depth + 1)
        elif s["type"] == "list" and v:
            el = self.t.child(sid, "member")
            yield from self.positions(el, v[0], at + [0], shapes + [el], depth + 1)
        elif s["type"] == "map" and v:
            k, vs = next(iter(v)), self.t.child(sid, "value")
            yield from self.positions(vs, v[k], at + [k], shapes + [vs], depth + 1)

    def sparse(self, req, path, shapes):
        """req (the minimal request) with the members along path added, each minimal."""
        out = json.loads(json.dumps(req))
        node = out
        for step, sid in zip(path[:-1], shapes[:-1]):
            if isinstance(node, dict) and step not in node:
                node[step] = self.valid(sid, False)
            node = node[step]
        if isinstance(node, dict) and path[-1] not in node:
            node[path[-1]] = self.valid(shapes[-1], False)
        return out

    @staticmethod
    def at(req, path):
        for step in path:
            req = req[step]
        return req

    @staticmethod
    def replaced(req, path, value, delete=False):
        out = json.loads(json.dumps(req))
        node = out
        for step in path[:-1]:
            node = node[step]
        if delete:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return out

    def op_vectors(self, op, sid):
        full, small = self.valid(sid, True), self.valid(sid, False)
        vecs = [small, full]
        firsts = []
        for path, shapes, v, req in list(self.positions(sid, full, [], [])):
            base = self.sparse(small, path, shapes)
            v = self.at(base, path)
            if req:
                vecs.append(self.replaced(base, path, None, delete=True))
            for i, b in enumerate(self.breaks(shapes[-1], v)):
                vecs.append(self.replaced(base, path, b))
                if i == 0 and len(path) == 1:
                    firsts.append((path, b))
        if len(firsts) > 1:  # several at once: the first break of every top-level member
            many = full
            for path, b in firsts:
                many = self.replaced(many, path, b)
            vecs.append(many)
            vecs.append({})  # every required member missing
        # the first break of every string and number anywhere at once (past the cap of 10)
        leaves = [(path, self.breaks(shapes[-1], v)) for path, shapes, v, _ in
                  self.positions(sid, full, [], [])
                  if self.t.shapes[shapes[-1]][2]["type"] in ("string", "integer", "long")]
        if len([b for _, b in leaves if b]) > MAX_ERRORS:
            many = full
            for path, b in leaves:
                if b:
                    many = self.replaced(many, path, b[0])
            vecs.append(many)
        if op == "CreateTable":  # the semantic key schema bound, table and local index
            full = {k: v for k, v in full.items() if k != "GlobalTableSourceArn"}
            vecs.append(full)
            three = json.loads(json.dumps(full))
            three["KeySchema"] = three["KeySchema"] * 3
            vecs.append(three)
            lsi = json.loads(json.dumps(full))
            lsi["LocalSecondaryIndexes"][0]["KeySchema"] *= 3
            vecs.append(lsi)
        lines = []
        for req in vecs:
            body = json.dumps(req, separators=(",", ":"))
            lines.append(f"{op}\t{body}\t{json.dumps(self.o.message(op, sid, req))}")
        return lines

    def text(self):
        lines = ["# validate_vectors.txt: GENERATED by scripts/gen_model.py; for each request, the",
                 "# message of DynamoDB's modelled checks (\"\": none). Columns: operation,",
                 "# request, expected message (JSON), separated by tabs."]
        for op, _svc, sid in self.t.ops:
            lines += self.op_vectors(op, sid)
        return "\n".join(lines) + "\n"


# ---- Main --------------------------------------------------------------------------------------

def source_label(label, models):
    return label + ": " + ", ".join(
        f"{svc} {models[svc][0]['metadata']['apiVersion']} sha256:{models[svc][1][:16]}"
        for svc in SERVICES if svc in models)


def generate(models, label):
    t = Tables(models)
    return emit_c(t, source_label(label, models)), Vectors(t).text()


def default_models():
    for version, d in botocore_dirs():
        paths = [service_file(d, svc) for svc in SERVICES]
        if all(paths):
            return model_set(paths, version)
    sys.exit("gen_model: no botocore model found; give the service-2.json paths")


def committed_source():
    try:
        with open(OUT_C, encoding="utf-8") as f:
            m = re.search(r'model_source = "([^"]*)"', f.read())
        return m.group(1) if m else ""
    except FileNotFoundError:
        return ""


def check(paths):
    source = committed_source()
    want = re.search(r"botocore ([0-9.]+)", source)
    want_version = tuple(int(x) for x in want.group(1).split(".")) if want else ()
    candidates = []
    if paths:
        candidates.append(model_set(paths, None))
    for version, d in botocore_dirs():
        svc_paths = [service_file(d, svc) for svc in SERVICES]
        if all(svc_paths):
            candidates.append(model_set(svc_paths, version) + (version,))
    newer = []
    for cand in candidates:
        models, label = cand[0], cand[1]
        if source.split(": ", 1)[-1] == source_label(label, models).split(": ", 1)[-1]:
            c_text, vec_text = generate(models, source.split(": ", 1)[0])
            bad = [p for p, text in ((OUT_C, c_text), (OUT_VECTORS, vec_text))
                   if not os.path.exists(p) or open(p, encoding="utf-8").read() != text]
            for p in bad:
                print(f"gen_model: {os.path.relpath(p, ROOT)} differs from what {label}'s model "
                      f"gives: run scripts/gen_model.py")
            print(f"gen_model: checked against {label}: {'FAIL' if bad else 'ok'}")
            return 1 if bad else 0
        if len(cand) > 2 and cand[2] > want_version:
            newer.append(label)
    if newer:
        print(f"gen_model: the tables come from {source or 'nothing'}; the newer {newer[0]} "
              f"is installed and its model differs: run scripts/gen_model.py")
        return 1
    print(f"gen_model: SKIPPED: the tables come from {source}; that model is not installed "
          f"(found: {', '.join(c[1] for c in candidates) or 'none'}); install that botocore "
          f"(pip install botocore=={'.'.join(map(str, want_version))}) to check them")
    return 77


def main(argv):
    args = [a for a in argv if a != "--check"]
    if "--check" in argv:
        return check(args)
    models, label = model_set(args, None) if args else default_models()
    c_text, vec_text = generate(models, label)
    for p, text in ((OUT_C, c_text), (OUT_VECTORS, vec_text)):
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"gen_model: wrote {os.path.relpath(OUT_C, ROOT)} and "
          f"{os.path.relpath(OUT_VECTORS, ROOT)} "
          f"from {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
