#!/usr/bin/env python3
"""Renders kura-bench JSON results as the markdown tables of docs/BENCHMARKS.md.

usage: bench/tables.py RESULTS.json [MORE.json ...]
Prints, per workload, ops/s (seconds for compact and recover), p50/p99, and bytes on disk /
peak RSS for every engine, with each engine's ratio to kura; then kura's ratio to each peer
round by round (repeats are the outer loop, so round i of every engine ran within minutes),
which is how docs/BENCHMARKS.md tells a target met from one at the line.
"""
import json
import sys

TIMED = ("compact", "recover")


def load(paths):
    rows = {}
    order = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for r in d["results"]:
            key = (r["workload"], r["threads"])
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key][r["engine"]] = r
    return rows, order


def fmt_ops(r, wl):
    if wl in TIMED:
        return "%.3f s" % r["seconds"]
    return "{:,}".format(int(round(r["ops_per_sec"])))


def main():
    rows, order = load(sys.argv[1:])
    engines = ["kura", "rocksdb", "leveldb", "lmdb", "sqlite"]
    print("| workload | threads | " + " | ".join(engines) + " |")
    print("|---|---:|" + "---:|" * len(engines))
    for wl, th in order:
        cells = []
        k = rows[(wl, th)].get("kura")
        for e in engines:
            r = rows[(wl, th)].get(e)
            if not r:
                cells.append("n/a")
                continue
            c = fmt_ops(r, wl)
            if e != "kura" and k and wl not in TIMED and r["ops_per_sec"] > 0:
                c += " (%.2fx)" % (k["ops_per_sec"] / r["ops_per_sec"])
            cells.append(c)
        print("| %s | %d | %s |" % (wl, th, " | ".join(cells)))
    print()
    print("| workload | threads | " + " | ".join(e + " p50/p99 us" for e in engines) + " |")
    print("|---|---:|" + "---:|" * len(engines))
    for wl, th in order:
        if wl in TIMED:
            continue
        cells = []
        for e in engines:
            r = rows[(wl, th)].get(e)
            cells.append("%.2f / %.1f" % (r["p50_us"], r["p99_us"]) if r else "n/a")
        print("| %s | %d | %s |" % (wl, th, " | ".join(cells)))
    print()
    print("| workload | " + " | ".join(e + " disk / RSS MiB" for e in engines) + " |")
    print("|---|" + "---:|" * len(engines))
    for wl, th in order:
        cells = []
        for e in engines:
            r = rows[(wl, th)].get(e)
            cells.append("%.1f / %.1f" % (r["bytes_on_disk"] / 2**20, r["peak_rss_bytes"] / 2**20)
                         if r else "n/a")
        print("| %s (%d thr) | %s |" % (wl, th, " | ".join(cells)))
    print()
    peers = engines[1:]
    print("| workload | threads | " + " | ".join("kura / %s by round" % e for e in peers) + " |")
    print("|---|---:|" + "---|" * len(peers))
    for wl, th in order:
        k = rows[(wl, th)].get("kura")
        if wl in TIMED or not k:
            continue
        kr = {x["repeat"]: x["ops_per_sec"] for x in k["runs"]}
        cells = []
        for e in peers:
            r = rows[(wl, th)].get(e)
            pr = {x["repeat"]: x["ops_per_sec"] for x in r["runs"]} if r else {}
            cells.append(" ".join("%.2fx" % (kr[i] / pr[i]) for i in sorted(kr)
                                  if pr.get(i)) or "n/a")
        print("| %s | %d | %s |" % (wl, th, " | ".join(cells)))


if __name__ == "__main__":
    main()
