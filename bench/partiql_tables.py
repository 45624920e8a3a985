#!/usr/bin/env python3
"""partiql_tables.py - the "PartiQL" table of docs/BENCHMARKS.md: PartiQL statements against the
item operations they stand for, as ratios of throughput measured in the same run.

usage: bench/partiql_tables.py FILE.json...

Each file is told by its contents: a kura-bench run (SUITE=partiql scripts/bench.sh's
partiql-<time>.json) or a kura-http-bench run (its partiql-<time>-http-r<round>.json); "--http"
before a file is accepted and changes nothing.

A kura-bench file is a run of the item workloads on kura-capi, kura-partiql, kura-json
and kura-json-partiql (SUITE=partiql scripts/bench.sh): every round ("repeat") gives the
ratios kura-partiql / kura-capi and kura-json-partiql / kura-json of putitem (INSERT),
getitem (SELECT * by the full key) and updateitem (UPDATE SET n = n + 1 by key). Each
kura-http-bench file is one run against one kura-server (one round) with the workloads
get, pq_get, update and pq_update: its ratios are pq_get / get and pq_update / update at each
connection count. With several files the rounds are pooled. Each row gives the median over
the rounds, every round's ratio, and the verdict against the issue's target of 0.9x (no
target for INSERT). Exit status 1 if a file lacks a workload.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from round_stats import verdict  # noqa: E402

TARGET = 0.9
CAPI = [("getitem", "SELECT * by key / GetItem", True),
        ("updateitem", "UPDATE SET n = n + 1 by key / UpdateItem", True),
        ("putitem", "INSERT / PutItem", False)]
PAIRS = [("C API", "kura-partiql", "kura-capi"), ("JSON (kura_execute)", "kura-json-partiql",
                                                   "kura-json")]
HTTP = [("pq_get", "get", "SELECT * by key / GetItem"),
        ("pq_update", "update", "UPDATE SET n = n + 1 by key / UpdateItem")]


def bench_rounds(paths):
    """{(engine, workload): {(file, repeat): ops/s}}, the files' rounds pooled."""
    out = {}
    for i, path in enumerate(paths):
        with open(path) as f:
            d = json.load(f)
        for r in d["results"]:
            runs = out.setdefault((r["engine"], r["workload"]), {})
            runs.update({(i, x["repeat"]): x["ops_per_sec"] for x in r["runs"]})
    return out


def row(what, layer, ratios, target):
    if not ratios:
        return "| %s | %s | n/a | | |" % (what, layer)
    med = statistics.median(ratios)
    each = ", ".join("%.3fx" % v for v in ratios)
    spread = "%.3fx-%.3fx" % (min(ratios), max(ratios))
    v = verdict(ratios, lambda x: x >= TARGET) if target else "(no target)"
    return "| %s | %s | **%.2fx** | %s (%s) | %s |" % (what, layer, med, each, spread, v)


def main(argv):
    http = []
    bench = []
    args = iter(argv)
    for a in args:
        if a in ("--http",):
            continue
        path = a[7:] if a.startswith("--http=") else a
        with open(path) as f:
            (bench if "machine" in json.load(f) else http).append(path)
    print("| statement / operation | way in | median ratio | rounds (range) | >= %.1fx |" % TARGET)
    print("|---|---|---:|---|---|")
    status = 0
    if bench:
        runs = bench_rounds(bench)
        for wl, what, target in CAPI:
            for layer, pq, base in PAIRS:
                a, b = runs.get((pq, wl)), runs.get((base, wl))
                if a is None or b is None:
                    continue
                ratios = [a[r] / b[r] for r in sorted(a) if r in b and b[r] > 0]
                print(row(what, layer, ratios, target))
    for pq, base, what in HTTP:
        conns = sorted({r["connections"] for p in http for r in json.load(open(p))["results"]
                        if r["workload"] == pq})
        for c in conns:
            ratios = []
            for p in http:
                res = {(r["workload"], r["connections"]): r["req_per_sec"]
                       for r in json.load(open(p))["results"]}
                if (pq, c) not in res or (base, c) not in res:
                    print("partiql_tables: %s lacks %s or %s at %d connections" % (p, pq, base, c),
                          file=sys.stderr)
                    status = 1
                    continue
                ratios.append(res[(pq, c)] / res[(base, c)])
            print(row(what, "HTTP, %d connection%s" % (c, "" if c == 1 else "s"), ratios, True))
    if bench:
        print()
        print("| workload | engine | median ops/s | rounds |")
        print("|---|---|---:|---|")
        for wl, _, _ in CAPI:
            for e in ("kura-capi", "kura-partiql", "kura-json", "kura-json-partiql"):
                v = runs.get((e, wl))
                if v:
                    vals = [v[r] for r in sorted(v)]
                    print("| %s | %s | %s | %s |" % (wl, e, "{:,.0f}".format(statistics.median(vals)),
                                                    ", ".join("{:,.0f}".format(x) for x in vals)))
    for p in http:
        name = json.load(open(p))["name"]
        for r in json.load(open(p))["results"]:
            if r["workload"] in ("get", "pq_get", "update", "pq_update"):
                print("%s %s %s %d conns: %.0f req/s, p99 %.0f us" % (
                    os.path.basename(p), name, r["workload"], r["connections"], r["req_per_sec"],
                    r["p99_us"]), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
