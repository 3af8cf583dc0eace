"""DynamoDB Streams (contract §10.2–10.4, StreamSpecification in §3.2/§3.4): what every
write records under every view type, the writes that record nothing, shard iterators of
every kind, paging, the stream lifecycle (disable/enable, DeleteTable, retention),
ListStreams/DescribeStream, every error with its exact type and message, expired iterators,
trimmed data and persistence across restarts."""

import calendar
import datetime
import http.client
import time

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_COR_SERVICE,
    NS_DYNAMODB,
    SERIALIZATION,
    assert_error,
    assert_validation,
    b64,
    client_error,
    create_table_args,
    signed_request,
    unique_name,
    wait_table_gone,
)
from stream_helpers import (  # noqa: F401
    EXPIRED_ITERATOR,
    EXPIRED_MESSAGE,
    LABEL_RE,
    SEQUENCE_RE,
    SHARD_ID_RE,
    TRIMMED,
    TRIMMED_MESSAGE,
    VIEW_TYPES,
    N,
    S,
    change,
    check_records,
    create_stream_table,
    describe_stream,
    describe_table,
    drain,
    get_records,
    latest_arn_of,
    read_stream,
    set_stream,
    shard_iterator,
    shard_of,
    stream_arn,
    stream_spec,
    stream_table,
    streams,
    streams_api_for,
    streams_client,
    wait_for,
)

INVALID = "One or more parameter values were invalid: "
RNF = NS_DYNAMODB + "ResourceNotFoundException"
CCF = NS_DYNAMODB + "ConditionalCheckFailedException"
CANCELED = NS_DYNAMODB + "TransactionCanceledException"
UNKNOWN_OPERATION = NS_COR_SERVICE + "UnknownOperationException"
ITERATOR_TYPES = "[TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]"
MIB = 1 << 20
A37 = "arn:aws:dynamodb:us-east-1:0:table/ab"  # 37 characters: the shortest valid length


def label_epoch(label):
    dt = datetime.datetime.strptime(label, "%Y-%m-%dT%H:%M:%S.%f")
    return calendar.timegm(dt.timetuple()) + dt.microsecond / 1e6


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


def seq(rec):
    return rec["dynamodb"]["SequenceNumber"]


def seqs(records):
    return [seq(r) for r in records]


def pk_item(i, **attrs):
    return dict({"pk": S(f"k{i}")}, **attrs)


def write_n(api, t, n, start=0):
    """n PutItems of new items k<start>…; returns the items."""
    items = [pk_item(i, v=N(i)) for i in range(start, start + n)]
    for it in items:
        put(api, t, it)
    return items


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


# =========================================================================== enabling


@pytest.mark.parametrize("view_type", VIEW_TYPES)
def test_create_table_with_stream_describes_it(api, streams, make_table, view_type):
    t, arn = stream_table(make_table, api, view_type, range_key=("sk", "N"))
    desc = describe_table(api, t)
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": view_type}
    label = desc["LatestStreamLabel"]
    assert LABEL_RE.match(label), label
    assert arn == desc["LatestStreamArn"] == stream_arn(t, label)
    assert arn == f"arn:aws:dynamodb:us-east-1:000000000000:table/{t}/stream/{label}"
    assert abs(label_epoch(label) - desc["CreationDateTime"]) < 2

    listed = streams.ok("ListStreams", {"TableName": t})
    assert listed == {"Streams": [{"StreamArn": arn, "TableName": t, "StreamLabel": label}]}

    sd = describe_stream(streams, arn)
    assert set(sd) == {"StreamArn", "StreamLabel", "StreamStatus", "StreamViewType",
                       "CreationRequestDateTime", "TableName", "KeySchema", "Shards"}, sd
    assert sd["StreamArn"] == arn
    assert sd["StreamLabel"] == label
    assert sd["StreamStatus"] == "ENABLED"
    assert sd["StreamViewType"] == view_type
    assert sd["TableName"] == t
    assert sd["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                               {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert isinstance(sd["CreationRequestDateTime"], (int, float))
    assert abs(sd["CreationRequestDateTime"] - label_epoch(label)) < 1
    assert len(sd["Shards"]) == 1
    shard = sd["Shards"][0]
    assert set(shard) == {"ShardId", "SequenceNumberRange"}, shard  # no ParentShardId
    assert SHARD_ID_RE.match(shard["ShardId"]), shard["ShardId"]
    assert 28 <= len(shard["ShardId"]) <= 65
    rng = shard["SequenceNumberRange"]
    assert set(rng) == {"StartingSequenceNumber"}, rng  # open: no EndingSequenceNumber
    assert SEQUENCE_RE.match(rng["StartingSequenceNumber"])


def test_table_without_stream_has_none(api, streams, make_table):
    t = make_table()
    desc = describe_table(api, t)
    for member in ("StreamSpecification", "LatestStreamLabel", "LatestStreamArn"):
        assert member not in desc
    put(api, t, pk_item(1))
    assert streams.ok("ListStreams", {"TableName": t}) == {"Streams": []}


def test_update_table_enables_a_stream(api, streams, make_table):
    t = make_table()
    before = pk_item(1, v=S("before"))
    put(api, t, before)
    desc = set_stream(api, t, "NEW_IMAGE")
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    label = desc["LatestStreamLabel"]
    assert LABEL_RE.match(label)
    arn = desc["LatestStreamArn"]
    assert arn == stream_arn(t, label)
    assert describe_table(api, t)["LatestStreamArn"] == arn
    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [
        {"StreamArn": arn, "TableName": t, "StreamLabel": label}]
    # Only changes made after the stream was enabled are in it.
    assert read_stream(streams, arn) == []
    after = pk_item(1, v=S("after"))
    put(api, t, after)
    check_records(read_stream(streams, arn),
                  [change("MODIFY", pk_item(1), before, after)], "NEW_IMAGE")


def test_update_table_stream_errors(api, make_table):
    t, _ = stream_table(make_table, api, "KEYS_ONLY")
    for view in ("KEYS_ONLY", "NEW_IMAGE"):
        resp = api("UpdateTable", {"TableName": t, "StreamSpecification": stream_spec(view)})
        assert_validation(resp, f"Table already has an enabled stream: TableName: {t}")
    resp = api("UpdateTable", {"TableName": t, "StreamSpecification": {
        "StreamEnabled": False, "StreamViewType": "KEYS_ONLY"}})
    assert_validation(resp, INVALID + "If stream is being disabled, then UpdateViewType must "
                                      "not be specified")
    set_stream(api, t, None)
    resp = api("UpdateTable", {"TableName": t, "StreamSpecification": {"StreamEnabled": False}})
    assert_validation(resp, f"Table has no stream to disable: TableName: {t}")
    resp = api("UpdateTable", {"TableName": t, "StreamSpecification": {"StreamEnabled": True}})
    assert_validation(resp, INVALID + "If stream is being enabled then UpdateViewType is "
                                      "required")
    resp = api("UpdateTable", {
        "TableName": t, "StreamSpecification": stream_spec("NEW_IMAGE"),
        "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
        "GlobalSecondaryIndexUpdates": [{"Create": {
            "IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}]})
    assert_validation(resp, INVALID + "You cannot create or delete index while changing stream "
                                      "status")
    p = make_table(BillingMode="PROVISIONED",
                   ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    resp = api("UpdateTable", {
        "TableName": p, "StreamSpecification": stream_spec("NEW_IMAGE"),
        "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}})
    assert_validation(resp, INVALID + "You cannot modify stream status while updating table "
                                      "IOPS")
    # None of the refused requests changed anything.
    assert "StreamSpecification" not in describe_table(api, t)
    assert "StreamSpecification" not in describe_table(api, p)


# =========================================================================== records


RICH = {"a": S("text ✓"), "n": N("12.5"), "neg": N("-0.001"), "bin": {"B": b64(b"\x00\x01\xff")},
        "t": {"BOOL": True}, "z": {"NULL": True}, "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b64(b"\x01"), b64(b"\x02")]},
        "l": {"L": [S("e"), N(1), {"L": []}]}, "m": {"M": {"k": S("v"), "in": {"M": {}}}},
        "empty": S("")}


def ck(i):
    return {"pk": S(f"k{i}"), "sk": N(i)}


def citem(i, **attrs):
    return dict(ck(i), **attrs)


def sc_put_insert(api, t):
    it = citem(1, **RICH)
    put(api, t, it)
    return [change("INSERT", ck(1), new=it)], ()


def sc_put_replace(api, t):
    v1 = citem(1, a=S("one"), gone=N(1))
    v2 = citem(1, a=S("two"), extra={"SS": ["s"]})
    put(api, t, v1)
    put(api, t, v2, ReturnValues="ALL_OLD")
    return [change("INSERT", ck(1), new=v1), change("MODIFY", ck(1), v1, v2)], ()


def sc_update_insert(api, t):
    update(api, t, ck(1), "SET a = :a, n = :n", {":a": S("new"), ":n": N(3)})
    return [change("INSERT", ck(1), new=citem(1, a=S("new"), n=N(3)))], ()


def sc_update_modify(api, t):
    v1 = citem(1, a=S("old"), n=N(5), gone=S("x"), l={"L": [N(1)]})
    put(api, t, v1)
    update(api, t, ck(1), "SET a = :a, l[1] = :two REMOVE gone ADD n :d, ss :s",
           {":a": S("new"), ":two": N(2), ":d": N(3), ":s": {"SS": ["q"]}})
    v2 = citem(1, a=S("new"), n=N(8), l={"L": [N(1), N(2)]}, ss={"SS": ["q"]})
    return [change("INSERT", ck(1), new=v1), change("MODIFY", ck(1), v1, v2)], ()


def sc_delete(api, t):
    v1 = citem(1, a=S("bye"))
    put(api, t, v1)
    delete(api, t, ck(1))
    return [change("INSERT", ck(1), new=v1), change("REMOVE", ck(1), old=v1)], ()


def sc_batch_write(api, t):
    r1, d, same = citem(1, v=S("r1")), citem(2, v=S("d")), citem(3, v=S("same"))
    for it in (r1, d, same):
        put(api, t, it)
    new, r2 = citem(4, v=S("new")), citem(1, v=S("r2"))
    out = api.ok("BatchWriteItem", {"RequestItems": {t: [
        {"PutRequest": {"Item": new}},
        {"PutRequest": {"Item": r2}},
        {"DeleteRequest": {"Key": ck(2)}},
        {"DeleteRequest": {"Key": ck(9)}},      # missing: no record
        {"PutRequest": {"Item": same}},         # identical: no record
    ]}})
    assert out["UnprocessedItems"] == {}
    return ([change("INSERT", ck(1), new=r1), change("INSERT", ck(2), new=d),
             change("INSERT", ck(3), new=same),
             change("INSERT", ck(4), new=new), change("MODIFY", ck(1), r1, r2),
             change("REMOVE", ck(2), old=d)], ((3, 6),))


def sc_transact_write(api, t):
    u, d, c = citem(1, n=N(1)), citem(2, v=S("d")), citem(3, v=S("c"))
    for it in (u, d, c):
        put(api, t, it)
    new = citem(4, v=S("new"))
    api.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": t, "Item": new}},
        {"Update": {"TableName": t, "Key": ck(1), "UpdateExpression": "SET n = n + :one",
                    "ExpressionAttributeValues": {":one": N(1)}}},
        {"Delete": {"TableName": t, "Key": ck(2)}},
        {"ConditionCheck": {"TableName": t, "Key": ck(3),
                            "ConditionExpression": "attribute_exists(pk)"}},
    ]})
    return ([change("INSERT", ck(1), new=u), change("INSERT", ck(2), new=d),
             change("INSERT", ck(3), new=c),
             change("INSERT", ck(4), new=new), change("MODIFY", ck(1), u, citem(1, n=N(2))),
             change("REMOVE", ck(2), old=d)], ((3, 6),))


SCENARIOS = [sc_put_insert, sc_put_replace, sc_update_insert, sc_update_modify, sc_delete,
             sc_batch_write, sc_transact_write]


@pytest.mark.parametrize("view_type", VIEW_TYPES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__[3:])
def test_records_of_every_write_kind(api, streams, make_table, view_type, scenario):
    t, arn = stream_table(make_table, api, view_type, range_key=("sk", "N"))
    t0 = time.time()
    expected, groups = scenario(api, t)
    t1 = time.time()
    check_records(read_stream(streams, arn), expected, view_type, t0, t1, groups)


def test_boto3_clients_end_to_end(api, ddb, streams_client, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES")
    label = arn.rsplit("/", 1)[1]
    before = datetime.datetime.now(datetime.timezone.utc)
    ddb.put_item(TableName=t, Item={"pk": {"S": "u1"}, "bin": {"B": b"\x00\xff"}})
    ddb.update_item(TableName=t, Key={"pk": {"S": "u1"}}, UpdateExpression="SET v = :v",
                    ExpressionAttributeValues={":v": {"N": "7"}})
    ddb.delete_item(TableName=t, Key={"pk": {"S": "u1"}})

    assert streams_client.list_streams(TableName=t)["Streams"] == [
        {"StreamArn": arn, "TableName": t, "StreamLabel": label}]
    sd = streams_client.describe_stream(StreamArn=arn)["StreamDescription"]
    assert sd["StreamStatus"] == "ENABLED" and sd["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert isinstance(sd["CreationRequestDateTime"], datetime.datetime)
    shard_id = sd["Shards"][0]["ShardId"]
    it = streams_client.get_shard_iterator(StreamArn=arn, ShardId=shard_id,
                                           ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    out = streams_client.get_records(ShardIterator=it)
    assert "NextShardIterator" in out
    recs = out["Records"]
    assert [r["eventName"] for r in recs] == ["INSERT", "MODIFY", "REMOVE"]
    v1 = {"pk": {"S": "u1"}, "bin": {"B": b"\x00\xff"}}
    v2 = dict(v1, v={"N": "7"})
    assert [(r["dynamodb"].get("OldImage"), r["dynamodb"].get("NewImage")) for r in recs] == [
        (None, v1), (v1, v2), (v2, None)]
    for r in recs:
        assert r["dynamodb"]["Keys"] == {"pk": {"S": "u1"}}
        created = r["dynamodb"]["ApproximateCreationDateTime"]
        assert isinstance(created, datetime.datetime)
        assert abs((created - before).total_seconds()) < 5
    empty = streams_client.get_records(ShardIterator=out["NextShardIterator"], Limit=5)
    assert empty["Records"] == [] and "NextShardIterator" in empty

    with pytest.raises(streams_client.exceptions.ResourceNotFoundException) as e:
        streams_client.describe_stream(StreamArn=stream_arn(t, "2001-01-01T00:00:00.000"))
    client_error(e, "ResourceNotFoundException", "Requested resource not found: Stream: "
                 f"{stream_arn(t, '2001-01-01T00:00:00.000')} not found")
    with pytest.raises(streams_client.exceptions.ClientError) as e:
        streams_client.get_records(ShardIterator="not-an-iterator")
    client_error(e, "ValidationException", "Invalid ShardIterator")


def test_hash_only_table_records(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES", hash_key=("id", "N"))
    key = {"id": N(42)}
    v1 = dict(key, a=S("x"))
    put(api, t, v1)
    update(api, t, key, "SET b = :b", {":b": N(1)})
    v2 = dict(v1, b=N(1))
    delete(api, t, key)
    check_records(read_stream(streams, arn),
                  [change("INSERT", key, new=v1), change("MODIFY", key, v1, v2),
                   change("REMOVE", key, old=v2)], "NEW_AND_OLD_IMAGES")


def test_table_with_indexes(api, streams, make_table):
    """One record per item change whatever the indexes; Keys hold only the table's key;
    creating an index (backfill) writes no record and keeps the stream."""
    t, arn = stream_table(
        make_table, api, "NEW_AND_OLD_IMAGES", range_key=("sk", "N"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": ty} for a, ty in
                              (("pk", "S"), ("sk", "N"), ("l", "N"), ("g", "S"))],
        LocalSecondaryIndexes=[{"IndexName": "byL", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[{"IndexName": "byG", "KeySchema": [
            {"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    i1 = citem(1, g=S("x"), l=N(5))
    i2 = citem(2)  # in no index
    put(api, t, i1)
    put(api, t, i2)
    update(api, t, ck(1), "SET g = :y", {":y": S("y")})
    i1b = dict(i1, g=S("y"))
    update(api, t, ck(2), "SET l = :l", {":l": N(7)})
    i2b = dict(i2, l=N(7))
    delete(api, t, ck(1))
    i3 = citem(3, o=S("other"))
    put(api, t, i3)
    expected = [change("INSERT", ck(1), new=i1), change("INSERT", ck(2), new=i2),
                change("MODIFY", ck(1), i1, i1b), change("MODIFY", ck(2), i2, i2b),
                change("REMOVE", ck(1), old=i1b), change("INSERT", ck(3), new=i3)]
    check_records(read_stream(streams, arn), expected, "NEW_AND_OLD_IMAGES")

    api.ok("UpdateTable", {
        "TableName": t,
        "AttributeDefinitions": [{"AttributeName": "o", "AttributeType": "S"}],
        "GlobalSecondaryIndexUpdates": [{"Create": {
            "IndexName": "byO", "KeySchema": [{"AttributeName": "o", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}]})

    def index_active():
        desc = describe_table(api, t)
        return desc["TableStatus"] == "ACTIVE" and all(
            g["IndexStatus"] == "ACTIVE" for g in desc["GlobalSecondaryIndexes"])
    wait_for(index_active, 20, what="index byO ACTIVE")
    got = api.ok("Query", {"TableName": t, "IndexName": "byO",
                           "KeyConditionExpression": "o = :o",
                           "ExpressionAttributeValues": {":o": S("other")}})["Items"]
    assert got == [i3]
    assert latest_arn_of(api, t) == arn
    put(api, t, citem(4, o=S("later")))
    check_records(read_stream(streams, arn),
                  expected + [change("INSERT", ck(4), new=citem(4, o=S("later")))],
                  "NEW_AND_OLD_IMAGES")


def test_each_stream_holds_only_its_tables_changes(api, streams, make_table):
    a, arn_a = stream_table(make_table, api, "KEYS_ONLY")
    b, arn_b = stream_table(make_table, api, "NEW_IMAGE")
    plain = make_table()
    for i in range(4):
        put(api, a, pk_item(i))
        put(api, b, pk_item(i + 100))
        put(api, plain, pk_item(i))
    # One request writing to three tables: each stream gets its own table's changes.
    api.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": a, "Item": pk_item(10)}},
        {"Delete": {"TableName": b, "Key": pk_item(100)}},
        {"Put": {"TableName": plain, "Item": pk_item(10)}},
        {"Update": {"TableName": b, "Key": pk_item(101), "UpdateExpression": "SET x = :x",
                    "ExpressionAttributeValues": {":x": N(1)}}},
    ]})
    out = api.ok("BatchWriteItem", {"RequestItems": {
        a: [{"DeleteRequest": {"Key": pk_item(0)}}, {"PutRequest": {"Item": pk_item(11)}}],
        b: [{"PutRequest": {"Item": pk_item(102, y=S("y"))}}],
        plain: [{"DeleteRequest": {"Key": pk_item(0)}}]}})
    assert out["UnprocessedItems"] == {}
    check_records(read_stream(streams, arn_a),
                  [change("INSERT", pk_item(i)) for i in range(4)]
                  + [change("INSERT", pk_item(10)), change("REMOVE", pk_item(0)),
                     change("INSERT", pk_item(11))], "KEYS_ONLY", unordered_groups=((5, 7),))
    check_records(read_stream(streams, arn_b),
                  [change("INSERT", pk_item(i + 100), new=pk_item(i + 100)) for i in range(4)]
                  + [change("REMOVE", pk_item(100), old=pk_item(100)),
                     change("MODIFY", pk_item(101), pk_item(101), pk_item(101, x=N(1))),
                     change("MODIFY", pk_item(102), pk_item(102), pk_item(102, y=S("y")))],
                  "NEW_IMAGE", unordered_groups=((4, 6),))


# =========================================================================== no record


def nr_put_identical(api, t):
    v = pk_item(1, n=N(5), ss={"SS": ["x", "y"]}, m={"M": {"k": S("v")}})
    put(api, t, v)
    put(api, t, v)
    return [change("INSERT", pk_item(1), new=v)]


def nr_put_equal_values_written_differently(api, t):
    v = pk_item(1, n=N(5), ss={"SS": ["x", "y"]}, ns={"NS": ["1", "20"]})
    put(api, t, v)
    put(api, t, {"ns": {"NS": ["2E1", "1.0"]}, "ss": {"SS": ["y", "x"]}, "n": N("5.00"),
                 "pk": S("k1")})
    return [change("INSERT", pk_item(1), new=v)]


def nr_update_same_value(api, t):
    v = pk_item(1, a=S("x"), n=N(3))
    put(api, t, v)
    update(api, t, pk_item(1), "SET a = :same, n = :n", {":same": S("x"), ":n": N(3)})
    return [change("INSERT", pk_item(1), new=v)]


def nr_update_remove_absent_attribute(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    update(api, t, pk_item(1), "REMOVE nothere")
    return [change("INSERT", pk_item(1), new=v)]


def nr_update_if_not_exists(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    update(api, t, pk_item(1), "SET a = if_not_exists(a, :other)", {":other": S("y")})
    return [change("INSERT", pk_item(1), new=v)]


def nr_delete_missing(api, t):
    delete(api, t, pk_item(1))
    out = delete(api, t, pk_item(2), ReturnValues="ALL_OLD")
    assert "Attributes" not in out
    return []


def nr_failed_conditions(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    resp = api("PutItem", {"TableName": t, "Item": pk_item(1, a=S("y")),
                           "ConditionExpression": "attribute_not_exists(pk)"})
    assert_error(resp, 400, CCF, "The conditional request failed")
    resp = api("UpdateItem", {"TableName": t, "Key": pk_item(2), "UpdateExpression": "SET a = :a",
                              "ConditionExpression": "attribute_exists(pk)",
                              "ExpressionAttributeValues": {":a": S("y")}})
    assert_error(resp, 400, CCF, "The conditional request failed")
    resp = api("DeleteItem", {"TableName": t, "Key": pk_item(1), "ConditionExpression": "a = :o",
                              "ExpressionAttributeValues": {":o": S("other")}})
    assert_error(resp, 400, CCF, "The conditional request failed")
    return [change("INSERT", pk_item(1), new=v)]


def nr_canceled_transaction(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    resp = api("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": t, "Item": pk_item(2)}},
        {"Delete": {"TableName": t, "Key": pk_item(3)}},
        {"ConditionCheck": {"TableName": t, "Key": pk_item(1), "ConditionExpression": "a = :o",
                            "ExpressionAttributeValues": {":o": S("other")}}},
    ]})
    assert resp.status == 400 and resp.full_type == CANCELED, resp
    return [change("INSERT", pk_item(1), new=v)]


def nr_transaction_parts_that_change_nothing(api, t):
    v, c = pk_item(1, a=S("x")), pk_item(3, c=S("c"))
    put(api, t, v)
    put(api, t, c)
    api.ok("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": t, "Key": pk_item(1), "UpdateExpression": "SET a = :same",
                    "ExpressionAttributeValues": {":same": S("x")}}},
        {"Delete": {"TableName": t, "Key": pk_item(2)}},
        {"ConditionCheck": {"TableName": t, "Key": pk_item(3),
                            "ConditionExpression": "attribute_exists(pk)"}},
        {"Put": {"TableName": t, "Item": pk_item(4)}},
    ]})
    return [change("INSERT", pk_item(1), new=v), change("INSERT", pk_item(3), new=c),
            change("INSERT", pk_item(4), new=pk_item(4))]


def nr_transaction_replayed_with_its_token(api, t):
    body = {"ClientRequestToken": "stream-token-" + t, "TransactItems": [
        {"Update": {"TableName": t, "Key": pk_item(1), "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": N(1)}}}]}
    api.ok("TransactWriteItems", body)
    api.ok("TransactWriteItems", body)  # idempotent: not applied again
    assert api.ok("GetItem", {"TableName": t, "Key": pk_item(1)})["Item"] == pk_item(1, n=N(1))
    return [change("INSERT", pk_item(1), new=pk_item(1, n=N(1)))]


def nr_batch_write_noops(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    out = api.ok("BatchWriteItem", {"RequestItems": {t: [
        {"PutRequest": {"Item": v}}, {"DeleteRequest": {"Key": pk_item(2)}}]}})
    assert out["UnprocessedItems"] == {}
    return [change("INSERT", pk_item(1), new=v)]


def nr_refused_requests(api, t):
    v = pk_item(1, a=S("x"))
    put(api, t, v)
    resp = api("UpdateItem", {"TableName": t, "Key": pk_item(1), "UpdateExpression": "ADD a :n",
                              "ExpressionAttributeValues": {":n": N(1)}})
    assert resp.status == 400 and resp.error_type == "ValidationException", resp
    resp = api("PutItem", {"TableName": t, "Item": pk_item(2), "ConditionExpression": "a = "})
    assert resp.status == 400 and resp.error_type == "ValidationException", resp
    return [change("INSERT", pk_item(1), new=v)]


NO_RECORD_CASES = [nr_put_identical, nr_put_equal_values_written_differently,
                   nr_update_same_value, nr_update_remove_absent_attribute,
                   nr_update_if_not_exists, nr_delete_missing, nr_failed_conditions,
                   nr_canceled_transaction, nr_transaction_parts_that_change_nothing,
                   nr_transaction_replayed_with_its_token,
                   nr_batch_write_noops, nr_refused_requests]


@pytest.mark.parametrize("case", NO_RECORD_CASES, ids=lambda f: f.__name__[3:])
def test_writes_that_change_nothing_record_nothing(api, streams, make_table, case):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES")
    expected = case(api, t)
    marker = pk_item(99, marker=S("end"))
    put(api, t, marker)
    check_records(read_stream(streams, arn),
                  expected + [change("INSERT", pk_item(99), new=marker)], "NEW_AND_OLD_IMAGES")


# =========================================================================== iterators


def test_latest_sees_only_later_writes(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t, 3)
    latest = shard_iterator(streams, arn, "LATEST")
    out = get_records(streams, latest)
    assert out["Records"] == [] and "NextShardIterator" in out
    write_n(api, t, 2, start=10)
    want = [change("INSERT", pk_item(10)), change("INSERT", pk_item(11))]
    check_records(get_records(streams, out["NextShardIterator"])["Records"], want, "KEYS_ONLY")
    # The LATEST iterator stands just after the records that existed when it was issued.
    check_records(get_records(streams, latest)["Records"], want, "KEYS_ONLY")
    # On an empty stream too.
    t2, arn2 = stream_table(make_table, api, "KEYS_ONLY")
    latest2 = shard_iterator(streams, arn2, "LATEST")
    write_n(api, t2, 1)
    check_records(get_records(streams, latest2)["Records"], [change("INSERT", pk_item(0))],
                  "KEYS_ONLY")


def test_at_and_after_sequence_number(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_IMAGE")
    items = write_n(api, t, 5)
    records = read_stream(streams, arn)
    assert len(records) == 5
    numbers = seqs(records)
    assert read_stream(streams, arn, "TRIM_HORIZON") == records
    for i in range(5):
        assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", numbers[i]) == records[i:]
        assert read_stream(streams, arn, "AFTER_SEQUENCE_NUMBER", numbers[i]) == records[i + 1:]
    start = shard_of(streams, arn)["SequenceNumberRange"]["StartingSequenceNumber"]
    assert int(start) <= int(numbers[0])
    assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", start) == records
    # An AFTER iterator on the last record waits for the next write.
    it = shard_iterator(streams, arn, "AFTER_SEQUENCE_NUMBER", numbers[-1])
    out = get_records(streams, it)
    assert out["Records"] == [] and "NextShardIterator" in out
    put(api, t, items[0])  # identical: no record
    put(api, t, pk_item(7))
    check_records(get_records(streams, it)["Records"],
                  [change("INSERT", pk_item(7), new=pk_item(7))], "NEW_IMAGE")


def test_paging_with_limit(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t, 25)
    everything = read_stream(streams, arn)
    assert len(everything) == 25
    records, pages, last = drain(streams, shard_iterator(streams, arn), limit=7)
    assert pages == [7, 7, 7, 4, 0]
    assert records == everything
    # Empty pages of an open shard still lead on; later writes show up.
    it = last["NextShardIterator"]
    for _ in range(3):
        out = get_records(streams, it, 7)
        assert out["Records"] == [] and "NextShardIterator" in out
        it = out["NextShardIterator"]
    write_n(api, t, 2, start=100)
    out = get_records(streams, it, 1)
    check_records(out["Records"], [change("INSERT", pk_item(100))], "KEYS_ONLY")
    out = get_records(streams, out["NextShardIterator"], 1000)
    check_records(out["Records"], [change("INSERT", pk_item(101))], "KEYS_ONLY")
    assert int(seq(out["Records"][0])) > int(seq(everything[-1]))


def test_default_limit_is_1000_records(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    for b in range(0, 1001, 25):
        reqs = [{"PutRequest": {"Item": pk_item(i)}} for i in range(b, min(b + 25, 1001))]
        assert api.ok("BatchWriteItem", {"RequestItems": {t: reqs}})["UnprocessedItems"] == {}
    out = get_records(streams, shard_iterator(streams, arn))
    assert len(out["Records"]) == 1000
    out2 = get_records(streams, out["NextShardIterator"])
    assert len(out2["Records"]) == 1
    assert get_records(streams, out2["NextShardIterator"])["Records"] == []
    keys = {r["dynamodb"]["Keys"]["pk"]["S"] for r in out["Records"] + out2["Records"]}
    assert keys == {f"k{i}" for i in range(1001)}


def test_pages_hold_at_most_1_mb(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_IMAGE")
    big = "x" * 300_000
    for i in range(4):
        put(api, t, pk_item(i, blob=S(big)))
    it = shard_iterator(streams, arn)
    got = []
    for _ in range(6):
        out = get_records(streams, it)
        sizes = [r["dynamodb"]["SizeBytes"] for r in out["Records"]]
        if not sizes:
            break
        assert sizes and all(s > 300_000 for s in sizes)
        assert sum(sizes) <= MIB, f"one page holds {len(sizes)} records, {sum(sizes)} bytes"
        got.extend(out["Records"])
        it = out["NextShardIterator"]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in got] == ["k0", "k1", "k2", "k3"]


# =========================================================================== lifecycle


def test_disable_then_enable_makes_a_new_stream(api, streams, make_table):
    t, arn1 = stream_table(make_table, api, "NEW_IMAGE")
    label1 = arn1.rsplit("/", 1)[1]
    old_items = write_n(api, t, 3)
    shard1 = shard_of(streams, arn1)

    desc = set_stream(api, t, None)
    assert "StreamSpecification" not in desc
    assert desc["LatestStreamArn"] == arn1 and desc["LatestStreamLabel"] == label1
    desc = describe_table(api, t)
    assert "StreamSpecification" not in desc
    assert desc["LatestStreamArn"] == arn1
    write_n(api, t, 2, start=50)  # recorded nowhere

    time.sleep(0.01)  # labels have millisecond resolution
    desc = set_stream(api, t, "KEYS_ONLY")
    arn2, label2 = desc["LatestStreamArn"], desc["LatestStreamLabel"]
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    assert arn2 != arn1 and label2 > label1 and arn2 == stream_arn(t, label2)
    assert describe_table(api, t)["LatestStreamArn"] == arn2
    write_n(api, t, 2, start=100)

    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [
        {"StreamArn": arn1, "TableName": t, "StreamLabel": label1},
        {"StreamArn": arn2, "TableName": t, "StreamLabel": label2}]

    sd1 = describe_stream(streams, arn1)
    assert sd1["StreamStatus"] == "DISABLED" and sd1["StreamViewType"] == "NEW_IMAGE"
    assert len(sd1["Shards"]) == 1
    s1 = sd1["Shards"][0]
    assert s1["ShardId"] == shard1["ShardId"]
    rng1 = s1["SequenceNumberRange"]
    assert rng1["StartingSequenceNumber"] == shard1["SequenceNumberRange"][
        "StartingSequenceNumber"]
    assert SEQUENCE_RE.match(rng1["EndingSequenceNumber"])

    old_records, pages = read_closed(streams, shard_iterator(streams, arn1))
    check_records(old_records, [change("INSERT", pk_item(i), new=it)
                                for i, it in enumerate(old_items)], "NEW_IMAGE")
    assert int(rng1["StartingSequenceNumber"]) <= int(seq(old_records[0]))
    assert int(seq(old_records[-1])) <= int(rng1["EndingSequenceNumber"])
    paged, pages = read_closed(streams, shard_iterator(streams, arn1), limit=2)
    assert paged == old_records and pages[:2] == [2, 1] and sum(pages) == 3
    assert read_stream(streams, arn1, "AT_SEQUENCE_NUMBER", seq(old_records[1])) == \
        old_records[1:]
    # LATEST on a closed shard is past its end.
    out = get_records(streams, shard_iterator(streams, arn1, "LATEST"))
    assert out["Records"] == [] and "NextShardIterator" not in out

    sd2 = describe_stream(streams, arn2)
    assert sd2["StreamStatus"] == "ENABLED" and sd2["StreamViewType"] == "KEYS_ONLY"
    s2 = sd2["Shards"][0]
    assert s2["ShardId"] != s1["ShardId"]
    assert "EndingSequenceNumber" not in s2["SequenceNumberRange"]
    assert int(s2["SequenceNumberRange"]["StartingSequenceNumber"]) > \
        int(rng1["EndingSequenceNumber"])
    new_records = read_stream(streams, arn2)
    check_records(new_records, [change("INSERT", pk_item(100)), change("INSERT", pk_item(101))],
                  "KEYS_ONLY")
    assert int(seq(new_records[0])) > int(rng1["EndingSequenceNumber"])


def test_quick_disable_enable_cycles_make_distinct_streams(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    arns = [arn]
    for i in range(10):
        set_stream(api, t, None)
        arns.append(set_stream(api, t, "KEYS_ONLY")["LatestStreamArn"])
        put(api, t, pk_item(i))
    assert len(set(arns)) == len(arns)
    labels = [a.rsplit("/", 1)[1] for a in arns]
    assert labels == sorted(labels)
    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [
        list_entry(t, a) for a in arns]
    for i, a in enumerate(arns):
        records = read_stream(streams, a)
        want = [] if i == 0 else [change("INSERT", pk_item(i - 1))]
        check_records(records, want, "KEYS_ONLY")
        assert describe_stream(streams, a)["StreamStatus"] == (
            "ENABLED" if i == len(arns) - 1 else "DISABLED")


def test_quick_delete_create_cycles_keep_every_stream(server, streams):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)

    def call(op, body):
        resp = signed_request(server.port, "DynamoDB_20120810." + op, body, conn=conn)
        assert resp.status == 200, resp
        return resp.json

    t = unique_name("cycle")
    arns = []
    try:
        for i in range(10):
            arns.append(call("CreateTable", create_table_args(
                t, StreamSpecification=stream_spec("KEYS_ONLY")))["TableDescription"][
                    "LatestStreamArn"])
            call("PutItem", {"TableName": t, "Item": pk_item(i)})
            call("DeleteTable", {"TableName": t})
    finally:
        conn.close()
    assert len(set(arns)) == len(arns)
    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [
        list_entry(t, a) for a in arns]
    for i, a in enumerate(arns):
        records, _ = read_closed(streams, shard_iterator(streams, a))
        check_records(records, [change("INSERT", pk_item(i))], "KEYS_ONLY")



def test_disabled_stream_without_records(api, streams, make_table):
    t, arn = stream_table(make_table, api, "OLD_IMAGE")
    set_stream(api, t, None)
    sd = describe_stream(streams, arn)
    assert sd["StreamStatus"] == "DISABLED"
    assert "EndingSequenceNumber" in sd["Shards"][0]["SequenceNumberRange"]
    records, pages = read_closed(streams, shard_iterator(streams, arn))
    assert records == []


def test_closed_shard_ends_when_another_table_wrote_last(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    other, other_arn = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t, 2)
    write_n(api, other, 1)  # the last record before the close is the other table's
    set_stream(api, t, None)
    records, _ = read_closed(streams, shard_iterator(streams, arn))
    check_records(records, [change("INSERT", pk_item(0)), change("INSERT", pk_item(1))],
                  "KEYS_ONLY")


def test_delete_table_closes_the_stream(api, ddb, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES", range_key=("sk", "N"))
    label = arn.rsplit("/", 1)[1]
    items = [citem(i, v=N(i)) for i in range(3)]
    for it in items:
        put(api, t, it)
    waiting = get_records(streams, shard_iterator(streams, arn, "LATEST"))["NextShardIterator"]
    api.ok("DeleteTable", {"TableName": t})
    wait_table_gone(ddb, t)

    entry = {"StreamArn": arn, "TableName": t, "StreamLabel": label}
    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [entry]
    assert entry in streams.ok("ListStreams")["Streams"]
    sd = describe_stream(streams, arn)
    assert sd["StreamStatus"] == "DISABLED"
    assert sd["TableName"] == t and sd["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert sd["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                               {"AttributeName": "sk", "KeyType": "RANGE"}]
    assert "EndingSequenceNumber" in sd["Shards"][0]["SequenceNumberRange"]
    expected = [change("INSERT", ck(i), new=it) for i, it in enumerate(items)]
    records, _ = read_closed(streams, shard_iterator(streams, arn))
    check_records(records, expected, "NEW_AND_OLD_IMAGES")  # no REMOVE for the dropped items
    out = get_records(streams, waiting)
    assert out["Records"] == [] and "NextShardIterator" not in out

    # A new table of the same name gets a new stream; the old one is untouched.
    time.sleep(0.01)
    t2 = make_table(name=t, hash_key=("pk", "S"), range_key=("sk", "N"),
                    StreamSpecification=stream_spec("KEYS_ONLY"))
    arn2 = latest_arn_of(api, t2)
    assert arn2 != arn
    put(api, t, citem(7))
    assert streams.ok("ListStreams", {"TableName": t})["Streams"] == [
        entry, {"StreamArn": arn2, "TableName": t, "StreamLabel": arn2.rsplit("/", 1)[1]}]
    check_records(read_stream(streams, arn2), [change("INSERT", ck(7))], "KEYS_ONLY")
    records, _ = read_closed(streams, shard_iterator(streams, arn))
    check_records(records, expected, "NEW_AND_OLD_IMAGES")
    assert describe_stream(streams, arn)["StreamStatus"] == "DISABLED"


# =========================================================================== ListStreams


def list_entry(name, arn):
    return {"StreamArn": arn, "TableName": name, "StreamLabel": arn.rsplit("/", 1)[1]}


def test_list_streams_orders_by_table_name_then_label(start_server):
    srv = start_server()
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    base = "ls" + unique_name("")[1:9]
    arns = {}
    for n in (base + "_d", base + "A", base + ".c", base + "-b", base):
        arns[n] = [create_stream_table(api, client, "KEYS_ONLY", name=n)[1]]
    time.sleep(0.01)
    set_stream(api, base, None)
    arns[base].append(set_stream(api, base, "NEW_IMAGE")["LatestStreamArn"])
    expected = [(n, a) for n in sorted(arns) for a in arns[n]]
    assert [n for n, _ in expected] == [base, base, base + "-b", base + ".c", base + "A",
                                        base + "_d"]
    got = [(s["TableName"], s["StreamArn"]) for s in streams.ok("ListStreams")["Streams"]]
    assert got == expected


def test_list_streams_paging_and_filter(start_server):
    srv = start_server()
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    base = "ls" + unique_name("")[1:9]
    arns = {}
    for n in (base + "d", base + "b", base + "c", base + "a"):
        arns[n] = [create_stream_table(api, client, "KEYS_ONLY", name=n)[1]]
    time.sleep(0.01)
    set_stream(api, base + "b", None)
    arns[base + "b"].append(set_stream(api, base + "b", "NEW_IMAGE")["LatestStreamArn"])
    set_stream(api, base + "c", None)  # disabled: still listed
    nostream = base + "n"
    api.ok("CreateTable", create_table_args(nostream))

    expected = [list_entry(n, a) for n in sorted(arns) for a in arns[n]]
    assert len(expected) == 5
    assert streams.ok("ListStreams") == {"Streams": expected}
    assert streams.ok("ListStreams", {"Limit": 100}) == {"Streams": expected}
    assert streams.ok("ListStreams", {"Limit": len(expected)}) == {"Streams": expected}

    for limit in (1, 2, 3, len(expected) - 1):
        got, start, pages = [], None, 0
        while True:
            body = {"Limit": limit}
            if start:
                body["ExclusiveStartStreamArn"] = start
            out = streams.ok("ListStreams", body)
            pages += 1
            assert len(out["Streams"]) <= limit
            got.extend(out["Streams"])
            if "LastEvaluatedStreamArn" not in out:
                break
            assert out["LastEvaluatedStreamArn"] == out["Streams"][-1]["StreamArn"]
            start = out["LastEvaluatedStreamArn"]
        assert got == expected
        assert pages == -(-len(expected) // limit)

    b = base + "b"
    assert streams.ok("ListStreams", {"TableName": b}) == {
        "Streams": [list_entry(b, a) for a in arns[b]]}
    out = streams.ok("ListStreams", {"TableName": b, "Limit": 1})
    assert out == {"Streams": [list_entry(b, arns[b][0])], "LastEvaluatedStreamArn": arns[b][0]}
    assert streams.ok("ListStreams", {"TableName": b, "Limit": 1,
                                      "ExclusiveStartStreamArn": arns[b][0]}) == {
        "Streams": [list_entry(b, arns[b][1])]}
    assert streams.ok("ListStreams", {"TableName": nostream}) == {"Streams": []}
    missing = base + "-missing"
    assert_error(streams("ListStreams", {"TableName": missing}), 400, RNF,
                 f"Requested resource not found: Table: {missing} not found")

    sc = srv.client(service="dynamodbstreams")
    assert sc.list_streams()["Streams"] == expected
    out = sc.list_streams(Limit=2)
    assert out["Streams"] == expected[:2]
    assert out["LastEvaluatedStreamArn"] == expected[1]["StreamArn"]


def test_list_streams_default_limit_is_100(start_server):
    srv = start_server()
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    arns = [create_stream_table(api, client, "KEYS_ONLY", name=f"many-{i:03d}")[1]
            for i in range(101)]
    out = streams.ok("ListStreams")
    assert [s["StreamArn"] for s in out["Streams"]] == arns[:100]
    assert out["LastEvaluatedStreamArn"] == arns[99]
    assert streams.ok("ListStreams", {"ExclusiveStartStreamArn": arns[99]}) == {
        "Streams": [list_entry("many-100", arns[100])]}


# =========================================================================== errors


@pytest.mark.parametrize("op,body,message", [
    ("ListStreams", {"TableName": 5}, "NUMBER_VALUE cannot be converted to String"),
    ("ListStreams", {"Limit": "5"}, "STRING_VALUE cannot be converted to Integer"),
    ("ListStreams", {"ExclusiveStartStreamArn": True}, "TRUE_VALUE cannot be converted to String"),
    ("DescribeStream", {"StreamArn": ["a"]}, "Unrecognized collection type class java.lang.String"),
    ("DescribeStream", {"StreamArn": A37, "Limit": {}},
     "Start of structure or map found where not expected"),
    ("GetShardIterator", {"StreamArn": A37, "ShardId": "shardId-00000000000000000000-00000000",
                          "ShardIteratorType": "AT_SEQUENCE_NUMBER", "SequenceNumber": 123},
     "NUMBER_VALUE cannot be converted to String"),
    ("GetShardIterator", {"StreamArn": A37, "ShardId": "shardId-00000000000000000000-00000000",
                          "ShardIteratorType": 1.5}, "DECIMAL_VALUE cannot be converted to String"),
    ("GetRecords", {"ShardIterator": False}, "FALSE_VALUE cannot be converted to String"),
    ("GetRecords", {"ShardIterator": "it", "Limit": "10"},
     "STRING_VALUE cannot be converted to Integer"),
])
def test_wrong_json_types(streams, op, body, message):
    assert_error(streams(op, body), 400, SERIALIZATION, message)


@pytest.mark.parametrize("op", ["ListStreams", "DescribeStream", "GetShardIterator",
                                "GetRecords"])
def test_empty_body(streams, op):
    resp = streams(op, b"")
    assert resp.status == 400 and resp.json == {"__type": SERIALIZATION}, resp


@pytest.fixture
def one_stream(api, streams, make_table):
    """A NEW_IMAGE stream with two records: (table, arn, shard id, [records])."""
    t, arn = stream_table(make_table, api, "NEW_IMAGE")
    write_n(api, t, 2)
    return t, arn, shard_of(streams, arn)["ShardId"], read_stream(streams, arn)


def test_unknown_streams(api, streams, make_table, one_stream):
    t, arn, shard_id, _ = one_stream
    plain = make_table()
    unknown = [stream_arn(t, "2001-01-01T00:00:00.000"),
               stream_arn(plain, "2001-01-01T00:00:00.000"),
               stream_arn(unique_name(), "2001-01-01T00:00:00.000"),
               "arn:aws:dynamodb:us-east-1:000000000000:table/" + t]
    for u in unknown:
        message = f"Requested resource not found: Stream: {u} not found"
        assert_error(streams("DescribeStream", {"StreamArn": u}), 400, RNF, message)
        assert_error(streams("GetShardIterator", {"StreamArn": u, "ShardId": shard_id,
                                                  "ShardIteratorType": "TRIM_HORIZON"}),
                     400, RNF, message)


def test_stream_arn_of_another_region_or_account(streams, one_stream):
    t, arn, shard_id, _ = one_stream
    label = arn.rsplit("/", 1)[1]
    for other in (f"arn:aws:dynamodb:eu-west-1:000000000000:table/{t}/stream/{label}",
                  f"arn:aws:dynamodb:us-east-1:123456789012:table/{t}/stream/{label}",
                  f"arn:aws-cn:dynamodb:us-east-1:000000000000:table/{t}/stream/{label}"):
        message = f"Requested resource not found: Stream: {other} not found"
        assert_error(streams("DescribeStream", {"StreamArn": other}), 400, RNF, message)
        assert_error(streams("GetShardIterator", {"StreamArn": other, "ShardId": shard_id,
                                                  "ShardIteratorType": "TRIM_HORIZON"}),
                     400, RNF, message)


def test_unknown_shard(streams, one_stream):
    _, arn, shard_id, _ = one_stream
    for other in ("shardId-00000000000000000000-00000000",
                  shard_id[:-1] + ("0" if shard_id[-1] != "0" else "1")):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": other,
                                            "ShardIteratorType": "LATEST"})
        assert_error(resp, 400, RNF, f"Requested resource not found: Shard does not exist: "
                                     f"{other} in Stream: {arn}")


def test_describe_stream_shard_paging_and_filter(streams, one_stream):
    _, arn, shard_id, _ = one_stream
    full = describe_stream(streams, arn)
    assert streams.ok("DescribeStream", {"StreamArn": arn, "Limit": 1})["StreamDescription"] \
        == full
    assert streams.ok("DescribeStream", {"StreamArn": arn, "Limit": 100})["StreamDescription"] \
        == full
    out = streams.ok("DescribeStream", {"StreamArn": arn, "ExclusiveStartShardId": shard_id})
    assert out["StreamDescription"] == dict(full, Shards=[])
    out = streams.ok("DescribeStream", {"StreamArn": arn, "ShardFilter": {
        "Type": "CHILD_SHARDS", "ShardId": shard_id}})
    assert out["StreamDescription"] == dict(full, Shards=[])


def test_sequence_number_required(streams, one_stream):
    _, arn, shard_id, _ = one_stream
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                            "ShardIteratorType": kind})
        assert_validation(resp, f"A SequenceNumber is required for ShardIteratorType {kind}")


def test_sequence_number_outside_the_shard(api, streams, make_table, one_stream):
    t, arn, shard_id, records = one_stream
    start = shard_of(streams, arn)["SequenceNumberRange"]["StartingSequenceNumber"]
    # Numbers before the start and after the last record, and text that is no sequence
    # number at all.
    before = str(int(start) - 1).rjust(len(start), "0")
    beyond = str(int(seq(records[-1])) + 1000)
    t2, arn2 = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t2, 1)
    for bad in (before, beyond, "9" * 40, "0" * 21, "abcdefghijklmnopqrstu"):
        for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                                "ShardIteratorType": kind, "SequenceNumber": bad})
            assert_validation(resp, f"Invalid SequenceNumber {bad} for ShardId {shard_id}")
    # This stream's records are older than the other stream's shard.
    shard2 = shard_of(streams, arn2)["ShardId"]
    for bad in (seq(records[0]), seq(records[-1])):
        resp = streams("GetShardIterator", {"StreamArn": arn2, "ShardId": shard2,
                                            "ShardIteratorType": "AT_SEQUENCE_NUMBER",
                                            "SequenceNumber": bad})
        assert_validation(resp, f"Invalid SequenceNumber {bad} for ShardId {shard2}")


def test_invalid_shard_iterators(streams, one_stream):
    _, arn, shard_id, records = one_stream
    good = shard_iterator(streams, arn)
    mid = len(good) // 2
    tampered = good[:mid] + ("A" if good[mid] != "A" else "B") + good[mid + 1:]
    for bad in ("garbage", "x" * 2048, tampered, good[:-1], good + "0"):
        assert_validation(streams("GetRecords", {"ShardIterator": bad}), "Invalid ShardIterator")
    assert get_records(streams, good)["Records"] == records


def coral(path, value, constraint):
    shown = "null" if value is None else f"'{value}'"
    return f"Value {shown} at '{path}' failed to satisfy constraint: {constraint}"


GE = "Member must have length greater than or equal to {}".format
LE = "Member must have length less than or equal to {}".format
VGE = "Member must have value greater than or equal to {}".format
VLE = "Member must have value less than or equal to {}".format
NOT_NULL = "Member must not be null"


def model_cases():
    short_arn, long_arn = "a" * 36, "a" * 1025
    shard = "shardId-00000000000000000000-00000000"
    base = {"StreamArn": A37, "ShardId": shard, "ShardIteratorType": "LATEST"}
    return [
        ("ListStreams", {"Limit": 0}, coral("limit", 0, VGE(1))),
        ("ListStreams", {"Limit": 101}, coral("limit", 101, VLE(100))),
        ("ListStreams", {"TableName": "ab"}, coral("tableName", "ab", GE(3))),
        ("ListStreams", {"TableName": "x" * 256}, coral("tableName", "x" * 256, LE(255))),
        ("ListStreams", {"TableName": "bad name!"},
         coral("tableName", "bad name!",
               "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")),
        ("ListStreams", {"ExclusiveStartStreamArn": short_arn},
         coral("exclusiveStartStreamArn", short_arn, GE(37))),
        ("DescribeStream", {}, coral("streamArn", None, NOT_NULL)),
        ("DescribeStream", {"StreamArn": short_arn}, coral("streamArn", short_arn, GE(37))),
        ("DescribeStream", {"StreamArn": long_arn}, coral("streamArn", long_arn, LE(1024))),
        ("DescribeStream", {"StreamArn": A37, "Limit": 0}, coral("limit", 0, VGE(1))),
        ("DescribeStream", {"StreamArn": A37, "Limit": 101}, coral("limit", 101, VLE(100))),
        ("DescribeStream", {"StreamArn": A37, "ExclusiveStartShardId": "s" * 27},
         coral("exclusiveStartShardId", "s" * 27, GE(28))),
        ("DescribeStream", {"StreamArn": A37, "ExclusiveStartShardId": "s" * 66},
         coral("exclusiveStartShardId", "s" * 66, LE(65))),
        ("DescribeStream", {"StreamArn": A37, "ShardFilter": {"Type": "PARENT_SHARDS",
                                                              "ShardId": shard}},
         coral("shardFilter.type", "PARENT_SHARDS",
               "Member must satisfy enum value set: [CHILD_SHARDS]")),
        ("GetShardIterator", dict(base, StreamArn=short_arn), coral("streamArn", short_arn,
                                                                    GE(37))),
        ("GetShardIterator", dict(base, ShardId="s" * 27), coral("shardId", "s" * 27, GE(28))),
        ("GetShardIterator", dict(base, ShardId="s" * 66), coral("shardId", "s" * 66, LE(65))),
        ("GetShardIterator", dict(base, ShardIteratorType="OLDEST"),
         coral("shardIteratorType", "OLDEST",
               "Member must satisfy enum value set: " + ITERATOR_TYPES)),
        ("GetShardIterator", dict(base, ShardIteratorType="latest"),
         coral("shardIteratorType", "latest",
               "Member must satisfy enum value set: " + ITERATOR_TYPES)),
        ("GetShardIterator", {"ShardId": shard, "ShardIteratorType": "LATEST"},
         coral("streamArn", None, NOT_NULL)),
        ("GetShardIterator", {"StreamArn": A37, "ShardIteratorType": "LATEST"},
         coral("shardId", None, NOT_NULL)),
        ("GetShardIterator", {"StreamArn": A37, "ShardId": shard},
         coral("shardIteratorType", None, NOT_NULL)),
        ("GetShardIterator", dict(base, ShardIteratorType="AT_SEQUENCE_NUMBER",
                                  SequenceNumber="1" * 20),
         coral("sequenceNumber", "1" * 20, GE(21))),
        ("GetShardIterator", dict(base, ShardIteratorType="AT_SEQUENCE_NUMBER",
                                  SequenceNumber="1" * 41),
         coral("sequenceNumber", "1" * 41, LE(40))),
        ("GetRecords", {}, coral("shardIterator", None, NOT_NULL)),
        ("GetRecords", {"ShardIterator": ""}, coral("shardIterator", "", GE(1))),
        ("GetRecords", {"ShardIterator": "i" * 2049}, coral("shardIterator", "i" * 2049,
                                                            LE(2048))),
        ("GetRecords", {"ShardIterator": "it", "Limit": 0}, coral("limit", 0, VGE(1))),
        ("GetRecords", {"ShardIterator": "it", "Limit": 1001}, coral("limit", 1001, VLE(1000))),
    ]


@pytest.mark.parametrize("op,body,error", model_cases(),
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(model_cases())])
def test_model_validation(streams, op, body, error):
    assert_validation(streams(op, body), COR_PREFIX + error)


def test_several_model_violations_are_reported_together(streams):
    resp = streams("GetShardIterator", {"ShardIteratorType": "NEWEST"})
    parts = [coral("streamArn", None, NOT_NULL), coral("shardId", None, NOT_NULL),
             coral("shardIteratorType", "NEWEST",
                   "Member must satisfy enum value set: " + ITERATOR_TYPES)]
    assert_validation(resp, message_prefix="3 validation errors detected: ")
    listed = resp.message[len("3 validation errors detected: "):].split("; ")
    assert sorted(listed) == sorted(parts)
    resp = streams("GetRecords", {"ShardIterator": "", "Limit": 5000})
    assert_validation(resp, message_prefix="2 validation errors detected: ")
    listed = resp.message[len("2 validation errors detected: "):].split("; ")
    assert sorted(listed) == sorted([coral("shardIterator", "", GE(1)),
                                     coral("limit", 5000, VLE(1000))])


def test_operations_belong_to_their_own_prefix(server, streams, one_stream):
    for target in ("DynamoDBStreams_20120810.PutItem", "DynamoDBStreams_20120810.ListTables",
                   "DynamoDBStreams_20120810.Nope", "DynamoDB_20120810.ListStreams",
                   "DynamoDB_20120810.GetRecords"):
        resp = signed_request(server.port, target, {})
        assert resp.status == 400 and resp.json == {"__type": UNKNOWN_OPERATION}, (target, resp)


# =========================================================================== expiry, trimming


def test_expired_iterators(start_server):
    srv = start_server(extra_args=["--shard-iterator-lifetime", "1"])
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    t, arn = create_stream_table(api, client, "KEYS_ONLY")
    write_n(api, t, 2)
    t0 = time.monotonic()
    first = shard_iterator(streams, arn)
    out = get_records(streams, first, 1)
    assert len(out["Records"]) == 1
    time.sleep(max(0.0, t0 + 0.6 - time.monotonic()))
    out = get_records(streams, out["NextShardIterator"], 1)  # issued at t0: still young
    assert len(out["Records"]) == 1
    fresh = out["NextShardIterator"]  # issued at t0 + 0.6
    time.sleep(max(0.0, t0 + 1.3 - time.monotonic()))
    assert_error(streams("GetRecords", {"ShardIterator": first}), 400, EXPIRED_ITERATOR,
                 EXPIRED_MESSAGE)
    out = get_records(streams, fresh)
    assert out["Records"] == [] and "NextShardIterator" in out
    time.sleep(max(0.0, t0 + 2.5 - time.monotonic()))
    assert_error(streams("GetRecords", {"ShardIterator": fresh}), 400, EXPIRED_ITERATOR,
                 EXPIRED_MESSAGE)
    sc = srv.client(service="dynamodbstreams")
    with pytest.raises(sc.exceptions.ExpiredIteratorException) as e:
        sc.get_records(ShardIterator=first)
    client_error(e, "ExpiredIteratorException", EXPIRED_MESSAGE)
    # A new iterator reads everything again.
    assert len(read_stream(streams, arn)) == 2


def test_trimmed_data(start_server):
    srv = start_server(extra_args=["--stream-retention", "2"])
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    t, arn = create_stream_table(api, client, "NEW_IMAGE")
    shard_id = shard_of(streams, arn)["ShardId"]
    write_n(api, t, 3)
    old = read_stream(streams, arn)
    assert len(old) == 3
    stale = shard_iterator(streams, arn)  # positioned on the first record
    wait_for(lambda: read_stream(streams, arn) == [], 10, 0.2, "old records trimmed")
    items = write_n(api, t, 2, start=10)
    fresh = read_stream(streams, arn)
    check_records(fresh, [change("INSERT", pk_item(10), new=items[0]),
                          change("INSERT", pk_item(11), new=items[1])], "NEW_IMAGE")
    for kind, number in (("AT_SEQUENCE_NUMBER", seq(old[0])), ("AT_SEQUENCE_NUMBER", seq(old[2])),
                         ("AFTER_SEQUENCE_NUMBER", seq(old[0]))):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                            "ShardIteratorType": kind, "SequenceNumber": number})
        assert_error(resp, 400, TRIMMED, TRIMMED_MESSAGE)
    assert_error(streams("GetRecords", {"ShardIterator": stale}), 400, TRIMMED, TRIMMED_MESSAGE)
    assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", seq(fresh[0])) == fresh
    sc = srv.client(service="dynamodbstreams")
    with pytest.raises(sc.exceptions.TrimmedDataAccessException) as e:
        sc.get_records(ShardIterator=stale)
    client_error(e, "TrimmedDataAccessException", TRIMMED_MESSAGE)
    # The open stream itself stays.
    assert describe_stream(streams, arn)["StreamStatus"] == "ENABLED"
    assert [s["StreamArn"] for s in streams.ok("ListStreams")["Streams"]] == [arn]


def test_closed_streams_disappear_after_retention(start_server):
    srv = start_server(extra_args=["--stream-retention", "2"])
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    kept, kept_arn = create_stream_table(api, client, "KEYS_ONLY", name="r-kept")
    disabled, disabled_arn = create_stream_table(api, client, "KEYS_ONLY", name="r-disabled")
    dropped, dropped_arn = create_stream_table(api, client, "KEYS_ONLY", name="r-dropped")
    for t in (kept, disabled, dropped):
        write_n(api, t, 1)
    set_stream(api, disabled, None)
    api.ok("DeleteTable", {"TableName": dropped})
    wait_table_gone(client, dropped)
    assert [s["StreamArn"] for s in streams.ok("ListStreams")["Streams"]] == [
        disabled_arn, dropped_arn, kept_arn]

    wait_for(lambda: streams.ok("ListStreams")["Streams"] != [] and [
        s["StreamArn"] for s in streams.ok("ListStreams")["Streams"]] == [kept_arn],
        10, 0.2, "closed streams forgotten")
    assert streams.ok("ListStreams", {"TableName": disabled}) == {"Streams": []}
    assert_error(streams("ListStreams", {"TableName": dropped}), 400, RNF,
                 f"Requested resource not found: Table: {dropped} not found")
    for arn in (disabled_arn, dropped_arn):
        assert_error(streams("DescribeStream", {"StreamArn": arn}), 400, RNF,
                     f"Requested resource not found: Stream: {arn} not found")
    assert describe_stream(streams, kept_arn)["StreamStatus"] == "ENABLED"


# =========================================================================== restart


def snapshot(streams):
    listed = streams.ok("ListStreams")["Streams"]
    out = {"list": listed}
    for s in listed:
        arn = s["StreamArn"]
        out[arn] = (describe_stream(streams, arn), read_closed_or_open(streams, arn))
    return out


def read_closed_or_open(streams, arn):
    records, _, _ = drain(streams, shard_iterator(streams, arn))
    return records


def test_streams_survive_restart(start_server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data))
    api, client = srv.api(), srv.client()
    t, arn1 = create_stream_table(api, client, "NEW_AND_OLD_IMAGES", range_key=("sk", "N"))
    for i in range(3):
        put(api, t, citem(i, v=S("a")))
    update(api, t, ck(0), "SET v = :b", {":b": S("b")})
    time.sleep(0.01)
    set_stream(api, t, None)
    arn2 = set_stream(api, t, "KEYS_ONLY")["LatestStreamArn"]
    delete(api, t, ck(1))
    before = snapshot(streams_api_for(srv))
    assert len(before[arn1][1]) == 4 and len(before[arn2][1]) == 1
    last = max(int(seq(r)) for arn in (arn1, arn2) for r in before[arn][1])

    assert srv.terminate() == 0
    srv.start()
    streams = streams_api_for(srv)
    assert snapshot(streams) == before
    assert describe_table(srv.api(), t)["LatestStreamArn"] == arn2
    put(srv.api(), t, citem(5))
    after = read_stream(streams, arn2)
    assert after[:1] == before[arn2][1]
    check_records(after[1:], [change("INSERT", ck(5))], "KEYS_ONLY")
    assert int(seq(after[1])) > last

    # SIGKILL: acknowledged writes and their records survive too, and numbering goes on.
    put(srv.api(), t, citem(6))
    acknowledged = read_stream(streams, arn2)
    srv.kill()
    srv.start()
    streams = streams_api_for(srv)
    assert read_stream(streams, arn2) == acknowledged
    put(srv.api(), t, citem(7))
    final = read_stream(streams, arn2)
    assert final[:-1] == acknowledged
    assert int(seq(final[-1])) > int(seq(acknowledged[-1]))
    assert len(read_stream(streams, arn1)) == 4
