"""Background jobs across several front ends on one RADOS pool (docs/scale-out.md, "Several
front ends"), on the manual clock:

- TTL jobs are spread by weight (a table's item count): every front end computes the same
  spread over the live front ends, and hands a table the spread gives another over to it
  (it reaps the table until the other holds it).
- A front end that stops renewing its lease (kill -9) is left out of the spread once its
  renewals stop, before its lease lapses: the others reap its tables before its work is
  taken over.
- The scan that schedules the items written before TTL was enabled is a job that records
  how far it went: cut by kill -9, it is resumed there by another front end.
- A front end joining while another has writes in flight tells the live owner of what it
  finds from a dead one by its renewals, and serves without waiting for its lease.
- Counter sums and GSI reads of a front end see the partitions another front end's split
  made.
"""

import os
import re
import threading
import time

import botocore.exceptions
import pytest

from kumo_testlib import KumoProcess, on_rados
from rados_helpers import check_layout, deployment_prefix, omap
from front_end_helpers import (
    all_pages,
    create,
    create_with_gsi,
    gsi_keys,
    log_of,
    start_with_fault,
    started,
    wait_for,
)

pytestmark = pytest.mark.skipif(not (on_rados() and os.environ.get("KUMO_CEPH_CONF")),
                                reason="several front ends share a RADOS pool")

CLOCK = {"clock": "manual", "clock-start": int(time.time())}
SHARE = re.compile(r"Time to Live jobs held by front end ([0-9a-f]{16}): (\d+) tables of "
                   r"weight (\d+) of (\d+), over (\d+) front ends")
TTL_DELETED = re.compile(r"Time to Live deleted (\d+) items of table (\S+) \((\d+)\)")


def ttl_claims(prefix):
    """{table id: claim value (hex)} of the TTL jobs' claims in the catalog object."""
    marker = b"\xffjttl/"
    return {int(k[len(marker):]): v.hex() for k, v in omap(prefix, "kumo.catalog").items()
            if k.startswith(marker)}


def enable_ttl(client, name):
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})


def fill(client, name, count, exp=None, start=0):
    for at in range(start, start + count, 25):
        items = []
        for i in range(at, min(at + 25, start + count)):
            item = {"pk": {"S": f"k{i}"}}
            if exp is not None:
                item["exp"] = {"N": str(exp)}
            items.append({"PutRequest": {"Item": item}})
        client.batch_write_item(RequestItems={name: items})


def quantized(items):
    """A table's weight as the engine keeps it (Engine::ttl_weight): items + 1, to its three
    highest bits."""
    w = items + 1
    low = w.bit_length() - 3
    return (w >> low) << low if low > 0 else w


def last_share(server):
    found = SHARE.findall(log_of(server))
    return found[-1] if found else None


def test_ttl_jobs_are_spread_by_weight(kumo_bin, tmp_path):
    """Three tables of 400 items and eight of 50 over three front ends: each front end holds
    one of the large tables and two or three small ones, so that no front end's weight is
    more than one small table's above another's (a spread by count, four tables each,
    could give one front end two large ones)."""
    with started(kumo_bin, tmp_path, admin_port=0, flags=CLOCK) as servers:
        clients = [s.client() for s in servers]
        prefix = deployment_prefix(servers[0])
        sizes = {f"big-{i}": 400 for i in range(3)}
        sizes.update({f"small-{i}": 50 for i in range(8)})
        for n, (name, size) in enumerate(sizes.items()):
            create(clients[n % 3], name)
            enable_ttl(clients[n % 3], name)
            fill(clients[(n + 1) % 3], name, size)
        weights = {name: quantized(size) for name, size in sizes.items()}
        total = sum(weights.values())

        def spread():
            shares = [last_share(s) for s in servers]
            claims = ttl_claims(prefix)
            if None in shares or len(claims) != 11:
                return False
            # No handover in flight: each claim names its holder only.
            if any(len(v) != 16 for v in claims.values()):
                return False
            holders = sorted(claims.values())
            return (sorted(s[0] for s in shares) == sorted(set(holders)) and
                    all(int(s[3]) == total and s[4] == "3" for s in shares) and
                    sorted(int(s[2]) for s in shares) == [480, 528, 528])

        # (The weights 480, 528 and 528 are each within one small table's weight, 48, of the
        # mean, 512.)
        wait_for(spread, 60, "the TTL jobs spread by weight")
        shares = {s[0]: int(s[2]) for s in (last_share(s) for s in servers)}
        # Each front end's weight matches the tables its claims name: one large one each.
        ids = {}
        for name in sizes:
            desc = clients[0].describe_table(TableName=name)["Table"]
            assert desc["ItemCount"] == sizes[name]
        for server in servers:
            for line in re.findall(r"claimed the Time to Live job of table (\S+) \((\d+)\)",
                                   log_of(server)):
                ids[int(line[1])] = line[0]
        claims = ttl_claims(prefix)
        by_holder = {}
        for id_, holder in claims.items():
            by_holder.setdefault(holder, []).append(ids[id_])
        assert sorted(len([t for t in tables if t.startswith("big")])
                      for tables in by_holder.values()) == [1, 1, 1], by_holder
        for holder, tables in by_holder.items():
            assert sum(weights[t] for t in tables) == shares[holder], (holder, tables)


def test_a_killed_front_ends_tables_are_reaped_before_its_takeover(kumo_bin, tmp_path):
    """Leases of 30 s. A front end holding TTL jobs is killed: once its renewals stop (for
    3/8 of a lease), the others leave it out of the spread and claim its tables, and reap
    them while it is still listed, before its lease lapses (at the earliest 3/4 of a lease
    after the kill) and its work is taken over."""
    with started(kumo_bin, tmp_path, admin_port=0, flags=CLOCK,
                 extra_args=["--rados-lease-seconds", "30"]) as servers:
        clients = [s.client() for s in servers]
        prefix = deployment_prefix(servers[0])
        tables = [f"ttl-{i}" for i in range(6)]
        now = int(servers[0].admin.now())
        for n, table in enumerate(tables):
            create(clients[n % 3], table)
            enable_ttl(clients[n % 3], table)
            fill(clients[n % 3], table, 20, exp=now + 100)
            fill(clients[n % 3], table, 5, start=100)

        def spread():
            claims = ttl_claims(prefix)
            return (len(claims) == 6 and all(len(v) == 16 for v in claims.values()) and
                    sorted(list(claims.values()).count(h) for h in set(claims.values()))
                    == [2, 2, 2])

        wait_for(spread, 60, "two TTL jobs held by each front end")
        victim, survivors = servers[0], servers[1:]
        instance = last_share(victim)[0]
        held = [i for i, h in ttl_claims(prefix).items() if h == instance]
        assert len(held) == 2
        victim.kill()
        for server in survivors:
            server.admin.advance(200)
        lasting = [f"k{i}" for i in range(100, 105)]

        def reaped():
            return all(sorted(i["pk"]["S"] for i in all_pages(
                clients[1].scan, TableName=t, ConsistentRead=True)) == lasting for t in tables)

        wait_for(reaped, 40, "every expired item deleted by the survivors")
        # Still listed (its lease has not lapsed, its work is not taken over yet).
        listed = b"\xfff" + bytes.fromhex(instance)
        assert listed in omap(prefix, "kumo.catalog")
        deleted = {}
        for server in survivors:
            for count, table, _ in TTL_DELETED.findall(log_of(server)):
                deleted[table] = deleted.get(table, 0) + int(count)
        assert deleted == {t: 20 for t in tables}, deleted
        assert all(h != instance for h in ttl_claims(prefix).values())


def test_a_ttl_scan_cut_by_kill_is_finished_by_another_front_end(kumo_bin, tmp_path):
    """2,500 items written before TTL is enabled; the front end that enables it is killed
    once its scan recorded its first page (KUMO_TTL_SCAN_FAULT=page). Two front ends started
    then: one claims the scan once the killed one is taken over, resumes it where it was
    left, and every item is scheduled (all expire)."""
    shared = tmp_path / "shared"
    first = KumoProcess(kumo_bin, str(tmp_path), data_dir=shared, admin_port=0, flags=CLOCK)
    others = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared, admin_port=0, flags=CLOCK)
              for _ in range(2)]
    os.environ["KUMO_TTL_SCAN_FAULT"] = "page"
    try:
        first.start()
    finally:
        del os.environ["KUMO_TTL_SCAN_FAULT"]
    try:
        client = first.client()
        create(client, "scanned")
        now = int(first.admin.now())
        fill(client, "scanned", 2500, exp=now + 100)
        enable_ttl(client, "scanned")
        first.proc.wait(timeout=60)
        assert first.proc.returncode == -9
        assert "resumed where it was left" not in log_of(first)
        for server in others:
            server.start()
        wait_for(lambda: any("Time to Live scan of table scanned" in log_of(s) and
                             "resumed where it was left" in log_of(s) for s in others),
                 60, "the scan resumed by another front end")
        assert [("resumed where it was left" in log_of(s)) for s in others].count(True) == 1
        c = others[0].client()
        for server in others:
            server.admin.advance(200)
        wait_for(lambda: all_pages(c.scan, TableName="scanned", ConsistentRead=True) == [],
                 90, "every item scheduled and deleted")
    finally:
        first.kill()
        for server in others:
            server.stop()


def test_a_front_end_joining_under_load_does_not_wait_for_a_live_owner(kumo_bin, tmp_path):
    """Leases of 16 s. A front end holds a write whose outbox entry is in the pool
    (KUMO_RADOS_FAULT=outbox-hold) while it goes on renewing its lease: a front end started
    then sees the renewals of the entry's owner and serves at once, without waiting for its
    lease (it used to wait the whole 16 s). Then the owner is killed: its entry is still
    finished by the other (the GSI entry of the held write appears)."""
    shared = tmp_path / "shared"
    args = ["--rados-lease-seconds", "16"]
    owner = KumoProcess(kumo_bin, str(tmp_path), data_dir=shared, extra_args=args)
    joiner = KumoProcess(kumo_bin, str(tmp_path), data_dir=shared, extra_args=args)
    start_with_fault(owner, "outbox-hold")
    try:
        client = owner.client()
        create_with_gsi(client, "loaded")
        prefix = deployment_prefix(owner)
        def put_held():
            # (Answered only once the owner stops: killed below, the connection closes.)
            try:
                client.put_item(TableName="loaded",
                                Item={"pk": {"S": "held"}, "g": {"S": "g0"}})
            except botocore.exceptions.BotoCoreError:
                pass

        held = threading.Thread(target=put_held, daemon=True)
        held.start()

        def outbox_entries():
            out = []
            ns = prefix + "t" + tables_ns_id(prefix)
            for oid in rados_ls(ns):
                out += [k for k in omap(ns, oid) if k.startswith(b"\xffo")]
            return out

        wait_for(outbox_entries, 20, "the held write's outbox entry in the pool")
        began = time.monotonic()
        joiner.start(timeout=30)
        joined = time.monotonic() - began
        instance = re.search(r"front end ([0-9a-f]{16}) renews its lease", log_of(joiner))
        assert instance, log_of(joiner)
        assert joined < 12, joined
        assert outbox_entries()
        other = joiner.client()
        assert other.get_item(TableName="loaded", Key={"pk": {"S": "held"}},
                              ConsistentRead=True)["Item"]["g"] == {"S": "g0"}
        # A dead owner's entry is still taken over.
        owner.kill()
        wait_for(lambda: gsi_keys(other, "loaded", "g0") == ["held"], 60,
                 "the killed owner's entry finished by the other front end")
        assert not outbox_entries()
    finally:
        owner.kill()
        joiner.stop()


def tables_ns_id(prefix):
    """The id of the only table of the deployment, from its namespace."""
    from rados_helpers import rados
    ids = set()
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, _ = line.partition("\t")
        if ns.startswith(prefix + "t") and ns[len(prefix) + 1:].isdigit():
            ids.add(ns[len(prefix) + 1:])
    assert len(ids) == 1, ids
    return ids.pop()


def rados_ls(ns):
    from rados_helpers import rados
    return rados("-N", ns, "ls").decode().split()


def test_counts_and_gsi_reads_see_another_front_ends_splits(kumo_bin, tmp_path):
    """Partitions of 40 keys. Front end B reads a table (its map is cached), then A writes
    300 items, splitting its partitions: B's DescribeTable counts every item and GSI entry,
    and B's Scan and Query of the GSI return every item, right after."""
    shared = tmp_path / "shared"
    args = ["--rados-partition-keys", "40"]
    a, b = (KumoProcess(kumo_bin, str(tmp_path), data_dir=shared, extra_args=args)
            for _ in range(2))
    a.start()
    b.start()
    try:
        ca, cb = a.client(), b.client()
        create_with_gsi(ca, "split")
        assert cb.describe_table(TableName="split")["Table"]["ItemCount"] == 0
        assert gsi_keys(cb, "split", "g0") == []
        prefix = deployment_prefix(a)
        model = {}
        for at in range(0, 300, 25):
            items = [{"pk": {"S": f"k{i:03}"}, "g": {"S": f"g{i % 5}"}}
                     for i in range(at, at + 25)]
            ca.batch_write_item(RequestItems={"split": [{"PutRequest": {"Item": i}}
                                                        for i in items]})
            model.update({i["pk"]["S"]: i for i in items})
        # 300 items and as many GSI entries over partitions of 40 keys: many splits.
        assert check_layout(prefix) >= 4 + 10
        table = cb.describe_table(TableName="split")["Table"]
        assert table["ItemCount"] == 300
        assert table["GlobalSecondaryIndexes"][0]["ItemCount"] == 300
        assert table["TableSizeBytes"] == ca.describe_table(
            TableName="split")["Table"]["TableSizeBytes"]
        entries = all_pages(cb.scan, TableName="split", IndexName="by-g")
        assert sorted(e["pk"]["S"] for e in entries) == sorted(model)
        for g in range(5):
            assert gsi_keys(cb, "split", f"g{g}") == sorted(
                k for k, v in model.items() if v["g"]["S"] == f"g{g}")
    finally:
        a.stop()
        b.stop()
