"""test_service_ops.py - This file contains the conformance tests of the operations about the
service rather than a table (api/req_account.c): DescribeEndpoints (the address the request came
to: its Host header, else the server's listening address) and DescribeLimits (DynamoDB's quotas
of a new account, DynamoDB Local 1.25.1's answer byte for byte), through boto3, raw HTTP and the
AWS CLI; and UnknownOperationException for the operations kura does not have
(docs/data-model.md's table)."""
import json

import pytest

from conftest import call, socket_exchange
from test_awscli import aws  # noqa: F401 (the AWS CLI fixture)

LIMITS = {"AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
          "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000}
LIMITS_BODY = (b'{"AccountMaxReadCapacityUnits":80000,"AccountMaxWriteCapacityUnits":80000,'
               b'"TableMaxReadCapacityUnits":40000,"TableMaxWriteCapacityUnits":40000}')


def endpoints(address):
    return {"Endpoints": [{"Address": address, "CachePeriodInMinutes": 1440}]}


def test_describe_limits_boto3(ddb):
    r = ddb.describe_limits()
    r.pop("ResponseMetadata")
    assert r == LIMITS


def test_describe_limits_raw(server):
    r = call(server, "DescribeLimits", {})
    assert (r.status, r.body) == (200, LIMITS_BODY)
    r = call(server, "DescribeLimits", {"Unknown": [1]})  # dropped, as DynamoDB drops it
    assert (r.status, r.body) == (200, LIMITS_BODY)


def test_describe_endpoints_boto3(ddb, server):
    r = ddb.describe_endpoints()
    r.pop("ResponseMetadata")
    # botocore sends Host: host:port of endpoint_url
    assert r == endpoints("%s:%d" % (server.host, server.port))


def test_describe_endpoints_host_header(server):
    r = call(server, "DescribeEndpoints", {},
             headers={"Host": "dynamodb.eu-west-1.amazonaws.com"})
    assert r.status == 200
    assert r.json() == endpoints("dynamodb.eu-west-1.amazonaws.com")


def test_describe_endpoints_without_host(server):
    """HTTP/1.0 without a Host header: the listening address."""
    body = b"{}"
    req = (b"POST / HTTP/1.0\r\nContent-Type: application/x-amz-json-1.0\r\n"
           b"X-Amz-Target: DynamoDB_20120810.DescribeEndpoints\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    responses, raw, _ = socket_exchange(server, [req])
    assert len(responses) == 1, raw
    assert responses[0].status == 200, raw
    assert json.loads(responses[0].body) == endpoints("%s:%d" % (server.host, server.port))


@pytest.mark.parametrize("op", ["CreateBackup", "ListBackups", "DescribeContinuousBackups",
                                "ExportTableToPointInTime", "ImportTable", "ListGlobalTables",
                                "RestoreTableFromBackup",
                                "DescribeKinesisStreamingDestination"])
def test_unimplemented_operations(server, op):
    r = call(server, op, {})
    assert r.status == 400
    assert r.error_type == "UnknownOperationException"


def test_awscli(aws, server):  # noqa: F811
    assert aws("describe-limits") == LIMITS
    assert aws("describe-endpoints") == endpoints("%s:%d" % (server.host, server.port))
