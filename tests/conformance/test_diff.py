"""test_diff.py - the differential test (tests/diff) over HTTP: random sequences of DynamoDB
operations sent to kura-server and to the reference model, every response compared.

tests/diff's own CTest runs go through the `kura` CLI (kura_execute in one process); this runs
the same generator against kura-server, so the HTTP layer, the request-body parser, the serving
threads and, under --sync, the writer threads that take the writes (docs/server.md) are all on
the path. Two servers: --sync (writes on the writer threads) and --relaxed (writes on the
serving threads), each with its own seed, derived from KURA_TEST_SEED (conftest.seeded_rng)
and printed on failure; KURA_DIFF_SEED pins both. The operation count scales with
KURA_TEST_SCALE.
"""
import os
import subprocess
import sys

import pytest

from conftest import scale, seeded_rng

DIFF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "diff", "diff_test.py")


@pytest.mark.parametrize("mode", ["--sync", "--relaxed"])
def test_random_operations_match_the_model(server_factory, mode):
    srv = server_factory(args=[mode])
    seed = int(os.environ.get("KURA_DIFF_SEED") or
               seeded_rng("test_diff", mode).randrange(1, 1 << 31))
    ops = str(int(3000 * scale()))
    proc = subprocess.run([sys.executable, DIFF, "--endpoint", srv.url, "--ops", ops,
                           "--seed", str(seed)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, "seed %d (KURA_DIFF_SEED=%d to repeat):\n%s\n%s" % (
        seed, seed, out[-4000:], srv.logs())
    assert " 0 mismatches" in out, out[-4000:]
