"""conftest.py - This file contains the fixtures of the conformance suite: starting and stopping
kura-server, boto3 clients pointed at it, raw HTTP helpers and per-test tables.

Design. Every test module gets its own kura-server process (module scope) started on a free
loopback port (--port 0) with a fresh data directory; the port is read from the one line the
server prints when it listens ("kura-server listening on http://HOST:PORT (data DIR)"). At the
end of the module the server is sent SIGTERM and must exit with status 0 -- a crash, a hang or
an unclean shutdown fails the module. The server's stdout and stderr go to files in the test's
temporary directory and are printed when a start or a stop fails.

The binary comes from the KURA_SERVER environment variable (set by CTest to
$<TARGET_FILE:kura-server>) or the --kura-server pytest option. KURA_TEST_SCALE (default 1)
scales the sizes of the load-like tests (ASan runs use 0.25).

Randomness. Every random choice of the suite (generated bodies, table names, workloads, the
moments of the kill -9s, the differential test's seeds) comes from seeded_rng(), which derives
it from KURA_TEST_SEED: a fixed default (1), so a run gives the same verdict every time, and
printed at the start of the session, so a failure replays with it. KURA_TEST_SEED=random picks
a fresh seed (and so does a run against KURA_ENDPOINT without KURA_TEST_SEED: table names must
not repeat on a long-lived endpoint).

For developing the expectations against another DynamoDB implementation (dynalite, DynamoDB
Local), KURA_ENDPOINT=http://HOST:PORT makes the `server` fixture reuse that endpoint instead
of starting a process; tests that need to control the process (kill -9, --auth, shutdown)
then fail, saying so. CTest never sets it.
"""

import base64
import datetime
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import zlib

import boto3
import pytest
from botocore.config import Config

READY_PREFIX = "kura-server listening on http://"
HANG_S = 60  # the deadline of a wait for something that must happen: only a hang reaches it
TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"


DEFAULT_SEED = 1


def _session_seed():
    value = os.environ.get("KURA_TEST_SEED", "")
    if value == "random" or (not value and os.environ.get("KURA_ENDPOINT")):
        return random.SystemRandom().randrange(1, 1 << 31)
    return int(value, 0) if value else DEFAULT_SEED


SEED = _session_seed()


def seeded_rng(*salt):
    """A random.Random that depends only on the session's seed (KURA_TEST_SEED) and on `salt`
    (a test's name, a thread's number): each use gets its own stream, so one test's draws do
    not shift with another's, nor with the order in which threads start. String seeds hash
    the same in every process (unlike hash(), which PYTHONHASHSEED randomises)."""
    return random.Random("%d/%s" % (SEED, "/".join(str(x) for x in salt)))


def pytest_sessionstart(session):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:  # shown even with -q, so every CTest log carries it
        reporter.write_line("KURA_TEST_SEED=%d" % SEED)


def pytest_addoption(parser):
    parser.addoption("--kura-server", action="store", default=None,
                     help="path of the kura-server binary (default: $KURA_SERVER)")


def scale():
    """KURA_TEST_SCALE as a float (default 1; ASan runs use 0.25)."""
    try:
        return max(0.05, float(os.environ.get("KURA_TEST_SCALE", "1") or 1))
    except ValueError:
        return 1.0


def scaled(n, minimum=1):
    return max(minimum, int(n * scale()))


def server_binary(config):
    path = config.getoption("--kura-server") or os.environ.get("KURA_SERVER")
    if not path:
        pytest.fail("no kura-server binary: set KURA_SERVER or pass --kura-server")
    if not os.access(path, os.X_OK):
        pytest.fail("kura-server binary %r is not executable" % path)
    return path


def tmp_root():
    """The directory for data directories: $KURA_TEST_TMPDIR (CTest), $TMPDIR or /tmp."""
    root = os.environ.get("KURA_TEST_TMPDIR") or tempfile.gettempdir()
    os.makedirs(root, exist_ok=True)
    return root


class KuraServer:
    """One kura-server process. start() may be called again after stop()/kill() to restart on
    the same data directory (a fresh port each time)."""

    START_TIMEOUT_S = 60.0

    def __init__(self, binary, workdir, args=(), in_memory=False):
        self.binary = binary
        self.workdir = workdir
        self.data_dir = os.path.join(workdir, "data")
        self.args = list(args)
        self.in_memory = in_memory
        self.proc = None
        self.host = "127.0.0.1"
        self.port = None
        self.starts = 0

    @property
    def url(self):
        return "http://%s:%d" % (self.host, self.port)

    def _log_paths(self):
        return (os.path.join(self.workdir, "stdout.%d" % self.starts),
                os.path.join(self.workdir, "stderr.%d" % self.starts))

    def logs(self):
        out = []
        for path in self._log_paths():
            try:
                with open(path, "rb") as f:
                    data = f.read()
                out.append("--- %s (%d bytes) ---\n%s" % (
                    os.path.basename(path), len(data), data[-8000:].decode("utf-8", "replace")))
            except OSError:
                pass
        return "\n".join(out)

    def start(self):
        assert self.proc is None, "server already running"
        self.starts += 1
        cmd = [self.binary, "--port", "0", "--host", "127.0.0.1"]
        cmd += ["--in-memory"] if self.in_memory else ["--data", self.data_dir]
        cmd += self.args
        out_path, err_path = self._log_paths()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.START_TIMEOUT_S
        while True:
            with open(out_path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            for line in text.splitlines():
                if line.startswith(READY_PREFIX):
                    hostport = line[len(READY_PREFIX):].split()[0]
                    self.host, port = hostport.rsplit(":", 1)
                    self.port = int(port)
                    return self
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.proc = None
                pytest.fail("kura-server exited with %s before listening: %s\n%s" %
                            (rc, " ".join(cmd), self.logs()))
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail("kura-server did not print its listening line within %.0f s\n%s" %
                            (self.START_TIMEOUT_S, self.logs()))
            time.sleep(0.005)

    def stop(self, timeout=60.0):
        """SIGTERM; returns the exit status (None if it had to be killed)."""
        if self.proc is None:
            return 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        self.proc = None
        return rc

    def kill(self):
        """SIGKILL, as a crash: nothing is flushed or closed."""
        if self.proc is None:
            return
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start_and_kill_early(self, when, timeout=START_TIMEOUT_S):
        """Starts the server on its data directory and SIGKILLs it as soon as `when(paths)` is
        true of the set of files under the data directory that the process has open (polled
        from /proc/PID/fd), so that the kill lands in its startup recovery. Returns True when
        the kill came before the server listened, False when it was already listening (the
        polling missed the window: the caller may try again). Either way the process is gone
        and start() may follow."""
        assert self.proc is None, "server already running"
        self.starts += 1
        cmd = [self.binary, "--port", "0", "--host", "127.0.0.1", "--data", self.data_dir]
        cmd += self.args
        out_path, err_path = self._log_paths()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        fd_dir = "/proc/%d/fd" % self.proc.pid
        prefix = os.path.realpath(self.data_dir) + os.sep
        deadline = time.monotonic() + timeout
        while True:
            paths = set()
            try:
                for fd in os.listdir(fd_dir):
                    try:
                        target = os.readlink(os.path.join(fd_dir, fd))
                    except OSError:
                        continue
                    if target.startswith(prefix):
                        paths.add(target[len(prefix):])
            except OSError:
                pass
            if paths and when(paths):
                listening = False
                break
            with open(out_path, "rb") as f:
                if READY_PREFIX.encode() in f.read():
                    listening = True
                    break
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                self.proc = None
                pytest.fail("kura-server exited with %s during its start: %s\n%s" %
                            (rc, " ".join(cmd), self.logs()))
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail("kura-server neither recovered nor listened within %.0f s\n%s" %
                            (timeout, self.logs()))
        self.kill()
        return not listening


class ExternalServer:
    """KURA_ENDPOINT: an already running DynamoDB-compatible endpoint (development only)."""

    def __init__(self, url):
        self._url = url.rstrip("/")
        rest = self._url.split("://", 1)[1]
        self.host, port = rest.rsplit(":", 1)
        self.port = int(port)
        self.proc = None

    @property
    def url(self):
        return self._url

    def alive(self):
        return True

    def logs(self):
        return "(external endpoint %s)" % self._url


def stop_and_check(srv):
    if isinstance(srv, ExternalServer):
        return
    alive = srv.alive()
    rc = srv.stop()
    if not alive:
        pytest.fail("kura-server died during the tests\n%s" % srv.logs())
    if rc != 0:
        pytest.fail("kura-server exited with status %s after SIGTERM (want 0)\n%s" %
                    (rc, srv.logs()))


@pytest.fixture(scope="module")
def server_factory(request):
    """Starts kura-server processes with given arguments; each is stopped with SIGTERM at the
    end of the module and must exit 0. Returns start(args=(), in_memory=False)."""
    started = []
    workdirs = []

    def start(args=(), in_memory=False):
        if os.environ.get("KURA_ENDPOINT"):
            pytest.fail("this test controls the kura-server process; unset KURA_ENDPOINT")
        workdir = tempfile.mkdtemp(prefix="kura-conf-", dir=tmp_root())
        workdirs.append(workdir)
        srv = KuraServer(server_binary(request.config), workdir, args, in_memory)
        started.append(srv)
        return srv.start()

    yield start
    failures = []
    for srv in started:
        try:
            stop_and_check(srv)
        except pytest.fail.Exception as e:  # keep stopping the others
            failures.append(str(e))
    for workdir in workdirs:
        shutil.rmtree(workdir, ignore_errors=True)
    if failures:
        pytest.fail("\n".join(failures))


@pytest.fixture(scope="module")
def server(request, server_factory):
    """The module's kura-server (fresh data directory), or KURA_ENDPOINT's endpoint."""
    if os.environ.get("KURA_ENDPOINT"):
        return ExternalServer(os.environ["KURA_ENDPOINT"])
    return server_factory()


def make_client(url, access_key="AKIDKURATEST", secret="kura-test-secret", validate=False,
                read_timeout=60, region="us-east-1"):
    """A low-level boto3 DynamoDB client. No retries, so every error surfaces as it is sent;
    parameter validation off so that invalid requests reach the server (and shapes newer than
    the installed botocore are not refused client-side)."""
    cfg = Config(retries={"max_attempts": 0}, parameter_validation=validate,
                 connect_timeout=10, read_timeout=read_timeout, max_pool_connections=64)
    return boto3.client("dynamodb", endpoint_url=url, region_name=region,
                        aws_access_key_id=access_key, aws_secret_access_key=secret, config=cfg)


@pytest.fixture(scope="module")
def ddb(server):
    return make_client(server.url)


@pytest.fixture(scope="module")
def ddb_validating(server):
    """A client with botocore's parameter validation on (paginators, resource-style use)."""
    return make_client(server.url, validate=True)


def streams_client(url, key="AKIDKURATEST", secret="kura-test-secret", region="us-east-1"):
    """A boto3 DynamoDB Streams client (no retries, no parameter validation)."""
    cfg = Config(retries={"max_attempts": 0}, parameter_validation=False)
    return boto3.client("dynamodbstreams", endpoint_url=url, region_name=region,
                        aws_access_key_id=key, aws_secret_access_key=secret, config=cfg)


def read_stream(streams, arn):
    """Every record of the stream from TRIM_HORIZON, shard by shard (each in its order)."""
    records = []
    for sh in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=sh["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while it:
            page = streams.get_records(ShardIterator=it)
            records.extend(page["Records"])
            if not page["Records"]:
                break
            it = page.get("NextShardIterator")
    return records


def read_all(client, op, **kw):
    """Every item of a paginated Query or Scan (op: "query" or "scan")."""
    out, start = [], None
    while True:
        if start:
            kw["ExclusiveStartKey"] = start
        r = getattr(client, op)(**kw)
        out += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return out


def wait_until(cond, timeout=20.0, what="condition"):
    """Calls cond() until it returns true; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail("%s not reached in %.0f s" % (what, timeout))
        time.sleep(0.02)


# ---- raw HTTP ---------------------------------------------------------------------------------

class RawResponse:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> value
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    @property
    def error_type(self):
        t = self.json().get("__type", "")
        return t.rsplit("#", 1)[-1]

    @property
    def message(self):
        j = self.json()
        return j.get("message", j.get("Message"))

    def __repr__(self):
        return "RawResponse(%d, %r)" % (self.status, self.body[:300])


def dummy_auth_headers():
    """X-Amz-Date and a SigV4-shaped Authorization whose signature is not valid (accepted by a
    server without --auth, as by DynamoDB Local)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "X-Amz-Date": now.strftime("%Y%m%dT%H%M%SZ"),
        "Authorization": "AWS4-HMAC-SHA256 Credential=AKIDKURATEST/%s/us-east-1/dynamodb/"
                         "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
                         "Signature=%s" % (now.strftime("%Y%m%d"), "0" * 64),
    }


def raw_request(server, body, target=None, headers=None, method="POST", path="/",
                auth=True, content_type="application/x-amz-json-1.0", timeout=60):
    """Sends one HTTP request with http.client; `body` is bytes, str or a JSON-able object,
    `target` the operation name (None: no X-Amz-Target header). Returns a RawResponse."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode("utf-8")
    elif isinstance(body, str):
        body = body.encode("utf-8")
    hdrs = {}
    if content_type is not None:
        hdrs["Content-Type"] = content_type
    if target is not None:
        hdrs["X-Amz-Target"] = "DynamoDB_20120810." + target
    if auth:
        hdrs.update(dummy_auth_headers())
    hdrs.update(headers or {})
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def call(server, op, body, **kw):
    """A DynamoDB operation as raw JSON (for shapes the installed botocore lacks, and to see the
    exact error body). Returns a RawResponse."""
    return raw_request(server, body, target=op, **kw)


def index_wait(server, body, **kw):
    """kura-server's POST /kura/index-wait extension (docs/server.md, "Extensions")."""
    return raw_request(server, body, method="POST", path="/kura/index-wait", auth=False, **kw)


def parse_http_responses(data):
    """Splits raw bytes into complete HTTP/1.1 responses (Content-Length or chunked bodies).
    Returns (list of RawResponse, leftover bytes)."""
    out = []
    while True:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return out, data
        head = data[:end].decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        rest = data[end + 4:]
        if "content-length" in headers:
            n = int(headers["content-length"])
            if len(rest) < n:
                return out, data
            body, data = rest[:n], rest[n:]
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body, pos = b"", 0
            while True:
                eol = rest.find(b"\r\n", pos)
                if eol < 0:
                    return out, data
                size = int(rest[pos:eol].split(b";")[0], 16)
                if len(rest) < eol + 2 + size + 2:
                    return out, data
                body += rest[eol + 2:eol + 2 + size]
                pos = eol + 2 + size + 2
                if size == 0:
                    break
            data = rest[pos:]
        else:
            body, data = rest, b""  # until close
        out.append(RawResponse(status, headers, body))


def socket_exchange(server, chunks, timeout=30.0, want=1, delay=0.0, half_close=False):
    """Writes `chunks` (an iterable of bytes) to a new connection while reading what comes
    back (waiting `delay` seconds for data after each chunk), stops writing when the server
    closes or resets, optionally shuts the writing side down, and reads until `want` complete
    responses arrived, the server closed the connection or `timeout` passed. Returns
    (responses, raw bytes received, whether the server closed the connection)."""
    import select
    import socket
    s = socket.create_connection((server.host, server.port), timeout=timeout)
    received, closed = b"", False
    deadline = time.monotonic() + timeout

    def pump(wait):
        nonlocal received, closed
        while not closed:
            r, _, _ = select.select([s], [], [], wait)
            if not r:
                return
            try:
                data = s.recv(1 << 16)
            except (ConnectionResetError, OSError):
                closed = True
                return
            if not data:
                closed = True
                return
            received += data
            wait = 0

    try:
        for chunk in chunks:
            if closed or time.monotonic() > deadline:
                break
            try:
                s.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, OSError):
                break
            pump(delay)
        if half_close:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        while not closed and time.monotonic() < deadline:
            if len(parse_http_responses(received)[0]) >= want:
                break
            pump(min(0.2, max(0.0, deadline - time.monotonic())))
    finally:
        s.close()
    return parse_http_responses(received)[0], received, closed


def http_head(target=None, length=None, extra=(), method="POST"):
    """The head of a raw DynamoDB request (bytes), with Content-Length `length` (None: none)."""
    lines = ["%s / HTTP/1.1" % method, "Host: 127.0.0.1",
             "Content-Type: application/x-amz-json-1.0"]
    if target:
        lines.append("X-Amz-Target: DynamoDB_20120810." + target)
    for k, v in dummy_auth_headers().items():
        lines.append("%s: %s" % (k, v))
    if length is not None:
        lines.append("Content-Length: %s" % length)
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def check_protocol_headers(resp):
    """What every DynamoDB response carries: the JSON content type, a request id and the CRC32
    of the body."""
    assert resp.headers.get("content-type", "").startswith("application/x-amz-json-1.0"), \
        resp.headers
    assert resp.headers.get("x-amzn-requestid"), resp.headers
    assert "x-amz-crc32" in resp.headers, resp.headers
    assert int(resp.headers["x-amz-crc32"]) == zlib.crc32(resp.body), \
        "x-amz-crc32 %s != crc32 of the body %d" % (resp.headers["x-amz-crc32"],
                                                    zlib.crc32(resp.body))


def assert_server_answers(server):
    """The server still answers a normal request (after something hostile)."""
    r = call(server, "ListTables", {})
    assert r.status == 200, r
    assert "TableNames" in r.json()


# ---- tables ---------------------------------------------------------------------------------

_names = seeded_rng("unique_name")


def unique_name(prefix="t"):
    return "%s-%012x" % (prefix, _names.getrandbits(48))


def wait_active(client, name, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        t = client.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE":
            return t
        if time.monotonic() > deadline:
            raise AssertionError("table %s not ACTIVE after %.0f s: %r" % (name, timeout, t))
        time.sleep(0.05)


def create_table(client, name, hash_key=("pk", "S"), range_key=None, wait=True):
    attrs = [{"AttributeName": hash_key[0], "AttributeType": hash_key[1]}]
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    if range_key:
        attrs.append({"AttributeName": range_key[0], "AttributeType": range_key[1]})
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
    resp = client.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=schema,
                               BillingMode="PAY_PER_REQUEST")
    if wait:
        wait_active(client, name)
    return resp


@pytest.fixture
def make_table(ddb):
    """make_table(hash_key=("pk","S"), range_key=None) -> name of a new table, deleted after the
    test."""
    names = []

    def make(hash_key=("pk", "S"), range_key=None, prefix="t"):
        name = unique_name(prefix)
        create_table(ddb, name, hash_key, range_key)
        names.append(name)
        return name

    yield make
    for name in names:
        try:
            ddb.delete_table(TableName=name)
        except ddb.exceptions.ResourceNotFoundException:
            pass


def b64(data):
    return base64.b64encode(data).decode("ascii")


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()
