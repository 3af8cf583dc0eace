"""What the tests of several front ends on one RADOS namespace share: starting them (with
a fault point or a manual clock), calls through them, and waiting on what they leave in the
pool."""

import contextlib
import os
import signal
import threading
import time

import botocore.exceptions
import pytest

from kumo_testlib import KumoProcess
from rados_helpers import rados

@contextlib.contextmanager
def started(kumo_bin, tmp_path, count=3, fault=None, env=None, **kwargs):
    """`count` front ends on one namespace (the same data directory gives each server the
    same RADOS namespaces), started, the first with KUMO_RADOS_FAULT=`fault` and the
    variables of `env` if given; stopped at the end."""
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=tmp_path / "shared", **kwargs)
               for _ in range(count)]
    try:
        for n, server in enumerate(servers):
            if n == 0 and (fault or env):
                start_with_fault(server, fault, env)
            else:
                server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def front_ends(kumo_bin, tmp_path):
    with started(kumo_bin, tmp_path) as servers:
        yield servers


def create(client, name, **extra):
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], **extra)


def error_code(call):
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        call()
    return raised.value.response["Error"]["Code"]


def all_pages(call, **request):
    """The items of every page of a Scan or Query (`call`: the client's method)."""
    items = []
    while True:
        page = call(**request)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def run_all(targets):
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

def start_with_fault(server, fault, env=None):
    """Starts `server` with KUMO_RADOS_FAULT=`fault` (if given) and the variables of `env`
    (it inherits the environment)."""
    added = dict(env or {})
    if fault:
        added["KUMO_RADOS_FAULT"] = fault
    os.environ.update(added)
    try:
        server.start()
    finally:
        for name in added:
            del os.environ[name]


def held_by_a_pause(server, call):
    """Runs `call(client)` against `server` on a thread of its own until the server stops
    itself (a `...-pause` fault point, SIGSTOP) in that request; returns the thread and a
    list that gets what the client saw: "ok" or the exception's type name."""
    outcome = []

    def run():
        try:
            call(server.client())
            outcome.append("ok")
        except Exception as e:  # noqa: BLE001 - what the client saw
            outcome.append(type(e).__name__)

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: stopped(server), 10, "the front end stopped")
    return thread, outcome


def stopped(server):
    """Whether `server` is stopped (SIGSTOP, as a `...-pause` fault point stops it)."""
    return open(f"/proc/{server.proc.pid}/stat").read().split()[2] == "T"


def cancellation_codes(error):
    return [r["Code"] for r in error.response.get("CancellationReasons", [])]


def a_pair_no_moment_had(servers, call, who):
    """Tables "ytab" (made first: its namespace sorts first, and its partition is confirmed
    first) and "xtab", made through the second front end with x = "a" and y = "b". `call()`,
    a request through the first front end that reads x and y and confirms them, runs on a
    thread of its own; its front end stops after its first item read and again after it
    has confirmed its first partition. x is read as "a"; then both change, to "a2" and
    "b2", so y is read as "b2"; once y is confirmed, x goes back to "a" and y on to "b3".
    x = "a" and y = "b2" were never at once: x was "a2" all the while y was "b2".
    Returns what `call()` returned, or the error's code and cancellation reasons."""
    other = servers[1].client()
    create(other, "ytab")
    create(other, "xtab")

    def both(x, y):
        other.transact_write_items(TransactItems=[
            {"Put": {"TableName": "xtab", "Item": {"pk": {"S": "x"}, "v": {"S": x}}}},
            {"Put": {"TableName": "ytab", "Item": {"pk": {"S": "y"}, "v": {"S": y}}}}])

    both("a", "b")
    outcome = []

    def run():
        try:
            outcome.append(call())
        except botocore.exceptions.ClientError as e:
            outcome.append((e.response["Error"]["Code"], cancellation_codes(e)))

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: stopped(servers[0]), 10, f"the {who} stopped after its first read")
    both("a2", "b2")
    servers[0].proc.send_signal(signal.SIGCONT)
    wait_for(lambda: stopped(servers[0]), 10, f"the {who} stopped between confirmations")
    both("a", "b3")
    servers[0].proc.send_signal(signal.SIGCONT)
    thread.join(timeout=60)
    assert outcome, f"the {who} never answered"
    return outcome[0]


def lease_objects(prefix):
    return sorted(oid for oid in rados("-N", prefix, "ls").decode().split()
                  if oid.startswith("kumo.fe."))


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not within {seconds} s"
        time.sleep(0.2)


def gsi_keys(client, table, g):
    return sorted(e["pk"]["S"] for e in all_pages(
        client.query, TableName=table, IndexName="by-g", KeyConditionExpression="g = :g",
        ExpressionAttributeValues={":g": {"S": g}}))


def create_with_gsi(client, name):
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}])


def add_gsi(client, name):
    """Adds the GSI by-g (hash key g, all attributes) to table `name`: UpdateTable's answer."""
    return client.update_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}}])


def log_of(server):
    with open(server.log_path) as log:
        return log.read()


def retried(call, what, seconds=30):
    """Calls `call()` until it succeeds, for up to `seconds`; every failure before must be
    a retryable InternalServerError (HTTP 500). Returns the result and the failures."""
    failures = []
    deadline = time.monotonic() + seconds
    while True:
        try:
            return call(), failures
        except botocore.exceptions.ClientError as e:
            code = e.response["Error"]["Code"]
            status = e.response["ResponseMetadata"]["HTTPStatusCode"]
            assert (code, status) == ("InternalServerError", 500), (what, code, status)
            failures.append(code)
        assert time.monotonic() < deadline, f"{what} not within {seconds} s"
        time.sleep(0.2)
