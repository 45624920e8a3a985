"""test_hot_partition_demo.py - This file contains the check of scripts/hot_partition_demo.py
(issue 24, the seeds' hot-partition stories): run with --quick against the kura-server under
test (it starts its own, --throttle), it exits 0, and its summary says each seed's naive
design throttled (with DynamoDB's ThrottlingException) and each sharded design did not."""

import os
import subprocess
import sys

from conftest import server_binary

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "hot_partition_demo.py")
SEEDS = ["reservation_hot_partition", "device_write_sharding", "status_code_partition"]


def test_demo_quick(request):
    r = subprocess.run([sys.executable, SCRIPT, "--quick", "--server",
                        server_binary(request.config)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    out = r.stdout
    assert r.returncode == 0, out
    assert "ThrottlingException: Throughput exceeds the current capacity" in out, out
    for seed in SEEDS:
        assert "naive design %s: THROTTLED (" % seed in out, out
        assert "sharded design %s: not throttled (0 of " % seed in out, out
    assert "/kura/heat.html" in out, out
