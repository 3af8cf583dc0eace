"""Partitions as DynamoDB keeps them: the initial count from the throughput (and warm
throughput), even token ranges, each partition capped at 3,000 read and 1,000 write units a
second independently (…KeyRangeThroughputExceeded: ProvisionedThroughputExceededException on
a provisioned table, ThrottlingException on-demand), splits for size, heat (refused when one
key carries the traffic) and raised throughput (doubling), and the map kept across a restart.
"""

import pytest

from capacity_helpers import (
    KB,
    MAX_ITEM,
    PTEE,
    T1,
    T4,
    THROTTLING,
    Meters,
    arn,
    assert_throttle,
    capacity_server,
    item,
    key,
)
from kumo_testlib import S

TOKENS = 1 << 64
ITEM_OVERHEAD = 100  # partition sizes count as TableSizeBytes does: item size + 100


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"partition-size-mb": 1}) as cs:
        yield cs


def tokens(p, name):
    return int(p[name], 16)


def assert_even(parts, count):
    """`count` partitions covering [0, 2^64) in order: partition i starts at i·2^64/count."""
    assert len(parts) == count, parts
    for i, p in enumerate(parts):
        assert tokens(p, "first_token") == i * TOKENS // count, (i, parts)
    assert_contiguous(parts)


def assert_contiguous(parts):
    assert tokens(parts[0], "first_token") == 0
    for low, high in zip(parts, parts[1:]):
        assert tokens(low, "end_token") + 1 == tokens(high, "first_token"), parts
    assert tokens(parts[-1], "end_token") == TOKENS - 1
    assert len({p["id"] for p in parts}) == len(parts), parts


def throughput(rcu, wcu):
    return {"ProvisionedThroughput": {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}}



@pytest.mark.parametrize("settings, count", [
    (throughput(5, 5), 1),
    (throughput(1000, 500), 1),
    (throughput(1000, 1000), 2),
    (throughput(5000, 2000), 4),
    ({"BillingMode": "PAY_PER_REQUEST"}, 4),
    ({"BillingMode": "PAY_PER_REQUEST",
      "WarmThroughput": {"ReadUnitsPerSecond": 30000, "WriteUnitsPerSecond": 10000}}, 10),
    (dict(throughput(10, 10),
          WarmThroughput={"ReadUnitsPerSecond": 6000, "WriteUnitsPerSecond": 1000}), 2),
], ids=["5/5", "1000/500", "1000/1000", "5000/2000", "on-demand", "on-demand-warm",
        "provisioned-warm"])
def test_initial_partition_count(srv, settings, count):
    table = srv.create(**settings)
    parts = srv.partitions(table)
    assert_even(parts, count)
    assert {p["cause"] for p in parts} == {"initial"}
    assert {p["status"] for p in parts} == {"ok"}


def test_a_gsi_has_its_own_partitions(srv):
    table = srv.create(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 5000, "WriteCapacityUnits": 2000}}])
    assert_even(srv.partitions(table), 1)
    assert_even(srv.partitions(table, index="by_g"), 4)


@pytest.mark.parametrize("mode", ["provisioned", "on-demand"])
def test_one_key_past_1000_write_units_a_second(srv, mode):
    if mode == "provisioned":
        table, exception, message = srv.provisioned(1, 2000), PTEE, T1
    else:
        table, exception, message = srv.create(), THROTTLING, T4
    for size in (MAX_ITEM, MAX_ITEM, 200 * KB):  # 1,000 units
        assert srv.put(table, item("hot", size)).status == 200
    resp = srv.put(table, item("hot", KB))
    assert_throttle(resp, exception, "TableWriteKeyRangeThroughputExceeded", arn(table), message)
    assert srv.get(table, key("hot")).status == 200  # reads have their own budget
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("write", "key_range_throughput") == 1
    assert meters.throttle_events("write", "provisioned_throughput") == 0
    assert srv.put(table, item("hot", KB)).status == 200


@pytest.mark.parametrize("mode", ["provisioned", "on-demand"])
def test_one_key_past_3000_read_units_a_second(srv, mode):
    if mode == "provisioned":
        table, exception, message = srv.provisioned(4000, 1000), PTEE, T1
    else:
        table, exception, message = srv.create(), THROTTLING, T4
    assert srv.put(table, item("hot", MAX_ITEM)).status == 200
    srv.advance(1)
    for _ in range(30):  # 100 units each
        assert srv.get(table, key("hot")).status == 200
    resp = srv.get(table, key("hot"), consistent=False)
    assert_throttle(resp, exception, "TableReadKeyRangeThroughputExceeded", arn(table), message)
    assert srv.put(table, item("hot", MAX_ITEM)).status == 200  # writes have their own
    srv.advance(1)
    assert srv.get(table, key("hot")).status == 200


def test_one_gsi_key_past_3000_read_units_a_second(srv):
    """A GSI partition serves 3,000 read units a second like a table's: 60 eventually
    consistent Queries of one 400 KB entry (50 units each) take them all."""
    table = srv.create(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    assert srv.put(table, item("a", MAX_ITEM, g=S("hot"))).status == 200
    srv.advance(1)
    query = {"TableName": table, "IndexName": "by_g", "KeyConditionExpression": "g = :g",
             "ExpressionAttributeValues": {":g": S("hot")}}
    for _ in range(60):
        assert srv.api("Query", query).status == 200
    resp = srv.api("Query", query)
    assert_throttle(resp, THROTTLING, "IndexReadKeyRangeThroughputExceeded",
                    arn(table, "by_g"), T4)
    assert srv.get(table, key("a")).status == 200  # the table's partitions are apart
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("read", "key_range_throughput", index="by_g") == 1
    assert meters.throttle_events("read", "key_range_throughput") == 0
    assert srv.api("Query", query).status == 200


def test_a_partition_over_the_size_limit_splits_at_half_its_bytes(srv):
    table = srv.provisioned(1, 999)
    (parent,) = srv.partitions(table)
    for pk in ("a", "b"):
        assert srv.put(table, item(pk, MAX_ITEM)).status == 200
    srv.advance(1)
    assert len(srv.partitions(table)) == 1  # 800 KB
    assert srv.put(table, item("c", MAX_ITEM)).status == 200
    srv.advance(1)
    parts = srv.partitions(table)
    assert_contiguous(parts)
    assert len(parts) == 2, parts
    assert {p["cause"] for p in parts} == {"size"}
    assert {p["parent"] for p in parts} == {parent["id"]}
    assert parent["id"] not in {p["id"] for p in parts}
    entry = MAX_ITEM + ITEM_OVERHEAD
    assert sorted(p["bytes"] for p in parts) == [entry, 2 * entry]


def test_raised_throughput_doubles_the_partitions(srv):
    table = srv.provisioned(5000, 2000)
    before = srv.partitions(table)
    assert_even(before, 4)
    srv.api.ok("UpdateTable", {"TableName": table, "ProvisionedThroughput": {
        "ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000}})
    after = srv.partitions(table)
    assert_even(after, 8)
    assert {p["cause"] for p in after} == {"throughput"}
    old = [p["id"] for p in before]
    assert not set(old) & {p["id"] for p in after}
    assert [p["parent"] for p in after] == [pid for pid in old for _ in range(2)]


def test_lowered_throughput_keeps_the_partitions(srv):
    table = srv.provisioned(1000, 1000)
    srv.api.ok("UpdateTable", {"TableName": table, "ProvisionedThroughput": {
        "ReadCapacityUnits": 5, "WriteCapacityUnits": 5}})
    assert_even(srv.partitions(table), 2)


# --------------------------------------------------------------------------- heat


@pytest.fixture(scope="module")
def small(kumo_bin, tmp_path_factory):
    """Partitions of 300 read and 100 write units, so that heat is cheap to make."""
    flags = {"partition-read-units": 300, "partition-write-units": 100}
    with capacity_server(kumo_bin, tmp_path_factory, flags) as cs:
        yield cs


def heat(srv, table, keys, seconds):
    """`seconds` seconds of 90 write units a second (90 % of the ceiling) over `keys`."""
    size = 90 * KB // len(keys)
    for second in range(seconds):
        for pk in keys:
            resp = srv.put(table, item(pk, size))
            assert resp.status == 200, (second, pk, resp)
        srv.advance(1)


def test_a_hot_partition_splits_between_its_keys_after_60_seconds(small):
    table = small.provisioned(1, 95)  # one partition
    (parent,) = small.partitions(table)
    heat(small, table, ("a", "b"), 59)
    assert len(small.partitions(table)) == 1
    heat(small, table, ("a", "b"), 1)
    parts = small.partitions(table)
    assert_contiguous(parts)
    assert len(parts) == 2, parts
    assert {p["cause"] for p in parts} == {"heat"}
    assert {p["parent"] for p in parts} == {parent["id"]}
    # Each key now has a partition of its own: 100 units each in one second, then no more.
    small.advance(1)
    for pk in ("a", "b"):
        assert small.put(table, item(pk, 100 * KB)).status == 200, pk
    resp = small.put(table, item("a", KB))
    assert_throttle(resp, PTEE, "TableWriteKeyRangeThroughputExceeded", arn(table), T1)


def test_a_partition_hot_from_one_key_does_not_split(small):
    table = small.provisioned(1, 95)
    heat(small, table, ("k",), 61)
    (part,) = small.partitions(table)
    assert part["status"] == "hot-key", part
    if "hot_key" in part:
        assert part["hot_key"] == {"pk": {"S": "k"}}, part
    heat(small, table, ("k",), 60)
    assert len(small.partitions(table)) == 1


# --------------------------------------------------------------------------- restart


def test_partition_maps_survive_a_restart(kumo_bin, tmp_path_factory, tmp_path):
    with capacity_server(kumo_bin, tmp_path_factory, {"partition-size-mb": 1},
                         data_dir=tmp_path / "data") as srv:
        doubled = srv.provisioned(5000, 2000)
        srv.api.ok("UpdateTable", {"TableName": doubled, "ProvisionedThroughput": {
            "ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000}})
        sized = srv.provisioned(1, 999)
        for pk in ("a", "b"):
            srv.put(sized, item(pk, MAX_ITEM))
        srv.advance(1)
        srv.put(sized, item("c", MAX_ITEM))
        srv.advance(1)
        before = {t: srv.partitions(t) for t in (doubled, sized)}
        assert len(before[sized]) == 2
        srv.restart()
        fields = ("id", "first_token", "end_token", "parent", "cause")
        for table, parts in before.items():
            after = srv.partitions(table)
            assert [{f: p[f] for f in fields} for p in after] == [
                {f: p[f] for f in fields} for p in parts]
        assert sorted(p["bytes"] for p in srv.partitions(sized)) == sorted(
            p["bytes"] for p in before[sized])
