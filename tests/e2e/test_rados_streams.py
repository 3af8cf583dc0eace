"""Stream records on Kumo's RADOS back end (run by scripts/test-rados.sh).

A record ([T][3][sequence][token]) is kept by the stream object `s<start>` of its item's
partition when it is written (docs/scale-out.md, "Stream records"): a table's records grow
with its partitions, not in one object. A read merges the stream objects in sequence order.
DeleteTable removes the partitions but keeps the stream objects and the partition map,
marked dropped, while records are left; the 24-hour trim then erases the records and the
last one takes the objects and the map with it. A stream laid out in one object `stream`
moves to the stream objects at the next start.
"""

import os
import re

import pytest

from kumo_testlib import KumoServer, S, on_rados, wait_until
from rados_helpers import check_layout, deployment_prefix, omap, rados
from stream_helpers import check_interleaving, create_stream_table, read_all_shards, streams_api_for

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
