"""Global secondary indexes have their own throughput, and a base-table write that changes an
index entry needs the index's capacity too: without it the write is refused, naming the index
and its ARN, and nothing is written (IndexWriteProvisionedThroughputExceeded, or
IndexWriteKeyRangeThroughputExceeded for a hot index partition); a write that touches no entry
is never held back. Index reads use the index's read capacity. For every operation the
ConsumedCapacity answered equals the units the admin's meters counted, per table and index."""

import pytest

from capacity_helpers import (
    KB,
    MAX_ITEM,
    PTEE,
    T2,
    T3,
    T5,
    THROTTLING,
    Meters,
    arn,
    assert_throttle,
    capacity_server,
    consumed_by_resource,
    item,
    key,
    metered,
)
from kumo_testlib import S


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"burst-seconds": 0}) as cs:
        yield cs


def gsi(name, hash_key, projection="ALL", **extra):
    return dict({"IndexName": name, "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}],
                 "Projection": {"ProjectionType": projection}}, **extra)


def defs(*names):
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def provisioned(rcu, wcu):
    return {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu}


def index_refusal(resp, table):
    assert_throttle(resp, PTEE, "IndexWriteProvisionedThroughputExceeded", arn(table, "by_g"), T2)


def test_an_index_without_write_capacity_holds_back_base_writes(srv):
    table = srv.create(AttributeDefinitions=defs("pk", "g"),
                       ProvisionedThroughput=provisioned(100, 100),
                       GlobalSecondaryIndexes=[gsi("by_g", "g", "KEYS_ONLY",
                                                   ProvisionedThroughput=provisioned(1, 1))])
    assert srv.put(table, item("a", KB, g=S("x"))).status == 200
    index_refusal(srv.put(table, item("b", KB, g=S("x"))), table)
    assert not srv.exists(table, key("b"))
    # Removing an entry is an index write too; changing an attribute outside it is not.
    index_refusal(srv.api("DeleteItem", {"TableName": table, "Key": key("a")}), table)
    assert srv.exists(table, key("a"))
    resp = srv.api("UpdateItem", {"TableName": table, "Key": key("a"),
                                  "UpdateExpression": "SET #o = :v",
                                  "ExpressionAttributeNames": {"#o": "other"},
                                  "ExpressionAttributeValues": {":v": S("y")}})
    assert resp.status == 200, resp
    assert srv.put(table, item("c", KB)).status == 200  # no index key: no index write
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("write", "provisioned_throughput", index="by_g") == 2
    assert meters.throttle_events("write", index="by_g") == 2
    assert meters.throttle_events("write") == 0
    assert meters.consumed("write", index="by_g") == 1.0
    assert meters.throttled_requests("PutItem") == 1
    assert meters.throttled_requests("DeleteItem") == 1
    assert srv.put(table, item("b", KB, g=S("x"))).status == 200


@pytest.mark.parametrize("mode", ["on-demand", "provisioned"])
def test_a_hot_index_key_holds_back_base_writes(srv, mode):
    """Three orders of one status fill the index partition of that status (1,000 write
    units); the table's partitions have room (the orders' keys lie in different ones)."""
    if mode == "on-demand":
        table = srv.create(AttributeDefinitions=defs("pk", "status"),
                           WarmThroughput={"WriteUnitsPerSecond": 40000},
                           GlobalSecondaryIndexes=[gsi("by_g", "status")])
    else:
        table = srv.create(AttributeDefinitions=defs("pk", "status"),
                           ProvisionedThroughput=provisioned(1, 40000),
                           GlobalSecondaryIndexes=[gsi("by_g", "status",
                                                       ProvisionedThroughput=provisioned(1, 4000))])
    for pk, size in (("order-1", MAX_ITEM), ("order-2", MAX_ITEM), ("order-3", 200 * KB)):
        assert srv.put(table, item(pk, size, status=S("PENDING"))).status == 200, pk
    resp = srv.put(table, item("order-4", KB, status=S("PENDING")))
    assert_throttle(resp, THROTTLING, "IndexWriteKeyRangeThroughputExceeded",
                    arn(table, "by_g"), T5)
    assert not srv.exists(table, key("order-4"))
    assert srv.put(table, item("order-5", KB, status=S("SHIPPED"))).status == 200
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("write", "key_range_throughput", index="by_g") == 1


def test_index_reads_use_the_index_read_capacity(srv):
    table = srv.create(AttributeDefinitions=defs("pk", "g"),
                       ProvisionedThroughput=provisioned(100, 100),
                       GlobalSecondaryIndexes=[gsi("by_g", "g",
                                                   ProvisionedThroughput=provisioned(1, 100))])
    srv.put(table, item("a", 100, g=S("x")))
    query = {"TableName": table, "IndexName": "by_g", "KeyConditionExpression": "g = :g",
             "ExpressionAttributeValues": {":g": S("x")}}
    for _ in range(2):  # half a unit each
        resp = srv.api("Query", query)
        assert resp.status == 200, resp
    refusal = ("IndexReadProvisionedThroughputExceeded", arn(table, "by_g"), T3)
    assert_throttle(srv.api("Query", query), PTEE, *refusal)
    assert_throttle(srv.api("Scan", {"TableName": table, "IndexName": "by_g"}), PTEE, *refusal)
    assert srv.get(table, key("a")).status == 200
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("read", "provisioned_throughput", index="by_g") == 2
    assert meters.throttle_events("read") == 0
    assert meters.throttled_requests("Query") == 1
    assert meters.throttled_requests("Scan") == 1


# --------------------------------------------------------------------------- metering

# Table pk/sk with GSI by_g (HASH g, ALL) and LSI by_l (pk, l, KEYS_ONLY). Items of 3.5 KB.
ORDER = 3584


@pytest.fixture(scope="module")
def orders(srv):
    table = srv.create(
        ("pk", "S"), ("sk", "S"), AttributeDefinitions=defs("pk", "sk", "g", "l"),
        GlobalSecondaryIndexes=[gsi("by_g", "g")],
        LocalSecondaryIndexes=[{"IndexName": "by_l",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    for i in range(4):
        srv.api.ok("PutItem", {"TableName": table, "Item": order(f"o{i}", g="new", l=f"l{i}")})
    return table


def order(sk, **attrs):
    return item("c1", ORDER, sk=S(sk), **{k: S(v) for k, v in attrs.items()})


def okey(sk):
    return {"pk": S("c1"), "sk": S(sk)}


def operations(table):
    """(name, direction, request) with INDEXES ConsumedCapacity; each changes or reads the
    orders of customer c1."""
    q = {"ReturnConsumedCapacity": "INDEXES"}
    return [
        ("PutItem", "write", dict(q, TableName=table, Item=order("p1", g="new", l="l9"))),
        ("PutItem", "write", dict(q, TableName=table, Item=order("p1", g="new", l="l9",
                                                              extra="1"))),
        ("UpdateItem", "write", dict(q, TableName=table, Key=okey("p1"),
                                     UpdateExpression="SET g = :g REMOVE l",
                                     ExpressionAttributeValues={":g": S("paid")})),
        ("DeleteItem", "write", dict(q, TableName=table, Key=okey("p1"))),
        ("DeleteItem", "write", dict(q, TableName=table, Key=okey("absent"))),
        ("GetItem", "read", dict(q, TableName=table, Key=okey("o1"), ConsistentRead=True)),
        ("GetItem", "read", dict(q, TableName=table, Key=okey("o1"))),
        ("Query", "read", dict(q, TableName=table, KeyConditionExpression="pk = :p",
                               ExpressionAttributeValues={":p": S("c1")},
                               ConsistentRead=True)),
        ("Query", "read", dict(q, TableName=table, IndexName="by_g",
                               KeyConditionExpression="g = :g",
                               ExpressionAttributeValues={":g": S("new")})),
        ("Query", "read", dict(q, TableName=table, IndexName="by_l",
                               KeyConditionExpression="pk = :p",
                               ExpressionAttributeValues={":p": S("c1")},
                               Select="ALL_ATTRIBUTES")),
        ("Scan", "read", dict(q, TableName=table, IndexName="by_g")),
        ("Scan", "read", dict(q, TableName=table, FilterExpression="g = :x",
                              ExpressionAttributeValues={":x": S("none")})),
        ("BatchWriteItem", "write", dict(q, RequestItems={table: [
            {"PutRequest": {"Item": order("b1", g="new")}},
            {"PutRequest": {"Item": order("b2", l="l8")}},
            {"DeleteRequest": {"Key": okey("o2")}}]})),
        ("BatchGetItem", "read", dict(q, RequestItems={table: {
            "Keys": [okey("o1"), okey("o2"), okey("absent")], "ConsistentRead": True}})),
        ("TransactWriteItems", "write", dict(q, TransactItems=[
            {"Put": {"TableName": table, "Item": order("t1", g="new", l="l7")}},
            {"Update": {"TableName": table, "Key": okey("o3"), "UpdateExpression": "SET g = :g",
                        "ExpressionAttributeValues": {":g": S("paid")}}},
            {"ConditionCheck": {"TableName": table, "Key": okey("o0"),
                                "ConditionExpression": "attribute_exists(pk)"}}])),
        ("TransactGetItems", "read", dict(q, TransactItems=[
            {"Get": {"TableName": table, "Key": okey("o1")}},
            {"Get": {"TableName": table, "Key": okey("absent")}}])),
    ]


OPERATIONS = operations("orders")


@pytest.mark.parametrize("index", range(len(OPERATIONS)),
                         ids=[f"{i}-{op[0]}" for i, op in enumerate(OPERATIONS)])
def test_consumed_capacity_equals_the_metered_units(srv, orders, index):
    name, direction, request = operations(orders)[index]
    with metered(srv, orders, direction) as delta:
        out = srv.api.ok(name, request)
    reported = {res: u for res, u in consumed_by_resource(out["ConsumedCapacity"],
                                                          orders).items() if u}
    assert reported, out
    assert delta == reported, (name, out["ConsumedCapacity"])


def test_conditional_failures_are_metered(srv, orders):
    """A failed condition consumes the existing item's size in write units, not reported in
    the error."""
    with metered(srv, orders, "write") as delta:
        resp = srv.api("PutItem", {"TableName": orders, "Item": order("o0", g="new"),
                                   "ConditionExpression": "attribute_not_exists(pk)"})
        assert resp.status == 400 and resp.error_type == "ConditionalCheckFailedException"
    assert delta == {None: 4.0}
