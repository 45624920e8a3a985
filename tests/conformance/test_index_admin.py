"""test_index_admin.py - This file contains the tests of kura's secondary-index extension
(docs/server.md, "Extensions"): kura-server's GET /kura/indexes and POST /kura/index-wait, its
--gsi-read-wait option, and the `kura` CLI's index-stats, index-wait and the pipe
pseudo-operations KuraIndexWait and KuraIndexStats.

What is checked: after a wait, a Query and a Scan of the GSI see every write acknowledged
before it, and /kura/indexes lists every index with LagWrites 0; the extension's errors
(unknown table or index, malformed bodies, wrong method, unknown path); that it lives outside
DynamoDB's API (an X-Amz-Target naming it is still UnknownOperationException, a request with
X-Amz-Target to /kura/... is DynamoDB's, GET / is refused as before) and, with --auth, needs a
signature like everything else; with --gsi-read-wait, Query and Scan on a GSI right after the
writes see them, round after round, and errors on indexes are answered as without the option;
and the CLI prints the same JSON as the server.

A timed-out wait (IndexWaitTimeoutException) needs an index held behind, which only the C
tests can do (the applier's pause hook); it is not exercised here.

The `kura` binary is found beside kura-server ($KURA_SERVER's directory), or in $KURA_CLI.
"""

import http.client
import json
import os
import subprocess
import threading

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import (RawResponse, call, check_protocol_headers, index_wait, make_client,
                      raw_request, read_all, scaled, server_binary, unique_name)

STATS_KEYS = {"IndexName", "Kind", "Status", "Backfilling", "LagWrites", "LagMillis", "Applied",
              "Checkpoints", "QueueBytes", "Error", "Rebuilding"}
KEY, SECRET = "AKIDKURAIDXADMIN", "index-admin-secret"


def S(s):
    return {"S": s}


def table_body(name):
    """A table with an LSI (ByL, KEYS_ONLY) and two GSIs (ByG: g, ALL; ByH: h then sk,
    KEYS_ONLY)."""
    def ks(h, r=None):
        out = [{"AttributeName": h, "KeyType": "HASH"}]
        if r:
            out.append({"AttributeName": r, "KeyType": "RANGE"})
        return out

    return {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"}
                                 for a in ("pk", "sk", "g", "h", "l")],
        "KeySchema": ks("pk", "sk"),
        "BillingMode": "PAY_PER_REQUEST",
        "LocalSecondaryIndexes": [{"IndexName": "ByL", "KeySchema": ks("pk", "l"),
                                   "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        "GlobalSecondaryIndexes": [
            {"IndexName": "ByG", "KeySchema": ks("g"), "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "ByH", "KeySchema": ks("h", "sk"),
             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
    }


def item(i, round_=0):
    return {"pk": S("p%d" % (i % 7)), "sk": S("s%05d" % i), "g": S("g%d" % (i % 3)),
            "h": S("h%d" % (i % 2)), "l": S("l%d" % i), "round": {"N": str(round_)}}


def make_indexed_table(srv):
    name = unique_name("idxadm")
    r = call(srv, "CreateTable", table_body(name))
    assert r.status == 200, r
    return name


def put_all(ddb, name, items):
    for i in range(0, len(items), 25):
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": it}}
                                                  for it in items[i:i + 25]]})


def gsi_query(ddb, name, g):
    return read_all(ddb, "query", TableName=name, IndexName="ByG",
                    KeyConditionExpression="g = :g", ExpressionAttributeValues={":g": S(g)})


def keys(items):
    return sorted((it["pk"]["S"], it["sk"]["S"]) for it in items)


def index_stats(srv, query=""):
    return raw_request(srv, b"", method="GET", path="/kura/indexes" + query, auth=False,
                       content_type=None)


def table_entry(stats, name):
    found = [t for t in stats["Tables"] if t["TableName"] == name]
    assert len(found) == 1, (name, stats)
    return found[0]


# ---- fixtures --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory()


@pytest.fixture(scope="module")
def ddb(srv):
    return make_client(srv.url)


@pytest.fixture(scope="module")
def wsrv(server_factory):
    """A server whose Query and Scan of an index wait for it (--gsi-read-wait)."""
    return server_factory(args=["--gsi-read-wait"])


@pytest.fixture(scope="module")
def wddb(wsrv):
    return make_client(wsrv.url)


# ---- /kura/index-wait and /kura/indexes -----------------------------------------------------

def test_index_wait_then_gsi_reads_see_every_write(srv, ddb):
    name = make_indexed_table(srv)
    items = [item(i) for i in range(scaled(300, 50))]
    put_all(ddb, name, items)
    r = index_wait(srv, {"TableName": name, "IndexName": "ByG"})
    assert r.status == 200, r
    assert r.json() == {}
    check_protocol_headers(r)
    for g in ("g0", "g1", "g2"):
        want = [it for it in items if it["g"]["S"] == g]
        got = gsi_query(ddb, name, g)
        assert keys(got) == keys(want), g
        assert all(it["round"] == {"N": "0"} for it in got)
    # every index of the table, with a timeout
    changed = [dict(it, h=S("h9"), round={"N": "1"}) for it in items[:40]]
    put_all(ddb, name, changed)
    r = index_wait(srv, {"TableName": name, "TimeoutMillis": 30000})
    assert r.status == 200 and r.json() == {}, r
    got = read_all(ddb, "query", TableName=name, IndexName="ByH",
                   KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": S("h9")})
    assert keys(got) == keys(changed)
    assert len(read_all(ddb, "scan", TableName=name, IndexName="ByG")) == len(items)
    # an LSI is always current: its wait returns at once
    r = index_wait(srv, {"TableName": name, "IndexName": "ByL", "TimeoutMillis": 0})
    assert r.status == 200 and r.json() == {}, r


def test_indexes_lists_every_index_caught_up(srv, ddb):
    name = make_indexed_table(srv)
    other = make_indexed_table(srv)
    n = scaled(120, 30)
    put_all(ddb, name, [item(i) for i in range(n)])
    assert index_wait(srv, {"TableName": name}).status == 200
    r = index_stats(srv)
    assert r.status == 200, r
    check_protocol_headers(r)
    stats = r.json()
    assert list(stats) == ["Tables"]
    names = [t["TableName"] for t in stats["Tables"]]
    assert names == sorted(names) and name in names and other in names
    entry = table_entry(stats, name)
    assert [(i["IndexName"], i["Kind"]) for i in entry["Indexes"]] == [
        ("ByL", "LSI"), ("ByG", "GSI"), ("ByH", "GSI")]
    for ix in entry["Indexes"]:
        assert set(ix) == STATS_KEYS, ix
        assert ix["Status"] == "ACTIVE" and ix["Backfilling"] is False, ix
        assert ix["LagWrites"] == 0 and ix["LagMillis"] == 0 and ix["QueueBytes"] == 0, ix
        assert ix["Error"] is None, ix
        for k in ("Applied", "Checkpoints"):
            assert isinstance(ix[k], int) and ix[k] >= 0, ix
    for ix in entry["Indexes"][1:]:
        assert ix["Applied"] >= n, ix  # every write went through each GSI's applier
    # one table, one index
    one = index_stats(srv, "?TableName=%s" % name).json()
    assert [t["TableName"] for t in one["Tables"]] == [name]
    assert one["Tables"][0]["Indexes"][0]["IndexName"] == "ByL"
    one = index_stats(srv, "?TableName=%s&IndexName=ByH" % name).json()
    assert [[i["IndexName"] for i in t["Indexes"]] for t in one["Tables"]] == [["ByH"]]
    # a table without indexes is listed with none
    plain = unique_name("idxadm-plain")
    ddb.create_table(TableName=plain, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    assert table_entry(index_stats(srv).json(), plain)["Indexes"] == []
    assert index_wait(srv, {"TableName": plain}).json() == {}
    # a deleted table is gone from the list
    ddb.delete_table(TableName=other)
    assert other not in [t["TableName"] for t in index_stats(srv).json()["Tables"]]


@pytest.mark.parametrize("body,status,type_,fragment", [
    ({"TableName": "idxadm-missing"}, 400, "ResourceNotFoundException", "idxadm-missing"),
    ({"TableName": "@TABLE@", "IndexName": "Nope"}, 400, "ResourceNotFoundException",
     "Index: Nope not found"),
    ({"IndexName": "ByG"}, 400, "ValidationException", "TableName"),
    ({}, 400, "ValidationException", "TableName is required"),
    ({"TableName": "@TABLE@", "Timeout": 5}, 400, "ValidationException", "unknown member Timeout"),
    ({"TableName": "@TABLE@", "TimeoutMillis": -1}, 400, "ValidationException", "TimeoutMillis"),
    ({"TableName": "@TABLE@", "TimeoutMillis": "5"}, 400, "ValidationException", "TimeoutMillis"),
    ({"TableName": "@TABLE@", "TimeoutMillis": 3600001}, 400, "ValidationException",
     "TimeoutMillis"),
    ({"TableName": 5}, 400, "ValidationException", "TableName must be a string"),
    ("not json", 400, "SerializationException", ""),
    ("[1]", 400, "SerializationException", "object"),
    ("", 400, "SerializationException", ""),
])
def test_index_wait_errors(srv, body, status, type_, fragment):
    name = make_indexed_table(srv)
    if isinstance(body, dict):
        body = {k: (name if v == "@TABLE@" else v) for k, v in body.items()}
        body = json.dumps(body)
    r = index_wait(srv, body)
    assert r.status == status, r
    assert r.error_type == type_, r
    assert r.json()["__type"].startswith("com.amazonaws.dynamodb.v20120810#")
    assert fragment in r.message, r


def test_indexes_errors(srv):
    r = index_stats(srv, "?TableName=idxadm-missing")
    assert r.status == 400 and r.error_type == "ResourceNotFoundException", r
    name = make_indexed_table(srv)
    r = index_stats(srv, "?TableName=%s&IndexName=Nope" % name)
    assert r.status == 400 and r.error_type == "ResourceNotFoundException", r
    r = index_stats(srv, "?IndexName=ByG")
    assert r.status == 400 and r.error_type == "ValidationException", r


def test_extension_methods_and_paths(srv):
    r = raw_request(srv, {}, method="POST", path="/kura/indexes", auth=False)
    assert r.status == 400 and "takes GET" in r.message, r
    r = raw_request(srv, b"", method="GET", path="/kura/index-wait", auth=False)
    assert r.status == 400 and "takes POST" in r.message, r
    for method, path in (("GET", "/kura/"), ("GET", "/kura/nope"), ("POST", "/kura/indexes/")):
        r = raw_request(srv, b"{}", method=method, path=path, auth=False)
        assert r.status == 404 and r.error_type == "UnknownOperationException", (path, r)
        check_protocol_headers(r)
    # any content type (curl -d sends a form's)
    name = make_indexed_table(srv)
    r = index_wait(srv, {"TableName": name}, content_type="application/x-www-form-urlencoded")
    assert r.status == 200 and r.json() == {}, r


def test_dynamodb_api_is_unchanged(srv):
    """The extension is not in the DynamoDB_20120810 namespace: SDK-style requests naming it,
    or any other unknown operation, are refused as before; GET / is still refused; a request
    with X-Amz-Target is DynamoDB's whatever its path."""
    name = make_indexed_table(srv)
    for op in ("KuraIndexWait", "KuraIndexStats", "IndexWait", "Indexes", "index-wait",
               "NoSuchOperation"):
        r = call(srv, op, {"TableName": name})
        assert r.status == 400 and r.error_type == "UnknownOperationException", (op, r)
        assert r.message == "An unknown operation was requested.", r
    for target in ("Kura.IndexWait", "kura/index-wait", "DynamoDB_20120810"):
        r = raw_request(srv, {"TableName": name}, headers={"X-Amz-Target": target})
        assert r.status == 400 and r.error_type == "UnknownOperationException", (target, r)
    r = raw_request(srv, b"", method="GET", path="/")
    assert r.status == 400 and r.error_type == "MissingAuthenticationToken", r
    for path in ("/kura/index-wait", "/kura/indexes"):
        r = raw_request(srv, {}, target="ListTables", path=path)
        assert r.status == 200 and "TableNames" in r.json(), (path, r)
        r = raw_request(srv, {"TableName": name}, target="KuraIndexWait", path=path)
        assert r.status == 400 and r.error_type == "UnknownOperationException", (path, r)
    # GET with X-Amz-Target: DynamoDB's answer to a GET
    r = raw_request(srv, b"", target="ListTables", method="GET", path="/kura/indexes")
    assert r.status == 400 and r.error_type == "MissingAuthenticationToken", r


def test_extension_needs_a_signature_under_auth(server_factory):
    asrv = server_factory(args=["--auth", "%s:%s" % (KEY, SECRET)], in_memory=True)
    r = index_stats(asrv)
    assert r.status == 400 and r.error_type == "MissingAuthenticationTokenException", r
    r = index_wait(asrv, {"TableName": "idxadm-x"})
    assert r.status == 400 and r.error_type == "MissingAuthenticationTokenException", r

    def signed(method, path, data, secret=SECRET):
        req = AWSRequest(method=method, url=asrv.url + path, data=data,
                         headers={"Content-Type": "application/json"})
        SigV4Auth(Credentials(KEY, secret), "dynamodb", "us-east-1").add_auth(req)
        conn = http.client.HTTPConnection(asrv.host, asrv.port, timeout=30)
        try:
            conn.request(method, path, body=data, headers=dict(req.headers.items()))
            resp = conn.getresponse()
            return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()},
                               resp.read())
        finally:
            conn.close()

    r = signed("GET", "/kura/indexes", b"")
    assert r.status == 200 and r.json() == {"Tables": []}, r
    r = signed("GET", "/kura/indexes?TableName=idxadm-x", b"")
    assert r.status == 400 and r.error_type == "ResourceNotFoundException", r
    r = signed("POST", "/kura/index-wait", b'{"TableName":"idxadm-x"}')
    assert r.status == 400 and r.error_type == "ResourceNotFoundException", r
    r = signed("GET", "/kura/indexes", b"", secret="wrong")
    assert r.status == 400 and r.error_type == "InvalidSignatureException", r


# ---- --gsi-read-wait ------------------------------------------------------------------------

class BackgroundWriter:
    """Threads writing 20 KB items to the table without pause, so that its GSI applier has a
    backlog and a read right after a write would, without the option, sometimes miss it. The
    items have g = "bg" and no h (absent from ByH)."""

    def __init__(self, srv, name, threads=2):
        self.srv, self.name, self.errors = srv, name, []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(k,)) for k in range(threads)]

    def run(self, k):
        client = make_client(self.srv.url)
        pad = S("x" * 20000)
        n = 0
        try:
            while not self.stopping.is_set():
                batch = [{"pk": S("bg%d-%d" % (k, n)), "sk": S("s%02d" % i), "g": S("bg"),
                          "pad": pad} for i in range(25)]
                client.batch_write_item(RequestItems={self.name: [
                    {"PutRequest": {"Item": it}} for it in batch]})
                n += 1
        except Exception as e:  # reported by stop()
            self.errors.append(repr(e))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for t in self.threads:
            t.join()
        assert not self.errors, self.errors


def test_gsi_read_wait_reads_see_the_writes_before_them(wsrv, wddb):
    name = make_indexed_table(wsrv)
    per_round = scaled(60, 20)
    current = {}
    behind = 0  # rounds whose GSI had a backlog just before the read (shown on failure)
    with BackgroundWriter(wsrv, name):
        for rnd in range(scaled(12, 4)):
            batch = [item(rnd * 1000 + i, rnd) for i in range(per_round)]
            # rewrite earlier items with a new GSI key: the old entry must be gone at once
            moved = [dict(it, g=S("g%d" % ((int(it["g"]["S"][1:]) + 1) % 3)),
                          round={"N": str(rnd)})
                     for it in list(current.values())[:per_round // 3]]
            put_all(wddb, name, batch + moved)
            for it in batch + moved:
                current[(it["pk"]["S"], it["sk"]["S"])] = it
            lag = index_stats(wsrv, "?TableName=%s&IndexName=ByG" % name).json()
            behind += lag["Tables"][0]["Indexes"][0]["LagWrites"] > 0
            for g in ("g0", "g1", "g2"):
                want = [it for it in current.values() if it["g"]["S"] == g]
                got = gsi_query(wddb, name, g)
                assert keys(got) == keys(want), (rnd, g, behind)
                by_key = {(it["pk"]["S"], it["sk"]["S"]): it for it in got}
                assert all(by_key[k]["round"] == current[k]["round"] for k in by_key), (rnd, g)
            scanned = read_all(wddb, "scan", TableName=name, IndexName="ByH")
            assert keys(scanned) == keys(current.values()), (rnd, behind)
            # one item written, then read at once through the GSI
            one = dict(item(rnd * 1000 + 999, rnd), g=S("solo%d" % rnd))
            wddb.put_item(TableName=name, Item=one)
            assert keys(gsi_query(wddb, name, "solo%d" % rnd)) == keys([one]), (rnd, behind)
            current[(one["pk"]["S"], one["sk"]["S"])] = one


def test_gsi_read_wait_keeps_dynamodb_errors(srv, wsrv):
    """Reads the option cannot wait for (no such table or index, malformed bodies) are
    answered exactly as without it."""
    name = make_indexed_table(srv)
    assert call(wsrv, "CreateTable", table_body(name)).status == 200
    kc = {"KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": S("g0")}}
    bodies = [
        ("Query", dict(kc, TableName=name, IndexName="Nope")),
        ("Query", dict(kc, TableName="idxadm-missing", IndexName="ByG")),
        ("Scan", {"TableName": name, "IndexName": "Nope"}),
        ("Scan", {"TableName": name, "IndexName": 5}),
        ("Query", "{not json"),
        ("Query", dict(kc, TableName=name, IndexName="ByG")),
        ("Query", {"TableName": name, "IndexName": "ByL", "KeyConditionExpression": "pk = :p",
                   "ExpressionAttributeValues": {":p": S("p0")}}),
        ("Scan", {"TableName": name}),
    ]
    for op, body in bodies:
        a, b = call(srv, op, body), call(wsrv, op, body)
        assert (a.status, a.body) == (b.status, b.body), (op, body, a, b)


# ---- the kura CLI ---------------------------------------------------------------------------

def cli_binary(config):
    path = os.environ.get("KURA_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(server_binary(config))), "kura")
    if not os.access(path, os.X_OK):
        pytest.fail("no kura binary at %r (set KURA_CLI)" % path)
    return path


@pytest.fixture
def cli(request, tmp_path_factory):
    binary = cli_binary(request.config)
    data = os.path.join(str(tmp_path_factory.mktemp("idxadm-cli", numbered=True)), "data")

    def run(*args, stdin=""):
        proc = subprocess.run([binary, "--data", data] + list(args), input=stdin.encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()

    run.data = data
    return run


def test_cli_index_commands(cli, server_factory):
    name = unique_name("idxadm")
    rc, out, err = cli("exec", "CreateTable", stdin=json.dumps(table_body(name)))
    assert rc == 0, (out, err)
    items = [item(i) for i in range(scaled(200, 40))]
    lines = ["PutItem " + json.dumps({"TableName": name, "Item": it}) for it in items]
    lines.append("KuraIndexWait " + json.dumps({"TableName": name, "IndexName": "ByG"}))
    for g in ("g0", "g1", "g2"):
        lines.append("Query " + json.dumps({
            "TableName": name, "IndexName": "ByG", "KeyConditionExpression": "g = :g",
            "ExpressionAttributeValues": {":g": S(g)}, "Select": "COUNT"}))
    lines.append("KuraIndexWait " + json.dumps({"TableName": name}))
    lines.append("KuraIndexWait " + json.dumps({"TableName": name, "IndexName": "Nope"}))
    lines.append("KuraIndexStats " + json.dumps({"TableName": name, "IndexName": "ByH"}))
    rc, out, err = cli("pipe", stdin="\n".join(lines) + "\n")
    assert rc == 0, (out, err)
    answers = out.splitlines()
    assert len(answers) == len(lines), out[-2000:]
    assert all(a == "0 {}" for a in answers[:len(items)]), answers[:3]
    assert answers[len(items)] == "0 {}"
    counts = [json.loads(a[2:])["Count"] for a in answers[len(items) + 1:len(items) + 4]]
    assert counts == [sum(1 for it in items if it["g"]["S"] == g) for g in ("g0", "g1", "g2")]
    assert answers[len(items) + 4] == "0 {}"
    rc_, body = answers[len(items) + 5].split(" ", 1)
    assert rc_ == "1" and json.loads(body)["__type"].endswith("#ResourceNotFoundException")
    rc_, body = answers[len(items) + 6].split(" ", 1)
    assert rc_ == "0"
    assert [[i["IndexName"] for i in t["Indexes"]] for t in json.loads(body)["Tables"]] == [["ByH"]]

    # index-stats: the JSON of GET /kura/indexes
    rc, out, err = cli("index-stats")
    assert rc == 0, (out, err)
    stats = json.loads(out)
    entry = table_entry(stats, name)
    assert [(i["IndexName"], i["Kind"]) for i in entry["Indexes"]] == [
        ("ByL", "LSI"), ("ByG", "GSI"), ("ByH", "GSI")]
    for ix in entry["Indexes"]:
        assert set(ix) == STATS_KEYS and ix["LagWrites"] == 0 and ix["Error"] is None, ix
    rc, out, err = cli("index-stats", name, "ByG")
    assert rc == 0 and [i["IndexName"] for i in json.loads(out)["Tables"][0]["Indexes"]] == \
        ["ByG"], (out, err)
    rc, out, err = cli("index-stats", "idxadm-missing")
    assert rc == 1 and json.loads(out)["__type"].endswith("#ResourceNotFoundException"), out
    rc, out, err = cli("index-stats", name, "Nope")
    assert rc == 1 and json.loads(out)["__type"].endswith("#ResourceNotFoundException"), out

    # index-wait
    for args in ([name], [name, "ByG"], [name, "ByG", "5000"], [name, "-", "5000"],
                 [name, "", "0"], [name, "ByL", "0"]):
        rc, out, err = cli("index-wait", *args)
        assert rc == 0 and out == "{}\n", (args, rc, out, err)
    rc, out, err = cli("index-wait", name, "Nope")
    assert rc == 1 and json.loads(out)["__type"].endswith("#ResourceNotFoundException"), out
    rc, out, err = cli("index-wait", "idxadm-missing")
    assert rc == 1 and json.loads(out)["__type"].endswith("#ResourceNotFoundException"), out
    for args in (["index-wait"], ["index-wait", name, "ByG", "soon"],
                 ["index-wait", name, "ByG", "-1"], ["index-wait", name, "ByG", "1", "2"],
                 ["index-stats", name, "ByG", "extra"]):
        rc, out, err = cli(*args)
        assert rc == 2 and out == "" and err.strip(), (args, rc, out, err)

    # kura-server on the CLI's directory (the CLI is done with it: it is locked while open)
    # prints the same shape; the later --data wins over the fixture's own
    srv = server_factory(args=["--data", cli.data])
    served = index_stats(srv).json()
    srv_entry = table_entry(served, name)
    assert [set(i) for i in srv_entry["Indexes"]] == [set(i) for i in entry["Indexes"]]
    assert [(i["IndexName"], i["Kind"], i["Status"]) for i in srv_entry["Indexes"]] == \
        [(i["IndexName"], i["Kind"], i["Status"]) for i in entry["Indexes"]]


def test_cli_usage_mentions_the_index_commands(cli):
    rc, out, err = cli("help")
    assert rc == 2
    for word in ("exec", "pipe", "index-stats", "index-wait", "KuraIndexWait", "KuraIndexStats"):
        assert word in err, (word, err)


def test_gsi_read_wait_option_values(request):
    binary = server_binary(request.config)
    for arg in ("--gsi-read-wait=0", "--gsi-read-wait=abc", "--gsi-read-wait=",
                "--gsi-read-wait=3600001"):
        proc = subprocess.run([binary, "--in-memory", "--port", "0", arg],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        assert proc.returncode == 2 and proc.stderr.strip(), (arg, proc)
        assert b"listening" not in proc.stdout
    proc = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30)
    assert proc.returncode == 2 and b"--gsi-read-wait[=MS]" in proc.stderr, proc
