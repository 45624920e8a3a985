#!/usr/bin/python3
"""plot_bench.py - draws the charts of docs/BENCHMARKS.md from kura-bench and
kura-http-bench JSON files (bench/report.h, bench/http/report.h).

Usage: scripts/plot_bench.py --out=PREFIX FILE.json[:LABEL] [FILE.json[:LABEL] ...]

kura-bench files (several are merged, as bench/tables.py merges them; ":LABEL" renames the
engines of that file to "ENGINE (LABEL)", e.g. a kura-only run with --partitions=1):
  PREFIX-throughput.png  ops/s per engine per workload (log scale), and the seconds of
                         compact and recover
  PREFIX-latency.png     p50 and p99 per engine per workload (log scale)
kura-bench files of the index workloads (bench/index/index.h; SUITE=index scripts/bench.sh;
the rounds of several files are pooled):
  PREFIX-throughput.png  PutItem with 0, 2 and 5 GSIs (the applier's catching up included,
                         and the acknowledgements alone), Query of the table and of the GSI,
                         the backfill against the fill of the same items; a dot per round
  PREFIX-lag.png         GSI lag p50, p99 and max at 50% and 90% of the maximum write rate,
                         a dot per round, with the targets
kura-bench files of the transaction workloads (bench/txn/txn.h; SUITE=txn scripts/bench.sh;
the rounds of several files are pooled):
  PREFIX-ratios.png      each target's ratio (transactions against the same writes as
                         PutItems or BatchWriteItem; PutItem beside transactions against
                         alone), a dot per round, with the targets; and txn_hot's latency
  PREFIX-throughput.png  items per second of each pair of workloads compared (log scale)
kura-bench files of the change stream workloads (bench/txn/stream.c; SUITE=stream
scripts/bench.sh; the rounds of several files are pooled):
  PREFIX.png             PutItem with a stream / without (relaxed, sync), one consumer's
                         drain / the write rate, the share it had read when the writers
                         stopped, and the write -> record lag at 50% of the maximum write
                         rate; a dot per round, with the targets
kura-http-bench files (scripts/bench_http.sh's combined files; the rounds of several are
pooled, as bench/http/http_tables.py pools them):
  PREFIX-throughput.png  req/s per server per workload at each connection count, with
                         kura's ratio to dynalite over its bars
  PREFIX-latency.png     p50, p90, p99 and p99.9 per server per workload at 32 connections
  PREFIX-rounds.png      kura / dynalite at 32 connections and kura's GetItem p99, round by
                         round, against their targets (with more than one round)

Every figure drawn is a median over the rounds in the files. Needs Debian's
python3-matplotlib (scripts/setup.sh bench), hence /usr/bin/python3 rather than whatever
python3 comes first in PATH; draws with the Agg backend, no display, no network.
Exit status: 0, or 1 for an unreadable input or a missing matplotlib.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "http"))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import http_tables  # noqa: E402  (the pooling of rounds, shared with the tables)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator
except ImportError:
    print("plot_bench.py: needs matplotlib: apt-get install python3-matplotlib "
          "(scripts/setup.sh bench)", file=sys.stderr)
    sys.exit(1)

TIMED = ("compact", "recover")  # one operation each: seconds, not ops/s
PEER = http_tables.PEER
OPS = {"put": "PutItem", "get": "GetItem", "query": "Query", "query_gsi": "Query (GSI)",
       "load": "load"}
# kura in blues, every peer in a colour of its own, the same in every chart
COLORS = {"kura": "#1f4e9c", "kura-sync": "#6f9bd8", "kura-relaxed": "#1f4e9c",
          "kura-raw": "#1f4e9c", "kura-capi": "#4f7fc8", "kura-json": "#9dbbe8",
          "rocksdb": "#d6604d", "leveldb": "#f4a582", "lmdb": "#4dac26", "sqlite": "#8c6bb1",
          PEER: "#b35806"}
EXTRA = ["#7fb2e5", "#a6cee3", "#999999", "#666666"]
DPI = 110


def human(y, _pos=None):
    """1500000 -> 1.5M, 20000 -> 20k, 0.1 -> 0.1: tick labels without exponents."""
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if y >= div:
            return "{:g}{}".format(round(y / div, 2), unit)
    return "{:g}".format(round(y, 3))


def scale(ax, values, what):
    """Log scale when the values span more than 30x (else the small bars vanish), linear
    otherwise (a log axis over a narrow range has too few ticks to read); on a log axis of
    less than three decades the 2s and 5s are labelled too."""
    v = [x for x in values if x]
    log = bool(v) and max(v) / min(v) > 30
    if log:
        ax.set_yscale("log")
        if max(v) / min(v) < 1000:
            ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
            ax.yaxis.set_minor_formatter(FuncFormatter(human))
    ax.yaxis.set_major_formatter(FuncFormatter(human))
    ax.set_ylabel("%s (%s)" % (what, "log scale" if log else "linear"))


def color(name, i):
    base = name.split(" (")[0]
    if name in COLORS:
        return COLORS[name]
    if base in COLORS and base != name:
        return EXTRA[i % 2]  # a relabelled kura: a lighter blue
    return EXTRA[2 + i % 2]


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    print(path)


def grouped_bars(ax, groups, names, value, width=0.8, alpha=1.0, labels=True):
    """Bars of value(group, name) (None: no bar), one cluster per group, one colour per
    name; returns the x of every (group, name)."""
    step = width / max(len(names), 1)
    xs = {}
    for j, name in enumerate(names):
        for i, g in enumerate(groups):
            v = value(g, name)
            x = i - width / 2 + step * (j + 0.5)
            xs[(g, name)] = x
            if v is not None and v > 0:
                ax.bar(x, v, step * 0.92, color=color(name, j), alpha=alpha,
                       edgecolor=color(name, j), linewidth=0.6,
                       label=name if labels and i == 0 else None)
    ax.set_axisbelow(True)
    return xs


# ---------------------------------------------------------------------------------------
# kura-bench


def load_kv(specs):
    """{(workload, threads): {engine: result}}, the keys in order, the engines in order."""
    rows, order, engines, machine = {}, [], [], None
    for spec in specs:
        path, label = spec, None
        if ":" in os.path.basename(spec):
            path, label = spec.rsplit(":", 1)
        with open(path) as f:
            d = json.load(f)
        machine = machine or d["machine"]
        for r in d["results"]:
            key = (r["workload"], r["threads"])
            name = r["engine"] if label is None else "%s (%s)" % (r["engine"], label)
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key][name] = r
            if name not in engines:
                engines.append(name)
    # a relabelled engine next to the one it is a variant of
    first = list(engines)
    engines.sort(key=lambda e: (first.index(e.split(" (")[0]) if e.split(" (")[0] in first
                                else first.index(e), first.index(e)))
    return rows, order, engines, machine


def kv_label(key, order):
    wl, th = key
    several = len({t for w, t in order if w == wl}) > 1
    return "%s\n%d thread%s" % (wl, th, "" if th == 1 else "s") if several else wl


def kv_charts(specs, out):
    rows, order, engines, m = load_kv(specs)
    rounds = {len(r["runs"]) for e in rows.values() for r in e.values()}
    note = "median of %s round%s; %s, %s cores" % (
        "/".join(str(x) for x in sorted(rounds)), "" if rounds == {1} else "s",
        m["cpu_model"], m["cores"])
    ops = [k for k in order if k[0] not in TIMED]
    timed = [k for k in order if k[0] in TIMED]

    def ops_of(k, e):
        r = rows[k].get(e)
        return r["ops_per_sec"] if r else None

    def secs_of(k, e):
        r = rows[k].get(e)
        return r["seconds"] if r else None

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), squeeze=False,
                             gridspec_kw={"width_ratios": [max(len(ops), 1), max(len(timed), 1)
                                                           if timed else 0.01]})
    ax = axes[0][0]
    xs = grouped_bars(ax, ops, engines, ops_of)
    scale(ax, [ops_of(k, e) for k in ops for e in engines], "operations per second")
    if len(engines) <= 3:  # room for each bar's ratio to the bar on its left
        for k in ops:
            for left, e in zip(engines, engines[1:]):
                base, v = ops_of(k, left), ops_of(k, e)
                if base and v:
                    ax.annotate("%.2fx %s" % (v / base, left), (xs[(k, e)], v),
                                ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                                textcoords="offset points")
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels([kv_label(k, order) for k in ops], fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Throughput, " + note, fontsize=10)
    ax.legend(fontsize=8, ncol=len(engines), loc="upper center", bbox_to_anchor=(0.5, -0.13))
    ax2 = axes[0][1]
    if timed:
        grouped_bars(ax2, timed, engines, secs_of, labels=False)
        ax2.set_xticks(range(len(timed)))
        ax2.set_xticklabels([k[0] for k in timed], fontsize=8)
        ax2.set_ylabel("seconds (lower is better)")
        ax2.grid(axis="y", alpha=0.25)
        ax2.set_title("One operation each", fontsize=10)
    else:
        ax2.axis("off")
    save(fig, out + "-throughput.png")

    fig, ax = plt.subplots(figsize=(12, 4.8))

    def pct(field):
        def f(k, e):
            r = rows[k].get(e)
            return r[field] if r else None
        return f
    grouped_bars(ax, ops, engines, pct("p99_us"), alpha=0.35, labels=False)
    grouped_bars(ax, ops, engines, pct("p50_us"))
    scale(ax, [pct(f)(k, e) for f in ("p50_us", "p99_us") for k in ops for e in engines],
          "microseconds per operation")
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels([kv_label(k, order) for k in ops], fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Latency: p50 (solid) and p99 (light, above it), " + note, fontsize=10)
    ax.legend(fontsize=8, ncol=len(engines), loc="upper center", bbox_to_anchor=(0.5, -0.13))
    save(fig, out + "-latency.png")


# ---------------------------------------------------------------------------------------
# kura-bench, index workloads

INDEX_WLS = ("putitem_gsi0", "putitem_gsi2", "putitem_gsi5", "query_base", "query_gsi",
             "gsi_lag", "backfill")


def is_index(paths):
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if any(r["workload"] in INDEX_WLS for r in d["results"]):
            return True
    return False


def index_rounds(paths):
    """[{workload: run}] per round of every file (kura-capi), and the first machine."""
    out, machine = [], None
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        machine = machine or d["machine"]
        runs = {r["workload"]: {x["repeat"]: x for x in r["runs"]}
                for r in d["results"] if r["engine"] == "kura-capi"}
        for rep in sorted({k for w in runs.values() for k in w}):
            out.append({w: runs[w][rep] for w in runs if rep in runs[w]})
    return out, machine


def bars_with_rounds(ax, labels, series, colors):
    """One bar per label at the median of its rounds (None: no bar), the rounds as dots."""
    for i, (label, vals, c) in enumerate(zip(labels, series, colors)):
        vals = [v for v in vals if v is not None]
        if not vals:
            continue
        med = http_tables.median(vals)
        ax.bar(i, med, 0.7, color=c, alpha=0.85)
        ax.scatter([i + 0.12 * ((n % 3) - 1) for n in range(len(vals))], vals, s=12,
                   color="black", zorder=3)
        ax.annotate(human(med) if med >= 1000 else "%.3g" % med, (i, med), ha="center",
                    va="bottom", fontsize=7,
                    xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.yaxis.set_major_formatter(FuncFormatter(human))


def index_charts(paths, out):
    rs, m = index_rounds(paths)
    note = "%d round%s; %s, %s cores" % (len(rs), "" if len(rs) == 1 else "s",
                                         m["cpu_model"], m["cores"])

    def get(w, f):
        return [f(r[w]) if w in r else None for r in rs]

    def ext(name):
        return lambda run: run.get("extras", {}).get(name)

    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4.6),
                                       gridspec_kw={"width_ratios": [3, 1.4, 1.4]})
    labels, series, colors = [], [], []
    for n in ("0", "2", "5"):
        w = "putitem_gsi" + n
        labels += ["%s GSIs" % n, "%s GSIs\nacks only" % n]
        series += [get(w, lambda x: x["ops_per_sec"]), get(w, ext("ack_ops_per_sec"))]
        colors += [COLORS["kura"], COLORS["kura-json"]]
    bars_with_rounds(ax, labels, series, colors)
    ax.set_ylabel("PutItem per second (linear)")
    ax.set_title("PutItem, 1 thread: GSIs (ALL) applied before the clock stops,\n"
                 "and the acknowledgements alone", fontsize=9)
    bars_with_rounds(ax2, ["table", "GSI by_grp"],
                     [get("query_base", lambda x: x["ops_per_sec"]),
                      get("query_gsi", lambda x: x["ops_per_sec"])],
                     [COLORS["kura"], COLORS["kura-capi"]])
    ax2.set_ylabel("Queries (20 items) per second")
    ax2.set_title("Query, the same 20 items", fontsize=9)
    bars_with_rounds(ax3, ["PutItem fill", "backfill"],
                     [get("backfill", ext("fill_per_sec")),
                      get("backfill", lambda x: x["ops_per_sec"])],
                     [COLORS["kura"], COLORS["kura-capi"]])
    ax3.set_ylabel("items per second")
    ax3.set_title("A GSI built on a loaded table", fontsize=9)
    fig.suptitle("Secondary indexes, " + note, fontsize=10)
    save(fig, out + "-throughput.png")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, pct in zip(axes, ("50", "90")):
        stats = ("p50", "p99", "max")
        bars_with_rounds(ax, stats, [get("gsi_lag", ext("lag%s_%s_ms" % (pct, st)))
                                     for st in stats],
                         [COLORS["kura"], COLORS["kura-capi"], COLORS["kura-json"]])
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(human))
        ax.set_title("GSI lag at %s%% of the maximum write rate" % pct, fontsize=9)
        if pct == "50":
            ax.set_ylabel("milliseconds from acknowledgement to applied (log)")
            for y, x0, text in ((10, 1, "p99 < 10 ms"), (100, 2, "max < 100 ms")):
                ax.hlines(y, x0 - 0.4, x0 + 0.4, color="black", lw=0.9, ls="--")
                ax.annotate("target " + text, (x0 - 0.4, y), fontsize=7, xytext=(0, 2),
                            textcoords="offset points")
    fig.suptitle("GSI lag, open loop, a dot per round; " + note, fontsize=10)
    save(fig, out + "-lag.png")


# ---------------------------------------------------------------------------------------
# kura-bench, transaction workloads

# (label, transactions, the same writes without, target), as bench/txn_tables.py
TXN_PAIRS = (("2 items, 2 partitions\n/ 2 PutItems, sync", "pairs_txn", "pairs_put", 0.5),
             ("25 items\n/ BatchWriteItem, sync", "txn25_sync", "batch25_sync", 0.5),
             ("25 items\n/ BatchWriteItem, relaxed", "txn25", "batch25", 0.5),
             ("PutItem beside txns\n/ alone, sync", "put_mixed_sync", "put_solo_sync", 0.8),
             ("PutItem beside txns\n/ alone, relaxed", "put_mixed", "put_solo", 0.8))


def is_txn(paths):
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if any(r["workload"] == "pairs_txn" for r in d["results"]):
            return True
    return False


def txn_charts(paths, out):
    rs, m = index_rounds(paths)  # the same layout: {workload: run} per round
    note = "%d round%s; %s, %s cores" % (len(rs), "" if len(rs) == 1 else "s",
                                         m["cpu_model"], m["cores"])

    def ratio(a, b):
        return [r[a]["ops_per_sec"] / r[b]["ops_per_sec"] for r in rs
                if a in r and b in r and r[b]["ops_per_sec"]]

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [3, 1.2]})
    bars_with_rounds(ax, [p[0] for p in TXN_PAIRS], [ratio(p[1], p[2]) for p in TXN_PAIRS],
                     [COLORS["kura"]] * 3 + [COLORS["kura-capi"]] * 2)
    for i, p in enumerate(TXN_PAIRS):
        ax.hlines(p[3], i - 0.45, i + 0.45, color="black", lw=0.9, ls="--")
    ax.annotate("dashed: the targets", (0.01, 0.95), xycoords="axes fraction", fontsize=7)
    ax.set_ylabel("ratio, same round (items/s or PutItems/s)")
    ax.set_title("Transactions against the same writes without them", fontsize=9)
    hot = [r["txn_hot"] for r in rs if "txn_hot" in r]
    bars_with_rounds(ax2, ["p50", "p99", "longest"],
                     [[x["p50_us"] / 1e3 for x in hot], [x["p99_us"] / 1e3 for x in hot],
                      [x["extras"]["max_ms"] for x in hot]],
                     [COLORS["kura"], COLORS["kura-capi"], COLORS["kura-json"]])
    ax2.set_ylabel("milliseconds per transaction")
    ax2.set_title("txn_hot: moves between 2 of 100 hot items", fontsize=9)
    fig.suptitle("Transactions, " + note, fontsize=10)
    save(fig, out + "-ratios.png")

    fig, ax = plt.subplots(figsize=(12, 4.4))
    labels, series, colors = [], [], []
    for label, a, b, _ in TXN_PAIRS:
        for w, c in ((b, COLORS["kura-json"]), (a, COLORS["kura"])):
            labels.append(w)
            series.append([r[w]["ops_per_sec"] for r in rs if w in r])
            colors.append(c)
    bars_with_rounds(ax, labels, series, colors)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(human))
    ax.set_xticklabels(labels, fontsize=7, rotation=20)
    ax.set_ylabel("items (PutItems) per second, log")
    ax.set_title("Each pair: without transactions (light), with (dark); " + note, fontsize=9)
    save(fig, out + "-throughput.png")


# ---------------------------------------------------------------------------------------
# kura-bench, change stream workloads


def is_stream(paths):
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if any(r["workload"].startswith("stream_") for r in d["results"]):
            return True
    return False


def stream_charts(paths, out):
    rs, m = index_rounds(paths)  # the same layout: {workload: run} per round
    note = "%d round%s; %s, %s cores" % (len(rs), "" if len(rs) == 1 else "s",
                                         m["cpu_model"], m["cores"])

    def ratio(fa, fb):
        vals = []
        for r in rs:
            try:
                vals.append(fa(r) / fb(r))
            except (KeyError, ZeroDivisionError):
                pass
        return vals

    def ops(w):
        return lambda r: r[w]["ops_per_sec"]

    def ext(w, name):
        return lambda r: r[w]["extras"][name]

    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4.6),
                                       gridspec_kw={"width_ratios": [2.2, 1, 1.4]})
    bars = (("PutItem, stream\n/ none, relaxed",
             ratio(ops("stream_put"), ops("stream_put_solo")), 0.8),
            ("PutItem, stream\n/ none, sync",
             ratio(ops("stream_put_sync"), ops("stream_put_solo_sync")), 0.8),
            ("one consumer's drain\n/ the write rate",
             ratio(ext("stream_read", "drain_per_sec"), ops("stream_put")), 1.0))
    bars_with_rounds(ax, [b[0] for b in bars], [b[1] for b in bars],
                     [COLORS["kura"], COLORS["kura-capi"], COLORS["kura-json"]])
    for i, b in enumerate(bars):
        ax.hlines(b[2], i - 0.45, i + 0.45, color="black", lw=0.9, ls="--")
    ax.annotate("dashed: the targets", (0.01, 0.95), xycoords="axes fraction", fontsize=7)
    ax.set_ylabel("ratio, same round")
    ax.set_title("What a stream costs PutItem; what one consumer reads", fontsize=9)
    keep = [r["stream_read"]["extras"]["keep_up_pct"] for r in rs if "stream_read" in r]
    bars_with_rounds(ax2, ["read by the\nwriters' stop"], [keep], [COLORS["kura-capi"]])
    ax2.hlines(99, -0.45, 0.45, color="black", lw=0.9, ls="--")
    ax2.set_ylim(min(keep + [99]) - 1, 100.2)
    ax2.set_ylabel("% of the records written")
    ax2.set_title("One consumer beside PutItem\nthreads at full speed", fontsize=9)
    lag = [r["stream_lag"]["extras"] for r in rs if "stream_lag" in r]
    bars_with_rounds(ax3, ["p50", "p99", "max"],
                     [[x["lag_p50_ms"] for x in lag], [x["lag_p99_ms"] for x in lag],
                      [x["lag_max_ms"] for x in lag]],
                     [COLORS["kura"], COLORS["kura-capi"], COLORS["kura-json"]])
    ax3.hlines(10, 0.55, 1.45, color="black", lw=0.9, ls="--")
    ax3.set_yscale("log")
    ax3.set_ylabel("ms, acknowledgement -> GetRecords (log)")
    ax3.set_title("Write -> record at 50% of the\nmaximum write rate", fontsize=9)
    fig.suptitle("Change streams, " + note, fontsize=10)
    save(fig, out + ".png")


# ---------------------------------------------------------------------------------------
# kura-http-bench


def http_charts(paths, out):
    servers, combined = http_tables.load_inputs(paths)
    names = [s["name"] for s in servers]
    byname = {s["name"]: s for s in servers}
    peer = byname.get(PEER)
    nrounds = max(s.get("rounds", 1) for s in servers)
    m = combined["machine"] if combined else None
    note = "median of %d round%s" % (nrounds, "" if nrounds == 1 else "s")
    if m:
        note += "; %s, %s cores" % (m["cpu_model"], m["cores"])
    keys = []
    for s in servers:
        for r in s["results"]:
            k = (r["workload"], r["connections"])
            if k[0] != "load" and k not in keys:
                keys.append(k)
    keys.sort(key=lambda k: (k[1], list(OPS).index(k[0]) if k[0] in OPS else 9))

    def rps(k, name):
        r = http_tables.row(byname[name], *k)
        return r["req_per_sec"] if r else None

    fig, ax = plt.subplots(figsize=(11, 4.8))
    xs = grouped_bars(ax, keys, names, rps)
    scale(ax, [rps(k, n) for k in keys for n in names], "requests per second")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["%s\n%d conn%s" % (OPS.get(w, w), c, "" if c == 1 else "s")
                        for w, c in keys], fontsize=8)
    for k in keys:
        for name in names:
            p, v = rps(k, PEER) if peer else None, rps(k, name)
            if name != PEER and p and v:
                ax.annotate("%.1fx" % (v / p), (xs[(k, name)], v), ha="center", va="bottom",
                            fontsize=7, xytext=(0, 2), textcoords="offset points")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("Throughput over HTTP (ratios: kura / %s), %s" % (PEER, note), fontsize=10)
    ax.legend(fontsize=8, ncol=len(names), loc="upper center", bbox_to_anchor=(0.5, -0.13))
    save(fig, out + "-throughput.png")

    pcts = [("p50_us", "p50"), ("p90_us", "p90"), ("p99_us", "p99"), ("p999_us", "p99.9")]
    wls = [w for w, c in keys if c == 32]
    if wls:
        fig, axes = plt.subplots(1, len(wls), figsize=(4 * len(wls), 4.2), squeeze=False)
        for ax, wl in zip(axes[0], wls):
            def ms(p, name, wl=wl):
                r = http_tables.row(byname[name], wl, 32)
                return r[p] / 1000.0 if r and r.get(p) is not None else None
            grouped_bars(ax, [p for p, _ in pcts], names, ms, labels=ax is axes[0][0])
            scale(ax, [ms(p, n) for p, _ in pcts for n in names], "milliseconds")
            ax.set_xticks(range(len(pcts)))
            ax.set_xticklabels([label for _, label in pcts], fontsize=8)
            ax.set_title("%s, 32 connections" % OPS.get(wl, wl), fontsize=10)
            ax.grid(axis="y", alpha=0.3)
            if wl == "get":
                ax.axhline(http_tables.TARGET_GET_P99_MS, color="black", lw=0.8, ls="--")
                ax.annotate("target: p99 < %g ms" % http_tables.TARGET_GET_P99_MS,
                            (-0.45, http_tables.TARGET_GET_P99_MS), fontsize=7,
                            xytext=(0, 2), textcoords="offset points")
        fig.legend(fontsize=8, ncol=len(names), loc="lower center")
        fig.suptitle("Latency percentiles over HTTP, " + note, fontsize=10)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        fig.savefig(out + "-latency.png", dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        print(out + "-latency.png")

    if peer and len(peer.get("runs", [])) > 1:
        rounds_chart(servers, peer, out)


def dots(ax, x0, width, values, name, j, label, fmt):
    """One dot per round around x0 (spread so they do not hide each other), the median as
    a bar with its value."""
    spread = [x0 + width * 0.5 * ((n % 5) - 2) / 5 for n in range(len(values))]
    ax.scatter(spread, values, s=14, color=color(name, j), alpha=0.8,
               label=name if label else None)
    med = http_tables.median(values)
    ax.hlines(med, x0 - width * 0.4, x0 + width * 0.4, color="black", lw=1.5)
    ax.annotate(fmt % med, (x0 + width * 0.42, med), fontsize=7, va="center")


def target_line(ax, y, text):
    ax.axhline(y, color="black", lw=0.8, ls="--")
    ax.annotate(text, (0.01, y), xycoords=("axes fraction", "data"), fontsize=7,
                xytext=(0, 2), textcoords="offset points")


def rounds_chart(servers, peer, out):
    """The targets that sit near their line, round by round: kura / dynalite at 32
    connections (the servers take turns within a round, so a round's ratio compares
    minutes-apart runs), and kura's GetItem p99."""
    kuras = [s for s in servers if s["name"] != PEER]
    wls = ["put", "get", "query"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [3, 1.2]})
    width = 0.8 / max(len(kuras), 1)
    for j, k in enumerate(kuras):
        for i, wl in enumerate(wls):
            xs = []
            for kr, pr in zip(k.get("runs", []), peer["runs"]):
                a, b = http_tables.row(kr, wl, 32), http_tables.row(pr, wl, 32)
                if a and b and b["req_per_sec"]:
                    xs.append(a["req_per_sec"] / b["req_per_sec"])
            if xs:
                dots(ax, i - 0.4 + width * (j + 0.5), width, xs, k["name"], j, i == 0, "%.1fx")
        p99 = [r["p99_us"] / 1000.0 for r in (http_tables.row(kr, "get", 32)
                                              for kr in k.get("runs", [])) if r]
        if p99:
            dots(ax2, j, 0.8, p99, k["name"], j, False, "%.2f")
    target_line(ax, http_tables.TARGET_RATIO, "target %gx" % http_tables.TARGET_RATIO)
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([OPS[w] for w in wls])
    ax.set_ylim(bottom=0)
    ax.set_ylabel("kura req/s / %s req/s, same round" % PEER)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title("kura / %s at 32 connections, each of %d rounds (bar: median)"
                 % (PEER, len(peer["runs"])), fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    target_line(ax2, http_tables.TARGET_GET_P99_MS,
                "target < %g ms" % http_tables.TARGET_GET_P99_MS)
    ax2.set_xticks(range(len(kuras)))
    ax2.set_xticklabels([k["name"] for k in kuras], fontsize=8)
    ax2.set_xlim(-0.6, len(kuras) - 0.4)
    ax2.set_ylim(bottom=0)
    ax2.set_ylabel("milliseconds")
    ax2.grid(axis="y", alpha=0.3)
    ax2.set_title("GetItem p99, 32 connections, each round", fontsize=10)
    save(fig, out + "-rounds.png")


def is_http(path):
    with open(path.rsplit(":", 1)[0] if ":" in os.path.basename(path) else path) as f:
        d = json.load(f)
    return "servers" in d or "connections" in (d.get("results") or [{}])[0]


def main():
    ap = argparse.ArgumentParser(description="Charts of kura-bench and kura-http-bench JSON.")
    ap.add_argument("--out", required=True, help="prefix of the PNG files")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    try:
        kinds = {is_http(p) for p in a.inputs}
        if len(kinds) > 1:
            print("plot_bench.py: give kura-bench or kura-http-bench files, not both",
                  file=sys.stderr)
            return 1
        if kinds.pop():
            http_charts(a.inputs, a.out)
        elif is_index([p.rsplit(":", 1)[0] if ":" in os.path.basename(p) else p
                       for p in a.inputs]):
            index_charts(a.inputs, a.out)
        elif is_txn(a.inputs):
            txn_charts(a.inputs, a.out)
        elif is_stream(a.inputs):
            stream_charts(a.inputs, a.out)
        else:
            kv_charts(a.inputs, a.out)
    except (OSError, ValueError, KeyError) as e:
        print("plot_bench.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
