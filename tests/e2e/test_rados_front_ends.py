"""Several Kumo front ends on one RADOS pool and namespace (docs/scale-out.md, "Several front
ends"), as behind a load balancer: any of them serves any request.

- A catalog change made through one front end is seen by every other one when the request
  returns (the catalog object's watch/notify): a table created through one is written
  through another at once, a table deleted through one is gone on the others, an index
  added through one is described by the others.
- Catalog changes made at once through several front ends are ordered (each guarded on
  the catalog's version): tables created at once get tables of their own; the same name
  created at once through three front ends is created once, and the others get
  ResourceInUseException.
- A read-modify-write of one item through several front ends at once loses no update
  (each write guarded on the item as it was read): conditional increments and ADD updates
  from three front ends add up exactly.
- A ClientRequestToken is one across the front ends (kept in the pool): a transaction sent
  with one token to three front ends, at once and one after another, is applied once; the
  token with other parameters is a mismatch through any of them; ten minutes after the
  first call completed (the front ends' manual clocks moved) the token is forgotten, and
  its entry removed from the pool.
- Background jobs are claimed by one front end and taken over when it dies: a GSI's
  backfill; each table's TTL reaping, spread over the front ends (each deletes the expired
  items of its share of the tables only); a dropped table's removal, recorded with the
  catalog change and finished by another front end when the one that dropped it died.
"""

import os
import re
import threading
import time
import uuid

import botocore.exceptions
import pytest

from kumo_testlib import KumoProcess, on_rados
from rados_helpers import check_layout, deployment_prefix, omap, rados
from front_end_helpers import (  # noqa: F401
    add_gsi,
    all_pages,
    create,
    create_with_gsi,
    error_code,
    front_ends,
    gsi_keys,
    log_of,
    run_all,
    started,
    wait_for,
)

pytestmark = pytest.mark.skipif(not on_rados(), reason="several front ends share a RADOS pool")




def test_a_table_created_through_one_front_end_is_served_by_the_others(front_ends):
    one, two, three = (s.client() for s in front_ends)
    create(one, "shared-table")
    two.put_item(TableName="shared-table", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    assert three.get_item(TableName="shared-table", Key={"pk": {"S": "a"}},
                          ConsistentRead=True)["Item"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    for client in (one, two, three):
        assert client.list_tables()["TableNames"] == ["shared-table"]
        assert client.describe_table(TableName="shared-table")["Table"]["TableStatus"] == "ACTIVE"

    add_gsi(three, "shared-table")
    described = one.describe_table(TableName="shared-table")["Table"]
    assert [g["IndexName"] for g in described["GlobalSecondaryIndexes"]] == ["by-g"]

    two.delete_table(TableName="shared-table")
    for client in (one, three):
        assert error_code(lambda: client.get_item(
            TableName="shared-table", Key={"pk": {"S": "a"}})) == "ResourceNotFoundException"
        assert client.list_tables()["TableNames"] == []


def test_tables_created_at_once_through_several_front_ends_are_each_their_own(front_ends):
    clients = [s.client() for s in front_ends]
    run_all([lambda c=c, i=i: create(c, f"table-{i}") for i, c in enumerate(clients)])
    # Each table holds only what was written to it: no two share an id.
    for i in range(3):
        clients[(i + 1) % 3].put_item(TableName=f"table-{i}", Item={"pk": {"S": f"item-{i}"}})
    for i in range(3):
        items = clients[(i + 2) % 3].scan(TableName=f"table-{i}", ConsistentRead=True)["Items"]
        assert items == [{"pk": {"S": f"item-{i}"}}]
    for client in clients:
        assert client.list_tables()["TableNames"] == ["table-0", "table-1", "table-2"]

    outcomes = []

    def create_same(client):
        try:
            create(client, "same-name")
            outcomes.append("created")
        except botocore.exceptions.ClientError as e:
            outcomes.append(e.response["Error"]["Code"])

    run_all([lambda c=c: create_same(c) for c in clients])
    assert sorted(outcomes) == ["ResourceInUseException", "ResourceInUseException", "created"]


def test_read_modify_writes_through_three_front_ends_lose_no_update(front_ends):
    clients = [s.client() for s in front_ends]
    create(clients[0], "counters")
    rounds, workers = 25, 6
    acknowledged, unexpected = [], []

    def increment(client):
        # A conditional increment: read, then put n+1 only if n is still what was read.
        for _ in range(rounds):
            while True:
                item = client.get_item(TableName="counters", Key={"pk": {"S": "hot"}},
                                       ConsistentRead=True).get("Item")
                n = int(item["n"]["N"]) if item else 0
                try:
                    if item is None:
                        client.put_item(TableName="counters",
                                        Item={"pk": {"S": "hot"}, "n": {"N": "1"}},
                                        ConditionExpression="attribute_not_exists(pk)")
                    else:
                        client.put_item(TableName="counters",
                                        Item={"pk": {"S": "hot"}, "n": {"N": str(n + 1)}},
                                        ConditionExpression="n = :n",
                                        ExpressionAttributeValues={":n": {"N": str(n)}})
                    acknowledged.append(n + 1)
                    break
                except botocore.exceptions.ClientError as e:
                    if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                        unexpected.append(e.response["Error"])
                        return

    def add(client):
        for _ in range(rounds):
            client.update_item(TableName="counters", Key={"pk": {"S": "added"}},
                               UpdateExpression="ADD n :one",
                               ExpressionAttributeValues={":one": {"N": "1"}})

    run_all([lambda c=clients[i % 3]: increment(c) for i in range(workers)] +
            [lambda c=clients[i % 3]: add(c) for i in range(workers)])
    assert unexpected == []
    total = rounds * workers
    # Every acknowledged increment saw a value no other one saw.
    assert sorted(acknowledged) == list(range(1, total + 1))
    for client in clients:
        for key in ("hot", "added"):
            item = client.get_item(TableName="counters", Key={"pk": {"S": key}},
                                   ConsistentRead=True)["Item"]
            assert item["n"] == {"N": str(total)}, key


PARTITION_KEYS = 40


def test_partitions_split_while_three_front_ends_write(kumo_bin, tmp_path):
    """Each front end splits the partitions its writes fill; the others' writes to a
    partition being split wait, and those located with a map from before the split find
    another range, reload the map and go where the key lives now. Nothing acknowledged is
    lost, every front end reads every item, and the GSI equals the table."""
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared,
                           extra_args=["--rados-partition-keys", str(PARTITION_KEYS)])
               for _ in range(3)]
    try:
        for server in servers:
            server.start()
        clients = [s.client() for s in servers]
        create_with_gsi(clients[0], "split-table")
        per_writer, writers = 70, 6
        model, errors = {}, []
        lock = threading.Lock()

        def write(w):
            client = clients[w % 3]
            try:
                for i in range(per_writer):
                    key = f"w{w}-{i}"
                    item = {"pk": {"S": key}, "g": {"S": f"g{i % 7}"}, "v": {"N": str(i)}}
                    client.put_item(TableName="split-table", Item=item)
                    with lock:
                        model[key] = item
                    if i % 5 == 0:
                        # Through another front end: an update of an item already written.
                        other = clients[(w + 1) % 3]
                        other.update_item(TableName="split-table", Key={"pk": {"S": key}},
                                          UpdateExpression="SET v = v + :one",
                                          ExpressionAttributeValues={":one": {"N": "1"}})
                        with lock:
                            model[key] = dict(item, v={"N": str(i + 1)})
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        run_all([lambda w=w: write(w) for w in range(writers)])
        assert errors == []
        assert len(model) == per_writer * writers
        for n, client in enumerate(clients):
            items = all_pages(client.scan, TableName="split-table", ConsistentRead=True)
            assert {i["pk"]["S"]: i for i in items} == model, f"front end {n}"
            for key in list(model)[n::25]:
                assert client.get_item(TableName="split-table", Key={"pk": {"S": key}},
                                       ConsistentRead=True)["Item"] == model[key]
        for g in range(7):
            entries = all_pages(clients[g % 3].query, TableName="split-table", IndexName="by-g",
                                KeyConditionExpression="g = :g",
                                ExpressionAttributeValues={":g": {"S": f"g{g}"}})
            expected = {k: v for k, v in model.items() if v["g"]["S"] == f"g{g}"}
            assert {e["pk"]["S"]: e for e in entries} == expected, f"g{g}"
        prefix = deployment_prefix(servers[0])
        # 420 items and as many GSI entries over partitions of 40 keys: many splits.
        assert check_layout(prefix) >= 4 + 10
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def clocked_front_ends(kumo_bin, tmp_path):
    """Three front ends on one namespace, each with an admin listener and a manual clock,
    all started at one time (POST /clock/advance moves each one's)."""
    with started(kumo_bin, tmp_path, admin_port=0,
                 flags={"clock": "manual", "clock-start": int(time.time())}) as servers:
        yield servers


def token_entries(prefix):
    """{object: [keys]} of the ClientRequestToken entries kept in the deployment's objects."""
    out = {}
    for oid in rados("-N", prefix, "ls").decode().split():
        if oid != "kumo.catalog" and not oid.startswith("kumo.tokens."):
            continue
        keys = [k for k in omap(prefix, oid) if k.startswith(b"meta/tokens/")]
        if keys:
            out[oid] = keys
    return out


def test_a_client_request_token_is_one_across_front_ends(clocked_front_ends):
    servers = clocked_front_ends
    clients = [s.client() for s in servers]
    create(clients[0], "idem")
    token = str(uuid.uuid4())

    def transaction(client, amount=1):
        return client.transact_write_items(
            ClientRequestToken=token, ReturnConsumedCapacity="TOTAL",
            TransactItems=[
                {"Update": {"TableName": "idem", "Key": {"pk": {"S": "counter"}},
                            "UpdateExpression": "ADD n :inc",
                            "ExpressionAttributeValues": {":inc": {"N": str(amount)}}}},
                {"Put": {"TableName": "idem", "Item": {"pk": {"S": f"put-{amount}"},
                                                       "pad": {"S": "x" * 3000}}}}])

    def counter():
        item = clients[1].get_item(TableName="idem", Key={"pk": {"S": "counter"}},
                                   ConsistentRead=True).get("Item")
        return item and item["n"]["N"]

    # At once through the three front ends: one applies it, each other one answers as the
    # first did or finds it still in progress.
    outcomes = []

    def send(client):
        try:
            outcomes.append(("ok", transaction(client)["ConsumedCapacity"]))
        except botocore.exceptions.ClientError as e:
            outcomes.append((e.response["Error"]["Code"], None))

    run_all([lambda c=c: send(c) for c in clients])
    assert len(outcomes) == 3
    assert {code for code, _ in outcomes} <= {"ok", "TransactionInProgressException"}, outcomes
    assert "ok" in {code for code, _ in outcomes}, outcomes
    assert counter() == "1"

    # One after another: each replays the first call's result. A replay reports read units
    # (the first call wrote 2 + 6 units: the counter and the 3000-byte item, twice each).
    replays = [transaction(c)["ConsumedCapacity"] for c in clients]
    assert counter() == "1"
    assert replays[0] == replays[1] == replays[2], replays
    assert replays[0][0]["CapacityUnits"] < 8.0, replays
    firsts = [cc for code, cc in outcomes if code == "ok"]
    assert all(cc == replays[0] or cc[0]["CapacityUnits"] == 8.0 for cc in firsts), firsts

    # Other parameters under the token, through any front end: a mismatch, nothing written.
    for client in clients:
        assert error_code(lambda: transaction(client, amount=5)) == \
            "IdempotentParameterMismatchException"
    assert counter() == "1"

    # The entry lives in a token object of its own, not in the catalog object.
    prefix = deployment_prefix(servers[0])
    entries = token_entries(prefix)
    assert list(entries.values()) == [[b"meta/tokens/" + token.encode()]], entries
    assert list(entries)[0].startswith("kumo.tokens."), entries

    # Ten minutes after the first call completed the token is forgotten, and the front end
    # that completed it removes its entry.
    for server in servers:
        server.admin.advance(601)
    wait_for(lambda: not token_entries(prefix), 20, "the expired token's removal")
    transaction(clients[2], amount=5)
    assert counter() == "6"
    assert error_code(lambda: transaction(clients[0])) == "IdempotentParameterMismatchException"


def test_a_backfill_whose_front_end_died_is_finished_by_another(kumo_bin, tmp_path):
    """A GSI added through one front end is backfilled by that front end alone (it claims
    the job); killed midway, its claim lapses with its lease, another front end claims the
    job, backfills every item and makes the index ACTIVE."""
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared) for _ in range(2)]
    try:
        for server in servers:
            server.start()
        one, two = servers[0].client(), servers[1].client()
        create(two, "backfilled")
        items = {f"k{i:05d}": {"pk": {"S": f"k{i:05d}"}, "g": {"S": f"g{i % 5}"}}
                 for i in range(800)}
        keys = list(items)
        for at in range(0, len(keys), 25):
            two.batch_write_item(RequestItems={"backfilled": [
                {"PutRequest": {"Item": items[k]}} for k in keys[at:at + 25]]})
        add_gsi(one, "backfilled")
        servers[0].kill()
        index = two.describe_table(TableName="backfilled")["Table"]["GlobalSecondaryIndexes"][0]
        assert index["IndexStatus"] == "CREATING"

        def active():
            described = two.describe_table(TableName="backfilled")["Table"]
            return described["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"

        wait_for(active, 90, "the index backfilled by the other front end")
        for g in range(5):
            assert gsi_keys(two, "backfilled", f"g{g}") == sorted(
                k for k, v in items.items() if v["g"]["S"] == f"g{g}")
    finally:
        for server in servers:
            server.stop()


# Log lines of the TTL and drop jobs (Engine::balance_ttl_jobs, expire_items, run_drop).
TTL_CLAIMED = re.compile(r"claimed the Time to Live job of table (\S+) \((\d+)\)")
TTL_DELETED = re.compile(r"Time to Live deleted (\d+) items of table (\S+) \((\d+)\)")


def deleted_by(server):
    """{table: items} the server's TTL reaper logged as deleted."""
    out = {}
    for count, table, _ in TTL_DELETED.findall(log_of(server)):
        out[table] = out.get(table, 0) + int(count)
    return out


def job_claims(prefix, kind):
    """{job name: holding instance (hex)} of the claims of `kind` ("ttl", "drop", ...) kept
    in the catalog object (0xFF 'j' name -> u64 instance)."""
    marker = b"\xffj" + kind.encode() + b"/"
    return {k[2:].decode(): v.hex() for k, v in omap(prefix, "kumo.catalog").items()
            if k.startswith(marker)}


def create_ttl_table(client, name):
    create(client, name)
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})


def put_expiring(client, name, now, expiring=20, lasting=5):
    """`expiring` items due at now + 100, `lasting` without a TTL."""
    items = [{"pk": {"S": f"e{i}"}, "exp": {"N": str(now + 100)}} for i in range(expiring)]
    items += [{"pk": {"S": f"l{i}"}} for i in range(lasting)]
    for at in range(0, len(items), 25):
        client.batch_write_item(RequestItems={name: [
            {"PutRequest": {"Item": item}} for item in items[at:at + 25]]})


def keys_in(client, name):
    return sorted(i["pk"]["S"] for i in all_pages(client.scan, TableName=name,
                                                  ConsistentRead=True))


def test_ttl_reaping_is_spread_over_the_front_ends_and_done_once(clocked_front_ends):
    """Six tables with TTL over three front ends: each front end claims two of the tables'
    TTL jobs, and only the holder of a table's job deletes its expired items."""
    servers = clocked_front_ends
    clients = [s.client() for s in servers]
    prefix = deployment_prefix(servers[0])
    tables = [f"ttl-{i}" for i in range(6)]
    now = int(servers[0].admin.now())
    for n, table in enumerate(tables):
        create_ttl_table(clients[n % 3], table)
        put_expiring(clients[(n + 1) % 3], table, now)

    def spread():
        claims = job_claims(prefix, "ttl")
        holders = sorted(list(claims.values()).count(h) for h in set(claims.values()))
        return len(claims) == 6 and holders == [2, 2, 2]

    wait_for(spread, 30, "two TTL jobs claimed by each front end")
    for server in servers:
        server.admin.advance(200)
    lasting = [f"l{i}" for i in range(5)]
    wait_for(lambda: all(keys_in(clients[n % 3], t) == lasting for n, t in enumerate(tables)),
             30, "every expired item deleted")

    deleted = [deleted_by(s) for s in servers]
    for table in tables:
        # One front end deleted the table's 20 items: none was deleted by two.
        reapers = [d[table] for d in deleted if table in d]
        assert reapers == [20], (table, deleted)
    # Each front end reaped the two tables it claimed, and only those.
    for server, mine in zip(servers, deleted):
        claimed = {t for t, _ in TTL_CLAIMED.findall(log_of(server))}
        assert len(mine) == 2 and set(mine) <= claimed, (mine, claimed)
    assert set(job_claims(prefix, "ttl")) == {
        f"ttl/{id_}" for s in servers for _, _, id_ in TTL_DELETED.findall(log_of(s))}


def test_the_ttl_job_of_a_killed_front_end_is_taken_over(kumo_bin, tmp_path):
    """The front end that holds a table's TTL job is killed: the others do not reap the
    table while its lease holds; once it lapses (3 s) another one claims the job and
    deletes the expired items."""
    with started(kumo_bin, tmp_path, admin_port=0,
                 flags={"clock": "manual", "clock-start": int(time.time())}) as servers:
        clients = [s.client() for s in servers]
        prefix = deployment_prefix(servers[0])
        create_ttl_table(clients[0], "ttl-taken")
        now = int(servers[0].admin.now())
        put_expiring(clients[1], "ttl-taken", now)
        wait_for(lambda: len(job_claims(prefix, "ttl")) == 1, 20, "the TTL job claimed")
        holders = [s for s in servers if TTL_CLAIMED.search(log_of(s))]
        assert len(holders) == 1, [log_of(s) for s in servers]
        holder = holders[0]
        others = [s for s in servers if s is not holder]
        holder.kill()
        for server in others:
            server.admin.advance(200)
        client = others[0].client()
        # Its lease has not lapsed yet: nobody else reaps the table.
        assert len(keys_in(client, "ttl-taken")) == 25
        wait_for(lambda: keys_in(client, "ttl-taken") == [f"l{i}" for i in range(5)], 30,
                 "the expired items deleted by another front end")
        assert sum(deleted_by(s).get("ttl-taken", 0) for s in others) == 20
        assert [bool(TTL_CLAIMED.search(log_of(s))) for s in others].count(True) == 1
        assert len(job_claims(prefix, "ttl")) == 1


def table_objects(prefix):
    """{namespace: [objects]} of the deployment's table namespaces."""
    out = {}
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t"):
            out.setdefault(ns, []).append(oid)
    return out


def test_a_dropped_table_whose_front_end_died_midway_is_removed_by_another(kumo_bin,
                                                                          tmp_path):
    """DeleteTable through a front end killed after it removed the first of the table's
    partition objects (`drop`): the removal was recorded with the catalog change, so
    another front end claims it once the lease lapses and removes every partition object;
    the stream objects stay, with their records, and the record and claim go."""
    with started(kumo_bin, tmp_path, fault="drop",
                 flags={"rados-partition-keys": PARTITION_KEYS}) as servers:
        prefix = deployment_prefix(servers[0])
        one = servers[1].client()
        create(one, "dropped", StreamSpecification={"StreamEnabled": True,
                                                    "StreamViewType": "KEYS_ONLY"})
        keys = [f"k{i:04d}" for i in range(400)]
        for at in range(0, len(keys), 25):
            one.batch_write_item(RequestItems={"dropped": [
                {"PutRequest": {"Item": {"pk": {"S": k}, "v": {"S": "x" * 50}}}}
                for k in keys[at:at + 25]]})
        [(namespace, objects)] = table_objects(prefix).items()
        partitions = [o for o in objects if o.startswith("p")]
        streams = sorted(o for o in objects if o.startswith("s"))
        assert len(partitions) >= 5 and streams, objects

        with pytest.raises(Exception):
            servers[0].client().delete_table(TableName="dropped")
        servers[0].proc.wait(timeout=10)
        left = table_objects(prefix)[namespace]
        assert 0 < len([o for o in left if o.startswith("p")]) < len(partitions), left
        assert [k for k in omap(prefix, "kumo.catalog") if k.startswith(b"meta/drop/")]
        for client in (one, servers[2].client()):
            assert client.list_tables()["TableNames"] == []

        wait_for(lambda: not [o for o in table_objects(prefix).get(namespace, [])
                              if not o.startswith("s")], 30,
                 "the partition objects removed by another front end")
        assert sorted(table_objects(prefix)[namespace]) == streams
        assert not [k for k in omap(prefix, "kumo.catalog") if k.startswith(b"meta/drop/")]
        assert job_claims(prefix, "drop") == {}
        assert ["removed the data of dropped table dropped" in log_of(s)
                for s in servers[1:]].count(True) == 1


def shard_ids(streams, arn):
    described = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    return described["StreamStatus"], sorted(
        (s["ShardId"], s.get("ParentShardId"), "EndingSequenceNumber" in s["SequenceNumberRange"])
        for s in described["Shards"])


def test_a_stream_is_one_across_front_ends(kumo_bin, tmp_path):
    # Partitions of 8 keys: the table's writes split them, and the stream's shards with them.
    with started(kumo_bin, tmp_path, extra_args=["--rados-partition-keys", "8"]) as servers:
        clients = [s.client() for s in servers]
        streams = [s.client(service="dynamodbstreams") for s in servers]
        create(clients[0], "streamed",
               StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        arn = clients[0].describe_table(TableName="streamed")["Table"]["LatestStreamArn"]
        # Seen by every front end as soon as CreateTable answered.
        for client, stream in zip(clients, streams):
            assert client.describe_table(TableName="streamed")["Table"]["LatestStreamArn"] == arn
            assert [s["StreamArn"] for s in stream.list_streams()["Streams"]] == [arn]
        # One shard per partition (a table starts with four), which numbers its records.
        first = shard_ids(streams[0], arn)
        assert first[0] == "ENABLED" and len(first[1]) == 4
        assert [shard_ids(s, arn) for s in streams[1:]] == [first, first]

        # Splits by every front end's writes, each stored against the others' (a shard list
        # changed by two front ends at once loses neither change).
        run_all([lambda c=c, n=n: [c.put_item(TableName="streamed",
                                                Item={"pk": {"S": f"k{n}-{i}"}})
                                    for i in range(30)]
                 for n, c in enumerate(clients)])
        described = shard_ids(streams[0], arn)
        assert len(described[1]) >= 8, described  # 90 keys in partitions of 8
        # The open shards' token ranges cover every token once: each split was recorded.
        open_shards = [s for s in described[1] if not s[2]]
        closed = [s for s in described[1] if s[2]]
        assert len(open_shards) == len(closed) + 4
        parents = {s[1] for s in described[1] if s[1]}
        assert parents == {s[0] for s in closed}
        wait_for(lambda: all(shard_ids(s, arn) == described for s in streams[1:]), 10,
                 "every front end describes the same shards")

        # Disabled through another front end: closed for all.
        clients[2].update_table(TableName="streamed",
                                StreamSpecification={"StreamEnabled": False})
        for stream in streams:
            status, shards = shard_ids(stream, arn)
            assert status == "DISABLED"
            assert all(closed for _, _, closed in shards)


@pytest.mark.parametrize("kind", ["export", "import"])
def test_an_export_or_import_of_a_killed_front_end_is_ended_by_another(kumo_bin, tmp_path,
                                                                        kind):
    """A front end killed in the middle of an export or an import is not restarted: once its
    lease lapses, another front end claims the job. The export ends FAILED (what it read
    died with it), as after a restart; the import is run again and completes."""
    from data_helpers import (BUCKET, create_table, describe_export, export, fill,
                              import_table, table_items, wait_export, wait_import)
    from kumo_testlib import Api

    root = tmp_path / "s3"
    (root / BUCKET).mkdir(parents=True)
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=tmp_path / "shared",
                           extra_args=["--export-root", str(root), "--pitr-lag", "0"])
               for _ in range(2)]
    os.environ["KUMO_BACKUP_FAULT"] = f"{kind}-kill:256"
    try:
        servers[0].start()
    finally:
        del os.environ["KUMO_BACKUP_FAULT"]
    try:
        servers[1].start()
        victim, other = Api(servers[0].port), Api(servers[1].port)
        if kind == "export":
            create_table(other, "left-export")
            fill(other, "left-export", 600)
            started = export(victim, "left-export")
            servers[0].proc.wait(timeout=20)
            # Lease 3 s, and the others look for jobs every 2 s.
            done = wait_export(other, started["ExportArn"], timeout=30)
            assert done["ExportStatus"] == "FAILED" and done["FailureCode"] == "UNKNOWN", done
            assert describe_export(other, started["ExportArn"]) == done
        else:
            lines = "".join(f'{{"Item":{{"pk":{{"S":"k{i:04}"}},"sk":{{"N":"{i}"}}}}}}\n'
                            for i in range(600))
            (root / BUCKET / "left").mkdir()
            (root / BUCKET / "left" / "a.json").write_text(lines)
            started = import_table(victim, "left-import", prefix="left/")
            servers[0].proc.wait(timeout=20)
            done = wait_import(other, started["ImportArn"], timeout=30)
            assert done["ImportStatus"] == "COMPLETED", done
            assert (done["ProcessedItemCount"], done["ImportedItemCount"]) == (600, 600)
            assert len(table_items(other, "left-import")) == 600
    finally:
        for server in servers:
            server.stop()
