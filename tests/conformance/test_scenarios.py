"""test_scenarios.py - This file contains the run of the shared scenario vectors
(../shared/scenarios beside the checkout: real DynamoDB requests and responses) against
kura-server over HTTP, every step (secondary indexes, transactions and ClientRequestToken
included). The runner prints one FAIL line per mismatching step and exits non-zero if any
failed; that output is shown when the test fails. Without the vectors the test fails rather
than being skipped.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def scenarios_dir():
    return os.environ.get("KURA_SCENARIOS") or os.path.normpath(
        os.path.join(HERE, "..", "..", "..", "shared", "scenarios"))


def test_scenario_vectors(server):
    runner = os.path.join(scenarios_dir(), "run_scenarios.py")
    assert os.path.isfile(runner), "no scenario vectors at %s (set KURA_SCENARIOS)" % runner
    proc = subprocess.run([sys.executable, runner, server.url],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, "run_scenarios.py failed (exit %d):\n%s\n%s" % (
        proc.returncode, out[-20000:], server.logs())
    m = re.search(r"^(\d+) passed, (\d+) failed", out, re.M)
    assert m, out[-5000:]
    passed, failed = int(m.group(1)), int(m.group(2))
    assert failed == 0 and passed >= 250, out[-5000:]  # 426 steps in 2025-11
