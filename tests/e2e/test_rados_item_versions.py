"""Item versions on RADOS: a deleted item's version (its tombstone) is reclaimed once no
confirmation that read the item before its deletion can still run, and reads that a
transaction confirms (TransactGetItems, a TransactWriteItems of ConditionChecks only) are
confirmed by version, on the front ends' manual clocks and with fault points."""

import json
import signal
import threading
import time

import botocore.exceptions
import pytest

from kumo_testlib import on_rados
from rados_helpers import deployment_prefix, omap, rados
from front_end_helpers import (
    a_pair_no_moment_had,
    cancellation_codes,
    create,
    started,
    stopped,
    wait_for,
)

pytestmark = pytest.mark.skipif(not on_rados(), reason="item versions are kept on RADOS")

# A tombstone is 16 bytes of version and 8 of time; a live item's version has 16.
TOMBSTONE, VERSION = 24, 16
KEPT = 600  # seconds a tombstone is kept (kTombstoneKeptNs)


def clocked(kumo_bin, tmp_path, count, fault=None):
    """`count` front ends on manual clocks that start at one time, the first with `fault`."""
    return started(kumo_bin, tmp_path, count, fault=fault, admin_port=0,
                   flags={"clock": "manual", "clock-start": int(time.time())})


def versions(prefix):
    """{item version key: value} of every table partition of the deployment."""
    out = {}
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t") and oid.startswith("p"):
            out.update({k: v for k, v in omap(ns, oid).items() if len(k) > 4 and k[4] == 5})
    return out


def tombstones(prefix):
    return {k: v for k, v in versions(prefix).items() if len(v) == TOMBSTONE}


def key(pk):
    return {"pk": {"S": pk}}


def test_deleted_items_versions_are_reclaimed_after_their_bound(kumo_bin, tmp_path):
    with clocked(kumo_bin, tmp_path, 1) as servers:
        client = servers[0].client()
        prefix = deployment_prefix(servers[0])
        create(client, "tomb")
        deleted = 30
        for n in range(deleted):
            client.put_item(TableName="tomb", Item={**key(f"gone-{n}"), "v": {"N": str(n)}})
            client.delete_item(TableName="tomb", Key=key(f"gone-{n}"))
        client.put_item(TableName="tomb", Item={**key("kept"), "v": {"S": "live"}})
        client.put_item(TableName="tomb", Item={**key("back"), "v": {"S": "first"}})
        client.delete_item(TableName="tomb", Key=key("back"))
        assert len(tombstones(prefix)) == deleted + 1
        # Not yet old enough: a pass (one runs at each move of the clock) keeps them all.
        servers[0].admin.advance(KEPT - 1)
        # Re-created before its tombstone's bound: its new version is a live one.
        client.put_item(TableName="tomb", Item={**key("back"), "v": {"S": "again"}})
        before = versions(prefix)
        assert len(before) == deleted + 2
        assert sorted(len(v) for v in before.values()) == [VERSION] * 2 + [TOMBSTONE] * deleted
        servers[0].admin.advance(2)
        wait_for(lambda: not tombstones(prefix), 30, "the tombstones reclaimed")
        after = versions(prefix)
        # The live items' versions are untouched (the re-created one's included).
        assert after == {k: v for k, v in before.items() if len(v) == VERSION}
        assert client.get_item(TableName="tomb", Key=key("back"), ConsistentRead=True)[
            "Item"]["v"] == {"S": "again"}
        assert client.get_item(TableName="tomb", Key=key("kept"), ConsistentRead=True)[
            "Item"]["v"] == {"S": "live"}
        assert "Item" not in client.get_item(TableName="tomb", Key=key("gone-0"),
                                             ConsistentRead=True)
        # Deleted again: a tombstone once more, kept for its own bound.
        client.delete_item(TableName="tomb", Key=key("back"))
        assert len(tombstones(prefix)) == 1


def test_a_transact_get_held_past_the_bound_never_answers_a_torn_pair(kumo_bin, tmp_path):
    # x never existed when the reader reads it (no version). While the reader is held, x
    # is created with y's change, then deleted with y's next change, and its tombstone
    # reclaimed: confirmed by version alone, x would pass as absent with y's middle value,
    # a pair no moment had. The reader's own clock moved past the bound while it was held,
    # so it does not trust the confirmation and reads again. (Table "ytab" is made first:
    # its partition is confirmed first.)
    with clocked(kumo_bin, tmp_path, 2,
                 fault="item-read-pause,confirm-pause,confirm-clock") as servers:
        other = servers[1].client()
        prefix = deployment_prefix(servers[1])
        create(other, "ytab")
        create(other, "xtab")
        other.put_item(TableName="ytab", Item={**key("y"), "v": {"S": "b"}})
        outcome = []

        def read():
            try:
                out = servers[0].client().transact_get_items(TransactItems=[
                    {"Get": {"TableName": "xtab", "Key": key("x")}},
                    {"Get": {"TableName": "ytab", "Key": key("y")}}])
                outcome.append([r.get("Item", {}).get("v", {}).get("S")
                                for r in out["Responses"]])
            except botocore.exceptions.ClientError as e:
                outcome.append((e.response["Error"]["Code"], cancellation_codes(e)))

        reader = threading.Thread(target=read)
        reader.start()
        # x read as absent, with no version.
        wait_for(lambda: stopped(servers[0]), 10, "the reader stopped after its first read")
        other.transact_write_items(TransactItems=[
            {"Put": {"TableName": "xtab", "Item": {**key("x"), "v": {"S": "a"}}}},
            {"Put": {"TableName": "ytab", "Item": {**key("y"), "v": {"S": "b2"}}}}])
        servers[0].proc.send_signal(signal.SIGCONT)
        # y read as "b2" and confirmed; then x goes away again, and y on to "b3".
        wait_for(lambda: stopped(servers[0]), 10, "the reader stopped between confirmations")
        other.transact_write_items(TransactItems=[
            {"Delete": {"TableName": "xtab", "Key": key("x")}},
            {"Put": {"TableName": "ytab", "Item": {**key("y"), "v": {"S": "b3"}}}}])
        assert len(tombstones(prefix)) == 1
        servers[1].admin.advance(KEPT + 1)
        wait_for(lambda: not tombstones(prefix), 30, "x's tombstone reclaimed")
        # The reader goes on once its clock moved too (it was held that long).
        servers[0].proc.send_signal(signal.SIGCONT)
        servers[0].admin.advance(KEPT + 1)
        reader.join(timeout=60)
        assert outcome, "the reader never answered"
        # Read again, as it is now: never [None, "b2"] (x was "a" all the while y was
        # "b2").
        assert outcome[0] == [None, "b3"], outcome


def without_token(params, **kwargs):
    """Takes out the ClientRequestToken that boto3 adds to every TransactWriteItems."""
    body = json.loads(params["body"])
    body.pop("ClientRequestToken", None)
    params["body"] = json.dumps(body).encode()


def test_a_transaction_of_condition_checks_never_passes_a_pair_that_no_moment_had(
        kumo_bin, tmp_path):
    # Sent without a token (with one, the transaction locks and compares its items at
    # prepare). The checker's front end stops after its first item read, and again after
    # it has confirmed the first of its two partitions ("ytab", made first).
    with started(kumo_bin, tmp_path, 2, fault="check-read-pause,confirm-pause") as servers:
        checker_client = servers[0].client()
        checker_client.meta.events.register("before-call.dynamodb.TransactWriteItems",
                                            without_token)

        def check():
            checker_client.transact_write_items(TransactItems=[
                {"ConditionCheck": {"TableName": "xtab", "Key": key("x"),
                                    "ConditionExpression": "v = :v",
                                    "ExpressionAttributeValues": {":v": {"S": "a"}}}},
                {"ConditionCheck": {"TableName": "ytab", "Key": key("y"),
                                    "ConditionExpression": "v = :v",
                                    "ExpressionAttributeValues": {":v": {"S": "b2"}}}}])
            return "passed"

        # Both conditions hold on what the checker reads (x = "a", y = "b2").
        outcome = a_pair_no_moment_had(servers, check, "checker")
        # Checked again, as it is now: y's condition fails.
        assert outcome == ("TransactionCanceledException",
                           ["None", "ConditionalCheckFailed"]), outcome
