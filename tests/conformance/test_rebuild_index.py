"""test_rebuild_index.py - This file contains the tests of kura-server's POST /kura/rebuild-index
(docs/server.md, "Extensions"; kura_rebuild_index) and of the `kura` CLI's rebuild-index and
the pipe pseudo-operation KuraRebuildIndex.

What is checked: a rebuild of a GSI and of an LSI answers {} once done, and every Query of the
index then returns exactly the items a Scan of the table finds (also after a restart); the
index stays ACTIVE and GET /kura/indexes lists it with "Rebuilding": false afterwards; a
rebuild while clients write keeps every write in the index; a kill -9 of the server during a
rebuild leaves, after the restart, an index that matches the table; the errors (no such table
or index, a body without TableName or IndexName, unknown members, malformed JSON, GET) have
DynamoDB's shape. The damage a rebuild repairs can only be planted by the C tests
(tests/unit/engine_index_rebuild_test.c); here the rebuilt index must be exactly right.

The `kura` binary is found beside kura-server ($KURA_SERVER's directory), or in $KURA_CLI.
"""

import json
import os
import subprocess
import threading
import time

import pytest

from conftest import make_client, raw_request, scaled, server_binary, unique_name

INDEXES = ("ByL", "ByG", "ByH")


def S(s):
    return {"S": s}


def table_body(name):
    """An LSI ByL (pk, l; KEYS_ONLY), GSIs ByG (g; ALL) and ByH (h, sk; KEYS_ONLY)."""
    def ks(h, r=None):
        return [{"AttributeName": h, "KeyType": "HASH"}] + (
            [{"AttributeName": r, "KeyType": "RANGE"}] if r else [])

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


def item(i, ver=0):
    it = {"pk": S("p%d" % (i % 7)), "sk": S("s%05d" % i), "v": {"N": str(ver)}}
    if (i + ver) % 4:
        it["g"] = S("g%d" % ((i + ver) % 3))
    if (i + ver) % 5:
        it["h"] = S("h%d" % ((i + ver) % 2))
    if (i + ver) % 3:
        it["l"] = S("l%d" % ((i * 7 + ver) % 11))
    return it


def rebuild(srv, body, timeout=600):
    return raw_request(srv, body, method="POST", path="/kura/rebuild-index", auth=False,
                       timeout=timeout)


def index_wait(srv, name):
    r = raw_request(srv, {"TableName": name, "TimeoutMillis": 60000}, method="POST",
                    path="/kura/index-wait", auth=False)
    assert r.status == 200, r


def read_all(ddb, op, **kw):
    out, start = [], None
    while True:
        if start:
            kw["ExclusiveStartKey"] = start
        r = getattr(ddb, op)(**kw)
        out += r["Items"]
        start = r.get("LastEvaluatedKey")
        if not start:
            return out


def key_of(it):
    return (it["pk"]["S"], it["sk"]["S"])


def index_matches_table(ddb, name):
    """Every Query of every index equals what a Scan of the table says it must hold."""
    table = read_all(ddb, "scan", TableName=name)
    for index, attr, values, proj in (
            ("ByL", "pk", ["p%d" % i for i in range(7)], ("pk", "sk", "l")),
            ("ByG", "g", ["g0", "g1", "g2"], None),
            ("ByH", "h", ["h0", "h1"], ("pk", "sk", "h"))):
        for v in values:
            got = read_all(ddb, "query", TableName=name, IndexName=index,
                           KeyConditionExpression="#a = :v",
                           ExpressionAttributeNames={"#a": attr},
                           ExpressionAttributeValues={":v": S(v)})
            want = [it for it in table if it.get(attr) == S(v) and
                    (index != "ByL" or "l" in it)]
            if proj:
                want = [{k: it[k] for k in proj} for it in want]
            assert sorted(got, key=key_of) == sorted(want, key=key_of), (index, v)


def put_all(ddb, name, items):
    for i in range(0, len(items), 25):
        ddb.batch_write_item(RequestItems={name: [{"PutRequest": {"Item": it}}
                                                  for it in items[i:i + 25]]})


def make_table(srv, ddb, n):
    name = unique_name("rebuild")
    ddb.create_table(**table_body(name))
    put_all(ddb, name, [item(i) for i in range(n)])
    return name


def stats(srv, name):
    r = raw_request(srv, b"", method="GET", path="/kura/indexes?TableName=%s" % name,
                    auth=False, content_type=None)
    assert r.status == 200, r
    return {ix["IndexName"]: ix for ix in r.json()["Tables"][0]["Indexes"]}


@pytest.fixture(scope="module")
def srv(server_factory):
    return server_factory()


@pytest.fixture(scope="module")
def ddb(srv):
    return make_client(srv.url)


def test_rebuild_each_index(srv, ddb):
    name = make_table(srv, ddb, scaled(400, 60))
    for index in INDEXES:
        r = rebuild(srv, {"TableName": name, "IndexName": index})
        assert r.status == 200, r
        assert r.json() == {}
    index_wait(srv, name)
    index_matches_table(ddb, name)
    st = stats(srv, name)
    assert all(st[i]["Rebuilding"] is False and st[i]["Status"] == "ACTIVE" and
               st[i]["Error"] is None for i in INDEXES), st
    desc = ddb.describe_table(TableName=name)["Table"]
    assert [g["IndexStatus"] for g in desc["GlobalSecondaryIndexes"]] == ["ACTIVE", "ACTIVE"]
    # the rebuilt indexes are maintained like any other
    put_all(ddb, name, [item(i, 1) for i in range(0, scaled(400, 60), 3)])
    ddb.delete_item(TableName=name, Key={"pk": S("p1"), "sk": S("s00001")})
    index_wait(srv, name)
    index_matches_table(ddb, name)


def test_rebuild_under_writes(srv, ddb):
    n = scaled(1500, 200)
    name = make_table(srv, ddb, n)
    stop, errors = threading.Event(), []

    def writer(w):
        client = make_client(srv.url)
        ver = 1
        try:
            while not stop.is_set():
                for i in range(w, n, 4 * 7):
                    client.put_item(TableName=name, Item=item(i, ver))
                    if stop.is_set():
                        break
                client.delete_item(TableName=name, Key={"pk": S("p%d" % (w % 7)),
                                                        "sk": S("s%05d" % w)})
                ver += 1
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    try:
        for index in INDEXES:
            r = rebuild(srv, {"TableName": name, "IndexName": index})
            assert r.status == 200, r
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    index_wait(srv, name)
    index_matches_table(ddb, name)


def test_kill9_during_rebuild_then_restart(server_factory):
    srv = server_factory()
    ddb = make_client(srv.url)
    name = make_table(srv, ddb, scaled(3000, 300))
    result = []
    t = threading.Thread(target=lambda: result.append(
        _rebuild_or_none(srv, {"TableName": name, "IndexName": "ByG"})))
    t.start()
    # kill it during the rebuild if /kura/indexes (another serving thread) shows it running;
    # a kill just before or after it must be as harmless
    deadline = time.monotonic() + 5
    while t.is_alive() and time.monotonic() < deadline:
        try:
            if stats(srv, name)["ByG"]["Rebuilding"]:
                break
        except OSError:
            break
    srv.kill()
    t.join()
    srv.start()
    ddb = make_client(srv.url)
    index_wait(srv, name)
    index_matches_table(ddb, name)
    r = rebuild(srv, {"TableName": name, "IndexName": "ByL"})
    assert r.status == 200, r
    srv.stop()
    srv.start()
    ddb = make_client(srv.url)
    index_wait(srv, name)
    index_matches_table(ddb, name)


def _rebuild_or_none(srv, body):
    try:
        return rebuild(srv, body, timeout=60)
    except OSError:
        return None  # the server died under it


@pytest.mark.parametrize("body,type_,fragment", [
    ({"TableName": "rebuild-missing", "IndexName": "ByG"}, "ResourceNotFoundException",
     "rebuild-missing"),
    ({"TableName": "@TABLE@", "IndexName": "Nope"}, "ResourceNotFoundException",
     "Index: Nope not found"),
    ({"TableName": "@TABLE@"}, "ValidationException", "TableName and IndexName are required"),
    ({"IndexName": "ByG"}, "ValidationException", "IndexName needs a TableName"),
    ({"TableName": "@TABLE@", "IndexName": "ByG", "TimeoutMillis": 5}, "ValidationException",
     "unknown member TimeoutMillis"),
    ({"TableName": "@TABLE@", "IndexName": 5}, "ValidationException",
     "IndexName must be a string"),
    ("not json", "SerializationException", ""),
    ("[1]", "SerializationException", "object"),
])
def test_rebuild_errors(srv, ddb, body, type_, fragment):
    name = make_table(srv, ddb, 5)
    if isinstance(body, dict):
        body = json.dumps({k: (name if v == "@TABLE@" else v) for k, v in body.items()})
    r = rebuild(srv, body)
    assert r.status == 400, r
    assert r.error_type == type_, r
    assert r.json()["__type"] == "com.amazonaws.dynamodb.v20120810#" + type_
    assert fragment in r.message, r


def test_rebuild_takes_post(srv):
    r = raw_request(srv, b"", method="GET", path="/kura/rebuild-index", auth=False,
                    content_type=None)
    assert r.status == 400 and "takes POST" in r.message, r
    r = raw_request(srv, b"", method="GET", path="/kura/nope", auth=False, content_type=None)
    assert r.status == 404 and "POST /kura/rebuild-index" in r.message, r


# ---- the kura CLI ---------------------------------------------------------------------------

def test_cli_rebuild_index(request, tmp_path):
    binary = os.environ.get("KURA_CLI") or os.path.join(
        os.path.dirname(os.path.abspath(server_binary(request.config))), "kura")
    data = str(tmp_path / "data")

    def cli(*args, stdin=""):
        p = subprocess.run([binary, "--data", data] + list(args), input=stdin.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    name = unique_name("rebuild-cli")
    rc, out, err = cli("exec", "CreateTable", stdin=json.dumps(table_body(name)))
    assert rc == 0, (out, err)
    lines = ["PutItem " + json.dumps({"TableName": name, "Item": item(i)}) for i in range(50)]
    lines += ["KuraRebuildIndex " + json.dumps({"TableName": name, "IndexName": "ByG"}),
              "KuraRebuildIndex " + json.dumps({"TableName": name, "IndexName": "Nope"}),
              "KuraIndexStats " + json.dumps({"TableName": name, "IndexName": "ByG"})]
    rc, out, err = cli("pipe", stdin="\n".join(lines) + "\n")
    assert rc == 0, (out, err)
    answers = out.splitlines()
    assert answers[50] == "0 {}", answers[50:]
    rc_, body = answers[51].split(" ", 1)
    assert rc_ == "1" and json.loads(body)["__type"].endswith("#ResourceNotFoundException")
    ix = json.loads(answers[52][2:])["Tables"][0]["Indexes"][0]
    assert ix["IndexName"] == "ByG" and ix["Rebuilding"] is False, ix
    rc, out, err = cli("rebuild-index", name, "ByL")
    assert (rc, out) == (0, "{}\n"), (rc, out, err)
    rc, out, err = cli("rebuild-index", name, "Nope")
    assert rc == 1 and json.loads(out)["__type"].endswith("#ResourceNotFoundException"), out
    for args in (["rebuild-index"], ["rebuild-index", name], ["rebuild-index", name, "a", "b"]):
        rc, out, err = cli(*args)
        assert rc == 2 and out == "" and "rebuild-index TABLE INDEX" in err, (args, rc, out)
    rc, out, err = cli("exec", "Query", stdin=json.dumps({
        "TableName": name, "IndexName": "ByG", "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": {":g": S("g1")}, "Select": "COUNT"}))
    assert rc == 0 and json.loads(out)["Count"] == sum(
        1 for i in range(50) if item(i).get("g") == S("g1")), out
