"""test_insights.py - This file contains the conformance tests of Contributor Insights over HTTP:
UpdateContributorInsights (ENABLING / DISABLING), DescribeContributorInsights (ENABLED /
DISABLED at once, DynamoDB's rule names, LastUpdateDateTime), ListContributorInsights (filter,
paging with NextToken), a GSI's setting, ResourceNotFoundException for unknown tables and
indexes (an LSI too), ContributorInsightsMode through raw JSON (Debian's botocore 1.29 predates
the member and drops it from responses), and the setting surviving a restart of kura-server.
"""

import re
import time

import pytest
from botocore.exceptions import ClientError

from conftest import call, make_client, unique_name


def create(ddb, name, sk=False, gsi=False):
    attrs = [{"AttributeName": "pk", "AttributeType": "S"}]
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}]
    kw = {}
    if sk:
        attrs.append({"AttributeName": "sk", "AttributeType": "S"})
        keys.append({"AttributeName": "sk", "KeyType": "RANGE"})
    if gsi:
        attrs.append({"AttributeName": "g", "AttributeType": "S"})
        kw["GlobalSecondaryIndexes"] = [{
            "IndexName": "byG", "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}]
        kw["LocalSecondaryIndexes"] = [{
            "IndexName": "byGLocal", "Projection": {"ProjectionType": "KEYS_ONLY"},
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "g", "KeyType": "RANGE"}]}]
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=attrs,
                     KeySchema=keys, **kw)


def error(fn, **kw):
    with pytest.raises(ClientError) as e:
        fn(**kw)
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def kinds(rules, table):
    """The rule kinds (PKC, SKC, PKT, SKT) of DynamoDB's rule names, each checked whole."""
    out = []
    for r in rules:
        m = re.fullmatch(r"DynamoDBContributorInsights-(PKC|SKC|PKT|SKT)-%s-(\d{13})"
                         % re.escape(table), r)
        assert m, r
        out.append(m.group(1))
    return out


def test_enable_describe_disable(ddb):
    name = unique_name("ci")
    create(ddb, name, sk=True)
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "DISABLED"
    assert "LastUpdateDateTime" not in d and "ContributorInsightsRuleList" not in d
    before = time.time()
    u = ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    assert u["TableName"] == name and u["ContributorInsightsStatus"] == "ENABLING"
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert kinds(d["ContributorInsightsRuleList"], name) == ["PKC", "SKC", "PKT", "SKT"]
    assert before - 1 <= d["LastUpdateDateTime"].timestamp() <= time.time() + 1
    u = ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="DISABLE")
    assert u["ContributorInsightsStatus"] == "DISABLING"
    d = ddb.describe_contributor_insights(TableName=name)
    assert d["ContributorInsightsStatus"] == "DISABLED"
    assert "ContributorInsightsRuleList" not in d


def test_mode_raw(server, ddb):
    name = unique_name("cimode")
    create(ddb, name)
    r = call(server, "UpdateContributorInsights",
             {"TableName": name, "ContributorInsightsAction": "ENABLE",
              "ContributorInsightsMode": "THROTTLED_KEYS"})
    assert r.status == 200, r
    assert r.json() == {"TableName": name, "ContributorInsightsStatus": "ENABLING",
                        "ContributorInsightsMode": "THROTTLED_KEYS"}
    j = call(server, "DescribeContributorInsights", {"TableName": name}).json()
    assert j["ContributorInsightsMode"] == "THROTTLED_KEYS"
    assert kinds(j["ContributorInsightsRuleList"], name) == ["PKT"]  # no sort key
    r = call(server, "UpdateContributorInsights",
             {"TableName": name, "ContributorInsightsAction": "ENABLE",
              "ContributorInsightsMode": "NOPE"})
    assert r.status == 400 and r.error_type == "ValidationException", r


def test_gsi_and_errors(ddb):
    name = unique_name("cigsi")
    create(ddb, name, sk=True, gsi=True)
    u = ddb.update_contributor_insights(TableName=name, IndexName="byG",
                                        ContributorInsightsAction="ENABLE")
    assert u["IndexName"] == "byG" and u["ContributorInsightsStatus"] == "ENABLING"
    d = ddb.describe_contributor_insights(TableName=name, IndexName="byG")
    assert d["IndexName"] == "byG" and d["ContributorInsightsStatus"] == "ENABLED"
    assert kinds(d["ContributorInsightsRuleList"], name) == ["PKC", "PKT"]
    assert ddb.describe_contributor_insights(TableName=name)["ContributorInsightsStatus"] == \
        "DISABLED"
    rnf = "ResourceNotFoundException"
    assert error(ddb.update_contributor_insights, TableName=name, IndexName="byGLocal",
                 ContributorInsightsAction="ENABLE") == \
        (rnf, "Requested resource not found: Index: byGLocal not found")
    assert error(ddb.describe_contributor_insights, TableName=name + "-gone") == \
        (rnf, "Requested resource not found: Table: %s-gone not found" % name)
    assert error(ddb.list_contributor_insights, TableName=name + "-gone")[0] == rnf
    code, msg = error(ddb.update_contributor_insights, TableName=name,
                      ContributorInsightsAction="PAUSE")
    assert code == "ValidationException" and "contributorInsightsAction" in msg


def test_list_and_paging(ddb):
    prefix = unique_name("cilist")
    names = [prefix + "-" + c for c in "abc"]
    for n in names:
        create(ddb, n)
        ddb.update_contributor_insights(TableName=n, ContributorInsightsAction="ENABLE")
    listed, token, pages = [], None, 0
    while True:
        kw = {"MaxResults": 1}
        if token:
            kw["NextToken"] = token
        r = ddb.list_contributor_insights(**kw)
        pages += 1
        listed += [s["TableName"] for s in r["ContributorInsightsSummaries"]
                   if s["TableName"].startswith(prefix)]
        assert all(s["ContributorInsightsStatus"] == "ENABLED"
                   for s in r["ContributorInsightsSummaries"])
        token = r.get("NextToken")
        if not token:
            break
    assert listed == names and pages >= 3
    ddb.update_contributor_insights(TableName=names[1], ContributorInsightsAction="DISABLE")
    r = ddb.list_contributor_insights(TableName=names[1])
    assert r["ContributorInsightsSummaries"] == [
        {"TableName": names[1], "ContributorInsightsStatus": "DISABLED"}]
    everything = ddb.list_contributor_insights(MaxResults=100)["ContributorInsightsSummaries"]
    assert names[1] not in [s["TableName"] for s in everything]
    code, msg = error(ddb.list_contributor_insights, NextToken="not a token")
    assert (code, msg) == ("ValidationException", "Invalid NextToken")


def test_durable_across_restart(server_factory):
    srv = server_factory()
    ddb = make_client(srv.url)
    name = unique_name("cidur")
    create(ddb, name, sk=True, gsi=True)
    ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE")
    ddb.update_contributor_insights(TableName=name, IndexName="byG",
                                    ContributorInsightsAction="ENABLE")
    before = [ddb.describe_contributor_insights(TableName=name),
              ddb.describe_contributor_insights(TableName=name, IndexName="byG")]
    srv.stop()
    srv.start()
    ddb = make_client(srv.url)
    after = [ddb.describe_contributor_insights(TableName=name),
             ddb.describe_contributor_insights(TableName=name, IndexName="byG")]
    for b, a in zip(before, after):
        b.pop("ResponseMetadata")
        a.pop("ResponseMetadata")
        assert a == b
    assert after[0]["ContributorInsightsStatus"] == "ENABLED"
    ddb.delete_table(TableName=name)
    assert error(ddb.describe_contributor_insights, TableName=name)[0] == \
        "ResourceNotFoundException"
