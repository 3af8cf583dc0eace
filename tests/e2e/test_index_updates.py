"""UpdateTable GlobalSecondaryIndexUpdates: creating a GSI with backfill, deleting one, index
throughput and the validation of the update list. With the other test_index_*.py modules this
covers secondary indexes."""

import time

import pytest

from index_helpers import (
    INVALID,
    N,
    S,
    defs,
    index,
    ks,
    tp,
    wait_gsi,
)
from kumo_testlib import (
    NS_DYNAMODB,
    assert_error,
    assert_validation,
    table_arn,
)

LIMIT_EXCEEDED = NS_DYNAMODB + "LimitExceededException"



def wait_gsi_gone(api, table, idx, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        t = api.ok("DescribeTable", {"TableName": table})["Table"]
        names = [g["IndexName"] for g in t.get("GlobalSecondaryIndexes", [])]
        if t["TableStatus"] == "ACTIVE" and idx not in names:
            return t
        assert time.monotonic() < deadline, f"index {idx} still present: {t!r}"
        time.sleep(0.05)


# =========================================================================== UpdateTable


def update_table(api, table, updates, attr_defs=None, **extra):
    body = {"TableName": table, "GlobalSecondaryIndexUpdates": updates}
    if attr_defs is not None:
        body["AttributeDefinitions"] = attr_defs
    body.update(extra)
    return api("UpdateTable", body)


def create_action(name, schema, ptype="ALL", nka=None, throughput=None):
    return {"Create": index(name, schema, ptype, nka, throughput)}


@pytest.fixture
def utable(api, make_table):
    name = make_table(("pk", "S"))
    items = [
        {"pk": S("1"), "a": S("x"), "b": N(3), "c": N(1), "v": S("one")},
        {"pk": S("2"), "a": S("x"), "b": N(-1), "c": N(1), "v": S("two")},
        {"pk": S("3"), "a": S("x"), "b": N(2), "v": S("three")},             # no c
        {"pk": S("4"), "a": S("y"), "b": N(0), "c": N(1)},
        {"pk": S("5"), "b": N(7), "c": N(1)},                                 # no a
        {"pk": S("6"), "a": N(5), "b": N(1), "c": N(1)},                     # a of another type
    ]
    for it in items:
        api.ok("PutItem", {"TableName": name, "Item": it})
    return name


def test_update_table_create_gsi_backfills(api, utable):
    resp = update_table(api, utable, [create_action("byab", ks("a", "c", "|", "b"))],
                        defs(a="S", b="N", c="N"))
    assert resp.status == 200, resp
    d = resp.json["TableDescription"]
    (g,) = [g for g in d["GlobalSecondaryIndexes"] if g["IndexName"] == "byab"]
    assert g["KeySchema"] == ks("a", "c", "|", "b")
    assert g["IndexStatus"] in ("CREATING", "ACTIVE")
    # Readable once ACTIVE (a backfilling index refuses reads), with the existing items in.
    g = wait_gsi(api, utable, "byab")
    assert g["ItemCount"] == 3
    assert g["IndexArn"] == table_arn(utable) + "/index/byab"
    assert "Backfilling" not in g
    r = api.ok("Query", {"TableName": utable, "IndexName": "byab",
                         "KeyConditionExpression": "a = :a AND c = :c",
                         "ExpressionAttributeValues": {":a": S("x"), ":c": N(1)}})
    assert [i["pk"]["S"] for i in r["Items"]] == ["2", "1"]
    assert r["Items"][0] == {"pk": S("2"), "a": S("x"), "b": N(-1), "c": N(1), "v": S("two")}
    # Later writes are maintained, and the new type constraints apply.
    api.ok("PutItem", {"TableName": utable, "Item": {"pk": S("7"), "a": S("x"), "b": N(0),
                                                     "c": N(1)}})
    r = api.ok("Query", {"TableName": utable, "IndexName": "byab",
                         "KeyConditionExpression": "a = :a AND c = :c",
                         "ExpressionAttributeValues": {":a": S("x"), ":c": N(1)}})
    assert [i["pk"]["S"] for i in r["Items"]] == ["2", "7", "1"]
    resp = api("PutItem", {"TableName": utable, "Item": {"pk": S("8"), "b": S("bad")}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key b Expected: N Actual: S "
                      "IndexName: byab")


def test_update_table_create_gsi_with_mismatched_existing_item(api, make_table):
    # An existing item whose component has another type is left out of the new index.
    name = make_table(("pk", "S"))
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("1"), "a": N(5)}})
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("2"), "a": S("s")}})
    resp = update_table(api, name, [create_action("bya", ks("a"), "KEYS_ONLY")], defs(a="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "bya")
    assert g["ItemCount"] == 1
    r = api.ok("Scan", {"TableName": name, "IndexName": "bya"})
    assert r["Items"] == [{"pk": S("2"), "a": S("s")}]


def test_update_table_create_gsi_missing_definitions(api, utable):
    resp = update_table(api, utable, [create_action("gx1", ks("a", "|", "b"))])
    assert_validation(resp, INVALID + "AttributeDefinitions is not specified for index: gx1")
    resp = update_table(api, utable, [create_action("gx1", ks("a", "|", "b"))], defs(a="S"))
    assert_validation(resp, INVALID + "AttributeDefinitions is not specified for index: gx1")
    t = api.ok("DescribeTable", {"TableName": utable})["Table"]
    assert "GlobalSecondaryIndexes" not in t or t["GlobalSecondaryIndexes"] == []


def test_update_table_create_existing_name(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [create_action("gx1", ks("a"))], defs(a="S"))
    assert_validation(resp, "Attempting to create an index which already exists")


def test_update_table_two_creates(api, utable):
    resp = update_table(api, utable, [create_action("gx1", ks("a")), create_action("gx2", ks("b"))],
                        defs(a="S", b="N"))
    assert_error(resp, 400, LIMIT_EXCEEDED,
                 "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                 "simultaneously per table")


def test_update_table_create_and_delete(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [create_action("gx2", ks("b")),
                                    {"Delete": {"IndexName": "gx1"}}], defs(b="N"))
    assert_error(resp, 400, LIMIT_EXCEEDED,
                 "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                 "simultaneously per table")


def test_update_table_gsi_update_element_without_action(api, utable):
    assert_validation(update_table(api, utable, [{}]),
                      INVALID + "One of GlobalSecondaryIndexUpdate.Update, "
                      "GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must "
                      "not be null")


def test_update_table_gsi_update_element_with_two_actions(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    upd = dict(create_action("gx2", ks("b")), Delete={"IndexName": "gx1"})
    assert_validation(update_table(api, name, [upd], defs(b="N")),
                      INVALID + "Only one global secondary index action is allowed per "
                      "GlobalSecondaryIndexUpdate object")


def test_update_table_same_index_twice(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"), throughput=tp())])
    resp = update_table(api, name, [
        {"Update": {"IndexName": "gx1", "ProvisionedThroughput": tp(6, 6)}},
        {"Update": {"IndexName": "gx1", "ProvisionedThroughput": tp(7, 7)}},
    ])
    assert_validation(resp, INVALID + "Only one global secondary index update per index is "
                      "allowed simultaneously. Index: gx1")


def test_update_table_gsi_throughput(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"), throughput=tp(5, 5))])
    resp = update_table(api, name, [{"Update": {"IndexName": "gx1",
                                                "ProvisionedThroughput": tp(9, 11)}}])
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert g["ProvisionedThroughput"]["WriteCapacityUnits"] == 11
    resp = update_table(api, name, [{"Update": {"IndexName": "gx1",
                                                "ProvisionedThroughput": tp(9, 11)}}])
    assert_validation(resp, message_prefix="The provisioned throughput for the index gx1 will not "
                      "change.")


def test_update_table_create_gsi_throughput_rules(api, make_table):
    name = make_table(("pk", "S"), ProvisionedThroughput=tp())
    resp = update_table(api, name, [create_action("gx1", ks("a"))], defs(a="S"))
    assert_validation(resp, INVALID + "ProvisionedThroughput must be specified for index: gx1")
    resp = update_table(api, name, [create_action("gx1", ks("a"), throughput=tp(2, 3))], defs(a="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ProvisionedThroughput"]["ReadCapacityUnits"] == 2


def test_update_table_delete_gsi(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S", b="N"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a", "|", "b")),
                                              index("keep", ks("a"), "KEYS_ONLY")])
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("1"), "a": S("x"), "b": N(1)}})
    assert_validation(api("PutItem", {"TableName": name,
                                      "Item": {"pk": S("2"), "a": S("x"), "b": S("text")}}),
                      INVALID + "Type mismatch for Index Key b Expected: N Actual: S IndexName: gx1")
    resp = update_table(api, name, [{"Delete": {"IndexName": "gx1"}}])
    assert resp.status == 200, resp
    t = wait_gsi_gone(api, name, "gx1")
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["keep"]
    assert_validation(api("Query", {"TableName": name, "IndexName": "gx1",
                                    "KeyConditionExpression": "a = :a",
                                    "ExpressionAttributeValues": {":a": S("x")}}),
                      "The table does not have the specified index: gx1")
    assert_validation(api("Scan", {"TableName": name, "IndexName": "gx1"}),
                      "The table does not have the specified index: gx1")
    # The type constraint imposed by the deleted index is gone; the remaining one holds.
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("2"), "a": S("x"), "b": S("text")}})
    assert_validation(api("PutItem", {"TableName": name, "Item": {"pk": S("3"), "a": N(1)}}),
                      INVALID + "Type mismatch for Index Key a Expected: S Actual: N "
                      "IndexName: keep")
    r = api.ok("Query", {"TableName": name, "IndexName": "keep", "KeyConditionExpression": "a = :a",
                         "ExpressionAttributeValues": {":a": S("x")}})
    assert sorted(i["pk"]["S"] for i in r["Items"]) == ["1", "2"]
    # The name can be used again.
    resp = update_table(api, name, [create_action("gx1", ks("b"))], defs(b="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ItemCount"] == 1


def test_update_table_delete_unknown_index(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [{"Delete": {"IndexName": "nope"}}])
    # [open] ValidationException (not-a-GSI text) or ResourceNotFoundException.
    assert resp.status == 400, resp
    assert resp.error_type in ("ValidationException", "ResourceNotFoundException"), resp
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["gx1"]


def test_update_table_create_beyond_twenty_gsis(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index(f"g{i:02d}", ks("a")) for i in range(20)])
    resp = update_table(api, name, [create_action("g20", ks("a"))], defs(a="S"))
    # [open] text; the type is LimitExceededException.
    assert_error(resp, 400, LIMIT_EXCEEDED)


def test_update_table_delete_lsi(api, make_table):
    name = make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=defs(pk="S", sk="S", a="S"),
                      LocalSecondaryIndexes=[index("lx1", ks("pk", "|", "a"))])
    assert_validation(update_table(api, name, [{"Delete": {"IndexName": "lx1"}}]),
                      "Cannot delete an index that is not a GlobalSecondaryIndex: lx1")


def test_update_table_update_lsi(api, make_table):
    name = make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=defs(pk="S", sk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      LocalSecondaryIndexes=[index("lx1", ks("pk", "|", "a"))])
    assert_validation(update_table(api, name, [{"Update": {"IndexName": "lx1",
                                                           "ProvisionedThroughput": tp(6, 6)}}]),
                      "Cannot update an index that is not a GlobalSecondaryIndex: lx1")


def test_update_table_create_via_boto3(ddb, make_table):
    name = make_table(("pk", "S"))
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "g": {"S": "G"}, "r": {"N": "2"}})
    ddb.update_table(TableName=name,
                     AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"},
                                           {"AttributeName": "r", "AttributeType": "N"}],
                     GlobalSecondaryIndexUpdates=[{"Create": {
                         "IndexName": "gsr", "KeySchema": ks("g", "|", "r"),
                         "Projection": {"ProjectionType": "ALL"}}}])
    deadline = time.monotonic() + 10
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE" and all(g["IndexStatus"] == "ACTIVE"
                                                for g in t.get("GlobalSecondaryIndexes", [])):
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = ddb.query(TableName=name, IndexName="gsr", KeyConditionExpression="g = :g AND r > :r",
                  ExpressionAttributeValues={":g": {"S": "G"}, ":r": {"N": "1"}})
    assert r["Items"] == [{"pk": {"S": "a"}, "g": {"S": "G"}, "r": {"N": "2"}}]
