"""Tables after creation: DescribeTable, ListTables, DeleteTable, UpdateTable, DescribeLimits,
DescribeEndpoints and tags. With test_tables_create.py this covers the control plane."""

import botocore.exceptions
import pytest

from kumo_testlib import (
    assert_not_found,
    assert_validation,
    client_error,
    create_table_args,
    table_arn,
    unique_name,
    wait_table_active,
    wait_table_gone,
)
from table_helpers import (
    INVALID,
    assert_table_absent,
    create_body,
)


# --------------------------------------------------------------------------- DescribeTable


def test_describe_counts_are_live(ddb, make_table):
    name = make_table()
    items = [{"pk": {"S": "a"}}, {"pk": {"S": "bb"}, "x": {"S": "hello"}},
             {"pk": {"S": "c"}, "n": {"N": "27"}}]
    for it in items:
        ddb.put_item(TableName=name, Item=it)
    desc = ddb.describe_table(TableName=name)["Table"]
    assert desc["ItemCount"] == 3
    # Item sizes (attribute name bytes plus value bytes): 2+1, 2+2+1+5, 2+1+1+2; storage adds
    # 100 bytes per item.
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
                      "The parameter 'TableName' is required but was not present in the request")


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
    assert resp.status == 200 and resp.body == b"", resp
    api.ok("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "changed"},
                                                        {"Key": "c", "Value": "3"}]})
    assert tag_dict(list_all_tags(ddb, arn)) == {"a": "changed", "b": "2", "c": "3"}
    resp = api("UntagResource", {"ResourceArn": arn, "TagKeys": ["b", "not-there"]})
    assert resp.status == 200 and resp.body == b"", resp
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


@pytest.mark.parametrize("op", ["TagResource", "UntagResource", "ListTagsOfResource"])
@pytest.mark.parametrize("exists", [True, False])
def test_tag_other_account_arn_is_access_denied(api, make_table, op, exists):
    # A table ARN of another account is refused whether or not the table exists here.
    name = make_table() if exists else unique_name()
    arn = table_arn(name).replace(":000000000000:", ":123456789012:")
    body = {"ResourceArn": arn}
    if op == "TagResource":
        body["Tags"] = [{"Key": "k", "Value": "v"}]
    elif op == "UntagResource":
        body["TagKeys"] = ["k"]
    resp = api(op, body)
    assert resp.status == 400
    assert resp.json == {"__type": "com.amazon.coral.service#AccessDeniedException",
                           "message": "Access denied."}


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
