"""A DynamoDB Streams consumer against concurrent writers: 10,000 mixed
write actions (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems, and
writes that change nothing) from several threads, each owning its keys and logging every
acknowledged change in order, on a NEW_AND_OLD_IMAGES stream, while a consumer polls
GetRecords (Limit 1000) on every shard (one per partition of the table). The consumer must
see every change exactly once, each shard's records in sequence order, and each key's
records must equal its writer's log."""

import http.client
import random
import threading
import time

from kumo_testlib import TARGET_PREFIX, normalize_item, signed_request
from stream_helpers import (
    STREAMS_PREFIX,
    N,
    S,
    all_shards,
    check_new_shards,
    check_record_shape,
    create_stream_table,
    iterators,
    shard_iterator,
    streams_api_for,
)

WRITERS = 8
ACTIONS_PER_WRITER = 1250  # 10,000 write actions in all
KEYS_PER_WRITER = 64
VIEW = "NEW_AND_OLD_IMAGES"


class Conn:
    """A keep-alive connection for one thread."""

    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, target, body):
        return signed_request(self.port, target, body, conn=self.conn)

    def ok(self, op, body):
        resp = self.call(TARGET_PREFIX + op, body)
        assert resp.status == 200, f"{op} failed: {resp!r}"
        return resp.json

    def close(self):
        self.conn.close()


class Writer:
    """One writing thread: owns keys w<id>-<n>, models their items, and logs every
    acknowledged change per key as (eventName, old item, new item)."""

    def __init__(self, wid, port, table, actions=ACTIONS_PER_WRITER):
        self.wid = wid
        self.target = actions
        self.sent = 0.0
        self.table = table
        self.rng = random.Random(1000 + wid)
        self.keys = [f"w{wid}-{n}" for n in range(KEYS_PER_WRITER)]
        self.items = {}  # key → current item
        self.log = {k: [] for k in self.keys}
        self.actions = 0
        self.changes = 0
        self.conn = Conn(port)
        self.error = None

    # ---- the model

    def new_item(self, key):
        item = {"pk": S(key), "v": N(self.rng.randrange(-50, 1000)),
                "s": S("".join(self.rng.choice("abcxyz✓") for _ in range(self.rng.randrange(6))))}
        if self.rng.random() < 0.3:
            item["opt"] = {"SS": sorted(self.rng.sample(["p", "q", "r", "s"], 2))}
        return item

    def record(self, key, new):
        """Applies an acknowledged write of `key` (new item or None) to the model."""
        old = self.items.get(key)
        if old is None and new is None:
            return
        if old is not None and new is not None and normalize_item(old) == normalize_item(new):
            return
        event = "INSERT" if old is None else "REMOVE" if new is None else "MODIFY"
        # (event, old, new, request sent, response received): monotonic seconds.
        self.log[key].append((event, old, new, self.sent, time.monotonic()))
        self.changes += 1
        if new is None:
            del self.items[key]
        else:
            self.items[key] = new

    def put_choice(self, key):
        """A new item for `key`: sometimes the very same item (a write that changes
        nothing)."""
        if key in self.items and self.rng.random() < 0.15:
            return dict(self.items[key])
        return self.new_item(key)

    def update_plan(self, key):
        """(UpdateExpression, values, resulting item)."""
        old = self.items.get(key)
        s = "".join(self.rng.choice("mn") for _ in range(3))
        d = self.rng.choice([0, 0, 1, 5, -3])
        new = dict(old) if old else {"pk": S(key)}
        new["s"] = S(s)
        new["v"] = N(int(old["v"]["N"]) + d if old and "v" in old else d)
        expr = "SET s = :s ADD v :d"
        if old and "opt" in old and self.rng.random() < 0.3:
            expr += " REMOVE opt"
            del new["opt"]
        return expr, {":s": S(s), ":d": N(d)}, new

    # ---- the operations

    def op_put(self):
        key = self.rng.choice(self.keys)
        item = self.put_choice(key)
        self.conn.ok("PutItem", {"TableName": self.table, "Item": item})
        self.record(key, item)
        return 1

    def op_update(self):
        key = self.rng.choice(self.keys)
        expr, values, new = self.update_plan(key)
        self.conn.ok("UpdateItem", {"TableName": self.table, "Key": {"pk": S(key)},
                                    "UpdateExpression": expr,
                                    "ExpressionAttributeValues": values})
        self.record(key, new)
        return 1

    def op_delete(self):
        key = self.rng.choice(self.keys)
        self.conn.ok("DeleteItem", {"TableName": self.table, "Key": {"pk": S(key)}})
        self.record(key, None)
        return 1

    def op_failed_condition(self):
        key = self.rng.choice(self.keys)
        cond = "attribute_not_exists(pk)" if key in self.items else "attribute_exists(pk)"
        resp = self.conn.call(TARGET_PREFIX + "PutItem", {
            "TableName": self.table, "Item": self.new_item(key), "ConditionExpression": cond})
        assert resp.status == 400 and resp.error_type == "ConditionalCheckFailedException", resp
        return 1

    def op_batch(self):
        keys = self.rng.sample(self.keys, self.rng.randrange(2, 26))
        requests, planned = [], []
        for key in keys:
            if self.rng.random() < 0.7:
                item = self.put_choice(key)
                requests.append({"PutRequest": {"Item": item}})
                planned.append((key, item))
            else:
                requests.append({"DeleteRequest": {"Key": {"pk": S(key)}}})
                planned.append((key, None))
        out = self.conn.ok("BatchWriteItem", {"RequestItems": {self.table: requests}})
        assert out["UnprocessedItems"] == {}, out
        for key, new in planned:
            self.record(key, new)
        return len(keys)

    def op_transact(self):
        keys = self.rng.sample(self.keys, self.rng.randrange(2, 6))
        fail = self.rng.random() < 0.05
        actions, planned = [], []
        for i, key in enumerate(keys):
            r = self.rng.random()
            if fail and i == 0:
                cond = "attribute_not_exists(pk)" if key in self.items else "attribute_exists(pk)"
                actions.append({"ConditionCheck": {"TableName": self.table,
                                                   "Key": {"pk": S(key)},
                                                   "ConditionExpression": cond}})
            elif r < 0.15:
                cond = "attribute_exists(pk)" if key in self.items else "attribute_not_exists(pk)"
                actions.append({"ConditionCheck": {"TableName": self.table,
                                                   "Key": {"pk": S(key)},
                                                   "ConditionExpression": cond}})
            elif r < 0.45:
                item = self.put_choice(key)
                actions.append({"Put": {"TableName": self.table, "Item": item}})
                planned.append((key, item))
            elif r < 0.8:
                expr, values, new = self.update_plan(key)
                actions.append({"Update": {"TableName": self.table, "Key": {"pk": S(key)},
                                           "UpdateExpression": expr,
                                           "ExpressionAttributeValues": values}})
                planned.append((key, new))
            else:
                actions.append({"Delete": {"TableName": self.table, "Key": {"pk": S(key)}}})
                planned.append((key, None))
        resp = self.conn.call(TARGET_PREFIX + "TransactWriteItems", {"TransactItems": actions})
        if fail:
            assert resp.status == 400 and \
                resp.error_type == "TransactionCanceledException", resp
        else:
            assert resp.status == 200, resp
            for key, new in planned:
                self.record(key, new)
        return len(keys)

    def run(self):
        ops = [(self.op_put, 25), (self.op_update, 25), (self.op_delete, 10),
               (self.op_failed_condition, 4), (self.op_batch, 4), (self.op_transact, 10)]
        funcs = [f for f, _ in ops]
        weights = [w for _, w in ops]
        try:
            while self.actions < self.target:
                op = self.rng.choices(funcs, weights)[0]
                self.sent = time.monotonic()
                self.actions += op()
        except BaseException as e:  # reported by the test
            self.error = e
        finally:
            self.conn.close()


class Consumer:
    """Polls one shard with GetRecords (Limit 1000) until told to stop and a page comes back
    empty."""

    def __init__(self, port, iterator):
        self.conn = Conn(port)
        self.iterator = iterator
        self.records = []
        self.pages = 0
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            while True:
                finishing = self.stop.is_set()
                resp = self.conn.call(STREAMS_PREFIX + "GetRecords",
                                      {"ShardIterator": self.iterator, "Limit": 1000})
                assert resp.status == 200, resp
                out = resp.json
                self.pages += 1
                assert len(out["Records"]) <= 1000
                self.records.extend(out["Records"])
                assert "NextShardIterator" in out, "open shard without NextShardIterator"
                self.iterator = out["NextShardIterator"]
                if not out["Records"]:
                    if finishing:
                        return
                    time.sleep(0.005)
        except BaseException as e:
            self.error = e
        finally:
            self.conn.close()


def view(event, old, new):
    return (event, None if old is None else normalize_item(old),
            None if new is None else normalize_item(new))


def test_consumer_sees_every_change_exactly_once_in_order(start_server):
    srv = start_server()
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    table, arn = create_stream_table(api, client, VIEW)
    check_new_shards(all_shards(streams, arn))
    t0 = time.time()

    consumers = [Consumer(srv.port, it) for it in iterators(streams, arn, "TRIM_HORIZON")]
    writers = [Writer(w, srv.port, table) for w in range(WRITERS)]
    consumer_threads = [threading.Thread(target=c.run, name=f"consumer-{i}")
                        for i, c in enumerate(consumers)]
    writer_threads = [threading.Thread(target=w.run, name=f"writer-{w.wid}") for w in writers]
    for th in consumer_threads + writer_threads:
        th.start()
    for th in writer_threads:
        th.join(timeout=120)
    for c in consumers:
        c.stop.set()  # every write is acknowledged: one more empty page ends the read
    for th in consumer_threads:
        th.join(timeout=60)
    t1 = time.time()

    assert not any(th.is_alive() for th in writer_threads), "writers did not finish"
    assert not any(th.is_alive() for th in consumer_threads), "consumer did not finish"
    for w in writers:
        if w.error is not None:
            raise w.error
    for c in consumers:
        if c.error is not None:
            raise c.error

    actions = sum(w.actions for w in writers)
    changes = sum(w.changes for w in writers)
    assert actions >= WRITERS * ACTIONS_PER_WRITER
    records = [r for c in consumers for r in c.records]
    assert all(c.pages > 1 for c in consumers), [c.pages for c in consumers]

    # Sequence numbers order the records of a shard (shards of several partitions may
    # give equal numbers).
    for c in consumers:
        numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in c.records]
        assert len(set(numbers)) == len(numbers), "a SequenceNumber was delivered twice"
        assert all(a < b for a, b in zip(numbers, numbers[1:])), \
            "sequence numbers not increasing"
    assert len({r["eventID"] for r in records}) == len(records), "duplicate eventIDs"
    assert len(records) == changes, (
        f"{len(records)} records for {changes} acknowledged changes ({actions} write actions)")

    by_key = {}
    for r in records:
        check_record_shape(r, VIEW, t0, t1)
        d = r["dynamodb"]
        key = d["Keys"]["pk"]["S"]
        assert d["Keys"] == {"pk": S(key)}
        by_key.setdefault(key, []).append(view(r["eventName"], d.get("OldImage"),
                                               d.get("NewImage")))
    logged = {}
    for w in writers:
        for key, entries in w.log.items():
            if entries:
                logged[key] = [view(*e[:3]) for e in entries]
    assert set(by_key) == set(logged)
    for key, want in logged.items():
        got = by_key[key]
        assert got == want, (f"key {key}: {len(got)} records, {len(want)} logged changes; first "
                             "difference at " + str(next((i for i, (g, x) in
                                                          enumerate(zip(got, want)) if g != x),
                                                         min(len(got), len(want)))))

    # A second reader after the fact sees the same records in every shard.
    assert read_shards(streams, arn) == [c.records for c in consumers]


def read_shard(streams, arn, shard_id):
    """Every record of a shard: reads until an empty page or the end of a closed shard."""
    it, records = shard_iterator(streams, arn, shard_id=shard_id), []
    while it:
        out = streams.ok("GetRecords", {"ShardIterator": it, "Limit": 1000})
        records.extend(out["Records"])
        if not out["Records"]:
            break
        it = out.get("NextShardIterator")
    return records


def read_shards(streams, arn):
    """Every record of each shard of a stream, one list per shard, in DescribeStream's
    order."""
    return [read_shard(streams, arn, s["ShardId"]) for s in all_shards(streams, arn)]


def test_disable_and_enable_while_writing(start_server):
    """Changes committed before the disable are in the first stream, changes committed after
    the enable are in the second, changes in between are in none: per key, the first stream
    holds a prefix of the writer's log and the second a suffix, bounded by when the
    UpdateTable calls were made."""
    srv = start_server()
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    table, arn1 = create_stream_table(api, client, VIEW)
    writers = [Writer(w, srv.port, table, actions=700) for w in range(4)]
    threads = [threading.Thread(target=w.run, name=f"writer-{w.wid}") for w in writers]
    for th in threads:
        th.start()

    def wait_actions(n):
        deadline = time.monotonic() + 60
        while sum(w.actions for w in writers) < n and time.monotonic() < deadline:
            time.sleep(0.002)

    wait_actions(600)
    disable_sent = time.monotonic()
    api.ok("UpdateTable", {"TableName": table, "StreamSpecification": {"StreamEnabled": False}})
    disable_acked = time.monotonic()
    wait_actions(1200)
    enable_sent = time.monotonic()
    arn2 = api.ok("UpdateTable", {"TableName": table, "StreamSpecification": {
        "StreamEnabled": True, "StreamViewType": VIEW}})["TableDescription"]["LatestStreamArn"]
    enable_acked = time.monotonic()
    for th in threads:
        th.join(timeout=120)
    assert not any(th.is_alive() for th in threads), "writers did not finish"
    for w in writers:
        if w.error is not None:
            raise w.error
    assert arn2 != arn1

    # Each partition's shard of the first stream (closed) and of the second (listed in the
    # same place): the partition numbers on across both, the second's records all above
    # the first's EndingSequenceNumber.
    shards1 = check_new_shards(all_shards(streams, arn1), closed=True)
    check_new_shards(all_shards(streams, arn2))
    first_by_shard, second_by_shard = read_shards(streams, arn1), read_shards(streams, arn2)
    for shard, own1, own2 in zip(shards1, first_by_shard, second_by_shard):
        end = int(shard["SequenceNumberRange"]["EndingSequenceNumber"])
        numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in own1 + own2]
        assert all(a < b for a, b in zip(numbers, numbers[1:])), \
            "sequence numbers not increasing"
        assert all(int(r["dynamodb"]["SequenceNumber"]) <= end for r in own1)
        assert all(int(r["dynamodb"]["SequenceNumber"]) > end for r in own2)
    first = [r for own in first_by_shard for r in own]
    second = [r for own in second_by_shard for r in own]

    def per_key(records):
        out = {}
        for r in records:
            d = r["dynamodb"]
            out.setdefault(d["Keys"]["pk"]["S"], []).append(
                view(r["eventName"], d.get("OldImage"), d.get("NewImage")))
        return out

    got1, got2 = per_key(first), per_key(second)
    in_first = in_second = in_neither = 0
    for w in writers:
        for key, entries in w.log.items():
            views = [view(*e[:3]) for e in entries]
            a, b = len(got1.get(key, [])), len(entries) - len(got2.get(key, []))
            assert got1.get(key, []) == views[:a], f"{key}: first stream not a prefix of the log"
            assert got2.get(key, []) == views[b:], f"{key}: second stream not a suffix of the log"
            assert a <= b, f"{key}: a change is in both streams"
            must_first = sum(1 for e in entries if e[4] < disable_sent)
            may_first = sum(1 for e in entries if e[3] <= disable_acked)
            must_not_second = sum(1 for e in entries if e[4] < enable_sent)
            may_not_second = sum(1 for e in entries if e[3] <= enable_acked)
            assert must_first <= a <= may_first, (key, must_first, a, may_first)
            assert must_not_second <= b <= may_not_second, (key, must_not_second, b,
                                                            may_not_second)
            in_first += a
            in_second += len(entries) - b
            in_neither += b - a
    assert in_first == len(first) and in_second == len(second)
    assert in_first > 0 and in_second > 0 and in_neither > 0, (in_first, in_neither, in_second)
