"""test_sigv4.py - This file contains the tests of kura-server's AWS Signature Version 4 check
(--auth ACCESS_KEY:SECRET): boto3 signing with the right key works for every kind of request;
the wrong secret, an unknown access key, a missing Authorization header, a request altered
after signing (body, a signed header), an expired date and malformed Authorization headers are
rejected with HTTP 400 and DynamoDB's error types and messages; headers that were not signed
may be added freely, and header values are compared after SigV4's whitespace trimming.
Presigned requests (the signature in the query string) are verified the same way, within their
X-Amz-Expires.

Requests are signed with botocore's own signer (botocore.auth.SigV4Auth), independent of the
server's implementation, and sent with http.client so they can be altered after signing.
"""

import datetime
import http.client
import json

import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from conftest import RawResponse, create_table, make_client, raw_request, unique_name

KEY, SECRET = "AKIDKURASIGV4TEST", "kura/sigv4+secret=="
BAD_SIG = ("The request signature we calculated does not match the signature you provided. "
           "Check your AWS Secret Access Key and signing method. Consult the service "
           "documentation for details.")


@pytest.fixture(scope="module")
def asrv(server_factory):
    return server_factory(args=["--auth", "%s:%s" % (KEY, SECRET)], in_memory=True)


def signed(srv, op, body, key=KEY, secret=SECRET, when=None, extra=None):
    """Returns (headers, body bytes) of a request signed by botocore."""
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": "DynamoDB_20120810." + op}
    headers.update(extra or {})
    req = AWSRequest(method="POST", url=srv.url + "/", data=data, headers=headers)
    sign_at(SigV4Auth(Credentials(key, secret), "dynamodb", "us-east-1"), req, when)
    return dict(req.headers.items()), data


def sign_at(signer, req, when):
    """signer.add_auth(req) with the clock at `when` (None: now)."""
    if when is not None:
        # botocore takes the time from datetime.datetime.utcnow() (newer versions: now(tz))
        # inside add_auth
        real = datetime.datetime

        class Fixed(real):
            @classmethod
            def utcnow(cls):
                return when

            @classmethod
            def now(cls, tz=None):
                return when.replace(tzinfo=tz) if tz else when

        import botocore.auth as ba
        saved = ba.datetime.datetime
        ba.datetime.datetime = Fixed
        try:
            signer.add_auth(req)
        finally:
            ba.datetime.datetime = saved
    else:
        signer.add_auth(req)


class PresignKeepBody(SigV4QueryAuth):
    """botocore's query (presigned URL) signer with the JSON body left as the body and signed
    by its hash: SigV4QueryAuth would move it into the query string, which DynamoDB does not
    read."""

    def _modify_request_before_signing(self, request):
        body = request.data
        request.data = b""
        super()._modify_request_before_signing(request)
        request.data = body


def presigned(srv, op, body, expires=300, when=None, key=KEY, secret=SECRET):
    """Returns (path with the query string, headers, body bytes) of a presigned request."""
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": "DynamoDB_20120810." + op}
    req = AWSRequest(method="POST", url=srv.url + "/", data=data, headers=headers)
    sign_at(PresignKeepBody(Credentials(key, secret), "dynamodb", "us-east-1", expires=expires),
            req, when)
    assert "Authorization" not in req.headers
    path = req.url[len(srv.url):]
    assert path.startswith("/?X-Amz-Algorithm="), path
    return path, dict(req.headers.items()), data


def send(srv, headers, data, path="/"):
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=30)
    try:
        conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
        if not any(k.lower() == "host" for k in headers):
            conn.putheader("Host", "%s:%d" % (srv.host, srv.port))
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        resp = conn.getresponse()
        return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()},
                           resp.read())
    finally:
        conn.close()


def assert_rejected(r, error_type, message=None):
    assert r.status == 400, r
    assert r.error_type == error_type, r
    if message is not None:
        assert r.message == message, r


def test_signed_boto3_client_works(asrv):
    ddb = make_client(asrv.url, KEY, SECRET)
    name = unique_name("auth")
    create_table(ddb, name, ("pk", "S"), ("sk", "N"))
    ddb.put_item(TableName=name, Item={"pk": {"S": "ü/ key+=&"}, "sk": {"N": "1"},
                                       "v": {"S": "x" * 70000}})
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "ü/ key+=&"}, "sk": {"N": "1"}})
    assert len(got["Item"]["v"]["S"]) == 70000
    r = ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                  ExpressionAttributeValues={":p": {"S": "ü/ key+=&"}})
    assert r["Count"] == 1
    assert name in ddb.list_tables()["TableNames"]
    ddb.delete_table(TableName=name)


def test_wrong_secret(asrv):
    ddb = make_client(asrv.url, KEY, SECRET + "x")
    with pytest.raises(ClientError) as ei:
        ddb.list_tables()
    err = ei.value.response["Error"]
    assert (err["Code"], err["Message"]) == ("InvalidSignatureException", BAD_SIG)
    assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_unknown_access_key(asrv):
    ddb = make_client(asrv.url, "AKIDSOMEONEELSE", SECRET)
    with pytest.raises(ClientError) as ei:
        ddb.list_tables()
    err = ei.value.response["Error"]
    assert (err["Code"], err["Message"]) == ("UnrecognizedClientException",
                                             "The security token included in the request is "
                                             "invalid.")


def test_missing_authorization(asrv):
    r = raw_request(asrv, {}, target="ListTables", auth=False)
    assert_rejected(r, "MissingAuthenticationTokenException",
                    "Request is missing Authentication Token")
    # a date alone is not an authorization
    r = raw_request(asrv, {}, target="ListTables", auth=False,
                    headers={"X-Amz-Date": "20250101T000000Z"})
    assert_rejected(r, "MissingAuthenticationTokenException")


def test_valid_signature_raw(asrv):
    headers, data = signed(asrv, "ListTables", {})
    r = send(asrv, headers, data)
    assert r.status == 200, r
    assert "TableNames" in r.json()
    # a header that was not signed may be added
    headers["X-Unsigned-Extra"] = "anything"
    assert send(asrv, headers, data).status == 200


def test_tampered_body(asrv):
    headers, data = signed(asrv, "ListTables", {"Limit": 5})
    r = send(asrv, headers, json.dumps({"Limit": 6}).encode())
    assert_rejected(r, "InvalidSignatureException", BAD_SIG)
    # same length, one byte different
    r = send(asrv, headers, data.replace(b"5", b"7"))
    assert_rejected(r, "InvalidSignatureException", BAD_SIG)
    # and the untouched request still passes
    assert send(asrv, headers, data).status == 200


def test_tampered_signed_header(asrv):
    headers, data = signed(asrv, "ListTables", {})
    target = [k for k in headers if k.lower() == "x-amz-target"][0]
    headers[target] = "DynamoDB_20120810.DescribeLimits"
    assert_rejected(send(asrv, headers, data), "InvalidSignatureException", BAD_SIG)
    headers, data = signed(asrv, "ListTables", {})
    auth = headers["Authorization"]
    sig = auth.rsplit("Signature=", 1)[1]
    flipped = ("0" if sig[0] != "0" else "1") + sig[1:]
    headers["Authorization"] = auth[:-len(sig)] + flipped
    assert_rejected(send(asrv, headers, data), "InvalidSignatureException", BAD_SIG)


def test_header_value_whitespace_is_trimmed(asrv):
    # SigV4 trims header values and collapses inner runs of spaces before signing
    headers, data = signed(asrv, "ListTables", {}, extra={"X-Kura-Spaces": "a b c"})
    headers["X-Kura-Spaces"] = "  a   b  c  "
    assert send(asrv, headers, data).status == 200


def test_expired_and_future_dates(asrv):
    old = datetime.datetime.utcnow() - datetime.timedelta(minutes=20)
    headers, data = signed(asrv, "ListTables", {}, when=old)
    r = send(asrv, headers, data)
    assert_rejected(r, "InvalidSignatureException")
    assert r.message.startswith("Signature expired: "), r
    assert "is now earlier than" in r.message, r
    future = datetime.datetime.utcnow() + datetime.timedelta(minutes=20)
    headers, data = signed(asrv, "ListTables", {}, when=future)
    r = send(asrv, headers, data)
    assert_rejected(r, "InvalidSignatureException")
    assert r.message.startswith("Signature not yet current: "), r
    # within 15 minutes is fine
    recent = datetime.datetime.utcnow() - datetime.timedelta(minutes=10)
    headers, data = signed(asrv, "ListTables", {}, when=recent)
    assert send(asrv, headers, data).status == 200


@pytest.mark.parametrize("auth", [
    "AWS4-HMAC-SHA256",
    "AWS4-HMAC-SHA256 garbage",
    "AWS4-HMAC-SHA256 Credential=%s/20250101/us-east-1/dynamodb/aws4_request" % KEY,
    "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=host, Signature=abc" % KEY,
    "AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
    "Basic dXNlcjpwYXNz",
    "",
    "AWS4-HMAC-SHA256 Credential=, SignedHeaders=, Signature=",
    "AWS4-HMAC-SHA256 Credential=" + "A" * 5000 + ", SignedHeaders=host, Signature=00",
])
def test_malformed_authorization(asrv, auth):
    headers, data = signed(asrv, "ListTables", {})
    headers["Authorization"] = auth
    r = send(asrv, headers, data)
    assert r.status == 400, (auth, r)
    assert r.error_type in ("IncompleteSignatureException", "InvalidSignatureException",
                            "MissingAuthenticationTokenException",
                            "UnrecognizedClientException"), (auth, r)
    assert r.message, r


def test_credential_scope_checked(asrv):
    # signed correctly but for another service or region: still a valid signature for that
    # scope, which DynamoDB refuses
    headers, data = signed(asrv, "ListTables", {})
    auth = headers["Authorization"]
    headers["Authorization"] = auth.replace("/dynamodb/", "/s3/")
    r = send(asrv, headers, data)
    assert r.status == 400 and r.error_type in ("IncompleteSignatureException",
                                                "InvalidSignatureException"), r


def test_auth_server_still_serves_after_rejections(asrv):
    ddb = make_client(asrv.url, KEY, SECRET)
    assert "TableNames" in ddb.list_tables()


def test_presigned_requests(asrv):
    """A presigned request (SigV4 query authentication) is verified like a signed one."""
    name = unique_name("pre")
    create_table(make_client(asrv.url, KEY, SECRET), name, ("pk", "S"))
    path, headers, data = presigned(asrv, "PutItem", {"TableName": name,
                                                      "Item": {"pk": {"S": "a/b c+"}}})
    r = send(asrv, headers, data, path)
    assert r.status == 200, r
    path, headers, data = presigned(asrv, "GetItem", {"TableName": name,
                                                      "Key": {"pk": {"S": "a/b c+"}}})
    r = send(asrv, headers, data, path)
    assert r.status == 200, r
    assert r.json()["Item"] == {"pk": {"S": "a/b c+"}}
    # the body, a signed header, the query string and the signature are all signed
    assert_rejected(send(asrv, headers, data.replace(b"a/b", b"a/x"), path),
                    "InvalidSignatureException", BAD_SIG)
    altered = dict(headers, **{"X-Amz-Target": "DynamoDB_20120810.DeleteItem"})
    assert_rejected(send(asrv, altered, data, path), "InvalidSignatureException", BAD_SIG)
    assert_rejected(send(asrv, headers, data, path.replace("X-Amz-Expires=300",
                                                           "X-Amz-Expires=900")),
                    "InvalidSignatureException", BAD_SIG)
    sig = path.rsplit("X-Amz-Signature=", 1)[1]
    flipped = path[:-len(sig)] + ("0" if sig[0] != "0" else "1") + sig[1:]
    assert_rejected(send(asrv, headers, data, flipped), "InvalidSignatureException", BAD_SIG)
    # another secret, another access key
    path, headers, data = presigned(asrv, "ListTables", {}, secret=SECRET + "x")
    assert_rejected(send(asrv, headers, data, path), "InvalidSignatureException", BAD_SIG)
    path, headers, data = presigned(asrv, "ListTables", {}, key="AKIDSOMEONEELSE")
    assert_rejected(send(asrv, headers, data, path), "UnrecognizedClientException",
                    "The security token included in the request is invalid.")


def test_presigned_expiry(asrv):
    """Valid for X-Amz-Expires seconds after its date; not before 15 minutes ahead of it."""
    old = datetime.datetime.utcnow() - datetime.timedelta(minutes=10)
    path, headers, data = presigned(asrv, "ListTables", {}, expires=60, when=old)
    r = send(asrv, headers, data, path)
    assert_rejected(r, "InvalidSignatureException")
    assert r.message.startswith("Signature expired: "), r
    assert r.message.endswith(" - 60 sec.)"), r
    path, headers, data = presigned(asrv, "ListTables", {}, expires=3600, when=old)
    assert send(asrv, headers, data, path).status == 200
    future = datetime.datetime.utcnow() + datetime.timedelta(minutes=20)
    path, headers, data = presigned(asrv, "ListTables", {}, when=future)
    r = send(asrv, headers, data, path)
    assert_rejected(r, "InvalidSignatureException")
    assert r.message.startswith("Signature not yet current: "), r


def test_presigned_incomplete(asrv):
    path, headers, data = presigned(asrv, "ListTables", {})
    no_sig = path.rsplit("&X-Amz-Signature=", 1)[0]
    assert_rejected(send(asrv, headers, data, no_sig), "IncompleteSignatureException",
                    "AWS query-string parameters must include 'X-Amz-Signature'. Re-examine the "
                    "query-string parameters.")
    assert_rejected(send(asrv, headers, data, "/?X-Amz-Algorithm=AWS4-HMAC-SHA256"),
                    "IncompleteSignatureException",
                    "AWS query-string parameters must include 'X-Amz-Credential'. AWS "
                    "query-string parameters must include 'X-Amz-Signature'. AWS query-string "
                    "parameters must include 'X-Amz-SignedHeaders'. AWS query-string parameters "
                    "must include 'X-Amz-Date'. Re-examine the query-string parameters.")
    # both a presigned query string and an Authorization header
    signed_headers, signed_data = signed(asrv, "ListTables", {})
    assert_rejected(send(asrv, signed_headers, signed_data, path), "InvalidSignatureException",
                    "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' "
                    "as HTTP header.")
