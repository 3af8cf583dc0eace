"""Transactions across several Kumo front ends on one RADOS pool (docs/scale-out.md,
"Transactions across front ends").

- Money transfers (TransactWriteItems of two Updates) through three front ends at once,
  with TransactGetItems readers through all three: the sum of the balances never changes,
  no reader ever sees a torn transfer, and no transfer is lost (each account counts the
  transfers it took part in).
- A transaction stopped between its prepare and its commit holds its items: a write of
  one through another front end gets TransactionConflictException, a transaction that
  writes or reads one is cancelled with the reason TransactionConflict on that item, and a
  GetItem reads the item as it was. Once the stopped front end's lease lapses another one
  aborts the transaction: its items are free and it never happened, and the stopped front
  end's request fails when it resumes.
- A front end killed between its prepare and its commit leaves a pending transaction,
  which another front end aborts.
- TransactGetItems confirms its reads by the items' versions, not their values: a reader
  stopped between its two reads and again between its two confirmations, while two
  transactions change both items and the second changes one back to the value read, never
  answers the pair that no moment had.
- A ClientRequestToken's outcome is kept with its transaction: a front end killed right
  after its transaction's commit point leaves it to another, which completes the token as
  it applies the transaction; a repeat of the token 61 s later, or just under ten minutes
  later (the front ends' manual clocks), answers success with read units and applies
  nothing again. A transaction killed before its commit point runs when repeated.
- BatchWriteItem writes the items no transaction holds and returns the held one in
  UnprocessedItems, as the request wrote it; resent once the transaction ended, it is
  written.
"""

import random
import signal
import threading
import time
import uuid

import botocore.exceptions
import pytest

from kumo_testlib import KumoProcess, on_rados
from rados_helpers import deployment_prefix, omap, rados
from front_end_helpers import (
    a_pair_no_moment_had,
    cancellation_codes,
    create,
    held_by_a_pause,
    retried,
    run_all,
    started,
    wait_for,
)

pytestmark = pytest.mark.skipif(not on_rados(), reason="several front ends share a RADOS pool")

ACCOUNTS = 8
OPENING = 250


def account(n):
    return {"pk": {"S": f"account-{n}"}}


def test_money_transfers_through_three_front_ends_conserve_the_sum(kumo_bin, tmp_path):
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared) for _ in range(3)]
    try:
        for server in servers:
            server.start()
        clients = [s.client() for s in servers]
        create(clients[0], "bank")
        for n in range(ACCOUNTS):
            clients[n % 3].put_item(TableName="bank", Item={
                **account(n), "balance": {"N": str(OPENING)}, "transfers": {"N": "0"}})
        total = ACCOUNTS * OPENING
        done, refused, conflicts, reads, torn, unexpected = [], [], [], [], [], []
        stop = threading.Event()

        def transfer(w):
            client = clients[w % 3]
            for i in range(40):
                source, target = (w + i) % ACCOUNTS, (w * 3 + i * 5 + 1) % ACCOUNTS
                if source == target:
                    target = (target + 1) % ACCOUNTS
                amount = 1 + (w + i) % 30
                request = {"TransactItems": [
                    {"Update": {"TableName": "bank", "Key": account(source),
                                "UpdateExpression": "SET balance = balance - :a "
                                                    "ADD transfers :one",
                                "ConditionExpression": "balance >= :a",
                                "ExpressionAttributeValues": {
                                    ":a": {"N": str(amount)}, ":one": {"N": "1"}}}},
                    {"Update": {"TableName": "bank", "Key": account(target),
                                "UpdateExpression": "SET balance = balance + :a "
                                                    "ADD transfers :one",
                                "ExpressionAttributeValues": {
                                    ":a": {"N": str(amount)}, ":one": {"N": "1"}}}}]}
                for attempt in range(1000):
                    try:
                        client.transact_write_items(**request)
                        done.append((source, target, amount))
                        break
                    except botocore.exceptions.ClientError as e:
                        codes = cancellation_codes(e)
                        if "TransactionConflict" in codes:
                            # Another transaction held an account: again, after a random
                            # wait, as DynamoDB's guidance for this error says.
                            conflicts.append(codes)
                            time.sleep(random.uniform(0, 0.005 * min(2 ** attempt, 64)))
                            continue
                        if codes == ["ConditionalCheckFailed", "None"]:
                            refused.append((source, amount))
                            break
                        unexpected.append(e.response["Error"])
                        return

        def read(r):
            client = clients[r % 3]
            while not stop.is_set():
                try:
                    got = client.transact_get_items(TransactItems=[
                        {"Get": {"TableName": "bank", "Key": account(n)}}
                        for n in range(ACCOUNTS)])
                except botocore.exceptions.ClientError as e:
                    if "TransactionConflict" in cancellation_codes(e):
                        conflicts.append(cancellation_codes(e))
                        time.sleep(random.uniform(0, 0.02))
                        continue
                    unexpected.append(e.response["Error"])
                    return
                items = [x["Item"] for x in got["Responses"]]
                balances = sum(int(x["balance"]["N"]) for x in items)
                counted = sum(int(x["transfers"]["N"]) for x in items)
                reads.append(counted)
                # Every transfer touches two accounts: a torn one leaves an odd count, or
                # a sum that is not the total.
                if balances != total or counted % 2:
                    torn.append((balances, counted))

        readers = [threading.Thread(target=read, args=(r,)) for r in range(3)]
        for t in readers:
            t.start()
        try:
            run_all([lambda w=w: transfer(w) for w in range(6)])
        finally:
            stop.set()
            for t in readers:
                t.join()
        print(f"{len(done)} transfers, {len(refused)} refused for a low balance, "
              f"{len(conflicts)} TransactionConflict cancellations, {len(reads)} snapshots read")
        assert unexpected == []
        assert torn == []
        # A cancellation for a conflict names only TransactionConflict and None, one reason
        # per action (two for a transfer, eight for a snapshot).
        assert all(set(codes) <= {"TransactionConflict", "None"} and len(codes) in (2, ACCOUNTS)
                   for codes in conflicts)
        assert len(done) + len(refused) == 6 * 40
        assert len(reads) > 0
        # Snapshots taken while transfers ran saw them progress, never go back in total.
        assert max(reads) <= 2 * len(done)
        balances = {n: OPENING for n in range(ACCOUNTS)}
        for source, target, amount in done:
            balances[source] -= amount
            balances[target] += amount
        # The order of the transfers is unknown, so only what every order gives: the sum,
        # and each account's count of transfers.
        counts = {n: 0 for n in range(ACCOUNTS)}
        for source, target, _ in done:
            counts[source] += 1
            counts[target] += 1
        for client in clients:
            items = {x["pk"]["S"]: x for x in client.scan(TableName="bank",
                                                         ConsistentRead=True)["Items"]}
            assert sum(int(x["balance"]["N"]) for x in items.values()) == total
            assert all(int(x["balance"]["N"]) >= 0 for x in items.values())
            assert {k: int(x["transfers"]["N"]) for k, x in items.items()} == {
                f"account-{n}": counts[n] for n in range(ACCOUNTS)}
        # With every transfer's net change known, the balances are exact too: a transfer
        # refused for a low balance changed nothing.
        assert {k: int(x["balance"]["N"]) for k, x in items.items()} == {
            f"account-{n}": balances[n] for n in range(ACCOUNTS)}
    finally:
        for server in servers:
            server.stop()


def held_table(servers, **options):
    """Makes table "held" through the second front end, with item k0 ("before"); returns
    that front end's client and the keys k0 to k5."""
    other = servers[1].client()
    create(other, "held", **options)
    other.put_item(TableName="held", Item={"pk": {"S": "k0"}, "v": {"S": "before"}})
    return other, [f"k{i}" for i in range(6)]


def held_items(client):
    return {x["pk"]["S"]: x["v"]["S"]
            for x in client.scan(TableName="held", ConsistentRead=True)["Items"]}


def put_request(keys):
    return [{"Put": {"TableName": "held", "Item": {"pk": {"S": k}, "v": {"S": "txn"}}}}
            for k in keys]


def test_a_transaction_in_progress_holds_its_items_until_it_is_aborted(kumo_bin, tmp_path):
    # The first front end stops itself once its transaction holds its items.
    with started(kumo_bin, tmp_path, 2, fault="prepared-pause") as servers:
        other, keys = held_table(servers)
        writer, outcome = held_by_a_pause(servers[0], lambda client: client.transact_write_items(
            TransactItems=put_request(keys)))
        # A write of a held item: TransactionConflictException, as DynamoDB answers.
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            other.put_item(TableName="held", Item={"pk": {"S": "k1"}, "v": {"S": "single"}})
        error = raised.value.response
        assert error["Error"]["Code"] == "TransactionConflictException"
        assert error["Error"]["Message"] == "Transaction is ongoing for the item"
        assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
        # A transaction that writes one: cancelled, the reason on that item only.
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            other.transact_write_items(TransactItems=[
                {"Put": {"TableName": "held", "Item": {"pk": {"S": "free"}}}},
                {"Delete": {"TableName": "held", "Key": {"pk": {"S": "k2"}}}}])
        assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
        assert raised.value.response["CancellationReasons"] == [
            {"Code": "None"},
            {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]
        assert "Item" not in other.get_item(TableName="held", Key={"pk": {"S": "free"}},
                                            ConsistentRead=True)
        # A transaction that reads them: cancelled likewise.
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            other.transact_get_items(TransactItems=[
                {"Get": {"TableName": "held", "Key": {"pk": {"S": "free"}}}},
                {"Get": {"TableName": "held", "Key": {"pk": {"S": "k0"}}}}])
        assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
        assert cancellation_codes(raised.value) == ["None", "TransactionConflict"]
        # A read sees the item as it was: nothing is written before the commit point.
        assert other.get_item(TableName="held", Key={"pk": {"S": "k0"}},
                              ConsistentRead=True)["Item"]["v"] == {"S": "before"}
        # Once the stopped front end's lease (3 s) lapses, the other aborts its
        # transaction: the items are free, and the transaction never happened.
        wait_for(lambda: try_put(other, "k1"), 20, "the held items released")
        items = held_items(other)
        assert items == {"k0": "before", "k1": "single"}
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=30)
        # Its commit finds the record aborted: the request fails, and writes nothing.
        assert outcome and outcome[0] != "ok", outcome
        items = held_items(other)
        assert items == {"k0": "before", "k1": "single"}
        # The same transaction, through either front end now, commits whole (through the
        # resumed one once it goes on under a new client: InternalServerError until then).
        resumed = servers[0].client()
        retried(lambda: resumed.transact_write_items(TransactItems=put_request(keys)),
                "the transaction through the resumed front end")
        items = held_items(other)
        assert items == {k: "txn" for k in keys}


def test_a_committed_transaction_is_read_whole_before_it_is_applied(kumo_bin, tmp_path):
    # The first front end stops itself once its transaction is committed, before it has
    # applied any of it.
    with started(kumo_bin, tmp_path, 2, fault="transaction-pause") as servers:
        other, keys = held_table(servers, StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        other.put_item(TableName="held", Item={"pk": {"S": "gone"}, "v": {"S": "before"}})
        writer, outcome = held_by_a_pause(servers[0], lambda client: client.transact_write_items(
            TransactItems=put_request(keys) + [
                {"Delete": {"TableName": "held", "Key": {"pk": {"S": "gone"}}}}]))
        # Past its commit point the transaction has happened: a read through the other
        # front end sees all of it, although none of it is written yet.
        for key in keys:
            assert other.get_item(TableName="held", Key={"pk": {"S": key}},
                                  ConsistentRead=True)["Item"] == {"pk": {"S": key},
                                                                   "v": {"S": "txn"}}
        assert "Item" not in other.get_item(TableName="held", Key={"pk": {"S": "gone"}},
                                            ConsistentRead=True)
        # A write of one of its items waits for it to be applied.
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            other.put_item(TableName="held", Item={"pk": {"S": "k1"}, "v": {"S": "single"}})
        assert raised.value.response["Error"]["Code"] == "TransactionConflictException"
        # Once the stopped front end's lease lapses, the other applies it.
        wait_for(lambda: try_put(other, "k1"), 20, "the transaction applied")
        items = held_items(other)
        assert items == dict({k: "txn" for k in keys}, k1="single")
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=30)
        assert outcome, "the stopped front end's request never ended"
        # Applied by another, it is not applied again.
        items = held_items(other)
        assert items == dict({k: "txn" for k in keys}, k1="single")
        # Its stream records were numbered by their partitions when the other front end
        # applied it: each item's changes once, in order, within its shard's range.
        changes = stream_changes(servers[1].client(service="dynamodbstreams"),
                                 other.describe_table(TableName="held")["Table"]["LatestStreamArn"])
        assert changes == dict(
            {k: [("INSERT", None, "txn")] for k in keys[1:]},
            k0=[("INSERT", None, "before"), ("MODIFY", "before", "txn")],
            k1=[("INSERT", None, "txn"), ("MODIFY", "txn", "single")],
            gone=[("INSERT", None, "before"), ("REMOVE", "before", None)])


def stream_changes(streams, arn):
    """Each item's changes as its stream records show them, (event, old v, new v), after
    checking that every record's number lies in its shard's range, in increasing order."""
    changes = {}
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        start = int(shard["SequenceNumberRange"]["StartingSequenceNumber"])
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        numbers = []
        while iterator:
            out = streams.get_records(ShardIterator=iterator)
            if not out["Records"]:
                break
            for r in out["Records"]:
                d = r["dynamodb"]
                numbers.append(int(d["SequenceNumber"]))
                changes.setdefault(d["Keys"]["pk"]["S"], []).append(
                    (r["eventName"], d.get("OldImage", {}).get("v", {}).get("S"),
                     d.get("NewImage", {}).get("v", {}).get("S")))
            iterator = out.get("NextShardIterator")
        assert numbers == sorted(set(numbers)) and all(n >= start for n in numbers), shard
    return changes


def try_put(client, key):
    try:
        client.put_item(TableName="held", Item={"pk": {"S": key}, "v": {"S": "single"}})
        return True
    except botocore.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] == "TransactionConflictException"
        return False


def test_a_transaction_killed_before_its_commit_is_aborted_by_another_front_end(
        kumo_bin, tmp_path):
    with started(kumo_bin, tmp_path, 2, fault="prepared") as servers:
        other = servers[1].client()
        create(other, "held")
        with pytest.raises(Exception):
            servers[0].client().transact_write_items(TransactItems=put_request(["a", "b", "c"]))
        servers[0].proc.wait(timeout=10)
        # Held until the killed front end's lease lapses; then free, and never written.
        wait_for(lambda: try_put(other, "b"), 20, "the held items released")
        items = held_items(other)
        assert items == {"b": "single"}


def set_lock(prefix, pk, record, tmp_path):
    """Sets, as a transaction's prepare would, the lock of item `pk` of table 1 naming the
    transaction record `record` (with `rados setomapval --omap-key-file`: the key holds
    zero bytes); returns the partition's namespace and object, and the lock's key."""
    namespace = prefix + "t1"
    for oid in rados("-N", namespace, "ls").decode().split():
        for key in omap(namespace, oid):
            if key[:5] == b"\x00\x00\x00\x01\x01" and pk.encode() in key:
                lock = b"\xffl" + key
                (tmp_path / "lock-key").write_bytes(lock)
                rados("-N", namespace, "--omap-key-file", str(tmp_path / "lock-key"),
                      "setomapval", oid, record)
                return namespace, oid, lock
    raise AssertionError(f"no item {pk} in {namespace}")


def test_a_lock_whose_transaction_ended_is_removed_by_the_next_write(kumo_bin, tmp_path):
    """A lock can outlive its transaction: a prepare op that reached its partition after the
    transaction was aborted and its record removed. The next write of the item finds the
    record gone and removes the lock; a lock whose record is still pending holds."""
    server = KumoProcess(kumo_bin, str(tmp_path), data_dir=tmp_path / "shared")
    try:
        server.start()
        client = server.client()
        create(client, "held")
        for pk in ("orphan", "pending"):
            client.put_item(TableName="held", Item={"pk": {"S": pk}, "v": {"S": "before"}})
        prefix = deployment_prefix(server)
        namespace, oid, lock = set_lock(prefix, "orphan",
                                        "kumo.txn.00000000000000ff.0000000000000001", tmp_path)
        assert lock in omap(namespace, oid)
        client.put_item(TableName="held", Item={"pk": {"S": "orphan"}, "v": {"S": "after"}})
        assert lock not in omap(namespace, oid)
        assert client.get_item(TableName="held", Key={"pk": {"S": "orphan"}},
                               ConsistentRead=True)["Item"]["v"] == {"S": "after"}
        # The record of a transaction still in progress.
        (tmp_path / "state").write_bytes(b"P")
        rados("-N", prefix, "create", "kumo.txn.00000000000000ff.pending")
        rados("-N", prefix, "setomapval", "kumo.txn.00000000000000ff.pending", "state",
              "--input-file", str(tmp_path / "state"))
        namespace, oid, lock = set_lock(prefix, "pending", "kumo.txn.00000000000000ff.pending",
                                        tmp_path)
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            client.put_item(TableName="held", Item={"pk": {"S": "pending"}, "v": {"S": "after"}})
        assert raised.value.response["Error"]["Code"] == "TransactionConflictException"
        assert lock in omap(namespace, oid)
        assert client.get_item(TableName="held", Key={"pk": {"S": "pending"}},
                               ConsistentRead=True)["Item"]["v"] == {"S": "before"}
    finally:
        server.stop()


def test_a_transact_get_never_answers_a_pair_that_no_moment_had(kumo_bin, tmp_path):
    # The reader's front end stops after its first item read, and again after it has
    # confirmed the first of its two partitions.
    with started(kumo_bin, tmp_path, 2, fault="item-read-pause,confirm-pause") as servers:

        def read():
            out = servers[0].client().transact_get_items(TransactItems=[
                {"Get": {"TableName": "xtab", "Key": {"pk": {"S": "x"}}}},
                {"Get": {"TableName": "ytab", "Key": {"pk": {"S": "y"}}}}])
            return [r["Item"]["v"]["S"] for r in out["Responses"]]

        outcome = a_pair_no_moment_had(servers, read, "reader")
        # Read again, as it is now (or cancelled, as DynamoDB may when its items keep
        # changing): never ["a", "b2"].
        assert outcome in (["a", "b3"], ("TransactionCanceledException",
                                         ["TransactionConflict", "TransactionConflict"])), \
            outcome


def clocked(kumo_bin, tmp_path, fault):
    """Two front ends on manual clocks that start at one time, the first with `fault`."""
    return started(kumo_bin, tmp_path, 2, fault=fault, admin_port=0,
                   flags={"clock": "manual", "clock-start": int(time.time())})


def counted_transaction(client, token):
    """An ADD of 1 to item "counter" and a 3000-byte item, under `token`: 8 write units
    (twice 1 + 3), and 4 read units (twice 1 + 1) for a repeat."""
    return client.transact_write_items(
        ClientRequestToken=token, ReturnConsumedCapacity="TOTAL",
        TransactItems=[
            {"Update": {"TableName": "idem", "Key": {"pk": {"S": "counter"}},
                        "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            {"Put": {"TableName": "idem", "Item": {"pk": {"S": "big"},
                                                   "pad": {"S": "x" * 3000}}}}])


def counter(client):
    item = client.get_item(TableName="idem", Key={"pk": {"S": "counter"}},
                           ConsistentRead=True).get("Item")
    return item and item["n"]["N"]


def once_not_in_progress(call, seconds=30):
    """Calls `call()` until it answers other than TransactionInProgressException (which a
    repeat gets until the killed front end's transaction is taken over: its lease, 3 s of
    real time); returns the answer, or the error's code."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call()
        except botocore.exceptions.ClientError as e:
            code = e.response["Error"]["Code"]
            if code != "TransactionInProgressException":
                return code
            assert e.response["Error"]["Message"] == \
                "Transaction from previous request is still in progress", e.response
            assert time.monotonic() < deadline, "still in progress"
            time.sleep(0.2)


def killed_in_a_transaction(servers):
    """Makes table "idem" through the second front end, then sends the counted transaction
    under a new token through the first, which its fault point kills in it; returns the
    second front end's client and the token."""
    other = servers[1].client()
    create(other, "idem")
    token = str(uuid.uuid4())
    with pytest.raises(Exception):
        counted_transaction(servers[0].client(), token)
    servers[0].proc.wait(timeout=10)
    return other, token


def test_a_token_committed_by_a_killed_front_end_is_never_applied_again(kumo_bin, tmp_path):
    # The first front end is killed right after its transaction's commit point, before it
    # applies any of it or answers.
    with clocked(kumo_bin, tmp_path, "transaction") as servers:
        other, token = killed_in_a_transaction(servers)
        # 61 s later: the first call's outcome, once the other front end has applied it.
        servers[1].admin.advance(61)
        out = once_not_in_progress(lambda: counted_transaction(other, token))
        assert out != "TransactionInProgressException" and not isinstance(out, str), out
        assert out["ConsumedCapacity"] == [{"TableName": "idem", "CapacityUnits": 4.0}]
        assert counter(other) == "1"
        # Just under ten minutes after the first call: the same.
        servers[1].admin.advance(598 - 61)
        out = counted_transaction(other, token)
        assert out["ConsumedCapacity"] == [{"TableName": "idem", "CapacityUnits": 4.0}]
        assert counter(other) == "1"
        # The token with other parameters: a mismatch.
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            other.transact_write_items(ClientRequestToken=token, TransactItems=[
                {"Put": {"TableName": "idem", "Item": {"pk": {"S": "other"}}}}])
        error = raised.value.response["Error"]
        assert (error["Code"], error["Message"]) == (
            "IdempotentParameterMismatchException",
            "Request parameters do not match the parameters of a previous request with the "
            "same client request token")
        # Past ten minutes the token is forgotten: the request runs again.
        servers[1].admin.advance(3)
        out = counted_transaction(other, token)
        assert out["ConsumedCapacity"] == [{"TableName": "idem", "CapacityUnits": 8.0}]
        assert counter(other) == "2"


def test_a_repeat_answers_the_item_collections_of_a_token_committed_by_a_killed_front_end(
        kumo_bin, tmp_path):
    """A transaction under a token asks for its item collections (ReturnItemCollectionMetrics
    SIZE, on a table with an LSI); its front end is killed right after the commit point. A
    repeat through the other front end, answered from the token's entry that the transaction
    completed in its own batch, gets the ItemCollectionMetrics the first call would have."""
    with clocked(kumo_bin, tmp_path, "transaction") as servers:
        other = servers[1].client()
        other.create_table(
            TableName="coll", BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                       {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                                  for a in ("pk", "sk", "l")],
            LocalSecondaryIndexes=[{
                "IndexName": "by-l", "Projection": {"ProjectionType": "KEYS_ONLY"},
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "l", "KeyType": "RANGE"}]}])
        token = str(uuid.uuid4())

        def put(client):
            # (Items "counter" and "big" lie in two partitions: a transaction across them.)
            return client.transact_write_items(
                ClientRequestToken=token, ReturnItemCollectionMetrics="SIZE",
                TransactItems=[{"Put": {"TableName": "coll", "Item": {
                    "pk": {"S": pk}, "sk": {"S": "1"}, "l": {"S": "x"}}}}
                    for pk in ("counter", "big")])

        with pytest.raises(Exception):
            put(servers[0].client())
        servers[0].proc.wait(timeout=10)
        out = once_not_in_progress(lambda: put(other))
        assert not isinstance(out, str), out
        assert out["ItemCollectionMetrics"] == {"coll": [
            {"ItemCollectionKey": {"pk": {"S": pk}}, "SizeEstimateRangeGB": [0.0, 1.0]}
            for pk in ("counter", "big")]}


def test_a_token_whose_transaction_never_committed_runs_when_repeated(kumo_bin, tmp_path):
    # The first front end is killed between its prepare and its commit point.
    with clocked(kumo_bin, tmp_path, "prepared") as servers:
        other, token = killed_in_a_transaction(servers)
        # Within the minute the token is in progress (its front end may yet commit it).
        with pytest.raises(botocore.exceptions.ClientError) as raised:
            counted_transaction(other, token)
        error = raised.value.response["Error"]
        assert (error["Code"], error["Message"]) == (
            "TransactionInProgressException",
            "Transaction from previous request is still in progress")
        # Past it, and once the other front end has aborted it, the request runs.
        servers[1].admin.advance(61)
        out = once_not_in_progress(lambda: counted_transaction(other, token))
        assert not isinstance(out, str), out
        assert out["ConsumedCapacity"] == [{"TableName": "idem", "CapacityUnits": 8.0}]
        assert counter(other) == "1"
        out = counted_transaction(other, token)
        assert out["ConsumedCapacity"] == [{"TableName": "idem", "CapacityUnits": 4.0}]
        assert counter(other) == "1"


def test_a_batch_write_returns_the_item_a_transaction_holds_unprocessed(kumo_bin, tmp_path):
    # The first front end stops itself once its transaction (k1 to k5, over several
    # partitions) holds its items.
    with started(kumo_bin, tmp_path, 2, fault="prepared-pause") as servers:
        other, keys = held_table(servers)
        other.put_item(TableName="held", Item={"pk": {"S": "d0"}, "v": {"S": "before"}})
        writer, outcome = held_by_a_pause(servers[0], lambda client: client.transact_write_items(
            TransactItems=put_request(keys[1:])))
        requests = [{"PutRequest": {"Item": {"pk": {"S": k}, "v": {"S": "batch"}}}}
                    for k in ("b1", "k1", "b2")]
        requests.append({"DeleteRequest": {"Key": {"pk": {"S": "d0"}}}})
        out = other.batch_write_item(RequestItems={"held": requests},
                                     ReturnConsumedCapacity="TOTAL")
        # The held item comes back as sent; the others are written, and only they counted.
        assert out["UnprocessedItems"] == {"held": [requests[1]]}
        assert out["ConsumedCapacity"] == [{"TableName": "held", "CapacityUnits": 3.0}]
        assert held_items(other) == {"k0": "before", "b1": "batch", "b2": "batch"}
        # The transaction ends (committed by its front end, or aborted by the other one if
        # its lease lapsed first); then the unprocessed request is written.
        servers[0].proc.send_signal(signal.SIGCONT)
        writer.join(timeout=30)
        assert outcome, "the transaction never ended"
        again = other.batch_write_item(RequestItems=out["UnprocessedItems"],
                                       ReturnConsumedCapacity="TOTAL")
        assert again["UnprocessedItems"] == {}
        assert again["ConsumedCapacity"] == [{"TableName": "held", "CapacityUnits": 1.0}]
        expected = {"k0": "before", "b1": "batch", "b2": "batch"}
        if outcome[0] == "ok":
            expected.update({k: "txn" for k in keys[2:]})
        expected["k1"] = "batch"
        assert held_items(other) == expected
