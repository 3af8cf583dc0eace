"""CreateTable: key schemas and descriptions of new tables, billing, streams, table classes,
deletion protection and the validation steps with their error texts. With test_tables_manage.py
this covers the control plane."""

import re
import time
import uuid

import pytest

from kumo_testlib import (
    RESOURCE_IN_USE,
    assert_error,
    assert_validation,
    table_arn,
    unique_name,
)
from table_helpers import (
    INVALID,
    assert_table_absent,
    attr,
    create_body,
    hash_ks,
)

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
LABEL_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$")


@pytest.fixture
def raw_tables(api):
    """Deletes, after the test, every table a raw CreateTable in the test may have made."""
    names = []
    yield names
    for n in names:
        api("UpdateTable", {"TableName": n, "DeletionProtectionEnabled": False})
        api("DeleteTable", {"TableName": n})


def create_raw(api, raw_tables, body):
    raw_tables.append(body.get("TableName"))
    return api("CreateTable", body)


# --------------------------------------------------------------------------- CreateTable


@pytest.mark.parametrize("key_type", ["S", "N", "B"])
def test_create_hash_only_each_key_type(ddb, make_table, key_type):
    name = make_table(hash_key=("id", key_type))
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert desc["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": key_type}]


@pytest.mark.parametrize("hash_type,range_type", [("S", "N"), ("N", "B"), ("B", "S")])
def test_create_hash_and_range(ddb, make_table, hash_type, range_type):
    name = make_table(hash_key=("h", hash_type), range_key=("r", range_type))
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["KeySchema"] == [{"AttributeName": "h", "KeyType": "HASH"},
                                 {"AttributeName": "r", "KeyType": "RANGE"}]
    assert sorted(desc["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == [
        {"AttributeName": "h", "AttributeType": hash_type},
        {"AttributeName": "r", "AttributeType": range_type}]


def test_create_response_describes_the_table(api, raw_tables):
    name = unique_name()
    resp = create_raw(api, raw_tables, create_body(name))
    assert resp.status == 200, resp
    desc = resp.json["TableDescription"]
    assert desc["TableName"] == name
    assert desc["TableStatus"] in ("CREATING", "ACTIVE")
    assert desc["TableArn"] == table_arn(name)
    assert desc["KeySchema"] == hash_ks()


def test_create_pay_per_request_description(api, raw_tables):
    name = unique_name()
    before = time.time()
    assert create_raw(api, raw_tables, create_body(name)).status == 200
    after = time.time()
    desc = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert desc["TableName"] == name
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["KeySchema"] == hash_ks()
    assert desc["AttributeDefinitions"] == [attr("pk")]
    assert isinstance(desc["CreationDateTime"], (int, float))
    assert before - 2 <= desc["CreationDateTime"] <= after + 2
    assert desc["ProvisionedThroughput"] == {"NumberOfDecreasesToday": 0,
                                             "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["TableSizeBytes"] == 0
    assert desc["ItemCount"] == 0
    assert desc["TableArn"] == f"arn:aws:dynamodb:us-east-1:000000000000:table/{name}"
    assert UUID_RE.match(desc["TableId"]), desc["TableId"]
    assert desc["DeletionProtectionEnabled"] is False
    assert "StreamSpecification" not in desc
    assert "LatestStreamArn" not in desc
    assert "TableClassSummary" not in desc
    assert "LocalSecondaryIndexes" not in desc
    assert "GlobalSecondaryIndexes" not in desc


def test_create_provisioned_description(ddb, make_table):
    name = make_table(ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
                      BillingMode="PROVISIONED")
    desc = ddb.describe_table(TableName=name)["Table"]
    pt = desc["ProvisionedThroughput"]
    assert pt["ReadCapacityUnits"] == 5
    assert pt["WriteCapacityUnits"] == 7
    assert pt["NumberOfDecreasesToday"] == 0
    if "BillingModeSummary" in desc:
        assert desc["BillingModeSummary"]["BillingMode"] == "PROVISIONED"


def test_create_provisioned_without_billing_mode(ddb, make_table):
    name = make_table(ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 3})
    pt = ddb.describe_table(TableName=name)["Table"]["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (2, 3)


def test_table_ids_are_unique(ddb, make_table):
    a = ddb.describe_table(TableName=make_table())["Table"]["TableId"]
    b = ddb.describe_table(TableName=make_table())["Table"]["TableId"]
    assert a != b


def test_create_with_table_class_and_deletion_protection(api, make_table):
    name = make_table(TableClass="STANDARD_INFREQUENT_ACCESS", DeletionProtectionEnabled=True)
    desc = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert desc["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert desc["DeletionProtectionEnabled"] is True


def test_create_with_stream(api, raw_tables):
    name = unique_name()
    body = create_body(name, StreamSpecification={"StreamEnabled": True,
                                                  "StreamViewType": "NEW_AND_OLD_IMAGES"})
    assert create_raw(api, raw_tables, body).status == 200
    desc = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert desc["StreamSpecification"] == {"StreamEnabled": True,
                                           "StreamViewType": "NEW_AND_OLD_IMAGES"}
    label = desc["LatestStreamLabel"]
    assert LABEL_RE.match(label), label
    assert desc["LatestStreamArn"] == f"{table_arn(name)}/stream/{label}"
    created = time.gmtime(desc["CreationDateTime"])
    assert label[:10] == time.strftime("%Y-%m-%d", created)


# ---- validated first: coral model constraints (names, enums, lengths, ranges)


def test_missing_key_schema(api):
    resp = api("CreateTable", create_body(KeySchema=None))
    assert_validation(resp, "1 validation error detected: Value null at 'keySchema' failed to "
                            "satisfy constraint: Member must not be null")


def test_missing_attribute_definitions(api):
    resp = api("CreateTable", create_body(AttributeDefinitions=None))
    assert_validation(resp, "1 validation error detected: Value null at 'attributeDefinitions' "
                            "failed to satisfy constraint: Member must not be null")


def test_missing_table_name(api):
    resp = api("CreateTable", create_body(TableName=None))
    assert_validation(resp, "The parameter 'TableName' is required but was not present in the "
                            "request")


@pytest.mark.parametrize("name,constraint", [
    ("ab", "Member must have length greater than or equal to 3"),
    ("a" * 256, "Member must have length less than or equal to 255"),
    ("bad name", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("tab/le", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("tablé", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
])
def test_bad_table_name(api, name, constraint):
    resp = api("CreateTable", create_body(name))
    assert_validation(resp, f"1 validation error detected: Value '{name}' at 'tableName' failed "
                            f"to satisfy constraint: {constraint}")


def test_bad_table_name_reports_every_violation(api):
    resp = api("CreateTable", create_body("a!"))
    assert_validation(resp, message_prefix="2 validation errors detected: ")
    parts = resp.message[len("2 validation errors detected: "):].split("; ")
    assert sorted(parts) == sorted([
        "Value 'a!' at 'tableName' failed to satisfy constraint: Member must satisfy regular "
        "expression pattern: [a-zA-Z0-9_.-]+",
        "Value 'a!' at 'tableName' failed to satisfy constraint: Member must have length "
        "greater than or equal to 3"])


def test_valid_name_characters(ddb, make_table):
    name = "A-b_c.9-" + uuid.uuid4().hex[:8]
    assert make_table(name=name) == name
    assert ddb.describe_table(TableName=name)["Table"]["TableName"] == name


def test_bad_key_type_enum(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "SORT"}],
                       AttributeDefinitions=[attr("pk"), attr("sk")])
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value 'SORT' at 'keySchema.2.member.keyType' "
                      "failed to satisfy constraint: Member must satisfy enum value set: "
                      "[HASH, RANGE]")


def test_bad_attribute_type_enum(api):
    body = create_body(AttributeDefinitions=[attr("pk", "SS")])
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value 'SS' at "
                      "'attributeDefinitions.1.member.attributeType' failed to satisfy "
                      "constraint: Member must satisfy enum value set: [B, N, S]")


def test_three_key_elements(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"},
                                  {"AttributeName": "extra", "KeyType": "RANGE"}],
                       AttributeDefinitions=[attr("pk"), attr("sk"), attr("extra")])
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value '[KeySchemaElement(attributeName=pk, "
                      "keyType=HASH), KeySchemaElement(attributeName=sk, keyType=RANGE), "
                      "KeySchemaElement(attributeName=extra, keyType=RANGE)]' at 'keySchema' "
                      "failed to satisfy constraint: Member must have length less than or "
                      "equal to 2")


def test_empty_key_schema(api):
    body = create_body(KeySchema=[])
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value '[]' at 'keySchema' failed to satisfy "
                      "constraint: Member must have length greater than or equal to 1")


def test_bad_billing_mode_enum(api):
    assert_validation(api("CreateTable", create_body(BillingMode="FREE")),
                      "1 validation error detected: Value 'FREE' at 'billingMode' failed to "
                      "satisfy constraint: Member must satisfy enum value set: "
                      "[PROVISIONED, PAY_PER_REQUEST]")


def test_zero_read_capacity(api):
    body = create_body(BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 5})
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value '0' at "
                      "'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: "
                      "Member must have value greater than or equal to 1")


def test_zero_read_and_write_capacity(api):
    body = create_body(BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 0})
    resp = api("CreateTable", body)
    assert_validation(resp, message_prefix="2 validation errors detected: ")
    parts = resp.message[len("2 validation errors detected: "):].split("; ")
    assert sorted(parts) == sorted([
        "Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1",
        "Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1"])


def test_missing_capacity_member(api):
    body = create_body(BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 5})
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value null at "
                      "'provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: "
                      "Member must not be null")


# ---- validated second: billing mode against provisioned throughput


def test_pay_per_request_with_throughput(api):
    body = create_body(ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    assert_validation(api("CreateTable", body),
                      INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                                "specified when BillingMode is PAY_PER_REQUEST")


@pytest.mark.parametrize("billing", ["PROVISIONED", None])
def test_provisioned_without_throughput(api, billing):
    body = create_body(BillingMode=billing)
    assert_validation(api("CreateTable", body),
                      INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be "
                                "specified when BillingMode is PROVISIONED")


def test_capacity_out_of_bounds(api):
    body = create_body(BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 1000000000001,
                                              "WriteCapacityUnits": 5})
    assert_validation(api("CreateTable", body),
                      "Given value 1000000000001 for ReadCapacityUnits is out of bounds")


# ---- validated third: key schema against AttributeDefinitions


def test_more_key_elements_than_definitions(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[attr("pk")])
    assert_validation(api("CreateTable", body),
                      "Invalid KeySchema: Some index key attribute have no definition")


def test_key_attribute_not_defined(api):
    body = create_body(KeySchema=hash_ks("pk"), AttributeDefinitions=[attr("other")])
    assert_validation(api("CreateTable", body),
                      INVALID + "Some index key attributes are not defined in "
                                "AttributeDefinitions. Keys: [pk], AttributeDefinitions: [other]")


def test_hash_and_range_same_name(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "pk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[attr("pk"), attr("x")])
    assert_validation(api("CreateTable", body),
                      "Both the Hash Key and the Range Key element in the KeySchema have the "
                      "same name")


def test_first_element_not_hash(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "RANGE"},
                                  {"AttributeName": "sk", "KeyType": "HASH"}],
                       AttributeDefinitions=[attr("pk"), attr("sk")])
    assert_validation(api("CreateTable", body),
                      "Invalid KeySchema: The first KeySchemaElement is not a HASH key type")


def test_single_range_element(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "RANGE"}])
    assert_validation(api("CreateTable", body),
                      "Invalid KeySchema: The first KeySchemaElement is not a HASH key type")


def test_second_element_not_range(api):
    body = create_body(KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "HASH"}],
                       AttributeDefinitions=[attr("pk"), attr("sk")])
    assert_validation(api("CreateTable", body),
                      "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type")


def test_definitions_count_mismatch(api):
    body = create_body(AttributeDefinitions=[attr("pk"), attr("extra")])
    assert_validation(api("CreateTable", body),
                      INVALID + "Number of attributes in KeySchema does not exactly match "
                                "number of attributes defined in AttributeDefinitions")


def test_attribute_defined_twice(api):
    body = create_body(AttributeDefinitions=[attr("pk"), attr("pk", "N")])
    assert_validation(api("CreateTable", body), "Attribute Name is duplicated: pk")


# ---- indexes (their rules are covered in test_index_definitions.py)


@pytest.mark.parametrize("which", ["LocalSecondaryIndexes", "GlobalSecondaryIndexes"])
def test_create_with_an_index_describes_it(api, raw_tables, which):
    name = unique_name()
    index = {"IndexName": "idx", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                               {"AttributeName": "other", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}}
    body = create_body(name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                        {"AttributeName": "sk", "KeyType": "RANGE"}],
                       AttributeDefinitions=[attr("pk"), attr("sk"), attr("other")],
                       **{which: [index]})
    resp = create_raw(api, raw_tables, body)
    assert resp.status == 200, resp.body
    described = api("DescribeTable", {"TableName": name}).json["Table"][which]
    assert [i["IndexName"] for i in described] == ["idx"]
    assert described[0]["KeySchema"] == index["KeySchema"]
    assert described[0]["IndexArn"].endswith(":table/%s/index/idx" % name)


# ---- validated after the indexes: streams, tags and table class, then an existing name


def test_stream_enabled_without_view_type(api):
    body = create_body(StreamSpecification={"StreamEnabled": True})
    assert_validation(api("CreateTable", body),
                      INVALID + "Table is being created with a stream enabled, UpdateViewType "
                                "is required")


def test_stream_disabled_with_view_type(api):
    body = create_body(StreamSpecification={"StreamEnabled": False,
                                            "StreamViewType": "NEW_IMAGE"})
    assert_validation(api("CreateTable", body),
                      INVALID + "Table is being created with a stream disabled, UpdateViewType "
                                "should not be specified")


def test_stream_missing_enabled_flag(api):
    body = create_body(StreamSpecification={"StreamViewType": "NEW_IMAGE"})
    assert_validation(api("CreateTable", body),
                      "1 validation error detected: Value null at "
                      "'streamSpecification.streamEnabled' failed to satisfy constraint: "
                      "Member must not be null")


def test_stream_bad_view_type(api):
    body = create_body(StreamSpecification={"StreamEnabled": True, "StreamViewType": "ALL"})
    assert_validation(api("CreateTable", body),
                      message_prefix="1 validation error detected: Value 'ALL' at "
                                     "'streamSpecification.streamViewType' failed to satisfy "
                                     "constraint: Member must satisfy enum value set: [")


def test_stream_disabled_without_view_type_is_fine(api, raw_tables):
    name = unique_name()
    body = create_body(name, StreamSpecification={"StreamEnabled": False})
    assert create_raw(api, raw_tables, body).status == 200
    desc = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert "LatestStreamArn" not in desc


def test_bad_table_class(api, raw_tables):
    name = unique_name()
    resp = create_raw(api, raw_tables, create_body(name, TableClass="GLACIER"))
    assert_validation(resp, "Invalid table-class parameter provided. Please try again with a "
                            "valid table-class value: [STANDARD, STANDARD_INFREQUENT_ACCESS].")
    assert_table_absent(api, name)


def test_create_with_reserved_tag_prefix(api, raw_tables):
    name = unique_name()
    resp = create_raw(api, raw_tables,
                      create_body(name, Tags=[{"Key": "aws:owner", "Value": "me"}]))
    assert_validation(resp, "Tag Key cannot be prefixed with aws:, Key: aws:owner")
    assert_table_absent(api, name)


def test_table_already_exists(api, make_table):
    name = make_table()
    resp = api("CreateTable", create_body(name))
    assert_error(resp, 400, RESOURCE_IN_USE, f"Table already exists: {name}")


def test_table_names_are_case_sensitive(ddb, make_table):
    name = "CaseTbl" + uuid.uuid4().hex[:8]
    make_table(name=name)
    make_table(name=name.lower())
    assert ddb.describe_table(TableName=name)["Table"]["TableName"] == name
    assert ddb.describe_table(TableName=name.lower())["Table"]["TableName"] == name.lower()
