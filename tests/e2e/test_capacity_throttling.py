"""Provisioned throughput as DynamoDB enforces it: the table's read and write buckets refill at
RCU/WCU per second, keep up to 300 s of unused capacity for bursts (none with
--burst-seconds 0), admit a request while one unit is left and let a large read drive them
into debt; a refused request gets ProvisionedThroughputExceededException with
TableRead/WriteProvisionedThroughputExceeded and the table's ARN, consumes nothing and is
counted in the throttle metrics. Time moves only through the admin's manual clock."""

import pytest

from capacity_helpers import (
    KB,
    MAX_ITEM,
    PTEE,
    T1,
    Meters,
    arn,
    assert_throttle,
    capacity_server,
    item,
    key,
    units,
)


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"burst-seconds": 0}) as cs:
        yield cs


def read(srv, table, pk, consistent=True):
    return srv.get(table, key(pk), consistent, ReturnConsumedCapacity="TOTAL")


def refused_read(resp, table):
    assert_throttle(resp, PTEE, "TableReadProvisionedThroughputExceeded", arn(table), T1)


def refused_write(resp, table):
    assert_throttle(resp, PTEE, "TableWriteProvisionedThroughputExceeded", arn(table), T1)


def test_sixth_read_of_five_rcu_is_refused_until_a_second_passes(srv):
    table = srv.provisioned(5, 5)
    assert srv.put(table, item("a", 4 * KB)).status == 200  # 4 of the 5 write units
    for _ in range(5):
        resp = read(srv, table, "a")
        assert resp.status == 200, resp
        assert units(resp.json) == 1.0
    refused_read(read(srv, table, "a"), table)
    refused_read(read(srv, table, "a", consistent=False), table)  # 0.5 needs 0.5 left
    srv.advance(1)
    assert units(read(srv, table, "a").json) == 1.0


def test_refused_reads_consume_nothing_and_are_counted(srv):
    table = srv.provisioned(5, 5)
    srv.put(table, item("a", 4 * KB))
    for _ in range(5):
        assert read(srv, table, "a").status == 200
    for _ in range(3):
        refused_read(read(srv, table, "a"), table)
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.consumed("read") == 5.0
    assert meters.consumed("write") == 4.0
    assert meters.throttle_events("read") == 3
    assert meters.throttle_events("read", "provisioned_throughput") == 3
    assert meters.throttle_events("read", "key_range_throughput") == 0
    assert meters.throttle_events("write") == 0
    assert meters.throttled_requests("GetItem") == 3
    assert meters.throttled_requests("PutItem") == 0


def test_eventually_consistent_reads_cost_half(srv):
    table = srv.provisioned(2, 5)
    srv.put(table, item("a", 4 * KB))
    for _ in range(4):
        resp = read(srv, table, "a", consistent=False)
        assert resp.status == 200, resp
        assert units(resp.json) == 0.5
    refused_read(read(srv, table, "a", consistent=False), table)


def test_sixth_write_of_five_wcu_is_refused_and_not_written(srv):
    table = srv.provisioned(5, 5)
    for i in range(5):
        resp = srv.put(table, item(f"k{i}", KB), ReturnConsumedCapacity="TOTAL")
        assert resp.status == 200, resp
        assert units(resp.json) == 1.0
    refused_write(srv.put(table, item("k5", KB)), table)
    refused_write(srv.api("DeleteItem", {"TableName": table, "Key": key("k0")}), table)
    refused_write(srv.api("UpdateItem", {
        "TableName": table, "Key": key("k1"), "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": {"S": "x"}}}), table)
    assert not srv.exists(table, key("k5"))
    assert srv.exists(table, key("k0"))
    assert "v" not in srv.get(table, key("k1")).json["Item"]
    srv.advance(1)
    assert srv.put(table, item("k5", KB)).status == 200


def test_reads_and_writes_have_separate_buckets(srv):
    table = srv.provisioned(1, 5)
    srv.put(table, item("a", 100))
    assert read(srv, table, "a").status == 200
    refused_read(read(srv, table, "a"), table)
    for i in range(4):
        assert srv.put(table, item(f"w{i}", 100)).status == 200


def test_a_large_scan_runs_into_debt(srv):
    """One unit left admits a Scan reading 800 KB (200 units): the bucket owes 195 units,
    which 5 RCU repay in 39 s; at 39 s nothing is left, at 40 s a read passes."""
    table = srv.provisioned(5, 1000)
    for pk in ("a", "b"):
        assert srv.put(table, item(pk, MAX_ITEM)).status == 200
    resp = srv.api("Scan", {"TableName": table, "ConsistentRead": True,
                            "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert resp.json["Count"] == 2
    assert units(resp.json) == 200.0
    refused_read(read(srv, table, "a"), table)
    srv.advance(1)
    refused_read(read(srv, table, "a"), table)
    srv.advance(38)
    refused_read(read(srv, table, "a"), table)
    srv.advance(1)
    assert units(read(srv, table, "a").json) == 100.0


def test_raised_throughput_applies_at_once(srv):
    """UpdateTable keeps the bucket's level (here empty) and refills it at the new rate."""
    table = srv.provisioned(5, 5)
    srv.put(table, item("a", 100))
    for _ in range(5):
        assert read(srv, table, "a").status == 200
    refused_read(read(srv, table, "a"), table)
    srv.api.ok("UpdateTable", {"TableName": table, "ProvisionedThroughput": {
        "ReadCapacityUnits": 10, "WriteCapacityUnits": 5}})
    srv.advance(1)
    for _ in range(10):
        assert read(srv, table, "a").status == 200
    refused_read(read(srv, table, "a"), table)


def test_lowered_throughput_clamps_the_bucket(srv):
    table = srv.provisioned(10, 5)
    srv.put(table, item("a", 100))
    srv.api.ok("UpdateTable", {"TableName": table, "ProvisionedThroughput": {
        "ReadCapacityUnits": 2, "WriteCapacityUnits": 5}})
    for _ in range(2):
        assert read(srv, table, "a").status == 200
    refused_read(read(srv, table, "a"), table)


def test_boto3_sees_the_exception_and_its_reasons(srv):
    table = srv.provisioned(1, 1)
    srv.ddb.put_item(TableName=table, Item=item("a", 100))
    with pytest.raises(srv.ddb.exceptions.ProvisionedThroughputExceededException) as e:
        srv.ddb.put_item(TableName=table, Item=item("b", 100))
    err = e.value.response
    assert err["Error"]["Message"] == T1
    assert err["ResponseMetadata"]["HTTPStatusCode"] == 400
    # boto3 1.26's model predates ThrottlingReasons; the raw answers are checked above.


def test_a_table_named_by_arn_is_reported_by_its_own_arn(srv):
    table = srv.provisioned(1, 1)
    srv.put(table, item("a", 100))
    refused_write(srv.put(arn(table), item("b", 100)), table)


@pytest.fixture(scope="module")
def bursty(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory) as cs:  # 300 s of burst
        yield cs


def test_burst_keeps_300_seconds_of_unused_capacity(bursty):
    """5 RCU idle for 300 s hold 1,500 units: fifteen 100-unit reads at once, then none."""
    table = bursty.provisioned(5, 1000)
    assert bursty.put(table, item("a", MAX_ITEM)).status == 200
    bursty.advance(300)
    for _ in range(15):
        resp = read(bursty, table, "a")
        assert resp.status == 200, resp
        assert units(resp.json) == 100.0
    refused_read(read(bursty, table, "a"), table)


def test_burst_is_capped_at_300_seconds(bursty):
    table = bursty.provisioned(5, 1000)
    assert bursty.put(table, item("a", MAX_ITEM)).status == 200
    bursty.advance(1000)
    for _ in range(15):
        assert read(bursty, table, "a").status == 200
    refused_read(read(bursty, table, "a"), table)


def test_a_new_table_holds_one_seconds_worth(bursty):
    table = bursty.provisioned(5, 5)
    bursty.put(table, item("a", 100))
    for _ in range(5):
        assert read(bursty, table, "a").status == 200
    refused_read(read(bursty, table, "a"), table)
