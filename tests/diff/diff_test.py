#!/usr/bin/env python3
"""diff_test.py - This file contains the differential test: long random sequences of DynamoDB
operations (gen.py) run against kura and against the reference model (refmodel.py), comparing
every response.

Design. kura runs as one `kura --data DIR pipe` process: each request is written as the line
"<Operation> <json>" and answered by one line "<0|1> <response json>" (0: success). Responses are
compared after a canonicalisation that removes only what DynamoDB leaves unordered: the members
of SS/NS/BS sets and the order of BatchGetItem's Responses lists. Everything else is compared
exactly: the set of top-level fields (so an unrequested ConsumedCapacity or a stray
LastEvaluatedKey is a mismatch), item order in Query pages, the canonical number text, error
__type, and the error message wherever the model states it (refmodel: message None = the type
only).

Query is followed page by page (each page compared, the next ExclusiveStartKey taken from
kura). Scan order is hash order, so a Scan is followed through all of kura's pages and the union
is compared with the model's full result as a multiset (with the total Count and ScannedCount,
and Limit respected by each page); a parallel scan does the same over every segment, and the
union over the segments must equal the full scan. Every --reopen-every ops the kura process is
closed and restarted on the same directory; at the end every table and every index is compared
in full, before and after one more reopen.

Secondary indexes. The tables have random LSIs and GSIs (gen_index.py; refindex.py models
them). LSIs are read at once (kura keeps them current). GSIs are eventually consistent, so
before a GSI is read the harness waits until it has caught up with every write acknowledged:
the pipe's KuraIndexWait pseudo-operation (kura_index_wait), kura-server's POST /kura/index-wait.
Where neither exists (an older kura, another endpoint) a GSI read is instead retried until it
matches the model, for at most CONVERGE_S seconds, and then reported: still a deterministic
verdict as long as the index converges. Now and then an UpdateTable creates or deletes a GSI.
After a Delete the harness polls DescribeTable until the index is gone; after a Create the
random writes go on while kura builds the index in the background (no read of it is generated
meanwhile), until a "settle" op polls DescribeTable until it is ACTIVE. Either wait lasts at
most DDL_WAIT_S seconds (a longer one is a mismatch).

Skip flags (--skip) leave out classes of operations; those of gen.KNOWN_BUGS (kura bugs still
open) are left out unless --include-known-bugs is given.

On the first mismatch the test prints the seed, the op index, the request, both responses and the
last 20 ops, and exits 1 (--keep-going: counts mismatches, re-synchronises the model from kura
and continues). --self-test injects two bugs into the model, one at a time (an off-by-one Limit;
an index that is not sparse), and passes only if the harness reports a mismatch for each, the
second on a read of an index.

Usage: diff_test.py --kura build/bin/kura [--ops N] [--seed S] [--skip flag,...]
       diff_test.py --endpoint http://localhost:8000   (any DynamoDB-compatible endpoint, e.g.
                    DynamoDB Local; there only error types are compared, not their texts;
                    DynamoDB Local needs --skip multi_key_gsi)
       diff_test.py --against-model                     (the harness against a second model)
Environment: KURA_DIFF_OPS (default 20000 x KURA_TEST_SCALE), KURA_DIFF_SEED.

Seeds. Every random choice comes from the seed: --seed, else KURA_DIFF_SEED, else a fixed
default (1), so a CI run gives the same verdict every time; KURA_DIFF_SEED=random picks a fresh
one. The seed is printed first, with the line that reruns the same test. PYTHONHASHSEED is
pinned to 0 as well (the script re-executes itself with it when it is unset), so even an
iteration over a set of strings goes the same way in every run.
"""

import argparse
import collections
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
import gen_index  # noqa: E402
import refindex  # noqa: E402
import refmodel  # noqa: E402


DEFAULT_SEED = 1
CONVERGE_S = 10.0  # how long a GSI read is retried when the index cannot be waited for
DDL_WAIT_S = 30.0  # how long a GSI may take to be built or dropped after UpdateTable


class BackendError(Exception):
    pass


# ---- systems under test ----------------------------------------------------------------------

class PipeBackend:
    """kura through `kura --data DIR pipe`."""

    def __init__(self, binary, data_dir, extra_args=()):
        self.binary = binary
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.proc = None
        self.ascii_toggle = False
        self.start()

    def start(self):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.binary, "--data", self.data_dir] + self.extra_args +
                                     ["pipe"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr)

    def died(self, what):
        self.stderr.seek(0)
        err = self.stderr.read().decode("utf-8", "replace")
        rc = self.proc.poll()
        return BackendError("kura %s (exit status %s); stderr:\n%s" % (what, rc, err[-4000:]))

    def call(self, op, body):
        # Alternate between \u escapes and raw UTF-8 so both paths of kura's JSON input are used.
        self.ascii_toggle = not self.ascii_toggle
        line = op + " " + json.dumps(body, ensure_ascii=self.ascii_toggle) + "\n"
        try:
            self.proc.stdin.write(line.encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self.died("closed its input")
        out = self.proc.stdout.readline()
        if not out:
            raise self.died("exited")
        text = out.decode("utf-8")
        code, _, rest = text.partition(" ")
        if code not in ("0", "1"):
            raise BackendError("kura: malformed response line %r" % text[:300])
        try:
            return code == "0", json.loads(rest)
        except ValueError as e:
            raise BackendError("kura: response is not JSON (%s): %r" % (e, rest[:300]))

    def index_wait(self, table, index):
        """KuraIndexWait: True once the index has caught up, False if the pipe has no such
        pseudo-operation."""
        ok, body = self.call("KuraIndexWait", {"TableName": table, "IndexName": index,
                                               "TimeoutMillis": int(CONVERGE_S * 1000)})
        if ok:
            return True
        if body.get("__type", "").endswith("#UnknownOperationException"):
            return False
        raise BackendError("KuraIndexWait %s %s: %s" % (table, index, json.dumps(body)))

    def close(self):
        if self.proc is None:
            return
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise BackendError("kura did not exit within 120 s of closing its input")
        self.proc.stdout.close()
        if rc != 0:
            raise self.died("exited with an error on close")
        self.proc = None

    def reopen(self):
        self.close()
        self.start()


class HttpBackend:
    """Any DynamoDB-compatible HTTP endpoint (DynamoDB Local, kura-server)."""

    def __init__(self, url):
        self.url = url

    def call(self, op, body):
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers={
            "X-Amz-Target": "DynamoDB_20120810." + op,
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": "AWS4-HMAC-SHA256 Credential=a/20200101/us-east-1/dynamodb/"
                             "aws4_request, SignedHeaders=host, Signature=x"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return True, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return False, json.loads(e.read())

    def index_wait(self, table, index):
        """kura-server's POST /kura/index-wait: True once the index has caught up, False if the
        endpoint does not have it (not kura-server)."""
        body = {"TableName": table, "IndexName": index, "TimeoutMillis": int(CONVERGE_S * 1000)}
        req = urllib.request.Request(self.url.rstrip("/") + "/kura/index-wait",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                r.read()
                return True
        except urllib.error.HTTPError as e:
            if e.code in (500, 503):
                raise BackendError("POST /kura/index-wait %s %s: HTTP %d %s"
                                   % (table, index, e.code, e.read()[:300]))
            return False
        except urllib.error.URLError:
            return False

    def reopen(self):
        pass

    def close(self):
        pass


class ModelBackend:
    """A second reference model as the system under test (checks the harness itself)."""

    def __init__(self):
        self.model = refmodel.Model()
        self.metas = {}

    def call(self, op, body):
        if op == "CreateTable":
            keys = {k["KeyType"]: k["AttributeName"] for k in body["KeySchema"]}
            types = {a["AttributeName"]: a["AttributeType"] for a in body["AttributeDefinitions"]}
            h = (keys["HASH"], types[keys["HASH"]])
            r = (keys["RANGE"], types[keys["RANGE"]]) if "RANGE" in keys else None
            self.model.create_table(body["TableName"], h, r, refindex.from_create_table(body))
            return True, {}
        if op == "DeleteTable":
            return False, {"__type": refmodel.ERR_PREFIX + "ResourceNotFoundException"}
        if op == "DescribeTable":  # (only the GSIs' status, which the harness polls)
            t = self.model.tables[body["TableName"]]
            return True, {"Table": {"GlobalSecondaryIndexes": [
                {"IndexName": ix.name, "IndexStatus": "ACTIVE"}
                for ix in t.indexes if ix.kind == "GSI"]}}
        return self.model.execute(op, body, self.metas.get(id(body), {}))

    def index_wait(self, table, index):
        return True  # the model's indexes are always current

    def reopen(self):
        pass

    def close(self):
        pass


# ---- comparison ------------------------------------------------------------------------------

SCALARS = ("S", "N", "B", "BOOL", "NULL")


def canon(x, nums=False):
    """Sorts set members (a one-key dict SS/NS/BS holding a list) everywhere in x; with `nums`
    also rewrites every number in canonical form (for endpoints that do not, like DynamoDB
    Local inside lists and maps; kura's numbers are compared as they come). Parts with nothing
    to change (scalars) are shared with x, not copied: neither is ever modified."""
    if isinstance(x, dict):
        if len(x) == 1:
            (k, v), = x.items()
            if k in SCALARS and isinstance(v, (str, bool)) and not (nums and k == "N"):
                return x
            if nums and k == "N" and isinstance(v, str):
                return {k: refmodel.num_format(refmodel.decimal.Decimal(v))}
            if nums and k == "NS" and isinstance(v, list):
                v = [refmodel.num_format(refmodel.decimal.Decimal(m)) for m in v]
            if k in ("SS", "NS", "BS") and isinstance(v, list):
                return {k: sorted(v)}
        return {k: canon(v, nums) for k, v in x.items()}
    if isinstance(x, list):
        return [canon(v, nums) for v in x]
    return x


def first_difference(a, b, where="response"):
    """A short description of where a (kura) and b (model) first differ."""
    if type(a) is not type(b):
        return "%s: kura %s, model %s" % (where, short(a), short(b))
    if isinstance(a, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, "%s[%d]" % (where, i))
        return "%s: kura has %d elements, model %d" % (where, len(a), len(b))
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in %s (%s)" % (where, k, "kura" if k in a else "model",
                                                   short(a.get(k, b.get(k))))
            if a[k] != b[k]:
                return first_difference(a[k], b[k], "%s.%s" % (where, k))
    return "%s: kura %s, model %s" % (where, short(a), short(b))


def history_line(h):
    """A line of the history: a text, or (op index, Op)."""
    if isinstance(h, str):
        return h
    return "#%d %s %s" % (h[0], h[1].op, json.dumps(h[1].req, ensure_ascii=False))


def short(x):
    s = json.dumps(x, sort_keys=True, ensure_ascii=False)
    return s if len(s) < 300 else s[:300] + "..."


def item_id(item):
    return json.dumps(canon(item), sort_keys=True, ensure_ascii=False)


class Harness:
    def __init__(self, args, backend, model, generator, seed):
        self.args = args
        self.kura = backend
        self.model = model
        self.gen = generator
        self.seed = seed
        self.history = collections.deque(maxlen=20)
        self.mismatches = 0
        self.requests = 0
        self.reopens = 0
        self.index = -1
        self.exact_types = not args.endpoint
        self.stats = {}
        self.can_wait = None  # whether the backend can wait for a GSI (None: not asked yet)
        self.quiet = False    # a GSI read being retried: mismatches are not reported
        self.retries = 0      # GSI reads retried (without a wait)
        self.mismatch_reqs = []

    # Sending

    def kura_call(self, op, req, meta):
        self.requests += 1
        if isinstance(self.kura, ModelBackend):
            self.kura.metas[id(req)] = meta
        return self.kura.call(op, req)

    def model_call(self, op, req, meta):
        return self.model.execute(op, req, meta)

    # Comparing

    def normalise(self, op, ok, body, expected, unordered):
        """The canonical form of a response; `expected` is the model's response (used for what
        the model does not pin down: messages it does not know); `unordered`: Items is a
        multiset (the union of Scan pages)."""
        body = canon(body, not self.exact_types)
        if not self.exact_types and isinstance(body, dict):
            body.pop("ConsumedCapacity", None)  # DynamoDB Local sends it unasked
        if (not self.exact_types and ok and op == "Query" and expected is not body
                and "LastEvaluatedKey" not in body):
            # DynamoDB Local omits LastEvaluatedKey when the page that reached Limit ends
            # exactly on the key condition's upper bound; kura is held to "Limit reached".
            expected.pop("LastEvaluatedKey", None)
        if ok and unordered and isinstance(body.get("Items"), list):
            body["Items"] = sorted(body["Items"], key=item_id)
        if ok and op == "BatchGetItem" and isinstance(body.get("Responses"), dict):
            body["Responses"] = {t: sorted(items, key=item_id)
                                 for t, items in body["Responses"].items()}
        if not ok:
            body = dict(body)
            if "Message" in body and "message" not in body:
                body["message"] = body.pop("Message")
            if not self.exact_types and "__type" in body:
                body["__type"] = body["__type"].rsplit("#", 1)[-1]
            if expected is not None and "message" not in expected:
                body.pop("message", None)
            # a cancellation reason's message where the model does not know it
            reasons, want_reasons = body.get("CancellationReasons"), (expected or {}).get(
                "CancellationReasons")
            if isinstance(reasons, list) and isinstance(want_reasons, list):
                body["CancellationReasons"] = [
                    {f: v for f, v in r.items() if f != "Message" or "Message" in w}
                    if isinstance(r, dict) and isinstance(w, dict) else r
                    for r, w in zip(reasons, want_reasons)] + reasons[len(want_reasons):]
            if not self.exact_types:
                body.pop("message", None)
        return body

    def check(self, op, req, got, want, what="", unordered=False):
        """Compares kura's (ok, body) with the model's; reports and returns False on a
        mismatch."""
        g = (got[0], self.normalise(op, got[0], got[1], want[1], unordered))
        w = (want[0], self.normalise(op, want[0], want[1], want[1], unordered))
        if g == w:
            return True
        if not self.quiet:
            self.report(op, req, g, w, what)
        return False

    def report(self, op, req, got, want, what):
        self.mismatches += 1
        self.mismatch_reqs.append(req)
        out = sys.stdout
        print("MISMATCH%s: seed %d, op %d: %s" % (" (" + what + ")" if what else "", self.seed,
                                                 self.index, op), file=out)
        print("  request: %s" % json.dumps(req, ensure_ascii=False), file=out)
        ix = self.index_def(req)
        if ix is not None:
            print("  index: %s %s" % (ix.kind, json.dumps(ix.request(), ensure_ascii=False)),
                  file=out)
        print("  kura:  %s %s" % ("ok " if got[0] else "err", json.dumps(got[1], sort_keys=True,
                                                                       ensure_ascii=False)),
              file=out)
        print("  model: %s %s" % ("ok " if want[0] else "err", json.dumps(want[1], sort_keys=True,
                                                                        ensure_ascii=False)),
              file=out)
        print("  first difference: %s" % first_difference(got, want), file=out)
        print("  last %d ops:" % len(self.history), file=out)
        for h in self.history:
            print("    %s" % history_line(h), file=out)
        print("  reproduce: KURA_DIFF_SEED=%d KURA_DIFF_OPS=%d%s" % (
            self.seed, self.index + 1,
            " --skip " + ",".join(sorted(self.gen.skip)) if self.gen.skip else ""), file=out)
        out.flush()

    # Running ops

    def count(self, op, resp):
        """Tallies the model's outcome of op (for the coverage line at the end)."""
        ok, body = resp
        outcome = "ok" if ok else body["__type"].rsplit("#", 1)[-1].replace("Exception", "")
        ix = self.index_def(op.req)
        key = "%s%s/%s" % (op.op, "(%s)" % ix.kind if ix else "", outcome)
        self.stats[key] = self.stats.get(key, 0) + 1

    def run(self, op):
        """Runs one Op on both sides; returns False on a mismatch."""
        self.history.append((self.index, op))  # (formatted only when printed)
        if op.kind == "single":
            got = self.kura_call(op.op, op.req, op.meta)
            want = self.model_call(op.op, op.req, op.meta)
            self.count(op, want)
            return self.check(op.op, op.req, got, want)
        if op.kind == "ddl":
            return self.run_ddl(op)
        if op.kind == "settle":
            return self.await_index(op)
        ix = self.index_def(op.req)
        if ix is not None and ix.kind == "GSI" and not self.catch_up(op.req["TableName"],
                                                                     ix.name):
            return self.converge(op)
        return self.run_read(op)

    def run_read(self, op):
        if op.kind == "query":
            return self.run_query(op)
        return self.run_scan(op)

    # Secondary indexes

    def index_def(self, req):
        """The model's index that req reads (None: the table, or no such index)."""
        t = self.model.tables.get(req.get("TableName"))
        for ix in (t.indexes if t and "IndexName" in req else []):
            if ix.name == req["IndexName"]:
                return ix
        return None

    def catch_up(self, table, index):
        """Waits until the GSI has applied every acknowledged write; False if the backend
        cannot wait (asked once)."""
        if self.can_wait is None:
            self.can_wait = self.kura.index_wait(table, index)
            if not self.can_wait:
                print("diff_test: no way to wait for a GSI here; GSI reads are retried until "
                      "they match the model (at most %.0f s each)" % CONVERGE_S)
                sys.stdout.flush()
        elif self.can_wait:
            self.kura.index_wait(table, index)
        return self.can_wait

    def run_ddl(self, op):
        """UpdateTable: the outcome compared (a TableDescription has nothing the model knows);
        then, for a Delete, the wait until kura has dropped the index (a Create is waited for
        by a later "settle" op: the writes in between meet the backfill)."""
        got = self.kura_call(op.op, op.req, op.meta)
        want = self.model_call(op.op, op.req, op.meta)
        self.count(op, want)
        if not got[0] or not want[0]:
            return self.check(op.op, op.req, got, want)
        return op.meta["create"] or self.await_index(op)

    def await_index(self, op):
        """Polls DescribeTable until the GSI op.meta["index"] is ACTIVE (create) or gone."""
        table, name, create = op.req["TableName"], op.meta["index"], op.meta["create"]
        deadline = time.time() + DDL_WAIT_S
        while True:
            ok, body = self.kura.call("DescribeTable", {"TableName": table})
            if not ok:
                raise BackendError("DescribeTable %s: %s" % (table, json.dumps(body)))
            status = next((x.get("IndexStatus") for x in body["Table"].get(
                "GlobalSecondaryIndexes", []) if x["IndexName"] == name), None)
            if status == ("ACTIVE" if create else None):
                return True
            if time.time() > deadline:
                self.report(op.op, op.req, (True, {"IndexStatus": status}),
                            (True, {"IndexStatus": "ACTIVE" if create else None}),
                            "index %s %.0f s after UpdateTable" % (name, DDL_WAIT_S))
                return False
            time.sleep(0.005)

    def converge(self, op):
        """A GSI read without a wait: retried until it matches the model (the index is
        eventually consistent) for at most CONVERGE_S, then run once more and reported."""
        deadline = time.time() + CONVERGE_S
        delay = 0.0005
        self.quiet = True
        try:
            while time.time() < deadline:
                if self.run_read(op):
                    return True
                self.retries += 1
                time.sleep(delay)
                delay = min(2 * delay, 0.1)
        finally:
            self.quiet = False
        return self.run_read(op)

    def run_query(self, op):
        req = copy.deepcopy(op.req)
        for page in range(1000):
            got = self.kura_call("Query", req, op.meta)
            want = self.model_call("Query", req, op.meta)
            if page == 0:
                self.count(op, want)
            if not self.check("Query", req, got, want, "page %d" % page):
                return False
            if not got[0] or "LastEvaluatedKey" not in got[1]:
                return True
            req = copy.deepcopy(req)
            req["ExclusiveStartKey"] = got[1]["LastEvaluatedKey"]
        raise BackendError("Query did not end after 1000 pages")

    def scan_pages(self, req, meta):
        """All of kura's pages of one Scan: (ok, merged response) with Items as a sorted list
        and Count/ScannedCount summed; the first error response as is."""
        items, count, scanned = [], 0, 0
        req = copy.deepcopy(req)
        limit = req.get("Limit")
        for page in range(10000):
            ok, body = self.kura_call("Scan", req, meta)
            if not ok:
                return ok, body, req
            bad = None
            if limit is not None and body.get("ScannedCount", 0) > limit:
                bad = "page %d scanned %s items with Limit %d" % (page, body.get("ScannedCount"),
                                                                 limit)
            lek = body.get("LastEvaluatedKey")
            if lek is not None and set(lek) != self.start_key_names(req):
                bad = "LastEvaluatedKey %s is not a key of the %s" % (
                    json.dumps(lek), "index" if "IndexName" in req else "table")
            if bad:
                return False, {"harness": bad, "page": body}, req
            items.extend(body.get("Items", []))
            count += body.get("Count", 0)
            scanned += body.get("ScannedCount", 0)
            if lek is None:
                merged = {"Count": count, "ScannedCount": scanned}
                if "Items" in body:
                    merged["Items"] = sorted(items, key=item_id)
                extra = set(body) - {"Items", "Count", "ScannedCount"}
                if extra:
                    merged["unexpected fields"] = sorted(extra)
                return True, merged, req
            req = copy.deepcopy(req)
            req["ExclusiveStartKey"] = lek
        raise BackendError("Scan did not end after 10000 pages")

    def start_key_names(self, req):
        """The attributes of a Scan's LastEvaluatedKey: the table's key attributes, and the
        index's for a Scan of an index."""
        names = {n for n, _ in self.model.tables[req["TableName"]].key_attrs()}
        ix = self.index_def(req)
        return names | set(ix.key_names()) if ix is not None else names

    def model_full_scan(self, req, meta):
        full = {k: v for k, v in req.items()
                if k not in ("Limit", "ExclusiveStartKey", "Segment", "TotalSegments")}
        ok, body = self.model_call("Scan", full, meta)
        if ok and "Items" in body:
            body["Items"] = sorted(body["Items"], key=item_id)
        return ok, body

    def run_scan(self, op):
        want = self.model_full_scan(op.req, op.meta)
        self.count(op, want)
        if op.kind == "scan":
            ok, body, last = self.scan_pages(op.req, op.meta)
            return self.check("Scan", last, (ok, body), want, "union of all pages", True)
        total = op.meta["total_segments"]
        items, count, scanned = [], 0, 0
        for seg in range(total):
            req = dict(op.req, Segment=seg, TotalSegments=total)
            ok, body, last = self.scan_pages(req, op.meta)
            if not ok:
                return self.check("Scan", last, (ok, body), want, "segment %d" % seg)
            items.extend(body.get("Items", []))
            count += body["Count"]
            scanned += body["ScannedCount"]
        merged = {"Count": count, "ScannedCount": scanned}
        if "Items" in want[1]:
            merged["Items"] = sorted(items, key=item_id)
        return self.check("Scan", dict(op.req, TotalSegments=total), (True, merged), want,
                          "union of %d segments" % total, True)

    def compare_tables(self, what):
        """Every table and every index of it in full."""
        ok = True
        for name, t in self.model.tables.items():
            req = {"TableName": name}
            self.history.append("#%d full Scan of %s (%s)" % (self.index, name, what))
            ok = self.run_scan(gen.Op("scan", "Scan", req, {}, "scan")) and ok
            for ix in t.indexes:
                req = {"TableName": name, "IndexName": ix.name}
                ok = self.run(gen.Op("scan", "Scan", req, {"index": ix.name}, "scan")) and ok
        return ok

    def resync(self):
        """After a mismatch with --keep-going: the model takes kura's contents."""
        for name, t in self.model.tables.items():
            ok, body, _ = self.scan_pages({"TableName": name}, {})
            if not ok:
                raise BackendError("resync: Scan of %s failed: %s" % (name, body))
            t.items = {t.key_tuple(it): refmodel.canon_item(it) for it in body["Items"]}


# ---- main ------------------------------------------------------------------------------------

def create_tables(backend, model, g):
    """The test's tables with the generator's indexes, in kura and in the model."""
    for name, h, r in gen.TABLES:
        req = gen_index.create_request(name, h, r, g.indexes[name])
        if isinstance(backend, HttpBackend):
            backend.call("DeleteTable", {"TableName": name})
        ok, body = backend.call("CreateTable", req)
        if not ok:
            raise BackendError("CreateTable %s failed: %s" % (name, json.dumps(body)))
        model.create_table(name, h, r, refindex.from_create_table(req))


def run(args, seed, ops, bug=None):
    """Runs the test; returns (mismatches, summary line)."""
    data_dir = None
    if args.endpoint:
        backend = HttpBackend(args.endpoint)
    elif args.against_model:
        backend = ModelBackend()
    else:
        base = os.environ.get("KURA_TEST_TMPDIR") or None
        if base:
            os.makedirs(base, exist_ok=True)
        data_dir = tempfile.mkdtemp(prefix="kura-diff-", dir=base)
        extra = ["--relaxed"] if args.relaxed else []
        if args.partitions:
            extra += ["--partitions", str(args.partitions)]
        backend = PipeBackend(args.kura, data_dir, extra)
    model = refmodel.Model(bug=bug)
    g = gen.Generator(seed, args.skips)
    h = Harness(args, backend, model, g, seed)
    start = time.time()
    every = [ix for ixs in g.indexes.values() for ix in ixs]
    print("diff_test: %d LSIs and %d GSIs (%d with a multi-attribute key) on %d tables%s"
          % (sum(ix.kind == "LSI" for ix in every), sum(ix.kind == "GSI" for ix in every),
             sum(len(ix.hash_attrs) > 1 or len(ix.range_attrs) > 1 for ix in every),
             len(g.indexes), " (-v lists them)" if every and not args.verbose else ""))
    if args.verbose:
        for name, ixs in g.indexes.items():
            for ix in ixs:
                print("  %s of %s: %s" % (ix.kind, name, json.dumps(ix.request())))
    try:
        create_tables(backend, model, g)
        for i in range(ops):
            h.index = i
            if not h.run(g.next_op(model)):
                if not args.keep_going:
                    break
                h.resync()
            if args.reopen_every and (i + 1) % args.reopen_every == 0 and i + 1 < ops:
                backend.reopen()
                h.reopens += 1
                h.history.append("#%d -- reopen --" % i)
        settle = g.settle()
        if settle is not None and (h.mismatches == 0 or args.keep_going):
            h.run(settle)  # a GSI still being built
        if h.mismatches == 0 or args.keep_going:
            h.index = ops
            h.compare_tables("end")
            backend.reopen()
            h.reopens += 1
            h.compare_tables("end, after a reopen")
        backend.close()
    except BackendError as e:
        print("ERROR: seed %d, op %d: %s" % (seed, h.index, e))
        print("  last %d ops:" % len(h.history))
        for x in h.history:
            print("    %s" % history_line(x))
        h.mismatches += 1
    if data_dir and (h.mismatches == 0 or not args.keep_data):
        shutil.rmtree(data_dir, ignore_errors=True)
    elif data_dir:
        print("kura data kept in %s" % data_dir)
    if args.verbose:
        print("outcomes (model): " + ", ".join("%s %d" % kv for kv in sorted(h.stats.items())))
    done = h.index + 1 if h.mismatches else ops
    summary = ("%d ops (%d requests), %d mismatches, %d reopens, %d GSI reads retried, seed %d, "
               "%.1f s" % (min(done, ops), h.requests, h.mismatches, h.reopens, h.retries, seed,
                           time.time() - start))
    return h.mismatches, summary, h.mismatch_reqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kura", help="the kura CLI binary")
    ap.add_argument("--endpoint", help="a DynamoDB-compatible HTTP endpoint instead of kura")
    ap.add_argument("--against-model", action="store_true",
                    help="run against a second reference model (tests the harness)")
    ap.add_argument("--relaxed", action="store_true",
                    help="run kura with --relaxed (periodic WAL sync; a reopen still closes "
                         "cleanly, so nothing acknowledged may be lost)")
    ap.add_argument("--partitions", type=int, default=0,
                    help="kura --partitions N for the test's tables (0: kura's default)")
    ap.add_argument("--ops", type=int, help="number of operations (env KURA_DIFF_OPS)")
    ap.add_argument("--seed", type=int, help="random seed (env KURA_DIFF_SEED)")
    ap.add_argument("--reopen-every", type=int, default=2000,
                    help="restart kura on the same directory every N ops (0: never)")
    ap.add_argument("--skip", default="",
                    help="comma-separated op classes to leave out: " + ", ".join(
                        "%s (%s)" % kv for kv in gen.SKIP_FLAGS.items()))
    ap.add_argument("--include-known-bugs", action="store_true",
                    help="do not skip the op classes of known kura bugs: " + ", ".join(
                        "%s (%s)" % kv for kv in gen.KNOWN_BUGS.items()))
    ap.add_argument("--keep-going", action="store_true",
                    help="count mismatches instead of stopping at the first")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the tally of the model's outcomes per operation")
    ap.add_argument("--keep-data", action="store_true", help="keep kura's directory on failure")
    ap.add_argument("--self-test", action="store_true",
                    help="inject bugs into the model (an off-by-one Limit, an index that is not "
                         "sparse); pass iff each is reported")
    args = ap.parse_args()
    if not (args.kura or args.endpoint or args.against_model):
        ap.error("one of --kura, --endpoint, --against-model is required")
    if args.kura and not os.access(args.kura, os.X_OK):
        ap.error("%s is not an executable" % args.kura)
    args.skips = sorted({s for s in args.skip.split(",") if s}
                        | (set() if args.include_known_bugs else set(gen.KNOWN_BUGS)))

    seed = args.seed
    env_seed = os.environ.get("KURA_DIFF_SEED", "")
    if seed is None and env_seed == "random":
        seed = random.SystemRandom().randrange(1 << 31)
    elif seed is None and env_seed:
        seed = int(env_seed)
    elif seed is None:
        seed = DEFAULT_SEED
    scale = float(os.environ.get("KURA_TEST_SCALE", "1") or 1)
    ops = args.ops or int(os.environ.get("KURA_DIFF_OPS") or 0) or max(1, int(20000 * scale))
    print("diff_test: seed %d, %d ops%s (again: KURA_DIFF_SEED=%d KURA_DIFF_OPS=%d %s)"
          % (seed, ops, ", self-test" if args.self_test else "", seed, ops,
             " ".join([sys.executable] + sys.argv)))
    known = [b for b in gen.KNOWN_BUGS if not args.include_known_bugs]
    if known:
        print("diff_test: skipped for known kura bugs (--include-known-bugs runs them): %s"
              % ", ".join(known))
    sys.stdout.flush()

    if args.self_test:
        return self_test(args, seed, ops)

    mismatches, summary, _ = run(args, seed, ops)
    print(summary)
    return 1 if mismatches else 0


def self_test(args, seed, ops):
    """Runs the test with each injected model bug; passes iff every one is reported (the
    index bug on a read of an index)."""
    args.keep_going = False
    bugs = [("limit_off_by_one", "an off-by-one Limit", False)]
    if "indexes" not in args.skips and "index_reads" not in args.skips:
        bugs.append(("index_not_sparse", "an index that is not sparse", True))
    for bug, what, on_index in bugs:
        print("self-test: the model with %s" % what)
        sys.stdout.flush()
        mismatches, summary, reqs = run(args, seed, min(ops, 5000), bug=bug)
        print(summary)
        if mismatches == 0:
            print("SELF-TEST FAILED: the model's injected bug (%s) went unnoticed" % what)
            return 1
        if on_index and "IndexName" not in reqs[0]:
            print("SELF-TEST FAILED: the model's injected bug (%s) was reported on a request "
                  "that reads no index" % what)
            return 1
    print("self-test passed: every injected model bug was reported as a mismatch")
    return 0


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") is None:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    sys.exit(main())
