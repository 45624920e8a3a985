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
closed and restarted on the same directory; at the end every table is compared in full, before
and after one more reopen.

On the first mismatch the test prints the seed, the op index, the request, both responses and the
last 20 ops, and exits 1 (--keep-going: counts mismatches, re-synchronises the model from kura
and continues). --self-test injects a bug into the model (an off-by-one Limit) and passes only if
the harness reports a mismatch.

Usage: diff_test.py --kura build/bin/kura [--ops N] [--seed S] [--skip flag,...]
       diff_test.py --endpoint http://localhost:8000   (any DynamoDB-compatible endpoint, e.g.
                    DynamoDB Local; there only error types are compared, not their texts)
       diff_test.py --against-model                     (the harness against a second model)
Environment: KURA_DIFF_OPS (default 20000 x KURA_TEST_SCALE), KURA_DIFF_SEED.
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
import refmodel  # noqa: E402


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
            self.model.create_table(body["TableName"], h, r)
            return True, {}
        if op == "DeleteTable":
            return False, {"__type": refmodel.ERR_PREFIX + "ResourceNotFoundException"}
        return self.model.execute(op, body, self.metas.get(id(body), {}))

    def reopen(self):
        pass

    def close(self):
        pass


# ---- comparison ------------------------------------------------------------------------------

def canon(x, nums=False):
    """Sorts set members (a one-key dict SS/NS/BS holding a list) everywhere in x; with `nums`
    also rewrites every number in canonical form (for endpoints that do not, like DynamoDB
    Local inside lists and maps; kura's numbers are compared as they come)."""
    if isinstance(x, dict):
        if len(x) == 1:
            (k, v), = x.items()
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
        self.report(op, req, g, w, what)
        return False

    def report(self, op, req, got, want, what):
        self.mismatches += 1
        out = sys.stdout
        print("MISMATCH%s: seed %d, op %d: %s" % (" (" + what + ")" if what else "", self.seed,
                                                 self.index, op), file=out)
        print("  request: %s" % json.dumps(req, ensure_ascii=False), file=out)
        print("  kura:  %s %s" % ("ok " if got[0] else "err", json.dumps(got[1], sort_keys=True,
                                                                       ensure_ascii=False)),
              file=out)
        print("  model: %s %s" % ("ok " if want[0] else "err", json.dumps(want[1], sort_keys=True,
                                                                        ensure_ascii=False)),
              file=out)
        print("  first difference: %s" % first_difference(got, want), file=out)
        print("  last %d ops:" % len(self.history), file=out)
        for h in self.history:
            print("    %s" % h, file=out)
        print("  reproduce: KURA_DIFF_SEED=%d KURA_DIFF_OPS=%d%s" % (
            self.seed, self.index + 1,
            " --skip " + ",".join(sorted(self.gen.skip)) if self.gen.skip else ""), file=out)
        out.flush()

    # Running ops

    def count(self, op, resp):
        """Tallies the model's outcome of op (for the coverage line at the end)."""
        ok, body = resp
        outcome = "ok" if ok else body["__type"].rsplit("#", 1)[-1].replace("Exception", "")
        key = "%s/%s" % (op.op, outcome)
        self.stats[key] = self.stats.get(key, 0) + 1

    def run(self, op):
        """Runs one Op on both sides; returns False on a mismatch."""
        self.history.append("#%d %s %s" % (self.index, op.op, json.dumps(op.req,
                                                                         ensure_ascii=False)))
        if op.kind == "single":
            got = self.kura_call(op.op, op.req, op.meta)
            want = self.model_call(op.op, op.req, op.meta)
            self.count(op, want)
            return self.check(op.op, op.req, got, want)
        if op.kind == "query":
            return self.run_query(op)
        return self.run_scan(op)

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
            if lek is not None and set(lek) != {n for n, _ in self.key_attrs(req["TableName"])}:
                bad = "LastEvaluatedKey %s is not a key of the table" % json.dumps(lek)
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

    def key_attrs(self, table):
        return self.model.tables[table].key_attrs()

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
        ok = True
        for name in self.model.tables:
            req = {"TableName": name}
            self.history.append("#%d full Scan of %s (%s)" % (self.index, name, what))
            ok = self.run_scan(gen.Op("scan", "Scan", req, {}, "scan")) and ok
        return ok

    def resync(self):
        """After a mismatch with --keep-going: the model takes kura's contents."""
        for name, t in self.model.tables.items():
            ok, body, _ = self.scan_pages({"TableName": name}, {})
            if not ok:
                raise BackendError("resync: Scan of %s failed: %s" % (name, body))
            t.items = {t.key_tuple(it): refmodel.canon_item(it) for it in body["Items"]}


# ---- main ------------------------------------------------------------------------------------

def create_tables(backend, model):
    for name, h, r in gen.TABLES:
        keys = [{"AttributeName": h[0], "KeyType": "HASH"}]
        defs = [{"AttributeName": h[0], "AttributeType": h[1]}]
        if r:
            keys.append({"AttributeName": r[0], "KeyType": "RANGE"})
            defs.append({"AttributeName": r[0], "AttributeType": r[1]})
        if isinstance(backend, HttpBackend):
            backend.call("DeleteTable", {"TableName": name})
        ok, body = backend.call("CreateTable", {"TableName": name, "KeySchema": keys,
                                                "AttributeDefinitions": defs,
                                                "BillingMode": "PAY_PER_REQUEST"})
        if not ok:
            raise BackendError("CreateTable %s failed: %s" % (name, json.dumps(body)))
        model.create_table(name, h, r)


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
    g = gen.Generator(seed, [s for s in args.skip.split(",") if s])
    h = Harness(args, backend, model, g, seed)
    start = time.time()
    try:
        create_tables(backend, model)
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
            print("    %s" % x)
        h.mismatches += 1
    if data_dir and (h.mismatches == 0 or not args.keep_data):
        shutil.rmtree(data_dir, ignore_errors=True)
    elif data_dir:
        print("kura data kept in %s" % data_dir)
    if args.verbose:
        print("outcomes (model): " + ", ".join("%s %d" % kv for kv in sorted(h.stats.items())))
    done = h.index + 1 if h.mismatches else ops
    summary = ("%d ops (%d requests), %d mismatches, %d reopens, seed %d, %.1f s"
               % (min(done, ops), h.requests, h.mismatches, h.reopens, seed, time.time() - start))
    return h.mismatches, summary


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
    ap.add_argument("--keep-going", action="store_true",
                    help="count mismatches instead of stopping at the first")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print the tally of the model's outcomes per operation")
    ap.add_argument("--keep-data", action="store_true", help="keep kura's directory on failure")
    ap.add_argument("--self-test", action="store_true",
                    help="inject an off-by-one Limit into the model; pass iff it is reported")
    args = ap.parse_args()
    if not (args.kura or args.endpoint or args.against_model):
        ap.error("one of --kura, --endpoint, --against-model is required")
    if args.kura and not os.access(args.kura, os.X_OK):
        ap.error("%s is not an executable" % args.kura)

    seed = args.seed
    if seed is None and os.environ.get("KURA_DIFF_SEED"):
        seed = int(os.environ["KURA_DIFF_SEED"])
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    scale = float(os.environ.get("KURA_TEST_SCALE", "1") or 1)
    ops = args.ops or int(os.environ.get("KURA_DIFF_OPS") or 0) or max(1, int(20000 * scale))
    print("diff_test: seed %d, %d ops%s" % (seed, ops, ", self-test" if args.self_test else ""))
    sys.stdout.flush()

    if args.self_test:
        args.keep_going = False
        mismatches, summary = run(args, seed, min(ops, 5000), bug="limit_off_by_one")
        print(summary)
        if mismatches == 0:
            print("SELF-TEST FAILED: the model's injected off-by-one Limit went unnoticed")
            return 1
        print("self-test passed: the injected model bug was reported as a mismatch")
        return 0

    mismatches, summary = run(args, seed, ops)
    print(summary)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
