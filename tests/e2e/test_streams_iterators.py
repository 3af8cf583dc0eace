"""DynamoDB Streams shard iterators and GetRecords: TRIM_HORIZON,
LATEST, AT_SEQUENCE_NUMBER and AFTER_SEQUENCE_NUMBER, paging with and without Limit (1000
records, 1 MB a page), iterators that expire (--shard-iterator-lifetime) and records trimmed
after the retention period (--stream-retention) with their exact errors.

A stream has a shard per partition of its table (several on RADOS): a test that reads one
shard writes items of one partition key (coll/<i>), whose records are all in its shard, and
a test that takes its iterators before writing takes one on every shard."""

import time

import pytest

from kumo_testlib import assert_error, client_error
from stream_helpers import (  # noqa: F401
    EXPIRED_ITERATOR,
    EXPIRED_MESSAGE,
    TRIMMED,
    TRIMMED_MESSAGE,
    S,
    change,
    check_records,
    coll_item,
    coll_key,
    create_stream_table,
    describe_stream,
    drain,
    get_records,
    iterators,
    pk_item,
    put,
    read_from,
    read_stream,
    seq,
    seqs,
    shard_holding,
    shard_iterator,
    stream_table,
    streams,
    streams_api_for,
    wait_for,
    write_coll,
    write_n,
)

MIB = 1 << 20
COLL = ("sk", "N")  # the range key of the tables that hold coll/<i> items


# =========================================================================== iterators


def test_latest_sees_only_later_writes(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t, 3)
    latest = iterators(streams, arn, "LATEST")  # one on every shard
    nexts = []
    for it in latest:
        out = get_records(streams, it)
        assert out["Records"] == [] and "NextShardIterator" in out
        nexts.append(out["NextShardIterator"])
    write_n(api, t, 2, start=10)
    want = [change("INSERT", pk_item(10)), change("INSERT", pk_item(11))]
    check_records(read_from(streams, nexts), want, "KEYS_ONLY")
    # The LATEST iterators stand just after the records that existed when they were issued.
    check_records(read_from(streams, latest), want, "KEYS_ONLY")
    # On an empty stream too.
    t2, arn2 = stream_table(make_table, api, "KEYS_ONLY")
    latest2 = iterators(streams, arn2, "LATEST")
    write_n(api, t2, 1)
    check_records(read_from(streams, latest2), [change("INSERT", pk_item(0))], "KEYS_ONLY")


def test_at_and_after_sequence_number(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_IMAGE", range_key=COLL)
    items = write_coll(api, t, 5)
    shard = shard_holding(streams, arn, "coll")
    sid = shard["ShardId"]
    records = read_stream(streams, arn, shard_id=sid)
    check_records(records, [change("INSERT", coll_key(i), new=it) for i, it in enumerate(items)],
                  "NEW_IMAGE")
    numbers = seqs(records)
    assert read_stream(streams, arn, "TRIM_HORIZON", shard_id=sid) == records
    for i in range(5):
        assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", numbers[i], shard_id=sid) == \
            records[i:]
        assert read_stream(streams, arn, "AFTER_SEQUENCE_NUMBER", numbers[i], shard_id=sid) == \
            records[i + 1:]
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    assert int(start) <= int(numbers[0])
    assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", start, shard_id=sid) == records
    # An AFTER iterator on the last record waits for the next write.
    it = shard_iterator(streams, arn, "AFTER_SEQUENCE_NUMBER", numbers[-1], shard_id=sid)
    out = get_records(streams, it)
    assert out["Records"] == [] and "NextShardIterator" in out
    put(api, t, items[0])  # identical: no record
    put(api, t, coll_item(7))
    check_records(get_records(streams, it)["Records"],
                  [change("INSERT", coll_key(7), new=coll_item(7))], "NEW_IMAGE")


def test_paging_with_limit(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY", range_key=COLL)
    write_coll(api, t, 25)
    sid = shard_holding(streams, arn, "coll")["ShardId"]
    everything = read_stream(streams, arn, shard_id=sid)
    assert len(everything) == 25
    records, pages, last = drain(streams, shard_iterator(streams, arn, shard_id=sid), limit=7)
    assert pages == [7, 7, 7, 4, 0]
    assert records == everything
    # Empty pages of an open shard still lead on; later writes show up.
    it = last["NextShardIterator"]
    for _ in range(3):
        out = get_records(streams, it, 7)
        assert out["Records"] == [] and "NextShardIterator" in out
        it = out["NextShardIterator"]
    write_coll(api, t, 2, start=100)
    out = get_records(streams, it, 1)
    check_records(out["Records"], [change("INSERT", coll_key(100))], "KEYS_ONLY")
    out = get_records(streams, out["NextShardIterator"], 1000)
    check_records(out["Records"], [change("INSERT", coll_key(101))], "KEYS_ONLY")
    assert int(seq(out["Records"][0])) > int(seq(everything[-1]))


def test_default_limit_is_1000_records(api, streams, make_table):
    t, arn = stream_table(make_table, api, "KEYS_ONLY", range_key=COLL)
    for b in range(0, 1001, 25):
        reqs = [{"PutRequest": {"Item": coll_item(i)}} for i in range(b, min(b + 25, 1001))]
        assert api.ok("BatchWriteItem", {"RequestItems": {t: reqs}})["UnprocessedItems"] == {}
    sid = shard_holding(streams, arn, "coll")["ShardId"]
    out = get_records(streams, shard_iterator(streams, arn, shard_id=sid))
    assert len(out["Records"]) == 1000
    out2 = get_records(streams, out["NextShardIterator"])
    assert len(out2["Records"]) == 1
    assert get_records(streams, out2["NextShardIterator"])["Records"] == []
    keys = {r["dynamodb"]["Keys"]["sk"]["N"] for r in out["Records"] + out2["Records"]}
    assert keys == {str(i) for i in range(1001)}


def test_pages_hold_at_most_1_mb(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_IMAGE", range_key=COLL)
    big = "x" * 300_000
    for i in range(4):
        put(api, t, coll_item(i, blob=S(big)))
    it = shard_iterator(streams, arn, shard_id=shard_holding(streams, arn, "coll")["ShardId"])
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
    assert [r["dynamodb"]["Keys"]["sk"]["N"] for r in got] == ["0", "1", "2", "3"]


# =========================================================================== expiry, trimming


def test_expired_iterators(start_server):
    srv = start_server(extra_args=["--shard-iterator-lifetime", "1"])
    api, streams, client = srv.api(), streams_api_for(srv), srv.client()
    t, arn = create_stream_table(api, client, "KEYS_ONLY", range_key=COLL)
    write_coll(api, t, 2)
    sid = shard_holding(streams, arn, "coll")["ShardId"]
    t0 = time.monotonic()
    first = shard_iterator(streams, arn, shard_id=sid)
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
    t, arn = create_stream_table(api, client, "NEW_IMAGE", range_key=COLL)
    write_coll(api, t, 3)
    shard_id = shard_holding(streams, arn, "coll")["ShardId"]
    old = read_stream(streams, arn, shard_id=shard_id)
    assert len(old) == 3
    stale = shard_iterator(streams, arn, shard_id=shard_id)  # positioned on the first record

    def all_trimmed():
        try:
            return read_stream(streams, arn) == []
        except AssertionError as error:
            # The trimmer removed the record a fresh TRIM_HORIZON iterator pointed at before
            # GetRecords used it, which DynamoDB also answers with TrimmedDataAccessException.
            if TRIMMED not in str(error):
                raise
            return False

    wait_for(all_trimmed, 10, 0.2, "old records trimmed")
    items = write_coll(api, t, 2, start=10)
    fresh = read_stream(streams, arn, shard_id=shard_id)
    check_records(fresh, [change("INSERT", coll_key(10), new=items[0]),
                          change("INSERT", coll_key(11), new=items[1])], "NEW_IMAGE")
    for kind, number in (("AT_SEQUENCE_NUMBER", seq(old[0])), ("AT_SEQUENCE_NUMBER", seq(old[2])),
                         ("AFTER_SEQUENCE_NUMBER", seq(old[0]))):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                            "ShardIteratorType": kind, "SequenceNumber": number})
        assert_error(resp, 400, TRIMMED, TRIMMED_MESSAGE)
    assert_error(streams("GetRecords", {"ShardIterator": stale}), 400, TRIMMED, TRIMMED_MESSAGE)
    assert read_stream(streams, arn, "AT_SEQUENCE_NUMBER", seq(fresh[0]),
                       shard_id=shard_id) == fresh
    sc = srv.client(service="dynamodbstreams")
    with pytest.raises(sc.exceptions.TrimmedDataAccessException) as e:
        sc.get_records(ShardIterator=stale)
    client_error(e, "TrimmedDataAccessException", TRIMMED_MESSAGE)
    # The open stream itself stays.
    assert describe_stream(streams, arn)["StreamStatus"] == "ENABLED"
    assert [s["StreamArn"] for s in streams.ok("ListStreams")["Streams"]] == [arn]


