"""Partition splits of Kumo's RADOS back end (run by scripts/test-rados.sh).

A partition whose object holds more than --rados-partition-keys keys (items and index
entries) splits in two at a token near its middle key: the upper half is copied to a new
object, the catalog's partition map names it, and the copied keys are removed from the old
object (docs/scale-out.md, "Splits"). These tests split partitions many times with a small
limit and check what a client sees (every item through GetItem, Query both ways, parallel
Scan, the GSI, the LSI, the stream) and what the pool holds: one object per partition of
the map, no key outside its partition's range, no split left half done. Each step of a
split is also interrupted as kill -9 would (KUMO_RADOS_SPLIT_FAULT), and the next start
must undo or finish it without losing an acknowledged write.
"""

import os
import re
import signal
import threading

import pytest

from kumo_testlib import KumoProcess, N, S, create_table_args, on_rados, scan_all
from rados_helpers import check_layout, deployment_prefix, omap, rados
from front_end_helpers import lease_objects, wait_for
from stream_helpers import check_interleaving, read_all_shards, seq, streams_api_for

pytestmark = pytest.mark.skipif(not (on_rados() and os.environ.get("KUMO_CEPH_CONF")),
                                reason="needs $KUMO_RADOS_POOL on the cluster of "
                                       "$KUMO_CEPH_CONF (scripts/test-rados.sh)")

TABLE = "split-items"
GSI = "by-group"
LSI = "by-level"
PARTITION_KEYS = 40
SPLIT_LOGGED = re.compile(rb"split at token ([0-9a-f]{16})")


def splits_logged(*servers_logs):
    count = 0
    for path in servers_logs:
        with open(path, "rb") as f:
            count += len(SPLIT_LOGGED.findall(f.read()))
    return count


# --------------------------------------------------------------------------- the model


class Model:
    """The items a table must hold and the stream changes it must show, in order."""

    def __init__(self):
        self.items = {}
        self.changes = []  # (event name, (pk, sk))

    def put(self, item):
        key = (item["pk"]["S"], int(item["sk"]["N"]))
        self.changes.append(("MODIFY" if key in self.items else "INSERT", key))
        self.items[key] = item

    def delete(self, key):
        if key in self.items:
            self.changes.append(("REMOVE", key))
            del self.items[key]


def create(api):
    defs = [("pk", "S"), ("sk", "N"), ("grp", "S"), ("lvl", "N")]
    api.ok("CreateTable", create_table_args(
        TABLE, ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in defs],
        GlobalSecondaryIndexes=[{
            "IndexName": GSI,
            "KeySchema": [{"AttributeName": "grp", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{
            "IndexName": LSI,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "lvl", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}))


def item(i, version=0):
    return {"pk": S(f"p{i % 37}"), "sk": N(i), "grp": S(f"g{i % 5}"), "lvl": N((i * 7) % 100),
            "ver": N(version), "pad": S("x" * (i % 50))}


def key_of(k):
    return {"pk": S(k[0]), "sk": N(k[1])}


def check_reads(api, streams, model, shard_splits):
    """Every read path returns exactly the model; the stream holds its changes in order."""
    expected = sorted(model.items)
    # GetItem, consistent.
    for k in expected:
        out = api.ok("GetItem", {"TableName": TABLE, "Key": key_of(k), "ConsistentRead": True})
        assert out.get("Item") == model.items[k], k
    # Scan: three parallel segments, small pages.
    seen = []
    for segment in range(3):
        body = {"TableName": TABLE, "Segment": segment, "TotalSegments": 3, "Limit": 7,
                "ConsistentRead": True}
        while True:
            out = api.ok("Scan", body)
            seen += [(i["pk"]["S"], int(i["sk"]["N"])) for i in out["Items"]]
            if "LastEvaluatedKey" not in out:
                break
            body["ExclusiveStartKey"] = out["LastEvaluatedKey"]
    assert sorted(seen) == expected
    # Query each partition key, both directions, in pages of 2.
    pks = sorted({k[0] for k in expected})
    for pk in pks:
        want = sorted(k[1] for k in expected if k[0] == pk)
        for forward in (True, False):
            body = {"TableName": TABLE, "KeyConditionExpression": "pk = :p",
                    "ExpressionAttributeValues": {":p": S(pk)}, "ScanIndexForward": forward,
                    "Limit": 2, "ConsistentRead": True}
            got = []
            while True:
                out = api.ok("Query", body)
                got += [int(i["sk"]["N"]) for i in out["Items"]]
                if "LastEvaluatedKey" not in out:
                    break
                body["ExclusiveStartKey"] = out["LastEvaluatedKey"]
            assert got == (want if forward else want[::-1]), (pk, forward)
        # The LSI, in level order.
        out = api.ok("Query", {"TableName": TABLE, "IndexName": LSI,
                               "KeyConditionExpression": "pk = :p",
                               "ExpressionAttributeValues": {":p": S(pk)}})
        levels = [int(i["lvl"]["N"]) for i in out["Items"]]
        assert levels == sorted(int(model.items[(pk, s)]["lvl"]["N"]) for s in want)
    # The GSI equals the table, group by group.
    for g in range(5):
        got = [i for i in scan_all(api, TABLE, GSI) if i["grp"]["S"] == f"g{g}"]
        want = [model.items[k] for k in expected if model.items[k]["grp"]["S"] == f"g{g}"]
        key = lambda i: (i["pk"]["S"], int(i["sk"]["N"]))  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key), g
    # The stream: one shard per partition at first (the table's 4); a split closed the
    # shard that held its token and opened two children. Every change once, in its shard's
    # range, each shard's in the order they were made.
    arn = api.ok("DescribeTable", {"TableName": TABLE})["Table"]["LatestStreamArn"]
    shards, by_shard = read_all_shards(streams, arn)
    assert len(shards) == 4 + 2 * shard_splits
    for shard in shards:
        numbers = [int(seq(r)) for r in by_shard[shard["ShardId"]]]
        assert numbers == sorted(set(numbers))
        low = int(shard["SequenceNumberRange"]["StartingSequenceNumber"])
        high = int(shard["SequenceNumberRange"].get("EndingSequenceNumber", 10 ** 40))
        assert all(low <= n <= high for n in numbers), shard
    view = lambda r: (r["eventName"], (r["dynamodb"]["Keys"]["pk"]["S"],  # noqa: E731
                                       int(r["dynamodb"]["Keys"]["sk"]["N"])))
    check_interleaving([[view(r) for r in by_shard[s["ShardId"]]] for s in shards],
                       model.changes)


def write_load(api, model, start, count):
    """Puts, overwrites, updates, deletes and two-item transactions, one at a time."""
    for i in range(start, start + count):
        model.put(item(i))
        api.ok("PutItem", {"TableName": TABLE, "Item": item(i)})
        if i % 5 == 0 and i > start:
            k = (f"p{(i - 3) % 37}", i - 3)
            if k in model.items:
                new = dict(model.items[k], ver=N(int(model.items[k]["ver"]["N"]) + 1))
                api.ok("UpdateItem", {"TableName": TABLE, "Key": key_of(k),
                                      "UpdateExpression": "SET ver = ver + :one",
                                      "ExpressionAttributeValues": {":one": N(1)}})
                model.put(new)
        if i % 11 == 0 and i > start:
            k = (f"p{(i - 7) % 37}", i - 7)
            api.ok("DeleteItem", {"TableName": TABLE, "Key": key_of(k)})
            model.delete(k)
        if i % 13 == 0:
            a, b = item(100000 + i), item(200000 + i)
            api.ok("TransactWriteItems", {"TransactItems": [
                {"Put": {"TableName": TABLE, "Item": a}},
                {"Put": {"TableName": TABLE, "Item": b}}]})
            model.put(a)
            model.put(b)


# --------------------------------------------------------------------------- tests


def test_partitions_split_and_every_read_sees_every_item(start_server, tmp_path):
    srv = start_server(data_dir=str(tmp_path / "d"),
                       extra_args=["--rados-partition-keys", str(PARTITION_KEYS)])
    api, streams = srv.api(), streams_api_for(srv)
    prefix = deployment_prefix(srv)
    create(api)
    model = Model()
    write_load(api, model, 0, 400)
    first_log = srv.log_path
    splits = splits_logged(first_log)
    # 400 items, their LSI and GSI entries: far more than 4 partitions of 40 keys hold.
    assert splits >= 10, f"only {splits} splits logged"
    assert check_layout(prefix) == 4 + splits
    check_reads(api, streams, model, splits)

    # The map, and every partition, as a restart finds them.
    srv.stop()
    srv.start()
    api, streams = srv.api(), streams_api_for(srv)
    assert check_layout(prefix) == 4 + splits
    check_reads(api, streams, model, splits)


@pytest.mark.parametrize("step", ["intent", "copy", "publish", "cleanup"])
def test_a_split_stopped_at_each_step_is_undone_or_finished(start_server, tmp_path,
                                                            monkeypatch, step):
    monkeypatch.setenv("KUMO_RADOS_SPLIT_FAULT", step)
    srv = start_server(data_dir=str(tmp_path / "d"),
                       extra_args=["--rados-partition-keys", str(PARTITION_KEYS)])
    monkeypatch.delenv("KUMO_RADOS_SPLIT_FAULT")
    api = srv.api()
    prefix = deployment_prefix(srv)
    create(api)
    model = Model()
    # The first split stops the process (SIGKILL) at the step: the write that set it off
    # was applied before the split began, but its answer never came.
    in_flight = None
    for i in range(1000):
        try:
            api.ok("PutItem", {"TableName": TABLE, "Item": item(i)})
        except (OSError, ConnectionError):
            in_flight = i
            break
        model.put(item(i))
    assert in_flight is not None, "no split stopped the server"
    assert srv.proc.wait(timeout=10) == -9
    model.put(item(in_flight))  # applied before the split started
    log_before = srv.log_path

    srv.start()
    api, streams = srv.api(), streams_api_for(srv)
    # Undone before the map was published, finished after.
    published = step in ("publish", "cleanup")
    assert check_layout(prefix) == (5 if published else 4)
    # A split the start finished has split its shard before the front end serves.
    check_reads(api, streams, model, 1 if published else 0)
    # Splits go on as usual; a split the start finished splits its shard too.
    write_load(api, model, in_flight + 1, 150)
    splits = splits_logged(srv.log_path)
    assert splits >= 3
    assert check_layout(prefix) == (5 if published else 4) + splits
    check_reads(api, streams, model, splits + (1 if published else 0))
    assert splits_logged(log_before) == 0  # logged once its keys are removed


def split_in_progress(prefix):
    """(namespace, start, middle) of the one partition whose split key is set, or None."""
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t") and oid.startswith("p"):
            value = omap(ns, oid).get(b"\xffs")
            if value is not None:
                return ns, int(oid[1:], 16), int.from_bytes(value[:8], "big")
    return None


def partition_starts(prefix, table_id):
    stored = omap(prefix, "kumo.catalog")[b"\xffmap" + table_id.to_bytes(4, "big")]
    return [int.from_bytes(stored[i:i + 8], "big") for i in range(0, len(stored), 8)]


def test_a_front_end_paused_after_publishing_a_split_changes_no_range_after_it(kumo_bin,
                                                                                tmp_path):
    """A front end stops (SIGSTOP) right after publishing a split, before it sets the lower
    half's range. Its lease lapses; the other front end finishes the split and then splits
    the lower half again. Resumed, the paused one must not set the lower half's range of
    its split, which would undo the second split (writes and reads of that range would then
    find it elsewhere than the map says): its last steps are guarded on its own split key,
    which the finisher removed."""
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared,
                           extra_args=["--rados-partition-keys", "8"]) for _ in range(2)]
    try:
        os.environ["KUMO_RADOS_SPLIT_FAULT"] = "publish-pause"
        try:
            servers[0].start()
        finally:
            del os.environ["KUMO_RADOS_SPLIT_FAULT"]
        servers[1].start()
        prefix = deployment_prefix(servers[0])
        other = servers[1].api()
        other.ok("CreateTable", create_table_args("paused-split", ("pk", "S")))
        written = []
        in_flight = []

        def write_until_paused():
            api = servers[0].api()
            for i in range(500):
                try:
                    api.ok("PutItem", {"TableName": "paused-split", "Item": {"pk": S(f"a{i}")}})
                except Exception:  # noqa: BLE001 - the request the pause held
                    # Applied before the split began when its own thread ran the split; not
                    # applied when another thread's write ran it (the maintenance thread's,
                    # say) and this one waited, then found the lease lapsed.
                    in_flight.append(f"a{i}")
                    return
                written.append(f"a{i}")

        writer = threading.Thread(target=write_until_paused)
        writer.start()
        wait_for(lambda: open(f"/proc/{servers[0].proc.pid}/stat").read().split()[2] == "T",
                 30, "the front end paused in its split")
        ns, start, middle = split_in_progress(prefix)
        table_id = int(ns[len(prefix) + 1:])
        assert middle in partition_starts(prefix, table_id)  # published
        # The other takes the lapsed lease over and finishes the split.
        wait_for(lambda: len(lease_objects(prefix)) == 1, 20, "the lapsed lease taken over")
        wait_for(lambda: split_in_progress(prefix) is None, 10, "the split finished")
        # ... and splits the lower half again.
        i = 0
        while not any(start < s < middle for s in partition_starts(prefix, table_id)):
            assert i < 2000, "the lower half did not split again"
            other.ok("PutItem", {"TableName": "paused-split", "Item": {"pk": S(f"b{i}")}})
            written.append(f"b{i}")
            i += 1
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=60)
        assert not writer.is_alive()
        check_layout(prefix)
        # Every item is where the map says, through both front ends.
        seen = {}
        for server in servers:
            api = server.api()
            wait_for(lambda: api("DescribeTable", {"TableName": "paused-split"}).status
                     == 200, 20, "the resumed front end serving")
            for pk in written:
                out = api.ok("GetItem", {"TableName": "paused-split", "Key": {"pk": S(pk)},
                                         "ConsistentRead": True})
                assert out.get("Item") == {"pk": S(pk)}, pk
            found = sorted(i["pk"]["S"] for i in scan_all(api, "paused-split"))
            # The request in flight is in the table or not, the same through both.
            seen[server.port] = [pk for pk in in_flight if pk in found]
            assert found == sorted(written + seen[server.port])
        assert len(set(map(tuple, seen.values()))) == 1, seen
        # Its last step found the split ended by the other, or was refused: the other
        # blocklisted its client when it took the split over.
        with open(servers[0].log_path) as log:
            resumed_log = log.read()
        with open(servers[1].log_path) as log:
            assert "is blocklisted" in log.read()
        assert ("was finished by another front end" in resumed_log
                or "is left for the next start" in resumed_log)
    finally:
        for server in servers:
            server.stop()


def test_a_split_published_after_a_catalog_change_carries_the_new_definition(kumo_bin,
                                                                              tmp_path):
    """A split copies its partition's keys and definition version to the new partition and
    is held there (`copy-hold`), before it publishes its map. Meanwhile a GSI on `g` is
    added through the other front end, which sets the new definition version in the
    partitions of the map it reads (without the new partition), while one of its own writes
    (made with the old definition, no index) is held before its partition op
    (KUMO_RADOS_HOLD_FILE). The split is released and publishes its map, then is held again
    (`publish-hold`) before its last steps; the write is released: the old partition is
    frozen, so it reads the published map and goes to the new partition. That partition
    must refuse it (the split published its map only with the catalog's definition version):
    the write is made again with the index, and the index equals a scan. (Before, the new
    partition held the old version until the split's last step and took the write, and the
    index missed the item.)"""
    shared = tmp_path / "shared"
    release = tmp_path / "release"
    release.mkdir()
    hold = tmp_path / "hold"
    splitter = KumoProcess(kumo_bin, str(tmp_path), data_dir=shared,
                           extra_args=["--rados-partition-keys", "8"])
    writer = KumoProcess(kumo_bin, str(tmp_path), data_dir=shared)
    os.environ.update({"KUMO_RADOS_FAULT": "copy-hold,publish-hold",
                       "KUMO_RADOS_RELEASE_DIR": str(release)})
    try:
        splitter.start()
    finally:
        del os.environ["KUMO_RADOS_FAULT"], os.environ["KUMO_RADOS_RELEASE_DIR"]
    os.environ["KUMO_RADOS_HOLD_FILE"] = str(hold)
    try:
        writer.start()
    finally:
        del os.environ["KUMO_RADOS_HOLD_FILE"]
    threads = []
    try:
        prefix = deployment_prefix(splitter)
        other = writer.api()
        other.ok("CreateTable", create_table_args("late-copy", ("pk", "S")))
        stop = threading.Event()
        written = []

        def write_until_held():
            api = splitter.api()
            for i in range(500):
                if stop.is_set():
                    return
                pk = f"item-{i:05d}"
                api.ok("PutItem", {"TableName": "late-copy", "Item": {"pk": S(pk)}})
                written.append(pk)

        def copied():
            found = split_in_progress(prefix)
            if found is None or found[2] == 0:
                return None
            ns, _, middle = found
            if f"p{middle:016x}" not in rados("-N", ns, "ls").decode().split():
                return None
            return found

        threads.append(threading.Thread(target=write_until_held))
        threads[-1].start()
        wait_for(lambda: copied() is not None, 60, "a split held after its copy")
        stop.set()
        ns, start, middle = copied()
        table_id = int(ns[len(prefix) + 1:])
        assert middle not in partition_starts(prefix, table_id)  # not published
        moved = sorted({m.group().decode() for k in omap(ns, f"p{middle:016x}")
                        if not k.startswith(b"\xff")
                        for m in [re.search(rb"item-\d{5}", k)] if m})
        assert moved, "no item copied to the new partition"
        target = moved[0]
        hold.write_text("")
        outcome = []

        def held_write():
            try:
                writer.api().ok("PutItem", {"TableName": "late-copy",
                                            "Item": {"pk": S(target), "g": S("x")}})
                outcome.append("ok")
            except Exception as e:  # noqa: BLE001 - what the client saw
                outcome.append(repr(e))

        threads.append(threading.Thread(target=held_write))
        threads[-1].start()
        wait_for(lambda: "a write is held before its partition op" in open(writer.log_path).read(),
                 15, "the write held")
        other.ok("UpdateTable", {
            "TableName": "late-copy",
            "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
            "GlobalSecondaryIndexUpdates": [{"Create": {
                "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}]})
        # The split publishes its map, and stops again before its last steps.
        (release / "copy").write_text("")
        wait_for(lambda: middle in partition_starts(prefix, table_id), 30, "the map published")
        hold.unlink()
        # Refused by the new partition while the split is still held (its map published,
        # its parent frozen): made again with the index. (Its index entry may lie in the
        # frozen parent: the write ends once the split has.)
        wait_for(lambda: "made with an old definition; made again" in
                 open(writer.log_path).read(), 30, "the write refused")
        (release / "publish").write_text("")
        threads[-1].join(timeout=60)
        assert outcome == ["ok"]
        threads[0].join(timeout=60)
        assert not threads[0].is_alive()
        wait_for(lambda: split_in_progress(prefix) is None, 30, "the split finished")
        for server in (writer, splitter):
            api = server.api()
            wait_for(lambda: api.ok("DescribeTable", {"TableName": "late-copy"})["Table"]
                     ["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE", 60,
                     "the index active")
            items = scan_all(api, "late-copy")
            assert sorted(i["pk"]["S"] for i in items) == sorted(set(written) | {target})
            entries = scan_all(api, "late-copy", "by-g")
            assert [(e["pk"]["S"], e["g"]["S"]) for e in entries] == [(target, "x")]
        check_layout(prefix)
    finally:
        hold.unlink(missing_ok=True)
        (release / "copy").write_text("")
        (release / "publish").write_text("")
        for thread in threads:
            thread.join(timeout=60)
        splitter.stop()
        writer.stop()
