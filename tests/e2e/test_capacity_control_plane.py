"""OnDemandThroughput and WarmThroughput as stored settings of a table and each GSI
(CreateTable, UpdateTable and its index actions, DescribeTable), the per-table quota on
provisioned throughput, and DescribeLimits. botocore 1.26 has neither OnDemandThroughput nor
WarmThroughput, so those go through raw signed requests."""

import botocore.exceptions
import pytest

from kumo_testlib import (
    NS_COR_SERVICE,
    NS_DYNAMODB,
    assert_error,
    assert_validation,
    client_error,
    create_table_args,
    unique_name,
)
from capacity_helpers import capacity_server
from table_helpers import INVALID

LIMIT = NS_DYNAMODB + "LimitExceededException"
REGION = "us-east-1"
INITIAL = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
INITIAL_PAGE = ("https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                "on-demand-capacity-mode.html#on-demand-capacity-mode-initial")


def warm(read, write, status="ACTIVE"):
    return {"ReadUnitsPerSecond": read, "WriteUnitsPerSecond": write, "Status": status}


def tp(read, write):
    return {"ReadCapacityUnits": read, "WriteCapacityUnits": write}


def gsi(name, **extra):
    return dict({"IndexName": name, "KeySchema": [{"AttributeName": name, "KeyType": "HASH"}],
                 "Projection": {"ProjectionType": "KEYS_ONLY"}}, **extra)


def gsi_table(*indexes, **extra):
    """CreateTable arguments of a table keyed `pk` with the GSIs `indexes`, each keyed by an
    attribute of its own name."""
    names = [i["IndexName"] for i in indexes]
    defs = [{"AttributeName": "pk", "AttributeType": "S"}] + [
        {"AttributeName": n, "AttributeType": "S"} for n in names]
    return dict(extra, GlobalSecondaryIndexes=list(indexes), AttributeDefinitions=defs)


def describe(api, name):
    return api.ok("DescribeTable", {"TableName": name})["Table"]


def index_of(table, name):
    return next(i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == name)


def update(api, name, **members):
    return api("UpdateTable", dict({"TableName": name}, **members))


def index_update(api, name, index, **members):
    return update(api, name, GlobalSecondaryIndexUpdates=[
        {"Update": dict({"IndexName": index}, **members)}])


def create(api, **extra):
    return api("CreateTable", create_table_args(unique_name(), **extra))


@pytest.fixture
def created(api):
    """created(**CreateTable args) → the CreateTable answer's TableDescription; the table is
    deleted after the test."""
    names = []

    def _create(**extra):
        resp = create(api, **extra)
        assert resp.status == 200, resp
        names.append(resp.json["TableDescription"]["TableName"])
        return resp.json["TableDescription"]

    yield _create
    for name in names:
        api("DeleteTable", {"TableName": name})


def out_of_range(member, target="table"):
    return (INVALID + f"Requested {member} for OnDemandThroughput for {target} is outside of "
                      "valid range")


def quota_text(member, structure, target="table"):
    quota = "TableMaxReadCapacityUnits" if "Read" in member else "TableMaxWriteCapacityUnits"
    return (f"Subscriber limit exceeded: Requested {member} for {structure} for {target} exceeds "
            f"{quota} of the account in region {REGION}")


def lower_text(member, than, target="table"):
    return INVALID + f"Requested {member} for WarmThroughput for {target} is lower than {than}"


CURRENT = "current WarmThroughput, decreasing WarmThroughput is not supported"
BELOW_INITIAL = f"initial throughput for OnDemand. See: {INITIAL_PAGE}"


# --------------------------------------------------------------------------- CreateTable


def test_on_demand_table_defaults(api, created):
    desc = created()
    assert "WarmThroughput" not in desc
    assert "OnDemandThroughput" not in desc
    table = describe(api, desc["TableName"])
    assert table["WarmThroughput"] == INITIAL
    assert "OnDemandThroughput" not in table


def test_provisioned_table_warm_is_its_units(api, created):
    desc = created(ProvisionedThroughput=tp(5, 7))
    assert describe(api, desc["TableName"])["WarmThroughput"] == warm(5, 7)


def test_create_with_on_demand_throughput(api, created):
    desc = created(OnDemandThroughput={"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50})
    assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    table = describe(api, desc["TableName"])
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}
    one = created(OnDemandThroughput={"MaxWriteRequestUnits": 40000})
    assert describe(api, one["TableName"])["OnDemandThroughput"] == {"MaxWriteRequestUnits": 40000}


@pytest.mark.parametrize("value", [0, -1, -2, -40000])
@pytest.mark.parametrize("member", ["MaxReadRequestUnits", "MaxWriteRequestUnits"])
def test_create_on_demand_throughput_out_of_range(api, member, value):
    resp = create(api, OnDemandThroughput={member: value})
    assert_validation(resp, out_of_range(member))


def test_create_on_demand_throughput_on_provisioned_table(api):
    for member in ["MaxReadRequestUnits", "MaxWriteRequestUnits"]:
        resp = create(api, ProvisionedThroughput=tp(1, 1), OnDemandThroughput={member: 10})
        assert_validation(resp, INVALID + f"{member} for OnDemandThroughput cannot be specified "
                                          "when table BillingMode is PROVISIONED.")
    resp = create(api, ProvisionedThroughput=tp(1, 1),
                  OnDemandThroughput={"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": 10})
    assert_validation(resp, INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be "
                                      "specified when table BillingMode is PROVISIONED.")


@pytest.mark.parametrize("member", ["MaxReadRequestUnits", "MaxWriteRequestUnits"])
def test_create_on_demand_throughput_above_quota(api, member):
    resp = create(api, OnDemandThroughput={member: 40001})
    assert_error(resp, 400, LIMIT, quota_text(member, "OnDemandThroughput"))


def test_create_accepts_empty_structs(api, created):
    desc = created(OnDemandThroughput={}, WarmThroughput={})
    assert "OnDemandThroughput" not in desc
    assert desc["WarmThroughput"] == INITIAL
    assert describe(api, desc["TableName"])["WarmThroughput"] == INITIAL


def test_create_on_demand_with_warm_throughput(api, created):
    desc = created(WarmThroughput={"ReadUnitsPerSecond": 30000, "WriteUnitsPerSecond": 10000})
    assert desc["WarmThroughput"] == warm(30000, 10000)
    assert describe(api, desc["TableName"])["WarmThroughput"] == warm(30000, 10000)
    one = created(WarmThroughput={"ReadUnitsPerSecond": 20000})
    assert describe(api, one["TableName"])["WarmThroughput"] == warm(20000, 4000)
    equal = created(WarmThroughput={"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000})
    assert describe(api, equal["TableName"])["WarmThroughput"] == INITIAL


@pytest.mark.parametrize("member,value", [("ReadUnitsPerSecond", 11999),
                                          ("WriteUnitsPerSecond", 3999),
                                          ("ReadUnitsPerSecond", 0),
                                          ("WriteUnitsPerSecond", -5)])
def test_create_on_demand_warm_below_initial(api, member, value):
    resp = create(api, WarmThroughput={member: value})
    assert_validation(resp, lower_text(member, BELOW_INITIAL))


def test_create_provisioned_with_warm_throughput(api, created):
    desc = created(ProvisionedThroughput=tp(10, 10),
                   WarmThroughput={"ReadUnitsPerSecond": 6000, "WriteUnitsPerSecond": 1000})
    assert describe(api, desc["TableName"])["WarmThroughput"] == warm(6000, 1000)
    resp = create(api, ProvisionedThroughput=tp(10, 10), WarmThroughput={"ReadUnitsPerSecond": 9})
    assert_validation(resp, lower_text("ReadUnitsPerSecond",
                                       "ReadCapacityUnits of ProvisionedThroughput"))
    resp = create(api, ProvisionedThroughput=tp(10, 10), WarmThroughput={"WriteUnitsPerSecond": 9})
    assert_validation(resp, lower_text("WriteUnitsPerSecond",
                                       "WriteCapacityUnits of ProvisionedThroughput"))


@pytest.mark.parametrize("member", ["ReadUnitsPerSecond", "WriteUnitsPerSecond"])
def test_create_warm_above_quota(api, created, member):
    resp = create(api, WarmThroughput={member: 40001})
    assert_error(resp, 400, LIMIT, quota_text(member, "WarmThroughput"))
    desc = created(WarmThroughput={member: 40000})
    assert describe(api, desc["TableName"])["WarmThroughput"][member] == 40000


def test_create_provisioned_above_quota(ddb):
    name = unique_name()
    for read, write, member, value in [(40001, 1, "ReadCapacityUnits", 40001),
                                       (1, 40001, "WriteCapacityUnits", 40001),
                                       (50000, 60000, "ReadCapacityUnits", 50000)]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            ddb.create_table(**create_table_args(name, ProvisionedThroughput=tp(read, write)))
        client_error(e, "LimitExceededException",
                     f"The requested {member}, {value}, is above the per table maximum for the "
                     f"account in {REGION}. Per table maximum: 40000. Refer to the Amazon DynamoDB "
                     "Developer Guide for current limits and how to request higher limits.")


def test_create_provisioned_at_quota(api, created):
    desc = created(ProvisionedThroughput=tp(40000, 40000))
    assert describe(api, desc["TableName"])["WarmThroughput"] == warm(40000, 40000)


# --------------------------------------------------------------------------- CreateTable GSIs


def test_create_on_demand_gsis(api, created):
    desc = created(**gsi_table(
        gsi("plain"),
        gsi("capped", OnDemandThroughput={"MaxReadRequestUnits": 7}),
        gsi("warm", WarmThroughput={"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000}),
        gsi("empty", OnDemandThroughput={}, WarmThroughput={})))
    assert all("WarmThroughput" not in i for i in desc["GlobalSecondaryIndexes"])
    assert index_of(desc, "capped")["OnDemandThroughput"] == {"MaxReadRequestUnits": 7}
    table = describe(api, desc["TableName"])
    assert table["WarmThroughput"] == INITIAL
    assert index_of(table, "plain")["WarmThroughput"] == INITIAL
    assert "OnDemandThroughput" not in index_of(table, "plain")
    assert index_of(table, "capped")["OnDemandThroughput"] == {"MaxReadRequestUnits": 7}
    assert index_of(table, "warm")["WarmThroughput"] == warm(15000, 5000)
    assert index_of(table, "empty")["WarmThroughput"] == INITIAL
    assert "OnDemandThroughput" not in index_of(table, "empty")


def test_create_provisioned_gsi_warm_is_its_units(api, created):
    desc = created(ProvisionedThroughput=tp(1, 1), **gsi_table(
        gsi("ggg", ProvisionedThroughput=tp(30, 20)),
        gsi("www", ProvisionedThroughput=tp(1, 1), WarmThroughput={"WriteUnitsPerSecond": 900})))
    table = describe(api, desc["TableName"])
    assert index_of(table, "ggg")["WarmThroughput"] == warm(30, 20)
    assert index_of(table, "www")["WarmThroughput"] == warm(1, 900)


def test_create_gsi_setting_errors(api):
    resp = create(api, **gsi_table(gsi("ggg", OnDemandThroughput={"MaxWriteRequestUnits": 0})))
    assert_validation(resp, out_of_range("MaxWriteRequestUnits", "index : ggg"))
    resp = create(api, **gsi_table(gsi("ggg", OnDemandThroughput={"MaxReadRequestUnits": 40001})))
    assert_error(resp, 400, LIMIT,
                 quota_text("MaxReadRequestUnits", "OnDemandThroughput", "index : ggg"))
    resp = create(api, **gsi_table(gsi("ggg", WarmThroughput={"WriteUnitsPerSecond": 100})))
    assert_validation(resp, lower_text("WriteUnitsPerSecond", BELOW_INITIAL, "index ggg"))
    resp = create(api, **gsi_table(gsi("ggg", WarmThroughput={"ReadUnitsPerSecond": 40001})))
    assert_error(resp, 400, LIMIT, quota_text("ReadUnitsPerSecond", "WarmThroughput", "index ggg"))
    resp = create(api, ProvisionedThroughput=tp(1, 1), **gsi_table(
        gsi("ggg", ProvisionedThroughput=tp(1, 1), OnDemandThroughput={"MaxReadRequestUnits": 5})))
    assert_validation(resp, INVALID + "MaxReadRequestUnits for OnDemandThroughput for index : ggg "
                                      "cannot be specified when table BillingMode is PROVISIONED.")
    resp = create(api, ProvisionedThroughput=tp(1, 1), **gsi_table(
        gsi("ggg", ProvisionedThroughput=tp(5, 5), WarmThroughput={"ReadUnitsPerSecond": 4})))
    assert_validation(resp, lower_text("ReadUnitsPerSecond",
                                       "ReadCapacityUnits of ProvisionedThroughput", "index ggg"))


def test_create_gsi_provisioned_above_quota(api):
    resp = create(api, ProvisionedThroughput=tp(1, 1),
                  **gsi_table(gsi("ggg", ProvisionedThroughput=tp(1, 40001))))
    assert_error(resp, 400, LIMIT,
                 "The requested WriteCapacityUnits for index ggg, 40001, is above the per index "
                 f"maximum for the account in {REGION}. Per index maximum: 40000. Refer to the "
                 "Amazon DynamoDB Developer Guide for current limits and how to request higher "
                 "limits.")


# --------------------------------------------------------------------------- UpdateTable


def test_update_on_demand_throughput_merges_and_removes(api, make_table):
    name = make_table()
    resp = update(api, name, OnDemandThroughput={"MaxReadRequestUnits": 2000})
    assert resp.status == 200, resp
    assert resp.json["TableDescription"]["OnDemandThroughput"] == {"MaxReadRequestUnits": 2000}
    update(api, name, OnDemandThroughput={"MaxWriteRequestUnits": 100})
    assert describe(api, name)["OnDemandThroughput"] == {"MaxReadRequestUnits": 2000,
                                                         "MaxWriteRequestUnits": 100}
    resp = update(api, name, OnDemandThroughput={"MaxReadRequestUnits": -1})
    assert resp.json["TableDescription"]["OnDemandThroughput"] == {"MaxReadRequestUnits": -1,
                                                                   "MaxWriteRequestUnits": 100}
    assert describe(api, name)["OnDemandThroughput"] == {"MaxWriteRequestUnits": 100}
    update(api, name, OnDemandThroughput={"MaxWriteRequestUnits": -1})
    table = describe(api, name)
    assert "OnDemandThroughput" not in table
    assert table["WarmThroughput"] == INITIAL


@pytest.mark.parametrize("value", [0, -2])
def test_update_on_demand_throughput_out_of_range(api, make_table, value):
    name = make_table()
    for member in ["MaxReadRequestUnits", "MaxWriteRequestUnits"]:
        assert_validation(update(api, name, OnDemandThroughput={member: value}),
                          out_of_range(member))


def test_update_on_demand_throughput_above_quota(api, make_table):
    name = make_table()
    resp = update(api, name, OnDemandThroughput={"MaxWriteRequestUnits": 40001})
    assert_error(resp, 400, LIMIT, quota_text("MaxWriteRequestUnits", "OnDemandThroughput"))


def test_update_on_demand_throughput_on_provisioned_table(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1))
    text = (INVALID + "{} for OnDemandThroughput cannot be specified when the table BillingMode "
                      "is PROVISIONED")
    for member in ["MaxReadRequestUnits", "MaxWriteRequestUnits"]:
        assert_validation(update(api, name, OnDemandThroughput={member: 5}), text.format(member))


@pytest.mark.parametrize("member", ["OnDemandThroughput", "WarmThroughput"])
def test_update_empty_struct_fails_internally(api, make_table, member):
    name = make_table()
    resp = update(api, name, **{member: {}})
    assert resp.status == 500, resp
    assert resp.json == {"__type": NS_COR_SERVICE + "InternalFailure"}


def test_update_warm_throughput_on_demand(api, make_table):
    name = make_table()
    resp = update(api, name, WarmThroughput={"ReadUnitsPerSecond": 13000})
    assert resp.status == 200, resp
    assert resp.json["TableDescription"]["WarmThroughput"] == warm(13000, 4000)
    assert describe(api, name)["WarmThroughput"] == warm(13000, 4000)
    # Equal values are accepted; lower ones are not.
    assert update(api, name, WarmThroughput={"ReadUnitsPerSecond": 13000,
                                             "WriteUnitsPerSecond": 4000}).status == 200
    assert_validation(update(api, name, WarmThroughput={"ReadUnitsPerSecond": 12999}),
                      lower_text("ReadUnitsPerSecond", CURRENT))
    assert_validation(update(api, name, WarmThroughput={"WriteUnitsPerSecond": 3999}),
                      lower_text("WriteUnitsPerSecond", CURRENT))
    resp = update(api, name, WarmThroughput={"WriteUnitsPerSecond": 40001})
    assert_error(resp, 400, LIMIT, quota_text("WriteUnitsPerSecond", "WarmThroughput"))
    assert describe(api, name)["WarmThroughput"] == warm(13000, 4000)


def test_update_warm_throughput_provisioned(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1))
    assert update(api, name, ProvisionedThroughput=tp(3, 3)).status == 200
    assert describe(api, name)["WarmThroughput"] == warm(3, 3)
    assert update(api, name, ProvisionedThroughput=tp(1, 1)).status == 200
    assert describe(api, name)["WarmThroughput"] == warm(3, 3)
    assert_validation(update(api, name, WarmThroughput={"ReadUnitsPerSecond": 2}),
                      lower_text("ReadUnitsPerSecond", CURRENT))
    assert update(api, name, WarmThroughput={"ReadUnitsPerSecond": 500}).status == 200
    table = describe(api, name)
    assert table["WarmThroughput"] == warm(500, 3)
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 1


def test_update_provisioned_above_quota(ddb, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ddb.update_table(TableName=name, ProvisionedThroughput=tp(1, 40001))
    client_error(e, "LimitExceededException",
                 f"The requested WriteCapacityUnits, 40001, is above the per table maximum for the "
                 f"account in {REGION}. Per table maximum: 40000. Refer to the Amazon DynamoDB "
                 "Developer Guide for current limits and how to request higher limits.")


def test_update_deletion_protection_alone(api, make_table):
    name = make_table()
    resp = update(api, name, DeletionProtectionEnabled=True,
                  WarmThroughput={"ReadUnitsPerSecond": 20000})
    assert_validation(resp, INVALID + "DeletionProtection modification must be the only "
                                      "operation in the request")


# --------------------------------------------------------------------------- billing switches


def test_switch_to_on_demand_and_back_keeps_warm(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1))
    resp = update(api, name, BillingMode="PAY_PER_REQUEST")
    assert resp.status == 200, resp
    assert describe(api, name)["WarmThroughput"] == INITIAL
    resp = update(api, name, BillingMode="PROVISIONED", ProvisionedThroughput=tp(1, 1))
    assert resp.status == 200, resp
    assert describe(api, name)["WarmThroughput"] == INITIAL


def test_switch_to_on_demand_keeps_highest_units(api, make_table):
    name = make_table(ProvisionedThroughput=tp(24000, 8000))
    update(api, name, ProvisionedThroughput=tp(10, 10))
    resp = update(api, name, BillingMode="PAY_PER_REQUEST",
                  OnDemandThroughput={"MaxReadRequestUnits": 500})
    assert resp.status == 200, resp
    table = describe(api, name)
    assert table["WarmThroughput"] == warm(24000, 8000)
    assert table["OnDemandThroughput"] == {"MaxReadRequestUnits": 500}


def test_switch_to_provisioned_removes_maxima(api, make_table):
    name = make_table(**gsi_table(gsi("ggg", OnDemandThroughput={"MaxReadRequestUnits": 9}),
                                  gsi("hhh")),
                      OnDemandThroughput={"MaxWriteRequestUnits": 9})
    resp = update(api, name, BillingMode="PROVISIONED", ProvisionedThroughput=tp(1, 1))
    assert_validation(resp, INVALID + "ProvisionedThroughput must be specified for index: ggg,hhh")
    resp = update(api, name, BillingMode="PROVISIONED", ProvisionedThroughput=tp(1, 1),
                  OnDemandThroughput={"MaxWriteRequestUnits": 9})
    assert_validation(resp, INVALID + "MaxWriteRequestUnits for OnDemandThroughput cannot be "
                                      "specified when the table BillingMode is PROVISIONED")
    resp = update(api, name, BillingMode="PROVISIONED", ProvisionedThroughput=tp(1, 1),
                  GlobalSecondaryIndexUpdates=[
                      {"Update": {"IndexName": "ggg", "ProvisionedThroughput": tp(2, 2)}},
                      {"Update": {"IndexName": "hhh", "ProvisionedThroughput": tp(3, 3)}}])
    assert resp.status == 200, resp
    table = describe(api, name)
    assert "OnDemandThroughput" not in table
    assert table["WarmThroughput"] == INITIAL
    for index, units in [("ggg", 2), ("hhh", 3)]:
        desc = index_of(table, index)
        assert "OnDemandThroughput" not in desc
        assert desc["WarmThroughput"] == INITIAL
        assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == units


def test_switch_to_on_demand_zeroes_gsi_units(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1),
                      **gsi_table(gsi("ggg", ProvisionedThroughput=tp(20000, 5))))
    assert update(api, name, BillingMode="PAY_PER_REQUEST").status == 200
    desc = index_of(describe(api, name), "ggg")
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 0
    assert desc["WarmThroughput"] == warm(20000, 4000)


# --------------------------------------------------------------------------- UpdateTable GSIs


def test_index_on_demand_throughput_updates(api, make_table):
    name = make_table(**gsi_table(gsi("ggg")))
    resp = index_update(api, name, "ggg", OnDemandThroughput={"MaxReadRequestUnits": 30})
    assert resp.status == 200, resp
    assert index_of(describe(api, name), "ggg")["OnDemandThroughput"] == {"MaxReadRequestUnits": 30}
    index_update(api, name, "ggg", OnDemandThroughput={"MaxWriteRequestUnits": 40})
    assert index_of(describe(api, name), "ggg")["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 30, "MaxWriteRequestUnits": 40}
    resp = index_update(api, name, "ggg", OnDemandThroughput={"MaxReadRequestUnits": -1,
                                                            "MaxWriteRequestUnits": -1})
    assert index_of(resp.json["TableDescription"], "ggg")["OnDemandThroughput"] == {
        "MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}
    assert "OnDemandThroughput" not in index_of(describe(api, name), "ggg")
    assert_validation(index_update(api, name, "ggg", OnDemandThroughput={"MaxReadRequestUnits": 0}),
                      out_of_range("MaxReadRequestUnits", "index : ggg"))
    resp = index_update(api, name, "ggg", OnDemandThroughput={"MaxReadRequestUnits": 40001})
    assert_error(resp, 400, LIMIT,
                 quota_text("MaxReadRequestUnits", "OnDemandThroughput", "index : ggg"))


def test_index_provisioned_update_on_on_demand_table(api, make_table):
    name = make_table(**gsi_table(gsi("ggg")))
    assert_validation(index_update(api, name, "ggg", ProvisionedThroughput=tp(5, 5)),
                      "The only Updates for index: ggg when TableThroughputMode is PAY_PER_REQUEST "
                      "can be to OnDemandThroughput, WarmThroughput")


def test_index_on_demand_throughput_on_provisioned_table(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1),
                      **gsi_table(gsi("ggg", ProvisionedThroughput=tp(1, 1))))
    assert_validation(index_update(api, name, "ggg", OnDemandThroughput={"MaxWriteRequestUnits": 5}),
                      INVALID + "MaxWriteRequestUnits for OnDemandThroughput for index : ggg cannot "
                                "be specified when the table BillingMode is PROVISIONED")


def test_index_warm_throughput_updates(api, make_table):
    name = make_table(**gsi_table(gsi("ggg")))
    assert index_update(api, name, "ggg", WarmThroughput={"WriteUnitsPerSecond": 6000}).status == 200
    table = describe(api, name)
    assert index_of(table, "ggg")["WarmThroughput"] == warm(12000, 6000)
    assert table["WarmThroughput"] == INITIAL
    assert_validation(index_update(api, name, "ggg", WarmThroughput={"WriteUnitsPerSecond": 5999}),
                      lower_text("WriteUnitsPerSecond", CURRENT, "index ggg"))
    resp = index_update(api, name, "ggg", WarmThroughput={"ReadUnitsPerSecond": 40001})
    assert_error(resp, 400, LIMIT, quota_text("ReadUnitsPerSecond", "WarmThroughput", "index ggg"))


def test_index_provisioned_history_is_warm(api, make_table):
    name = make_table(ProvisionedThroughput=tp(1, 1),
                      **gsi_table(gsi("ggg", ProvisionedThroughput=tp(13000, 4500))))
    assert index_update(api, name, "ggg", ProvisionedThroughput=tp(1, 1)).status == 200
    desc = index_of(describe(api, name), "ggg")
    assert desc["WarmThroughput"] == warm(13000, 4500)
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 1
    resp = index_update(api, name, "ggg", ProvisionedThroughput=tp(40001, 1))
    assert_error(resp, 400, LIMIT,
                 "The requested ReadCapacityUnits for index ggg, 40001, is above the per index "
                 f"maximum for the account in {REGION}. Per index maximum: 40000. Refer to the "
                 "Amazon DynamoDB Developer Guide for current limits and how to request higher "
                 "limits.")


@pytest.mark.parametrize("member", ["OnDemandThroughput", "WarmThroughput"])
def test_index_empty_struct_fails_internally(api, make_table, member):
    name = make_table(**gsi_table(gsi("ggg")))
    resp = index_update(api, name, "ggg", **{member: {}})
    assert resp.status == 500, resp
    assert resp.json == {"__type": NS_COR_SERVICE + "InternalFailure"}


def test_index_warm_for_unknown_index_fails_internally(api, make_table):
    name = make_table(**gsi_table(gsi("ggg")))
    resp = index_update(api, name, "nope", WarmThroughput={"ReadUnitsPerSecond": 20000})
    assert resp.status == 500, resp
    assert resp.json == {"__type": NS_COR_SERVICE + "InternalFailure"}


def test_index_update_needs_a_change(api, make_table):
    name = make_table(**gsi_table(gsi("ggg")))
    assert_validation(update(api, name, GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "ggg"}}]),
                      "1 validation error detected: Value null at "
                      "'globalSecondaryIndexUpdates.1.member.update.provisionedThroughput' failed "
                      "to satisfy constraint: Member must not be null")


def test_create_index_with_settings(api, make_table):
    name = make_table()
    resp = update(api, name, AttributeDefinitions=[{"AttributeName": "ggg", "AttributeType": "S"}],
                  GlobalSecondaryIndexUpdates=[{"Create": gsi(
                      "ggg", OnDemandThroughput={"MaxReadRequestUnits": 3},
                      WarmThroughput={"ReadUnitsPerSecond": 14000})}])
    assert resp.status == 200, resp
    desc = index_of(describe(api, name), "ggg")
    assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 3}
    assert desc["WarmThroughput"] == warm(14000, 4000)


def test_create_index_with_warm_update(api, make_table):
    name = make_table(**gsi_table(gsi("hhh")))
    body = {"AttributeDefinitions": [{"AttributeName": "ggg", "AttributeType": "S"}]}
    text = "Create global secondary index cannot be specified when updating WarmThroughput"
    resp = update(api, name, WarmThroughput={"ReadUnitsPerSecond": 20000},
                  GlobalSecondaryIndexUpdates=[{"Create": gsi("ggg")}], **body)
    assert_validation(resp, text)
    resp = update(api, name, GlobalSecondaryIndexUpdates=[
        {"Create": gsi("ggg")},
        {"Update": {"IndexName": "hhh", "WarmThroughput": {"ReadUnitsPerSecond": 20000}}}], **body)
    assert_validation(resp, text)


# --------------------------------------------------------------------------- DeleteTable, limits


def test_delete_table_answer(api):
    resp = create(api, OnDemandThroughput={"MaxReadRequestUnits": 8})
    name = resp.json["TableDescription"]["TableName"]
    desc = api.ok("DeleteTable", {"TableName": name})["TableDescription"]
    assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 8}
    assert desc["WarmThroughput"] == warm(12000, 4000, "DELETING")


def test_describe_limits(ddb):
    limits = ddb.describe_limits()
    limits.pop("ResponseMetadata")
    assert limits == {"AccountMaxReadCapacityUnits": 80000, "AccountMaxWriteCapacityUnits": 80000,
                      "TableMaxReadCapacityUnits": 40000, "TableMaxWriteCapacityUnits": 40000}


# --------------------------------------------------------------------------- account quota


def account_text(member, reserved, limit, requested):
    return (f"This request would have caused the {member} limit to be exceeded for the account "
            f"in {REGION}. Current {member} reserved by the account: {reserved}. Limit: {limit}. "
            f"Requested: {requested}. Refer to the Amazon DynamoDB Developer Guide for current "
            "limits and how to request higher limits.")


@pytest.mark.parametrize("capacity", ["off", "enforce"])
def test_account_quota_holds_all_provisioned_tables(kumo_bin, tmp_path_factory, capacity):
    """The provisioned units of every table and its GSIs together stay within --account-quota
    (whatever the capacity mode); on-demand tables hold none."""
    flags = {"capacity": capacity, "account-quota": "100:60"}
    with capacity_server(kumo_bin, tmp_path_factory, flags) as cs:
        first = cs.provisioned(40, 20, **gsi_table(gsi("gs1", ProvisionedThroughput=tp(10, 10))))
        cs.create()  # on demand
        args = create_table_args(unique_name("cap"), ProvisionedThroughput=tp(51, 1))
        assert_error(cs.api("CreateTable", args), 400, LIMIT,
                     account_text("ReadCapacityUnits", 50, 100, 51))
        args["ProvisionedThroughput"] = tp(50, 31)
        assert_error(cs.api("CreateTable", args), 400, LIMIT,
                     account_text("WriteCapacityUnits", 30, 60, 31))
        assert cs.api("ListTables", {}).json["TableNames"].count(args["TableName"]) == 0
        second = cs.create(name=args["TableName"], ProvisionedThroughput=tp(50, 30))
        # Raising a table: the others hold 100 reads; the first asks for 41 + 10.
        assert_error(update(cs.api, first, ProvisionedThroughput=tp(41, 20)), 400, LIMIT,
                     account_text("ReadCapacityUnits", 100, 100, 51))
        # A new GSI's units count with its table's.
        assert_error(update(cs.api, second, AttributeDefinitions=[
            {"AttributeName": "gs2", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[
            {"Create": gsi("gs2", ProvisionedThroughput=tp(1, 1))}]), 400, LIMIT,
            account_text("ReadCapacityUnits", 100, 100, 51))
        # Lowering is always allowed, and frees units for another table.
        assert update(cs.api, second, ProvisionedThroughput=tp(10, 10)).status == 200
        assert update(cs.api, first, ProvisionedThroughput=tp(80, 20)).status == 200
        # Switching to on demand frees the table's and its GSIs' units.
        assert update(cs.api, first, BillingMode="PAY_PER_REQUEST").status == 200
        assert describe(cs.api, first)["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        cs.provisioned(90, 50)
