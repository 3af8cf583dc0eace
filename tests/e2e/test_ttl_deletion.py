"""What a Time to Live deletion does: it removes the item's index
entries (the TTL attribute as an index key included) and updates the table's and indexes'
counts, frees item-collection space, and writes exactly one REMOVE stream record per expired
item with the service identity (under every view type; none when the stream is disabled).

Run on a private reaper server started with `--ttl-interval 0.2` (ttl_helpers.py)."""

import time

from kumo_testlib import assert_error
from ttl_helpers import (  # noqa: F401
    DEADLINE,
    N,
    S,
    _ttl_server_guard,
    due_soon,
    present,
    scan_all,
    stream_records_by_shard,
    streams,
    tapi,
    tddb,
    ttl_server,
    ttl_table,
    wait_until,
)

SERVICE_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def _index_stats(api, name):
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    stats = {"table": (t["ItemCount"], t["TableSizeBytes"])}
    for idx in t.get("LocalSecondaryIndexes", []) + t.get("GlobalSecondaryIndexes", []):
        stats[idx["IndexName"]] = (idx["ItemCount"], idx["IndexSizeBytes"])
    return stats


def test_deletion_removes_index_entries_and_updates_counts(tapi, ttl_table):
    keys = lambda *el: [{"AttributeName": a, "KeyType": t} for a, t in el]  # noqa: E731
    name = ttl_table(
        hash_key=("pk", "S"), range_key=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "lsk", "g")]
        + [{"AttributeName": "exp", "AttributeType": "N"}],
        LocalSecondaryIndexes=[{"IndexName": "byLsk", "KeySchema": keys(("pk", "HASH"),
                                                                        ("lsk", "RANGE")),
                                "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[
            {"IndexName": "byG", "KeySchema": keys(("g", "HASH")),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "byGKeys", "KeySchema": keys(("g", "HASH"), ("sk", "RANGE")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            # The TTL attribute itself as an index key.
            {"IndexName": "byExp", "KeySchema": keys(("exp", "HASH")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    now = int(time.time())
    permanent = [{"pk": S("p"), "sk": S(f"keep{i}"), "lsk": S(f"l{i}"), "g": S("G"),
                  "exp": N(now + 3600)} for i in range(3)]
    for it in permanent:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    baseline = _index_stats(tapi, name)
    assert baseline["table"][0] == 3 and baseline["byG"][0] == 3

    expiring = [{"pk": S("p"), "sk": S(f"go{i}"), "lsk": S(f"m{i}"), "g": S("G"),
                 "exp": N(now - 10 - i), "pad": S("x" * 50)} for i in range(4)]
    for it in expiring:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    wait_until(lambda: len(scan_all(tapi, name)) == 3, DEADLINE,
               what="the expired items deleted")

    want = sorted(it["sk"]["S"] for it in permanent)
    gsi = tapi.ok("Query", {"TableName": name, "IndexName": "byG",
                            "KeyConditionExpression": "g = :g",
                            "ExpressionAttributeValues": {":g": S("G")}})["Items"]
    assert sorted(it["sk"]["S"] for it in gsi) == want
    gsi_keys = tapi.ok("Query", {"TableName": name, "IndexName": "byGKeys",
                                 "KeyConditionExpression": "g = :g",
                                 "ExpressionAttributeValues": {":g": S("G")}})["Items"]
    assert [it["sk"]["S"] for it in gsi_keys] == want
    lsi = tapi.ok("Query", {"TableName": name, "IndexName": "byLsk",
                            "KeyConditionExpression": "pk = :p",
                            "ExpressionAttributeValues": {":p": S("p")},
                            "ConsistentRead": True})["Items"]
    assert sorted(it["sk"]["S"] for it in lsi) == want
    by_exp = tapi.ok("Query", {"TableName": name, "IndexName": "byExp",
                               "KeyConditionExpression": "exp = :e",
                               "ExpressionAttributeValues": {":e": N(now - 10)}})["Items"]
    assert by_exp == []
    for index in ("byG", "byGKeys", "byLsk", "byExp"):
        assert sorted(it["sk"]["S"] for it in scan_all(tapi, name, index)) == want, index
    assert _index_stats(tapi, name) == baseline


def test_deletion_frees_item_collection_space(tapi, ttl_table, tddb):
    """The reaper server has --item-collection-limit 4000: four items of ~1 KB fill a
    collection; once they expire the collection has room again."""
    name = ttl_table(
        hash_key=("pk", "S"), range_key=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "alt")],
        LocalSecondaryIndexes=[{"IndexName": "byAlt",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "alt", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    soon = N(f"{due_soon():.3f}")

    def put(sk, exp=None):
        item = {"pk": S("p"), "sk": S(sk), "alt": S(sk), "pad": S("x" * 1000)}
        if exp is not None:
            item["exp"] = exp
        return tapi("PutItem", {"TableName": name, "Item": item})

    written = 0
    for i in range(10):
        resp = put(f"old{i}", soon)
        if resp.status != 200:
            assert_error(resp, 400, "com.amazonaws.dynamodb.v20120810#"
                                    "ItemCollectionSizeLimitExceededException",
                         "Collection size exceeded.")
            break
        written += 1
    assert 1 <= written < 10
    wait_until(lambda: not scan_all(tapi, name), DEADLINE, what="the collection emptied")
    for i in range(written):
        resp = put(f"new{i}")
        assert resp.status == 200, resp


VIEW_TYPES = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]


def test_stream_records_of_ttl_deletions(tapi, ttl_table, streams):
    """Per view type: a user put and delete, a live item, then 10 items that expire. The
    stream holds exactly one REMOVE per expired item, with the service identity, and the
    user's REMOVE has no userIdentity."""
    tables = {}
    now = int(time.time())
    for view in VIEW_TYPES:
        name = ttl_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
        tables[view] = name
        tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("user"), "v": S("u")}})
        tapi.ok("DeleteItem", {"TableName": name, "Key": {"pk": S("user")}})
        tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("live"), "exp": N(now + 3600)}})
        for i in range(10):
            tapi.ok("PutItem", {"TableName": name,
                                "Item": {"pk": S(f"t{i}"), "exp": N(now - 10), "v": N(i)}})
    for name in tables.values():
        wait_until(lambda: present(tapi, name) == {"live"}, DEADLINE,
                   what=f"the expired items of {name} deleted")
    time.sleep(0.6)  # further reaper passes must not add records

    for view, name in tables.items():
        arn = tapi.ok("DescribeTable", {"TableName": name})["Table"]["LatestStreamArn"]
        by_shard = stream_records_by_shard(streams, arn)
        records = [r for own in by_shard for r in own]
        events = [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records]
        written = [("INSERT", "user"), ("REMOVE", "user"), ("INSERT", "live")] + [
            ("INSERT", f"t{i}") for i in range(10)]
        assert sorted(events) == sorted(written + [("REMOVE", f"t{i}") for i in range(10)]), \
            (view, events)
        # Records are ordered within a shard (a shard per partition): each shard holds its
        # part of the user's writes in the order they were made, and an expired item's
        # REMOVE after its INSERT. The reaper may delete t0 before t9 is written: only the
        # pairs are ordered.
        for own in by_shard:
            got = [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in own]
            assert [e for e in got if e in written] == [e for e in written if e in got], \
                (view, got)
            for i in range(10):
                if ("REMOVE", f"t{i}") in got:
                    assert ("INSERT", f"t{i}") in got, (view, got)
                    assert got.index(("INSERT", f"t{i}")) < got.index(("REMOVE", f"t{i}")), \
                        (view, got)
        ttl_removes = [r for r in records if r["eventName"] == "REMOVE"
                       and r["dynamodb"]["Keys"]["pk"]["S"] != "user"]
        assert len(ttl_removes) == 10, view
        for r in records:
            if r not in ttl_removes:
                assert "userIdentity" not in r, (view, r)
        for r in ttl_removes:
            assert r["userIdentity"] == SERVICE_IDENTITY, (view, r)
            d = r["dynamodb"]
            assert d["StreamViewType"] == view
            assert d["Keys"] == {"pk": {"S": d["Keys"]["pk"]["S"]}}
            assert "NewImage" not in d, (view, r)
            i = int(d["Keys"]["pk"]["S"][1:])
            if view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
                assert d["OldImage"] == {"pk": {"S": f"t{i}"}, "exp": {"N": str(now - 10)},
                                         "v": {"N": str(i)}}, (view, r)
            else:
                assert "OldImage" not in d, (view, r)


def test_ttl_deletion_without_stream_and_with_disabled_stream(tapi, ttl_table):
    name = ttl_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    tapi.ok("UpdateTable", {"TableName": name, "StreamSpecification": {"StreamEnabled": False}})
    past = N(int(time.time()) - 10)
    tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("a"), "exp": past}})
    wait_until(lambda: not present(tapi, name), DEADLINE, what="the expired item deleted")


