"""Mixed write load with an exact model, for the SIGKILL crash loops (test_crash_loops.py).

Every key is owned by one worker thread, and every write to a key gives it a new `ver`
(a per-key counter that never repeats, deletes included), so the state a key must have is
known exactly: the last acknowledged state, or — for the one operation a thread had in
flight when the server died — that operation's old or new state. The model records both.

Tables:
* A: pk S + sk N, an LSI on lv (N, projection ALL), a multi-attribute GSI
  (g1 S + g2 N HASH, r1 S RANGE, INCLUDE ver, w) and a one-attribute GSI on g1 (KEYS_ONLY).
  Index attributes are set, changed and removed at random, so items enter and leave the
  (sparse) indexes.
* B: pk S only, no index.

Both tables have a stream (NEW_AND_OLD_IMAGES): StreamChecker reads them as a consumer
does (every shard, parents first, each from where it last stopped) and checks that each
key's records form one chain (each record's OldImage is the NewImage of the record before)
that ends at the key's state: no change lost, none twice, none out of order.

Operations: PutItem; UpdateItem (SET + ADD cnt, condition on ver, sometimes REMOVE of index
attributes); DeleteItem (condition on ver); BatchWriteItem (25 puts/deletes over both
tables); TransactWriteItems (1-3 writes over both tables plus a ConditionCheck).
"""

import http.client
import json
import random
import threading
import time

from kumo_testlib import N, S, create_table_args, scan_all
from stream_helpers import StreamsApi, all_shards, drain

TABLE_A = "crash-a"
TABLE_B = "crash-b"
GSI_MULTI = "gsi-multi"
GSI_SIMPLE = "gsi-simple"
LSI = "lsi-lv"
PARTITIONS_A = 4   # per worker
SORT_KEYS_A = 10   # per partition
KEYS_B = 20        # per worker
INDEX_ATTRS = ("g1", "g2", "r1", "lv")
STREAM = {"StreamSpecification": {"StreamEnabled": True,
                                  "StreamViewType": "NEW_AND_OLD_IMAGES"}}


def create_tables(api):
    defs = [("pk", "S"), ("sk", "N"), ("g1", "S"), ("g2", "N"), ("r1", "S"), ("lv", "N")]
    api.ok("CreateTable", create_table_args(
        TABLE_A, ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t} for a, t in defs],
        GlobalSecondaryIndexes=[
            {"IndexName": GSI_MULTI,
             "KeySchema": [{"AttributeName": "g1", "KeyType": "HASH"},
                           {"AttributeName": "g2", "KeyType": "HASH"},
                           {"AttributeName": "r1", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["ver", "w"]}},
            {"IndexName": GSI_SIMPLE,
             "KeySchema": [{"AttributeName": "g1", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
        ],
        LocalSecondaryIndexes=[
            {"IndexName": LSI,
             "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                           {"AttributeName": "lv", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ], **STREAM))
    api.ok("CreateTable", create_table_args(TABLE_B, ("pk", "S"), **STREAM))


def key_attrs(key):
    """Model key (table, pk, sk or None) → DynamoDB Key map."""
    table, pk, sk = key
    k = {"pk": S(pk)}
    if sk is not None:
        k["sk"] = N(sk)
    return k


def canonical(item):
    return json.dumps(item, sort_keys=True) if item is not None else None


# --------------------------------------------------------------------------- model


class Pending:
    """The operation a worker has sent and not yet seen answered."""

    def __init__(self, kind, changes, wid):
        self.kind = kind          # PutItem, UpdateItem, ...
        self.changes = changes    # {key: (old item or None, new item or None)}
        self.wid = wid
        self.delivered = True     # False when the connection was refused (never sent)

    def describe(self):
        return f"{self.kind} by worker {self.wid} on {len(self.changes)} key(s)"


class Model:
    def __init__(self, workers):
        self.workers = workers
        self.state = {}      # key → item or None
        self.version = {}    # key → last ver issued
        self.keys_of = {}
        for w in range(workers):
            keys = [(TABLE_A, f"w{w}-p{p}", s) for p in range(PARTITIONS_A)
                    for s in range(SORT_KEYS_A)]
            keys += [(TABLE_B, f"w{w}-b{i}", None) for i in range(KEYS_B)]
            self.keys_of[w] = keys
            for k in keys:
                self.state[k] = None
                self.version[k] = 0
        self.acknowledged = 0      # writes (items) acknowledged, cumulative
        self.verified = 0          # acknowledged item states checked after a restart
        self.in_flight = 0         # in-flight item writes resolved after a restart
        self.in_flight_applied = 0
        self.in_flight_ops = 0
        self.loops = 0


class Worker:
    """One load thread; owns model.keys_of[wid]."""

    def __init__(self, wid, model, port, rng, stop, label, unknown_on_500=False):
        self.wid = wid
        # A front end paused past its lease fails the request it held with
        # InternalServerError: whether that write was applied is not known (it is in flight).
        self.unknown_on_500 = unknown_on_500
        self.model = model
        self.port = port
        self.rng = rng
        self.stop = stop
        self.label = label        # unique per loop, for the w attribute
        self.keys = model.keys_of[wid]
        self.pending = None
        self.errors = []
        self.ops = 0
        self.acked_items = 0
        self.seq = 0
        self.conn = None
        self.longest = 0.0  # seconds, the longest wait for an answer

    # ----------------------------------------------------------------- item making

    def next_version(self, key):
        self.model.version[key] += 1
        return self.model.version[key]

    def write_id(self):
        self.seq += 1
        return f"{self.label}-w{self.wid}-{self.seq}"

    def payload(self):
        return "x" * self.rng.randint(0, 300)

    def index_values(self):
        """Random index attributes; each may be absent (sparse indexes)."""
        r = self.rng
        out = {}
        if r.random() < 0.8:
            out["g1"] = S(f"g{r.randint(0, 3)}")
        if r.random() < 0.8:
            out["g2"] = N(r.randint(0, 4))
        if r.random() < 0.8:
            out["r1"] = S(f"r{r.randint(0, 50):02d}")
        if r.random() < 0.7:
            out["lv"] = N(r.randint(0, 1000))
        return out

    def new_item(self, key):
        item = key_attrs(key)
        item["ver"] = N(self.next_version(key))
        item["w"] = S(self.write_id())
        item["p"] = S(self.payload())
        if key[0] == TABLE_A:
            item.update(self.index_values())
        if self.rng.random() < 0.5:
            item["cnt"] = N(self.rng.randint(0, 9))
        return item

    # ----------------------------------------------------------------- operations

    def op_put(self):
        key = self.rng.choice(self.keys)
        item = self.new_item(key)
        body = {"TableName": key[0], "Item": item}
        return "PutItem", body, {key: (self.model.state[key], item)}

    def op_update(self, key=None):
        key = key or self.rng.choice(self.keys)
        old = self.model.state[key]
        ver = self.next_version(key)
        w = self.write_id()
        p = self.payload()
        values = {":nv": N(ver), ":w": S(w), ":p": S(p), ":one": N(1)}
        sets = ["ver = :nv", "w = :w", "p = :p"]
        removes = []
        new = dict(old) if old else key_attrs(key)
        new.update(ver=N(ver), w=S(w), p=S(p))
        if key[0] == TABLE_A:
            fresh = self.index_values()
            for attr in INDEX_ATTRS:
                choice = self.rng.random()
                if choice < 0.4 and attr in fresh:
                    sets.append(f"{attr} = :{attr}")
                    values[f":{attr}"] = fresh[attr]
                    new[attr] = fresh[attr]
                elif choice < 0.55:
                    removes.append(attr)
                    new.pop(attr, None)
        new["cnt"] = N(int(old["cnt"]["N"]) + 1 if old and "cnt" in old else 1)
        expr = "SET " + ", ".join(sets) + " ADD cnt :one"
        if removes:
            expr += " REMOVE " + ", ".join(removes)
        body = {"TableName": key[0], "Key": key_attrs(key), "UpdateExpression": expr,
                "ExpressionAttributeValues": values}
        self.add_condition(body, old)
        return "UpdateItem", body, {key: (old, new)}

    def add_condition(self, body, old):
        if old is None:
            body["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            body["ConditionExpression"] = "ver = :ov"
            body.setdefault("ExpressionAttributeValues", {})[":ov"] = old["ver"]

    def op_delete(self):
        key = self.rng.choice(self.keys)
        old = self.model.state[key]
        self.next_version(key)
        body = {"TableName": key[0], "Key": key_attrs(key)}
        if self.rng.random() < 0.7:
            self.add_condition(body, old)
        return "DeleteItem", body, {key: (old, None)}

    def op_batch(self):
        keys = self.rng.sample(self.keys, 25)
        requests = {}
        changes = {}
        for key in keys:
            old = self.model.state[key]
            if self.rng.random() < 0.75:
                item = self.new_item(key)
                requests.setdefault(key[0], []).append({"PutRequest": {"Item": item}})
                changes[key] = (old, item)
            else:
                self.next_version(key)
                requests.setdefault(key[0], []).append(
                    {"DeleteRequest": {"Key": key_attrs(key)}})
                changes[key] = (old, None)
        return "BatchWriteItem", {"RequestItems": requests}, changes

    def op_transact(self):
        n_writes = self.rng.randint(1, 3)
        keys = self.rng.sample(self.keys, n_writes + 1)
        items, changes = [], {}
        for key in keys[:n_writes]:
            old = self.model.state[key]
            kind = self.rng.choice(["Put", "Update", "Delete"])
            if kind == "Put":
                item = self.new_item(key)
                action = {"TableName": key[0], "Item": item}
                if self.rng.random() < 0.5:
                    self.add_condition(action, old)
                changes[key] = (old, item)
            elif kind == "Update":
                _, action, ch = self.op_update(key)
                changes.update(ch)
            else:
                self.next_version(key)
                action = {"TableName": key[0], "Key": key_attrs(key)}
                self.add_condition(action, old)
                changes[key] = (old, None)
            items.append({kind: action})
        check_key = keys[-1]
        check = {"TableName": check_key[0], "Key": key_attrs(check_key)}
        self.add_condition(check, self.model.state[check_key])
        items.append({"ConditionCheck": check})
        changes[check_key] = (self.model.state[check_key], self.model.state[check_key])
        self.rng.shuffle(items)
        return "TransactWriteItems", {"TransactItems": items}, changes

    OPS = [("PutItem", 3), ("UpdateItem", 4), ("DeleteItem", 1), ("BatchWriteItem", 1),
           ("TransactWriteItems", 2)]

    def choose(self):
        names = [n for n, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        kind = self.rng.choices(names, weights)[0]
        return {"PutItem": self.op_put, "UpdateItem": self.op_update,
                "DeleteItem": self.op_delete, "BatchWriteItem": self.op_batch,
                "TransactWriteItems": self.op_transact}[kind]()

    # ----------------------------------------------------------------- loop

    def run(self, api):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            while not self.stop.is_set():
                kind, body, changes = self.choose()
                self.pending = Pending(kind, changes, self.wid)
                sent = time.monotonic()
                try:
                    resp = api(kind, body, conn=self.conn)
                except ConnectionRefusedError:
                    self.pending.delivered = False
                    return
                except (OSError, http.client.HTTPException):
                    return  # the server died with this operation in flight
                self.longest = max(self.longest, time.monotonic() - sent)
                if resp.status == 500 and self.unknown_on_500:
                    return  # in flight: applied or not
                if resp.status != 200:
                    self.errors.append(f"{kind} answered {resp.status} {resp.body[:400]!r} "
                                       f"(request {json.dumps(body)[:600]})")
                    self.pending = None
                    return
                self.apply(kind, body, changes, resp.json)
                self.pending = None
                self.ops += 1
        finally:
            self.conn.close()

    def apply(self, kind, body, changes, answer):
        unprocessed = set()
        if kind == "BatchWriteItem":
            for table, reqs in (answer.get("UnprocessedItems") or {}).items():
                for r in reqs:
                    k = r.get("PutRequest", {}).get("Item") or r["DeleteRequest"]["Key"]
                    unprocessed.add((table, k["pk"]["S"],
                                     int(k["sk"]["N"]) if "sk" in k else None))
        for key, (old, new) in changes.items():
            if key in unprocessed:
                continue
            self.model.state[key] = new
            if old is not new:
                self.acked_items += 1


def run_load(model, api_factory, port, rng, label, stop, unknown_on_500=False):
    """Starts one Worker thread per model worker; returns (workers, threads). `port` is the
    server's, or a list of front ends' ports: worker w sends to port[w % len(port)]."""
    ports = port if isinstance(port, list) else [port]
    workers = [Worker(w, model, ports[w % len(ports)], random.Random(rng.random()), stop, label,
                      unknown_on_500)
               for w in range(model.workers)]
    threads = []
    for w in workers:
        api = api_factory()
        t = threading.Thread(target=w.run, args=(api,), daemon=True)
        t.start()
        threads.append(t)
    return workers, threads


# --------------------------------------------------------------------------- verification


def model_key(table, item):
    return (table, item["pk"]["S"], int(item["sk"]["N"]) if "sk" in item else None)


def expected_index_entries(base_items):
    """Index name → sorted canonical entries implied by the base items of table A."""
    out = {GSI_MULTI: [], GSI_SIMPLE: [], LSI: []}
    for item in base_items:
        keys = {"pk": item["pk"], "sk": item["sk"]}
        if all(a in item for a in ("g1", "g2", "r1")):
            entry = dict(keys, g1=item["g1"], g2=item["g2"], r1=item["r1"])
            entry.update({a: item[a] for a in ("ver", "w") if a in item})
            out[GSI_MULTI].append(canonical(entry))
        if "g1" in item:
            out[GSI_SIMPLE].append(canonical(dict(keys, g1=item["g1"])))
        if "lv" in item:
            out[LSI].append(canonical(item))
    return {k: sorted(v) for k, v in out.items()}


def verify(api, model, pendings):
    """Checks the restarted server against the model, resolves the in-flight operations
    into the model, and returns a list of problems (empty when consistent)."""
    problems = []
    actual = {}
    base_a = []
    for table in (TABLE_A, TABLE_B):
        items = scan_all(api, table)
        if table == TABLE_A:
            base_a = items
        for item in items:
            key = model_key(table, item)
            if key not in model.state:
                problems.append(f"unexpected item {item}")
                continue
            if key in actual:
                problems.append(f"Scan returned {key} twice")
            actual[key] = item
        count = api.ok("DescribeTable", {"TableName": table})["Table"]["ItemCount"]
        if count != len(items):
            problems.append(f"{table}: DescribeTable ItemCount {count} but Scan found "
                            f"{len(items)} items")

    pending_keys = {}
    for p in pendings:
        for key in p.changes:
            pending_keys[key] = p
    # Keys with no operation in flight: exactly the acknowledged state.
    for key, expected in model.state.items():
        if key in pending_keys:
            continue
        got = actual.get(key)
        if canonical(got) != canonical(expected):
            problems.append(f"acknowledged state lost for {key}:\n  expected {expected}\n"
                            f"  found    {got}")
        else:
            model.verified += 1
    # In-flight operations: each key old or new; transactions all-or-nothing.
    for p in pendings:
        outcome = {}
        for key, (old, new) in p.changes.items():
            got = canonical(actual.get(key))
            if got == canonical(new) and got == canonical(old):
                outcome[key] = "same"
            elif got == canonical(new):
                outcome[key] = "new"
            elif got == canonical(old):
                outcome[key] = "old"
            else:
                outcome[key] = "neither"
                problems.append(f"in-flight {p.describe()}: {key} is neither the old nor "
                                f"the new state:\n  old   {old}\n  new   {new}\n"
                                f"  found {actual.get(key)}")
        states = {o for o in outcome.values() if o != "same"}
        if p.kind == "TransactWriteItems" and len(states) > 1:
            problems.append(f"in-flight transaction partly applied: {outcome}")
        if not p.delivered and "new" in states:
            problems.append(f"{p.describe()} was never sent but is applied: {outcome}")
        model.in_flight_ops += 1
        for key, o in outcome.items():
            if o in ("new", "old"):
                model.in_flight += 1
                model.in_flight_applied += o == "new"
            model.state[key] = actual.get(key)

    # Indexes equal what the base items imply (restarted server, no load).
    expected = expected_index_entries(base_a)
    for index, entries in expected.items():
        got = sorted(canonical(i) for i in scan_all(api, TABLE_A, index))
        if got != entries:
            missing = sorted(set(entries) - set(got))[:3]
            extra = sorted(set(got) - set(entries))[:3]
            problems.append(f"index {index}: {len(got)} entries, base implies {len(entries)}; "
                            f"missing e.g. {missing}; extra e.g. {extra}")
    desc = api.ok("DescribeTable", {"TableName": TABLE_A})["Table"]
    for idx in desc.get("GlobalSecondaryIndexes", []) + desc.get("LocalSecondaryIndexes", []):
        name = idx["IndexName"]
        if "ItemCount" in idx and idx["ItemCount"] != len(expected[name]):
            problems.append(f"index {name}: DescribeTable ItemCount {idx['ItemCount']}, "
                            f"entries {len(expected[name])}")
    return problems


class StreamChecker:
    """Reads both tables' streams across restarts as one consumer would, and checks every
    key's chain of records against the model."""

    def __init__(self):
        self.after = {}       # shard id → sequence number of the last record read
        self.finished = set()  # closed shards read to their end
        self.state = {}       # key → its item as the stream last showed it (None: gone)
        self.records = 0

    def check(self, api, port, model):
        """Reads what was added since the last call; returns a list of problems."""
        streams = StreamsApi(port)
        problems = []
        for table in (TABLE_A, TABLE_B):
            arn = api.ok("DescribeTable", {"TableName": table})["Table"]["LatestStreamArn"]
            for shard in all_shards(streams, arn):
                sid = shard["ShardId"]
                if sid in self.finished:
                    continue
                body = {"StreamArn": arn, "ShardId": sid, "ShardIteratorType": "TRIM_HORIZON"}
                if sid in self.after:
                    body.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                SequenceNumber=self.after[sid])
                iterator = streams.ok("GetShardIterator", body)["ShardIterator"]
                records, _, last = drain(streams, iterator)
                if "NextShardIterator" not in last:
                    self.finished.add(sid)
                for record in records:
                    self.records += 1
                    self.after[sid] = record["dynamodb"]["SequenceNumber"]
                    key = model_key(table, record["dynamodb"]["Keys"])
                    old = record["dynamodb"].get("OldImage")
                    new = record["dynamodb"].get("NewImage")
                    if canonical(old) != canonical(self.state.get(key)):
                        problems.append(f"stream of {table}: {record['eventName']} of {key} "
                                        f"does not follow its last record:\n  last "
                                        f"{self.state.get(key)}\n  old image {old}")
                    self.state[key] = new
        for key, expected in model.state.items():
            if canonical(self.state.get(key)) != canonical(expected):
                problems.append(f"stream ends at another state of {key}:\n  stream "
                                f"{self.state.get(key)}\n  table  {expected}")
        return problems
