"""Helpers for the Time to Live tests (test_ttl_*.py): epoch values, polling with a
deadline, reading a table's keys and a table's whole stream, UpdateTimeToLive /
DescribeTimeToLive shapes, and the fixtures of the reaper server (`ttl_server`, started with
`--ttl-interval 0.2`, one per test module, with the `_ttl_server_guard` that a module using it
imports as well)."""

import math
import time

import pytest

from kumo_testlib import (  # noqa: F401 (scan_all, wait_until: re-exported for the TTL tests)
    KumoServer,
    create_table_args,
    make_client,
    scan_all,
    unique_name,
    wait_table_active,
    wait_until,
)

DAY = 86400
FIVE_YEARS = 5 * 365 * DAY

INTERVAL = 0.2     # --ttl-interval of the reaper server
SETTLE = 0.6       # three reaper passes after a control item went
DEADLINE = 5.0     # upper bound for an expired item to disappear


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


def stream_records_by_shard(streams, stream_arn):
    """The records currently in each shard of the stream (one list per shard, each oldest
    first; a shard per partition of the table), through the boto3 dynamodbstreams client."""
    shards = streams.describe_stream(StreamArn=stream_arn)["StreamDescription"]["Shards"]
    by_shard = []
    for shard in shards:
        it = streams.get_shard_iterator(StreamArn=stream_arn, ShardId=shard["ShardId"],
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records = []
        for _ in range(1000):
            out = streams.get_records(ShardIterator=it)
            records += out["Records"]
            it = out.get("NextShardIterator")
            if not out["Records"] or it is None:
                break
        by_shard.append(records)
    return by_shard


def stream_records(streams, stream_arn):
    """All records currently in the stream, shard after shard (in order within each shard
    only), through the boto3 dynamodbstreams client."""
    return [r for records in stream_records_by_shard(streams, stream_arn) for r in records]


# --------------------------------------------------------------------------- TTL settings


def spec(enabled, attr):
    return {"Enabled": enabled, "AttributeName": attr}


def describe_ttl(api, table):
    return api.ok("DescribeTimeToLive", {"TableName": table})


ENABLED = lambda attr: {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED",  # noqa: E731
                                                  "AttributeName": attr}}
DISABLED = {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}


# --------------------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def ttl_server(kumo_bin, tmp_path_factory):
    """In-memory server whose reaper runs every 0.2 s. The small item-collection limit only
    concerns tables with an LSI (test_deletion_frees_item_collection_space in
    test_ttl_deletion.py)."""
    srv = KumoServer(kumo_bin, str(tmp_path_factory.mktemp("kumo-ttl")),
                     extra_args=["--ttl-interval", str(INTERVAL),
                                 "--item-collection-limit", "4000"])
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _ttl_server_guard(request):
    """Fails the test during which the reaper server died, and restarts it."""
    yield
    if "ttl_server" not in request.fixturenames:
        return
    srv = request.getfixturevalue("ttl_server")
    if not srv.alive():
        status, log, tail = srv.proc.returncode, srv.log_path, srv.log_tail()
        srv.start()
        pytest.fail(f"kumo (--ttl-interval {INTERVAL}) died during this test (exit status "
                    f"{status}); log {log}:\n{tail}", pytrace=False)


@pytest.fixture
def tapi(ttl_server):
    return ttl_server.api()


@pytest.fixture
def tddb(ttl_server):
    return ttl_server.client()


@pytest.fixture
def streams(ttl_server):
    return make_client(ttl_server.endpoint, service="dynamodbstreams")


@pytest.fixture
def ttl_table(tapi, tddb):
    """ttl_table(hash_key=("pk","S"), range_key=None, ttl="exp", **CreateTable args) → name
    of a table on the reaper server with TTL enabled on `ttl` (None: disabled)."""
    created = []

    def _make(*args, **kwargs):
        name = create_table(tapi, tddb, *args, **kwargs)
        created.append(name)
        return name

    yield _make
    for name in created:
        tapi("DeleteTable", {"TableName": name})

