"""Index maintenance on writes: type checks and empty values of index key attributes (PutItem,
UpdateItem, BatchWriteItem), sparseness, entries that move or disappear when a component changes,
item deletion and TransactWriteItems. With the other test_index_*.py modules this covers
secondary indexes."""

import pytest

from index_helpers import (
    B,
    INVALID,
    N,
    S,
    defs,
    index,
    ks,
    query_pages,
)
from kumo_testlib import (
    assert_validation,
    normalize_item,
)

EMPTY_INDEX_S_PUT = ("One or more parameter values are not valid. A value specified for a secondary "
                     "index key is not supported. The AttributeValue for a key attribute cannot "
                     "contain an empty string value. IndexName: {idx}, IndexKey: {attr}")
EMPTY_INDEX_B_PUT = ("One or more parameter values are not valid. A value specified for a secondary "
                     "index key is not supported. The AttributeValue for a key attribute cannot "
                     "contain an empty binary value. IndexName: {idx}, IndexKey: {attr}")
EMPTY_INDEX_S_UPDATE = ("One or more parameter values are not valid. The update expression attempted "
                        "to update a secondary index key to a value that is not supported. The "
                        "AttributeValue for a key attribute cannot contain an empty string value.")


# =========================================================================== writes


@pytest.fixture
def wtable(make_table):
    """pk S / sk N; LSI lsi1 (pk | lsk S); GSI gsi1 (h1 S, h2 N | r1 S, r2 N); GSI gbin (bh B)."""
    return make_table(
        ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=defs(pk="S", sk="N", lsk="S", h1="S", h2="N", r1="S", r2="N", bh="B"),
        LocalSecondaryIndexes=[index("lsi1", ks("pk", "|", "lsk"))],
        GlobalSecondaryIndexes=[index("gsi1", ks("h1", "h2", "|", "r1", "r2")),
                                index("gbin", ks("bh"), "KEYS_ONLY")])


def gsi1_entries(api, table):
    items, _ = query_pages(api, {"op": "Scan", "TableName": table, "IndexName": "gsi1"})
    return sorted((i["pk"]["S"], i["sk"]["N"], i["h1"]["S"], i["h2"]["N"], i["r1"]["S"], i["r2"]["N"])
                  for i in items)


def gsi1_query(api, table, h1, h2, r1=None, r2=None):
    kce = "h1 = :h1 AND h2 = :h2"
    vals = {":h1": S(h1), ":h2": N(h2)}
    if r1 is not None:
        kce += " AND r1 = :r1"
        vals[":r1"] = S(r1)
    if r2 is not None:
        kce += " AND r2 = :r2"
        vals[":r2"] = N(r2)
    return api.ok("Query", {"TableName": table, "IndexName": "gsi1", "KeyConditionExpression": kce,
                            "ExpressionAttributeValues": vals})["Items"]


FULL = {"pk": S("p"), "sk": N(1), "h1": S("h"), "h2": N(1), "r1": S("r"), "r2": N(2)}


@pytest.mark.parametrize("attr, value, expected, actual, idx", [
    ("h1", N(1), "S", "N", "gsi1"),
    ("h2", S("1"), "N", "S", "gsi1"),
    ("r1", B(b"r"), "S", "B", "gsi1"),
    ("r2", {"SS": ["a"]}, "N", "SS", "gsi1"),
    ("lsk", N(3), "S", "N", "lsi1"),
    ("bh", S("x"), "B", "S", "gbin"),
])
def test_put_index_key_type_mismatch(api, wtable, attr, value, expected, actual, idx):
    item = dict(FULL, **{attr: value})
    resp = api("PutItem", {"TableName": wtable, "Item": item})
    assert_validation(resp, INVALID + f"Type mismatch for Index Key {attr} Expected: {expected} "
                      f"Actual: {actual} IndexName: {idx}")
    assert "Item" not in api.ok("GetItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})


def test_put_type_mismatch_even_when_other_components_missing(api, wtable):
    # The type check applies to a present component even when the item would be sparse.
    resp = api("PutItem", {"TableName": wtable, "Item": {"pk": S("p"), "sk": N(1), "r2": S("x")}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key r2 Expected: N Actual: S "
                      "IndexName: gsi1")


@pytest.mark.parametrize("attr, value, expected, actual, idx", [
    ("h2", S("x"), "N", "S", "gsi1"),
    ("r1", N(5), "S", "N", "gsi1"),
    ("lsk", B(b"x"), "S", "B", "lsi1"),
])
def test_update_index_key_type_mismatch(api, wtable, attr, value, expected, actual, idx):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    resp = api("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": value}})
    assert_validation(resp, INVALID + f"Type mismatch for Index Key {attr} Expected: {expected} "
                      f"Actual: {actual} IndexName: {idx}")
    got = api.ok("GetItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})["Item"]
    assert normalize_item(got) == normalize_item(FULL)


def test_batch_write_index_key_type_mismatch_rejects_whole_batch(api, wtable):
    good = dict(FULL, sk=N(7))
    bad = dict(FULL, sk=N(8), h2=S("oops"))
    resp = api("BatchWriteItem", {"RequestItems": {wtable: [{"PutRequest": {"Item": good}},
                                                             {"PutRequest": {"Item": bad}}]}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key h2 Expected: N Actual: S "
                      "IndexName: gsi1")
    assert api.ok("Scan", {"TableName": wtable})["Count"] == 0


@pytest.mark.parametrize("attr, value, message", [
    ("r1", S(""), EMPTY_INDEX_S_PUT.format(idx="gsi1", attr="r1")),
    ("h1", S(""), EMPTY_INDEX_S_PUT.format(idx="gsi1", attr="h1")),
    ("lsk", S(""), EMPTY_INDEX_S_PUT.format(idx="lsi1", attr="lsk")),
    ("bh", B(b""), EMPTY_INDEX_B_PUT.format(idx="gbin", attr="bh")),
])
def test_put_empty_index_key(api, wtable, attr, value, message):
    resp = api("PutItem", {"TableName": wtable, "Item": dict(FULL, **{attr: value})})
    assert_validation(resp, message)


@pytest.mark.parametrize("attr", ["r1", "h1", "lsk"])
def test_update_empty_index_key(api, wtable, attr):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    resp = api("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": S("")}})
    assert_validation(resp, EMPTY_INDEX_S_UPDATE)


def test_sparse_items_absent_from_index(api, wtable):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    for i, missing in enumerate(["h1", "h2", "r1", "r2"]):
        item = {k: v for k, v in FULL.items() if k != missing}
        item["sk"] = N(10 + i)
        api.ok("PutItem", {"TableName": wtable, "Item": item})
    assert gsi1_entries(api, wtable) == [("p", "1", "h", "1", "r", "2")]
    assert [i["sk"]["N"] for i in gsi1_query(api, wtable, "h", 1)] == ["1"]
    # Not in the LSI either: no item has lsk.
    r = api.ok("Query", {"TableName": wtable, "IndexName": "lsi1",
                         "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")}})
    assert r["Count"] == 0 and r["Items"] == []


@pytest.mark.parametrize("how", ["update", "put"])
@pytest.mark.parametrize("attr, new", [("h1", S("h2")), ("h2", N(-4)), ("r1", S("q")),
                                       ("r2", N("2.5"))])
def test_changing_a_component_moves_the_entry(api, wtable, how, attr, new):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    if how == "update":
        api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": new}})
    else:
        api.ok("PutItem", {"TableName": wtable, "Item": dict(FULL, **{attr: new})})
    moved = {k: v for k, v in dict(FULL, **{attr: new}).items()}
    assert gsi1_query(api, wtable, "h", 1, "r", 2) == []
    got = gsi1_query(api, wtable, moved["h1"]["S"], moved["h2"]["N"], moved["r1"]["S"],
                     moved["r2"]["N"])
    assert [normalize_item(i) for i in got] == [normalize_item(moved)]
    (entry,) = gsi1_entries(api, wtable)
    assert entry == ("p", "1", moved["h1"]["S"], moved["h2"]["N"], moved["r1"]["S"],
                     moved["r2"]["N"])


def test_update_non_key_attribute_updates_projection(api, wtable):
    api.ok("PutItem", {"TableName": wtable, "Item": dict(FULL, lsk=S("l"))})
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "SET extra = :v",
                          "ExpressionAttributeValues": {":v": S("new")}})
    (g,) = gsi1_query(api, wtable, "h", 1)
    assert g["extra"] == S("new")
    (l,) = api.ok("Query", {"TableName": wtable, "IndexName": "lsi1",
                            "KeyConditionExpression": "pk = :p",
                            "ExpressionAttributeValues": {":p": S("p")}})["Items"]
    assert l["extra"] == S("new")


@pytest.mark.parametrize("attr", ["h1", "h2", "r1", "r2"])
def test_removing_a_component_removes_the_entry(api, wtable, attr):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "REMOVE #a", "ExpressionAttributeNames": {"#a": attr}})
    assert gsi1_entries(api, wtable) == []
    t = api.ok("DescribeTable", {"TableName": wtable})["Table"]
    assert [g["ItemCount"] for g in t["GlobalSecondaryIndexes"] if g["IndexName"] == "gsi1"] == [0]
    # Adding it back re-indexes.
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "SET #a = :v", "ExpressionAttributeNames": {"#a": attr},
                          "ExpressionAttributeValues": {":v": FULL[attr]}})
    assert gsi1_entries(api, wtable) == [("p", "1", "h", "1", "r", "2")]


def test_deleting_the_item_removes_entries(api, wtable):
    item = dict(FULL, lsk=S("l"), bh=B(b"\x07"))
    api.ok("PutItem", {"TableName": wtable, "Item": item})
    api.ok("PutItem", {"TableName": wtable, "Item": dict(item, sk=N(2))})
    api.ok("DeleteItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})
    assert gsi1_entries(api, wtable) == [("p", "2", "h", "1", "r", "2")]
    for idx in ("lsi1", "gbin"):
        items, _ = query_pages(api, {"op": "Scan", "TableName": wtable, "IndexName": idx})
        assert [i["sk"] for i in items] == [N(2)], idx
    api.ok("DeleteItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(2)}})
    for idx in ("lsi1", "gbin", "gsi1"):
        assert api.ok("Scan", {"TableName": wtable, "IndexName": idx})["Count"] == 0
    t = api.ok("DescribeTable", {"TableName": wtable})["Table"]
    for i in t["LocalSecondaryIndexes"] + t["GlobalSecondaryIndexes"]:
        assert i["ItemCount"] == 0, i["IndexName"]


def test_transact_write_maintains_index(api, wtable):
    api.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": wtable, "Item": FULL}},
        {"Put": {"TableName": wtable, "Item": dict(FULL, sk=N(2), r2=N(-1))}},
    ]})
    assert [i["sk"]["N"] for i in gsi1_query(api, wtable, "h", 1)] == ["2", "1"]
