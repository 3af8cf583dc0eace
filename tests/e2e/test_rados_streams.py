"""Stream records on Kumo's RADOS back end (run by scripts/test-rados.sh).

A record ([T][3][sequence][token]) is kept by the stream object `s<start>` of its item's
partition when it is written (docs/scale-out.md, "Stream records"): a table's records grow
with its partitions, not in one object. A read merges the stream objects in sequence order.
DeleteTable removes the partitions but keeps the stream objects and the partition map,
marked dropped, while records are left; the 24-hour trim then erases the records and the
last one takes the objects and the map with it. Each partition numbers its own records, so
the trim goes through each stream object on its own, and each shard has its own trim
horizon. A stream laid out in one object `stream`
moves to the stream objects at the next start.
"""

import os
import re

import pytest

from kumo_testlib import KumoServer, N, S, assert_error, on_rados, wait_until
from rados_helpers import check_layout, deployment_prefix, omap, rados
from stream_helpers import (
    TRIMMED,
    TRIMMED_MESSAGE,
    check_interleaving,
    create_stream_table,
    read_all_shards,
    read_stream,
    seq,
    streams_api_for,
)

pytestmark = pytest.mark.skipif(not (on_rados() and os.environ.get("KUMO_CEPH_CONF")),
                                reason="needs $KUMO_RADOS_POOL on the cluster of "
                                       "$KUMO_CEPH_CONF (scripts/test-rados.sh)")

PARTITION_KEYS = 40
DAY = 86400


@pytest.fixture
def srv(kumo_bin, tmp_path):
    """A server on the manual clock, partitions of PARTITION_KEYS keys."""
    server = KumoServer(kumo_bin, str(tmp_path), data_dir=str(tmp_path / "d"),
                        flags={"clock": "manual", "ttl-interval": "0.05",
                               "rados-partition-keys": PARTITION_KEYS}, admin_port=0)
    yield server.start()
    server.stop()


def table_objects(prefix, kind):
    """The objects of the deployment's table namespaces, as (namespace, oid): partitions
    (`kind` "p"), stream objects ("s") or the object named `kind`."""
    pattern = re.compile(f"^{kind}[0-9a-f]{{16}}$" if kind in ("p", "s") else f"^{kind}$")
    out = []
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t") and pattern.match(oid):
            out.append((ns, oid))
    return out


def stored_records(prefix):
    return sum(len([k for k in omap(ns, oid) if k[4] == 3])
               for ns, oid in table_objects(prefix, "s"))


def catalog_marks(prefix):
    """The catalog's partition maps and dropped marks, as {(kind, table id)}."""
    return {(bytes(k[1:-4]), int.from_bytes(k[-4:], "big"))
            for k in omap(prefix, "kumo.catalog")
            if k.startswith(b"\xffmap") or k.startswith(b"\xffd")}


def keys_by_shard(streams, arn):
    """The keys of each shard's records, in the shard's order (shards parents first)."""
    shards, by_shard = read_all_shards(streams, arn)
    return [[r["dynamodb"]["Keys"]["pk"]["S"] for r in by_shard[s["ShardId"]]] for s in shards]


def check_keys(streams, arn, keys):
    """The stream holds a record of each of `keys` once, each shard's in `keys`' order."""
    check_interleaving(keys_by_shard(streams, arn), keys)


def test_records_live_with_their_partitions_and_outlive_a_deleted_table(srv):
    api, admin, streams = srv.api(), srv.admin, streams_api_for(srv)
    prefix = deployment_prefix(srv)
    table, arn = create_stream_table(api, srv.client(), "KEYS_ONLY")
    for i in range(200):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S(f"k{i:03}")}})
    assert check_layout(prefix) > 4
    assert len(table_objects(prefix, "s")) > 4
    assert stored_records(prefix) == 200
    check_keys(streams, arn, [f"k{i:03}" for i in range(200)])

    # Deleted: the partitions go; the records stay readable, found through the map.
    api.ok("DeleteTable", {"TableName": table})
    assert table_objects(prefix, "p") == []
    assert {kind for kind, _ in catalog_marks(prefix)} == {b"map", b"d"}
    check_keys(streams, arn, [f"k{i:03}" for i in range(200)])

    # A day later the trim erases them, and with the last one the objects and the map go.
    admin.advance(DAY + 60)
    wait_until(lambda: not table_objects(prefix, "s"), timeout=20,
               what="the stream objects removed")
    assert catalog_marks(prefix) == set()


def test_a_stream_kept_in_one_object_moves_to_the_stream_objects(srv, tmp_path):
    """A table's records were once kept in one object `stream` of its namespace (keys of
    the sequence alone): the next start moves them to the stream objects, and they read
    as before. (Then a stream had one shard, numbered by the front end: here the records of
    the first partition's shard stand for them, whose numbers are their own.)"""
    api, streams = srv.api(), streams_api_for(srv)
    prefix = deployment_prefix(srv)
    table, arn = create_stream_table(api, srv.client(), "KEYS_ONLY")
    for i in range(120):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S(f"k{i:03}")}})
    before = keys_by_shard(streams, arn)
    srv.stop()
    key_file, value_file = tmp_path / "key", tmp_path / "value"
    moved = 0
    for ns, oid in table_objects(prefix, "s"):
        if oid != "s" + "0" * 16:
            continue
        for key, value in omap(ns, oid).items():
            key_file.write_bytes(key[:13])  # the sequence number alone
            value_file.write_bytes(value)
            rados("-N", ns, "setomapval", "stream", "--omap-key-file", str(key_file),
                  "--input-file", str(value_file))
            moved += 1
        rados("-N", ns, "rm", oid)
    assert moved == len(before[0]) > 0 and table_objects(prefix, "stream")
    assert stored_records(prefix) == 120 - moved

    srv.start()
    streams = streams_api_for(srv)
    assert table_objects(prefix, "stream") == []
    assert stored_records(prefix) == 120
    check_layout(prefix)
    assert keys_by_shard(streams, arn) == before
    check_keys(streams, arn, [f"k{i:03}" for i in range(120)])


def trimmed_reads(streams, arn, shard_id):
    """The shard's records from TRIM_HORIZON, or None when a pass trimmed the record the
    fresh iterator pointed at before GetRecords used it (TrimmedDataAccessException, as
    DynamoDB answers)."""
    try:
        return read_stream(streams, arn, shard_id=shard_id)
    except AssertionError as error:
        if TRIMMED not in str(error):
            raise
        return None


def check_trimmed(streams, arn, shard_id, number):
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                            "ShardIteratorType": kind, "SequenceNumber": number})
        assert_error(resp, 400, TRIMMED, TRIMMED_MESSAGE)


def test_a_quiet_partition_does_not_hold_back_the_trim_of_a_busy_one(srv):
    """Each partition numbers its own records, so a quiet one's numbers stay low. DynamoDB
    keeps a stream's records 24 hours: a busy partition's older records go after that,
    although a quiet one has a recent record of a lower number; each shard's TRIM_HORIZON
    and trimmed sequence numbers follow its own partition's trim."""
    api, admin, streams = srv.api(), srv.admin, streams_api_for(srv)
    prefix = deployment_prefix(srv)
    table, arn = create_stream_table(api, srv.client(), "KEYS_ONLY")
    for i in range(16):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S(f"k{i:02}")}})
    shards, by_shard = read_all_shards(streams, arn)
    assert len(shards) == 4  # a new table's partitions
    busy, quiet = [s["ShardId"] for s in shards if by_shard[s["ShardId"]]][:2]
    busy_key = by_shard[busy][0]["dynamodb"]["Keys"]["pk"]["S"]
    quiet_key = by_shard[quiet][0]["dynamodb"]["Keys"]["pk"]["S"]
    for v in range(60):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S(busy_key), "v": N(v)}})
    old_busy = read_stream(streams, arn, shard_id=busy)
    assert len(old_busy) == len(by_shard[busy]) + 60
    old_quiet = by_shard[quiet]

    # Half a day later the quiet partition gets one record, numbered below most of the
    # busy partition's.
    admin.advance(DAY / 2)
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S(quiet_key), "v": N(1)}})
    recent = read_stream(streams, arn, shard_id=quiet)[len(old_quiet):]
    assert len(recent) == 1 and recent[0]["eventName"] == "MODIFY"
    assert int(seq(recent[0])) < int(seq(old_busy[-1]))

    # A day after the first records: every record older than 24 hours is gone, the recent
    # one stays.
    admin.advance(DAY / 2 + 60)
    wait_until(lambda: trimmed_reads(streams, arn, busy) == [], timeout=20,
               what="the busy partition's records trimmed")
    assert stored_records(prefix) == 1
    assert read_stream(streams, arn, shard_id=quiet) == recent
    for record in (old_busy[0], old_busy[30], old_busy[-1]):
        check_trimmed(streams, arn, busy, seq(record))
    check_trimmed(streams, arn, quiet, seq(old_quiet[0]))
    sc = srv.client(service="dynamodbstreams")
    with pytest.raises(sc.exceptions.TrimmedDataAccessException) as e:
        sc.get_shard_iterator(StreamArn=arn, ShardId=busy, SequenceNumber=seq(old_busy[5]),
                              ShardIteratorType="AT_SEQUENCE_NUMBER")
    assert e.value.response["Error"]["Message"] == TRIMMED_MESSAGE
    at_recent = streams.ok("GetShardIterator", {
        "StreamArn": arn, "ShardId": quiet, "ShardIteratorType": "AT_SEQUENCE_NUMBER",
        "SequenceNumber": seq(recent[0])})["ShardIterator"]
    assert streams.ok("GetRecords", {"ShardIterator": at_recent})["Records"] == recent
    # The busy shard goes on after its trim horizon.
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S(busy_key), "v": N(60)}})
    new = read_stream(streams, arn, shard_id=busy)
    assert len(new) == 1 and int(seq(new[0])) == int(seq(old_busy[-1])) + 1

    # A day after the quiet partition's record, it is trimmed too.
    admin.advance(DAY / 2)
    wait_until(lambda: trimmed_reads(streams, arn, quiet) == [], timeout=20,
               what="the quiet partition's record trimmed")
    check_trimmed(streams, arn, quiet, seq(recent[0]))
    assert read_stream(streams, arn, shard_id=busy) == new
    assert stored_records(prefix) == 1
