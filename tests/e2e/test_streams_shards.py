"""Stream shards follow the table's partitions, as in DynamoDB: a stream starts with one
shard, and when the table's partitions split at a token (for size, heat or raised
throughput) the open shard holding that token is closed (EndingSequenceNumber) and two
children open, each naming it as ParentShardId and starting after its end. A record goes to
the open shard holding its item's token, so each item's changes stay in order within one
shard at a time, and a consumer that reads parents before children reads every change once,
in order. DescribeStream pages through the shards (Limit, ExclusiveStartShardId,
LastEvaluatedShardId) and lists a shard's children (ShardFilter CHILD_SHARDS).
"""

import pytest

from capacity_helpers import MAX_ITEM, capacity_server, item
from kumo_testlib import S
from stream_helpers import (
    all_shards,
    drain,
    get_records,
    read_all_shards,
    seq,
    shard_iterator,
    streams_api_for,
)

STREAM = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}}


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    """Partitions of 1 MB, so that three items of 400 KB split one."""
    with capacity_server(kumo_bin, tmp_path_factory, {"partition-size-mb": 1}) as cs:
        yield cs


@pytest.fixture(scope="module")
def streams(srv):
    return streams_api_for(srv.srv)


def stream_arn(srv, table):
    return srv.describe(table)["LatestStreamArn"]


def changes(records):
    return [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records]


def check_every_change_once_in_order(streams, arn, expected):
    """Reading every shard, parents first: each shard's records lie in its range and in
    order, and all of them, by sequence number, are exactly `expected`."""
    shards, by_shard = read_all_shards(streams, arn)
    everything = []
    for shard in shards:
        records = by_shard[shard["ShardId"]]
        numbers = [int(seq(r)) for r in records]
        assert numbers == sorted(numbers), shard
        low = int(shard["SequenceNumberRange"]["StartingSequenceNumber"])
        high = int(shard["SequenceNumberRange"].get("EndingSequenceNumber", 10 ** 40))
        assert all(low <= n <= high for n in numbers), shard
        everything += records
    everything.sort(key=lambda r: int(seq(r)))
    assert changes(everything) == expected
    return shards, by_shard


def test_a_size_split_closes_the_shard_and_opens_two_children(srv, streams):
    table = srv.provisioned(1, 999, **STREAM)
    arn = stream_arn(srv, table)
    (first,) = all_shards(streams, arn)
    assert set(first) == {"ShardId", "SequenceNumberRange"}
    assert "EndingSequenceNumber" not in first["SequenceNumberRange"]
    expected = []
    for pk in ("a", "b", "c"):
        assert srv.put(table, item(pk, MAX_ITEM)).status == 200
        expected.append(("INSERT", pk))
    srv.advance(1)  # 1.2 MB: the partition splits, and the shard with it
    (part_low, part_high) = srv.partitions(table)

    shards = all_shards(streams, arn)
    assert len(shards) == 3, shards
    parent, low, high = shards
    assert parent["ShardId"] == first["ShardId"]
    end = int(parent["SequenceNumberRange"]["EndingSequenceNumber"])
    assert parent["SequenceNumberRange"]["StartingSequenceNumber"] == \
        first["SequenceNumberRange"]["StartingSequenceNumber"]
    for child in (low, high):
        assert child["ParentShardId"] == parent["ShardId"]
        assert int(child["SequenceNumberRange"]["StartingSequenceNumber"]) > end
        assert "EndingSequenceNumber" not in child["SequenceNumberRange"]
    assert len({s["ShardId"] for s in shards}) == 3

    # The parent holds what was written before the split, read to its end: its last page
    # has no NextShardIterator.
    records, _, last = drain(streams, shard_iterator(streams, arn, shard_id=parent["ShardId"]))
    assert changes(records) == expected
    assert int(seq(records[-1])) <= end
    assert "NextShardIterator" not in last
    # LATEST of a closed shard is past its end.
    out = get_records(streams, shard_iterator(streams, arn, "LATEST", shard_id=parent["ShardId"]))
    assert out["Records"] == [] and "NextShardIterator" not in out

    # Later changes go to the child whose range holds the item's partition: an item's
    # changes all to one child.
    srv.advance(10)  # capacity for them
    for round_ in range(3):
        for pk in ("a", "b", "c", "d", "e", "f"):
            assert srv.put(table, item(pk, 1000 + round_)).status == 200
            expected.append(("INSERT" if pk in "def" and round_ == 0 else "MODIFY", pk))
    shards, by_shard = check_every_change_once_in_order(streams, arn, expected)
    keys_low = {r["dynamodb"]["Keys"]["pk"]["S"] for r in by_shard[low["ShardId"]]}
    keys_high = {r["dynamodb"]["Keys"]["pk"]["S"] for r in by_shard[high["ShardId"]]}
    assert keys_low and keys_high, (keys_low, keys_high)
    assert not keys_low & keys_high
    assert keys_low | keys_high == set("abcdef")
    # The children split where the partitions did: the key that went to the high partition
    # ("c", the one past half of the bytes) is in the high shard.
    assert part_low["cause"] == part_high["cause"] == "size"


def test_describe_stream_pages_and_filters_shards(srv, streams):
    table = srv.provisioned(1, 999, **STREAM)
    arn = stream_arn(srv, table)
    for pk in ("a", "b", "c"):
        assert srv.put(table, item(pk, MAX_ITEM)).status == 200
    srv.advance(1)
    parent, low, high = all_shards(streams, arn)
    full = streams.ok("DescribeStream", {"StreamArn": arn})["StreamDescription"]
    assert full["Shards"] == [parent, low, high]
    assert "LastEvaluatedShardId" not in full

    out = streams.ok("DescribeStream", {"StreamArn": arn, "Limit": 2})["StreamDescription"]
    assert out["Shards"] == [parent, low]
    assert out["LastEvaluatedShardId"] == low["ShardId"]
    out = streams.ok("DescribeStream", {"StreamArn": arn, "Limit": 2,
                                        "ExclusiveStartShardId": low["ShardId"]})
    assert out["StreamDescription"]["Shards"] == [high]
    assert "LastEvaluatedShardId" not in out["StreamDescription"]
    # Paging one shard at a time gives them all, in order.
    assert all_shards(streams, arn, page=1) == [parent, low, high]

    out = streams.ok("DescribeStream", {"StreamArn": arn, "ShardFilter": {
        "Type": "CHILD_SHARDS", "ShardId": parent["ShardId"]}})
    assert out["StreamDescription"]["Shards"] == [low, high]
    out = streams.ok("DescribeStream", {"StreamArn": arn, "ShardFilter": {
        "Type": "CHILD_SHARDS", "ShardId": low["ShardId"]}})
    assert out["StreamDescription"]["Shards"] == []

    # A sequence number of the parent's range is not one of a child's.
    first = parent["SequenceNumberRange"]["StartingSequenceNumber"]
    resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": low["ShardId"],
                                        "ShardIteratorType": "AT_SEQUENCE_NUMBER",
                                        "SequenceNumber": first})
    assert resp.status == 400
    assert resp.error_type == "ValidationException"
    assert resp.message == f"Invalid SequenceNumber {first} for ShardId {low['ShardId']}"


def test_raised_throughput_splits_the_shards_with_the_partitions(srv, streams):
    table = srv.provisioned(5000, 2000, **STREAM)  # four partitions, one shard
    arn = stream_arn(srv, table)
    expected = []
    for pk in "abcdefgh":
        assert srv.put(table, {"pk": S(pk)}).status == 200
        expected.append(("INSERT", pk))
    srv.api.ok("UpdateTable", {"TableName": table, "ProvisionedThroughput": {
        "ReadCapacityUnits": 8000, "WriteCapacityUnits": 2000}})
    assert len(srv.partitions(table)) == 8
    # Four new partition boundaries, each splitting the open shard that held it.
    shards = all_shards(streams, arn)
    assert len(shards) == 1 + 2 * 4, shards
    open_shards = [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
    assert len(open_shards) == 5
    for pk in "abcdefgh":
        assert srv.put(table, {"pk": S(pk), "v": S("1")}).status == 200
        expected.append(("MODIFY", pk))
    check_every_change_once_in_order(streams, arn, expected)


def test_shards_survive_a_restart(kumo_bin, tmp_path_factory, tmp_path):
    with capacity_server(kumo_bin, tmp_path_factory, {"partition-size-mb": 1},
                         data_dir=str(tmp_path / "data")) as srv:
        shards_survive_a_restart(srv, streams_api_for(srv.srv))


def shards_survive_a_restart(srv, streams):
    table = srv.provisioned(1, 999, **STREAM)
    arn = stream_arn(srv, table)
    expected = []
    for pk in ("a", "b", "c"):
        assert srv.put(table, item(pk, MAX_ITEM)).status == 200
        expected.append(("INSERT", pk))
    srv.advance(1)
    before = all_shards(streams, arn)
    assert len(before) == 3
    srv.advance(10)
    srv.restart()
    streams = streams_api_for(srv.srv)
    assert all_shards(streams, arn) == before
    for pk in ("a", "d"):
        assert srv.put(table, {"pk": S(pk)}).status == 200
        expected.append(("MODIFY" if pk == "a" else "INSERT", pk))
    check_every_change_once_in_order(streams, arn, expected)
