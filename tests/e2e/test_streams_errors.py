"""DynamoDB Streams errors: every error of ListStreams,
DescribeStream, GetShardIterator and GetRecords with its exact type and message — wrong JSON
types, empty bodies, unknown streams, shards and sequence numbers, invalid iterators, the
Coral model constraints (one or several at once) — and the Streams operations answering
only under their own target prefix."""

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_COR_SERVICE,
    SERIALIZATION,
    N,
    assert_error,
    assert_validation,
    on_rados,
    signed_request,
    unique_name,
)
from stream_helpers import (  # noqa: F401
    RNF,
    all_shards,
    check_new_shards,
    describe_stream,
    get_records,
    pk_item,
    put,
    read_stream,
    seq,
    shard_holding,
    shard_iterator,
    stream_arn,
    stream_table,
    streams,
    write_n,
)

UNKNOWN_OPERATION = NS_COR_SERVICE + "UnknownOperationException"
ITERATOR_TYPES = "[TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER]"
A37 = "arn:aws:dynamodb:us-east-1:0:table/ab"  # 37 characters: the shortest valid length


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
    """A NEW_IMAGE stream with two records of one item, so both in the shard of its
    partition: (table, arn, that shard's id, [its records])."""
    t, arn = stream_table(make_table, api, "NEW_IMAGE")
    put(api, t, pk_item(0, v=N(0)))
    put(api, t, pk_item(0, v=N(1)))
    shard_id = shard_holding(streams, arn)["ShardId"]
    return t, arn, shard_id, read_stream(streams, arn, shard_id=shard_id)


def assert_stream_not_found(streams, arn, shard_id):
    """DescribeStream and GetShardIterator both answer that `arn` names no stream."""
    message = f"Requested resource not found: Stream: {arn} not found"
    assert_error(streams("DescribeStream", {"StreamArn": arn}), 400, RNF, message)
    assert_error(streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                              "ShardIteratorType": "TRIM_HORIZON"}),
                 400, RNF, message)


def test_unknown_streams(api, streams, make_table, one_stream):
    t, arn, shard_id, _ = one_stream
    plain = make_table()
    unknown = [stream_arn(t, "2001-01-01T00:00:00.000"),
               stream_arn(plain, "2001-01-01T00:00:00.000"),
               stream_arn(unique_name(), "2001-01-01T00:00:00.000"),
               "arn:aws:dynamodb:us-east-1:000000000000:table/" + t]
    for u in unknown:
        assert_stream_not_found(streams, u, shard_id)


def test_stream_arn_of_another_region_or_account(streams, one_stream):
    t, arn, shard_id, _ = one_stream
    label = arn.rsplit("/", 1)[1]
    for other in (f"arn:aws:dynamodb:eu-west-1:000000000000:table/{t}/stream/{label}",
                  f"arn:aws:dynamodb:us-east-1:123456789012:table/{t}/stream/{label}",
                  f"arn:aws-cn:dynamodb:us-east-1:000000000000:table/{t}/stream/{label}"):
        assert_stream_not_found(streams, other, shard_id)


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
    shards = check_new_shards(full["Shards"])
    assert shard_id in [s["ShardId"] for s in shards]
    assert streams.ok("DescribeStream", {"StreamArn": arn, "Limit": 100})["StreamDescription"] \
        == full
    for i, shard in enumerate(shards):
        # Pages of one shard: LastEvaluatedShardId names the page's shard while more follow.
        body = {"StreamArn": arn, "Limit": 1}
        if i:
            body["ExclusiveStartShardId"] = shards[i - 1]["ShardId"]
        page = dict(full, Shards=[shard])
        if i < len(shards) - 1:
            page["LastEvaluatedShardId"] = shard["ShardId"]
        assert streams.ok("DescribeStream", body)["StreamDescription"] == page
        # After a shard come the shards listed after it (none after the last).
        out = streams.ok("DescribeStream", {"StreamArn": arn,
                                            "ExclusiveStartShardId": shard["ShardId"]})
        assert out["StreamDescription"] == dict(full, Shards=shards[i + 1:])
        # No shard of a new stream has children.
        out = streams.ok("DescribeStream", {"StreamArn": arn, "ShardFilter": {
            "Type": "CHILD_SHARDS", "ShardId": shard["ShardId"]}})
        assert out["StreamDescription"] == dict(full, Shards=[])


def test_sequence_number_required(streams, one_stream):
    _, arn, shard_id, _ = one_stream
    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                            "ShardIteratorType": kind})
        assert_validation(resp, f"A SequenceNumber is required for ShardIteratorType {kind}")


def test_sequence_number_outside_the_shard(api, streams, make_table, one_stream):
    t, arn, shard_id, records = one_stream
    shard = next(s for s in all_shards(streams, arn) if s["ShardId"] == shard_id)
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    # Numbers before the shard's start and after its last record, and text that is no
    # sequence number at all.
    before = str(int(start) - 1).rjust(len(start), "0")
    beyond = str(int(seq(records[-1])) + 1000)
    t2, arn2 = stream_table(make_table, api, "KEYS_ONLY")
    write_n(api, t2, 1)
    for bad in (before, beyond, "9" * 40, "0" * 21, "abcdefghijklmnopqrstu"):
        for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            resp = streams("GetShardIterator", {"StreamArn": arn, "ShardId": shard_id,
                                                "ShardIteratorType": kind, "SequenceNumber": bad})
            assert_validation(resp, f"Invalid SequenceNumber {bad} for ShardId {shard_id}")
    # This stream's records are older than the other stream's shard. On RADOS every
    # partition numbers its own records from the same start, so another stream's numbers
    # can lie in the shard's range there: those above its last record are refused.
    shard2 = shard_holding(streams, arn2)["ShardId"]
    last2 = int(seq(read_stream(streams, arn2, shard_id=shard2)[-1]))
    numbers = [seq(r) for r in records if not on_rados() or int(seq(r)) > last2]
    assert numbers, (records, last2)
    for bad in numbers:
        resp = streams("GetShardIterator", {"StreamArn": arn2, "ShardId": shard2,
                                            "ShardIteratorType": "AT_SEQUENCE_NUMBER",
                                            "SequenceNumber": bad})
        assert_validation(resp, f"Invalid SequenceNumber {bad} for ShardId {shard2}")


def test_invalid_shard_iterators(streams, one_stream):
    _, arn, shard_id, records = one_stream
    good = shard_iterator(streams, arn, shard_id=shard_id)
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


