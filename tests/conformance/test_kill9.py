"""test_kill9.py - This file contains the kill -9 test of kura-server: concurrent boto3 writers
doing PutItem, UpdateItem (ADD counters) and DeleteItem on a few overlapping keys while the
server (--sync, the default durability) is SIGKILLed mid-stream several times and restarted on
the same data directory; after every restart, every acknowledged write must be reflected and
the integrity check (POST /kura/check) must find nothing.

Design. Every write leaves its identity in the item, so the state read after a restart can be
traced back to the operation that produced it:
  PutItem     {pk, lastop: ID, prevop: "put", c: 0, pad}          ReturnValues ALL_OLD
  UpdateItem  SET prevop = if_not_exists(lastop, "none"), lastop = ID  ADD c 1
                                                                  ReturnValues ALL_NEW
  DeleteItem                                                      ReturnValues ALL_OLD
Each operation is logged with its send time, its acknowledgement time (None when no response
came: the server died first -- such an operation may or may not have been applied) and the
returned attributes, which name the operation it came after on that key ("pred": the old
item's lastop, or the new item's prevop). Operation B must be ordered after operation X when
  - X was acknowledged before B was sent (real time), or X's server run ended before B's began,
  - or B's response names X as its predecessor,
and transitively. The checker (check_history, a pure function) then requires for every key:
  - a present final item was produced by an operation that exists in the log (no phantom
    writes), equals exactly what that operation wrote or acknowledged (for an acknowledged
    update: its ALL_NEW response), and no acknowledged operation is ordered after it;
  - an absent item is explained by some DeleteItem (or by no acknowledged put/update at all)
    after which no acknowledged put or update is ordered;
  - every acknowledged update's counter is its predecessor's plus one, when the predecessor
    is known.
An acknowledged write that a restart lost therefore always shows up as a violation. The checker
is itself tested (test_checker_self_test and the doctored copies of the real run's history at
the end of test_kill9_acknowledged_writes_survive): it must report the planted violations.

Where a kill lands is timing, and no verdict depends on it: each epoch waits for its writes
(with a deadline only a hang reaches), and the run must include a kill with a write in flight,
so where none of the planned epochs had one, more epochs follow (up to EXTRA_EPOCHS) until one
does.
"""

import threading
import time

import pytest
from botocore.exceptions import BotoCoreError, ClientError

from conftest import HANG_S, create_table, make_client, raw_request, scaled, seeded_rng


# ---- the checker (pure) ----------------------------------------------------------------------

class Op:
    __slots__ = ("id", "key", "kind", "epoch", "t_send", "t_ack", "item", "result", "pred")

    def __init__(self, id, key, kind, epoch, t_send, t_ack=None, item=None, result=None,
                 pred=None):
        self.id, self.key, self.kind, self.epoch = id, key, kind, epoch
        self.t_send, self.t_ack = t_send, t_ack
        self.item = item      # put: the item written
        self.result = result  # acked: the returned attributes (ALL_OLD / ALL_NEW) or None
        self.pred = pred      # acked: the id of the operation it came after, or None

    @property
    def acked(self):
        return self.t_ack is not None

    def __repr__(self):
        return "Op(%s %s %s epoch=%d send=%.4f ack=%s pred=%s)" % (
            self.id, self.kind, self.key, self.epoch, self.t_send,
            "%.4f" % self.t_ack if self.acked else "none", self.pred)


def _successors(op, ops):
    out = []
    for b in ops:
        if b is op:
            continue
        if b.pred == op.id:
            out.append(b)
        elif op.acked and op.t_ack < b.t_send:
            out.append(b)
        elif op.epoch < b.epoch:
            out.append(b)
    return out


def _ordered_after(op, ops):
    """Every operation that must come after `op` (transitively)."""
    seen, todo = set(), [op]
    while todo:
        cur = todo.pop()
        for b in _successors(cur, ops):
            if b.id not in seen:
                seen.add(b.id)
                todo.append(b)
    return [b for b in ops if b.id in seen]


def check_history(ops, finals):
    """ops: every Op; finals: key -> item (dict of attribute values) or None (absent).
    Returns the list of violations (strings); empty when the final states are consistent."""
    bad = []
    by_key = {}
    for o in ops:
        by_key.setdefault(o.key, []).append(o)
    ids = {o.id: o for o in ops}
    for o in ops:
        if o.acked and o.pred is not None and o.pred not in ids:
            bad.append("%r names a predecessor nobody wrote" % o)
        if o.acked and o.kind == "update":
            p = ids.get(o.pred)
            want = None
            if o.pred is None:
                want = 1
            elif p is not None and p.acked and p.kind == "put":
                want = 1
            elif p is not None and p.acked and p.kind == "update":
                want = int(p.result["c"]["N"]) + 1
            if want is not None and int(o.result["c"]["N"]) != want:
                bad.append("%r: counter %s, want %d (after %r)" % (o, o.result["c"]["N"], want, p))
    for key, final in finals.items():
        kops = by_key.get(key, [])
        if final is not None:
            xid = final.get("lastop", {}).get("S")
            x = ids.get(xid)
            if x is None or x.key != key or x.kind == "delete":
                bad.append("key %s: final item %r was written by no logged put/update" %
                           (key, final))
                continue
            if x.kind == "put" and final != x.item:
                bad.append("key %s: final item %r differs from what %r wrote" % (key, final, x))
            if x.kind == "update":
                if x.acked and final != x.result:
                    bad.append("key %s: final item %r differs from the acknowledged %r" %
                               (key, final, x.result))
                if int(final.get("c", {}).get("N", "0")) < 1:
                    bad.append("key %s: update %r left counter %r" % (key, x, final.get("c")))
            lost = [b for b in _ordered_after(x, kops) if b.acked]
            if lost:
                bad.append("key %s: final item is %r's but acknowledged %r came after it" %
                           (key, x, lost[:3]))
        else:
            candidates = [d for d in kops if d.kind == "delete"]
            ok = not any(o.acked and o.kind != "delete" for o in kops)
            for d in candidates:
                if ok:
                    break
                ok = not any(b.acked and b.kind != "delete" for b in _ordered_after(d, kops))
            if not ok:
                last = [o for o in kops if o.acked][-3:]
                bad.append("key %s: absent, but no delete explains it; acknowledged ops "
                           "include %r" % (key, last))
    return bad


# ---- the workload ----------------------------------------------------------------------------

UPDATE = "SET prevop = if_not_exists(lastop, :none), lastop = :id ADD c :one"
EXTRA_EPOCHS = 10


class Workload:
    def __init__(self, table, keys):
        self.table = table
        self.keys = keys
        self.ops = []
        self.lock = threading.Lock()
        self.unexpected = []
        self.acks_in_epoch = 0

    def key_attr(self, key):
        return {"pk": {"S": key}}

    def one(self, client, tid, n, epoch, rng):
        key = rng.choice(self.keys)
        roll = rng.random()
        oid = "e%d-t%d-%d" % (epoch, tid, n)
        kind = "put" if roll < 0.3 else "update" if roll < 0.8 else "delete"
        item = None
        if kind == "put":
            item = {"pk": {"S": key}, "lastop": {"S": oid}, "prevop": {"S": "put"},
                    "c": {"N": "0"}, "pad": {"S": "p" * rng.randrange(1, 2000)}}
        op = Op(oid, key, kind, epoch, time.monotonic(), item=item)
        with self.lock:
            self.ops.append(op)
        try:
            if kind == "put":
                r = client.put_item(TableName=self.table, Item=item, ReturnValues="ALL_OLD")
                old = r.get("Attributes")
                op.result = old
                op.pred = old["lastop"]["S"] if old else None
            elif kind == "update":
                r = client.update_item(TableName=self.table, Key=self.key_attr(key),
                                       UpdateExpression=UPDATE, ReturnValues="ALL_NEW",
                                       ExpressionAttributeValues={":none": {"S": "none"},
                                                                  ":id": {"S": oid},
                                                                  ":one": {"N": "1"}})
                op.result = r["Attributes"]
                prev = op.result["prevop"]["S"]
                op.pred = None if prev == "none" else prev
            else:
                r = client.delete_item(TableName=self.table, Key=self.key_attr(key),
                                       ReturnValues="ALL_OLD")
                old = r.get("Attributes")
                op.result = old
                op.pred = old["lastop"]["S"] if old else None
            op.t_ack = time.monotonic()
            with self.lock:
                self.acks_in_epoch += 1
            return True
        except ClientError as e:  # an error answer: not expected from these requests
            with self.lock:
                self.unexpected.append((op, e.response.get("Error")))
            return False
        except BotoCoreError:  # no answer: the server died
            return False

    def writer(self, url, tid, epoch, stop):
        client = make_client(url, read_timeout=HANG_S)
        # one stream per (epoch, writer), whatever order the threads start in
        rng = seeded_rng("test_kill9", "writer", epoch, tid)
        n = 0
        while not stop.is_set():
            n += 1
            if not self.one(client, tid, n, epoch, rng):
                return


def read_finals(client, table, keys):
    finals = {}
    for k in keys:
        r = client.get_item(TableName=table, Key={"pk": {"S": k}}, ConsistentRead=True)
        finals[k] = r.get("Item")
    return finals


def test_kill9_acknowledged_writes_survive(server_factory):
    srv = server_factory(args=["--sync"])
    table = "kill9"
    create_table(make_client(srv.url), table)
    keys = ["k%d" % i for i in range(8)]
    work = Workload(table, keys)
    epochs = scaled(5, 2)
    threads_n = 4
    rng = seeded_rng("test_kill9", "kill delays")
    epoch = 0
    while epoch < epochs or (all(o.acked for o in work.ops) and
                             epoch < epochs + EXTRA_EPOCHS):
        epoch += 1
        stop = threading.Event()
        work.acks_in_epoch = 0
        threads = [threading.Thread(target=work.writer, args=(srv.url, t, epoch, stop))
                   for t in range(threads_n)]
        for t in threads:
            t.start()
        # let some writes through, then kill at a random moment while they are in flight
        deadline = time.monotonic() + HANG_S
        while (work.acks_in_epoch < scaled(150, 40) and any(t.is_alive() for t in threads) and
               time.monotonic() < deadline):
            time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 0.5))
        assert srv.alive(), srv.logs()
        srv.kill()
        stop.set()
        for t in threads:
            t.join(HANG_S)
        assert not work.unexpected, work.unexpected[:5]
        assert work.acks_in_epoch >= scaled(150, 40), "too few writes acknowledged in epoch %d" \
            % epoch
        srv.start()  # same data directory, recovery
        finals = read_finals(make_client(srv.url), table, keys)
        bad = check_history(work.ops, finals)
        assert not bad, "after kill -9 #%d:\n%s" % (epoch, "\n".join(bad[:20]))
        # and the integrity check (POST /kura/check: files, WAL tails) finds nothing
        r = raw_request(srv, b"{}", method="POST", path="/kura/check", auth=False)
        assert r.status == 200 and r.json()["Problems"] == [], (epoch, r)
    # a clean shutdown and restart keeps the same state
    assert srv.stop() == 0, srv.logs()
    srv.start()
    again = read_finals(make_client(srv.url), table, keys)
    assert again == finals
    acked = sum(1 for o in work.ops if o.acked)
    unacked = [o for o in work.ops if not o.acked]
    assert acked >= epoch * scaled(150, 40)
    assert unacked, "no write was in flight at any of %d kills" % epoch

    # Self-check on the real history: doctored copies must be reported.
    # 1. an acknowledged put of a later server run, never reflected
    t_end = max(o.t_ack or o.t_send for o in work.ops) + 1
    fake = Op("fake-put", keys[0], "put", epoch + 1, t_end, t_end + 0.1,
              item={"pk": {"S": keys[0]}, "lastop": {"S": "fake-put"}}, result=None)
    assert check_history(work.ops + [fake], finals)
    # 2. a key rolled back to the state of an earlier acknowledged write
    for k in keys:
        writes = [o for o in work.ops if o.key == k and o.acked and o.kind != "delete"]
        later = [o for o in work.ops if o.key == k and o.acked and writes and
                 o.t_send > writes[0].t_ack]
        if writes and later:
            x = writes[0]
            old_state = x.item if x.kind == "put" else x.result
            assert check_history(work.ops, dict(finals, **{k: old_state})), k
            break
    else:
        pytest.fail("no key had two ordered acknowledged writes to doctor")
    # 3. an item that vanished although every delete of its key is ordered before the
    #    acknowledged write that produced it (where the run has such a key)
    for k in keys:
        if finals[k] is None:
            continue
        x = [o for o in work.ops if o.id == finals[k]["lastop"]["S"]][0]
        kops = [o for o in work.ops if o.key == k]
        if x.acked and all(x in _ordered_after(d, kops) for d in kops if d.kind == "delete"):
            assert check_history(work.ops, dict(finals, **{k: None})), k
            break


def test_checker_self_test():
    """The checker on small hand-made histories: consistent ones pass, every kind of planted
    loss is reported."""
    put_item = {"pk": {"S": "k"}, "lastop": {"S": "A"}, "prevop": {"S": "put"}, "c": {"N": "0"}}
    b_new = {"pk": {"S": "k"}, "lastop": {"S": "B"}, "prevop": {"S": "A"}, "c": {"N": "1"}}
    A = Op("A", "k", "put", 1, 0.0, 1.0, item=put_item, result=None, pred=None)
    B = Op("B", "k", "update", 1, 2.0, 3.0, result=b_new, pred="A")
    D = Op("D", "k", "delete", 1, 4.0, 5.0, result=b_new, pred="B")
    U = Op("U", "k", "update", 1, 6.0, None)  # no answer
    # consistent
    assert check_history([A, B], {"k": b_new}) == []
    assert check_history([A, B, D], {"k": None}) == []
    u_state = {"pk": {"S": "k"}, "lastop": {"S": "U"}, "prevop": {"S": "none"}, "c": {"N": "1"}}
    assert check_history([A, B, D, U], {"k": u_state}) == []
    assert check_history([A, B, D, U], {"k": None}) == []
    # the acknowledged update B lost: the state is A's
    assert check_history([A, B], {"k": put_item})
    # everything lost
    assert check_history([A, B], {"k": None})
    # the acknowledged delete lost
    assert check_history([A, B, D], {"k": b_new})
    # a state nobody wrote, or B's id with other content
    assert check_history([A, B], {"k": dict(b_new, lastop={"S": "Z"})})
    assert check_history([A, B], {"k": dict(b_new, c={"N": "5"})})
    # overlapping in time, but the predecessor chain orders them: C came after B
    C = Op("C", "k", "update", 1, 2.5, 3.5, pred="B",
           result=dict(b_new, lastop={"S": "C"}, prevop={"S": "B"}, c={"N": "2"}))
    assert check_history([A, B, C], {"k": C.result}) == []
    assert check_history([A, B, C], {"k": b_new})
    # a counter that skipped
    C_bad = Op("C", "k", "update", 1, 2.5, 3.5, pred="B",
               result=dict(b_new, lastop={"S": "C"}, prevop={"S": "B"}, c={"N": "3"}))
    assert check_history([A, B, C_bad], {"k": C_bad.result})
    # an unacknowledged write of an earlier server run cannot be last after a later ack
    E1 = Op("E1", "k", "update", 1, 0.0, None)
    P2 = Op("P2", "k", "put", 2, 10.0, 11.0, item=dict(put_item, lastop={"S": "P2"}))
    e1_state = {"pk": {"S": "k"}, "lastop": {"S": "E1"}, "prevop": {"S": "none"},
                "c": {"N": "1"}}
    assert check_history([E1, P2], {"k": e1_state})
    assert check_history([E1, P2], {"k": P2.item}) == []
