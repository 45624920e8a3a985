#!/usr/bin/env python3
"""index_tables.py - the "Secondary indexes" table of docs/BENCHMARKS.md from kura-bench JSON
files of the index workloads (bench/index/index.h; SUITE=index scripts/bench.sh).

usage: bench/index_tables.py RESULTS.json [MORE.json ...]

Every figure is taken round by round: a ratio compares two workloads of the same round (the
same file, the same "repeat"), as docs/BENCHMARKS.md states its targets. With several files
the rounds are pooled. Each row gives the median over the rounds, every round's value, and
the verdict: "met" when every round meets the target, "not met" when none does, "at the
line" otherwise (with how many rounds missed). Exit status 1 if a file lacks a workload.
"""
import json
import statistics
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from round_stats import extra, fmt, rounds, verdict  # noqa: E402


def load(paths):
    """[(file, {workload: {repeat: run}}, settings)] for the kura-capi results."""
    out = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        runs = {}
        for r in d["results"]:
            if r["engine"] != "kura-capi":
                continue
            runs[r["workload"]] = {x["repeat"]: x for x in r["runs"]}
        out.append((p, runs, d["settings"]))
    return out


def main():
    files = load(sys.argv[1:])
    s = files[0][2]
    budget = s["memtable_mb"] + s["cache_mb"] + 64
    rows = []

    def ratio(a, b, field="ops_per_sec"):
        return lambda r: r[a][field] / r[b][field]

    def ack_ratio(a, b):
        return lambda r: extra(r[a], "ack_ops_per_sec") / extra(r[b], "ack_ops_per_sec")

    for n, target in (("2", 0.5), ("5", 0.25)):
        v = rounds(files, ratio("putitem_gsi" + n, "putitem_gsi0"))
        ack = rounds(files, ack_ratio("putitem_gsi" + n, "putitem_gsi0"))
        rows.append(("PutItem with %s GSIs / with none (drain included)" % n, fmt(v, "%.2fx"),
                     ">= %gx" % target, verdict(v, lambda x, t=target: x >= t)
                     + "; acknowledgements alone %s" % fmt(ack, "%.2fx")))
    for pct, p99t, maxt in (("50", 10, 100), ("90", None, None)):
        p99 = rounds(files, lambda r, p=pct: extra(r["gsi_lag"], "lag%s_p99_ms" % p))
        mx = rounds(files, lambda r, p=pct: extra(r["gsi_lag"], "lag%s_max_ms" % p))
        p50 = rounds(files, lambda r, p=pct: extra(r["gsi_lag"], "lag%s_p50_ms" % p))
        done = rounds(files, lambda r, p=pct: extra(r["gsi_lag"], "lag%s_done_per_sec" % p)
                      / extra(r["gsi_lag"], "lag%s_offered_per_sec" % p))
        q = rounds(files, lambda r, p=pct: extra(r["gsi_lag"], "lag%s_max_queue_mib" % p))
        fig = "p50 %s; p99 %s; max %s" % (fmt(p50, "%.1f"), fmt(p99, "%.1f"), fmt(mx, "%.0f"))
        if p99t:
            v = "p99: %s; max: %s" % (verdict(p99, lambda x: x < p99t),
                                      verdict(mx, lambda x: x < maxt))
            tgt = "p99 < %d ms, max < %d ms" % (p99t, maxt)
        else:
            v = "bounded: largest GSI queue %s MiB (cap 32)" % fmt(q, "%.1f")
            tgt = "reported, bounded"
        rows.append(("GSI lag (ms) at %s%% of the maximum write rate" % pct, fig, tgt,
                     v + "; writes done / offered %s" % fmt(done, "%.2f")))
    bf = rounds(files, lambda r: extra(r["backfill"], "backfill_vs_fill"))
    bgmax = rounds(files, lambda r: extra(r["backfill"], "bg_call_max_ms"))
    rows.append(("backfill of %d items / PutItem fill of the same" % s["backfill_num"],
                 fmt(bf, "%.2fx"), ">= 0.5x, table writable",
                 verdict(bf, lambda x: x >= 0.5)
                 + "; longest PutItem meanwhile %s ms" % fmt(bgmax, "%.0f")))
    qv = rounds(files, ratio("query_gsi", "query_base"))
    rows.append(("Query of GSI by_grp (ALL) / Query of the table", fmt(qv, "%.2fx"), ">= 0.8x",
                 verdict(qv, lambda x: x >= 0.8)))
    rss = rounds(files, lambda r: r["putitem_gsi5"]["peak_rss_bytes"] / 1048576.0)
    rows.append(("peak RSS, putitem_gsi5 (MiB)", fmt(rss, "%.0f"), "<= %d" % budget,
                 verdict(rss, lambda x: x <= budget)))
    print("| measure | median (rounds) | target | |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    print()
    # the absolute figures, medians over the rounds
    print("| workload | ops/s | p50 us | p99 us | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    order = ["putitem_gsi0", "putitem_gsi2", "putitem_gsi5", "query_base", "query_gsi",
             "gsi_lag", "backfill"]
    for w in order:
        vals = rounds(files, lambda r, w=w: (r[w]["ops_per_sec"], r[w]["p50_us"], r[w]["p99_us"],
                                             r[w]["peak_rss_bytes"] / 1048576.0))
        if not vals:
            print("%s: no runs" % w, file=sys.stderr)
            return 1
        med = [statistics.median(v[i] for v in vals) for i in range(4)]
        print("| %s | {:,} | %.1f | %.1f | %.0f |".format(int(round(med[0])))
              % (w, med[1], med[2], med[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
