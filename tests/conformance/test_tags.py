"""test_tags.py - This file contains the conformance tests of tags over HTTP: TagResource,
UntagResource and ListTagsOfResource on the ARN DescribeTable returns, CreateTable's Tags, a
key replacing its value, DynamoDB's errors (malformed ARN, unknown table, the model's length
constraints, the aws: prefix, more than 50 tags), paging with botocore's paginator, tags
surviving a restart of kura-server and going with DeleteTable, and the AWS CLI's
`aws dynamodb tag-resource` / `list-tags-of-resource` / `untag-resource`.
"""

import json
import os
import shutil
import subprocess

import pytest
from botocore.exceptions import ClientError

from conftest import make_client, unique_name


def create(ddb, name, **kw):
    r = ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], **kw)
    return r["TableDescription"]["TableArn"]


def tags_of(ddb, arn):
    return {t["Key"]: t["Value"] for t in ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]}


def error(fn, **kw):
    with pytest.raises(ClientError) as e:
        fn(**kw)
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def test_tag_untag_list(ddb):
    arn = create(ddb, unique_name("tags"), Tags=[{"Key": "env", "Value": "prod"}])
    assert ddb.describe_table(TableName=arn.split("/")[-1])["Table"]["TableArn"] == arn
    assert tags_of(ddb, arn) == {"env": "prod"}
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "db"},
                                            {"Key": "env", "Value": "dev"}])
    assert tags_of(ddb, arn) == {"env": "dev", "team": "db"}
    ddb.untag_resource(ResourceArn=arn, TagKeys=["env", "missing"])
    assert tags_of(ddb, arn) == {"team": "db"}
    ddb.untag_resource(ResourceArn=arn, TagKeys=["team"])
    r = ddb.list_tags_of_resource(ResourceArn=arn)
    assert r["Tags"] == [] and "NextToken" not in r


def test_errors(ddb):
    arn = create(ddb, unique_name("tagerr"))
    code, msg = error(ddb.tag_resource, ResourceArn="not-an-arn", Tags=[{"Key": "a", "Value": "b"}])
    assert (code, msg) == ("ValidationException",
                           "Invalid TableArn: Invalid ResourceArn provided as input not-an-arn")
    gone = arn + "-gone"
    code, msg = error(ddb.list_tags_of_resource, ResourceArn=gone)
    assert (code, msg) == ("ResourceNotFoundException",
                           "Requested resource not found: ResourceArn: %s not found" % gone)
    code, msg = error(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "k" * 129, "Value": ""}])
    assert code == "ValidationException"
    assert msg == ("1 validation error detected: Value '%s' at 'tags.1.member.key' failed to "
                   "satisfy constraint: Member must have length less than or equal to 128"
                   % ("k" * 129))
    code, msg = error(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "k", "Value": "v" * 257}])
    assert code == "ValidationException" and "'tags.1.member.value'" in msg
    code, msg = error(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "aws:cost", "Value": ""}])
    assert code == "ValidationException" and "aws:" in msg
    code, msg = error(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "a<b", "Value": ""}])
    assert code == "ValidationException" and "regular expression pattern" in msg
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k%02d" % i, "Value": ""} for i in range(50)])
    code, msg = error(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "one-more", "Value": ""}])
    assert code == "ValidationException" and "50" in msg
    assert len(tags_of(ddb, arn)) == 50
    pages = list(ddb.get_paginator("list_tags_of_resource").paginate(ResourceArn=arn))
    assert sum(len(p["Tags"]) for p in pages) == 50


def test_durable_and_deleted(server_factory):
    srv = server_factory()
    ddb = make_client(srv.url)
    name = unique_name("tagdur")
    arn = create(ddb, name)
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "a", "Value": "1"}])
    srv.stop()
    srv.start()
    ddb = make_client(srv.url)
    assert tags_of(ddb, arn) == {"a": "1"}
    ddb.delete_table(TableName=name)
    code, _ = error(ddb.list_tags_of_resource, ResourceArn=arn)
    assert code == "ResourceNotFoundException"
    assert create(ddb, name) == arn
    assert tags_of(ddb, arn) == {}


def aws_binary():
    for path in ("/usr/bin/aws", shutil.which("aws")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail("the AWS CLI (Debian awscli) is not installed")


def test_awscli(ddb, server, tmp_path):
    arn = create(ddb, unique_name("tagcli"))
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDKURACLI", AWS_SECRET_ACCESS_KEY="cli-secret",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null",
               AWS_SHARED_CREDENTIALS_FILE="/dev/null", AWS_PAGER="", HOME=str(tmp_path),
               AWS_MAX_ATTEMPTS="1")

    def aws(*args):
        cmd = [aws_binary(), "dynamodb", "--endpoint-url", server.url, "--output", "json"]
        proc = subprocess.run(cmd + list(args), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
        out = proc.stdout.decode()
        return json.loads(out) if out.strip() else {}

    aws("tag-resource", "--resource-arn", arn, "--tags", "Key=owner,Value=cli")
    assert aws("list-tags-of-resource", "--resource-arn", arn)["Tags"] == [
        {"Key": "owner", "Value": "cli"}]
    aws("untag-resource", "--resource-arn", arn, "--tag-keys", "owner")
    assert aws("list-tags-of-resource", "--resource-arn", arn)["Tags"] == []
