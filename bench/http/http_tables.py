#!/usr/bin/env python3
"""http_tables.py - combines kura-http-bench's per-server JSON files (bench/http/report.h)
into one file with the machine's description (several rounds of a server become the medians
of its figures, field by field, with every round kept under "runs"), and prints the markdown
tables of docs/BENCHMARKS.md's section "HTTP: kura-server vs dynalite": throughput and
latency with the kura/dynalite ratios, the ratios round by round, start time and memory, and
issue 4's targets.

Usage: http_tables.py [--command=CMD] [--dir=DATA_DIR] [--out=FILE] RUN.json...
  With --out the combined JSON is written there; without, the inputs may be a combined file
  (the tables are printed again from it) or several, whose rounds are then pooled: the
  medians and the round-by-round ratios are over every round of every file (docs/BENCHMARKS.md
  reports its HTTP figures so, over the runs made with the same server code).
Exit status: 1 when an input is missing or holds a run with errors, else 0.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

PEER = "dynalite"
ORDER = ["kura-sync", "kura-relaxed", "dynalite"]
TARGET_RATIO = 10.0
TARGET_GET_P99_MS = 2.0
TARGET_START_MS = 20.0
TARGET_RSS_BYTES = 10 * 1000 * 1000  # 10 MB
OPS = {"put": "PutItem", "get": "GetItem", "query": "Query", "query_gsi": "Query (GSI)",
       "load": "load (PutItem)"}


def machine(data_dir):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    fs = "unknown"
    if data_dir and os.path.isdir(data_dir):
        r = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", data_dir],
                           capture_output=True, text=True)
        fs = r.stdout.strip() or fs
    return {"cpu_model": cpu, "cores": os.cpu_count(), "mem_bytes": mem,
            "kernel": platform.release(), "fs": fs,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "load_avg_1m": os.getloadavg()[0],
            "node": subprocess.run(["node", "--version"], capture_output=True,
                                   text=True).stdout.strip()}


def row(server, workload, conns):
    for r in server["results"]:
        if r["workload"] == workload and r["connections"] == conns:
            return r
    return None


def ms(us):
    return "n/a" if us is None else "%.2f" % (us / 1000.0)


def mib(b):
    return "n/a" if b is None else "%.1f" % (b / 1048576.0)


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(x):
    return "n/a" if x is None else "%.1fx" % x


def throughput_table(servers):
    names = [s["name"] for s in servers]
    kuras = [s for s in servers if s["name"] != PEER]
    peer = next((s for s in servers if s["name"] == PEER), None)
    head = "| workload | conns |" + "".join(" %s req/s | %s p50 / p99 ms |" % (n, n)
                                             for n in names)
    head += "".join(" %s / %s |" % (k["name"], PEER) for k in kuras if peer)
    print(head)
    print("|---|---:|" + "---:|---:|" * len(names) + "---:|" * (len(kuras) if peer else 0))
    keys = []
    for s in servers:
        for r in s["results"]:
            if (r["workload"], r["connections"]) not in keys:
                keys.append((r["workload"], r["connections"]))
    for wl, conns in keys:
        line = "| %s | %d |" % (OPS.get(wl, wl), conns)
        for s in servers:
            r = row(s, wl, conns)
            line += " n/a | n/a |" if r is None else " {:,.0f} | {} / {} |".format(
                r["req_per_sec"], ms(r["p50_us"]), ms(r["p99_us"]))
        pr = row(peer, wl, conns) if peer else None
        for k in kuras if peer else []:
            kr = row(k, wl, conns)
            line += " %s |" % fmt_ratio(ratio(kr and kr["req_per_sec"], pr and pr["req_per_sec"]))
        print(line)


def rounds_table(servers):
    """kura / dynalite at 32 connections round by round (the servers take turns within a
    round, so round i of each ran minutes apart), with the median and the range."""
    peer = next((s for s in servers if s["name"] == PEER), None)
    if not peer or len(peer.get("runs", [])) < 2:
        return False
    print("| ratio at 32 connections | rounds | median of the rounds | range |")
    print("|---|---|---:|---:|")
    for k in (s for s in servers if s["name"] != PEER):
        for wl in ("put", "get", "query"):
            xs = []
            for kr, pr in zip(k.get("runs", []), peer["runs"]):
                a, b = row(kr, wl, 32), row(pr, wl, 32)
                xs.append(ratio(a and a["req_per_sec"], b and b["req_per_sec"]))
            got = [x for x in xs if x is not None]
            if not got:
                continue
            print("| %s %s / %s | %s | %s | %s-%s |" % (
                k["name"], OPS[wl], PEER, " ".join(fmt_ratio(x) for x in xs),
                fmt_ratio(median(got)), fmt_ratio(min(got)), fmt_ratio(max(got))))
    return True


def memory_table(servers):
    print("| server | start to first request, ms (median; all) | RSS after start + 1 request "
          "MiB | idle RSS after the workloads MiB | peak RSS MiB | data MiB | restart on the "
          "data, ms | stop (SIGTERM) ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in servers:
        starts = " ".join("%.1f" % x for x in s["start_ms"])
        med = s["start_ms_median"]
        print("| %s | %s (%s) | %s | %s | %s | %s | %s | %s |" % (
            s["name"], "n/a" if med is None else "%.1f" % med, starts,
            mib(s["start_rss_bytes"]), mib(s["idle_rss_bytes"]), mib(s["peak_rss_bytes"]),
            mib(s["data_bytes"]),
            "n/a" if s["restart_ms"] is None else "%.1f" % s["restart_ms"],
            "n/a" if s["stop_ms"] is None else "%.0f" % s["stop_ms"]))


def targets_table(servers):
    peer = next((s for s in servers if s["name"] == PEER), None)
    print("| target | " + " | ".join(s["name"] for s in servers if s["name"] != PEER) + " |")
    print("|---|" + "---|" * len([s for s in servers if s["name"] != PEER]))
    lines = []
    for wl in ("put", "get", "query"):
        cells = []
        for k in servers:
            if k["name"] == PEER:
                continue
            kr, pr = row(k, wl, 32), row(peer, wl, 32) if peer else None
            x = ratio(kr and kr["req_per_sec"], pr and pr["req_per_sec"])
            cells.append("n/a" if x is None else "%.1fx: %s" % (x, "met" if x >= TARGET_RATIO
                                                                 else "not met"))
        lines.append(("%s req/s at 32 connections >= %gx dynalite" % (OPS[wl], TARGET_RATIO),
                      cells))
    cells = []
    for k in (s for s in servers if s["name"] != PEER):
        r = row(k, "get", 32)
        cells.append("n/a" if r is None else "%s ms: %s" % (
            ms(r["p99_us"]), "met" if r["p99_us"] < TARGET_GET_P99_MS * 1000 else "not met"))
    lines.append(("GetItem p99 at 32 connections < %g ms" % TARGET_GET_P99_MS, cells))
    cells = []
    for k in (s for s in servers if s["name"] != PEER):
        m = k["start_ms_median"]
        cells.append("n/a" if m is None else "%.1f ms: %s" % (
            m, "met" if m < TARGET_START_MS else "not met"))
    lines.append(("start to first successful request < %g ms" % TARGET_START_MS, cells))
    for key, what in (("start_rss_bytes", "idle RSS after start + 1 request"),
                      ("idle_rss_bytes", "idle RSS after the workloads")):
        cells = []
        for k in (s for s in servers if s["name"] != PEER):
            b = k[key]
            cells.append("n/a" if b is None else "%.1f MB: %s" % (
                b / 1e6, "met" if b < TARGET_RSS_BYTES else "not met"))
        lines.append(("%s < 10 MB" % what, cells))
    for what, cells in lines:
        print("| %s | %s |" % (what, " | ".join(cells)))


def median(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


MEDIAN_FIELDS = ["start_rss_bytes", "idle_rss_bytes", "peak_rss_bytes", "data_bytes",
                 "stop_ms", "restart_ms", "restart_rss_bytes"]
ROW_MEDIANS = ["seconds", "req_per_sec", "p50_us", "p90_us", "p99_us", "p999_us", "max_us",
               "client_cpu_s", "server_cpu_s"]


def merge_rounds(name, rounds):
    """One server's rounds -> medians, field by field; every round is kept under "runs"."""
    if len(rounds) == 1:
        return rounds[0]
    m = dict(rounds[0])
    m["start_ms"] = [x for r in rounds for x in r["start_ms"]]
    m["start_ms_median"] = median(m["start_ms"])
    for k in MEDIAN_FIELDS:
        m[k] = median(r[k] for r in rounds)
    m["clean_stop"] = "yes" if all(r["clean_stop"] == "yes" for r in rounds) else "no"
    m["restart_found"] = ("yes" if all(r["restart_found"] == "yes" for r in rounds)
                          else rounds[0]["restart_found"] if rounds[0]["restart_found"] == "n/a"
                          else "no")
    results = []
    for base in rounds[0]["results"]:
        same = [x for r in rounds for x in r["results"]
                if x["workload"] == base["workload"] and x["connections"] == base["connections"]]
        row = dict(base)
        for k in ROW_MEDIANS:
            row[k] = median(x[k] for x in same)
        row["requests"] = sum(x["requests"] for x in same)
        row["errors"] = sum(x["errors"] for x in same)
        row["first_error"] = next((x["first_error"] for x in same if x["first_error"]), "")
        row["rounds"] = len(same)
        results.append(row)
    m["results"] = results
    m["rounds"] = len(rounds)
    m["runs"] = rounds
    return m


def load_inputs(paths):
    """The servers of the inputs, each with the medians of its rounds, and the last combined
    file (None when every input is one round of one server). The rounds of several combined
    files are pooled; their machine is the last file's."""
    servers, combined, ncombined = [], None, 0
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        if "servers" in d:
            combined = d
            ncombined += 1
            servers.extend(d["servers"])
        else:
            servers.append(d)
    if combined is None or ncombined > 1:
        by_name = {}
        for s in servers:
            by_name.setdefault(s["name"], []).extend(s.get("runs") or [s])
        servers = [merge_rounds(n, r) for n, r in by_name.items()]
    if ncombined > 1:
        combined = dict(combined, servers=servers)
        combined["settings"] = dict(combined["settings"], rounds=servers[0].get("rounds", 1),
                                    command="%d runs pooled: %s" % (ncombined, " ".join(paths)))
    rank = {n: i for i, n in enumerate(ORDER)}
    # kura's variants (kura-sync-t32, ...) after the standard ones, the peer last
    servers.sort(key=lambda s: (s["name"] == PEER, rank.get(s["name"], len(ORDER)), s["name"]))
    return servers, combined


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--command", default="")
    ap.add_argument("--dir", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    try:
        servers, combined = load_inputs(a.inputs)
    except (OSError, ValueError) as e:
        print("http_tables.py: %s" % e, file=sys.stderr)
        return 1
    if combined is None:
        first = servers[0] if servers else {}
        combined = {"machine": machine(a.dir),
                    "settings": {"command": a.command, "items": first.get("items"),
                                 "duration_s": first.get("duration_s"),
                                 "warmup_s": first.get("warmup_s"),
                                 "client_threads": first.get("client_threads"),
                                 "rounds": first.get("rounds", 1),
                                 "dynalite": "dynalite 4.0.0 on LevelDB (--path), writes "
                                             "not fsynced"},
                    "servers": servers}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(combined, f, indent=1)
            f.write("\n")
    m = combined["machine"]
    print("\n%s, %s cores, %.1f GiB, Linux %s, %s; load average %.2f at the end; %s" % (
        m["cpu_model"], m["cores"], m["mem_bytes"] / 2**30, m["kernel"], m["fs"],
        m["load_avg_1m"], m["date"]))
    print()
    throughput_table(servers)
    print()
    if rounds_table(servers):
        print()
    memory_table(servers)
    print()
    targets_table(servers)
    bad = [s["name"] for s in servers if any(r["errors"] or not r["requests"]
                                             for r in s["results"])]
    if bad:
        print("\nruns with errors or no requests: %s" % ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
