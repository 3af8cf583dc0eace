"""On-demand throughput as DynamoDB limits it: a new table serves 12,000 read and 4,000 write
units a second at once, WarmThroughput raises that, a load sustained for a minute becomes the
previous peak and doubles the allowance 30 minutes after the last raise; OnDemandThroughput
caps the table and each GSI (ThrottlingException, …MaxOnDemandThroughputExceeded) and the
per-table quota caps both (…AccountLimitExceeded, or RequestLimitExceeded when configured).
The partition ceilings are raised here so that the table-level limits bind."""

import pytest

from capacity_helpers import (
    KB,
    LIMIT_EXCEEDED,
    MAX_ITEM,
    REQUEST_LIMIT,
    T4,
    T6,
    T7,
    THROTTLING,
    Meters,
    arn,
    assert_throttle,
    capacity_server,
    item,
    key,
    units,
)
from kumo_testlib import VALIDATION, S, assert_error, assert_validation, unique_name

WIDE_PARTITIONS = {"partition-read-units": 100000, "partition-write-units": 100000}


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, WIDE_PARTITIONS) as cs:
        yield cs


def gsi_table(srv, **gsi_extra):
    """On-demand table pk with GSI `by_g` (HASH g, ALL)."""
    return srv.create(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[dict({"IndexName": "by_g",
                                      "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                      "Projection": {"ProjectionType": "ALL"}}, **gsi_extra)])


def scaling_refusal(resp, table):
    assert_throttle(resp, THROTTLING, "TableWriteKeyRangeThroughputExceeded", arn(table), T4)


def test_a_new_table_takes_4000_write_units_at_once(srv):
    table = srv.create()
    for i in range(10):
        resp = srv.put(table, item(f"k{i}", MAX_ITEM), ReturnConsumedCapacity="TOTAL")
        assert resp.status == 200, resp
        assert units(resp.json) == 400.0
    scaling_refusal(srv.put(table, item("k10", KB)), table)
    assert not srv.exists(table, key("k10"))
    meters = Meters(srv.admin, table)
    srv.advance(1)
    assert meters.consumed("write") == 4000.0
    assert meters.throttle_events("write", "key_range_throughput") == 1
    assert meters.throttled_requests("PutItem") == 1
    assert srv.put(table, item("k10", KB)).status == 200


def test_new_tables_report_their_initial_warm_throughput(srv):
    table = gsi_table(srv)
    desc = srv.describe(table)
    want = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert desc["WarmThroughput"] == want
    assert desc["GlobalSecondaryIndexes"][0]["WarmThroughput"] == want


def test_warm_throughput_raises_the_allowance(srv):
    table = srv.create(WarmThroughput={"ReadUnitsPerSecond": 12000,
                                       "WriteUnitsPerSecond": 4400})
    assert srv.describe(table)["WarmThroughput"] == {
        "ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4400, "Status": "ACTIVE"}
    for i in range(11):
        assert srv.put(table, item(f"k{i}", MAX_ITEM)).status == 200
    scaling_refusal(srv.put(table, item("x", KB)), table)


def test_an_update_of_warm_throughput_applies_at_once(srv):
    table = srv.create()
    srv.api.ok("UpdateTable", {"TableName": table, "WarmThroughput": {
        "WriteUnitsPerSecond": 4800}})
    assert srv.describe(table)["WarmThroughput"]["WriteUnitsPerSecond"] == 4800
    srv.advance(1)
    for i in range(12):
        assert srv.put(table, item(f"k{i}", MAX_ITEM)).status == 200
    scaling_refusal(srv.put(table, item("x", KB)), table)


def test_max_write_request_units_cap_the_table(srv):
    table = srv.create(OnDemandThroughput={"MaxWriteRequestUnits": 10})
    assert srv.describe(table)["OnDemandThroughput"] == {"MaxWriteRequestUnits": 10}
    for i in range(10):
        assert srv.put(table, item(f"k{i}", KB)).status == 200
    resp = srv.put(table, item("k10", KB))
    assert_throttle(resp, THROTTLING, "TableWriteMaxOnDemandThroughputExceeded", arn(table), T6)
    assert not srv.exists(table, key("k10"))
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("write", "max_on_demand_throughput") == 1
    assert meters.throttle_events("write") == 1
    assert srv.put(table, item("k10", KB)).status == 200


def test_max_read_request_units_cap_the_table(srv):
    """2 read units a second: four eventually consistent reads of half a unit each."""
    table = srv.create(OnDemandThroughput={"MaxReadRequestUnits": 2})
    srv.put(table, item("a", 100))
    for _ in range(4):
        resp = srv.get(table, key("a"), consistent=False, ReturnConsumedCapacity="TOTAL")
        assert resp.status == 200, resp
        assert units(resp.json) == 0.5
    resp = srv.get(table, key("a"), consistent=False)
    assert_throttle(resp, THROTTLING, "TableReadMaxOnDemandThroughputExceeded", arn(table), T6)


def test_an_updated_maximum_applies_at_once(srv):
    table = srv.create(OnDemandThroughput={"MaxWriteRequestUnits": 2})
    for i in range(2):
        assert srv.put(table, item(f"k{i}", KB)).status == 200
    srv.api.ok("UpdateTable", {"TableName": table,
                               "OnDemandThroughput": {"MaxWriteRequestUnits": 5}})
    resp = srv.put(table, item("x", KB))  # the bucket keeps its (empty) level
    assert_throttle(resp, THROTTLING, "TableWriteMaxOnDemandThroughputExceeded", arn(table), T6)
    srv.advance(1)
    for i in range(5):
        assert srv.put(table, item(f"m{i}", KB)).status == 200
    resp = srv.put(table, item("x", KB))
    assert_throttle(resp, THROTTLING, "TableWriteMaxOnDemandThroughputExceeded", arn(table), T6)
    srv.api.ok("UpdateTable", {"TableName": table,
                               "OnDemandThroughput": {"MaxWriteRequestUnits": -1}})
    srv.advance(1)
    for i in range(20):
        assert srv.put(table, item(f"n{i}", KB)).status == 200


def test_max_write_request_units_of_a_gsi_hold_back_base_writes(srv):
    table = gsi_table(srv, OnDemandThroughput={"MaxWriteRequestUnits": 10})
    for i in range(10):
        resp = srv.put(table, item(f"k{i}", 500, g=S("v")), ReturnConsumedCapacity="INDEXES")
        assert resp.status == 200, resp
        assert resp.json["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {
            "by_g": {"CapacityUnits": 1.0}}
    resp = srv.put(table, item("k10", 500, g=S("v")))
    assert_throttle(resp, THROTTLING, "IndexWriteMaxOnDemandThroughputExceeded",
                    arn(table, "by_g"), T6)
    assert not srv.exists(table, key("k10"))
    assert srv.put(table, item("no-gsi-key", 500)).status == 200
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("write", "max_on_demand_throughput", index="by_g") == 1
    assert meters.throttle_events("write", index="by_g") == 1
    assert meters.throttled_requests("PutItem") == 1


def test_max_read_request_units_of_a_gsi_cap_its_queries(srv):
    table = gsi_table(srv, OnDemandThroughput={"MaxReadRequestUnits": 1})
    srv.put(table, item("a", 100, g=S("v")))
    query = {"TableName": table, "IndexName": "by_g", "KeyConditionExpression": "g = :g",
             "ExpressionAttributeValues": {":g": S("v")}, "ReturnConsumedCapacity": "INDEXES"}
    for _ in range(2):
        resp = srv.api("Query", query)
        assert resp.status == 200, resp
        assert resp.json["ConsumedCapacity"]["GlobalSecondaryIndexes"] == {
            "by_g": {"CapacityUnits": 0.5}}
    assert_throttle(srv.api("Query", query), THROTTLING, "IndexReadMaxOnDemandThroughputExceeded",
                    arn(table, "by_g"), T6)
    assert srv.get(table, key("a")).status == 200  # the table's own reads are not capped


# --------------------------------------------------------------------------- §6's texts

INVALID = "One or more parameter values were invalid: "


@pytest.mark.parametrize("value", [0, -2, -1])
def test_create_rejects_maxima_outside_the_range(srv, value):
    resp = srv.api("CreateTable", {
        "TableName": unique_name("never"), "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "OnDemandThroughput": {"MaxWriteRequestUnits": value}})
    assert_validation(resp, INVALID + "Requested MaxWriteRequestUnits for OnDemandThroughput "
                      "for table is outside of valid range")


def test_a_provisioned_table_takes_no_maximum(srv):
    resp = srv.api("CreateTable", {
        "TableName": unique_name("never"), "ProvisionedThroughput": {"ReadCapacityUnits": 1,
                                                        "WriteCapacityUnits": 1},
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "OnDemandThroughput": {"MaxReadRequestUnits": 5}})
    assert_validation(resp, INVALID + "MaxReadRequestUnits for OnDemandThroughput cannot be "
                      "specified when table BillingMode is PROVISIONED.")


def test_a_maximum_above_the_quota_is_a_limit_error(srv):
    table = srv.create()
    resp = srv.api("UpdateTable", {"TableName": table,
                                   "OnDemandThroughput": {"MaxReadRequestUnits": 40001}})
    assert_error(resp, 400, LIMIT_EXCEEDED,
                 "Subscriber limit exceeded: Requested MaxReadRequestUnits for "
                 "OnDemandThroughput for table exceeds TableMaxReadCapacityUnits of the "
                 "account in region us-east-1")


def test_warm_throughput_cannot_decrease(srv):
    table = srv.create(WarmThroughput={"ReadUnitsPerSecond": 13000})
    resp = srv.api("UpdateTable", {"TableName": table,
                                   "WarmThroughput": {"ReadUnitsPerSecond": 12500}})
    assert_validation(resp, INVALID + "Requested ReadUnitsPerSecond for WarmThroughput for "
                      "table is lower than current WarmThroughput, decreasing WarmThroughput "
                      "is not supported")


def test_on_demand_warm_throughput_starts_at_the_initial_throughput(srv):
    resp = srv.api("CreateTable", {
        "TableName": unique_name("never"), "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "WarmThroughput": {"ReadUnitsPerSecond": 11999}})
    assert resp.status == 400 and resp.json["__type"] == VALIDATION, resp
    assert resp.message == (
        INVALID + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than "
        "initial throughput for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/"
        "latest/developerguide/on-demand-capacity-mode.html#on-demand-capacity-mode-initial")


# --------------------------------------------------------------------------- the previous peak


def test_a_sustained_peak_doubles_the_allowance_after_30_minutes(kumo_bin, tmp_path_factory):
    """With 120:40 initial units: 40 write units a second for 60 s, 30 minutes after the
    table's creation, become the previous peak; the allowance and the warm throughput become
    80, and a third write in one second is refused."""
    flags = dict(WIDE_PARTITIONS, **{"on-demand-initial": "120:40"})
    with capacity_server(kumo_bin, tmp_path_factory, flags) as srv:
        table = srv.create()
        assert srv.describe(table)["WarmThroughput"] == {
            "ReadUnitsPerSecond": 120, "WriteUnitsPerSecond": 40, "Status": "ACTIVE"}
        assert srv.put(table, item("a", 40 * KB)).status == 200
        scaling_refusal(srv.put(table, item("b", KB)), table)
        srv.advance(1800)
        for second in range(60):
            resp = srv.put(table, item(f"s{second}", 40 * KB))
            assert resp.status == 200, (second, resp)
            srv.advance(1)
            want = 80 if second == 59 else 40
            assert srv.describe(table)["WarmThroughput"]["WriteUnitsPerSecond"] == want, second
        srv.advance(1)
        for pk in ("x", "y"):
            assert srv.put(table, item(pk, 40 * KB)).status == 200
        scaling_refusal(srv.put(table, item("z", KB)), table)
        assert srv.describe(table)["WarmThroughput"] == {
            "ReadUnitsPerSecond": 120, "WriteUnitsPerSecond": 80, "Status": "ACTIVE"}


# --------------------------------------------------------------------------- the quota


@pytest.fixture(scope="module")
def quota(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"table-quota": "100:100"}) as cs:
        yield cs


def test_the_per_table_quota_caps_an_on_demand_table(quota):
    table = quota.create()
    assert quota.put(table, item("a", 100 * KB)).status == 200
    resp = quota.put(table, item("b", KB))
    assert_throttle(resp, THROTTLING, "TableWriteAccountLimitExceeded", arn(table), T7)
    quota.advance(1)
    assert Meters(quota.admin, table).throttle_events("write", "account_limit") == 1


def test_the_per_table_quota_caps_each_gsi(quota):
    """A change of the GSI key writes the index twice (delete and put) and the table once:
    two such updates of a 40 KB item leave the table 20 units and the GSI a debt of 60."""
    table = gsi_table(quota)
    assert quota.put(table, item("p", 40 * KB, g=S("v1"))).status == 200
    quota.advance(1)
    for value in ("v2", "v3"):
        resp = quota.api("UpdateItem", {
            "TableName": table, "Key": key("p"), "UpdateExpression": "SET g = :g",
            "ExpressionAttributeValues": {":g": S(value)}, "ReturnConsumedCapacity": "INDEXES"})
        assert resp.status == 200, resp
        cc = resp.json["ConsumedCapacity"]
        assert cc["Table"] == {"CapacityUnits": 40.0}
        assert cc["GlobalSecondaryIndexes"] == {"by_g": {"CapacityUnits": 80.0}}
    resp = quota.put(table, item("q", KB, g=S("x")))
    assert_throttle(resp, THROTTLING, "IndexWriteAccountLimitExceeded", arn(table, "by_g"), T7)
    assert not quota.exists(table, key("q"))
    assert quota.put(table, item("r", KB)).status == 200  # no GSI key: the table only
    quota.advance(1)
    meters = Meters(quota.admin, table)
    assert meters.throttle_events("write", "account_limit", index="by_g") == 1
    assert meters.throttle_events("write", "account_limit") == 0


@pytest.fixture(scope="module")
def read_quota(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"table-quota": "100:1000"}) as cs:
        yield cs


def query_g(srv, table, value):
    return srv.api("Query", {"TableName": table, "IndexName": "by_g",
                             "KeyConditionExpression": "g = :g",
                             "ExpressionAttributeValues": {":g": S(value)}})


def test_the_per_table_quota_caps_an_on_demand_tables_reads(read_quota):
    """A strongly consistent read of a 400 KB item is 100 read units: the whole quota."""
    table = read_quota.create()
    assert read_quota.put(table, item("a", MAX_ITEM)).status == 200
    read_quota.advance(1)
    assert read_quota.get(table, key("a")).status == 200
    resp = read_quota.get(table, key("a"), consistent=False)
    assert_throttle(resp, THROTTLING, "TableReadAccountLimitExceeded", arn(table), T7)
    read_quota.advance(1)
    meters = Meters(read_quota.admin, table)
    assert meters.throttle_events("read", "account_limit") == 1
    assert read_quota.get(table, key("a")).status == 200


def test_the_per_table_quota_caps_each_gsis_reads(read_quota):
    """A GSI read is eventually consistent: a 400 KB entry is 50 units, two take the quota."""
    table = gsi_table(read_quota)
    assert read_quota.put(table, item("a", MAX_ITEM, g=S("v"))).status == 200
    read_quota.advance(1)
    for _ in range(2):
        resp = query_g(read_quota, table, "v")
        assert resp.status == 200, resp
        assert resp.json["Count"] == 1
    resp = query_g(read_quota, table, "v")
    assert_throttle(resp, THROTTLING, "IndexReadAccountLimitExceeded", arn(table, "by_g"), T7)
    assert read_quota.get(table, key("a")).status == 200  # the table has its own quota
    read_quota.advance(1)
    meters = Meters(read_quota.admin, table)
    assert meters.throttle_events("read", "account_limit", index="by_g") == 1
    assert meters.throttle_events("read", "account_limit") == 0
    assert query_g(read_quota, table, "v").status == 200


def test_account_limit_as_request_limit_exceeded(kumo_bin, tmp_path_factory):
    flags = {"table-quota": "100:100", "account-limit-exception": "RequestLimitExceeded"}
    with capacity_server(kumo_bin, tmp_path_factory, flags) as srv:
        table = srv.create()
        assert srv.put(table, item("a", 100 * KB)).status == 200
        resp = srv.put(table, item("b", KB))
        assert_throttle(resp, REQUEST_LIMIT, "TableWriteAccountLimitExceeded", arn(table), T7)
