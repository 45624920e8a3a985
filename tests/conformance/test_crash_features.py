"""test_crash_features.py - This file contains the kill -9 tests of kura-server's secondary
indexes, change streams, Time to Live and transactions over HTTP: after every restart on the
same data directory, every index must equal its table, every stream must replay to its table,
every acknowledged write must be there and every transaction must be whole.

Two tests, each with its own kura-server (--sync, the default durability with --data):

test_issue22_transfers_keep_the_gsi_exact: issue 22 as its user reported it. Table Acc (hash
key pk S) of 50 items with owner (S) and bal (N), one GSI ByOwner (owner HASH, bal RANGE,
projection ALL). Per epoch three threads run a fixed number of 2-item TransactWriteItems (an
Update of two random items moving an amount of bal from one to the other, on condition that
it is there), then POST /kura/index-wait; the check: a Scan of the GSI equals a Scan of the
table as a multiset (every item's entry exactly once, nothing else), a Query of every owner
returns that owner's items once each, with their current bal, in bal order, and the sum of
bal is what it was (the bank invariant). Then SIGKILL while idle, restart, index-wait, the
same check, and the table must be exactly what it was before the kill (every transaction was
acknowledged); six kills. Before the fix (95f791b) the first restart's GSI held ~130 entries.

test_features_together_survive_kill9: every feature at once. Table Feat (pk S, sk S) with an
LSI ByLsk (pk, lsk N; INCLUDE v, exp), a GSI Sparse (sp S; KEYS_ONLY; only some items have
sp), a GSI Multi with a multi-attribute key (h1 S + h2 N HASH, r1 S + r2 N RANGE; ALL), a
stream (NEW_AND_OLD_IMAGES) and Time to Live on exp; table Ledger (pk S) with a GSI ByGrp
(grp, bal; ALL) and a stream. Four writer threads mix PutItem, UpdateItem, DeleteItem (some
conditional), BatchWriteItem, TransactWriteItems across both tables (moving bal between a Feat
and a Ledger account, with a Put, Delete or ConditionCheck of a third item, and an
idempotency token) and puts of already expired items, which the TTL sweeper deletes. Epoch 3
adds a GSI Late (g; INCLUDE v, n) with UpdateTable while the writes run. Kills: while idle
(epochs 1 and 6; in 1 with the GSIs possibly behind, in 6 after index-wait), with writes in
flight (epochs 2-5; more such epochs follow if no write happened to be cut off), and after
epoch 4 once more during the restart's recovery (the start is killed once it has opened an
index's files, before it listens), so recovery runs twice. After epoch 2 the server idles
long enough to flush its memtables (--idle-ms 200), so later recoveries start from SSTables.

How acknowledged writes are checked: each thread owns its keys, so a model (key -> item)
knows each key's state exactly; every acknowledged answer is compared with it (ALL_OLD of a
put or delete, ALL_NEW of an update, a cancellation's reasons), and after a restart the table
must equal it, except for each thread's last write when the kill cut it off: a transaction's
keys must then be all before or all after it, a batch's each before or after it, a single
write's key before or after it. A transaction cut off that way is then sent again with its
token: it must answer success and leave its keys exactly as it would have (applied once).
After every restart, once the TTL sweeper has deleted every expired item and every index is
ACTIVE and caught up (/kura/index-wait): the model; the bank invariant (the bal of each
thread's accounts in both tables adds up to what it started with: transactions are all or
nothing); every LSI and GSI equals its table (Scan of the index against the projection of a
Scan of the table, as multisets; a Query of every index hash key returns its part, in range
key order); and each stream, read from TRIM_HORIZON shard by shard with the dynamodbstreams
client and applied record by record (INSERT/MODIFY -> NewImage, REMOVE -> delete; INSERT only
of an absent item, MODIFY and REMOVE only of a present one with OldImage equal to it), gives
exactly the table's items.

Where a kill lands is timing; no verdict depends on it. Random choices come from seeded_rng
(KURA_TEST_SEED); sizes scale with KURA_TEST_SCALE. The checks are the test's own (no server
extension beyond /kura/index-wait).
"""

import collections
import decimal
import json
import threading
import time

from botocore.exceptions import BotoCoreError, ClientError

from conftest import (HANG_S, call, index_wait, make_client, read_all, read_stream, scaled,
                      seeded_rng, streams_client, wait_active, wait_until)


def S(s):
    return {"S": s}


def N(n):
    return {"N": str(n)}


def canon(item):
    return json.dumps(item, sort_keys=True)


def order_value(av):
    (t, v), = av.items()
    return decimal.Decimal(v) if t == "N" else v.encode("utf-8") if t == "S" else bytes(v)


# ---- the checks every restart runs (on a quiescent server) -----------------------------------

class Index:
    def __init__(self, table, kind, desc, table_keys):
        self.table, self.kind, self.name = table, kind, desc["IndexName"]
        self.hash = [k["AttributeName"] for k in desc["KeySchema"] if k["KeyType"] == "HASH"]
        self.range = [k["AttributeName"] for k in desc["KeySchema"] if k["KeyType"] == "RANGE"]
        proj = desc["Projection"]
        self.ptype = proj["ProjectionType"]
        self.keep = set(table_keys + self.hash + self.range + proj.get("NonKeyAttributes", []))
        self.status = desc.get("IndexStatus", "ACTIVE")
        self.backfilling = desc.get("Backfilling", False)

    def entry(self, item):
        """The item's entry in the index (its projection), or None when the item lacks a key
        attribute of the index (a sparse index)."""
        if not all(a in item for a in self.hash + self.range):
            return None
        if self.ptype == "ALL":
            return dict(item)
        return {k: v for k, v in item.items() if k in self.keep}


def describe(client, table):
    t = client.describe_table(TableName=table)["Table"]
    keys = [k["AttributeName"] for k in t["KeySchema"]]
    indexes = [Index(table, "LSI", d, keys) for d in t.get("LocalSecondaryIndexes", [])]
    indexes += [Index(table, "GSI", d, keys) for d in t.get("GlobalSecondaryIndexes", [])]
    return t, keys, indexes


def wait_indexes(srv, client, table):
    """Every index of the table ACTIVE (a GSI created online may still be backfilling, and a
    restart builds it again) and caught up with every write acknowledged before."""
    def ready():
        return all(ix.status == "ACTIVE" and not ix.backfilling
                   for ix in describe(client, table)[2])
    wait_until(ready, HANG_S, "every index of %s ACTIVE" % table)
    r = index_wait(srv, {"TableName": table, "TimeoutMillis": HANG_S * 1000})
    assert r.status == 200 and r.json() == {}, r


def short(text, n=160):
    return text if len(text) <= n else text[:n] + "..."


def multiset_diff(what, want, got):
    """None when the two lists of items are equal as multisets, else a description."""
    cw, cg = collections.Counter(map(canon, want)), collections.Counter(map(canon, got))
    if cw == cg:
        return None
    extra, missing = list((cg - cw).elements()), list((cw - cg).elements())
    return ("%s: %d entries, want %d; %d extra %s; %d missing %s" %
            (what, len(got), len(want), len(extra), [short(x) for x in extra[:4]],
             len(missing), [short(x) for x in missing[:4]]))


def check_indexes(client, table, items):
    """Every index of `table` against `items` (a Scan of the table): the index's Scan equals
    the items' entries as a multiset, and a Query of each of its hash key values returns
    exactly the entries of that value, in range key order. Returns the problems found."""
    bad = []
    for ix in describe(client, table)[2]:
        want = [e for e in (ix.entry(it) for it in items) if e is not None]
        got = read_all(client, "scan", TableName=table, IndexName=ix.name)
        d = multiset_diff("%s %s.%s Scan (%d items in the table)" % (ix.kind, table, ix.name,
                                                                    len(items)), want, got)
        if d:
            bad.append(d)
        groups = collections.defaultdict(list)
        for e in want:
            groups[canon({a: e[a] for a in ix.hash})].append(e)
        for hk in sorted(groups):
            hv = json.loads(hk)
            names = {"#h%d" % i: a for i, a in enumerate(ix.hash)}
            values = {":h%d" % i: hv[a] for i, a in enumerate(ix.hash)}
            got = read_all(client, "query", TableName=table, IndexName=ix.name,
                           KeyConditionExpression=" AND ".join(
                               "#h%d = :h%d" % (i, i) for i in range(len(ix.hash))),
                           ExpressionAttributeNames=names, ExpressionAttributeValues=values)
            d = multiset_diff("%s %s.%s Query %s" % (ix.kind, table, ix.name, hk),
                              groups[hk], got)
            if d:
                bad.append(d)
            order = [tuple(order_value(e[a]) for a in ix.range) for e in got]
            if order != sorted(order):
                bad.append("%s.%s Query %s: not in range key order: %s" %
                           (table, ix.name, hk, order))
    return bad


def key_tuple(keys, item):
    return tuple(canon(item[k]) for k in keys)


def replay_stream(records, keys):
    """Applies stream records in order: INSERT/MODIFY -> NewImage, REMOVE -> delete, each
    fitting the item it applies to. Returns (the items, problems)."""
    bad, state = [], {}
    for r in records:
        d, ev = r["dynamodb"], r["eventName"]
        k = key_tuple(keys, d["Keys"])
        old = state.get(k)
        if ev == "INSERT" and (old is not None or "OldImage" in d):
            bad.append("INSERT of an item the stream has: %r after %r" % (r, old))
        if ev in ("MODIFY", "REMOVE") and d.get("OldImage") != old:
            bad.append("%s whose OldImage is not the stream's item %r: %r" % (ev, old, r))
        if ev == "REMOVE":
            if "NewImage" in d:
                bad.append("REMOVE with a NewImage: %r" % r)
            state.pop(k, None)
        else:
            if key_tuple(keys, d["NewImage"]) != k:
                bad.append("NewImage of another key: %r" % r)
            state[k] = d["NewImage"]
    return list(state.values()), [short(x, 600) for x in bad]


def check_stream(streams, arn, keys, items):
    """The stream from TRIM_HORIZON replayed must give exactly `items` (the table's). Returns
    the problems found."""
    records = read_stream(streams, arn)
    replayed, bad = replay_stream(records, keys)
    d = multiset_diff("stream %s replayed (%d records)" % (arn, len(records)), items, replayed)
    return bad[:20] + ([d] if d else [])


# ---- 1. issue 22 as reported ----------------------------------------------------------------

ACC_ITEMS = 50
ACC_OWNERS = 5
ACC_BAL = 100

ACC_TABLE = {
    "TableName": "Acc", "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                             {"AttributeName": "owner", "AttributeType": "S"},
                             {"AttributeName": "bal", "AttributeType": "N"}],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "GlobalSecondaryIndexes": [{
        "IndexName": "ByOwner",
        "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"},
                      {"AttributeName": "bal", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}],
}


def acc_transfers(url, epoch, tid, count, out):
    """`count` 2-item transactions moving bal between two random items of Acc."""
    client = make_client(url, read_timeout=HANG_S)
    rng = seeded_rng("test_crash_features", "acc", epoch, tid)
    done = cancelled = 0
    for _ in range(count):
        a, b = rng.sample(range(ACC_ITEMS), 2)
        amount = N(rng.randint(1, 30))
        try:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": "Acc", "Key": {"pk": S("a%02d" % a)},
                            "UpdateExpression": "SET bal = bal - :m",
                            "ConditionExpression": "bal >= :m",
                            "ExpressionAttributeValues": {":m": amount}}},
                {"Update": {"TableName": "Acc", "Key": {"pk": S("a%02d" % b)},
                            "UpdateExpression": "SET bal = bal + :m",
                            "ExpressionAttributeValues": {":m": amount}}}])
            done += 1
        except ClientError as e:
            reasons = [x.get("Code") for x in e.response.get("CancellationReasons", [])]
            if reasons != ["ConditionalCheckFailed", "None"]:
                out.append("thread %d: %s %s" % (tid, e.response.get("Error"), reasons))
                return
            cancelled += 1
    out.append((done, cancelled))


def acc_check(srv, client, when):
    """index-wait, then the GSI against the table and the bank invariant; returns the table."""
    r = index_wait(srv, {"TableName": "Acc", "TimeoutMillis": HANG_S * 1000})
    assert r.status == 200 and r.json() == {}, r
    items = read_all(client, "scan", TableName="Acc", ConsistentRead=True)
    bad = check_indexes(client, "Acc", items)
    assert not bad, "%s:\n%s" % (when, "\n".join(bad))
    assert len(items) == ACC_ITEMS, "%s: %d items in Acc" % (when, len(items))
    total = sum(int(it["bal"]["N"]) for it in items)
    assert total == ACC_ITEMS * ACC_BAL, "%s: bal adds up to %d" % (when, total)
    return sorted(items, key=canon)


def test_issue22_transfers_keep_the_gsi_exact(server_factory):
    srv = server_factory(args=["--sync"])
    client = make_client(srv.url)
    r = call(srv, "CreateTable", ACC_TABLE)
    assert r.status == 200, r
    wait_active(client, "Acc")
    for i in range(ACC_ITEMS):
        client.put_item(TableName="Acc", Item={"pk": S("a%02d" % i),
                                               "owner": S("o%d" % (i % ACC_OWNERS)),
                                               "bal": N(ACC_BAL)})
    per_thread = scaled(250, 120)
    for kill in range(1, 7):
        out = []
        threads = [threading.Thread(target=acc_transfers, args=(srv.url, kill, t, per_thread, out))
                   for t in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(HANG_S)
        assert len(out) == 3 and all(isinstance(x, tuple) for x in out), out
        assert sum(x[0] for x in out) >= per_thread, out  # most transfers go through
        before = acc_check(srv, client, "epoch %d, before kill -9 #%d" % (kill, kill))
        srv.kill()  # idle: every request has been answered
        srv.start()
        client = make_client(srv.url)
        after = acc_check(srv, client, "after kill -9 #%d and restart" % kill)
        assert after == before, "after kill -9 #%d: the table lost acknowledged transfers" % kill


# ---- 2. every feature at once ---------------------------------------------------------------

THREADS = 4
PKS = 3          # partition keys per thread in Feat; each has the sort keys below and "acct"
SKS = 4          # general items per partition key
TTLS = 3         # expired items per thread (pk "p<t>.ttl")
START_BAL = 100  # every account's starting bal
NOW = int(time.time())
FUTURE = NOW + 3 * 86400  # exp of items that must stay
PAST = NOW - 3600         # exp of items the sweeper deletes

FEAT_TABLE = {
    "TableName": "Feat", "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in (
        ("pk", "S"), ("sk", "S"), ("lsk", "N"), ("sp", "S"),
        ("h1", "S"), ("h2", "N"), ("r1", "S"), ("r2", "N"))],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                  {"AttributeName": "sk", "KeyType": "RANGE"}],
    "LocalSecondaryIndexes": [{
        "IndexName": "ByLsk",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "lsk", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v", "exp"]}}],
    "GlobalSecondaryIndexes": [
        {"IndexName": "Sparse",
         "KeySchema": [{"AttributeName": "sp", "KeyType": "HASH"}],
         "Projection": {"ProjectionType": "KEYS_ONLY"}},
        {"IndexName": "Multi",
         "KeySchema": [{"AttributeName": "h1", "KeyType": "HASH"},
                       {"AttributeName": "h2", "KeyType": "HASH"},
                       {"AttributeName": "r1", "KeyType": "RANGE"},
                       {"AttributeName": "r2", "KeyType": "RANGE"}],
         "Projection": {"ProjectionType": "ALL"}}],
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}

LEDGER_TABLE = {
    "TableName": "Ledger", "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                             {"AttributeName": "grp", "AttributeType": "S"},
                             {"AttributeName": "bal", "AttributeType": "N"}],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "GlobalSecondaryIndexes": [{
        "IndexName": "ByGrp",
        "KeySchema": [{"AttributeName": "grp", "KeyType": "HASH"},
                      {"AttributeName": "bal", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}],
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}

LATE_GSI = {
    "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
    "GlobalSecondaryIndexUpdates": [{"Create": {
        "IndexName": "Late", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["v", "n"]}}}],
}

TABLE_KEYS = {"Feat": ["pk", "sk"], "Ledger": ["pk"]}


def fkey(pk, sk):
    return ("Feat", pk, sk)


def lkey(pk):
    return ("Ledger", pk, None)


def key_av(key):
    _, pk, sk = key
    return {"pk": S(pk)} if sk is None else {"pk": S(pk), "sk": S(sk)}


def item_key(table, item):
    return (table, item["pk"]["S"], item["sk"]["S"] if table == "Feat" else None)


def general_keys(t):
    return [fkey("p%d.%d" % (t, j), "s%d" % k) for j in range(PKS) for k in range(SKS)]


def feat_accounts(t):
    return [fkey("p%d.%d" % (t, j), "acct") for j in range(PKS)]


def ledger_accounts(t):
    return [lkey("L%d.%d" % (t, j)) for j in range(PKS)]


def ttl_keys(t):
    return [fkey("p%d.ttl" % t, "x%d" % k) for k in range(TTLS)]


def account_item(key, t, bal):
    if key[0] == "Ledger":
        return dict(key_av(key), grp=S("g%d" % t), bal=N(bal))
    # bal is also the LSI's range key and the Multi GSI's last one: every transfer moves them
    return dict(key_av(key), bal=N(bal), lsk=N(bal), h1=S("acct"), h2=N(t), r1=S(key[1]),
                r2=N(bal))


def general_item(rng, key, **extra):
    it = dict(key_av(key), v=S("v%06d" % rng.randrange(10 ** 6)))
    if rng.random() < 0.7:
        it["lsk"] = N(rng.randrange(1000))
    if rng.random() < 0.35:
        it["sp"] = S("sp%d" % rng.randrange(4))
    multi = {"h1": S(rng.choice("ab")), "h2": N(rng.randrange(2)), "r1": S(rng.choice("xyz")),
             "r2": N(rng.randrange(100))}
    if rng.random() < 0.3:
        del multi[rng.choice(sorted(multi))]
    it.update(multi)
    if rng.random() < 0.6:
        it["g"] = S("g%d" % rng.randrange(4))
    if rng.random() < 0.2:
        it["exp"] = N(FUTURE)
    if rng.random() < 0.3:
        it["pad"] = S("x" * rng.randrange(1, 400))
    it.update(extra)
    return it


# UpdateItem forms on general items: (expression, the model's version of it)
def _upd_counter(item, vals):
    item["v"] = vals[":v"]
    item["n"] = N(int(item.get("n", N(0))["N"]) + 1)


def _upd_sparse(item, vals):
    item["sp"] = vals[":sp"]
    item.pop("lsk", None)


def _upd_unsparse(item, vals):
    item.pop("sp", None)
    item.pop("h1", None)
    item["g"], item["lsk"] = vals[":g"], vals[":l"]


def _upd_multi(item, vals):
    for a in ("h1", "h2", "r1", "r2"):
        item[a] = vals[":" + a]


def _upd_exp(item, vals):
    item["exp"], item["v"] = vals[":exp"], vals[":v"]


UPDATES = [
    ("SET v = :v, n = if_not_exists(n, :zero) + :one", _upd_counter,
     lambda rng: {":v": S("u%d" % rng.randrange(10 ** 6)), ":zero": N(0), ":one": N(1)}),
    ("SET sp = :sp REMOVE lsk", _upd_sparse, lambda rng: {":sp": S("sp%d" % rng.randrange(4))}),
    ("SET g = :g, lsk = :l REMOVE sp, h1", _upd_unsparse,
     lambda rng: {":g": S("g%d" % rng.randrange(4)), ":l": N(rng.randrange(1000))}),
    ("SET h1 = :h1, h2 = :h2, r1 = :r1, r2 = :r2", _upd_multi,
     lambda rng: {":h1": S(rng.choice("ab")), ":h2": N(rng.randrange(2)),
                  ":r1": S(rng.choice("xyz")), ":r2": N(rng.randrange(100))}),
    ("SET exp = :exp, v = :v", _upd_exp,
     lambda rng: {":exp": N(FUTURE), ":v": S("e%d" % rng.randrange(10 ** 6))}),
]


class Op:
    """One request of a writer: the state of its keys before it, after it if it does what the
    model predicts, and whether its keys move together (a transaction)."""

    def __init__(self, name, pre, post, joint=False, expect=None, request=None):
        self.name = name
        self.pre = pre          # key -> item or None
        self.post = post        # key -> item or None (== pre when the model predicts a failure)
        self.joint = joint
        self.expect = expect    # None (success), an error code, or a cancellation's reasons
        self.request = request  # a transaction's TransactWriteItems arguments (its token too)

    def __repr__(self):
        return "Op(%s)" % self.name


class Features:
    """The writers' model of both tables (every key is owned by one thread) and the checks."""

    def __init__(self):
        self.state = {}
        for t in range(THREADS):
            for k in general_keys(t):
                self.state[k] = None
            for k in feat_accounts(t) + ledger_accounts(t):
                self.state[k] = account_item(k, t, START_BAL)
        self.inflight = {}          # thread -> its Op that the kill cut off
        self.unexpected = []
        self.lock = threading.Lock()
        self.acks = 0
        self.cut = 0                # writes in flight at a kill, over the whole run
        self.resent = 0             # transactions among them sent again with their token
        self.counts = collections.Counter()

    # -- the writers --

    def build(self, rng, t, name):
        g = general_keys(t)
        roll = rng.random()
        if roll < 0.22:  # PutItem, sometimes only if absent
            key = rng.choice(g)
            pre, item = self.state[key], general_item(rng, key)
            kw = {"TableName": "Feat", "Item": item, "ReturnValues": "ALL_OLD"}
            fail = False
            if rng.random() < 0.3:
                kw["ConditionExpression"] = "attribute_not_exists(pk)"
                fail = pre is not None
            op = Op(name + " put", {key: pre}, {key: pre if fail else item},
                    expect="ConditionalCheckFailedException" if fail else None)
            return "put", op, kw
        if roll < 0.42:  # UpdateItem, sometimes only if present
            key = rng.choice(g)
            expr, model, values = rng.choice(UPDATES)
            vals = values(rng)
            pre = self.state[key]
            kw = {"TableName": "Feat", "Key": key_av(key), "UpdateExpression": expr,
                  "ExpressionAttributeValues": vals, "ReturnValues": "ALL_NEW"}
            fail = False
            if rng.random() < 0.3:
                kw["ConditionExpression"] = "attribute_exists(pk)"
                fail = pre is None
            post = dict(pre) if pre is not None else key_av(key)
            model(post, vals)
            op = Op(name + " update", {key: pre}, {key: pre if fail else post},
                    expect="ConditionalCheckFailedException" if fail else None)
            return "update", op, kw
        if roll < 0.54:  # DeleteItem, sometimes only if it has sp
            key = rng.choice(g)
            pre = self.state[key]
            kw = {"TableName": "Feat", "Key": key_av(key), "ReturnValues": "ALL_OLD"}
            fail = False
            if rng.random() < 0.3:
                kw["ConditionExpression"] = "attribute_exists(sp)"
                fail = pre is None or "sp" not in pre
            op = Op(name + " delete", {key: pre}, {key: pre if fail else None},
                    expect="ConditionalCheckFailedException" if fail else None)
            return "delete", op, kw
        if roll < 0.68:  # BatchWriteItem of 2-4 items: puts and deletes
            keys = rng.sample(g, rng.randint(2, 4))
            reqs, pre, post = [], {}, {}
            for key in keys:
                pre[key] = self.state[key]
                if rng.random() < 0.6:
                    item = general_item(rng, key)
                    reqs.append({"PutRequest": {"Item": item}})
                    post[key] = item
                else:
                    reqs.append({"DeleteRequest": {"Key": key_av(key)}})
                    post[key] = None
            if rng.random() < 0.5:  # and an expired item for the sweeper
                tk = rng.choice(ttl_keys(t))
                reqs.append({"PutRequest": {"Item": general_item(rng, tk, exp=N(PAST))}})
            return "batch", Op(name + " batch", pre, post), {"RequestItems": {"Feat": reqs}}
        if roll < 0.95:  # TransactWriteItems across Feat and Ledger
            return "txn", *self.build_txn(rng, t, name)
        key = rng.choice(ttl_keys(t))  # PutItem of an expired item
        item = general_item(rng, key, exp=N(PAST))
        return "ttl", Op(name + " ttl-put", {}, {}), {"TableName": "Feat", "Item": item}

    def build_txn(self, rng, t, name):
        fa, la = rng.choice(feat_accounts(t)), rng.choice(ledger_accounts(t))
        src, dst = (fa, la) if rng.random() < 0.5 else (la, fa)
        amount = rng.randint(1, 70)
        pre = {k: self.state[k] for k in (src, dst)}
        post = {}
        actions, reasons = [], []
        for key, sign in ((src, -1), (dst, 1)):
            bal = int(pre[key]["bal"]["N"]) + sign * amount
            sets = "bal = bal {0} :m, tx = :tx".format("-" if sign < 0 else "+")
            if key[0] == "Feat":  # right-hand sides read the old item: lsk, r2 = the new bal
                sets += ", lsk = bal {0} :m, r2 = bal {0} :m".format("-" if sign < 0 else "+")
            upd = {"TableName": key[0], "Key": key_av(key), "UpdateExpression": "SET " + sets,
                   "ExpressionAttributeValues": {":m": N(amount), ":tx": S(name)}}
            ok = True
            if sign < 0:
                upd["ConditionExpression"] = "bal >= :m"
                ok = bal >= 0
            actions.append({"Update": upd})
            reasons.append("None" if ok else "ConditionalCheckFailed")
            post[key] = dict(pre[key], bal=N(bal), tx=S(name))
            if key[0] == "Feat":
                post[key].update(lsk=N(bal), r2=N(bal))
        extra = rng.random()
        if extra < 0.75:
            key = rng.choice(general_keys(t))
            pre[key] = self.state[key]
            if extra < 0.4:
                item = general_item(rng, key, tx=S(name))
                actions.append({"Put": {"TableName": "Feat", "Item": item}})
                post[key], ok = item, True
            elif extra < 0.6:
                actions.append({"Delete": {"TableName": "Feat", "Key": key_av(key)}})
                post[key], ok = None, True
            else:
                actions.append({"ConditionCheck": {"TableName": "Feat", "Key": key_av(key),
                                                   "ConditionExpression": "attribute_exists(pk)"}})
                post[key], ok = pre[key], pre[key] is not None
            reasons.append("None" if ok else "ConditionalCheckFailed")
        fails = any(r != "None" for r in reasons)
        request = {"TransactItems": actions, "ClientRequestToken": name.replace(" ", "")}
        op = Op(name + " txn", pre, dict(pre) if fails else post, joint=True,
                expect=reasons if fails else None, request=request)
        return op, request

    def send(self, client, kind, kw):
        if kind in ("put", "ttl"):
            return client.put_item(**kw)
        if kind == "update":
            return client.update_item(**kw)
        if kind == "delete":
            return client.delete_item(**kw)
        if kind == "batch":
            return client.batch_write_item(**kw)
        return client.transact_write_items(**kw)

    def problem(self, text):
        with self.lock:
            self.unexpected.append(text)

    def step(self, client, t, name, rng):
        """One write; False when the server did not answer (the kill) or answered wrongly."""
        kind, op, kw = self.build(rng, t, name)
        self.inflight[t] = op
        try:
            resp = self.send(client, kind, kw)
        except ClientError as e:
            err = e.response.get("Error", {}).get("Code")
            got = err
            if err == "TransactionCanceledException":
                got = [x.get("Code") for x in e.response.get("CancellationReasons", [])]
            if op.expect is None or got != op.expect:
                self.problem("%r: answered %s %s, the model expected %s" %
                             (op, err, got, op.expect or "success"))
                return False
            self.inflight[t] = None
            return True
        except BotoCoreError:
            return False  # no answer: the server is gone, op stays in flight
        if op.expect is not None:
            self.problem("%r: succeeded, the model expected %s" % (op, op.expect))
            return False
        key = next(iter(op.pre), None)
        if kind in ("put", "delete") and resp.get("Attributes") != op.pre[key]:
            self.problem("%r: ALL_OLD %r, the model had %r" % (op, resp.get("Attributes"),
                                                                op.pre[key]))
        if kind == "update" and resp.get("Attributes") != op.post[key]:
            self.problem("%r: ALL_NEW %r, the model says %r" % (op, resp.get("Attributes"),
                                                                 op.post[key]))
        if kind == "batch":
            for req in resp.get("UnprocessedItems", {}).get("Feat", []):
                r = req.get("PutRequest", {}).get("Item") or req["DeleteRequest"]["Key"]
                k = item_key("Feat", r)
                if k in op.post:
                    op.post[k] = op.pre[k]
        self.state.update(op.post)
        self.inflight[t] = None
        with self.lock:
            self.acks += 1
            self.counts[kind] += 1
        return True

    def writer(self, client, t, epoch, stop, count):
        rng = seeded_rng("test_crash_features", "writer", epoch, t)
        n = 0
        while not stop.is_set() and (count is None or n < count):
            n += 1
            if not self.step(client, t, "e%d-t%d-%d" % (epoch, t, n), rng):
                return

    # -- after a restart --

    def check_model(self, tables):
        """The tables against the model; settles each cut-off write from what is there."""
        actual = {}
        for table, items in tables.items():
            for it in items:
                actual[item_key(table, it)] = it
        bad = []
        for t, op in sorted(self.inflight.items()):
            if op is None:
                continue
            self.cut += 1
            seen = {k: actual.get(k) for k in op.pre}
            if op.joint:
                ok = seen in (op.pre, op.post)
            else:
                ok = all(seen[k] in (op.pre[k], op.post[k]) for k in op.pre)
            if not ok:
                bad.append("%r, cut off by the kill, left %r; before it: %r; after it: %r" %
                           (op, seen, op.pre, op.post))
            self.state.update(seen)
        ttl = {k for t in range(THREADS) for k in ttl_keys(t)}
        for k, want in sorted(self.state.items()):
            if actual.get(k) != want:
                bad.append("%s: %r, the model (every acknowledged write) says %r" %
                           (k, actual.get(k), want))
        for k in sorted(set(actual) - set(self.state)):
            bad.append("%s: %s %r, which no writer wrote" %
                       (k, "expired and still there:" if k in ttl else "present:", actual[k]))
        for t in range(THREADS):
            total = sum(int(actual[k]["bal"]["N"]) for k in feat_accounts(t) + ledger_accounts(t)
                        if k in actual)
            if total != 2 * PKS * START_BAL:
                bad.append("thread %d's accounts add up to %d, want %d (a transfer half done)"
                           % (t, total, 2 * PKS * START_BAL))
        return [short(x, 600) for x in bad]

    def resend_cut_transactions(self, client):
        """A transaction cut off by the kill, sent again with its token, answers success and
        leaves its keys as one execution of it would."""
        for t, op in sorted(self.inflight.items()):
            if op is None or op.request is None or op.expect is not None:
                continue
            client.transact_write_items(**op.request)
            self.resent += 1
            for k, want in op.post.items():
                got = client.get_item(TableName=k[0], Key=key_av(k),
                                      ConsistentRead=True).get("Item")
                assert got == want, "%r sent again with its token: %s is %r, want %r" % (
                    op, k, got, want)
            self.state.update(op.post)
        self.inflight = {}


def features_verify(srv, work, when, arns):
    client = make_client(srv.url)
    streams = streams_client(srv.url)
    # quiescent: the sweeper has deleted every expired item, every index is ACTIVE and current
    wait_until(lambda: not read_all(client, "scan", TableName="Feat", ConsistentRead=True,
                                    FilterExpression="exp < :now",
                                    ExpressionAttributeValues={":now": N(int(time.time()))}),
               HANG_S, "%s: the TTL sweep of every expired item" % when)
    for table in ("Feat", "Ledger"):
        wait_indexes(srv, client, table)
    tables = {table: read_all(client, "scan", TableName=table, ConsistentRead=True)
              for table in ("Feat", "Ledger")}
    bad = work.check_model(tables)
    for table, items in tables.items():
        bad += check_indexes(client, table, items)
        bad += check_stream(streams, arns[table], TABLE_KEYS[table], items)
    assert not bad, "%s:\n%s" % (when, "\n".join(bad[:30]))
    work.resend_cut_transactions(client)


def run_epoch(srv, work, epoch, count=None, min_acks=0, during=None):
    """Writers until `count` writes each (then idle), or until min_acks were acknowledged (then
    the caller kills with writes in flight); `during` runs once a third of them are in."""
    stop = threading.Event()
    clients = [make_client(srv.url, read_timeout=HANG_S) for _ in range(THREADS)]
    start_acks = work.acks
    threads = [threading.Thread(target=work.writer, args=(clients[t], t, epoch, stop, count))
               for t in range(THREADS)]
    for t in threads:
        t.start()
    if count is None:
        deadline = time.monotonic() + HANG_S
        if during is not None:
            while work.acks - start_acks < min_acks // 3 and time.monotonic() < deadline:
                time.sleep(0.005)
            during()
        while (work.acks - start_acks < min_acks and any(t.is_alive() for t in threads) and
               time.monotonic() < deadline):
            time.sleep(0.005)
    return stop, threads


def test_features_together_survive_kill9(server_factory):
    srv = server_factory(args=["--sync", "--ttl-sweep-ms", "100", "--ttl-transition-ms", "1",
                               "--idle-ms", "200"])
    client = make_client(srv.url)
    arns = {}
    for body in (FEAT_TABLE, LEDGER_TABLE):
        r = call(srv, "CreateTable", body)
        assert r.status == 200, r
        arns[body["TableName"]] = r.json()["TableDescription"]["LatestStreamArn"]
        wait_active(client, body["TableName"])
    client.update_time_to_live(TableName="Feat", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})
    work = Features()
    for k, item in sorted(work.state.items()):
        if item is not None:
            client.put_item(TableName=k[0], Item=item)
    features_verify(srv, work, "after the setup", arns)

    rng = seeded_rng("test_crash_features", "kill delays")
    idle_count, mid_acks = scaled(80, 25), scaled(400, 100)
    late = []

    def create_late_gsi():
        r = call(srv, "UpdateTable", dict(LATE_GSI, TableName="Feat"))
        late.append(r)

    plan = ["idle", "mid", "mid+gsi", "mid+recovery", "mid", "idle+wait"]
    epoch = 0
    recovery_kills = []
    while epoch < len(plan) or (work.cut == 0 and epoch < len(plan) + 5):
        kind = plan[epoch] if epoch < len(plan) else "mid"
        epoch += 1
        if kind.startswith("idle"):
            stop, threads = run_epoch(srv, work, epoch, count=idle_count)
            for t in threads:
                t.join(HANG_S)
            if kind == "idle+wait":
                for table in ("Feat", "Ledger"):
                    wait_indexes(srv, client, table)
        else:
            stop, threads = run_epoch(srv, work, epoch, min_acks=mid_acks,
                                      during=create_late_gsi if kind == "mid+gsi" else None)
            time.sleep(rng.uniform(0.02, 0.2))
        assert srv.alive(), srv.logs()
        in_flight = sum(1 for op in work.inflight.values() if op is not None)
        srv.kill()
        stop.set()
        for t in threads:
            t.join(HANG_S)
        assert not any(t.is_alive() for t in threads), "a writer hangs"
        assert not work.unexpected, "epoch %d: %s" % (epoch, "\n".join(work.unexpected[:10]))
        assert kind.startswith("mid") or in_flight == 0
        if kind == "mid+gsi":
            assert late and late[0].status == 200, late
        if kind == "mid+recovery":
            # kill the restart while it recovers (once it has an index's files open), then
            # start again: recovery runs twice; a few tries to land before it listens
            for _ in range(3):
                recovery_kills.append(srv.start_and_kill_early(
                    lambda paths: any(p.startswith("idx-") for p in paths)))
                if recovery_kills[-1]:
                    break
        srv.start()
        client = make_client(srv.url)
        features_verify(srv, work, "epoch %d (%s), after kill -9 #%d and restart" %
                        (epoch, kind, epoch), arns)
        if kind == "mid+gsi":
            names = [ix.name for ix in describe(client, "Feat")[2]]
            assert "Late" in names, names
        if epoch == 2:
            time.sleep(0.4)  # idle: kura-server flushes its memtables (--idle-ms)
    assert work.cut > 0, "no write was in flight at any of %d kills" % epoch
    print("features: %d writes acknowledged (%s), %d cut off by kills (%d transactions sent "
          "again), recovery kills %s" % (work.acks, dict(work.counts), work.cut, work.resent,
                                         recovery_kills))

    # The checks on doctored copies of the last state must report them.
    client, streams = make_client(srv.url), streams_client(srv.url)
    feat = read_all(client, "scan", TableName="Feat", ConsistentRead=True)
    ledger = read_all(client, "scan", TableName="Ledger", ConsistentRead=True)
    acct = [it for it in feat if it["sk"]["S"] == "acct"][0]
    rest = [it for it in feat if it is not acct]
    assert check_indexes(client, "Feat", rest)  # index entries of an item not in the table
    moved = dict(acct, bal=N(int(acct["bal"]["N"]) + 1))
    assert check_indexes(client, "Feat", rest + [moved])  # a stale entry
    assert check_stream(streams, arns["Feat"], TABLE_KEYS["Feat"], rest)
    assert check_stream(streams, arns["Ledger"], TABLE_KEYS["Ledger"], ledger[1:])
    assert work.check_model({"Feat": feat, "Ledger": ledger}) == []
    assert work.check_model({"Feat": rest + [moved], "Ledger": ledger})


def _record(event, keys, old=None, new=None):
    d = {"Keys": keys}
    if old is not None:
        d["OldImage"] = old
    if new is not None:
        d["NewImage"] = new
    return {"eventName": event, "dynamodb": d}


def test_checker_self_test():
    """The checks on small hand-made states: consistent ones pass, planted faults are
    reported."""
    table_keys = ["pk", "sk"]
    desc = {"IndexName": "G", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
                                            {"AttributeName": "b", "KeyType": "RANGE"}]}
    item = {"pk": S("p"), "sk": S("s"), "a": S("x"), "b": N(1), "c": S("c"), "d": S("d")}
    include = Index("T", "GSI", dict(desc, Projection={"ProjectionType": "INCLUDE",
                                                       "NonKeyAttributes": ["c"]}), table_keys)
    keys_only = Index("T", "GSI", dict(desc, Projection={"ProjectionType": "KEYS_ONLY"}),
                      table_keys)
    whole = Index("T", "GSI", dict(desc, Projection={"ProjectionType": "ALL"}), table_keys)
    assert include.entry(item) == {k: item[k] for k in ("pk", "sk", "a", "b", "c")}
    assert keys_only.entry(item) == {k: item[k] for k in ("pk", "sk", "a", "b")}
    assert whole.entry(item) == item
    assert include.entry({k: item[k] for k in ("pk", "sk", "a", "c")}) is None  # sparse
    # multisets: a duplicate or a stale entry is reported
    assert multiset_diff("x", [item, dict(item, b=N(2))], [dict(item, b=N(2)), item]) is None
    assert multiset_diff("x", [item], [item, item])
    assert multiset_diff("x", [item], [dict(item, b=N(2))])
    # stream replay
    k = {"pk": S("p")}
    a, b = dict(k, v=S("1")), dict(k, v=S("2"))
    recs = [_record("INSERT", k, new=a), _record("MODIFY", k, old=a, new=b),
            _record("REMOVE", k, old=b), _record("INSERT", k, new=a)]
    assert replay_stream(recs, ["pk"]) == ([a], [])
    assert replay_stream(recs[:3], ["pk"]) == ([], [])
    assert replay_stream([recs[0], recs[2]], ["pk"])[1]  # a lost MODIFY
    assert replay_stream([recs[0], recs[0]], ["pk"])[1]  # an INSERT of a present item
    assert replay_stream([recs[2]], ["pk"])[1]           # a REMOVE of an absent item

    # the model
    def tables_of(state):
        out = {"Feat": [], "Ledger": []}
        for key, it in state.items():
            if it is not None:
                out[key[0]].append(it)
        return out

    work = Features()
    assert work.check_model(tables_of(work.state)) == []
    g0, g1 = general_keys(0)[:2]
    x0, x1 = general_item(seeded_rng("self-test"), g0), general_item(seeded_rng("self"), g1)
    work.state[g0] = x0
    assert work.check_model(tables_of(work.state)) == []
    lost = tables_of(work.state)
    lost["Feat"].remove(x0)
    assert work.check_model(lost)                               # an acknowledged put lost
    phantom = tables_of(work.state)
    phantom["Feat"].append(x1)
    assert work.check_model(phantom)                            # a write nobody made
    expired = tables_of(work.state)
    expired["Feat"].append(general_item(seeded_rng("ttl"), ttl_keys(1)[0], exp=N(PAST)))
    assert work.check_model(expired)                            # an expired item stays
    # a transaction cut off by the kill: all or nothing
    fa, la = feat_accounts(0)[0], ledger_accounts(0)[0]
    pre = {fa: work.state[fa], la: work.state[la]}
    post = {fa: account_item(fa, 0, START_BAL - 10), la: account_item(la, 0, START_BAL + 10)}
    for seen, ok in (({}, True), (post, True), ({fa: post[fa]}, False), ({la: post[la]}, False)):
        w = Features()
        w.state[g0] = x0
        w.inflight[0] = Op("cut txn", pre, post, joint=True)
        actual = tables_of(w.state)
        for key, it in seen.items():
            actual[key[0]] = [i for i in actual[key[0]] if item_key(key[0], i) != key] + [it]
        assert (w.check_model(actual) == []) == ok, seen
    # a batch cut off: each key on its own
    for seen, ok in (({g1: x1}, True), ({g0: None, g1: x1}, True), ({g1: x0}, False)):
        w = Features()
        w.state[g0] = x0
        w.inflight[1] = Op("cut batch", {g0: x0, g1: None}, {g0: None, g1: x1})
        actual = tables_of(w.state)
        for key, it in seen.items():
            actual["Feat"] = [i for i in actual["Feat"] if item_key("Feat", i) != key]
            if it is not None:
                actual["Feat"].append(dict(it, **key_av(key)))
        assert (w.check_model(actual) == []) == ok, seen
