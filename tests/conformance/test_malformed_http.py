"""test_malformed_http.py - This file contains the hostile-HTTP tests of kura-server over raw
sockets: bad Content-Length values (larger than the body then closing or idling, negative,
non-numeric, conflicting, absurdly large), garbage bodies and request lines, huge and numerous
headers, slow clients sending a byte a second (which must not delay other clients), many idle
connections, pipelined requests, chunked bodies (also over 16 MB), Expect: 100-continue, other
methods and paths, connections dropped half-way.

After every case the server must still answer a normal request, and at the end of the module
it must shut down cleanly on SIGTERM (exit 0) -- so a crash or a wedged thread anywhere fails
the suite. Where a case has a defined answer (a JSON error for a bad body, 4xx for a bad
request) the answer is checked too.

No verdict depends on how fast the machine is. "Does not block" is shown by order: the normal
requests are answered while the slow or idle clients' requests are still incomplete (their
next bytes are sent only afterwards), so a server they blocked would never answer them. Every
wait has the same deadline, HANG_S, which only a hang reaches.
"""

import json
import socket
import threading
import time

import pytest

from conftest import (HANG_S, assert_server_answers, call, http_head, scaled, seeded_rng,
                      socket_exchange, unique_name)




@pytest.fixture(scope="module")
def hsrv(server_factory):
    # --threads 2: few workers, so a client pinning one would show
    return server_factory(args=["--threads", "2"], in_memory=True)


def list_tables_request(extra=(), body=b"{}"):
    return http_head("ListTables", len(body), extra) + body


def status_of(responses):
    return [r.status for r in responses]


# ---- Content-Length --------------------------------------------------------------------------

def test_content_length_larger_than_body_then_close(hsrv):
    head = http_head("ListTables", 100)
    responses, raw, closed = socket_exchange(hsrv, [head, b"{}"], timeout=HANG_S,
                                             half_close=True)
    # nothing to answer: the request never completed; a 400 is acceptable too
    assert all(400 <= s < 500 for s in status_of(responses)), raw[:300]
    assert_server_answers(hsrv)


def read_until(s, marker):
    """Reads from socket s until `marker` arrived or the peer closed; returns the bytes."""
    data = b""
    while marker not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_content_length_larger_than_body_idle_does_not_block(hsrv):
    s = socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S)
    try:
        s.sendall(http_head("ListTables", 1000) + b"{}")
        for _ in range(5):  # others are served while that request waits for its body
            assert_server_answers(hsrv)
        # it was waiting, not dropped: completed now (JSON allows the trailing blanks), it is
        # answered
        s.sendall(b" " * 998)
        data = read_until(s, b'"TableNames"')
        assert b"200 OK" in data and b'"TableNames"' in data, data[:300]
    finally:
        s.close()
    assert_server_answers(hsrv)


@pytest.mark.parametrize("length", ["-5", "abc", "1e3", "0x10", "", " ", "99999999999999999999",
                                    "18446744073709551616", "2, 2", "+2"])
def test_bad_content_length_values(hsrv, length):
    raw_req = http_head("ListTables", length) + b"{}"
    responses, raw, closed = socket_exchange(hsrv, [raw_req], timeout=HANG_S)
    if responses:
        # +2 may be read as 2; anything else must be refused
        assert responses[0].status in (200, 400, 411, 413), (length, raw[:300])
    else:
        assert closed, (length, raw[:300])
    assert_server_answers(hsrv)


def test_conflicting_content_lengths(hsrv):
    # RFC 9112 6.3: differing Content-Length values are an unrecoverable error (request
    # smuggling otherwise); DynamoDB Local (Jetty) answers 400 "Multiple Content-Lengths"
    raw_req = http_head("ListTables", 2, ["Content-Length: 40"]) + b"{}"
    responses, raw, closed = socket_exchange(hsrv, [raw_req], timeout=HANG_S)
    assert not responses or responses[0].status in (400, 413), raw[:300]
    assert_server_answers(hsrv)


def test_huge_declared_length_refused_early(hsrv):
    # 1 TB declared, 10 bytes sent: refused by the declared length, not by waiting for it. The
    # connection stays open and nothing more is sent, so a server that waited for the body
    # would never answer (its idle timeout closes without a response).
    raw_req = http_head("PutItem", 1 << 40) + b"{\"a\":\"b\"}"
    responses, raw, closed = socket_exchange(hsrv, [raw_req], timeout=HANG_S)
    assert responses, raw[:300]
    assert responses[0].status in (400, 413), responses[0]
    assert_server_answers(hsrv)


# ---- garbage ---------------------------------------------------------------------------------

def test_garbage_bodies(hsrv):
    rng = seeded_rng("test_garbage_bodies")
    bodies = [b"\x00" * 100, bytes(rng.randrange(256) for _ in range(5000)), b"{" * 100000,
              b"[" * 100000 + b"]" * 100000, b'{"TableName": "' + b"\xc3\x28" * 50 + b'"}',
              b'{"TableName":"x"}' * 100, b"null", b"{}" + b"\x00garbage"]
    for body in bodies:
        r = socket_exchange(hsrv, [http_head("DescribeTable", len(body)) + body],
                            timeout=HANG_S)[0]
        assert r and r[0].status == 400, body[:40]
        assert r[0].json()["__type"].rsplit("#", 1)[1] in ("SerializationException",
                                                           "ValidationException"), r[0]
    assert_server_answers(hsrv)


@pytest.mark.parametrize("line", [
    b"GARBAGE\r\n\r\n",
    b"\r\n\r\n\r\n",
    b"GET\r\n\r\n",
    b"POST / HTTP/9.9\r\nContent-Length: 2\r\n\r\n{}",
    b"POST / HTTP/1.1 extra\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
    b"POST " + b"/" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(200)),  # a TLS ClientHello
    b"POST / HTTP/1.1\r\nHost: x\r\nNoColonHeader\r\nContent-Length: 2\r\n\r\n{}",
    b"POST / HTTP/1.1\r\nHost: x\r\n : empty name\r\nContent-Length: 2\r\n\r\n{}",
    b"POST / HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}",
    b"\x00\x01\x02\x03" * 1000,
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
])
def test_garbage_request_lines(hsrv, line):
    responses, raw, closed = socket_exchange(hsrv, [line], timeout=HANG_S, half_close=True)
    for r in responses:
        assert r.status < 500 or r.status == 505, (line[:60], r)  # 505: version unsupported
    assert_server_answers(hsrv)


def test_other_methods_and_paths(hsrv):
    # DynamoDB Local serves a POST on any path; other methods are a 4xx
    r = socket_exchange(hsrv, [list_tables_request().replace(b"POST / ", b"POST /other ")],
                        timeout=HANG_S)[0]
    assert r and r[0].status == 200, r
    for method, path in (("GET", "/"), ("PUT", "/"), ("DELETE", "/"), ("HEAD", "/"),
                         ("OPTIONS", "/"), ("GET", "/favicon.ico")):
        head = ("%s %s HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
                "Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}"
                % (method, path)).encode()
        responses, raw, _ = socket_exchange(hsrv, [head], timeout=HANG_S)
        if method == "HEAD":  # no body follows the head of a HEAD response
            assert raw.startswith(b"HTTP/1.1 4"), raw[:200]
            continue
        assert responses, (method, path, raw[:200])
        assert 400 <= responses[0].status < 500, (method, path, responses[0])
    assert_server_answers(hsrv)


def test_dropped_mid_request(hsrv):
    full = list_tables_request()
    for cut in (1, 10, len(full) // 2, len(full) - 1):
        s = socket.create_connection((hsrv.host, hsrv.port))
        s.sendall(full[:cut])
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # RST
    assert_server_answers(hsrv)


# ---- headers ---------------------------------------------------------------------------------

def test_huge_header(hsrv):
    head = http_head("ListTables", 2, ["X-Big: " + "a" * 100 * 1024])
    responses, raw, closed = socket_exchange(hsrv, [head + b"{}"], timeout=HANG_S)
    # refused (431/413/400) or served; never a crash or a hang
    assert responses or closed, raw[:200]
    for r in responses:
        assert r.status in (200, 400, 413, 431), r
    assert_server_answers(hsrv)


def test_many_headers(hsrv):
    head = http_head("ListTables", 2, ["X-H%d: v" % i for i in range(10000)])
    responses, raw, closed = socket_exchange(hsrv, [head + b"{}"], timeout=HANG_S)
    assert responses or closed, raw[:200]
    for r in responses:
        assert r.status in (200, 400, 413, 431), r
    assert_server_answers(hsrv)


def test_expect_100_continue(hsrv):
    body = b"{}"
    s = socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S)
    try:
        s.sendall(http_head("ListTables", len(body), ["Expect: 100-continue"]))
        first = s.recv(4096)
        if first.startswith(b"HTTP/1.1 100"):
            s.sendall(body)
            data = first[first.index(b"\r\n\r\n") + 4:]
        else:
            data = first
            s.sendall(body)
        deadline = time.monotonic() + HANG_S
        while b'"TableNames"' not in data and time.monotonic() < deadline:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        assert b"200 OK" in data and b'"TableNames"' in data, data[:300]
    finally:
        s.close()


# ---- connection behaviour ---------------------------------------------------------------------

def test_pipelined_requests(hsrv):
    missing = unique_name("nope")
    describe = json.dumps({"TableName": missing}).encode()
    reqs = [list_tables_request(),
            http_head("DescribeTable", len(describe)) + describe,
            list_tables_request(body=b'{"Limit": 1}'),
            http_head("Nope", 2) + b"{}"]
    responses, raw, closed = socket_exchange(hsrv, [b"".join(reqs)], timeout=HANG_S, want=4)
    assert status_of(responses) == [200, 400, 200, 400], raw[:1000]
    assert responses[1].json()["message"] == (
        "Requested resource not found: Table: %s not found" % missing)
    assert "UnknownOperationException" in responses[3].json()["__type"]
    ids = {r.headers["x-amzn-requestid"] for r in responses}
    assert len(ids) == 4


def test_keep_alive_many_requests_on_one_connection(hsrv):
    n = scaled(200, 20)
    reqs = [list_tables_request() for _ in range(n)]
    responses, raw, _ = socket_exchange(hsrv, reqs, timeout=HANG_S, want=n, delay=0)
    assert len(responses) == n and all(r.status == 200 for r in responses)


def test_chunked_body(hsrv):
    name = unique_name("chunk")
    body = json.dumps({"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                       "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                       "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}).encode()
    chunks = [body[i:i + 7] for i in range(0, len(body), 7)]
    encoded = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    head = http_head("CreateTable", None, ["Transfer-Encoding: chunked"])
    responses, raw, _ = socket_exchange(hsrv, [head, encoded], timeout=HANG_S)
    assert responses and responses[0].status == 200, raw[:500]
    assert responses[0].json()["TableDescription"]["TableName"] == name
    assert call(hsrv, "DeleteTable", {"TableName": name}).status == 200
    # malformed chunk sizes
    for bad in (b"zz\r\nabc\r\n0\r\n\r\n", b"ffffffffffffffffff\r\nabc", b"-1\r\n{}\r\n0\r\n\r\n"):
        responses, raw, closed = socket_exchange(hsrv, [head, bad], timeout=HANG_S,
                                                 half_close=True)
        for r in responses:
            assert r.status < 500, (bad, r)
    assert_server_answers(hsrv)


def test_chunked_body_over_16_mb(hsrv):
    head = http_head("PutItem", None, ["Transfer-Encoding: chunked"])
    piece = b"a" * (1 << 20)
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
    prefix = b'{"TableName":"x","Item":{"pk":{"S":"'
    first = b"%x\r\n%s\r\n" % (len(prefix), prefix)
    chunks = [head, first] + [chunk] * 18 + [b"0\r\n\r\n"]
    responses, raw, closed = socket_exchange(hsrv, chunks, timeout=120)
    assert responses or closed, raw[:300]
    if responses:
        assert responses[0].status in (400, 413), responses[0]
    assert_server_answers(hsrv)


def test_slow_clients_do_not_block_others(hsrv):
    """Several clients each send a request a byte a second (more of them than server threads);
    after every byte, a normal request is answered while all the slow requests are incomplete
    (their next byte waits for that answer, so a server whose threads they held would never
    give it). Then the slow ones finish their requests and get their answers."""
    slow_n = 6
    rounds = scaled(6, 3)
    full = list_tables_request()
    socks = [socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S)
             for _ in range(slow_n)]
    try:
        for b in range(rounds):
            for s in socks:
                s.sendall(full[b:b + 1])
            assert_server_answers(hsrv)
            time.sleep(1.0)  # the pace of a slow client: not part of the verdict
        for s in socks:
            s.sendall(full[rounds:])
        for i, s in enumerate(socks):
            data = read_until(s, b'"TableNames"')
            assert b"200 OK" in data and b'"TableNames"' in data, (i, data[:300])
    finally:
        for s in socks:
            s.close()


def test_many_idle_connections(hsrv):
    n = scaled(300, 50)
    socks = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S))
        # half of them sent part of a request, half nothing at all; all of them stay open
        # while others are answered
        for s in socks[::2]:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        for _ in range(5):
            assert_server_answers(hsrv)
    finally:
        for s in socks:
            s.close()
    assert_server_answers(hsrv)


def test_concurrent_connections_churn(hsrv):
    errors = []

    def worker(i):
        rng = seeded_rng("test_concurrent_connections_churn", i)
        for _ in range(scaled(40, 10)):
            try:
                kind = rng.randrange(3)
                if kind == 0:
                    r = call(hsrv, "ListTables", {})
                    if r.status != 200:
                        errors.append(r)
                elif kind == 1:
                    s = socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S)
                    s.sendall(rng.randbytes(rng.randrange(1, 300)))
                    s.close()
                else:
                    s = socket.create_connection((hsrv.host, hsrv.port), timeout=HANG_S)
                    s.sendall(list_tables_request()[:rng.randrange(1, 100)])
                    s.close()
            except OSError as e:
                errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]
    assert_server_answers(hsrv)


def test_connection_close_and_http10(hsrv):
    # "Connection: close": one response, then the server closes
    req = http_head("ListTables", 2, ["Connection: close"]) + b"{}"
    responses, raw, closed = socket_exchange(hsrv, [req], timeout=HANG_S, want=2)
    assert status_of(responses) == [200] and closed, raw[:300]
    # HTTP/1.0 without keep-alive (and without Host): answered, then closed
    req = (b"POST / HTTP/1.0\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n"
           b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}")
    responses, raw, closed = socket_exchange(hsrv, [req], timeout=HANG_S, want=2)
    assert [r.status for r in responses] == [200] and closed, raw[:300]
    assert b'"TableNames"' in responses[0].body
