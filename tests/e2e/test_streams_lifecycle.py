"""The DynamoDB Streams lifecycle: enabling a stream with CreateTable or UpdateTable
(StreamSpecification) and the UpdateTable stream
errors, disabling and enabling again (a new stream each time, the old shard closed),
DeleteTable, ListStreams order, paging and filter, closed streams forgotten after the
retention period, and streams surviving a restart (SIGTERM and SIGKILL).

A stream has a shard per partition of its table (one on the local back ends, 4 for a new
table on RADOS); every shard of a stream is closed with it, and each shard of a re-enabled
stream starts above where the same partition's shard of the old stream ended. Records are
ordered within a shard: the tests check each shard's order and each item's changes."""

import calendar
import datetime
import http.client
import time

import pytest

from kumo_testlib import (
    assert_error,
    assert_validation,
    create_table_args,
    signed_request,
    unique_name,
    wait_table_gone,
)
from stream_helpers import (  # noqa: F401
    LABEL_RE,
    RNF,
    VIEW_TYPES,
    N,
    S,
    ShardedRecords,
    all_shards,
    change,
    check_new_shards,
    check_records,
    citem,
    ck,
    create_stream_table,
    delete,
    describe_stream,
    describe_table,
    get_records,
    iterators,
    latest_arn_of,
    pk_item,
    put,
    read_closed_shards,
    read_sharded,
    read_stream,
    seq,
    set_stream,
    stream_arn,
    stream_spec,
    stream_table,
    streams,
    streams_api_for,
    update,
    wait_for,
    write_n,
)

INVALID = "One or more parameter values were invalid: "


def label_epoch(label):
    dt = datetime.datetime.strptime(label, "%Y-%m-%dT%H:%M:%S.%f")
    return calendar.timegm(dt.timetuple()) + dt.microsecond / 1e6


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
    # One shard per partition, none with a parent, open (no EndingSequenceNumber).
    check_new_shards(sd["Shards"])


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


# =========================================================================== lifecycle


def test_disable_then_enable_makes_a_new_stream(api, streams, make_table):
    t, arn1 = stream_table(make_table, api, "NEW_IMAGE")
    label1 = arn1.rsplit("/", 1)[1]
    old_items = write_n(api, t, 3)
    shards1 = check_new_shards(all_shards(streams, arn1))

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
    # The same shards, each now closed: an EndingSequenceNumber, the same start.
    closed1 = check_new_shards(sd1["Shards"], closed=True)
    assert [s["ShardId"] for s in closed1] == [s["ShardId"] for s in shards1]
    for s1, shard1 in zip(closed1, shards1):
        assert s1["SequenceNumberRange"]["StartingSequenceNumber"] == \
            shard1["SequenceNumberRange"]["StartingSequenceNumber"]

    _, old_records, _ = read_closed_shards(streams, arn1)
    check_records(old_records, [change("INSERT", pk_item(i), new=it)
                                for i, it in enumerate(old_items)], "NEW_IMAGE")
    _, paged, pages = read_closed_shards(streams, arn1, limit=2)
    assert paged.shards == old_records.shards
    for s1, own, counts in zip(closed1, old_records.shards, pages):
        rng1 = s1["SequenceNumberRange"]
        assert all(int(rng1["StartingSequenceNumber"]) <= int(seq(r))
                   <= int(rng1["EndingSequenceNumber"]) for r in own), (rng1, own)
        # Pages of at most 2 records, full until the shard's last records.
        full = [2] * (len(own) // 2) + [len(own) % 2] * (len(own) % 2)
        assert counts[:len(full)] == full and sum(counts) == len(own), counts
        for i, r in enumerate(own):
            assert read_stream(streams, arn1, "AT_SEQUENCE_NUMBER", seq(r),
                               shard_id=s1["ShardId"]) == own[i:]
    # LATEST on a closed shard is past its end.
    for it in iterators(streams, arn1, "LATEST"):
        out = get_records(streams, it)
        assert out["Records"] == [] and "NextShardIterator" not in out

    sd2 = describe_stream(streams, arn2)
    assert sd2["StreamStatus"] == "ENABLED" and sd2["StreamViewType"] == "KEYS_ONLY"
    shards2 = check_new_shards(sd2["Shards"])
    assert not {s["ShardId"] for s in shards2} & {s["ShardId"] for s in closed1}
    new_records = read_sharded(streams, arn2)
    check_records(new_records, [change("INSERT", pk_item(100)), change("INSERT", pk_item(101))],
                  "KEYS_ONLY")
    # Each partition numbers on: its new shard (listed in the same place) starts above where
    # its old one ended.
    for s1, s2, own in zip(closed1, shards2, new_records.shards):
        end = int(s1["SequenceNumberRange"]["EndingSequenceNumber"])
        assert int(s2["SequenceNumberRange"]["StartingSequenceNumber"]) > end, (s1, s2)
        assert all(int(seq(r)) > end for r in own), (s1, own)


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
        _, records, _ = read_closed_shards(streams, a)
        check_records(records, [change("INSERT", pk_item(i))], "KEYS_ONLY")


def test_disabled_stream_without_records(api, streams, make_table):
    t, arn = stream_table(make_table, api, "OLD_IMAGE")
    set_stream(api, t, None)
    sd = describe_stream(streams, arn)
    assert sd["StreamStatus"] == "DISABLED"
    check_new_shards(sd["Shards"], closed=True)
    _, records, _ = read_closed_shards(streams, arn)
    assert records == []


def test_closed_shard_ends_when_another_table_wrote_last(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    other, other_arn = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t, 2)
    write_n(api, other, 1)  # the last record before the close is the other table's
    set_stream(api, t, None)
    _, records, _ = read_closed_shards(streams, arn)
    check_records(records, [change("INSERT", pk_item(0)), change("INSERT", pk_item(1))],
                  "KEYS_ONLY")


def test_delete_table_closes_the_stream(api, ddb, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES", range_key=("sk", "N"))
    label = arn.rsplit("/", 1)[1]
    items = [citem(i, v=N(i)) for i in range(3)]
    for it in items:
        put(api, t, it)
    waiting = [get_records(streams, it)["NextShardIterator"]
               for it in iterators(streams, arn, "LATEST")]
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
    check_new_shards(sd["Shards"], closed=True)
    expected = [change("INSERT", ck(i), new=it) for i, it in enumerate(items)]
    _, records, _ = read_closed_shards(streams, arn)
    check_records(records, expected, "NEW_AND_OLD_IMAGES")  # no REMOVE for the dropped items
    for it in waiting:
        out = get_records(streams, it)
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
    _, records, _ = read_closed_shards(streams, arn)
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


# =========================================================================== retention


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
    """The listed streams, and each one's description and records, shard by shard."""
    listed = streams.ok("ListStreams")["Streams"]
    out = {"list": listed}
    for s in listed:
        arn = s["StreamArn"]
        out[arn] = (describe_stream(streams, arn), read_sharded(streams, arn).shards)
    return out


def check_appended(before, after, expected, view_type, floors):
    """`after` (records per shard) holds each shard's records of `before`, then records of
    exactly the changes `expected`, each numbered above its shard's number in `floors`."""
    assert len(after) == len(before)
    added = []
    for old, new, floor in zip(before, after, floors):
        assert new[:len(old)] == old
        added.append(new[len(old):])
        assert all(int(seq(r)) > floor for r in added[-1]), (floor, added[-1])
    check_records(ShardedRecords(added), expected, view_type)


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
    assert sum(map(len, before[arn1][1])) == 4 and sum(map(len, before[arn2][1])) == 1
    # The last number each partition gave (its shards of both streams are listed in the
    # same place): a record written after the restart is numbered above it.
    last = [max([int(seq(r)) for r in old + new] or [0])
            for old, new in zip(before[arn1][1], before[arn2][1])]

    assert srv.terminate() == 0
    srv.start()
    streams = streams_api_for(srv)
    assert snapshot(streams) == before
    assert describe_table(srv.api(), t)["LatestStreamArn"] == arn2
    put(srv.api(), t, citem(5))
    after = read_sharded(streams, arn2).shards
    check_appended(before[arn2][1], after, [change("INSERT", ck(5))], "KEYS_ONLY", last)

    # SIGKILL: acknowledged writes and their records survive too, and numbering goes on.
    put(srv.api(), t, citem(6))
    acknowledged = read_sharded(streams, arn2).shards
    srv.kill()
    srv.start()
    streams = streams_api_for(srv)
    assert read_sharded(streams, arn2).shards == acknowledged
    put(srv.api(), t, citem(7))
    final = read_sharded(streams, arn2).shards
    check_appended(acknowledged, final, [change("INSERT", ck(7))], "KEYS_ONLY",
                   [max([n] + [int(seq(r)) for r in own]) for n, own in zip(last, acknowledged)])
    assert len(read_stream(streams, arn1)) == 4
