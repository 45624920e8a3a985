"""test_awscli.py - This file contains the AWS CLI smoke test: the `aws dynamodb` commands a
user types first (create-table, describe-table, list-tables, put-item, batch-write-item,
get-item, update-item, query, scan, delete-item, delete-table), pointed at kura-server with
--endpoint-url and dummy credentials, each output checked as JSON (ARNs in the region the CLI
is configured for, or given --region). An error must come back as
the CLI's error exit with DynamoDB's error type in its message. Then the account and tag
commands (describe-endpoints, describe-limits, tag-resource, list-tags-of-resource,
untag-resource) and a table named by its ARN (--table-name arn:aws:dynamodb:...). (Each CLI
start costs about 2 s, so the command lists are kept short.)
"""

import json
import os
import shutil
import subprocess

import pytest

from conftest import unique_name


def aws_binary():
    for path in ("/usr/bin/aws", shutil.which("aws")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.fail("the AWS CLI (Debian awscli) is not installed")


@pytest.fixture(scope="module")
def aws(server, tmp_path_factory):
    home = str(tmp_path_factory.mktemp("awshome"))
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDKURACLI", AWS_SECRET_ACCESS_KEY="cli-secret",
               AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null",
               AWS_SHARED_CREDENTIALS_FILE="/dev/null", AWS_PAGER="", HOME=home,
               AWS_MAX_ATTEMPTS="1", AWS_RETRY_MODE="standard")
    binary = aws_binary()

    def run(*args, check=True):
        cmd = [binary, "dynamodb", "--endpoint-url", server.url, "--no-cli-pager",
               "--output", "json"] + list(args)
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=120)
        out = proc.stdout.decode("utf-8", "replace")
        err = proc.stderr.decode("utf-8", "replace")
        if not check:
            return proc.returncode, out, err
        assert proc.returncode == 0, "%s\nexit %d\nstdout: %s\nstderr: %s" % (
            " ".join(cmd), proc.returncode, out, err)
        return json.loads(out) if out.strip() else {}

    return run


def test_cli_smoke(aws):
    name = unique_name("cli")
    r = aws("create-table", "--table-name", name,
            "--attribute-definitions", "AttributeName=pk,AttributeType=S",
            "AttributeName=sk,AttributeType=N",
            "--key-schema", "AttributeName=pk,KeyType=HASH", "AttributeName=sk,KeyType=RANGE",
            "--billing-mode", "PAY_PER_REQUEST")
    assert r["TableDescription"]["TableName"] == name
    assert r["TableDescription"]["KeySchema"][0] == {"AttributeName": "pk", "KeyType": "HASH"}
    assert r["TableDescription"]["TableArn"] == \
        "arn:aws:dynamodb:us-east-1:000000000000:table/" + name  # AWS_DEFAULT_REGION's
    r = aws("describe-table", "--table-name", name, "--region", "eu-central-1")
    assert r["Table"]["TableStatus"] == "ACTIVE"
    assert r["Table"]["TableArn"] == "arn:aws:dynamodb:eu-central-1:000000000000:table/" + name
    assert name in aws("list-tables")["TableNames"]

    items = [{"pk": {"S": "user#1"}, "sk": {"N": str(i)}, "name": {"S": "n%d" % i},
              "tags": {"SS": ["a", "b"]}, "blob": {"B": "AP8="}} for i in range(5)]
    assert aws("put-item", "--table-name", name, "--item", json.dumps(items[0])) == {}
    r = aws("batch-write-item", "--request-items",
            json.dumps({name: [{"PutRequest": {"Item": it}} for it in items[1:]]}))
    assert r == {"UnprocessedItems": {}}
    r = aws("get-item", "--table-name", name,
            "--key", json.dumps({"pk": {"S": "user#1"}, "sk": {"N": "3"}}))
    assert r["Item"]["name"] == {"S": "n3"} and r["Item"]["blob"] == {"B": "AP8="}
    assert sorted(r["Item"]["tags"]["SS"]) == ["a", "b"]

    r = aws("update-item", "--table-name", name,
            "--key", json.dumps({"pk": {"S": "user#1"}, "sk": {"N": "3"}}),
            "--update-expression", "SET #n = :v ADD visits :one",
            "--expression-attribute-names", json.dumps({"#n": "name"}),
            "--expression-attribute-values", json.dumps({":v": {"S": "renamed"},
                                                         ":one": {"N": "1"}}),
            "--return-values", "ALL_NEW")
    assert r["Attributes"]["name"] == {"S": "renamed"} and r["Attributes"]["visits"] == {"N": "1"}

    r = aws("query", "--table-name", name,
            "--key-condition-expression", "pk = :p AND sk >= :lo",
            "--expression-attribute-values", json.dumps({":p": {"S": "user#1"},
                                                         ":lo": {"N": "2"}}))
    assert [i["sk"]["N"] for i in r["Items"]] == ["2", "3", "4"]
    assert r["Count"] == 3 and r["ScannedCount"] == 3
    # the CLI paginates on its own: --page-size 2 follows LastEvaluatedKey to the end
    r = aws("scan", "--table-name", name, "--page-size", "2")
    assert r["Count"] == 5 and sorted(i["sk"]["N"] for i in r["Items"]) == list("01234")

    code, out, err = aws("put-item", "--table-name", name, "--item",
                         json.dumps({"pk": {"S": "user#1"}, "sk": {"N": "1"}}),
                         "--condition-expression", "attribute_not_exists(pk)", check=False)
    assert code != 0 and "ConditionalCheckFailedException" in err, (code, out, err)

    r = aws("delete-item", "--table-name", name,
            "--key", json.dumps({"pk": {"S": "user#1"}, "sk": {"N": "0"}}),
            "--return-values", "ALL_OLD")
    assert r["Attributes"]["name"] == {"S": "n0"}
    r = aws("delete-table", "--table-name", name)
    assert r["TableDescription"]["TableName"] == name
    assert name not in aws("list-tables")["TableNames"]


def test_cli_account_and_tags(aws, server):
    r = aws("describe-endpoints")
    assert r == {"Endpoints": [{"Address": "%s:%d" % (server.host, server.port),
                                "CachePeriodInMinutes": 1440}]}
    r = aws("describe-limits")
    assert r == {"AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
                 "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000}
    name = unique_name("clitag")
    arn = aws("create-table", "--table-name", name,
              "--attribute-definitions", "AttributeName=pk,AttributeType=S",
              "--key-schema", "AttributeName=pk,KeyType=HASH",
              "--billing-mode", "PAY_PER_REQUEST")["TableDescription"]["TableArn"]
    assert aws("tag-resource", "--resource-arn", arn,
               "--tags", "Key=team,Value=storage", "Key=env,Value=test") == {}
    r = aws("list-tags-of-resource", "--resource-arn", arn)
    assert sorted((t["Key"], t["Value"]) for t in r["Tags"]) == [("env", "test"),
                                                                 ("team", "storage")]
    assert aws("untag-resource", "--resource-arn", arn, "--tag-keys", "team") == {}
    assert aws("list-tags-of-resource", "--resource-arn", arn)["Tags"] == [
        {"Key": "env", "Value": "test"}]
    # the ARN of another region names nothing here
    code, out, err = aws("list-tags-of-resource", "--resource-arn",
                         arn.replace(":us-east-1:", ":eu-west-1:"), check=False)
    assert code != 0 and "ResourceNotFoundException" in err, (code, out, err)
    aws("delete-table", "--table-name", name)


def test_cli_table_arn(aws):
    name = unique_name("cliarn")
    aws("create-table", "--table-name", name,
        "--attribute-definitions", "AttributeName=pk,AttributeType=S",
        "--key-schema", "AttributeName=pk,KeyType=HASH", "--billing-mode", "PAY_PER_REQUEST")
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/" + name
    r = aws("put-item", "--table-name", arn, "--item", json.dumps({"pk": {"S": "k"},
                                                                  "v": {"N": "1"}}),
            "--return-consumed-capacity", "TOTAL")
    assert r["ConsumedCapacity"]["TableName"] == arn  # named as the request named it
    r = aws("get-item", "--table-name", arn, "--key", json.dumps({"pk": {"S": "k"}}))
    assert r["Item"] == {"pk": {"S": "k"}, "v": {"N": "1"}}
    r = aws("describe-table", "--table-name", arn)
    assert r["Table"]["TableName"] == name and r["Table"]["TableArn"] == arn
    r = aws("batch-get-item", "--request-items",
            json.dumps({arn: {"Keys": [{"pk": {"S": "k"}}]}}))
    assert r["Responses"] == {arn: [{"pk": {"S": "k"}, "v": {"N": "1"}}]}
    # another region's ARN: a missing table
    code, out, err = aws("get-item", "--table-name", arn.replace(":us-east-1:", ":eu-west-1:"),
                         "--key", json.dumps({"pk": {"S": "k"}}), check=False)
    assert code != 0 and "ResourceNotFoundException" in err, (code, out, err)
    aws("delete-table", "--table-name", arn)


def test_cli_partiql(aws):
    name = unique_name("clisql")
    aws("create-table", "--table-name", name,
        "--attribute-definitions", "AttributeName=pk,AttributeType=S",
        "AttributeName=sk,AttributeType=N",
        "--key-schema", "AttributeName=pk,KeyType=HASH", "AttributeName=sk,KeyType=RANGE",
        "--billing-mode", "PAY_PER_REQUEST")
    aws("execute-statement", "--statement",
        "INSERT INTO \"%s\" VALUE {'pk': 'a', 'sk': 1, 'v': 'one'}" % name)
    aws("execute-statement", "--statement", "INSERT INTO \"%s\" VALUE {'pk': ?, 'sk': ?}" % name,
        "--parameters", json.dumps([{"S": "a"}, {"N": "2"}]))
    # the same key again: DuplicateItemException
    code, out, err = aws("execute-statement", "--statement",
                         "INSERT INTO \"%s\" VALUE {'pk': 'a', 'sk': 1}" % name, check=False)
    assert code != 0 and "DuplicateItemException" in err, (code, out, err)
    r = aws("execute-statement", "--statement",
            "SELECT * FROM \"%s\" WHERE pk = 'a' ORDER BY sk DESC" % name)
    assert [i["sk"]["N"] for i in r["Items"]] == ["2", "1"]
    r = aws("execute-statement", "--statement",
            "UPDATE \"%s\" SET v = 'uno' WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *" % name)
    assert r["Items"] == [{"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "uno"}}]
    r = aws("batch-execute-statement", "--statements", json.dumps([
        {"Statement": "SELECT v FROM \"%s\" WHERE pk = 'a' AND sk = 1" % name},
        {"Statement": "SELECT v FROM \"%s\" WHERE pk = 'b' AND sk = 1" % name}]))
    assert r["Responses"][0]["Item"] == {"v": {"S": "uno"}}
    assert "Item" not in r["Responses"][1]
    aws("execute-transaction", "--transact-statements", json.dumps([
        {"Statement": "DELETE FROM \"%s\" WHERE pk = 'a' AND sk = 1" % name},
        {"Statement": "UPDATE \"%s\" SET v = 'two' WHERE pk = 'a' AND sk = 2" % name}]))
    r = aws("execute-statement", "--statement", "SELECT * FROM \"%s\"" % name)
    assert r["Items"] == [{"pk": {"S": "a"}, "sk": {"N": "2"}, "v": {"S": "two"}}]
    aws("delete-table", "--table-name", name)
