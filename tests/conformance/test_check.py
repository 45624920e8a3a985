"""test_check.py - This file contains the tests of kura's integrity check as kura-server's
POST /kura/check and as the `kura check` command and the KuraCheck pseudo-operation
(docs/server.md, "Extensions"; README, "When in doubt: kura check").

What is checked: on a database written through every kind of write (tables with an LSI, GSIs
with multi-attribute keys, KEYS_ONLY / INCLUDE / ALL projections, sparse items, a stream,
transactions, batch writes) the check answers 200 with no problem and a summary that counts
what it read, for the whole database and for one table; its errors (no such table, malformed
bodies, unknown members, GET); that the serving thread goes on serving while a check runs
(one serving thread, a GetItem answered before the check's answer); and the CLI: exit 0 on
that database, exit 1 with the file and offset after a bit flipped in an SSTable data block,
exit 3 with the file and offset printed when a damaged WAL record stops the open.

The `kura` binary is found beside kura-server ($KURA_SERVER's directory), or in $KURA_CLI.
"""

import glob
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import KuraServer, call, check_protocol_headers, make_client, raw_request, \
    scaled, server_binary, unique_name

SUMMARY_KEYS = {"Problems", "Notes", "Trees", "Partitions", "Manifests", "SSTables",
                "SSTableBlocks", "SSTableEntries", "WalSegments", "WalRecords", "Tables",
                "Items", "Indexes", "IndexesSkipped", "IndexEntries", "MissingEntries",
                "ExtraEntries", "StaleEntries", "Collections", "Streams", "Shards"}


def S(s):
    return {"S": s}


def N(n):
    return {"N": str(n)}


def ks(*names):
    return [{"AttributeName": a, "KeyType": "HASH" if i == 0 or t == "H" else "RANGE"}
            for i, (a, t) in enumerate(names)]


def orders_body(name):
    """GSIs with multi-attribute keys and every projection, a stream."""
    return {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "order_id", "AttributeType": "S"},
                                 {"AttributeName": "customer_id", "AttributeType": "S"},
                                 {"AttributeName": "status", "AttributeType": "S"},
                                 {"AttributeName": "order_date", "AttributeType": "S"},
                                 {"AttributeName": "amount", "AttributeType": "N"}],
        "KeySchema": ks(("order_id", "H")),
        "GlobalSecondaryIndexes": [
            {"IndexName": "ByCustomer",
             "KeySchema": ks(("customer_id", "H"), ("status", "R"), ("order_date", "R"),
                             ("amount", "R")),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "ByStatus", "KeySchema": ks(("status", "H")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "ByAmount", "KeySchema": ks(("amount", "H"), ("customer_id", "H")),
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]}}],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


def team_body(name):
    """Two LSIs and a GSI."""
    return {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in
                                 (("PK", "S"), ("SK", "S"), ("UserName", "S"), ("age", "N"),
                                  ("email", "S"))],
        "KeySchema": ks(("PK", "H"), ("SK", "R")),
        "LocalSecondaryIndexes": [
            {"IndexName": "ByName", "KeySchema": ks(("PK", "H"), ("UserName", "R")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            {"IndexName": "ByAge", "KeySchema": ks(("PK", "H"), ("age", "R")),
             "Projection": {"ProjectionType": "ALL"}}],
        "GlobalSecondaryIndexes": [
            {"IndexName": "ByEmail", "KeySchema": ks(("email", "H")),
             "Projection": {"ProjectionType": "INCLUDE",
                            "NonKeyAttributes": ["UserName", "bio"]}}],
    }


def order(i):
    it = {"order_id": S("o%d" % i), "pad": S("x" * 50)}
    if i % 5:
        it["customer_id"] = S("c%d" % (i % 7))
    if i % 4:
        it["status"] = S("PENDING" if i % 3 else "SHIPPED")
    if i % 3:
        it["order_date"] = S("2025-11-%02d" % (i % 28 + 1))
    if i % 6:
        it["amount"] = N("%d.5" % (i % 90))
    if i % 2:
        it["note"] = S("n%d" % i)
    return it


def member(i):
    it = {"PK": S("T%d" % (i % 5)), "SK": S("U%d" % i), "UserName": S("name%d" % i),
          "bio": S("bio%d" % i)}
    if i % 3:
        it["age"] = N(20 + i % 40)
    if i % 2:
        it["email"] = S("u%d@example.com" % (i % 11))
    return it


def write_everything(ddb, orders, team, n):
    for i in range(n):
        ddb.put_item(TableName=orders, Item=order(i))
        ddb.put_item(TableName=team, Item=member(i), ReturnItemCollectionMetrics="SIZE")
    for i in range(0, n, 7):
        ddb.update_item(TableName=orders, Key={"order_id": S("o%d" % i)},
                        UpdateExpression="SET #s = :s", ExpressionAttributeNames={"#s": "status"},
                        ExpressionAttributeValues={":s": S("DONE")})
    for i in range(0, n, 11):
        ddb.delete_item(TableName=orders, Key={"order_id": S("o%d" % (i + 1))})
    for i in range(0, n, 13):
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": orders, "Item": {
                "order_id": S("tx%d" % i), "customer_id": S("c1"), "status": S("PENDING"),
                "order_date": S("2025-12-01"), "amount": N(i)}}},
            {"Update": {"TableName": team, "Key": {"PK": S("T1"), "SK": S("U%d" % i)},
                        "UpdateExpression": "SET age = :a, email = :e",
                        "ExpressionAttributeValues": {":a": N(99), ":e": S("tx@example.com")}}}])
    ddb.batch_write_item(RequestItems={orders: [
        {"PutRequest": {"Item": {"order_id": S("b%d" % i), "status": S("NEW")}}}
        for i in range(20)]})


def check(srv, body=b"", **kw):
    return raw_request(srv, body, method="POST", path="/kura/check", auth=False, **kw)


@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory()


@pytest.fixture(scope="module")
def tables(srv):
    ddb = make_client(srv.url)
    orders, team = unique_name("chk-orders"), unique_name("chk-team")
    assert call(srv, "CreateTable", orders_body(orders)).status == 200
    assert call(srv, "CreateTable", team_body(team)).status == 200
    write_everything(ddb, orders, team, scaled(200, 60))
    return orders, team


def test_check_clean_database(srv, tables):
    orders, team = tables
    for body in (b"", b"{}", json.dumps({}).encode()):
        r = check(srv, body)
        assert r.status == 200, r
        check_protocol_headers(r)
        j = r.json()
        assert set(j) == {"Problems", "Notes", "Summary"}, j
        assert j["Problems"] == [] and j["Summary"]["Problems"] == 0, j
        s = j["Summary"]
        assert set(s) == SUMMARY_KEYS, s
        assert s["Tables"] == 2 and s["Indexes"] == 6 and s["IndexesSkipped"] == 0, s
        assert s["Items"] > 100 and s["IndexEntries"] > 100, s
        assert s["MissingEntries"] == s["ExtraEntries"] == s["StaleEntries"] == 0, s
        assert s["WalRecords"] > 0 and s["Manifests"] >= s["Partitions"] > 0, s
        assert s["Streams"] == 1 and s["Shards"] > 0 and s["Collections"] > 0, s
    r = check(srv, {"TableName": team})
    assert r.status == 200, r
    s = r.json()["Summary"]
    assert s["Tables"] == 1 and s["Indexes"] == 3 and s["Streams"] == 0, s
    assert r.json()["Problems"] == []


@pytest.mark.parametrize("body,status,type_,fragment", [
    ({"TableName": "chk-missing"}, 400, "ResourceNotFoundException", "chk-missing"),
    ({"TableName": 5}, 400, "ValidationException", "TableName must be a string"),
    ({"Table": "x"}, 400, "ValidationException", "unknown member Table"),
    ([], 400, "SerializationException", "JSON object"),
    (b"{not json", 400, "SerializationException", ""),
])
def test_check_errors(srv, body, status, type_, fragment):
    r = check(srv, body)
    assert r.status == status and r.error_type == type_ and fragment in r.message, r


def test_check_method(srv):
    r = raw_request(srv, b"", method="GET", path="/kura/check", auth=False)
    assert r.status == 400 and "takes POST" in r.message, r
    r = raw_request(srv, b"{}", method="POST", path="/kura/checks", auth=False)
    assert r.status == 404 and "/kura/check" in r.message, r


def test_check_runs_beside_the_serving_thread(server_factory):
    """One serving thread: GetItems sent while a check runs are answered before the check is,
    which they could not be if the check held the serving thread."""
    srv = server_factory(args=["--threads", "1"])
    ddb = make_client(srv.url)
    orders, team = unique_name("chk-orders"), unique_name("chk-team")
    assert call(srv, "CreateTable", orders_body(orders)).status == 200
    assert call(srv, "CreateTable", team_body(team)).status == 200
    n = scaled(12000, 3000)
    for start in range(0, n, 25):
        ddb.batch_write_item(RequestItems={orders: [{"PutRequest": {"Item": order(i)}}
                                                    for i in range(start, min(n, start + 25))]})
    t0 = time.monotonic()
    assert check(srv).status == 200
    alone = time.monotonic() - t0
    done = threading.Event()
    result = {}

    def run_check():
        result["r"] = check(srv)
        done.set()

    th = threading.Thread(target=run_check)
    th.start()
    answered_before = 0
    try:
        while not done.is_set():
            got = ddb.get_item(TableName=orders, Key={"order_id": S("o1")})
            assert got["Item"]["order_id"] == S("o1")
            if not done.is_set():
                answered_before += 1
    finally:
        th.join()
    assert result["r"].status == 200 and result["r"].json()["Problems"] == [], result["r"]
    print("check alone %.3f s, %d GetItems answered during the next" % (alone, answered_before))
    # a GetItem sent before the check reached the server is answered first either way; a
    # check that held the serving thread would let no more than that one through. A check
    # shorter than a few round trips proves nothing.
    if alone >= 0.015:
        assert answered_before >= 3, (alone, answered_before)


# ---- the kura CLI ---------------------------------------------------------------------------

def cli_binary(config):
    path = os.environ.get("KURA_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(server_binary(config))), "kura")
    if not os.access(path, os.X_OK):
        pytest.fail("no kura binary at %r (set KURA_CLI)" % path)
    return path


def run_cli(binary, data, *args, stdin=""):
    proc = subprocess.run([binary, "--data", data] + list(args), input=stdin.encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def flip(path, off):
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x10]))


def table_sstables(data):
    return sorted(glob.glob(os.path.join(data, "tbl-*", "p*", "*.sst")))


def serve_and_flush(request, workdir):
    """A server writes, goes idle and flushes its memtables into SSTables (--idle-ms), so that
    the data blocks of the tables are on disk; it is stopped (it must exit 0) so that the CLI
    can open the directory. Returns the data directory and the two tables."""
    srv = KuraServer(server_binary(request.config), workdir, ["--idle-ms", "100"]).start()
    try:
        orders, team = fill_and_flush(srv)
    finally:
        rc = srv.stop()
    assert rc == 0, srv.logs()
    return srv.data_dir, orders, team


def fill_and_flush(srv):
    ddb = make_client(srv.url)
    orders, team = unique_name("chk-orders"), unique_name("chk-team")
    assert call(srv, "CreateTable", orders_body(orders)).status == 200
    assert call(srv, "CreateTable", team_body(team)).status == 200
    write_everything(ddb, orders, team, scaled(120, 60))
    big = S("y" * 100000)  # past the idle release's memory threshold
    for i in range(60):
        ddb.put_item(TableName=team, Item={"PK": S("big"), "SK": S("b%d" % i), "blob": big})
    deadline = time.monotonic() + 30
    while not table_sstables(srv.data_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert table_sstables(srv.data_dir), "the idle server flushed nothing"
    return orders, team


def test_cli_check(request, tmp_path):
    binary = cli_binary(request.config)
    data, orders, team = serve_and_flush(request, str(tmp_path))
    rc, out, err = run_cli(binary, data, "check")
    assert rc == 0, (out, err)
    last = out.splitlines()[-1]
    assert last.startswith("kura check: 0 problems"), out
    assert "2 tables" in last and "6 indexes" in last, last
    rc, out, err = run_cli(binary, data, "check", team)
    assert rc == 0 and "1 tables" in out, (out, err)
    rc, out, err = run_cli(binary, data, "exec", "KuraCheck", stdin=json.dumps({"TableName": team}))
    assert rc == 0 and json.loads(out)["Summary"]["Tables"] == 1, (out, err)
    rc, out, err = run_cli(binary, data, "check", "chk-missing")
    assert rc == 3 and "chk-missing" in err, (rc, out, err)
    rc, out, err = run_cli(binary, data, "check", "a", "b")
    assert rc == 2, (rc, out, err)

    # a bit flipped in the first data block of an SSTable: found, with the file and offset
    sst = table_sstables(data)[0]
    flip(sst, 5)
    rc, out, err = run_cli(binary, data, "check")
    assert rc == 1, (out, err)
    assert any(sst in line and "block checksum mismatch at offset 0" in line
               for line in out.splitlines()), out
    assert out.splitlines()[-1].startswith("kura check: "), out
    flip(sst, 5)

    # a damaged WAL record the open must replay: the open fails, and says where
    one = unique_name("chk-one")
    lines = ["CreateTable " + json.dumps({
        "TableName": one, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}]})]
    lines += ["PutItem " + json.dumps({"TableName": one, "Item": {"k": N(i)}}) for i in range(3)]
    rc, out, err = run_cli(binary, data, "--partitions", "1", "pipe", stdin="\n".join(lines) + "\n")
    assert rc == 0 and all(l.startswith("0 ") for l in out.splitlines()), (out, err)
    parts = [d for d in glob.glob(os.path.join(data, "tbl-*")) if
             os.listdir(d) == ["p0000"]]
    assert len(parts) == 1, parts
    logs = [p for p in sorted(glob.glob(os.path.join(parts[0], "p0000", "*.log")))
            if os.path.getsize(p) > 0]
    wal = logs[-1]
    flip(wal, 20)
    rc, out, err = run_cli(binary, data, "check")
    assert rc == 3, (rc, out, err)
    assert wal in out and "offset 0" in out and "cannot be opened" in out, (out, err)
