"""The three capacity modes. `off` keeps no meters and never throttles, and ConsumedCapacity is
computed as always (the admin's table pages answer 409). `report` meters every unit exactly as
ConsumedCapacity reports it and never refuses, counting would-be throttles per second instead.
(`enforce`, the mode of the other capacity tests, meters the same way.)"""

import pytest

from capacity_helpers import (
    KB,
    MAX_ITEM,
    Meters,
    capacity_server,
    consumed_by_resource,
    item,
    key,
    metered,
    units,
)
from kumo_testlib import S

ORDER = 3584  # 3.5 KB: 4 write units, 1 strongly consistent read unit


def gsi_table(srv, **extra):
    return srv.create(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}], **extra)


def check_consumed_capacity(srv, table):
    """The ConsumedCapacity DynamoDB reports for a 3.5 KB order on a table with an ALL GSI."""
    out = srv.api.ok("PutItem", {"TableName": table, "Item": item("o1", ORDER, g=S("new")),
                                 "ReturnConsumedCapacity": "INDEXES"})
    assert consumed_by_resource(out["ConsumedCapacity"], table) == {None: 4.0, "by_g": 4.0}
    assert out["ConsumedCapacity"]["CapacityUnits"] == 8.0
    out = srv.api.ok("UpdateItem", {"TableName": table, "Key": key("o1"),
                                    "UpdateExpression": "SET g = :g",
                                    "ExpressionAttributeValues": {":g": S("paid")},
                                    "ReturnConsumedCapacity": "INDEXES"})
    assert consumed_by_resource(out["ConsumedCapacity"], table) == {None: 4.0, "by_g": 8.0}
    assert units(srv.get(table, key("o1"), ReturnConsumedCapacity="TOTAL").json) == 1.0
    assert units(srv.get(table, key("o1"), consistent=False,
                         ReturnConsumedCapacity="TOTAL").json) == 0.5
    out = srv.api.ok("Query", {"TableName": table, "IndexName": "by_g",
                               "KeyConditionExpression": "g = :g",
                               "ExpressionAttributeValues": {":g": S("paid")},
                               "ReturnConsumedCapacity": "INDEXES"})
    assert consumed_by_resource(out["ConsumedCapacity"], table) == {None: 0.0, "by_g": 0.5}


# --------------------------------------------------------------------------- off


@pytest.fixture(scope="module")
def off(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"capacity": "off"}) as cs:
        yield cs


def test_off_reports_consumed_capacity(off):
    check_consumed_capacity(off, gsi_table(off))


def test_off_never_throttles(off):
    table = off.provisioned(1, 1)
    for i in range(5):
        assert off.put(table, item(f"k{i}", MAX_ITEM)).status == 200
    for _ in range(5):
        assert off.get(table, key("k0")).status == 200


def test_off_has_no_table_pages(off):
    table = off.create()
    for path in ("/tables", f"/tables/{table}", f"/tables/{table}/partitions"):
        status, body = off.admin.get(path)
        assert status == 409, (path, body)


# --------------------------------------------------------------------------- report


@pytest.fixture(scope="module")
def report(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"capacity": "report"}) as cs:
        yield cs


def test_report_reports_consumed_capacity(report):
    check_consumed_capacity(report, gsi_table(report))


def test_report_never_refuses_and_counts_would_be_throttles(report):
    """1 WCU and 300 units in one second: all written; the second is a would-be throttle of
    the table's provisioned throughput (the partition's 1,000 units are not reached)."""
    table = report.provisioned(1, 1)
    meters = Meters(report.admin, table)
    with metered(report, table, "write") as delta:
        for i in range(3):
            resp = report.put(table, item(f"k{i}", 100 * KB), ReturnConsumedCapacity="TOTAL")
            assert resp.status == 200, resp
            assert units(resp.json) == 100.0
        for _ in range(3):
            assert report.get(table, key("k0")).status == 200
    assert delta == {None: 300.0}
    assert meters.consumed("read") == 75.0
    assert meters.throttle_events("write") == 0 and meters.throttle_events("read") == 0
    assert meters.throttled_requests("PutItem") == 0
    would = "kumo_would_throttle_seconds_total"
    assert meters.sample(would, reason="TableWriteProvisionedThroughputExceeded") == 1
    assert meters.sample(would, reason="TableReadProvisionedThroughputExceeded") == 1
    assert meters.sample(would, reason="TableWriteKeyRangeThroughputExceeded") == 0


def test_report_meters_what_consumed_capacity_reports(report):
    table = gsi_table(report)
    with metered(report, table, "write") as delta:
        out = report.api.ok("BatchWriteItem", {"ReturnConsumedCapacity": "INDEXES",
                                               "RequestItems": {table: [
                                                   {"PutRequest": {"Item": item(
                                                       f"k{i}", ORDER, g=S("v"))}}
                                                   for i in range(5)]}})
    assert delta == consumed_by_resource(out["ConsumedCapacity"], table) == {
        None: 20.0, "by_g": 20.0}
    with metered(report, table, "read") as delta:
        out = report.api.ok("Scan", {"TableName": table, "ConsistentRead": True,
                                     "ReturnConsumedCapacity": "INDEXES"})
    assert delta == {None: out["ConsumedCapacity"]["CapacityUnits"]}
    assert delta[None] == 5.0  # 5 × 3,584 bytes rounded up once to 20 KB
