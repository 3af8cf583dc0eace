"""Helpers for test_ttl.py: epoch values, polling with a deadline, reading a table's keys
and a table's whole stream."""

import math
import time

from kumo_testlib import create_table_args, unique_name, wait_table_active

DAY = 86400
FIVE_YEARS = 5 * 365 * DAY


def S(x):
    return {"S": str(x)}


def N(x):
    return {"N": str(x)}


def due_soon(min_delay=0.3):
    """Epoch seconds (float) between min_delay and min_delay + 1 s from now, 50 ms before a
    whole second: an item with this TTL is due soon, and a reaper that works at whole-second
    granularity (Kumo's schedule does) deletes it right after that, not a second later."""
    t = time.time() + min_delay
    due = math.floor(t) + 0.95
    return due if due >= t else due + 1


def wait_until(predicate, timeout=5.0, step=0.05, what="condition"):
    """Calls predicate() until it returns a truthy value (returned) or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} still false after {timeout}s (last value {value!r})")
        time.sleep(step)


def scan_all(api, table, index=None):
    """Every item of a table (or index), all pages, consistent reads on the table."""
    items, body = [], {"TableName": table}
    if index is not None:
        body["IndexName"] = index
    else:
        body["ConsistentRead"] = True
    while True:
        out = api.ok("Scan", body)
        items += out["Items"]
        if "LastEvaluatedKey" not in out:
            return items
        body["ExclusiveStartKey"] = out["LastEvaluatedKey"]


def present(api, table, attr="pk"):
    """The set of `attr` string values of the items of `table`."""
    return {next(iter(it[attr].values())) for it in scan_all(api, table)}


def get(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


def create_table(api, client, hash_key=("pk", "S"), range_key=None, ttl="exp", name=None,
                 **extra):
    """Creates a PAY_PER_REQUEST table, waits for ACTIVE and enables TTL on `ttl` (None:
    TTL stays disabled). Returns the name."""
    name = name or unique_name("ttl")
    resp = api("CreateTable", create_table_args(name, hash_key, range_key, **extra))
    assert resp.status == 200, resp
    wait_table_active(client, name)
    if ttl is not None:
        enable_ttl(api, name, ttl)
    return name


def enable_ttl(api, table, attr="exp", enabled=True):
    spec = {"Enabled": enabled, "AttributeName": attr}
    out = api.ok("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": spec})
    assert out == {"TimeToLiveSpecification": spec}
    return out


def batch_put(api, table, items):
    for i in range(0, len(items), 25):
        reqs = [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]
        out = api.ok("BatchWriteItem", {"RequestItems": {table: reqs}})
        assert out["UnprocessedItems"] == {}, out


def stream_records(streams, stream_arn):
    """All records currently in the (single-shard) stream, oldest first, through the boto3
    dynamodbstreams client."""
    shards = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]
    records = []
    for shard in shards:
        it = streams.get_shard_iterator(StreamArn=stream_arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        for _ in range(1000):
            out = streams.get_records(ShardIterator=it)
            records += out["Records"]
            it = out.get("NextShardIterator")
            if not out["Records"] or it is None:
                break
    return records
