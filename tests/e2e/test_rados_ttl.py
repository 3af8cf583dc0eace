"""The TTL schedule on Kumo's RADOS back end (run by scripts/test-rados.sh).

A schedule entry ([T][4][enc(expiry)][item key]) is kept by the partition object of its
item, written in the same operation as the item, and moved with it when the partition
splits (docs/scale-out.md, "TTL"): a table's schedule grows with its partitions, not in one
object. The reaper reads the entries due from every partition, in expiry order. These tests
check where the entries are and that items expire on the engine's clock through splits and
a restart.
"""

import os
import time

import pytest

from kumo_testlib import KumoServer, N, S, create_table_args, on_rados, scan_all, wait_until
from rados_helpers import check_layout, deployment_prefix, omap, rados, schedule_entries

pytestmark = pytest.mark.skipif(not (on_rados() and os.environ.get("KUMO_CEPH_CONF")),
                                reason="needs $KUMO_RADOS_POOL on the cluster of "
                                       "$KUMO_CEPH_CONF (scripts/test-rados.sh)")

TABLE = "ttl-split"
PARTITION_KEYS = 40


@pytest.fixture
def srv(kumo_bin, tmp_path):
    """A server on the manual clock, its TTL reaper passing every 50 ms, partitions of
    PARTITION_KEYS keys. The clock starts at one whole second, at every start: the front
    ends of a group (KUMO_FRONT_ENDS), started one after another, then agree on it, and
    whichever holds the table's TTL job deletes what the test made due, no more."""
    server = KumoServer(kumo_bin, str(tmp_path), data_dir=str(tmp_path / "d"),
                        flags={"clock": "manual", "clock-start": int(time.time()),
                               "ttl-interval": "0.05",
                               "rados-partition-keys": PARTITION_KEYS}, admin_port=0)
    yield server.start()
    server.stop()


def create_ttl_table(api):
    """The table, with TTL enabled on `exp`; returns the TTL specification."""
    api.ok("CreateTable", create_table_args(TABLE, ("pk", "S"), ("sk", "N")))
    spec = {"Enabled": True, "AttributeName": "exp"}
    api.ok("UpdateTimeToLive", {"TableName": TABLE, "TimeToLiveSpecification": spec})
    return spec


def present(api):
    return {int(i["sk"]["N"]) for i in scan_all(api, TABLE)}


def table_objects(prefix):
    """The objects of the deployment's table namespaces, as (namespace, oid)."""
    out = []
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t"):
            out.append((ns, oid))
    return out


def test_schedule_entries_live_and_split_with_their_items(srv):
    api, admin = srv.api(), srv.admin
    prefix = deployment_prefix(srv)
    create_ttl_table(api)
    now = int(admin.now())
    # 300 items over 30 partition keys: 200 expire at now + 1000 + i, the others never.
    expiry = {}
    for i in range(300):
        item = {"pk": S(f"p{i % 30}"), "sk": N(i)}
        if i % 3:
            expiry[i] = now + 1000 + i
            item["exp"] = N(expiry[i])
        api.ok("PutItem", {"TableName": TABLE, "Item": item})
    # An entry rescheduled: the old entry goes with the new one's write.
    api.ok("UpdateItem", {"TableName": TABLE, "Key": {"pk": S("p1"), "sk": N(1)},
                          "UpdateExpression": "SET #e = :e",
                          "ExpressionAttributeNames": {"#e": "exp"},
                          "ExpressionAttributeValues": {":e": N(now + 5000)}})
    expiry[1] = now + 5000

    # Items and entries split together: each entry is in its item's partition.
    partitions = check_layout(prefix, max_keys=2 * PARTITION_KEYS)
    assert partitions >= 4 + 5, partitions
    assert not [o for o in table_objects(prefix) if o[1] == "ttl"]
    entries = schedule_entries(prefix)
    assert sorted(entries) == sorted(expiry.values())

    # Half of them fall due: gone, in every partition; the others stay.
    admin.advance(now + 1150 - admin.now())
    due = {i for i, t in expiry.items() if t < now + 1150}
    wait_until(lambda: not (present(api) & due), timeout=20, what="due items gone")
    assert present(api) == set(range(300)) - due
    assert sorted(schedule_entries(prefix)) == sorted(
        t for i, t in expiry.items() if i not in due)

    # After a restart, the rest fall due: the schedule was read from the partitions.
    srv.stop()
    srv.start()
    api, admin = srv.api(), srv.admin
    admin.advance(1000 + 400 + 5000)
    wait_until(lambda: present(api) == {i for i in range(300) if i % 3 == 0},
               timeout=20, what="every item with a TTL gone")
    assert schedule_entries(prefix) == []
    check_layout(prefix)


def test_disabling_ttl_removes_every_partitions_entries(srv):
    api, admin = srv.api(), srv.admin
    prefix = deployment_prefix(srv)
    spec = create_ttl_table(api)
    now = int(admin.now())
    for i in range(200):
        api.ok("PutItem", {"TableName": TABLE, "Item": {
            "pk": S(f"p{i % 20}"), "sk": N(i), "exp": N(now + 100 + i)}})
    assert check_layout(prefix) > 4
    assert len(schedule_entries(prefix)) == 200
    spec["Enabled"] = False
    api.ok("UpdateTimeToLive", {"TableName": TABLE, "TimeToLiveSpecification": spec})
    assert schedule_entries(prefix) == []
    admin.advance(1000)
    assert present(api) == set(range(200))


def test_a_schedule_kept_in_one_object_moves_to_the_partitions(srv, tmp_path):
    """A table's schedule was once kept in one object `ttl` of its namespace: the next start
    moves its entries to their items' partitions."""
    api, admin = srv.api(), srv.admin
    prefix = deployment_prefix(srv)
    create_ttl_table(api)
    now = int(admin.now())
    for i in range(30):
        api.ok("PutItem", {"TableName": TABLE, "Item": {
            "pk": S(f"p{i % 10}"), "sk": N(i), "exp": N(now + 100 + i)}})
    srv.stop()
    key_file, value_file = tmp_path / "key", tmp_path / "value"
    for ns, oid in table_objects(prefix):
        for key, value in omap(ns, oid).items():
            if len(key) > 4 and key[4] == 4:
                key_file.write_bytes(key)
                value_file.write_bytes(value)
                rados("-N", ns, "setomapval", "ttl", "--omap-key-file", str(key_file),
                      "--input-file", str(value_file))
                rados("-N", ns, "rmomapkey", oid, "--omap-key-file", str(key_file))
    assert schedule_entries(prefix) == []
    assert [o for o in table_objects(prefix) if o[1] == "ttl"]

    srv.start()
    api, admin = srv.api(), srv.admin
    assert not [o for o in table_objects(prefix) if o[1] == "ttl"]
    assert sorted(schedule_entries(prefix)) == [now + 100 + i for i in range(30)]
    check_layout(prefix)
    # A restarted manual clock starts at --clock-start again.
    admin.advance(now + 100 + 15 - admin.now())
    wait_until(lambda: present(api) == set(range(15, 30)), timeout=20,
               what="the items due gone")
