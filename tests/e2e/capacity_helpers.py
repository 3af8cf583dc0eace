"""Shared pieces of the capacity end-to-end tests (tests/e2e/test_capacity_*.py).

Every module runs its own `kumo serve --in-memory --capacity enforce --clock manual
--admin-port N` plus its flags (`capacity_server`), drives time only through the admin's
POST /clock/advance, and checks DynamoDB's throttling answers to the letter (`assert_throttle`,
the texts T1..T7) and that ConsumedCapacity equals what the admin's meters counted
(`Meters`). Requests are kept few by using large items: a 400 KB write is 400 write units.
"""

import contextlib
import json
import re

import pytest

from kumo_testlib import (
    ACCOUNT,
    NS_DYNAMODB,
    REGION,
    Api,
    S,
    create_table_args,
    item_size,
    make_client,
    parse_metrics,
    start_capacity_server,
    unique_name,
    wait_table_active,
)

KB = 1024
MAX_ITEM = 400 * KB  # DynamoDB's largest item: one write of it is 400 write units

PTEE = NS_DYNAMODB + "ProvisionedThroughputExceededException"
THROTTLING = NS_DYNAMODB + "ThrottlingException"
REQUEST_LIMIT = NS_DYNAMODB + "RequestLimitExceeded"
CANCELED = NS_DYNAMODB + "TransactionCanceledException"
LIMIT_EXCEEDED = NS_DYNAMODB + "LimitExceededException"

# DynamoDB's throttling messages.
T1 = ("The level of configured provisioned throughput for the table was exceeded. Consider "
      "increasing your provisioning level with the UpdateTable API.")
T2 = ("The level of configured provisioned throughput for one or more global secondary indexes "
      "of the table was exceeded. Consider increasing your provisioning level for the "
      "under-provisioned global secondary indexes with the UpdateTable API")
T3 = "The level of configured provisioned throughput for the index was exceeded"
T4 = ("Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
      "scaling your table or index so please try again shortly. If exceptions persist, check if "
      "you have a hot key: "
      "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html")
T5 = ("Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB "
      "is automatically scaling your index so please try again shortly.")
T6 = "Throughput exceeds the maximum OnDemandThroughput configured on table or index"
T7 = ("Throughput exceeds the current throughput limit for your account. Please contact AWS "
      "Support at https://aws.amazon.com/support request a limit increase")


def arn(table, index=None):
    """The resource ARN a throttling reason names: the table's, or its index's."""
    base = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"
    return base if index is None else f"{base}/index/{index}"


# --------------------------------------------------------------------------- the admin


class Meters:
    """The admin's metrics for one table: metered units and throttle counts, read from
    /metrics by CloudWatch's names and dimensions. A series that does not exist reads 0."""

    def __init__(self, admin, table):
        self.admin = admin
        self.table = table

    def sample(self, name, index=None, **labels):
        labels["table_name"] = self.table
        if index is not None:
            labels["global_secondary_index_name"] = index
        value = self.admin.metric(name, **labels)
        return 0.0 if value is None else value

    def consumed(self, direction, index=None):
        return self.sample(f"dynamodb_consumed_{direction}_capacity_units_total", index)

    def throttle_events(self, direction, cause=None, index=None):
        middle = f"{cause}_" if cause else ""
        return self.sample(f"dynamodb_{direction}_{middle}throttle_events_total", index)

    def throttled_requests(self, operation):
        return self.sample("dynamodb_throttled_requests_total", operation=operation)

    def units(self):
        """(read, write) units metered on the table (LSIs included) and on each GSI:
        {None: (r, w), "gsi": (r, w)}."""
        out = {}
        for (name, lab), value in parse_metrics(self.admin.metrics()):
            if lab.get("table_name") != self.table or set(lab) - {
                    "table_name", "global_secondary_index_name"}:
                continue
            m = re.fullmatch(r"dynamodb_consumed_(read|write)_capacity_units_total", name)
            if m:
                r, w = out.get(lab.get("global_secondary_index_name"), (0.0, 0.0))
                out[lab.get("global_secondary_index_name")] = (
                    (r + value, w) if m.group(1) == "read" else (r, w + value))
        return out


def consumed_by_resource(cc, table):
    """ConsumedCapacity (an object or a list of them) with INDEXES → {None: table units (LSIs
    included), "gsi": units} for `table`."""
    entries = cc if isinstance(cc, list) else [cc]
    out = {}
    for e in entries:
        if e["TableName"] != table:
            continue
        table_units = e.get("Table", {}).get("CapacityUnits", 0.0)
        out[None] = out.get(None, 0.0) + table_units
        for lsi in e.get("LocalSecondaryIndexes", {}).values():
            out[None] += lsi["CapacityUnits"]
        for name, gsi in e.get("GlobalSecondaryIndexes", {}).items():
            out[name] = out.get(name, 0.0) + gsi["CapacityUnits"]
        total = table_units + sum(
            v["CapacityUnits"] for group in ("LocalSecondaryIndexes", "GlobalSecondaryIndexes")
            for v in e.get(group, {}).values())
        assert e["CapacityUnits"] == total, e
    return out


@contextlib.contextmanager
def metered(server, table, direction):
    """Yields a dict; on exit it holds the units metered on `table` (key None) and each of its
    GSIs in `direction` ("read"/"write") during the block. The clock moves one second after
    the block, so that the second's tallies are surely summed."""
    meters = Meters(server.admin, table)
    index = 0 if direction == "read" else 1
    server.admin.advance(1)
    before = meters.units()
    delta = {}
    yield delta
    server.admin.advance(1)
    after = meters.units()
    for res in set(before) | set(after):
        d = after.get(res, (0.0, 0.0))[index] - before.get(res, (0.0, 0.0))[index]
        if d:
            delta[res] = d


# --------------------------------------------------------------------------- servers


class CapacityServer:
    """A started capacity KumoServer with its raw api, its boto3 client (one attempt, no
    retries) and its admin."""

    def __init__(self, srv):
        self.srv = srv
        self._connect()

    def _connect(self):
        self.api = Api(self.srv.port)
        self.ddb = make_client(self.srv.endpoint)
        self.admin = self.srv.admin

    @property
    def endpoint(self):
        return self.srv.endpoint

    def advance(self, seconds):
        return self.admin.advance(seconds)

    def restart(self):
        """SIGTERM, then start again (same data directory, if any)."""
        assert self.srv.terminate() == 0
        self.srv.start()
        self._connect()

    def stop(self):
        self.srv.stop()

    # tables ----------------------------------------------------------------------------

    def create(self, hash_key=("pk", "S"), range_key=None, name=None, **extra):
        """CreateTable (on-demand unless billing is given) → its name."""
        name = name or unique_name("cap")
        resp = self.api("CreateTable", create_table_args(name, hash_key, range_key, **extra))
        assert resp.status == 200, f"CreateTable {name}: {resp!r}"
        wait_table_active(self.ddb, name)
        return name

    def provisioned(self, rcu, wcu, **extra):
        return self.create(ProvisionedThroughput={"ReadCapacityUnits": rcu,
                                                  "WriteCapacityUnits": wcu}, **extra)

    def put(self, table, item, **extra):
        return self.api("PutItem", dict({"TableName": table, "Item": item}, **extra))

    def get(self, table, key, consistent=True, **extra):
        return self.api("GetItem", dict({"TableName": table, "Key": key,
                                         "ConsistentRead": consistent}, **extra))

    def exists(self, table, key):
        out = self.api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
        return "Item" in out

    def describe(self, table):
        return self.api.ok("DescribeTable", {"TableName": table})["Table"]

    def partitions(self, table, index=None):
        return self.admin.partitions(table, index=index)


@contextlib.contextmanager
def capacity_server(kumo_bin, tmp_path_factory, flags=None, data_dir=None):
    """A private `--capacity enforce --clock manual --admin-port 0` server plus `flags` (a
    dict of `kumo serve` flags, which may override those): yields a CapacityServer and stops
    it after."""
    workdir = str(tmp_path_factory.mktemp("kumo-capacity"))
    try:
        srv = start_capacity_server(kumo_bin, workdir, flags, data_dir=data_dir)
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    cs = CapacityServer(srv)
    try:
        yield cs
    finally:
        cs.stop()


# --------------------------------------------------------------------------- items


def item(pk, size, key_name="pk", **attrs):
    """An item with partition key `pk` (and `attrs`), padded to exactly `size` bytes."""
    it = {key_name: S(pk), **attrs}
    base = item_size(it) + len("pad")
    assert size >= base, (size, base)
    it["pad"] = S("x" * (size - base))
    assert item_size(it) == size
    return it


def key(pk, key_name="pk"):
    return {key_name: S(pk)}


# --------------------------------------------------------------------------- assertions


def assert_throttle(resp, exception, reason, resource, message):
    """A throttling exception exactly as DynamoDB sends it: HTTP 400, the type, the message
    and one throttling reason naming the limit and the resource's ARN. ThrottlingException
    carries the reasons as `throttlingReasons` (the model's member, which the SDKs read); the
    others as `ThrottlingReasons`."""
    assert resp.status == 400, f"expected HTTP 400 {exception}, got {resp!r}"
    body = resp.json
    assert body.get("__type") == exception, f"expected {exception}, got {resp!r}"
    assert resp.message == message, (
        f"\nexpected message: {message!r}\n     got message: {resp.message!r}")
    reasons = [{"reason": reason, "resource": resource}]
    member = "throttlingReasons" if exception == THROTTLING else "ThrottlingReasons"
    assert body.get(member) == reasons, f"expected {member} {reasons}, got {body}"
    for other in ("throttlingReasons", "ThrottlingReasons"):
        if other in body:
            assert body[other] == reasons, body


def assert_cancelled(resp, reasons):
    """TransactionCanceledException with these (Code, Message or None) reasons, in order; the
    message lists the codes; a cancellation reason has no throttling reasons."""
    assert resp.status == 400, resp
    body = resp.json
    assert body.get("__type") == CANCELED, resp
    codes = ", ".join(code for code, _ in reasons)
    assert resp.message == ("Transaction cancelled, please refer cancellation reasons for "
                            f"specific reasons [{codes}]"), resp.message
    want = [{"Code": c} if m is None else {"Code": c, "Message": m} for c, m in reasons]
    assert body["CancellationReasons"] == want, body["CancellationReasons"]


def units(resp_json):
    """CapacityUnits of a single ConsumedCapacity object in a response."""
    return resp_json["ConsumedCapacity"]["CapacityUnits"]


def dumps(value):
    return json.dumps(value, sort_keys=True)
