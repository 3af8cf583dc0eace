"""Capacity of secondary indexes and item-collection metrics: ReturnConsumedCapacity INDEXES and
TOTAL on PutItem, UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems against a table
with a KEYS_ONLY GSI, an INCLUDE GSI and LSIs; GSI and LSI reads charged to the index;
ReturnItemCollectionMetrics SIZE."""

import math

import pytest

from index_helpers import (
    N,
    S,
    defs,
    index,
    ks,
)
from kumo_testlib import item_size

# Table "cap": pk S / sk S.
#   GSI gsi_keys: HASH gk (KEYS_ONLY)
#   GSI gsi_incl: HASH gi | RANGE gr N (INCLUDE [inc])
#   LSI lsi_all:  pk | lk (ALL)
#   LSI lsi_keys: pk | lk2 (KEYS_ONLY)
# Tests name them by the short names below.
NAMES = {"gk": "gsi_keys", "gi": "gsi_incl", "ls": "lsi_all", "lk2": "lsi_keys"}
GSIS = ("gk", "gi")
LSIS = ("ls", "lk2")
OPEN_UNIT_MEMBERS = ("ReadCapacityUnits", "WriteCapacityUnits")


@pytest.fixture
def cap(make_table):
    return make_table(
        ("pk", "S"), ("sk", "S"),
        AttributeDefinitions=defs(pk="S", sk="S", gk="S", gi="S", gr="N", lk="S", lk2="S"),
        GlobalSecondaryIndexes=[index(NAMES["gk"], ks("gk"), "KEYS_ONLY"),
                                index(NAMES["gi"], ks("gi", "|", "gr"), "INCLUDE", ["inc"])],
        LocalSecondaryIndexes=[index(NAMES["ls"], ks("pk", "|", "lk")),
                               index(NAMES["lk2"], ks("pk", "|", "lk2"), "KEYS_ONLY")])


@pytest.fixture
def plain(make_table):
    return make_table(("pk", "S"))


@pytest.fixture
def gsi_only(make_table):
    return make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=defs(pk="S", sk="S", gk="S"),
                      GlobalSecondaryIndexes=[index("gsi_keys", ks("gk"), "KEYS_ONLY")])


def strip_open(cc):
    """ConsumedCapacity without the ReadCapacityUnits/WriteCapacityUnits members, whose
    presence is open; when present they must be numbers."""
    if isinstance(cc, list):
        return [strip_open(c) for c in cc]
    out = {}
    for k, v in cc.items():
        if k in OPEN_UNIT_MEMBERS:
            assert isinstance(v, (int, float)), cc
            continue
        if isinstance(v, dict):
            v = strip_open(v)
        out[k] = v
    return out


def expect(table, units, mode="INDEXES", **indexes):
    """Expected ConsumedCapacity: `units` on the table, keyword arguments per index."""
    total = float(units + sum(indexes.values()))
    if mode == "TOTAL":
        return {"TableName": table, "CapacityUnits": total}
    cc = {"TableName": table, "CapacityUnits": total, "Table": {"CapacityUnits": float(units)}}
    gsis = {NAMES[k]: {"CapacityUnits": float(v)} for k, v in indexes.items() if k in GSIS}
    lsis = {NAMES[k]: {"CapacityUnits": float(v)} for k, v in indexes.items() if k in LSIS}
    if gsis:
        cc["GlobalSecondaryIndexes"] = gsis
    if lsis:
        cc["LocalSecondaryIndexes"] = lsis
    return cc


def item(pk, sk="s", **attrs):
    it = {"pk": S(pk), "sk": S(sk)}
    for k, v in attrs.items():
        it[k] = N(v) if k == "gr" else S(v)
    return it


def key(pk, sk="s"):
    return {"pk": S(pk), "sk": S(sk)}


def put(api, table, it, mode="INDEXES", **extra):
    return api.ok("PutItem", dict({"TableName": table, "Item": it,
                                   "ReturnConsumedCapacity": mode}, **extra))


FULL = dict(gk="a", gi="a", gr=1, inc="x", lk="a")


# =========================================================================== PutItem


@pytest.mark.parametrize("attrs, indexes", [
    ({}, {}),
    ({"misc": "x"}, {}),                           # in no index image
    ({"gk": "a"}, {"gk": 1}),
    ({"gi": "a", "gr": 1}, {"gi": 1}),
    ({"gi": "a", "inc": "x"}, {}),                  # sparse: gr missing
    ({"gr": 1, "inc": "x"}, {}),                    # sparse: gi missing
    ({"lk": "a"}, {"ls": 1}),
    ({"lk2": "a"}, {"lk2": 1}),
    (FULL, {"gk": 1, "gi": 1, "ls": 1}),
    (dict(FULL, lk2="b", misc="y"), {"gk": 1, "gi": 1, "ls": 1, "lk2": 1}),
])
@pytest.mark.parametrize("mode", ["INDEXES", "TOTAL"])
def test_put_new_item(api, cap, attrs, indexes, mode):
    out = put(api, cap, item("p", **attrs), mode)
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 1, mode, **indexes)


@pytest.mark.parametrize("old, new, indexes", [
    ({"gk": "a"}, {"gk": "b"}, {"gk": 2}),                                   # key change
    ({"gk": "a"}, {}, {"gk": 1}),                                            # entry removed
    ({}, {"gk": "a"}, {"gk": 1}),                                            # entry added
    ({"gk": "a", "misc": "x"}, {"gk": "a", "misc": "y"}, {}),              # not projected
    ({"gk": "a", "inc": "x"}, {"gk": "a", "inc": "y"}, {}),                  # KEYS_ONLY
    ({"gi": "a", "gr": 1, "inc": "x"}, {"gi": "a", "gr": 1, "inc": "y"}, {"gi": 1}),
    ({"gi": "a", "gr": 1}, {"gi": "a", "gr": 1, "inc": "y"}, {"gi": 1}),     # projected added
    ({"gi": "a", "gr": 1, "misc": "x"}, {"gi": "a", "gr": 1, "misc": "y"}, {}),
    ({"gi": "a", "gr": 1}, {"gi": "a", "gr": 2}, {"gi": 2}),                 # RANGE changes
    ({"gi": "a", "gr": 1}, {"gi": "b", "gr": 1}, {"gi": 2}),                 # HASH changes
    ({"gi": "a", "gr": 1}, {"gi": "a"}, {"gi": 1}),                          # becomes sparse
    ({"gk": "a", "gi": "a", "gr": 1, "inc": "x"}, {"gk": "a", "gi": "a", "gr": 1, "inc": "y"},
     {"gi": 1}),
    ({"lk": "a"}, {"lk": "b"}, {"ls": 2}),
    ({"lk": "a", "misc": "x"}, {"lk": "a", "misc": "y"}, {"ls": 1}),      # ALL projection
    ({"lk": "a"}, {}, {"ls": 1}),
    ({"lk2": "a", "misc": "x"}, {"lk2": "a", "misc": "y"}, {}),            # KEYS_ONLY LSI
    (FULL, dict(FULL, gk="b", gr=7), {"gk": 2, "gi": 2, "ls": 1}),
])
def test_put_replacing_item(api, cap, old, new, indexes):
    put(api, cap, item("p", **old), "NONE")
    out = put(api, cap, item("p", **new))
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 1, **indexes)


# =========================================================================== UpdateItem


def update(api, table, k, expr, values=None, mode="INDEXES"):
    body = {"TableName": table, "Key": k, "UpdateExpression": expr,
            "ReturnConsumedCapacity": mode}
    if values:
        body["ExpressionAttributeValues"] = values
    return api.ok("UpdateItem", body)


@pytest.mark.parametrize("old, expr, values, indexes", [
    ({"gk": "a"}, "SET gk = :v", {":v": S("b")}, {"gk": 2}),
    ({"gk": "a"}, "REMOVE gk", None, {"gk": 1}),
    ({}, "SET gk = :v", {":v": S("a")}, {"gk": 1}),
    (None, "SET gk = :v", {":v": S("a")}, {"gk": 1}),                 # creates the item
    (None, "SET misc = :v", {":v": S("a")}, {}),
    (FULL, "SET inc = :v", {":v": S("changed")}, {"gi": 1, "ls": 1}),
    (dict(FULL, lk=None), "SET inc = :v", {":v": S("changed")}, {"gi": 1}),
    (dict(FULL, lk=None), "SET misc = :v", {":v": S("o")}, {}),
    (dict(FULL, lk=None), "SET gr = :v", {":v": N(2)}, {"gi": 2}),
    (dict(FULL, lk=None), "ADD gr :v", {":v": N(1)}, {"gi": 2}),
    (dict(FULL, lk=None), "REMOVE gr", None, {"gi": 1}),
    (dict(FULL, lk=None), "REMOVE inc", None, {"gi": 1}),
    (dict(FULL, lk=None), "SET gk = :v, gi = :v", {":v": S("z")}, {"gk": 2, "gi": 2}),
    (FULL, "SET lk = :v", {":v": S("b")}, {"ls": 2}),
    (FULL, "SET misc = :v", {":v": S("o")}, {"ls": 1}),
    (FULL, "REMOVE lk", None, {"ls": 1}),
    ({"lk2": "a"}, "SET misc = :v", {":v": S("o")}, {}),
    ({"lk2": "a"}, "SET lk2 = :v", {":v": S("b")}, {"lk2": 2}),
])
@pytest.mark.parametrize("mode", ["INDEXES", "TOTAL"])
def test_update_item(api, cap, old, expr, values, indexes, mode):
    if old is not None:
        put(api, cap, item("u", **{k: v for k, v in old.items() if v is not None}), "NONE")
    out = update(api, cap, key("u"), expr, values, mode)
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 1, mode, **indexes)


# =========================================================================== DeleteItem


@pytest.mark.parametrize("old, indexes", [
    (None, {}),                                      # nothing to delete
    ({}, {}),
    ({"misc": "x", "gi": "a"}, {}),                 # sparse everywhere
    ({"gk": "a"}, {"gk": 1}),
    (FULL, {"gk": 1, "gi": 1, "ls": 1}),
    (dict(FULL, lk2="a"), {"gk": 1, "gi": 1, "ls": 1, "lk2": 1}),
])
@pytest.mark.parametrize("mode", ["INDEXES", "TOTAL"])
def test_delete_item(api, cap, old, indexes, mode):
    if old is not None:
        put(api, cap, item("d", **old), "NONE")
    out = api.ok("DeleteItem", {"TableName": cap, "Key": key("d"),
                                "ReturnConsumedCapacity": mode})
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 1, mode, **indexes)


# =========================================================================== entry size


def test_index_write_units_follow_entry_size(api, cap):
    # A 1,500-byte projected attribute makes the INCLUDE entry (and the ALL LSI entry) need two
    # write units; the KEYS_ONLY entry stays at one.
    big = "i" * 1500
    it = item("big", gk="a", gi="a", gr=1, inc=big, lk="a")
    assert 1024 < item_size(it) <= 2048
    out = put(api, cap, it)
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 2, gk=1, gi=2, ls=2)
    # A non-projected change costs the GSIs nothing; the ALL LSI rewrites its entry.
    out = update(api, cap, key("big"), "SET misc = :v", {":v": S("o")})
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 2, ls=2)
    out = api.ok("DeleteItem", {"TableName": cap, "Key": key("big"),
                                "ReturnConsumedCapacity": "INDEXES"})
    assert strip_open(out["ConsumedCapacity"]) == expect(cap, 2, gk=1, gi=2, ls=2)


# =========================================================================== BatchWriteItem


def test_batch_write_item(api, cap, plain):
    put(api, cap, item("c", gk="a"), "NONE")
    put(api, cap, item("d", gi="a", gr=1), "NONE")
    requests = {
        cap: [{"PutRequest": {"Item": item("a", **FULL)}},                  # gk 1, gi 1, ls 1
              {"PutRequest": {"Item": item("b", misc="x")}},               # none
              {"DeleteRequest": {"Key": key("c")}},                         # gk 1
              {"PutRequest": {"Item": item("d", gi="a", gr=2)}}],           # gi 2
        plain: [{"PutRequest": {"Item": {"pk": S("x")}}}],
    }
    out = api.ok("BatchWriteItem", {"RequestItems": requests, "ReturnConsumedCapacity": "INDEXES"})
    assert out["UnprocessedItems"] == {}
    got = {c["TableName"]: c for c in strip_open(out["ConsumedCapacity"])}
    assert len(out["ConsumedCapacity"]) == 2
    assert got == {cap: expect(cap, 4, gk=2, gi=3, ls=1),
                   plain: {"TableName": plain, "CapacityUnits": 1.0,
                           "Table": {"CapacityUnits": 1.0}}}
    # TOTAL: a new item in gk only (gk 1), b replaced while in no index image (0), c already
    # gone (table 1, no index), d's gr back to 1 (gi 2).
    requests[cap][0] = {"PutRequest": {"Item": item("a2", gk="n")}}
    requests[cap][3] = {"PutRequest": {"Item": item("d", gi="a", gr=1)}}
    out = api.ok("BatchWriteItem", {"RequestItems": requests, "ReturnConsumedCapacity": "TOTAL"})
    got = {c["TableName"]: c for c in strip_open(out["ConsumedCapacity"])}
    assert got == {cap: {"TableName": cap, "CapacityUnits": 7.0},
                   plain: {"TableName": plain, "CapacityUnits": 1.0}}


# =========================================================================== TransactWriteItems


def test_transact_write_items_doubles_table_and_index_units(api, cap, plain):
    out = api.ok("TransactWriteItems", {
        "TransactItems": [{"Put": {"TableName": cap, "Item": item("a", **FULL)}}],
        "ReturnConsumedCapacity": "INDEXES"})
    assert strip_open(out["ConsumedCapacity"]) == [expect(cap, 2, gk=2, gi=2, ls=2)]

    put(api, cap, item("c", gk="a"), "NONE")
    put(api, cap, item("d", gi="a", gr=1, inc="x"), "NONE")
    actions = [
        {"Put": {"TableName": cap, "Item": item("b", misc="x")}},                  # none
        {"Delete": {"TableName": cap, "Key": key("c")}},                             # gk 1
        {"Update": {"TableName": cap, "Key": key("d"), "UpdateExpression": "SET gr = :v",
                    "ExpressionAttributeValues": {":v": N(9)}}},                     # gi 2
        {"Update": {"TableName": cap, "Key": key("a"), "UpdateExpression": "SET inc = :v",
                    "ExpressionAttributeValues": {":v": S("y")}}},                   # gi 1, ls 1
        {"Put": {"TableName": plain, "Item": {"pk": S("x")}}},
    ]
    out = api.ok("TransactWriteItems", {"TransactItems": actions,
                                        "ReturnConsumedCapacity": "INDEXES"})
    got = {c["TableName"]: c for c in strip_open(out["ConsumedCapacity"])}
    assert len(out["ConsumedCapacity"]) == 2
    assert got == {cap: expect(cap, 8, gk=2, gi=6, ls=2),
                   plain: {"TableName": plain, "CapacityUnits": 2.0,
                           "Table": {"CapacityUnits": 2.0}}}

    out = api.ok("TransactWriteItems", {
        "TransactItems": [{"Delete": {"TableName": cap, "Key": key("a")}}],
        "ReturnConsumedCapacity": "TOTAL"})
    assert strip_open(out["ConsumedCapacity"]) == [{"TableName": cap, "CapacityUnits": 8.0}]


# =========================================================================== reads


def query(api, table, idx, kce, values, mode="INDEXES", **extra):
    return api.ok("Query", dict({"TableName": table, "IndexName": NAMES[idx],
                                 "KeyConditionExpression": kce,
                                 "ExpressionAttributeValues": values,
                                 "ReturnConsumedCapacity": mode}, **extra))


def read_expect(table, units, idx, mode="INDEXES"):
    """A read charged only to index `idx` (Table reported as 0.0)."""
    if mode == "TOTAL":
        return {"TableName": table, "CapacityUnits": units}
    member = "GlobalSecondaryIndexes" if idx in GSIS else "LocalSecondaryIndexes"
    return {"TableName": table, "CapacityUnits": units, "Table": {"CapacityUnits": 0.0},
            member: {NAMES[idx]: {"CapacityUnits": units}}}


@pytest.mark.parametrize("mode", ["INDEXES", "TOTAL"])
def test_gsi_query_and_scan_charged_to_the_index(api, cap, mode):
    for p in ("q1", "q2", "q3"):
        put(api, cap, item(p, gk="q", gi="q", gr=int(p[1]), inc="small", misc="o"), "NONE")
    put(api, cap, item("q4", misc="o"), "NONE")
    out = query(api, cap, "gk", "gk = :v", {":v": S("q")}, mode)
    assert out["Count"] == 3
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, 0.5, "gk", mode)
    out = query(api, cap, "gi", "gi = :v AND gr > :r", {":v": S("q"), ":r": N(0)}, mode)
    assert out["Count"] == 3
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, 0.5, "gi", mode)
    # Nothing read: the minimum, still on the index.
    out = query(api, cap, "gk", "gk = :v", {":v": S("none")}, mode)
    assert out["Count"] == 0
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, 0.5, "gk", mode)
    out = api.ok("Scan", {"TableName": cap, "IndexName": NAMES["gi"],
                          "ReturnConsumedCapacity": mode})
    assert out["Count"] == 3
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, 0.5, "gi", mode)


def test_gsi_query_units_follow_index_entry_sizes(api, cap):
    # Ten items of ~3 KB whose INCLUDE entries are ~1 KB and KEYS_ONLY entries a few bytes:
    # the GSI read is computed on entry sizes, summed then rounded up to 4 KB.
    inc = "i" * 980
    items = [item(f"e{n}", gk="k", gi="big", gr=n, inc=inc, misc="o" * 2000) for n in range(10)]
    for it in items:
        put(api, cap, it, "NONE")
    entries = [{k: it[k] for k in ("pk", "sk", "gi", "gr", "inc")} for it in items]
    total = sum(item_size(e) for e in entries)
    # Whether an entry also counts 100 bytes of overhead does not change the rounding here.
    blocks = math.ceil(total / 4096)
    assert blocks == math.ceil((total + 100 * len(entries)) / 4096) == 3
    assert math.ceil(sum(item_size(it) for it in items) / 4096) > blocks
    out = query(api, cap, "gi", "gi = :v", {":v": S("big")})
    assert out["Count"] == 10
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, blocks * 0.5, "gi")
    out = query(api, cap, "gk", "gk = :v", {":v": S("k")})
    assert out["Count"] == 10
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, 0.5, "gk")


@pytest.mark.parametrize("consistent, units", [(False, 0.5), (True, 1.0)])
def test_lsi_query_reported_under_the_index(api, cap, consistent, units):
    for n, lk in enumerate(["b", "a", "c"]):
        put(api, cap, item("L", f"s{n}", lk=lk, lk2=lk, misc="o"), "NONE")
    out = query(api, cap, "ls", "pk = :p", {":p": S("L")}, ConsistentRead=consistent)
    assert [i["lk"]["S"] for i in out["Items"]] == ["a", "b", "c"]
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, units, "ls")
    out = query(api, cap, "ls", "pk = :p", {":p": S("L")}, "TOTAL", ConsistentRead=consistent)
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, units, "ls", "TOTAL")
    # KEYS_ONLY LSI, projected attributes only: the index alone.
    out = query(api, cap, "lk2", "pk = :p", {":p": S("L")}, ConsistentRead=consistent)
    assert [set(i) for i in out["Items"]] == [{"pk", "sk", "lk2"}] * 3
    assert strip_open(out["ConsumedCapacity"]) == read_expect(cap, units, "lk2")


def test_lsi_query_fetching_from_the_table_also_charges_the_table(api, cap):
    for n in range(3):
        put(api, cap, item("F", f"s{n}", lk2=f"k{n}", misc="o" * 100), "NONE")
    out = query(api, cap, "lk2", "pk = :p", {":p": S("F")}, Select="ALL_ATTRIBUTES")
    assert [i["misc"]["S"] for i in out["Items"]] == ["o" * 100] * 3
    cc = strip_open(out["ConsumedCapacity"])
    assert set(cc) == {"TableName", "CapacityUnits", "Table", "LocalSecondaryIndexes"}
    assert cc["TableName"] == cap
    lsi_units = cc["LocalSecondaryIndexes"][NAMES["lk2"]]["CapacityUnits"]
    table_units = cc["Table"]["CapacityUnits"]
    assert lsi_units >= 0.5 and table_units >= 0.5, cc
    assert cc["CapacityUnits"] == lsi_units + table_units


# ================================================================ item collection metrics


def metrics(pk):
    return {"ItemCollectionKey": {"pk": S(pk)}, "SizeEstimateRangeGB": [0.0, 1.0]}


def test_item_collection_metrics_single_item_writes(api, cap):
    out = put(api, cap, item("m", **FULL), "NONE", ReturnItemCollectionMetrics="SIZE")
    assert out == {"ItemCollectionMetrics": metrics("m")}
    # Also for an item that is in no LSI: the collection is the partition.
    out = put(api, cap, item("m", "other-sort"), "NONE", ReturnItemCollectionMetrics="SIZE")
    assert out == {"ItemCollectionMetrics": metrics("m")}
    out = api.ok("UpdateItem", {"TableName": cap, "Key": key("m"),
                                "UpdateExpression": "SET lk = :v",
                                "ExpressionAttributeValues": {":v": S("z")},
                                "ReturnItemCollectionMetrics": "SIZE",
                                "ReturnConsumedCapacity": "TOTAL"})
    assert out["ItemCollectionMetrics"] == metrics("m")
    assert strip_open(out["ConsumedCapacity"]) == {"TableName": cap, "CapacityUnits": 3.0}
    out = api.ok("DeleteItem", {"TableName": cap, "Key": key("m"),
                                "ReturnItemCollectionMetrics": "SIZE"})
    assert out == {"ItemCollectionMetrics": metrics("m")}
    # Not asked for (absent or NONE): no member.
    assert put(api, cap, item("m2"), "NONE") == {}
    assert put(api, cap, item("m3"), "NONE", ReturnItemCollectionMetrics="NONE") == {}


def test_item_collection_metrics_batch_write(api, cap, plain):
    # Batch and transact writes return a list of metrics per table, only for tables with LSIs.
    out = api.ok("BatchWriteItem", {"RequestItems": {
        cap: [{"PutRequest": {"Item": item("b1", **FULL)}},
              {"PutRequest": {"Item": item("b2", lk="q")}},
              {"DeleteRequest": {"Key": key("b3")}}],
        plain: [{"PutRequest": {"Item": {"pk": S("x")}}}]},
        "ReturnItemCollectionMetrics": "SIZE"})
    assert out["UnprocessedItems"] == {}
    assert "ItemCollectionMetrics" in out, out
    icm = out["ItemCollectionMetrics"]
    assert set(icm) == {cap}, icm                     # the table without LSIs is absent
    assert isinstance(icm[cap], list) and icm[cap]
    for m in icm[cap]:
        assert m["SizeEstimateRangeGB"] == [0.0, 1.0]
        assert set(m["ItemCollectionKey"]) == {"pk"}
    assert {m["ItemCollectionKey"]["pk"]["S"] for m in icm[cap]} >= {"b1", "b2"}
    assert {m["ItemCollectionKey"]["pk"]["S"] for m in icm[cap]} <= {"b1", "b2", "b3"}


def test_item_collection_metrics_transact_write(api, cap, plain):
    # Batch and transact writes return a list of metrics per table, only for tables with LSIs.
    out = api.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": cap, "Item": item("t1", **FULL)}},
        {"Update": {"TableName": cap, "Key": key("t2"), "UpdateExpression": "SET lk = :v",
                    "ExpressionAttributeValues": {":v": S("q")}}},
        {"Put": {"TableName": plain, "Item": {"pk": S("y")}}}],
        "ReturnItemCollectionMetrics": "SIZE"})
    assert "ItemCollectionMetrics" in out, out
    icm = out["ItemCollectionMetrics"]
    assert set(icm) == {cap}, icm
    assert sorted(m["ItemCollectionKey"]["pk"]["S"] for m in icm[cap]) == ["t1", "t2"]
    for m in icm[cap]:
        assert m == metrics(m["ItemCollectionKey"]["pk"]["S"])


@pytest.mark.parametrize("which", ["plain", "gsi_only"])
def test_item_collection_metrics_absent_without_lsis(api, request, which):
    t = request.getfixturevalue(which)
    k = {"pk": S("n")} if which == "plain" else {"pk": S("n"), "sk": S("s")}
    it = dict(k, gk=S("a"))
    assert api.ok("PutItem", {"TableName": t, "Item": it,
                              "ReturnItemCollectionMetrics": "SIZE"}) == {}
    assert api.ok("UpdateItem", {"TableName": t, "Key": k, "UpdateExpression": "SET gk = :v",
                                 "ExpressionAttributeValues": {":v": S("b")},
                                 "ReturnItemCollectionMetrics": "SIZE"}) == {}
    assert api.ok("DeleteItem", {"TableName": t, "Key": k,
                                 "ReturnItemCollectionMetrics": "SIZE"}) == {}
    out = api.ok("BatchWriteItem", {"RequestItems": {t: [{"PutRequest": {"Item": it}}]},
                                    "ReturnItemCollectionMetrics": "SIZE"})
    assert t not in out.get("ItemCollectionMetrics", {}), out
    out = api.ok("TransactWriteItems", {"TransactItems": [{"Delete": {"TableName": t, "Key": k}}],
                                        "ReturnItemCollectionMetrics": "SIZE"})
    assert t not in out.get("ItemCollectionMetrics", {}), out
