#!/usr/bin/env python3
"""txn_tables.py - the "Transactions" tables of docs/BENCHMARKS.md from kura-bench JSON files of
the transaction workloads (bench/txn/txn.h; SUITE=txn scripts/bench.sh).

usage: bench/txn_tables.py RESULTS.json [MORE.json ...]

Every figure is taken round by round: a ratio compares two workloads of the same round (the
same file, the same "repeat"), as docs/BENCHMARKS.md states its targets. With several files
the rounds are pooled. Each row gives the median over the rounds, every round's value, and
the verdict: "met" when every round meets the target, "not met" when none does, "at the
line" otherwise (with how many rounds missed). The second table gives each workload's
medians, with the fsyncs the engine made per call (bench/txn/io_count.c). Exit status 1 if a
file lacks a workload.
"""
import json
import statistics
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from round_stats import extra, fmt, rounds, verdict  # noqa: E402

WORKLOADS = ["pairs_put", "pairs_txn", "batch25_sync", "txn25_sync", "batch25", "txn25",
             "put_solo_sync", "put_mixed_sync", "put_solo", "put_mixed", "txn_hot"]


def load(paths):
    """[(file, {workload: {repeat: run}}, settings, errors)] for the kura-capi results;
    errors: [(workload, repeat, message)] of the runs that failed."""
    out = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        runs = {}
        for r in d["results"]:
            if r["engine"] == "kura-capi":
                runs[r["workload"]] = {x["repeat"]: x for x in r["runs"]}
        errors = [(e["workload"], e.get("repeat"), e["error"]) for e in d.get("errors", [])]
        out.append((p, runs, d["settings"], errors))
    return out


def med(vals, f):
    """The median formatted with f: a %-format, or "," for thousands separators."""
    if not vals:
        return "n/a"
    m = statistics.median(vals)
    return "{:,.0f}".format(m) if f == "," else f % m


def main():
    files = load(sys.argv[1:])
    s = files[0][2]
    for p, runs, _, _ in files:
        missing = [w for w in WORKLOADS if w not in runs]
        if missing:
            print("txn_tables: %s has no runs of %s" % (p, ", ".join(missing)), file=sys.stderr)
            return 1
    threads = s["threads"]
    half = max(threads // 2, 1)

    def per_round(w, f):
        return rounds(files, lambda r: f(r[w]))

    def ops(w):
        return per_round(w, lambda x: x["ops_per_sec"])

    rows = []
    for what, a, b, target in (
            ("TransactWriteItems of 2 items in 2 partitions / the same as 2 PutItems "
             "(%d threads, sync), items/s" % threads, "pairs_txn", "pairs_put", 0.5),
            ("TransactWriteItems of 25 items / BatchWriteItem of the same 25 "
             "(1 thread, sync), items/s", "txn25_sync", "batch25_sync", 0.5),
            ("the same, relaxed durability", "txn25", "batch25", 0.5),
            ("PutItem on %d threads beside %d threads of 2-item transactions / alone "
             "(sync), PutItems/s" % (half, half), "put_mixed_sync", "put_solo_sync", 0.8),
            ("the same, relaxed durability", "put_mixed", "put_solo", 0.8)):
        v = rounds(files, lambda r, a=a, b=b: r[a]["ops_per_sec"] / r[b]["ops_per_sec"])
        fig = "%s; %s / %s" % (fmt(v, "%.2fx"), med(ops(a), ","), med(ops(b), ","))
        rows.append((what, fig, ">= %gx" % target, verdict(v, lambda x, t=target: x >= t)))

    def hot(f):
        return per_round("txn_hot", f)

    def hx(name):
        return hot(lambda x: extra(x, name))

    fig = ("%s committed/s; p50 %s ms; p99 %s ms; longest %s ms; cancelled %s%% of the "
           "transactions (ConditionalCheckFailed %s; TransactionConflict %s); %s%% of the "
           "pairs in two partitions"
           % (fmt(hx("committed_per_sec"), "%.0f"), fmt(hot(lambda x: x["p50_us"] / 1e3), "%.1f"),
              fmt(hot(lambda x: x["p99_us"] / 1e3), "%.1f"), fmt(hx("max_ms"), "%.0f"),
              med(hx("cancel_pct"), "%.1f"), fmt(hx("cancel_ccf"), "%.0f"),
              med(hx("cancel_conflict"), "%.0f"), med(hx("cross_part_pct"), "%.0f")))
    # a round of txn_hot is in the results only if its checks passed and no call reached the
    # watchdog (bench/txn/hot.c, watch.c); a failed one is in the errors
    failed = [e for f in files for e in f[3] if e[0] == "txn_hot"]
    if failed:
        held = "**failed** in %d round%s: %s" % (len(failed), "" if len(failed) == 1 else "s",
                                                 "; ".join(e[2] for e in failed))
    else:
        held = ("held (every round): no call reached the 30 s watchdog (longest above); the "
                "total held at every TransactGetItems snapshot (%s a round) and at the end, "
                "and every item ended at its start plus its committed moves"
                % med(hx("snapshots"), "%.0f"))
    rows.append(("contention: %d threads moving amounts between 2 of 100 hot items "
                 "(sync, %d s)" % (threads, s.get("txn_seconds", 0)), fig,
                 "report; no deadlock, no timeout; the total unchanged", held))
    print("| measure | median (rounds) | target | |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    print()
    print("| workload | items/s | calls/s | p50 us | p99 us | WAL fsyncs / call "
          "| txn-log fsyncs / call | fsyncs in flight |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for w in WORKLOADS:
        if w == "txn_hot":
            items, calls = "-", hx("committed_per_sec")
        else:
            items = med(ops(w), ",")
            calls = per_round(w, lambda x: x["extras"].get("calls_per_sec", x["ops_per_sec"]))
        print("| %s | %s | %s | %s | %s | %s | %s | %s |"
              % (w, items, med(calls, ","), med(per_round(w, lambda x: x["p50_us"]), "%.0f"),
                 med(per_round(w, lambda x: x["p99_us"]), "%.0f"),
                 med(per_round(w, lambda x: extra(x, "wal_syncs_per_call")), "%.2f"),
                 med(per_round(w, lambda x: extra(x, "txnlog_syncs_per_call")), "%.2f"),
                 med(per_round(w, lambda x: extra(x, "syncs_in_flight")), "%.2f")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
