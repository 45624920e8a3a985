#!/usr/bin/env python3
"""check_json.py - checks a kura-bench JSON file (the bench_smoke test's second half).

Usage: check_json.py FILE --engines=a,b --workloads=x,y --num=N --sync-num=S

Checks that the file parses, that machine/settings/results hold the documented fields,
that every (engine, workload) asked for has a result or a stated skip, that nothing failed,
and that the figures are what the workloads imply when they run in the smoke test's order
(fillseq, then reads of those keys: every readrandom key found, readseq reads all N keys).
Exits 1 with a message naming the first problem.
"""
import json
import math
import sys

RESULT_FIELDS = ["engine", "workload", "threads", "num", "ops_per_sec", "mb_per_sec",
                 "p50_us", "p99_us", "bytes_on_disk", "peak_rss_bytes", "runs"]
RUN_FIELDS = ["repeat", "num", "ops_per_sec", "mb_per_sec", "p50_us", "p99_us",
              "bytes_on_disk", "peak_rss_bytes", "seconds", "found"]
MACHINE_FIELDS = ["cpu_model", "cores", "mem_bytes", "kernel", "fs", "date", "load_avg_1m"]
SETTINGS_FIELDS = ["command", "engines", "workloads", "num", "key_size", "value_size",
                   "threads", "repeat", "sync_num", "partitions", "memtable_mb", "cache_mb",
                   "seed", "engine_settings"]


def fail(msg):
    print("check_json: " + msg, file=sys.stderr)
    sys.exit(1)


def need(obj, fields, where):
    for f in fields:
        if f not in obj:
            fail("%s: missing field %r in %s" % (where, f, json.dumps(obj)[:200]))


def positive(value, what):
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        fail("%s should be a positive number, is %r" % (what, value))


def parse_args(argv):
    if len(argv) < 2:
        fail(__doc__)
    opts = {"file": argv[1]}
    for a in argv[2:]:
        key, _, val = a.lstrip("-").partition("=")
        opts[key] = val
    return opts


def check_result(r, num, sync_num):
    where = "%s/%s" % (r["engine"], r["workload"])
    need(r, RESULT_FIELDS, where)
    if not r["runs"]:
        fail(where + ": no runs")
    for run in r["runs"]:
        need(run, RUN_FIELDS, where + " run")
    for f in ["ops_per_sec", "mb_per_sec", "p50_us", "p99_us", "bytes_on_disk",
              "peak_rss_bytes"]:
        positive(r[f], where + " " + f)
    if r["p99_us"] < r["p50_us"]:
        fail("%s: p99 %r < p50 %r" % (where, r["p99_us"], r["p50_us"]))
    expect_ops = {"fillseq": num, "readrandom": num, "readseq": num, "fillsync": sync_num,
                  "seekrandom": max(num // 10, 1000)}
    wl = r["workload"]
    if wl in expect_ops and r["num"] != expect_ops[wl]:
        fail("%s: %d ops, expected %d" % (where, r["num"], expect_ops[wl]))
    if wl == "readrandom" and r["found"] != num:
        fail("%s: found %d of %d keys written by fillseq" % (where, r["found"], num))
    if wl == "seekrandom" and r["found"] != r["num"]:
        fail("%s: %d of %d seeks found a key" % (where, r["found"], r["num"]))


def main():
    opts = parse_args(sys.argv)
    with open(opts["file"]) as f:
        doc = json.load(f)
    need(doc, ["machine", "settings", "results", "skipped", "errors"], "top level")
    need(doc["machine"], MACHINE_FIELDS, "machine")
    need(doc["settings"], SETTINGS_FIELDS, "settings")
    if doc["errors"]:
        fail("runs failed: %s" % json.dumps(doc["errors"]))
    engines = opts["engines"].split(",")
    workloads = opts["workloads"].split(",")
    num, sync_num = int(opts["num"]), int(opts["sync-num"])
    for e in engines:
        if not doc["settings"]["engine_settings"].get(e):
            fail("no settings string for engine " + e)
    done = {(r["engine"], r["workload"]): r for r in doc["results"]}
    skipped = {(s["engine"], s["workload"]) for s in doc["skipped"]}
    for e in engines:
        for w in workloads:
            if (e, w) in done:
                check_result(done[(e, w)], num, sync_num)
            elif (e, w) not in skipped:
                fail("no result and no skip for %s/%s" % (e, w))
    print("check_json: %s OK (%d results)" % (opts["file"], len(doc["results"])))


if __name__ == "__main__":
    main()
