#!/usr/bin/env python3
"""hot_partition_demo.py - This file contains the seeds' hot-partition stories, runnable: each
design of ../shared/scenarios/ (reservation_hot_partition, device_write_sharding,
status_code_partition) run under load against kura-server --throttle, first as the naive
design (every write on one partition-key value) and then with write sharding (a suffix on the
key), printing what throttled, the verdicts of GET /kura/heat and where to look.

Usage:
    scripts/hot_partition_demo.py                       # starts build/bin/kura-server --throttle
    scripts/hot_partition_demo.py --server PATH         # that kura-server binary
    scripts/hot_partition_demo.py --endpoint http://127.0.0.1:8000   # a running
                                                        #   kura-server --throttle
    scripts/hot_partition_demo.py --quick               # a shorter load (the CTest run)
    scripts/hot_partition_demo.py --keep                # leave the started server running

Why the load looks as it does: DynamoDB serves one partition-key value at most 1,000 write
units a second (after one second of burst), and a new on-demand table 4,000. The script writes
10 KB items (10 WCU each) paced at about 2,800 WCU a second: far past one key's limit, well
under the table's, so the naive design throttles and the sharded one, the same load over ten
or more keys, does not. Contributor Insights is enabled on every table when the server has
UpdateContributorInsights.

Exit status: 0 when every naive design throttled and no sharded one did; 1 otherwise (the
client too slow to exceed a key's limit also gives 1, saying so); 2 on a usage or setup error.
The summary lines "naive design ...: THROTTLED" and "sharded design ...: not throttled" are
what tests look for.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

PACE_S = 0.0035           # at most one put per 3.5 ms: ~2,860 WCU a second of 10 WCU items
PAD = "x" * 9900          # makes an item ~10 KB: 10 WCU
READY = "kura-server listening on http://"


def story_designs(run):
    """The three stories: (seed scenario, naive table, sharded table), each table a dict of its
    CreateTable key schema and item(i) building the i-th write."""
    rng = random.Random(24)  # the device's random suffixes, the same every run
    hour = "2025-07-17T09"
    return [
        ("reservation_hot_partition",
         "every reservation of the hour lands on created_at = %s" % hour,
         {"name": "Reservation-" + run, "hash": ("created_at", "S"), "range": ("user_id", "N"),
          "item": lambda i: {"created_at": {"S": hour}, "user_id": {"N": str(100001 + i)},
                             "reservation_id": {"S": "R%05d" % i}, "status": {"S": "booked"}}},
         "partition key created_at#user_id (the seed's pattern 3)",
         {"name": "ReservationSharded-" + run, "hash": ("partition_key", "S"), "range": None,
          "item": lambda i: {"partition_key": {"S": "%s#%d" % (hour, 100001 + i)},
                             "reservation_id": {"S": "R%05d" % i}, "status": {"S": "booked"}}}),
        ("device_write_sharding",
         "one device's readings all on partition_key = device-abc",
         {"name": "DeviceTemperature-" + run, "hash": ("partition_key", "S"),
          "range": ("timestamp", "S"),
          "item": lambda i: {"partition_key": {"S": "device-abc"},
                             "timestamp": {"S": "2025-07-17T00:%02d:%02d.%03d" % (
                                 i // 6000 % 60, i // 100 % 60, i % 1000)},
                             "temperature": {"N": "24.%d" % (i % 10)}}},
         "partition key device-abc#N, N a random suffix 1..10 (the seed's pattern 2)",
         {"name": "DeviceTemperatureSharded-" + run, "hash": ("partition_key", "S"),
          "range": ("timestamp", "S"),
          "item": lambda i: {"partition_key": {"S": "device-abc#%d" % rng.randint(1, 10)},
                             "timestamp": {"S": "2025-07-17T00:%02d:%02d.%03d" % (
                                 i // 6000 % 60, i // 100 % 60, i % 1000)},
                             "temperature": {"N": "24.%d" % (i % 10)}}}),
        ("status_code_partition",
         "every active user under status_code = active",
         {"name": "UserStatusByCode-" + run, "hash": ("status_code", "S"),
          "range": ("user_id", "S"),
          "item": lambda i: {"status_code": {"S": "active"}, "user_id": {"S": "user_%05d" % i}}},
         "partition key active#N, N = user number mod 10",
         {"name": "UserStatusByCodeSharded-" + run, "hash": ("status_code", "S"),
          "range": ("user_id", "S"),
          "item": lambda i: {"status_code": {"S": "active#%d" % (i % 10)},
                             "user_id": {"S": "user_%05d" % i}}}),
    ]


def start_server(binary):
    proc = subprocess.Popen([binary, "--port", "0", "--host", "127.0.0.1", "--in-memory",
                             "--throttle"], stdout=subprocess.PIPE, stderr=sys.stderr,
                            stdin=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    if not line.startswith(READY):
        proc.kill()
        sys.exit("hot_partition_demo: %s did not start: %r" % (binary, line))
    return proc, "http://" + line[len(READY):].split()[0]


def heat(endpoint, table=None, window=None):
    """GET /kura/heat (of one table; over the last `window` seconds: the load's own span)."""
    q = "?table=" + table if table else ""
    q += ("&window=%d" % window) if table and window else ""
    with urllib.request.urlopen(endpoint + "/kura/heat" + q, timeout=30) as r:
        return json.loads(r.read().decode("utf-8"))


def create_table(ddb, d):
    attrs = [{"AttributeName": d["hash"][0], "AttributeType": d["hash"][1]}]
    schema = [{"AttributeName": d["hash"][0], "KeyType": "HASH"}]
    if d["range"]:
        attrs.append({"AttributeName": d["range"][0], "AttributeType": d["range"][1]})
        schema.append({"AttributeName": d["range"][0], "KeyType": "RANGE"})
    ddb.create_table(TableName=d["name"], AttributeDefinitions=attrs, KeySchema=schema,
                     BillingMode="PAY_PER_REQUEST")
    for _ in range(600):
        if ddb.describe_table(TableName=d["name"])["Table"]["TableStatus"] == "ACTIVE":
            break
        time.sleep(0.05)
    try:
        ddb.update_contributor_insights(TableName=d["name"], ContributorInsightsAction="ENABLE")
        return "Contributor Insights enabled"
    except (ClientError, AttributeError) as e:
        code = getattr(e, "response", {}).get("Error", {}).get("Code", type(e).__name__)
        return "Contributor Insights not available here (%s)" % code


def run_load(ddb, d, n):
    """n paced puts; returns (accepted, {(code, message): count}, elapsed seconds)."""
    ok, errors = 0, {}
    t0 = last = time.monotonic()
    for i in range(n):
        now = time.monotonic()
        if i and now < last + PACE_S:
            time.sleep(last + PACE_S - now)
        last = time.monotonic()
        item = d["item"](i)
        item["payload"] = {"S": PAD}
        try:
            ddb.put_item(TableName=d["name"], Item=item)
            ok += 1
        except ClientError as e:
            k = (e.response["Error"]["Code"], e.response["Error"]["Message"])
            errors[k] = errors.get(k, 0) + 1
    return ok, errors, time.monotonic() - t0


def key_words(key):
    return ", ".join("%s=%s" % (a, list(v.values())[0]) for a, v in key.items())


def show_design(ddb, endpoint, label, what, d, n):
    print("  %s design: %s (table %s)" % (label, what, d["name"]))
    print("    " + create_table(ddb, d))
    ok, errors, elapsed = run_load(ddb, d, n)
    refused = sum(errors.values())
    print("    %d puts of 10 WCU in %.1f s (%.0f WCU/s offered): %d accepted, %d throttled"
          % (n, elapsed, n * 10 / elapsed, ok, refused))
    for (code, msg), count in sorted(errors.items()):
        print("    %d x %s: %s" % (count, code, msg))
    rep = heat(endpoint, d["name"], window=int(elapsed) + 2)
    for tg in rep["targets"]:
        if tg["table"] != d["name"] or tg["kind"] != "table":
            continue
        keys = tg["hot_keys"][:5]
        print("    hottest keys (of the 1,000 WCU/s a key may take):")
        for k in keys:
            print("      %-36s %6.1f WCU/s averaged over %d s (%.0f%% of its partition's "
                  "write limit in its busiest second), %d throttled"
                  % (key_words(k["key"]), k["write"], rep["window_seconds"],
                     100 * k["write_share"], k["throttled"]))
        for v in tg["verdicts"] or ["(no verdict: no key near its limit)"]:
            print("    verdict: " + v)
    # too slow a client offers no more than a key's second of burst plus 1,000 WCU a second
    slow = n * 10 <= 1000 * (1.0 + elapsed) * 1.1
    return refused, slow


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", help="a running kura-server --throttle (default: start one)")
    ap.add_argument("--server", default=os.environ.get("KURA_SERVER") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "kura-server"),
        help="the kura-server binary to start (default: $KURA_SERVER or build/bin/kura-server)")
    ap.add_argument("--quick", action="store_true", help="a shorter load (400 puts a design)")
    ap.add_argument("--keep", action="store_true", help="leave the started server running")
    args = ap.parse_args()
    proc, endpoint = None, args.endpoint
    if not endpoint:
        if not os.access(args.server, os.X_OK):
            print("hot_partition_demo: no kura-server at %s (build it, or --server, --endpoint)"
                  % args.server, file=sys.stderr)
            return 2
        proc, endpoint = start_server(args.server)
        print("started %s --throttle at %s" % (args.server, endpoint))
    endpoint = endpoint.rstrip("/")
    try:
        return demo(endpoint, 400 if args.quick else 800)
    finally:
        if proc and not args.keep:
            proc.terminate()
            proc.wait()
        elif proc:
            print("kura-server left running at %s (pid %d)" % (endpoint, proc.pid))


def demo(endpoint, n):
    if not heat(endpoint)["throttling"]:
        print("hot_partition_demo: %s runs without --throttle: nothing would throttle"
              % endpoint, file=sys.stderr)
        return 2
    ddb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="AKIDDEMO", aws_secret_access_key="demo",
                       config=Config(retries={"max_attempts": 0}, connect_timeout=10,
                                     read_timeout=60))
    run = "%x" % (int(time.time() * 1000) & 0xffffffff)
    summary, good = [], True
    for seed, naive_what, naive, sharded_what, sharded in story_designs(run):
        print("\n== %s (../shared/scenarios/%s.json)" % (seed, seed))
        refused, slow = show_design(ddb, endpoint, "naive", naive_what, naive, n)
        if refused:
            summary.append("naive design %s: THROTTLED (%d of %d puts)" % (seed, refused, n))
        else:
            good = False
            summary.append("naive design %s: not throttled%s" % (
                seed, " (client too slow to exceed 1,000 WCU/s)" if slow else ""))
        refused, _ = show_design(ddb, endpoint, "sharded", sharded_what, sharded, n)
        if refused:
            good = False
            summary.append("sharded design %s: THROTTLED (%d of %d puts)" % (seed, refused, n))
        else:
            summary.append("sharded design %s: not throttled (0 of %d puts)" % (seed, n))
    print("\nSummary:")
    for line in summary:
        print("  " + line)
    print("\nLook at: %s/kura/heat.html (the heat page), %s/kura/heat (JSON),"
          "\n         kura heat --server %s, and DescribeContributorInsights on the tables."
          % (endpoint, endpoint, endpoint))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
