"""Secondary-index data models end to end: the order-dashboard model that DynamoDB documents
for multi-attribute keys, a GSI backfill of 10,000 items under concurrent writes, and a GSI
next to an LSI on one table. The GSI shapes are in
test_index_shapes.py."""

import base64
import http.client
import itertools
import random
import threading
import time
import warnings
from decimal import Decimal

import pytest

from index_helpers import (
    B,
    N,
    S,
    defs,
    index,
    ks,
    query_pages,
)
from index_model_helpers import BACKFILLING, KeepAliveApi, av, batch_put, kapi, typed  # noqa: F401
from kumo_testlib import (
    TARGET_PREFIX,
    assert_validation,
    create_table_args,
    normalize_item,
    on_rados,
    signed_request,
    table_arn,
    unique_name,
    wait_table_active,
)


# =========================================================================== (2) order dashboard

ORDERS = [
    # orderId, customerId, status, orderDate, amount
    ("o01", "CUST#1001", "PENDING", "2025-11-03", "120.5"),
    ("o02", "CUST#1001", "PENDING", "2025-11-10", "9.99"),
    ("o03", "CUST#1001", "PENDING", "2025-11-10", "45"),
    ("o04", "CUST#1001", "PENDING", "2025-11-10", "100"),
    ("o05", "CUST#1001", "SHIPPED", "2025-10-01", "75"),
    ("o06", "CUST#1001", "SHIPPED", "2025-10-15", "1500"),
    ("o07", "CUST#1001", "SHIPPED", "2025-11-01", "20"),
    ("o08", "CUST#1001", "DELIVERED", "2025-09-02", "60"),
    ("o09", "CUST#1001", "DELIVERED", "2025-09-30", "8.5"),
    ("o10", "CUST#1001", "DELIVERED", "2025-10-20", "250"),
    ("o11", "CUST#1001", "CANCELLED", "2025-08-15", "30"),
    ("o12", "CUST#1001", "DELIVERED", "2025-10-20", "-12.5"),
    ("o13", "CUST#1001", "DELIVERED", "2025-10-02", "1000"),
    ("o20", "CUST#1002", "PENDING", "2025-11-05", "10"),
    ("o21", "CUST#1002", "SHIPPED", "2025-11-02", "99"),
    ("o22", "CUST#1002", "DELIVERED", "2025-07-01", "15"),
    ("o23", "CUST#10010", "PENDING", "2025-11-03", "5"),
]
ORDER_KEY_ATTRS = {"orderId", "customerId", "status", "orderDate", "amount"}


def order_item(oid, cust, status, date, amount):
    return {"orderId": S(oid), "customerId": S(cust), "status": S(status),
            "orderDate": S(date), "amount": N(amount), "itemCount": N(len(oid)),
            "shipTo": S(f"address of {cust}")}


@pytest.fixture
def orders(kapi, make_table):
    """Orders table, GSIs CustomerOrders (customerId | status, orderDate, amount) and
    CustomerStatusOrders (customerId, status | orderDate, amount)."""
    table = make_table(
        ("orderId", "S"),
        AttributeDefinitions=defs(orderId="S", customerId="S", status="S", orderDate="S",
                                  amount="N"),
        GlobalSecondaryIndexes=[
            index("CustomerOrders", ks("customerId", "|", "status", "orderDate", "amount")),
            index("CustomerStatusOrders", ks("customerId", "status", "|", "orderDate", "amount")),
        ])
    rows = {o[0]: list(o) for o in ORDERS}
    items = [order_item(*o) for o in ORDERS]
    # Not on the dashboard: a draft without an amount and an order without a customer.
    items.append({"orderId": S("o30"), "customerId": S("CUST#1001"), "status": S("DRAFT"),
                  "orderDate": S("2025-11-11")})
    items.append({"orderId": S("o31"), "status": S("PENDING"), "orderDate": S("2025-11-11"),
                  "amount": N(1)})
    batch_put(kapi, table, items)
    return table, rows


def order_sort_key(row):
    _, _, status, date, amount = row
    return (status.encode(), date.encode(), Decimal(amount))


def orders_where(rows, pred):
    sel = [r for r in rows.values() if pred(*r)]
    return [r[0] for r in sorted(sel, key=order_sort_key)]


def oquery(api, table, idx, kce, values, **extra):
    body = {"TableName": table, "IndexName": idx, "KeyConditionExpression": kce,
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": values}
    if "#s" not in kce:
        del body["ExpressionAttributeNames"]
    body.update(extra)
    items, _ = query_pages(api, body)
    return [i["orderId"]["S"] for i in items]


C1 = {":c": S("CUST#1001")}


def test_orders_all_orders_of_a_customer(kapi, orders):
    table, rows = orders
    want = orders_where(rows, lambda o, c, s, d, a: c == "CUST#1001")
    assert want[0] == "o11" and want[-1] == "o07"    # CANCELLED first, SHIPPED last
    assert oquery(kapi, table, "CustomerOrders", "customerId = :c", C1) == want
    assert oquery(kapi, table, "CustomerOrders", "customerId = :c", C1,
                  ScanIndexForward=False) == list(reversed(want))
    r = kapi.ok("Query", {"TableName": table, "IndexName": "CustomerOrders",
                          "KeyConditionExpression": "customerId = :c",
                          "ExpressionAttributeValues": C1})
    assert normalize_item(r["Items"][0]) == normalize_item(order_item(*rows["o11"]))
    # The draft (no amount) is not in the index; CUST#10010 is another partition.
    assert "o30" not in want and "o23" not in want


def test_orders_customer_and_status(kapi, orders):
    table, rows = orders
    want = orders_where(rows, lambda o, c, s, d, a: c == "CUST#1001" and s == "PENDING")
    # Same date: ordered by amount numerically (9.99 < 45 < 100).
    assert want == ["o01", "o02", "o03", "o04"]
    assert oquery(kapi, table, "CustomerOrders", "customerId = :c AND #s = :s",
                  dict(C1, **{":s": S("PENDING")})) == want
    # Clause order does not matter.
    assert oquery(kapi, table, "CustomerOrders", "#s = :s AND customerId = :c",
                  dict(C1, **{":s": S("PENDING")})) == want
    r = kapi.ok("Query", {"TableName": table, "IndexName": "CustomerOrders",
                          "KeyConditionExpression": "customerId = :c AND #s = :s",
                          "ExpressionAttributeNames": {"#s": "status"},
                          "ExpressionAttributeValues": dict(C1, **{":s": S("DELIVERED")}),
                          "Select": "COUNT"})
    assert r["Count"] == 5 and "Items" not in r


def test_orders_customer_status_date_range(kapi, orders):
    table, rows = orders
    vals = dict(C1, **{":s": S("DELIVERED"), ":d1": S("2025-09-01"), ":d2": S("2025-09-30")})
    got = oquery(kapi, table, "CustomerOrders",
                 "customerId = :c AND #s = :s AND orderDate BETWEEN :d1 AND :d2", vals)
    assert got == ["o08", "o09"]
    vals = dict(C1, **{":s": S("DELIVERED"), ":m": S("2025-10")})
    got = oquery(kapi, table, "CustomerOrders",
                 "customerId = :c AND #s = :s AND begins_with(orderDate, :m)", vals)
    assert got == ["o13", "o12", "o10"]     # 10-02, then 10-20 by amount (-12.5 < 250)
    vals = dict(C1, **{":s": S("SHIPPED"), ":d": S("2025-10-15")})
    got = oquery(kapi, table, "CustomerOrders",
                 "customerId = :c AND #s = :s AND orderDate >= :d", vals)
    assert got == ["o06", "o07"]


def test_orders_customer_status_date_amount(kapi, orders):
    table, rows = orders
    vals = dict(C1, **{":s": S("PENDING"), ":d": S("2025-11-10"), ":x": N(40)})
    kce = "customerId = :c AND #s = :s AND orderDate = :d AND amount > :x"
    assert oquery(kapi, table, "CustomerOrders", kce, vals) == ["o03", "o04"]
    assert oquery(kapi, table, "CustomerOrders", kce, vals, ScanIndexForward=False) == [
        "o04", "o03"]
    vals[":x"] = N("9.99")
    assert oquery(kapi, table, "CustomerOrders",
                  "amount >= :x AND orderDate = :d AND #s = :s AND customerId = :c",
                  vals) == ["o02", "o03", "o04"]
    vals = dict(C1, **{":s": S("DELIVERED"), ":d": S("2025-10-20"), ":lo": N(-20), ":hi": N(0)})
    assert oquery(kapi, table, "CustomerOrders",
                  "customerId = :c AND #s = :s AND orderDate = :d AND amount BETWEEN :lo AND :hi",
                  vals) == ["o12"]


def test_orders_status_partition_variant(kapi, orders):
    table, rows = orders
    idx = "CustomerStatusOrders"
    for status in ("PENDING", "SHIPPED", "DELIVERED", "CANCELLED"):
        want = orders_where(rows, lambda o, c, s, d, a: c == "CUST#1001" and s == status)
        assert oquery(kapi, table, idx, "customerId = :c AND #s = :s",
                      dict(C1, **{":s": S(status)})) == want
    assert oquery(kapi, table, idx, "customerId = :c AND #s = :s",
                  {":c": S("CUST#1002"), ":s": S("PENDING")}) == ["o20"]
    assert oquery(kapi, table, idx, "customerId = :c AND #s = :s",
                  dict(C1, **{":s": S("DRAFT")})) == []
    vals = dict(C1, **{":s": S("PENDING"), ":d": S("2025-11-05")})
    assert oquery(kapi, table, idx, "customerId = :c AND #s = :s AND orderDate >= :d",
                  vals) == ["o02", "o03", "o04"]
    vals = dict(C1, **{":s": S("PENDING"), ":d": S("2025-11-10"), ":x": N(50)})
    assert oquery(kapi, table, idx,
                  "customerId = :c AND #s = :s AND orderDate = :d AND amount < :x",
                  vals) == ["o02", "o03"]
    vals = dict(C1, **{":s": S("DELIVERED"), ":d1": S("2025-09-15"), ":d2": S("2025-10-20")})
    assert oquery(kapi, table, idx,
                  "orderDate BETWEEN :d1 AND :d2 AND customerId = :c AND #s = :s",
                  vals) == ["o09", "o13", "o12", "o10"]
    # Both HASH components are needed.
    resp = kapi("Query", {"TableName": table, "IndexName": idx,
                          "KeyConditionExpression": "customerId = :c",
                          "ExpressionAttributeValues": C1})
    assert_validation(resp)
    # Every HASH component needs an `=` condition. Exact wording open: it names HASH and
    # equality.
    assert "HASH" in resp.message and "equality" in resp.message, resp.message


def test_orders_latest_first(kapi, orders):
    table, _ = orders
    for idx, kce in (("CustomerStatusOrders", "customerId = :c AND #s = :s"),
                     ("CustomerOrders", "customerId = :c AND #s = :s")):
        vals = dict(C1, **{":s": S("SHIPPED")})
        assert oquery(kapi, table, idx, kce, vals, ScanIndexForward=False) == [
            "o07", "o06", "o05"]
        r = kapi.ok("Query", {"TableName": table, "IndexName": idx, "KeyConditionExpression": kce,
                              "ExpressionAttributeNames": {"#s": "status"},
                              "ExpressionAttributeValues": vals, "ScanIndexForward": False,
                              "Limit": 1})
        assert [i["orderId"]["S"] for i in r["Items"]] == ["o07"]
        assert r["LastEvaluatedKey"] == {k: r["Items"][0][k] for k in ORDER_KEY_ATTRS}


@pytest.mark.parametrize("idx, kce, values", [
    ("CustomerOrders", "customerId = :c", C1),
    ("CustomerStatusOrders", "customerId = :c AND #s = :s", dict(C1, **{":s": S("DELIVERED")})),
])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("limit", [1, 2, 5])
def test_orders_pagination(kapi, orders, idx, kce, values, forward, limit):
    table, rows = orders
    status = values.get(":s", {}).get("S")
    want = orders_where(rows, lambda o, c, s, d, a: c == "CUST#1001" and status in (None, s))
    if not forward:
        want.reverse()
    body = {"TableName": table, "IndexName": idx, "KeyConditionExpression": kce,
            "ExpressionAttributeValues": values, "ScanIndexForward": forward}
    if "#s" in kce:
        body["ExpressionAttributeNames"] = {"#s": "status"}
    items, pages = query_pages(kapi, body, limit=limit)
    assert [i["orderId"]["S"] for i in items] == want
    for p in pages[:-1]:
        assert len(p["Items"]) == limit
        assert p["LastEvaluatedKey"] == {k: p["Items"][-1][k] for k in ORDER_KEY_ATTRS}
    assert "LastEvaluatedKey" not in pages[-1]


def test_orders_status_change_moves_entry(kapi, orders):
    table, rows = orders
    r = kapi.ok("UpdateItem", {"TableName": table, "Key": {"orderId": S("o02")},
                               "UpdateExpression": "SET #s = :s",
                               "ExpressionAttributeNames": {"#s": "status"},
                               "ExpressionAttributeValues": {":s": S("SHIPPED")},
                               "ReturnValues": "ALL_NEW"})
    assert r["Attributes"]["status"] == S("SHIPPED")
    rows["o02"][2] = "SHIPPED"
    want_all = orders_where(rows, lambda o, c, s, d, a: c == "CUST#1001")
    assert oquery(kapi, table, "CustomerOrders", "customerId = :c", C1) == want_all
    pend = dict(C1, **{":s": S("PENDING")})
    ship = dict(C1, **{":s": S("SHIPPED")})
    for idx in ("CustomerOrders", "CustomerStatusOrders"):
        assert oquery(kapi, table, idx, "customerId = :c AND #s = :s", pend) == [
            "o01", "o03", "o04"]
        assert oquery(kapi, table, idx, "customerId = :c AND #s = :s", ship) == [
            "o05", "o06", "o07", "o02"]
        assert oquery(kapi, table, idx, "customerId = :c AND #s = :s", ship,
                      ScanIndexForward=False)[0] == "o02"
    # A later amount correction re-sorts it within its date.
    kapi.ok("UpdateItem", {"TableName": table, "Key": {"orderId": S("o03")},
                           "UpdateExpression": "SET amount = :a",
                           "ExpressionAttributeValues": {":a": N(1000)}})
    vals = dict(C1, **{":s": S("PENDING"), ":d": S("2025-11-10")})
    assert oquery(kapi, table, "CustomerStatusOrders",
                  "customerId = :c AND #s = :s AND orderDate = :d", vals) == ["o04", "o03"]
    # Completing the draft puts it on the dashboard.
    kapi.ok("UpdateItem", {"TableName": table, "Key": {"orderId": S("o30")},
                           "UpdateExpression": "SET amount = :a, #s = :s",
                           "ExpressionAttributeNames": {"#s": "status"},
                           "ExpressionAttributeValues": {":a": N(5), ":s": S("PENDING")}})
    assert oquery(kapi, table, "CustomerStatusOrders", "customerId = :c AND #s = :s", pend) == [
        "o01", "o04", "o03", "o30"]


# =========================================================================== (3) backfill

# On RADOS fewer: each item backfilled costs about six round trips to the cluster, one
# after the other (its read, the entry's check, the item's check, the write and its
# entry's op): about 31 items a second on this 2-core machine with the cluster on it.
BF_ITEMS = 3_000 if on_rados() else 10_000
# Seconds the backfill may take: a bound against a stuck backfill, not a DynamoDB promise
# (DynamoDB's backfills take minutes to hours).
BF_DEADLINE = 120 if on_rados() else 45
BF_INDEX = "ByGroup"
BF_BAD_TYPE = 13          # items i % 13 == 0 carry tag as N (not indexable, never touched)


def bf_item(pk, i, rng):
    it = {"pk": S(pk), "v": N(i), "pad": S("p" * 60)}
    if i % 10:
        it["grp"] = S(f"g{i % 40:02d}")
    it["score"] = N((i * 7919) % 1000 - 500)
    if i % BF_BAD_TYPE == 0:
        it["tag"] = N(i)
    elif i % 7:
        it["tag"] = S(rng.choice(["x", "y", "z", "xx", "Y"]))
    return it


def bf_entry(item):
    """The ByGroup index entry of a table item (sparse rule), or None."""
    for name, t in (("grp", "S"), ("score", "N"), ("tag", "S")):
        if t not in item.get(name, {}):
            return None
    proj = {k: item[k] for k in ("pk", "grp", "score", "tag", "v") if k in item}
    return normalize_item(proj)


def freeze(entry):
    return tuple(sorted((k, repr(v)) for k, v in entry.items()))


def bf_writer(port, wid, stop, stats, errors):
    rng = random.Random(1000 + wid)
    api = KeepAliveApi(port)
    seq = 0
    try:
        while not stop.is_set():
            seq += 1
            roll = rng.random()
            # Existing keys, skipping those whose tag has the wrong type.
            i = rng.randrange(BF_ITEMS)
            if i % BF_BAD_TYPE == 0:
                i += 1
            key = {"pk": S(f"k{i:05d}")}
            if roll < 0.30:
                n = 100_000 + wid * 100_000 + seq
                body = ("PutItem", {"TableName": stats["table"],
                                    "Item": bf_item(f"n{wid}-{seq:06d}", n, rng)})
                if n % BF_BAD_TYPE == 0:
                    body[1]["Item"]["tag"] = S("t")
            elif roll < 0.55:
                body = ("UpdateItem", {"TableName": stats["table"], "Key": key,
                                       "UpdateExpression": "SET grp = :g, score = :s",
                                       "ExpressionAttributeValues": {
                                           ":g": S(f"g{rng.randrange(40):02d}"),
                                           ":s": N(rng.randrange(-600, 600))}})
            elif roll < 0.65:
                body = ("UpdateItem", {"TableName": stats["table"], "Key": key,
                                       "UpdateExpression": "REMOVE tag"})
            elif roll < 0.75:
                body = ("UpdateItem", {"TableName": stats["table"], "Key": key,
                                       "UpdateExpression": "SET tag = :t",
                                       "ExpressionAttributeValues": {
                                           ":t": S(rng.choice(["x", "w", "zz"]))}})
            elif roll < 0.85:
                body = ("UpdateItem", {"TableName": stats["table"], "Key": key,
                                       "UpdateExpression": "SET v = :v",
                                       "ExpressionAttributeValues": {":v": N(-seq)}})
            else:
                body = ("DeleteItem", {"TableName": stats["table"], "Key": key})
            resp = api(*body)
            if resp.status != 200:
                errors.append(f"{body[0]} {body[1]!r}: {resp!r}")
                return
            with stats["lock"]:
                stats["writes"] += 1
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(f"writer {wid}: {e!r}")
    finally:
        api.close()


def bf_loader(port, chunks, errors):
    api = KeepAliveApi(port)
    try:
        for table, items in chunks:
            batch_put(api, table, items)
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(repr(e))
    finally:
        api.close()


def test_gsi_backfill_under_concurrent_writes(server, kapi, make_table):
    t0 = time.monotonic()
    table = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S"))
    rng = random.Random(99)
    items = [bf_item(f"k{i:05d}", i, rng) for i in range(BF_ITEMS)]
    chunks = [(table, items[i:i + 25]) for i in range(0, BF_ITEMS, 25)]
    errors = []
    loaders = [threading.Thread(target=bf_loader, args=(server.port, chunks[w::8], errors))
               for w in range(8)]
    for th in loaders:
        th.start()
    for th in loaders:
        th.join()
    assert not errors, errors
    load_s = time.monotonic() - t0
    assert kapi.ok("Scan", {"TableName": table, "Select": "COUNT"})["Count"] > 0

    stats = {"table": table, "writes": 0, "lock": threading.Lock()}
    stop = threading.Event()
    writers = [threading.Thread(target=bf_writer, args=(server.port, w, stop, stats, errors))
               for w in range(4)]
    for th in writers:
        th.start()
    try:
        t_create = time.monotonic()
        resp = kapi("UpdateTable", {
            "TableName": table,
            "AttributeDefinitions": defs(grp="S", score="N", tag="S"),
            "GlobalSecondaryIndexUpdates": [{"Create": index(
                BF_INDEX, ks("grp", "|", "score", "tag"), "INCLUDE", ["v"])}]})
        assert resp.status == 200, resp
        with stats["lock"]:
            writes_at_create = stats["writes"]
        (g,) = [g for g in resp.json["TableDescription"]["GlobalSecondaryIndexes"]
                if g["IndexName"] == BF_INDEX]
        assert g["IndexStatus"] in ("CREATING", "ACTIVE"), g
        status_in_response = g["IndexStatus"]

        observed_creating = observed_backfilling = False
        backfill_query_checked = False
        describes = 0
        while True:
            d = kapi.ok("DescribeTable", {"TableName": table})["Table"]
            describes += 1
            (g,) = [g for g in d["GlobalSecondaryIndexes"] if g["IndexName"] == BF_INDEX]
            if g["IndexStatus"] == "ACTIVE":
                t_active = time.monotonic()
                assert "Backfilling" not in g or g["Backfilling"] is False, g
                break
            assert g["IndexStatus"] == "CREATING", g
            observed_creating = True
            observed_backfilling |= g.get("Backfilling") is True
            if not backfill_query_checked:
                q = kapi("Query", {"TableName": table, "IndexName": BF_INDEX,
                                   "KeyConditionExpression": "grp = :g",
                                   "ExpressionAttributeValues": {":g": S("g01")}})
                if q.status == 200:
                    # Only acceptable if the index became ACTIVE in between.
                    d2 = kapi.ok("DescribeTable", {"TableName": table})["Table"]
                    (g2,) = [x for x in d2["GlobalSecondaryIndexes"]
                             if x["IndexName"] == BF_INDEX]
                    assert g2["IndexStatus"] == "ACTIVE", (
                        f"Query on a CREATING index succeeded: {q!r}")
                else:
                    assert_validation(q, BACKFILLING + BF_INDEX)
                    backfill_query_checked = True
            assert time.monotonic() - t_create < BF_DEADLINE, (
                f"index not ACTIVE after {BF_DEADLINE} s: {g!r}")
            time.sleep(0.01)
        with stats["lock"]:
            writes_during = stats["writes"] - writes_at_create
    finally:
        stop.set()
        for th in writers:
            th.join()
    assert not errors, errors[:5]

    active_s = t_active - t_create
    summary = (f"backfill: {BF_ITEMS} items loaded in {load_s:.1f}s; {writes_during} writes "
               f"completed between UpdateTable and ACTIVE ({stats['writes']} in total); "
               f"UpdateTable answered {status_in_response}; "
               f"CREATING observed: {observed_creating} (Backfilling true: "
               f"{observed_backfilling}, {describes} DescribeTable calls); ACTIVE after "
               f"{active_s:.2f}s")
    print(summary)
    if observed_creating:
        assert observed_backfilling, "CREATING was reported without Backfilling: true"
        assert backfill_query_checked, "no Query on the CREATING index was answered with the error"
    else:
        warnings.warn("the backfill finished before the first DescribeTable; CREATING and "
                      "Backfilling were not observed. " + summary)

    # The index matches the table exactly.
    table_items, _ = query_pages(kapi, {"op": "Scan", "TableName": table})
    expected = {}
    for it in table_items:
        e = bf_entry(it)
        if e is not None:
            expected[freeze(e)] = e
    index_items, pages = query_pages(kapi, {"op": "Scan", "TableName": table,
                                            "IndexName": BF_INDEX})
    got = [freeze(normalize_item(i)) for i in index_items]
    assert len(got) == len(set(got)), "duplicate index entries in the index scan"
    missing = set(expected) - set(got)
    extra = set(got) - set(expected)
    assert not missing and not extra, (
        f"index differs from the table: {len(missing)} missing, e.g. "
        f"{[expected[k] for k in list(missing)[:3]]}; {len(extra)} extra, e.g. "
        f"{list(extra)[:3]}")
    assert len(expected) > BF_ITEMS // 2
    d = kapi.ok("DescribeTable", {"TableName": table})["Table"]
    (g,) = [g for g in d["GlobalSecondaryIndexes"] if g["IndexName"] == BF_INDEX]
    assert g["ItemCount"] == len(expected)
    assert d["ItemCount"] == len(table_items)

    # Queries on the finished index: a group in (score, tag) order.
    for grp in ("g01", "g17"):
        r, _ = query_pages(kapi, {"TableName": table, "IndexName": BF_INDEX,
                                  "KeyConditionExpression": "grp = :g",
                                  "ExpressionAttributeValues": {":g": S(grp)}})
        keys = [(Decimal(i["score"]["N"]), i["tag"]["S"].encode()) for i in r]
        assert keys == sorted(keys)
        assert {i["pk"]["S"] for i in r} == {e["pk"][1] for e in expected.values()
                                             if e["grp"] == ("S", grp)}
    assert time.monotonic() - t0 < 90


# =========================================================================== (4) GSI + LSI


@pytest.fixture
def forum(kapi, make_table):
    """Threads: pk forum / sk subject; LSI ByLastPost (forum | lastPost) ALL; GSI ByAuthor
    (author | lastPost) INCLUDE [replies]."""
    return make_table(
        ("forum", "S"), ("subject", "S"),
        AttributeDefinitions=defs(forum="S", subject="S", lastPost="S", author="S"),
        LocalSecondaryIndexes=[index("ByLastPost", ks("forum", "|", "lastPost"))],
        GlobalSecondaryIndexes=[index("ByAuthor", ks("author", "|", "lastPost"), "INCLUDE",
                                      ["replies"])])


def thread(forum_name, subject, last=None, author=None, replies=0, body="..."):
    it = {"forum": S(forum_name), "subject": S(subject), "replies": N(replies), "body": S(body)}
    if last is not None:
        it["lastPost"] = S(last)
    if author is not None:
        it["author"] = S(author)
    return it


def lsi_subjects(api, table, forum_name, forward=True, consistent=False):
    items, _ = query_pages(api, {"TableName": table, "IndexName": "ByLastPost",
                                 "KeyConditionExpression": "forum = :f",
                                 "ExpressionAttributeValues": {":f": S(forum_name)},
                                 "ScanIndexForward": forward, "ConsistentRead": consistent})
    return [i["subject"]["S"] for i in items]


def gsi_subjects(api, table, author):
    items, _ = query_pages(api, {"TableName": table, "IndexName": "ByAuthor",
                                 "KeyConditionExpression": "author = :a",
                                 "ExpressionAttributeValues": {":a": S(author)}})
    return [(i["forum"]["S"], i["subject"]["S"]) for i in items]


def index_counts(api, table):
    d = api.ok("DescribeTable", {"TableName": table})["Table"]
    return ({g["IndexName"]: g["ItemCount"] for g in d["GlobalSecondaryIndexes"]},
            {i["IndexName"]: i["ItemCount"] for i in d["LocalSecondaryIndexes"]})


def test_gsi_and_lsi_describe(kapi, forum):
    d = kapi.ok("DescribeTable", {"TableName": forum})["Table"]
    (lsi,) = d["LocalSecondaryIndexes"]
    (gsi,) = d["GlobalSecondaryIndexes"]
    assert lsi["IndexName"] == "ByLastPost"
    assert lsi["KeySchema"] == ks("forum", "|", "lastPost")
    assert lsi["Projection"] == {"ProjectionType": "ALL"}
    assert lsi["IndexArn"] == table_arn(forum) + "/index/ByLastPost"
    assert "IndexStatus" not in lsi
    assert lsi["ItemCount"] == 0 and lsi["IndexSizeBytes"] == 0
    assert gsi["IndexName"] == "ByAuthor"
    assert gsi["KeySchema"] == ks("author", "|", "lastPost")
    assert gsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["replies"]}
    assert gsi["IndexStatus"] == "ACTIVE"
    assert gsi["IndexArn"] == table_arn(forum) + "/index/ByAuthor"
    assert "Backfilling" not in gsi
    assert sorted(a["AttributeName"] for a in d["AttributeDefinitions"]) == [
        "author", "forum", "lastPost", "subject"]


def test_gsi_and_lsi_both_maintained(kapi, forum):
    t = forum
    items = [
        thread("dynamo", "keys", "2025-11-03T10:00", "ann", 3),
        thread("dynamo", "indexes", "2025-11-01T09:00", "bob", 1),
        thread("dynamo", "streams", "2025-11-05T12:00", "ann", 0),
        thread("dynamo", "draft", None, "ann"),                 # GSI and LSI need lastPost
        thread("dynamo", "anon", "2025-11-02T08:00", None, 7),  # LSI only
        thread("s3", "buckets", "2025-10-30T07:00", "ann", 2),
    ]
    for it in items:
        kapi.ok("PutItem", {"TableName": t, "Item": it})
    assert lsi_subjects(kapi, t, "dynamo") == ["indexes", "anon", "keys", "streams"]
    assert lsi_subjects(kapi, t, "dynamo", forward=False, consistent=True) == [
        "streams", "keys", "anon", "indexes"]
    assert gsi_subjects(kapi, t, "ann") == [("s3", "buckets"), ("dynamo", "keys"),
                                            ("dynamo", "streams")]
    assert gsi_subjects(kapi, t, "bob") == [("dynamo", "indexes")]
    assert index_counts(kapi, t) == ({"ByAuthor": 4}, {"ByLastPost": 5})

    # Projections: LSI ALL returns the whole item, GSI INCLUDE the keys plus replies.
    r = kapi.ok("Query", {"TableName": t, "IndexName": "ByAuthor",
                          "KeyConditionExpression": "author = :a AND lastPost > :d",
                          "ExpressionAttributeValues": {":a": S("bob"), ":d": S("2025")}})
    assert r["Items"] == [{"forum": S("dynamo"), "subject": S("indexes"), "author": S("bob"),
                           "lastPost": S("2025-11-01T09:00"), "replies": N(1)}]
    r = kapi.ok("Query", {"TableName": t, "IndexName": "ByLastPost",
                          "KeyConditionExpression": "forum = :f AND lastPost BETWEEN :a AND :b",
                          "ExpressionAttributeValues": {":f": S("dynamo"),
                                                        ":a": S("2025-11-02"),
                                                        ":b": S("2025-11-04")}})
    assert [normalize_item(i) for i in r["Items"]] == [normalize_item(items[4]),
                                                       normalize_item(items[0])]

    # A new post on "indexes" by ann moves it in both indexes.
    kapi.ok("UpdateItem", {"TableName": t,
                           "Key": {"forum": S("dynamo"), "subject": S("indexes")},
                           "UpdateExpression": "SET lastPost = :d, author = :a ADD replies :one",
                           "ExpressionAttributeValues": {":d": S("2025-11-06T00:00"),
                                                         ":a": S("ann"), ":one": N(1)}})
    assert lsi_subjects(kapi, t, "dynamo") == ["anon", "keys", "streams", "indexes"]
    assert gsi_subjects(kapi, t, "bob") == []
    assert gsi_subjects(kapi, t, "ann") == [("s3", "buckets"), ("dynamo", "keys"),
                                            ("dynamo", "streams"), ("dynamo", "indexes")]
    # Removing lastPost takes the item out of both.
    kapi.ok("UpdateItem", {"TableName": t, "Key": {"forum": S("dynamo"), "subject": S("keys")},
                           "UpdateExpression": "REMOVE lastPost"})
    assert "keys" not in lsi_subjects(kapi, t, "dynamo")
    assert ("dynamo", "keys") not in gsi_subjects(kapi, t, "ann")
    # The draft gets published through a transaction; the anonymous thread is deleted in a batch.
    kapi.ok("TransactWriteItems", {"TransactItems": [{"Update": {
        "TableName": t, "Key": {"forum": S("dynamo"), "subject": S("draft")},
        "UpdateExpression": "SET lastPost = :d",
        "ExpressionAttributeValues": {":d": S("2025-11-04T00:00")}}}]})
    kapi.ok("BatchWriteItem", {"RequestItems": {t: [{"DeleteRequest": {
        "Key": {"forum": S("dynamo"), "subject": S("anon")}}}]}})
    assert lsi_subjects(kapi, t, "dynamo") == ["draft", "streams", "indexes"]
    assert gsi_subjects(kapi, t, "ann") == [("s3", "buckets"), ("dynamo", "draft"),
                                            ("dynamo", "streams"), ("dynamo", "indexes")]
    assert index_counts(kapi, t) == ({"ByAuthor": 4}, {"ByLastPost": 4})

    # Scans of both indexes agree with the table.
    lsi_scan, _ = query_pages(kapi, {"op": "Scan", "TableName": t, "IndexName": "ByLastPost"})
    gsi_scan, _ = query_pages(kapi, {"op": "Scan", "TableName": t, "IndexName": "ByAuthor"})
    table_scan, _ = query_pages(kapi, {"op": "Scan", "TableName": t})
    assert sorted(i["subject"]["S"] for i in lsi_scan) == sorted(
        i["subject"]["S"] for i in table_scan if "lastPost" in i)
    assert sorted(i["subject"]["S"] for i in gsi_scan) == sorted(
        i["subject"]["S"] for i in table_scan if "lastPost" in i and "author" in i)
    for i in gsi_scan:
        assert set(i) <= {"forum", "subject", "author", "lastPost", "replies"}
    # Deleting the table's items empties both indexes.
    for i in table_scan:
        kapi.ok("DeleteItem", {"TableName": t,
                               "Key": {"forum": i["forum"], "subject": i["subject"]}})
    assert index_counts(kapi, t) == ({"ByAuthor": 0}, {"ByLastPost": 0})
    assert lsi_subjects(kapi, t, "dynamo") == [] and gsi_subjects(kapi, t, "ann") == []


def test_gsi_and_lsi_created_through_boto3(ddb, kapi):
    name = unique_name("ix-m")
    args = create_table_args(
        name, ("forum", "S"), ("subject", "S"),
        AttributeDefinitions=defs(forum="S", subject="S", lastPost="S", author="S"),
        LocalSecondaryIndexes=[index("ByLastPost", ks("forum", "|", "lastPost"), "KEYS_ONLY")],
        GlobalSecondaryIndexes=[index("ByAuthor", ks("author", "|", "lastPost"))])
    ddb.create_table(**args)
    try:
        wait_table_active(ddb, name)
        ddb.put_item(TableName=name, Item=thread("f", "s", "2025-01-01", "ann", 4))
        d = ddb.describe_table(TableName=name)["Table"]
        assert [i["IndexName"] for i in d["LocalSecondaryIndexes"]] == ["ByLastPost"]
        assert [g["IndexName"] for g in d["GlobalSecondaryIndexes"]] == ["ByAuthor"]
        lsi = ddb.query(TableName=name, IndexName="ByLastPost",
                        KeyConditionExpression="forum = :f",
                        ExpressionAttributeValues={":f": S("f")})["Items"]
        assert lsi == [{"forum": S("f"), "subject": S("s"), "lastPost": S("2025-01-01")}]
        gsi = ddb.query(TableName=name, IndexName="ByAuthor",
                        KeyConditionExpression="author = :a",
                        ExpressionAttributeValues={":a": S("ann")})["Items"]
        assert [normalize_item(i) for i in gsi] == [
            normalize_item(thread("f", "s", "2025-01-01", "ann", 4))]
    finally:
        kapi("DeleteTable", {"TableName": name})
