"""Helpers for the DynamoDB Streams tests (test_streams_*.py): raw
signed calls to the `DynamoDBStreams_20120810.*` targets, a boto3 `dynamodbstreams` client,
stream tables, the small writes the tests make (k<i> items, composite k<i>/<i> items, items
of one item collection), reading a shard to its end (open or closed), finding the shard of
an item, and checking the shape of records and of a new stream's shards.

A stream has as many shards as its table has partitions, as in DynamoDB: one on the local
back ends (a table is one partition there), one per partition on RADOS (4 for a new
table). Records are ordered within a shard only; an item's records are all in the shard of
its partition (until the partition splits), so the tests compare each shard's order, or
write items of one partition key when they need their records in one shard."""

import re

import pytest

from kumo_testlib import (
    N,
    NS_DYNAMODB,
    REGION,
    S,
    create_table_args,
    make_client,
    normalize_item,
    on_rados,
    signed_request,
    table_arn,
    unique_name,
    wait_table_active,
    wait_until,
)

STREAMS_PREFIX = "DynamoDBStreams_20120810."
VIEW_TYPES = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]
EXPIRED_ITERATOR = NS_DYNAMODB + "ExpiredIteratorException"
TRIMMED = NS_DYNAMODB + "TrimmedDataAccessException"
EXPIRED_MESSAGE = "The provided iterator exceeds the maximum age allowed."
TRIMMED_MESSAGE = "The data you are trying to access has been trimmed."
RNF = NS_DYNAMODB + "ResourceNotFoundException"

LABEL_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$")
SHARD_ID_RE = re.compile(r"^shardId-\d{20}-[0-9a-f]{8}$")
SEQUENCE_RE = re.compile(r"^\d{21,40}$")
EVENT_ID_RE = re.compile(r"^[0-9a-f]{32}$")




# --------------------------------------------------------------------------- raw calls


class StreamsApi:
    """Raw, signed DynamoDB Streams JSON calls against one server."""

    def __init__(self, port):
        self.port = port

    def __call__(self, operation, body=None, **kwargs):
        return signed_request(self.port, STREAMS_PREFIX + operation,
                              {} if body is None else body, **kwargs)

    def ok(self, operation, body=None, **kwargs):
        resp = self(operation, body, **kwargs)
        assert resp.status == 200, f"{operation} failed: {resp!r}"
        return resp.json


def streams_api_for(srv):
    return StreamsApi(srv.port)


@pytest.fixture(scope="session")
def streams(server):
    """Raw Streams calls on the shared server: streams("GetRecords", {...}) → Response."""
    return StreamsApi(server.port)


@pytest.fixture(scope="session")
def streams_client(server):
    """A boto3 `dynamodbstreams` client on the shared server."""
    return make_client(server.endpoint, service="dynamodbstreams")


# --------------------------------------------------------------------------- tables


def stream_spec(view_type):
    return {"StreamEnabled": True, "StreamViewType": view_type}


def stream_table(make_table, api, view_type="NEW_AND_OLD_IMAGES", hash_key=("pk", "S"),
                 range_key=None, **extra):
    """Creates a table with a stream on the shared server; returns (name, stream arn)."""
    name = make_table(hash_key=hash_key, range_key=range_key,
                      StreamSpecification=stream_spec(view_type), **extra)
    return name, latest_arn_of(api, name)


def describe_table(api, name):
    return api.ok("DescribeTable", {"TableName": name})["Table"]


def latest_arn_of(api, name):
    return describe_table(api, name)["LatestStreamArn"]


def create_stream_table(api, client, view_type="NEW_AND_OLD_IMAGES", hash_key=("pk", "S"),
                        range_key=None, name=None, **extra):
    """CreateTable with a stream on a server of one's own; returns (name, arn)."""
    name = name or unique_name("st")
    api.ok("CreateTable", create_table_args(name, hash_key, range_key,
                                            StreamSpecification=stream_spec(view_type),
                                            **extra))
    wait_table_active(client, name)
    return name, latest_arn_of(api, name)


def set_stream(api, name, view_type):
    """Enables (view_type given) or disables (None) the stream of `name` with UpdateTable;
    returns the table description."""
    spec = {"StreamEnabled": False} if view_type is None else stream_spec(view_type)
    return api.ok("UpdateTable", {"TableName": name,
                                  "StreamSpecification": spec})["TableDescription"]


def stream_arn(name, label):
    return f"{table_arn(name)}/stream/{label}"


# --------------------------------------------------------------------------- writing


def put(api, t, item, **kw):
    return api.ok("PutItem", dict({"TableName": t, "Item": item}, **kw))


def update(api, t, key, expr, values=None, **kw):
    body = {"TableName": t, "Key": key, "UpdateExpression": expr}
    if values:
        body["ExpressionAttributeValues"] = values
    body.update(kw)
    return api.ok("UpdateItem", body)


def delete(api, t, key, **kw):
    return api.ok("DeleteItem", dict({"TableName": t, "Key": key}, **kw))


def pk_item(i, **attrs):
    return dict({"pk": S(f"k{i}")}, **attrs)


def write_n(api, t, n, start=0):
    """n PutItems of new items k<start>…; returns the items."""
    items = [pk_item(i, v=N(i)) for i in range(start, start + n)]
    for it in items:
        put(api, t, it)
    return items


def ck(i):
    return {"pk": S(f"k{i}"), "sk": N(i)}


def citem(i, **attrs):
    return dict(ck(i), **attrs)


def coll_key(i):
    """Key i of the item collection "coll" (pk "coll", sk i): the items of one partition
    key are in one partition, so all their records are in one shard."""
    return {"pk": S("coll"), "sk": N(i)}


def coll_item(i, **attrs):
    return dict(coll_key(i), **attrs)


def write_coll(api, t, n, start=0):
    """n PutItems of new items coll/<start>…; returns the items."""
    items = [coll_item(i, v=N(i)) for i in range(start, start + n)]
    for it in items:
        put(api, t, it)
    return items


# --------------------------------------------------------------------------- reading


def describe_stream(streams, arn):
    return streams.ok("DescribeStream", {"StreamArn": arn})["StreamDescription"]


def shard_of(streams, arn):
    """The single shard of a stream (of a local back end)."""
    shards = describe_stream(streams, arn)["Shards"]
    assert len(shards) == 1, shards
    return shards[0]


def new_shard_count():
    """The shards a stream starts with: one per partition of its table, so one on the local
    back ends and 4 on RADOS (a new table has 4 partitions there)."""
    return 4 if on_rados() else 1


def check_new_shards(shards, closed=False):
    """`shards` are those of a stream as it starts (before any partition split):
    new_shard_count() of them, distinct, none with a ParentShardId, each with a
    StartingSequenceNumber, and an EndingSequenceNumber only when the stream is `closed`
    (disabled or its table deleted)."""
    assert len(shards) == new_shard_count(), shards
    ids = [s["ShardId"] for s in shards]
    assert len(set(ids)) == len(ids), ids
    for shard in shards:
        assert set(shard) == {"ShardId", "SequenceNumberRange"}, shard  # no ParentShardId
        assert SHARD_ID_RE.match(shard["ShardId"]), shard["ShardId"]
        assert 28 <= len(shard["ShardId"]) <= 65
        rng = shard["SequenceNumberRange"]
        members = {"StartingSequenceNumber", "EndingSequenceNumber"} if closed \
            else {"StartingSequenceNumber"}
        assert set(rng) == members, rng
        for number in rng.values():
            assert SEQUENCE_RE.match(number), rng
    return shards


def shard_iterator(streams, arn, kind="TRIM_HORIZON", sequence=None, shard_id=None):
    shard_id = shard_id or shard_of(streams, arn)["ShardId"]
    body = {"StreamArn": arn, "ShardId": shard_id, "ShardIteratorType": kind}
    if sequence is not None:
        body["SequenceNumber"] = sequence
    return streams.ok("GetShardIterator", body)["ShardIterator"]


def get_records(streams, iterator, limit=None):
    body = {"ShardIterator": iterator}
    if limit is not None:
        body["Limit"] = limit
    return streams.ok("GetRecords", body)


def drain(streams, iterator, limit=None, max_pages=10000):
    """Reads from `iterator` until a page comes back empty (open shard) or without a
    NextShardIterator (closed shard read to its end). Returns (records, pages, last
    response); `pages` holds the record count of every page, the final one included."""
    records, pages = [], []
    for _ in range(max_pages):
        out = get_records(streams, iterator, limit)
        records.extend(out["Records"])
        pages.append(len(out["Records"]))
        if "NextShardIterator" not in out or not out["Records"]:
            return records, pages, out
        iterator = out["NextShardIterator"]
    raise AssertionError(f"shard not drained after {max_pages} pages")


class ShardedRecords(list):
    """A stream's records read shard by shard (parents first), all in one list; `shards`
    holds each shard's own records. DynamoDB orders records within a shard only: a table of
    several partitions (Kumo on shared storage starts a stream with one shard per partition)
    has them in several."""

    def __init__(self, shards):
        super().__init__(r for records in shards for r in records)
        self.shards = shards


def read_stream(streams, arn, kind="TRIM_HORIZON", sequence=None, limit=None, shard_id=None):
    """Every record from the given position to the current end of the stream's shard (the
    one given, or the only one). A stream of several shards is read whole from TRIM_HORIZON,
    shard by shard (the result is a ShardedRecords)."""
    if shard_id is None:
        shards = all_shards(streams, arn)
        if len(shards) > 1 and kind == "TRIM_HORIZON" and sequence is None:
            _, by_shard = read_all_shards(streams, arn)
            return ShardedRecords([by_shard[s["ShardId"]] for s in shards])
    return drain(streams, shard_iterator(streams, arn, kind, sequence, shard_id), limit)[0]


def shard_holding(streams, arn, pk=None):
    """The one shard of the stream that has records (the shard of the item a test wrote),
    or, given `pk` (a string), the one whose records are of items with that partition key
    (the shard of their partition)."""
    shards, by_shard = read_all_shards(streams, arn)
    holding = [s for s in shards if any(
        pk is None or r["dynamodb"]["Keys"]["pk"] == S(pk) for r in by_shard[s["ShardId"]])]
    assert len(holding) == 1, [(s["ShardId"], len(by_shard[s["ShardId"]])) for s in shards]
    return holding[0]


def iterators(streams, arn, kind="TRIM_HORIZON"):
    """An iterator of `kind` on every shard of the stream, parents first: the positions a
    consumer takes before it knows which shard the next records go to."""
    return [shard_iterator(streams, arn, kind, shard_id=s["ShardId"])
            for s in all_shards(streams, arn)]


def read_from(streams, its, limit=None):
    """Every record from each of the iterators `its` (one per shard) to the end of its shard
    or where the shard stands, as a ShardedRecords."""
    return ShardedRecords([drain(streams, it, limit)[0] for it in its])


def all_shards(streams, arn, page=100):
    """Every shard of a stream, over DescribeStream's pages of `page` shards."""
    body, shards = {"StreamArn": arn, "Limit": page}, []
    while True:
        out = streams.ok("DescribeStream", body)["StreamDescription"]
        shards += out["Shards"]
        if "LastEvaluatedShardId" not in out:
            return shards
        body["ExclusiveStartShardId"] = out["LastEvaluatedShardId"]


def read_all_shards(streams, arn):
    """Every record of every shard, each shard read from TRIM_HORIZON to its end (a closed
    one) or to where it stands (an open one), parents before their children as a consumer
    reads them. Returns (shards, {shard id: records})."""
    shards = all_shards(streams, arn)
    ids = [s["ShardId"] for s in shards]
    for shard in shards:
        if "ParentShardId" in shard:
            assert ids.index(shard["ParentShardId"]) < ids.index(shard["ShardId"]), shards
    records = {}
    for shard in shards:
        it = shard_iterator(streams, arn, shard_id=shard["ShardId"])
        records[shard["ShardId"]] = drain(streams, it)[0]
    return shards, records


def read_sharded(streams, arn):
    """Every record of the stream as read_all_shards reads them, as a ShardedRecords (one
    list per shard, in DescribeStream's order, even for a stream of one shard)."""
    shards, by_shard = read_all_shards(streams, arn)
    return ShardedRecords([by_shard[s["ShardId"]] for s in shards])


def read_closed_shards(streams, arn, limit=None):
    """Reads every shard of a closed stream (disabled, or its table deleted) with
    read_closed, each to its end from TRIM_HORIZON: (shards, ShardedRecords, the record
    count of each page of each shard)."""
    shards = all_shards(streams, arn)
    records, pages = [], []
    for shard in shards:
        it = shard_iterator(streams, arn, shard_id=shard["ShardId"])
        own, counts = read_closed(streams, it, limit)
        records.append(own)
        pages.append(counts)
    return shards, ShardedRecords(records), pages


def read_closed(streams, iterator, limit=None, max_pages=50):
    """Reads a closed shard until a response comes without NextShardIterator; returns
    (records, record count per page)."""
    records, pages = [], []
    for _ in range(max_pages):
        out = get_records(streams, iterator, limit)
        records.extend(out["Records"])
        pages.append(len(out["Records"]))
        if "NextShardIterator" not in out:
            return records, pages
        iterator = out["NextShardIterator"]
    raise AssertionError(f"closed shard still gives a NextShardIterator after {max_pages} "
                         f"pages ({pages})")


def seq(rec):
    return rec["dynamodb"]["SequenceNumber"]


def seqs(records):
    return [seq(r) for r in records]


# --------------------------------------------------------------------------- checking


def change(event, keys, old=None, new=None):
    """An expected change: event INSERT/MODIFY/REMOVE, its keys, the item before and after."""
    return {"event": event, "keys": keys, "old": old, "new": new}


def expected_view(ch, view_type):
    """What a record of `view_type` shows of change `ch`: (eventName, Keys, NewImage, OldImage),
    normalized, None for an image that must be absent."""
    new = ch["new"] if view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") else None
    old = ch["old"] if view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") else None
    return (ch["event"], normalize_item(ch["keys"]),
            None if new is None else normalize_item(new),
            None if old is None else normalize_item(old))


def record_view(rec):
    d = rec["dynamodb"]
    return (rec["eventName"], normalize_item(d["Keys"]),
            normalize_item(d["NewImage"]) if "NewImage" in d else None,
            normalize_item(d["OldImage"]) if "OldImage" in d else None)


def check_record_shape(rec, view_type, not_before=None, not_after=None):
    """Every member a user-made record has, with the right types and formats."""
    assert set(rec) == {"eventID", "eventName", "eventVersion", "eventSource", "awsRegion",
                        "dynamodb"}, rec
    assert EVENT_ID_RE.match(rec["eventID"]), rec["eventID"]
    assert rec["eventName"] in ("INSERT", "MODIFY", "REMOVE")
    assert rec["eventVersion"] == "1.1"
    assert rec["eventSource"] == "aws:dynamodb"
    assert rec["awsRegion"] == REGION
    d = rec["dynamodb"]
    allowed = {"ApproximateCreationDateTime", "Keys", "NewImage", "OldImage", "SequenceNumber",
               "SizeBytes", "StreamViewType"}
    assert set(d) <= allowed and {"ApproximateCreationDateTime", "Keys", "SequenceNumber",
                                  "SizeBytes", "StreamViewType"} <= set(d), d
    assert d["StreamViewType"] == view_type
    ts = d["ApproximateCreationDateTime"]
    assert isinstance(ts, int) and not isinstance(ts, bool), f"not whole epoch seconds: {ts!r}"
    if not_before is not None:
        assert int(not_before) - 1 <= ts <= int(not_after) + 1, (not_before, ts, not_after)
    assert SEQUENCE_RE.match(d["SequenceNumber"]), d["SequenceNumber"]
    assert isinstance(d["SizeBytes"], int) and d["SizeBytes"] > 0, d["SizeBytes"]


def check_records(records, expected, view_type, not_before=None, not_after=None,
                  unordered_groups=()):
    """`records` show exactly the changes `expected`, in order, as `view_type` shows them.
    `unordered_groups` lists (start, stop) index ranges of `expected` whose records may come
    in any order among themselves (one BatchWriteItem or transaction)."""
    for rec in records:
        check_record_shape(rec, view_type, not_before, not_after)
    ids = [r["eventID"] for r in records]
    assert len(set(ids)) == len(ids), "duplicate eventIDs"
    got = [record_view(r) for r in records]
    want = [expected_view(ch, view_type) for ch in expected]
    assert len(got) == len(want), (f"{len(got)} records, {len(want)} expected:\n"
                                   + "\n".join(map(repr, got)))
    if isinstance(records, ShardedRecords):
        for shard in records.shards:
            numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in shard]
            assert numbers == sorted(set(numbers)), \
                f"sequence numbers not strictly increasing in a shard: {numbers}"
        check_interleaving([[record_view(r) for r in shard] for shard in records.shards], want,
                           unordered_groups)
        return
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(set(seqs)), f"sequence numbers not strictly increasing: {seqs}"
    for start, stop in unordered_groups:
        got[start:stop] = sorted(got[start:stop], key=repr)
        want[start:stop] = sorted(want[start:stop], key=repr)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"record {i}:\n  got  {g}\n  want {w}"


def check_interleaving(shards, want, unordered_groups=()):
    """`shards` (lists of records, parents before their children) hold exactly `want`, and
    each shard holds its part of `want` in `want`'s order: taken in `want`'s order, every
    change is the next record of some shard (the first such shard, parents first). The
    changes of each range of `unordered_groups` may come in any order among themselves."""
    heads = [0] * len(shards)
    groups = sorted(unordered_groups)
    i = 0
    while i < len(want):
        group = next(((a, b) for a, b in groups if a == i), None)
        pending = list(want[i:group[1]]) if group else [want[i]]
        while pending:
            for k, shard in enumerate(shards):
                if heads[k] < len(shard) and shard[heads[k]] in pending:
                    pending.remove(shard[heads[k]])
                    heads[k] += 1
                    break
            else:
                nexts = [shard[heads[k]] if heads[k] < len(shard) else None
                         for k, shard in enumerate(shards)]
                raise AssertionError(f"change {i} is not next in any shard:\n  want "
                                     f"{pending}\n  next per shard {nexts}")
        i = group[1] if group else i + 1
    assert all(heads[k] == len(shard) for k, shard in enumerate(shards)), "records left over"


def wait_for(predicate, timeout, interval=0.1, what="condition"):
    return wait_until(predicate, timeout=timeout, step=interval, what=what)
