"""Leases, takeover and fencing of front ends that share a RADOS namespace (docs/scale-out.md,
"Several front ends"): what a front end killed mid-write left (its outbox entries, its
transaction records) is finished by another once its lease lapses; a write waits for the
index entries of the write of the item before it; a front end paused past its lease writes
nothing under it; the front end that takes over blocklists the paused one's client, so an op
held between its lease check and its send is refused by the OSDs. A front end that did not
acknowledge a catalog change in time (paused, or slow to reload) is not fenced: every
partition holds its table's definition version, set before the change is announced, and a
write made with an older definition is refused there and made again with the new one.
"""

import os
import re
import signal
import subprocess
import threading
import time

import botocore.exceptions
import pytest

from front_end_helpers import (  # noqa: F401
    add_gsi,
    create,
    all_pages,
    create_with_gsi,
    gsi_keys,
    held_by_a_pause,
    lease_objects,
    log_of,
    retried,
    start_with_fault,
    started,
    wait_for,
)
from kumo_testlib import KumoProcess, on_rados
from rados_helpers import check_layout, deployment_prefix

pytestmark = pytest.mark.skipif(not on_rados(), reason="several front ends share a RADOS pool")


@pytest.mark.parametrize("fault", ["outbox", "transaction"])
def test_what_a_killed_front_end_left_is_finished_by_the_others(kumo_bin, tmp_path, fault):
    """A front end killed between a write's partition op and its GSI entry (`outbox`), or
    between a transaction's record and its items (`transaction`), is not restarted: once
    its lease (3 s) lapses, another front end takes its lease object, finishes its work and
    removes the object."""
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared) for _ in range(3)]
    try:
        start_with_fault(servers[0], fault)
        for server in servers[1:]:
            server.start()
        prefix = deployment_prefix(servers[0])
        assert len(lease_objects(prefix)) == 3
        one = servers[1].client()
        create_with_gsi(one, "left-work")
        victim = servers[0].client()
        with pytest.raises(Exception):
            if fault == "outbox":
                victim.put_item(TableName="left-work",
                                Item={"pk": {"S": "a"}, "g": {"S": "x"}})
            else:
                victim.transact_write_items(TransactItems=[
                    {"Put": {"TableName": "left-work",
                             "Item": {"pk": {"S": f"t{i}"}, "g": {"S": "x"}}}}
                    for i in range(6)])
        servers[0].proc.wait(timeout=10)
        expected = ["a"] if fault == "outbox" else [f"t{i}" for i in range(6)]
        # Lease 3 s, and the others look for lapsed leases every 3 s.
        wait_for(lambda: gsi_keys(one, "left-work", "x") == expected, 15,
                 "the killed front end's work finished")
        two = servers[2].client()
        for key in expected:
            assert two.get_item(TableName="left-work", Key={"pk": {"S": key}},
                                ConsistentRead=True)["Item"] == {"pk": {"S": key},
                                                                 "g": {"S": "x"}}
        wait_for(lambda: len(lease_objects(prefix)) == 2, 10, "the dead lease removed")
    finally:
        for server in servers:
            server.stop()


@pytest.mark.parametrize("fault", ["outbox", "outbox-pause"])
def test_a_write_waits_for_the_index_entries_of_the_write_before_it(kumo_bin, tmp_path, fault):
    """A front end writes an item of a table with a GSI and stops between the write's
    partition op and its GSI entry: killed (`outbox`), or stopped for a moment and resumed
    (`outbox-pause`). Another front end's write of the same item meanwhile waits until that
    entry is in place (put by the takeover of the killed front end's work, or by the resumed
    one), and only then removes it for its own: an entry of the first write put after the
    second write would stay in the index for a value the item no longer has."""
    with started(kumo_bin, tmp_path, count=2, fault=fault) as servers:
        prefix = deployment_prefix(servers[0])
        other = servers[1].client()
        create_with_gsi(other, "ordered")
        first = {"TableName": "ordered", "Item": {"pk": {"S": "a"}, "g": {"S": "old"}}}
        second = {"TableName": "ordered", "Item": {"pk": {"S": "a"}, "g": {"S": "new"}}}
        if fault == "outbox":
            with pytest.raises(Exception):
                servers[0].client().put_item(**first)
            servers[0].proc.wait(timeout=10)
            # Waits (the item is held) until the killed front end's lease lapses and its
            # outbox entry is applied by the other: InternalServerError meanwhile, which
            # the SDK retries.
            wait_for(lambda: put_or_none(other, second), 30, "the second write")
            wait_for(lambda: len(lease_objects(prefix)) == 1, 10, "the dead lease removed")
        else:
            writer, outcome = held_by_a_pause(servers[0], lambda client: client.put_item(**first))
            done = []
            thread = threading.Thread(target=lambda: done.append(put_or_none(other, second)))
            thread.start()
            # The second write cannot finish while the first front end is stopped.
            thread.join(timeout=0.5)
            servers[0].proc.send_signal(signal.SIGCONT)
            thread.join(timeout=60)
            writer.join(timeout=60)
            assert done == [True], done
        assert gsi_keys(other, "ordered", "old") == []
        assert gsi_keys(other, "ordered", "new") == ["a"]
        assert other.get_item(TableName="ordered", Key={"pk": {"S": "a"}},
                              ConsistentRead=True)["Item"] == second["Item"]
        check_layout(prefix)


def put_or_none(client, request):
    """True once `client` put the item; None when the request failed (to be tried again)."""
    try:
        client.put_item(**request)
        return True
    except botocore.exceptions.ClientError:
        return None


def test_a_front_end_paused_past_its_lease_writes_nothing_under_it(kumo_bin, tmp_path):
    """A front end stops itself (SIGSTOP) between a write's partition op and its GSI entry.
    Once its lease lapses the others finish that write, and a newer write of the same
    item moves its GSI entry; resumed (SIGCONT), the paused front end does not apply its
    old GSI op (which would bring the old entry back): it finds its lease lapsed, fails
    that request, and goes on under a new lease, serving as before."""
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared) for _ in range(2)]
    try:
        start_with_fault(servers[0], "outbox-pause")
        servers[1].start()
        prefix = deployment_prefix(servers[0])
        other = servers[1].client()
        create_with_gsi(other, "paused")
        writer, outcome = held_by_a_pause(servers[0], lambda client: client.put_item(
            TableName="paused", Item={"pk": {"S": "a"}, "g": {"S": "old"}}))
        wait_for(lambda: gsi_keys(other, "paused", "old") == ["a"], 15,
                 "the paused front end's write finished by the other")
        wait_for(lambda: len(lease_objects(prefix)) == 1, 10, "the lapsed lease taken over")
        other.put_item(TableName="paused", Item={"pk": {"S": "a"}, "g": {"S": "new"}})
        assert gsi_keys(other, "paused", "new") == ["a"]
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=30)
        assert outcome and outcome[0] != "ok", outcome
        # Its old GSI op was not applied: the entry is the newer write's.
        assert gsi_keys(other, "paused", "old") == []
        assert gsi_keys(other, "paused", "new") == ["a"]
        # It goes on under a new lease and serves writes again.
        resumed = servers[0].client()
        wait_for(lambda: len(lease_objects(prefix)) == 2, 10, "the new lease")
        wait_for(lambda: put_or_none(resumed, {
            "TableName": "paused", "Item": {"pk": {"S": "b"}, "g": {"S": "new"}}}), 20,
            "a write through the resumed front end")
        assert gsi_keys(other, "paused", "new") == ["a", "b"]
        with open(servers[0].log_path) as log:
            assert "lapsed; this process goes on as" in log.read()
    finally:
        for server in servers:
            server.stop()


CLIENT_ADDRESS = re.compile(r"(?:this front end is|goes on as) [0-9a-f]{16}, client (\S+)")


def client_address(server):
    """The address of the RADOS client a front end writes through now (from its log)."""
    found = CLIENT_ADDRESS.findall(log_of(server))
    assert found, "no client address logged"
    return found[-1]


def blocklisted():
    """The client addresses the cluster's OSDs refuse (`ceph osd blocklist ls`)."""
    out = subprocess.run(["ceph", "-c", os.environ["KUMO_CEPH_CONF"], "osd", "blocklist", "ls"],
                         capture_output=True, timeout=60, check=True).stdout.decode()
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def outcome_of(server, call):
    """Like held_by_a_pause, but the list gets "ok" or the error's code and HTTP status."""
    outcome = []

    def record(client):
        try:
            call(client)
            outcome.append("ok")
        except botocore.exceptions.ClientError as e:
            outcome.append((e.response["Error"]["Code"],
                            e.response["ResponseMetadata"]["HTTPStatusCode"]))

    thread, _ = held_by_a_pause(server, record)
    return thread, outcome


def index_matches_table(client, table):
    """Every item of `table` with a `g` is in its GSI by-g, and nothing else is."""
    items = sorted((i["pk"]["S"], i["g"]["S"]) for i in all_pages(client.scan, TableName=table)
                   if "g" in i)
    entries = sorted((i["pk"]["S"], i["g"]["S"])
                     for i in all_pages(client.scan, TableName=table, IndexName="by-g"))
    assert entries == items
    return items


def test_a_front_end_paused_between_its_lease_check_and_its_ops_is_blocklisted(kumo_bin,
                                                                              tmp_path):
    """A front end stops itself (SIGSTOP) right after the lease check before a write's GSI
    op, the op not yet sent. Past its lease another front end takes its work over: it
    blocklists the paused front end's client first (`ceph osd blocklist ls` lists it), then
    puts the GSI entry, and a newer write of the item moves it. Resumed (SIGCONT), the
    paused front end sends its old GSI op, which the OSDs refuse: the request fails with
    InternalServerError and the index keeps the newer write's entry. The front end goes on
    under a new instance and client and serves again."""
    with started(kumo_bin, tmp_path, count=2, fault="maintenance-pause") as servers:
        prefix = deployment_prefix(servers[0])
        other = servers[1].client()
        create_with_gsi(other, "fenced")
        address = client_address(servers[0])
        assert address not in blocklisted()
        writer, outcome = outcome_of(servers[0], lambda client: client.put_item(
            TableName="fenced", Item={"pk": {"S": "a"}, "g": {"S": "old"}}))
        wait_for(lambda: gsi_keys(other, "fenced", "old") == ["a"], 15,
                 "the paused front end's write finished by the other")
        wait_for(lambda: len(lease_objects(prefix)) == 1, 10, "the lapsed lease taken over")
        assert address in blocklisted()
        assert f"(client {address}) is blocklisted" in log_of(servers[1])
        other.put_item(TableName="fenced", Item={"pk": {"S": "a"}, "g": {"S": "new"}})
        assert gsi_keys(other, "fenced", "new") == ["a"]
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=30)
        assert outcome == [("InternalServerError", 500)], outcome
        # The old GSI op was refused: the entry is the newer write's.
        assert gsi_keys(other, "fenced", "old") == []
        assert gsi_keys(other, "fenced", "new") == ["a"]
        assert index_matches_table(other, "fenced") == [("a", "new")]
        # It goes on under a new instance and client, and serves again.
        resumed = servers[0].client()
        retried(lambda: resumed.put_item(
            TableName="fenced", Item={"pk": {"S": "b"}, "g": {"S": "new"}}),
            "a write through the resumed front end")
        assert "lapsed; this process goes on as" in log_of(servers[0])
        fresh = client_address(servers[0])
        assert fresh != address and fresh not in blocklisted()
        resumed.put_item(TableName="fenced", Item={"pk": {"S": "c"}, "g": {"S": "other"}})
        for client in (resumed, other):
            assert index_matches_table(client, "fenced") == [
                ("a", "new"), ("b", "new"), ("c", "other")]
            assert client.get_item(TableName="fenced", Key={"pk": {"S": "a"}},
                                   ConsistentRead=True)["Item"]["g"] == {"S": "new"}
        wait_for(lambda: len(lease_objects(prefix)) == 2, 10, "the new lease")
        check_layout(prefix)


def test_a_front_end_paused_during_a_catalog_change_is_not_fenced(kumo_bin, tmp_path):
    """A front end is stopped (SIGSTOP, well within its 30 s lease) while a GSI is added
    through another. It cannot acknowledge the change; the change still returns after 3 s,
    and the paused front end is not blocklisted. (This test's premise was once the
    opposite: the change blocklisted it, and its first writes after SIGCONT failed. Every
    partition now holds the table's definition version, set before the change is
    announced, so the writes it makes with the definition it had are refused there and made
    again with the new one: nothing needs fencing.) Resumed (SIGCONT), its writes succeed
    at once, on the same client, and make GSI entries: the index holds exactly the table's
    items."""
    with started(kumo_bin, tmp_path, count=2,
                 extra_args=["--rados-lease-seconds", "30"]) as servers:
        prefix = deployment_prefix(servers[0])
        paused, other = servers[0].client(), servers[1].client()
        create(other, "late")
        for i in range(20):
            paused.put_item(TableName="late", Item={"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % 3}"}})
        address = client_address(servers[0])
        servers[0].proc.send_signal(signal.SIGSTOP)
        try:
            add_gsi(other, "late")
            assert "did not acknowledge a catalog change" in log_of(servers[1])
            assert address not in blocklisted()
        finally:
            servers[0].proc.send_signal(signal.SIGCONT)

        wait_for(lambda: index_active(other, "late"), 60, "the index backfilled")
        # No write fails: one made with the old definition is made again with the new one.
        paused.put_item(TableName="late", Item={"pk": {"S": "k0"}, "g": {"S": "moved"}})
        for i in range(20, 30):
            paused.put_item(TableName="late", Item={"pk": {"S": f"k{i}"}, "g": {"S": "new"}})
        paused.delete_item(TableName="late", Key={"pk": {"S": "k1"}})
        assert client_address(servers[0]) == address
        assert address not in blocklisted()
        assert "this process goes on as" not in log_of(servers[0])
        expected = sorted([("k0", "moved")] + [(f"k{i}", f"g{i % 3}") for i in range(2, 20)] +
                          [(f"k{i}", "new") for i in range(20, 30)])
        for client in (paused, other):
            assert index_matches_table(client, "late") == expected
            assert gsi_keys(client, "late", "new") == sorted(f"k{i}" for i in range(20, 30))
        index = paused.describe_table(TableName="late")["Table"]["GlobalSecondaryIndexes"][0]
        assert index["IndexName"] == "by-g"
        check_layout(prefix)


def index_active(client, table):
    described = client.describe_table(TableName=table)["Table"]
    return described["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"


def test_a_write_that_took_the_definition_before_an_index_was_added_is_made_again(kumo_bin,
                                                                                 tmp_path):
    """A write through one front end reads an item that has no `g` (nothing for the index
    to come), takes its table's definition (no index), and is held before its partition op
    (KUMO_RADOS_HOLD_FILE) while a GSI on `g` is added through another front end and
    backfilled: the backfill passes the item, which needs no entry, and leaves it as it is.
    The held front end itself loads the change and acknowledges it meanwhile (only the
    request is held), so nothing fences it. Released, the write sets `g`: its guard on the
    item holds (nobody wrote it), but its partition op meets the table's newer definition
    version in the partition and is refused; the front end loads its catalog and makes the
    write again with the index. The client sees a success, and the index holds the item's
    entry: exactly the table's items. (Before definition versions, the write went through
    with the old definition and the index missed the item.)"""
    hold = tmp_path / "hold"
    with started(kumo_bin, tmp_path, count=2,
                 env={"KUMO_RADOS_HOLD_FILE": str(hold)}) as servers:
        prefix = deployment_prefix(servers[0])
        held, other = servers[0], servers[1].client()
        create(other, "taken")
        for i in range(20):
            item = {"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % 3}"}}
            if i == 5:
                item = {"pk": {"S": "k5"}, "other": {"S": "x"}}
            other.put_item(TableName="taken", Item=item)
        # (Known to the held front end before its write.)
        assert held.client().get_item(TableName="taken", Key={"pk": {"S": "k5"}})["Item"]
        hold.write_text("")
        outcome = []

        def write():
            try:
                held.client().update_item(
                    TableName="taken", Key={"pk": {"S": "k5"}}, UpdateExpression="SET g = :g",
                    ExpressionAttributeValues={":g": {"S": "moved"}})
                outcome.append("ok")
            except botocore.exceptions.ClientError as e:
                outcome.append(e.response["Error"]["Code"])

        writer = threading.Thread(target=write)
        writer.start()
        try:
            wait_for(lambda: "a write is held before its partition op" in log_of(held), 15,
                     "the write held")
            add_gsi(other, "taken")
            wait_for(lambda: index_active(other, "taken"), 60, "the index backfilled")
            assert gsi_keys(other, "taken", "g1") == ["k1", "k10", "k13", "k16", "k19", "k4",
                                                      "k7"]
        finally:
            hold.unlink()
        writer.join(timeout=30)
        assert outcome == ["ok"]
        expected = sorted([(f"k{i}", f"g{i % 3}") for i in range(20) if i != 5] +
                          [("k5", "moved")])
        for client in (held.client(), other):
            assert index_matches_table(client, "taken") == expected
            assert gsi_keys(client, "taken", "moved") == ["k5"]
        # Refused by its partition and made again, on the client it had.
        assert "made with an old definition; made again" in log_of(held)
        assert "did not acknowledge" not in log_of(servers[1])
        assert client_address(held) not in blocklisted()
        check_layout(prefix)


def test_a_front_end_slow_to_reload_its_catalog_is_not_fenced(kumo_bin, tmp_path):
    """A front end whose catalog reload after an announcement takes 5 s (the fault point
    `reload-slow`), past the 3 s the announcing front end waits, while a GSI is added
    through another front end: the change returns, logs that it was not acknowledged, and
    does not blocklist the slow front end (`ceph osd blocklist ls`). Writes through the slow
    front end run all along: every one succeeds (those made with the old definition are
    refused by their partitions and made again with the new one). Its writes after the
    change keep the index equal to a scan of the table, on the client it had."""
    with started(kumo_bin, tmp_path, count=2, fault="reload-slow") as servers:
        prefix = deployment_prefix(servers[0])
        slow, other = servers[0].client(), servers[1].client()
        create(other, "slow")
        for i in range(20):
            other.put_item(TableName="slow", Item={"pk": {"S": f"k{i}"}, "g": {"S": f"g{i % 3}"}})
        def known():
            try:
                return "Item" in slow.get_item(TableName="slow", Key={"pk": {"S": "k0"}})
            except botocore.exceptions.ClientError as e:
                assert e.response["Error"]["Code"] == "ResourceNotFoundException"
                return False

        wait_for(known, 30, "the table known to the slow front end")
        address = client_address(servers[0])
        stop = threading.Event()
        outcomes = []

        def writer():
            client = servers[0].client()
            n = 0
            while not stop.is_set():
                try:
                    client.put_item(TableName="slow",
                                    Item={"pk": {"S": f"w{n}"}, "g": {"S": "during"}})
                    outcomes.append("ok")
                except botocore.exceptions.ClientError as e:
                    outcomes.append(e.response["Error"]["Code"])
                n += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            began = time.monotonic()
            add_gsi(other, "slow")
            # The change waited for the slow front end's acknowledgement, and went on.
            assert time.monotonic() - began >= 3
            assert "did not acknowledge a catalog change within 3 s" in log_of(servers[1])
            assert address not in blocklisted()
            wait_for(lambda: index_active(other, "slow"), 60, "the index backfilled")
            # Writes made during the slow reload and after the backfill.
            written = len(outcomes)
            wait_for(lambda: len(outcomes) >= written + 5, 30, "writes after the backfill")
        finally:
            stop.set()
            thread.join(timeout=60)
        assert outcomes and set(outcomes) == {"ok"}, outcomes
        assert "made with an old definition; made again" in log_of(servers[0])
        slow.put_item(TableName="slow", Item={"pk": {"S": "k0"}, "g": {"S": "moved"}})
        for i in range(20, 30):
            slow.put_item(TableName="slow", Item={"pk": {"S": f"k{i}"}, "g": {"S": "new"}})
        slow.delete_item(TableName="slow", Key={"pk": {"S": "k1"}})
        assert client_address(servers[0]) == address
        assert address not in blocklisted()
        assert "this process goes on as" not in log_of(servers[0])
        during = len(outcomes)
        expected = sorted([("k0", "moved")] + [(f"k{i}", f"g{i % 3}") for i in range(2, 20)] +
                          [(f"k{i}", "new") for i in range(20, 30)] +
                          [(f"w{n}", "during") for n in range(during)])
        assert index_matches_table(other, "slow") == expected
        # (The slow front end answers reads of the index once it has loaded it ACTIVE.)
        wait_for(lambda: index_active(slow, "slow"), 30, "the index active for the slow one")
        assert index_matches_table(slow, "slow") == expected
        check_layout(prefix)


def test_a_table_created_through_another_front_end_is_found_before_the_reload(kumo_bin,
                                                                             tmp_path):
    """A table created through one front end, then used at once through another whose
    catalog reload takes 5 s (`reload-slow`; CreateTable waited 3 s for it and went on):
    DynamoDB finds a table once CreateTable returned, so the slow front end, which does not
    know the name yet, reads the catalog's version, loads the changed catalog and answers
    DescribeTable, PutItem and GetItem. A name that no front end created is still
    ResourceNotFoundException, with DynamoDB's messages."""
    with started(kumo_bin, tmp_path, count=2, fault="reload-slow") as servers:
        slow, other = servers[0].client(), servers[1].client()
        create(other, "early")
        # (The slow front end's own reload ends 5 s after the announcement: 2 s from now.)
        described = slow.describe_table(TableName="early")["Table"]
        assert described["TableName"] == "early"
        assert described["TableStatus"] == "ACTIVE"
        assert described["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
        slow.put_item(TableName="early", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
        assert slow.get_item(TableName="early", Key={"pk": {"S": "a"}},
                             ConsistentRead=True)["Item"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
        assert other.get_item(TableName="early", Key={"pk": {"S": "a"}},
                              ConsistentRead=True)["Item"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            slow.describe_table(TableName="never")
        assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert raised.value.response["Error"]["Message"] == \
            "Requested resource not found: Table: never not found"
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            slow.put_item(TableName="never", Item={"pk": {"S": "a"}})
        assert raised.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert raised.value.response["Error"]["Message"] == "Requested resource not found"


def thread_count(server):
    return len(os.listdir(f"/proc/{server.proc.pid}/task"))


def test_a_fenced_front_end_frees_its_old_clients(kumo_bin, tmp_path):
    """A front end whose client is blocklisted (`ceph osd blocklist add`, as a takeover
    does) goes on under a new instance and a new client, five times over: each old client
    is shut down once nothing uses it, so the process keeps about the threads it had with
    one client (a librados client runs a dozen or more: kept, five would add 60 or more),
    and it still serves, through both front ends."""
    with started(kumo_bin, tmp_path, count=2) as servers:
        fenced, other = servers[0], servers[1].client()
        create(other, "fenced")
        client = fenced.client()
        client.put_item(TableName="fenced", Item={"pk": {"S": "before"}})
        before = thread_count(fenced)
        for n in range(1, 6):
            address = client_address(fenced)
            subprocess.run(["ceph", "-c", os.environ["KUMO_CEPH_CONF"], "osd", "blocklist",
                            "add", address], capture_output=True, timeout=60, check=True)
            wait_for(lambda: log_of(fenced).count("this process goes on as") == n, 30,
                     f"fence {n} noticed")
            assert client_address(fenced) != address
            retried(lambda: client.put_item(TableName="fenced",
                                            Item={"pk": {"S": f"k{n}"}}),
                    f"a write after fence {n}")
        # (A retired client goes once the ops that held it returned: after the writes.)
        wait_for(lambda: thread_count(fenced) < before + 10, 30, "the old clients shut down")
        print(f"threads with one client: {before}; after five fences: {thread_count(fenced)}")
        for reader in (client, other):
            keys = sorted(i["pk"]["S"] for i in all_pages(reader.scan, TableName="fenced",
                                                           ConsistentRead=True))
            assert keys == ["before", "k1", "k2", "k3", "k4", "k5"]
