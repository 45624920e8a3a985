#!/usr/bin/env python3
"""stream_tables.py - the "Change streams" tables of docs/BENCHMARKS.md from kura-bench JSON
files of the change stream workloads (bench/txn/stream.c; SUITE=stream scripts/bench.sh).

usage: bench/stream_tables.py RESULTS.json [MORE.json ...]

Every figure is taken round by round, as bench/txn_tables.py does: a ratio compares two
workloads (or two figures of one) of the same round; with several files the rounds are
pooled. Each row gives the median over the rounds, every round's value, and the verdict over
the rounds (bench/round_stats.py). The second table gives each workload's medians: the
writers' figures (CPU of the whole process per PutItem, WAL bytes per PutItem), the third the
consumers' (the poll period: a GetRecords call's return - the start of the same shard's call
before it, how long a record can wait from polling alone). Exit status 1 if a file lacks a workload.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from round_stats import extra, fmt, rounds, verdict  # noqa: E402
from txn_tables import load, med  # noqa: E402

WORKLOADS = ["stream_put_solo", "stream_put", "stream_put_solo_sync", "stream_put_sync",
             "stream_read", "stream_lag", "stream_lag_sync", "stream_over_solo", "stream_over"]
KEEP_UP = 0.99  # stream_read: the share read by the time the writers stopped


def main():
    files = load(sys.argv[1:])
    s = files[0][2]
    for p, runs, _, _ in files:
        missing = [w for w in WORKLOADS if w not in runs]
        if missing:
            print("stream_tables: %s has no runs of %s" % (p, ", ".join(missing)),
                  file=sys.stderr)
            return 1
    threads = s["threads"]

    def per_round(w, f):
        return rounds(files, lambda r: f(r[w]))

    def ops(w):
        return per_round(w, lambda x: x["ops_per_sec"])

    def ex(w, name):
        return per_round(w, lambda x: extra(x, name))

    rows = []
    for what, a, b in (
            ("PutItem with a NEW_AND_OLD_IMAGES stream / without (%d threads, relaxed), "
             "PutItems/s" % threads, "stream_put", "stream_put_solo"),
            ("the same, sync durability", "stream_put_sync", "stream_put_solo_sync"),
            ("the same, overwrites of 10,000 items per thread (relaxed)", "stream_over",
             "stream_over_solo")):
        v = rounds(files, lambda r, a=a, b=b: r[a]["ops_per_sec"] / r[b]["ops_per_sec"])
        fig = "%s; %s / %s" % (fmt(v, "%.2fx"), med(ops(a), ","), med(ops(b), ","))
        rows.append((what, fig, ">= 0.8x", verdict(v, lambda x: x >= 0.8)))

    v = rounds(files, lambda r: extra(r["stream_read"], "drain_per_sec") /
               r["stream_put"]["ops_per_sec"])
    fig = "%s; %s records/s / %s PutItems/s" % (fmt(v, "%.2fx"),
                                                med(ex("stream_read", "drain_per_sec"), ","),
                                                med(ops("stream_put"), ","))
    rows.append(("GetRecords (Limit 1000): records/s one consumer reads, draining the stream "
                 "alone / the table's write rate (stream_put, %d threads)" % threads, fig,
                 ">= 1x", verdict(v, lambda x: x >= 1)))

    keep = ex("stream_read", "keep_up_pct")
    fig = ("%s%% read by the writers' stop; %s / %s records/s read / written; backlog then "
           "%s records, read %s ms later"
           % (fmt(keep, "%.2f"), med(ex("stream_read", "read_window_per_sec"), ","),
              med(ex("stream_read", "put_per_sec"), ","),
              fmt(ex("stream_read", "backlog_at_stop"), "%.0f"),
              fmt(ex("stream_read", "catch_up_ms"), "%.0f")))
    rows.append(("the same consumer beside %d PutItem threads at full speed (%d s)"
                 % (threads, s.get("txn_seconds", 0)), fig,
                 ">= %.0f%% read by the stop (keeps up)" % (KEEP_UP * 100),
                 verdict(keep, lambda x: x >= KEEP_UP * 100)))

    for lag, mode in (("stream_lag_sync", "sync"), ("stream_lag", "relaxed")):
        p99 = ex(lag, "lag_p99_ms")
        if not p99:
            continue
        fig = ("p99 %s ms; p50 %s ms; max %s ms; from the PutItem call: p99 %s ms; at %s of "
               "%s PutItems/s (the maximum)"
               % (fmt(p99, "%.2f"), fmt(ex(lag, "lag_p50_ms"), "%.2f"),
                  fmt(ex(lag, "lag_max_ms"), "%.1f"),
                  fmt(ex(lag, "lag_start_p99_ms"), "%.2f"),
                  med(ex(lag, "done_per_sec"), ","),
                  med(ex(lag, "max_per_sec"), ",")))
        rows.append(("write acknowledged -> record in a polling consumer's GetRecords, at 50%% "
                     "of the maximum write rate (%d threads, %s)" % (threads, mode), fig,
                     "p99 < 10 ms", verdict(p99, lambda x: x < 10)))

    print("| measure | median (rounds) | target | |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    print()
    print("| workload | PutItems/s | p50 us | p99 us | CPU us / PutItem | WAL bytes / PutItem "
          "| WAL fsyncs / PutItem |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for w in WORKLOADS[:4]:
        wal = ex(w, "wal_bytes_per_put") if "solo" not in w else []
        print("| %s | %s | %s | %s | %s | %s | %s |"
              % (w, med(ops(w), ","), med(per_round(w, lambda x: x["p50_us"]), "%.1f"),
                 med(per_round(w, lambda x: x["p99_us"]), "%.0f"),
                 med(ex(w, "cpu_us_per_put"), "%.1f"), med(wal, "%.0f") if wal else "-",
                 med(ex(w, "wal_syncs_per_call"), "%.2f")))
    print()
    print("| consumer | records/s | CPU us / record | CPU % | GetRecords/s | records / call "
          "| empty calls | call p50 us | call p99 us | call max ms | poll period p99 / max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, w, pre, rate, cpu, pct in (
            ("stream_read, beside the writers", "stream_read", "live", None,
             "live_cpu_us_per_rec", "live_cpu_pct"),
            ("stream_read, the drain", "stream_read", "drain", "drain_per_sec",
             "drain_cpu_us_per_rec", "drain_cpu_pct"),
            ("stream_lag, polling", "stream_lag", "poll", "done_per_sec",
             "consumer_cpu_us_per_rec", "consumer_cpu_pct")):
        recs = ex(w, rate) if rate else ops(w)
        print("| %s | %s | %s | %s | %s | %s | %s%% | %s | %s | %s | %s / %s |"
              % (label, med(recs, ","), med(ex(w, cpu), "%.1f"), med(ex(w, pct), "%.0f"),
                 med(ex(w, pre + "_calls_per_sec"), ","),
                 med(ex(w, pre + "_recs_per_call"), "%.0f"),
                 med(ex(w, pre + "_empty_pct"), "%.0f"),
                 med(ex(w, pre + "_call_p50_us"), "%.0f"),
                 med(ex(w, pre + "_call_p99_us"), "%.0f"),
                 med(ex(w, pre + "_call_max_ms"), "%.1f"),
                 med(ex(w, pre + "_period_p99_ms"), "%.1f"),
                 med(ex(w, pre + "_period_max_ms"), "%.1f")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
