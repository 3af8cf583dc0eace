"""DynamoDB Streams records: what every kind of write (PutItem,
UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems) records under every view type,
through raw calls and the boto3 clients, on hash-only tables and tables with indexes, each
stream holding only its own table's changes; and the writes that change nothing (identical
puts, failed conditions, canceled or replayed transactions, refused requests), which record
nothing."""

import datetime
import time

import pytest

from kumo_testlib import NS_DYNAMODB, assert_error, b64, client_error
from stream_helpers import (  # noqa: F401
    VIEW_TYPES,
    N,
    S,
    change,
    check_records,
    citem,
    ck,
    delete,
    describe_table,
    latest_arn_of,
    pk_item,
    put,
    read_stream,
    shard_holding,
    stream_arn,
    stream_table,
    streams,
    streams_client,
    update,
    wait_for,
)

CCF = NS_DYNAMODB + "ConditionalCheckFailedException"
CANCELED = NS_DYNAMODB + "TransactionCanceledException"


# =========================================================================== records


RICH = {"a": S("text ✓"), "n": N("12.5"), "neg": N("-0.001"), "bin": {"B": b64(b"\x00\x01\xff")},
        "t": {"BOOL": True}, "z": {"NULL": True}, "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b64(b"\x01"), b64(b"\x02")]},
        "l": {"L": [S("e"), N(1), {"L": []}]}, "m": {"M": {"k": S("v"), "in": {"M": {}}}},
        "empty": S("")}


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


def test_boto3_clients_end_to_end(api, ddb, streams, streams_client, make_table):
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
    # The shard of the item's partition (the only shard where the table has one partition).
    shard_id = shard_holding(streams, arn)["ShardId"]
    assert shard_id in [s["ShardId"] for s in sd["Shards"]]
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
