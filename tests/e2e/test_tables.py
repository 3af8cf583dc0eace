"""Control plane (contract §3.1–3.8): CreateTable, DescribeTable, ListTables, DeleteTable,
UpdateTable, DescribeLimits, DescribeEndpoints and tags."""

import re
import time
import uuid

import botocore.exceptions
import pytest

from kumo_testlib import (
    RESOURCE_IN_USE,
    assert_error,
    assert_not_found,
    assert_validation,
    client_error,
    create_table_args,
    table_arn,
    unique_name,
    wait_table_active,
    wait_table_gone,
)

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
LABEL_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$")
INVALID = "One or more parameter values were invalid: "


def hash_ks(name="pk"):
    return [{"AttributeName": name, "KeyType": "HASH"}]


def attr(name, t="S"):
    return {"AttributeName": name, "AttributeType": t}


def create_body(name=None, **overrides):
    body = {
        "TableName": name or unique_name(),
        "KeySchema": hash_ks(),
        "AttributeDefinitions": [attr("pk")],
        "BillingMode": "PAY_PER_REQUEST",
    }
    for k, v in overrides.items():
        if v is None:
            body.pop(k, None)
        else:
            body[k] = v
    return body


def assert_table_absent(api, name):
    assert_not_found(api("DescribeTable", {"TableName": name}),
                     f"Requested resource not found: Table: {name} not found")


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


def test_describe_counts_are_live(ddb, make_table):
    name = make_table()
    items = [{"pk": {"S": "a"}}, {"pk": {"S": "bb"}, "x": {"S": "hello"}},
             {"pk": {"S": "c"}, "n": {"N": "27"}}]
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["ItemCount"] == 3
    # Item sizes (§2.4): 2+1, 2+2+1+5, 2+1+1+2; storage adds 100 bytes per item.
    assert desc["TableSizeBytes"] == (3 + 10 + 6) + 3 * 100
    ddb.delete_item(TableName=name, Key={"pk": {"S": "bb"}})
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["ItemCount"] == 2
    assert desc["TableSizeBytes"] == (3 + 6) + 2 * 100


def test_table_arn_as_table_name(ddb, make_table):
    name = make_table()
    arn = table_arn(name)
    assert ddb.describe_table(TableName=arn)["Table"]["TableName"] == name
    ddb.put_item(TableName=arn, Item={"pk": {"S": "k"}, "v": {"S": "via-arn"}})
    got = ddb.get_item(TableName=name, Key={"pk": {"S": "k"}})
    assert got["Item"]["v"] == {"S": "via-arn"}
    got = ddb.get_item(TableName=arn, Key={"pk": {"S": "k"}}, ReturnConsumedCapacity="TOTAL")
    assert got["Item"]["v"] == {"S": "via-arn"}
    assert got["ConsumedCapacity"]["TableName"] == arn


# ---- §3.2 step 1: coral constraints


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
    assert_validation(resp, "1 validation error detected: Value null at 'tableName' failed to "
                            "satisfy constraint: Member must not be null")


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


# ---- §3.2 step 2: billing


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


# ---- §3.2 step 3: key schema against definitions


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


# ---- indexes (their rules are covered in test_indexes.py)


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


# ---- §3.2 steps 8-10


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


# --------------------------------------------------------------------------- DescribeTable


def test_describe_missing_table(api):
    name = unique_name()
    assert_table_absent(api, name)


def test_describe_missing_table_boto3(ddb):
    name = unique_name()
    with pytest.raises(ddb.exceptions.ResourceNotFoundException) as e:
        ddb.describe_table(TableName=name)
    client_error(e, "ResourceNotFoundException",
                 f"Requested resource not found: Table: {name} not found")


def test_describe_without_name(api):
    assert_validation(api("DescribeTable", {}),
                      "1 validation error detected: Value null at 'tableName' failed to satisfy "
                      "constraint: Member must not be null")


# --------------------------------------------------------------------------- ListTables


@pytest.fixture(scope="module")
def listing_server(module_server):
    """A private server holding exactly the tables this section creates."""
    api = module_server.api()
    names = ["b-table", "B_table", "a.table", "A1table", "abc", "a_table"]
    assert api.ok("ListTables", {}) == {"TableNames": []}
    for n in names:
        assert api("CreateTable", create_body(n)).status == 200
    return module_server, sorted(names)


def test_list_tables_empty_account(start_server):
    srv = start_server()
    resp = srv.api()("ListTables", {})
    assert resp.status == 200
    assert resp.json == {"TableNames": []}


def test_list_tables_sorted_by_bytes(listing_server):
    srv, names = listing_server
    assert names == ["A1table", "B_table", "a.table", "a_table", "abc", "b-table"]
    out = srv.api().ok("ListTables", {})
    assert out == {"TableNames": names}


def test_list_tables_limit_and_last_evaluated(listing_server):
    srv, names = listing_server
    out = srv.api().ok("ListTables", {"Limit": 2})
    assert out == {"TableNames": names[:2], "LastEvaluatedTableName": names[1]}


def test_list_tables_pagination_ends_without_last_evaluated(listing_server):
    srv, names = listing_server
    api = srv.api()
    pages = []
    body = {"Limit": 2}
    while True:
        out = api.ok("ListTables", body)
        pages.append(out["TableNames"])
        if "LastEvaluatedTableName" not in out:
            break
        assert out["LastEvaluatedTableName"] == out["TableNames"][-1]
        body = {"Limit": 2, "ExclusiveStartTableName": out["LastEvaluatedTableName"]}
    assert pages == [names[0:2], names[2:4], names[4:6]]


def test_list_tables_limit_equal_to_remaining(listing_server):
    srv, names = listing_server
    out = srv.api().ok("ListTables", {"Limit": 3, "ExclusiveStartTableName": names[2]})
    assert out == {"TableNames": names[3:]}
    out = srv.api().ok("ListTables", {"Limit": 6})
    assert out == {"TableNames": names}
    out = srv.api().ok("ListTables", {"Limit": 5})
    assert out == {"TableNames": names[:5], "LastEvaluatedTableName": names[4]}


def test_list_tables_start_name_need_not_exist(listing_server):
    srv, names = listing_server
    # "a0z" sorts after "a.table" and before "a_table".
    out = srv.api().ok("ListTables", {"ExclusiveStartTableName": "a0z"})
    assert out == {"TableNames": ["a_table", "abc", "b-table"]}
    out = srv.api().ok("ListTables", {"ExclusiveStartTableName": "b-table"})
    assert out == {"TableNames": []}
    out = srv.api().ok("ListTables", {"ExclusiveStartTableName": "zzz"})
    assert out == {"TableNames": []}
    out = srv.api().ok("ListTables", {"ExclusiveStartTableName": "000"})
    assert out == {"TableNames": names}


def test_list_tables_boto3_paginator(listing_server):
    srv, names = listing_server
    c = srv.client()
    got = []
    for page in c.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 4}):
        got += page["TableNames"]
    assert got == names


@pytest.mark.parametrize("limit,message", [
    (0, "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1"),
    (101, "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: "
          "Member must have value less than or equal to 100"),
])
def test_list_tables_limit_range(api, limit, message):
    assert_validation(api("ListTables", {"Limit": limit}), message)


def test_list_tables_limit_100_is_fine(api):
    assert api("ListTables", {"Limit": 100}).status == 200


def test_list_tables_short_start_name(api):
    assert_validation(api("ListTables", {"ExclusiveStartTableName": "ab"}),
                      "1 validation error detected: Value 'ab' at 'exclusiveStartTableName' "
                      "failed to satisfy constraint: Member must have length greater than or "
                      "equal to 3")


# --------------------------------------------------------------------------- DeleteTable


def test_delete_table(api, ddb):
    name = unique_name()
    ddb.create_table(**create_table_args(name))
    wait_table_active(ddb, name)
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})
    resp = api("DeleteTable", {"TableName": name})
    assert resp.status == 200, resp
    desc = resp.json["TableDescription"]
    assert desc["TableStatus"] == "DELETING"
    assert desc["TableName"] == name
    assert desc["TableArn"] == table_arn(name)
    wait_table_gone(ddb, name)
    assert_table_absent(api, name)
    assert name not in ddb.list_tables(ExclusiveStartTableName=name[:-1])["TableNames"]
    resp = api("GetItem", {"TableName": name, "Key": {"pk": {"S": "a"}}})
    assert_not_found(resp)


def test_recreate_after_delete_starts_empty(ddb):
    name = unique_name()
    ddb.create_table(**create_table_args(name))
    wait_table_active(ddb, name)
    old_id = ddb.describe_table(TableName=name)["Table"]["TableId"]
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}})
    ddb.delete_table(TableName=name)
    wait_table_gone(ddb, name)
    ddb.create_table(**create_table_args(name, hash_key=("pk", "S")))
    try:
        desc = wait_table_active(ddb, name)
        assert desc["TableId"] != old_id
        assert desc["ItemCount"] == 0
        assert "Item" not in ddb.get_item(TableName=name, Key={"pk": {"S": "a"}},
                                          ConsistentRead=True)
    finally:
        ddb.delete_table(TableName=name)


def test_delete_missing_table(api):
    name = unique_name()
    assert_not_found(api("DeleteTable", {"TableName": name}),
                     f"Requested resource not found: Table: {name} not found")


def test_delete_protected_table(api, ddb, make_table):
    name = make_table(DeletionProtectionEnabled=True)
    assert_validation(api("DeleteTable", {"TableName": name}),
                      "Resource cannot be deleted as it is currently protected against "
                      "deletion. Disable deletion protection first.")
    assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    api.ok("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
    assert api("DeleteTable", {"TableName": name}).status == 200
    wait_table_gone(ddb, name)


# --------------------------------------------------------------------------- UpdateTable

NOTHING_TO_DO = ("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                 "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
                 "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
                 "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass "
                 "is required")


def test_update_pay_per_request_to_provisioned(ddb, make_table):
    name = make_table()
    out = ddb.update_table(TableName=name, BillingMode="PROVISIONED",
                           ProvisionedThroughput={"ReadCapacityUnits": 4,
                                                  "WriteCapacityUnits": 6})
    assert out["TableDescription"]["TableName"] == name
    desc = wait_table_active(ddb, name)
    assert desc["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    pt = desc["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (4, 6)


def test_update_provisioned_to_pay_per_request(ddb, make_table):
    name = make_table(BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 3})
    ddb.update_table(TableName=name, BillingMode="PAY_PER_REQUEST")
    desc = wait_table_active(ddb, name)
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "LastUpdateToPayPerRequestDateTime" in desc["BillingModeSummary"]
    pt = desc["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (0, 0)


def test_update_throughput(ddb, make_table):
    name = make_table(BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    ddb.update_table(TableName=name,
                     ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 6})
    pt = wait_table_active(ddb, name)["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (10, 6)
    ddb.update_table(TableName=name,
                     ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 6})
    pt = wait_table_active(ddb, name)["ProvisionedThroughput"]
    assert (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"]) == (2, 6)
    assert pt["NumberOfDecreasesToday"] == 1


def test_update_throughput_unchanged(api, make_table):
    name = make_table(BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 7})
    resp = api("UpdateTable", {"TableName": name, "ProvisionedThroughput": {
        "ReadCapacityUnits": 5, "WriteCapacityUnits": 7}})
    assert_validation(resp, "The provisioned throughput for the table will not change. The "
                            "requested value equals the current value. Current ReadCapacityUnits "
                            "provisioned for the table: 5. Requested ReadCapacityUnits: 5. "
                            "Current WriteCapacityUnits provisioned for the table: 7. Requested "
                            "WriteCapacityUnits: 7. Refer to the Amazon DynamoDB Developer Guide "
                            "for current limits and how to request higher limits.")


def test_update_throughput_on_pay_per_request_table(api, make_table):
    name = make_table()
    msg = (INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
                     "BillingMode is PAY_PER_REQUEST")
    pt = {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
    assert_validation(api("UpdateTable", {"TableName": name, "ProvisionedThroughput": pt}), msg)
    assert_validation(api("UpdateTable", {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                                          "ProvisionedThroughput": pt}), msg)


def test_update_to_provisioned_without_throughput(api, make_table):
    name = make_table()
    assert_validation(api("UpdateTable", {"TableName": name, "BillingMode": "PROVISIONED"}),
                      INVALID + "ProvisionedThroughput must be specified when BillingMode is "
                                "PROVISIONED")


def test_update_nothing_to_do(api, make_table):
    name = make_table()
    assert_validation(api("UpdateTable", {"TableName": name}), NOTHING_TO_DO)


def test_update_missing_table(api):
    name = unique_name()
    assert_not_found(api("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": True}),
                     f"Requested resource not found: Table: {name} not found")


def test_update_deletion_protection_toggle(api, make_table):
    name = make_table()
    out = api.ok("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": True})
    assert out["TableDescription"]["DeletionProtectionEnabled"] is True
    assert api.ok("DescribeTable", {"TableName": name})["Table"]["DeletionProtectionEnabled"] \
        is True
    api.ok("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
    assert api.ok("DescribeTable", {"TableName": name})["Table"]["DeletionProtectionEnabled"] \
        is False


def test_update_deletion_protection_must_be_alone(api, make_table):
    name = make_table(BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    resp = api("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": True,
                               "ProvisionedThroughput": {"ReadCapacityUnits": 2,
                                                         "WriteCapacityUnits": 2}})
    assert_validation(resp, INVALID + "DeletionProtection modification must be the only "
                                      "operation in the request")


def test_update_table_class(ddb, make_table):
    name = make_table()
    ddb.update_table(TableName=name, TableClass="STANDARD_INFREQUENT_ACCESS")
    desc = wait_table_active(ddb, name)
    assert desc["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    ddb.update_table(TableName=name, TableClass="STANDARD")
    desc = wait_table_active(ddb, name)
    assert desc["TableClassSummary"]["TableClass"] == "STANDARD"


def test_update_keeps_items(ddb, make_table):
    name = make_table()
    ddb.put_item(TableName=name, Item={"pk": {"S": "keep"}, "v": {"N": "1"}})
    ddb.update_table(TableName=name, BillingMode="PROVISIONED",
                     ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    wait_table_active(ddb, name)
    assert ddb.get_item(TableName=name, Key={"pk": {"S": "keep"}})["Item"]["v"] == {"N": "1"}


# --------------------------------------------------------------------------- limits, endpoints


def test_describe_limits(api):
    assert api.ok("DescribeLimits", {}) == {
        "AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
        "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000}


def test_describe_endpoints(api, ddb):
    out = api.ok("DescribeEndpoints", {})
    assert list(out) == ["Endpoints"]
    assert len(out["Endpoints"]) == 1
    ep = out["Endpoints"][0]
    assert set(ep) == {"Address", "CachePeriodInMinutes"}
    assert isinstance(ep["Address"], str) and ep["Address"]
    assert ep["CachePeriodInMinutes"] == 1440
    assert ddb.describe_endpoints()["Endpoints"][0]["CachePeriodInMinutes"] == 1440


# --------------------------------------------------------------------------- tags


def tag_dict(tags):
    return {t["Key"]: t["Value"] for t in tags}


def list_all_tags(ddb, arn):
    tags, token = [], None
    while True:
        kw = {"ResourceArn": arn}
        if token:
            kw["NextToken"] = token
        out = ddb.list_tags_of_resource(**kw)
        tags += out.get("Tags", [])
        token = out.get("NextToken")
        if not token:
            return tags


def test_create_table_tags(ddb, make_table):
    name = make_table(Tags=[{"Key": "env", "Value": "test"}, {"Key": "team", "Value": ""}])
    assert tag_dict(list_all_tags(ddb, table_arn(name))) == {"env": "test", "team": ""}


def test_tag_overwrite_and_untag(api, ddb, make_table):
    name = make_table()
    arn = table_arn(name)
    assert list_all_tags(ddb, arn) == []
    resp = api("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "1"},
                                                            {"Key": "b", "Value": "2"}]})
    assert resp.status == 200 and resp.body == b"{}", resp
    api.ok("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "changed"},
                                                        {"Key": "c", "Value": "3"}]})
    assert tag_dict(list_all_tags(ddb, arn)) == {"a": "changed", "b": "2", "c": "3"}
    resp = api("UntagResource", {"ResourceArn": arn, "TagKeys": ["b", "not-there"]})
    assert resp.status == 200 and resp.body == b"{}", resp
    assert tag_dict(list_all_tags(ddb, arn)) == {"a": "changed", "c": "3"}


def test_fifty_tags_allowed_fifty_one_rejected(api, ddb, make_table):
    name = make_table()
    arn = table_arn(name)
    tags = [{"Key": f"k{i:02d}", "Value": f"v{i}"} for i in range(50)]
    api.ok("TagResource", {"ResourceArn": arn, "Tags": tags})
    assert len(list_all_tags(ddb, arn)) == 50
    resp = api("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "one-more", "Value": "x"}]})
    assert_validation(resp, "Number of Tags exceed the current limit for the provided ResourceArn")
    api.ok("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k00", "Value": "overwrite"}]})
    assert tag_dict(list_all_tags(ddb, arn))["k00"] == "overwrite"


@pytest.mark.parametrize("op,body,message", [
    ("TagResource", {"Tags": [{"Key": "aws:x", "Value": "1"}]},
     "Tag Key cannot be prefixed with aws:, Key: aws:x"),
    ("TagResource", {"Tags": []}, "Atleast one Tag needs to be provided as Input."),
    ("UntagResource", {"TagKeys": []}, "Atleast one Tag Key needs to be provided as Input."),
    ("TagResource", {}, "1 validation error detected: Value null at 'tags' failed to satisfy "
                        "constraint: Member must not be null"),
    ("UntagResource", {}, "1 validation error detected: Value null at 'tagKeys' failed to "
                          "satisfy constraint: Member must not be null"),
    ("TagResource", {"Tags": [{"Key": "d", "Value": "1"}, {"Key": "d", "Value": "2"}]},
     "Duplicate Tag Keys provided as input: Duplicate Tag Key found d"),
])
def test_tag_validation(api, make_table, op, body, message):
    name = make_table()
    resp = api(op, dict(body, ResourceArn=table_arn(name)))
    assert_validation(resp, message)


@pytest.mark.parametrize("arn,message", [
    ("not-an-arn", INVALID + "ARNs must start with 'arn:': not-an-arn"),
    ("arn:aws:s3:::some-bucket",
     INVALID + "Provided Arn is not a DynamoDB resource arn: arn:aws:s3:::some-bucket"),
])
@pytest.mark.parametrize("op", ["TagResource", "UntagResource", "ListTagsOfResource"])
def test_tag_bad_arns(api, op, arn, message):
    body = {"ResourceArn": arn}
    if op == "TagResource":
        body["Tags"] = [{"Key": "k", "Value": "v"}]
    elif op == "UntagResource":
        body["TagKeys"] = ["k"]
    assert_validation(api(op, body), message)


def test_tag_other_region_arn(api, make_table):
    name = make_table()
    arn = table_arn(name, region="eu-west-1")
    resp = api("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]})
    assert_validation(resp, f"Invalid TableArn: Invalid ResourceArn provided as input {arn}")


@pytest.mark.parametrize("op", ["TagResource", "UntagResource", "ListTagsOfResource"])
def test_tag_missing_table(api, op):
    arn = table_arn(unique_name())
    body = {"ResourceArn": arn}
    if op == "TagResource":
        body["Tags"] = [{"Key": "k", "Value": "v"}]
    elif op == "UntagResource":
        body["TagKeys"] = ["k"]
    assert_not_found(api(op, body), f"Requested resource not found: ResourcArn: {arn} not found")


def test_tags_boto3_round_trip(ddb, make_table):
    name = make_table()
    arn = table_arn(name)
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "x", "Value": "y"}])
    assert list_all_tags(ddb, arn) == [{"Key": "x", "Value": "y"}]
    ddb.untag_resource(ResourceArn=arn, TagKeys=["x"])
    assert list_all_tags(ddb, arn) == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "aws:x", "Value": "y"}])
    client_error(e, "ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:x")


def test_tags_disappear_with_the_table(api, ddb):
    name = unique_name()
    ddb.create_table(**create_table_args(name, Tags=[{"Key": "old", "Value": "1"}]))
    wait_table_active(ddb, name)
    ddb.delete_table(TableName=name)
    wait_table_gone(ddb, name)
    ddb.create_table(**create_table_args(name))
    try:
        wait_table_active(ddb, name)
        assert list_all_tags(ddb, table_arn(name)) == []
    finally:
        ddb.delete_table(TableName=name)
