"""test_index_ddl.py - This file contains the conformance tests of CreateTable with
LocalSecondaryIndexes and GlobalSecondaryIndexes over HTTP: every validation error with its
exact message, and the tables and index descriptions valid requests create.

Expected messages are DynamoDB's as dynalite records them (validations/createTable.js); where
dynalite has none, DynamoDB Local 1.25.1's (INCLUDE without NonKeyAttributes, a GSI without
ProvisionedThroughput on a PROVISIONED table, ...), moto's record of DynamoDB ("Some
AttributeDefinitions are not used") or, for the multi-attribute GSI keys of November 2025 and
the NonKeyAttributes limit, kura's own wording (engine/table_check_index.c says which is which).
DynamoDB Local words most of these differently, so KURA_ENDPOINT runs against it fail here.
"""

import copy

import pytest
from botocore.exceptions import ClientError

from conftest import call, unique_name

INVALID = "One or more parameter values were invalid: "


def A(*pairs):
    return [{"AttributeName": n, "AttributeType": t} for n, t in pairs]


def K(*pairs):
    return [{"AttributeName": n, "KeyType": {"H": "HASH", "R": "RANGE"}.get(t, t)}
            for n, t in pairs]


# DynamoDB's model bounds one projection's NonKeyAttributes to 20 names: more are spread over
# several indexes
NKA = ["a%d" % i for i in range(101)]
KSE = "com.amazonaws.dynamodb.v20120810.KeySchemaElement"


def lsi(name="lsi1", keys=(("pk", "H"), ("x", "R")), proj=None):
    return {"IndexName": name, "KeySchema": K(*keys),
            "Projection": proj if proj is not None else {"ProjectionType": "ALL"}}


def gsi(name="gsi1", keys=(("g", "H"), ("x", "R")), proj=None, pt=None):
    d = {"IndexName": name, "KeySchema": K(*keys),
         "Projection": proj if proj is not None else {"ProjectionType": "KEYS_ONLY"}}
    if pt:
        d["ProvisionedThroughput"] = {"ReadCapacityUnits": pt[0], "WriteCapacityUnits": pt[1]}
    return d


def base(**kw):
    """Table (pk, sk), definitions pk S, sk S, x S, g N, PAY_PER_REQUEST, one LSI and one GSI
    that use x and g; keyword arguments replace members (None removes one)."""
    b = {"AttributeDefinitions": A(("pk", "S"), ("sk", "S"), ("x", "S"), ("g", "N")),
         "KeySchema": K(("pk", "H"), ("sk", "R")), "BillingMode": "PAY_PER_REQUEST",
         "LocalSecondaryIndexes": [lsi()], "GlobalSecondaryIndexes": [gsi()]}
    for k, v in kw.items():
        if v is None:
            b.pop(k, None)
        else:
            b[k] = v
    return b


PROV = {"BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}
MANY = A(*[(n, "S") for n in ("pk", "sk", "g", "x", "h2", "h3", "h4", "h5", "r2", "r3", "r4",
                              "r5")])

CASES = [
    # -- lists and the table's key
    ("lsi_list_empty", base(LocalSecondaryIndexes=[]),
     INVALID + "List of LocalSecondaryIndexes is empty"),
    ("gsi_list_empty", base(GlobalSecondaryIndexes=[]),
     INVALID + "List of GlobalSecondaryIndexes is empty"),
    ("lsi_on_hash_table", base(AttributeDefinitions=A(("pk", "S"), ("x", "S"), ("g", "N")),
                               KeySchema=K(("pk", "H"))),
     INVALID + "Table KeySchema does not have a range key, which is required when specifying a "
               "LocalSecondaryIndex"),
    # -- LSI key schemas
    ("lsi_key_undefined", base(LocalSecondaryIndexes=[lsi(keys=(("pk", "H"), ("y", "R")))]),
     INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [pk, y], "
               "AttributeDefinitions: [pk, sk, x, g]"),
    ("lsi_same_names", base(LocalSecondaryIndexes=[lsi(keys=(("pk", "H"), ("pk", "R")))]),
     "Both the Hash Key and the Range Key element in the KeySchema have the same name"),
    ("lsi_range_first", base(LocalSecondaryIndexes=[lsi(keys=(("x", "R"), ("pk", "H")))]),
     "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ("lsi_two_hash", base(LocalSecondaryIndexes=[lsi(keys=(("pk", "H"), ("x", "H")))]),
     "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"),
    ("lsi_no_range", base(LocalSecondaryIndexes=[lsi(keys=(("pk", "H"),))]),
     INVALID + "Index KeySchema does not have a range key for index: lsi1"),
    ("lsi_other_hash", base(LocalSecondaryIndexes=[lsi(keys=(("x", "H"), ("sk", "R")))]),
     INVALID + "Index KeySchema does not have the same leading hash key as table KeySchema for "
               "index: lsi1. index hash key: x, table hash key: pk"),
    ("lsi_three_keys",
     base(LocalSecondaryIndexes=[lsi(keys=(("pk", "H"), ("x", "R"), ("sk", "R")))]),
     # structures print as Java prints DynamoDB's model classes (hash: docs/data-model.md)
     "1 validation error detected: Value '[" + KSE + "@e0d16944, " + KSE + "@470fda20, " + KSE +
     "@3ce25c80]' at 'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: "
     "Member must have length less than or equal to 2"),
    ("key_type_enum", base(GlobalSecondaryIndexes=[gsi(keys=(("g", "PARTITION"),))]),
     "1 validation error detected: Value 'PARTITION' at "
     "'globalSecondaryIndexes.1.member.keySchema.1.member.keyType' failed to satisfy "
     "constraint: Member must satisfy enum value set: [HASH, RANGE]"),
    # -- GSI key schemas, multi-attribute keys
    ("gsi_key_undefined", base(GlobalSecondaryIndexes=[gsi(keys=(("g", "H"), ("y", "R")))]),
     INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [g, y], "
               "AttributeDefinitions: [pk, sk, x, g]"),
    ("gsi_same_names", base(GlobalSecondaryIndexes=[gsi(keys=(("g", "H"), ("g", "R")))]),
     "Both the Hash Key and the Range Key element in the KeySchema have the same name"),
    ("gsi_range_first", base(GlobalSecondaryIndexes=[gsi(keys=(("x", "R"), ("g", "H")))]),
     "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ("gsi_hash_after_range", base(AttributeDefinitions=MANY, LocalSecondaryIndexes=None,
                                  GlobalSecondaryIndexes=[gsi(keys=(("g", "H"), ("x", "R"),
                                                                    ("h2", "H")))]),
     "Invalid KeySchema: A HASH KeySchemaElement cannot follow a RANGE KeySchemaElement"),
    ("gsi_five_hash", base(AttributeDefinitions=MANY, LocalSecondaryIndexes=None,
                           GlobalSecondaryIndexes=[gsi(keys=[(n, "H") for n in
                                                             ("g", "h2", "h3", "h4", "h5")])]),
     INVALID + "Index KeySchema has more than 4 HASH key attributes for index: gsi1"),
    ("gsi_five_range", base(AttributeDefinitions=MANY, LocalSecondaryIndexes=None,
                            GlobalSecondaryIndexes=[gsi(keys=[("g", "H")] + [
                                (n, "R") for n in ("x", "r2", "r3", "r4", "r5")])]),
     INVALID + "Index KeySchema has more than 4 RANGE key attributes for index: gsi1"),
    ("gsi_attribute_twice", base(AttributeDefinitions=MANY, LocalSecondaryIndexes=None,
                                 GlobalSecondaryIndexes=[gsi(keys=(("g", "H"), ("h2", "H"),
                                                                   ("g", "R")))]),
     INVALID + "Duplicate key attribute g in KeySchema of index: gsi1"),
    # -- names
    ("name_short", base(GlobalSecondaryIndexes=[gsi(name="ab")]),
     "1 validation error detected: Value 'ab' at 'globalSecondaryIndexes.1.member.indexName' "
     "failed to satisfy constraint: Member must have length greater than or equal to 3"),
    ("name_pattern", base(LocalSecondaryIndexes=[lsi(name="by date")]),
     "1 validation error detected: Value 'by date' at "
     "'localSecondaryIndexes.1.member.indexName' failed to satisfy constraint: Member must "
     "satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("name_long", base(GlobalSecondaryIndexes=[gsi(name="n" * 256)]),
     "1 validation error detected: Value '%s' at 'globalSecondaryIndexes.1.member.indexName' "
     "failed to satisfy constraint: Member must have length less than or equal to 255"
     % ("n" * 256)),
    ("dup_lsi", base(LocalSecondaryIndexes=[lsi(), lsi()]),
     INVALID + "Duplicate index name: lsi1"),
    ("dup_gsi", base(GlobalSecondaryIndexes=[gsi(), gsi()]),
     INVALID + "Duplicate index name: gsi1"),
    ("dup_lsi_gsi", base(GlobalSecondaryIndexes=[gsi(name="lsi1")]),
     INVALID + "Duplicate index name: lsi1"),
    # -- counts: after the entries
    ("six_lsi", base(LocalSecondaryIndexes=[lsi("lsi%d" % i) for i in range(6)]),
     INVALID + "Number of LocalSecondaryIndexes exceeds per-table limit of 5"),
    ("six_lsi_last_bad", base(LocalSecondaryIndexes=[lsi("lsi%d" % i) for i in range(5)] +
                              [lsi("bad", keys=(("x", "H"), ("sk", "R")))]),
     INVALID + "Index KeySchema does not have the same leading hash key as table KeySchema for "
               "index: bad. index hash key: x, table hash key: pk"),
    ("21_gsi", base(GlobalSecondaryIndexes=[gsi("gsi%02d" % i) for i in range(21)]),
     INVALID + "GlobalSecondaryIndex count exceeds the per-table limit of 20"),
    # -- projections
    ("projection_missing", base(LocalSecondaryIndexes=[{"IndexName": "lsi1",
                                                        "KeySchema": K(("pk", "H"), ("x", "R"))}]),
     "1 validation error detected: Value null at 'localSecondaryIndexes.1.member.projection' "
     "failed to satisfy constraint: Member must not be null"),
    ("projection_type_missing", base(GlobalSecondaryIndexes=[gsi(proj={})]),
     INVALID + "Unknown ProjectionType: null"),
    ("keys_only_with_nka", base(GlobalSecondaryIndexes=[gsi(proj={
        "ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]})]),
     INVALID + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified"),
    ("all_with_nka", base(LocalSecondaryIndexes=[lsi(proj={
        "ProjectionType": "ALL", "NonKeyAttributes": ["a"]})]),
     INVALID + "ProjectionType is ALL, but NonKeyAttributes is specified"),
    ("include_without_nka", base(GlobalSecondaryIndexes=[gsi(proj={"ProjectionType": "INCLUDE"})]),
     "If Projection type INCLUDE is specified, some non-key attributes to include in the "
     "projection must be specified as well"),
    ("include_empty_nka", base(GlobalSecondaryIndexes=[gsi(proj={
        "ProjectionType": "INCLUDE", "NonKeyAttributes": []})]),
     "1 validation error detected: Value '[]' at "
     "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed to satisfy "
     "constraint: Member must have length greater than or equal to 1"),
    ("nka_twice", base(GlobalSecondaryIndexes=[gsi(proj={
        "ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "a"]})]),
     "Cannot have two attributes with the same name"),
    ("nka_empty_name", base(GlobalSecondaryIndexes=[gsi(proj={
        "ProjectionType": "INCLUDE", "NonKeyAttributes": [""]})]),
     "1 validation error detected: Value '' at "
     "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes.1.member' failed to satisfy "
     "constraint: Member must have length greater than or equal to 1"),
    ("nka_21", base(GlobalSecondaryIndexes=[gsi(proj={
        "ProjectionType": "INCLUDE", "NonKeyAttributes": ["a%d" % i for i in range(21)]})]),
     "1 validation error detected: Value '[" + ", ".join("a%d" % i for i in range(21)) + "]' at "
     "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed to satisfy "
     "constraint: Member must have length less than or equal to 20"),
    ("nka_101", base(GlobalSecondaryIndexes=[
        gsi("gsi%d" % j, proj={"ProjectionType": "INCLUDE", "NonKeyAttributes": NKA[j * 20:j * 20 + 20]})
        for j in range(6)]),
     INVALID + "Number of NonKeyAttributes summed across all indexes (101) exceeds the per-table "
               "limit of 100"),
    ("nka_60_60_same_names", base(
        LocalSecondaryIndexes=[lsi("lsi%d" % j, proj={"ProjectionType": "INCLUDE",
                                                      "NonKeyAttributes": NKA[j * 20:j * 20 + 20]})
                               for j in range(3)],
        GlobalSecondaryIndexes=[gsi("gsi%d" % j, proj={"ProjectionType": "INCLUDE",
                                                       "NonKeyAttributes": NKA[j * 20:j * 20 + 20]})
                                for j in range(3)]),
     INVALID + "Number of NonKeyAttributes summed across all indexes (120) exceeds the per-table "
               "limit of 100"),
    # -- throughput
    ("ppr_gsi_throughput", base(GlobalSecondaryIndexes=[gsi(pt=(1, 1))]),
     INVALID + "ProvisionedThroughput should not be specified for index: gsi1 when BillingMode "
               "is PAY_PER_REQUEST"),
    ("provisioned_gsi_without", base(**PROV),
     "No provisioned throughput specified for the global secondary index"),
    ("provisioned_gsi_zero", base(GlobalSecondaryIndexes=[gsi(pt=(0, 1))], **PROV),
     "1 validation error detected: Value '0' at "
     "'globalSecondaryIndexes.1.member.provisionedThroughput.readCapacityUnits' failed to "
     "satisfy constraint: Member must have value greater than or equal to 1"),
    # -- attribute definitions every key must use
    ("unused_definition", base(AttributeDefinitions=A(("pk", "S"), ("sk", "S"), ("x", "S"),
                                                      ("g", "N"), ("z", "S"))),
     INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: [pk, sk, x, g, z], "
               "keys used: [pk, sk, x, g]"),
    ("unused_without_indexes", base(LocalSecondaryIndexes=None, GlobalSecondaryIndexes=None),
     INVALID + "Number of attributes in KeySchema does not exactly match number of attributes "
               "defined in AttributeDefinitions"),
]


@pytest.mark.parametrize("label,req,message", CASES, ids=[c[0] for c in CASES])
def test_validation(server, label, req, message):
    name = unique_name("ddl")
    body = copy.deepcopy(req)
    body["TableName"] = name
    r = call(server, "CreateTable", body)
    assert r.status == 400, (label, r)
    assert r.error_type == "ValidationException", (label, r)
    assert r.message == message, label
    assert call(server, "DescribeTable", {"TableName": name}).status == 400


VALID = [
    ("lsi_and_gsi", base()),
    ("lsi_on_table_sort_key", base(AttributeDefinitions=A(("pk", "S"), ("sk", "S"), ("g", "N")),
                                   LocalSecondaryIndexes=[lsi(keys=(("pk", "H"), ("sk", "R")))],
                                   GlobalSecondaryIndexes=[gsi(keys=(("g", "H"),))])),
    ("five_lsi_twenty_gsi", base(LocalSecondaryIndexes=[lsi("lsi%d" % i) for i in range(5)],
                                 GlobalSecondaryIndexes=[gsi("gsi%02d" % i) for i in range(20)])),
    ("multi_attribute_gsi", base(AttributeDefinitions=MANY, LocalSecondaryIndexes=None,
                                 GlobalSecondaryIndexes=[
                                     gsi(keys=[(n, "H") for n in ("g", "h2", "h3", "h4")] +
                                         [(n, "R") for n in ("x", "r2", "r3", "r4")]),
                                     gsi("gsi2", keys=(("h5", "H"), ("r5", "R")))])),
    ("nka_100_and_key_attributes", base(GlobalSecondaryIndexes=[
        gsi("gsi%d" % j, proj={"ProjectionType": "INCLUDE",
                               "NonKeyAttributes": (["pk", "x"] + NKA[:98])[j * 20:j * 20 + 20]})
        for j in range(5)])),
    ("provisioned", base(GlobalSecondaryIndexes=[gsi(pt=(3, 4))], **PROV)),
]


@pytest.mark.parametrize("label,req", VALID, ids=[c[0] for c in VALID])
def test_valid_request_creates_the_indexes(server, label, req):
    name = unique_name("ddl")
    body = copy.deepcopy(req)
    body["TableName"] = name
    r = call(server, "CreateTable", body)
    assert r.status == 200, (label, r)
    d = call(server, "DescribeTable", {"TableName": name})
    assert d.status == 200, (label, d)
    table = d.json()["Table"]
    for kind in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes"):
        want = sorted(ix["IndexName"] for ix in req.get(kind, []))
        got = sorted(ix["IndexName"] for ix in table.get(kind, []))
        assert got == want, (label, kind, got)
    assert call(server, "DeleteTable", {"TableName": name}).status == 200


def test_sdk_table_with_gsis(ddb):
    """The users table of the scenario vectors (users_table_gsis.json) through boto3, as a test
    suite's setup would create it; then the same table without its indexes works."""
    name = unique_name("ddl")
    attrs = A(("id", "S"), ("provider_id", "S"), ("email", "S"), ("status", "S"), ("rank", "N"))
    gsis = [
        {"IndexName": "ProviderIdIndex", "KeySchema": K(("provider_id", "H")),
         "Projection": {"ProjectionType": "ALL"}},
        {"IndexName": "EmailIndex", "KeySchema": K(("email", "H")),
         "Projection": {"ProjectionType": "KEYS_ONLY"}},
        {"IndexName": "StatusRankIndex", "KeySchema": K(("status", "H"), ("rank", "R")),
         "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["username", "exp"]}},
    ]
    resp = ddb.create_table(TableName=name, AttributeDefinitions=attrs, KeySchema=K(("id", "H")),
                            BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=gsis)
    desc = resp["TableDescription"]
    assert [g["IndexName"] for g in desc["GlobalSecondaryIndexes"]] == [
        "ProviderIdIndex", "EmailIndex", "StatusRankIndex"]
    assert all(g["IndexStatus"] == "ACTIVE" for g in desc["GlobalSecondaryIndexes"])
    ddb.delete_table(TableName=name)
