"""Secondary-index key values have the table key's size limits: 2,048 bytes for each HASH
component, 1,024 for the RANGE components together. Every write whose index key passes them
is refused, and a GSI created over existing items leaves out those whose key value is empty
or over the limits."""

import pytest

from index_helpers import INVALID, B, N, S, defs, index, ks, wait_gsi
from kumo_testlib import assert_validation, scan_all
from transaction_fixtures import NONE, assert_canceled, vreason

HASH_LIMIT = INVALID + "Size of hashkey has exceeded the maximum size limit of2048 bytes"
RANGE_LIMIT = INVALID + "Aggregated size of all range keys has exceeded the size limit of 1024 bytes"

# Built once and reused.
H2048, H2049 = "h" * 2048, "h" * 2049
R1024, R1025 = "r" * 1024, "r" * 1025


@pytest.fixture
def ltable(make_table):
    """pk S; GSI byH (h S); GSI byGR (g S | r S); GSI multi (m1 S, m2 S | q1 S, q2 S);
    GSI byB (bh B); LSI-free."""
    return make_table(
        ("pk", "S"),
        AttributeDefinitions=defs(pk="S", h="S", g="S", r="S", m1="S", m2="S", q1="S", q2="S",
                                  bh="B"),
        GlobalSecondaryIndexes=[index("byH", ks("h")), index("byGR", ks("g", "|", "r")),
                                index("multi", ks("m1", "m2", "|", "q1", "q2")),
                                index("byB", ks("bh"), "KEYS_ONLY")])


def get(api, table, pk):
    return api.ok("GetItem", {"TableName": table, "Key": {"pk": S(pk)},
                              "ConsistentRead": True}).get("Item")


def entries(api, table, idx):
    return sorted(i["pk"]["S"] for i in scan_all(api, table, idx))


OVER = [
    pytest.param({"h": S(H2049)}, HASH_LIMIT, id="hash"),
    pytest.param({"h": S("é" * 1025)}, HASH_LIMIT, id="hash-utf8-bytes"),
    pytest.param({"bh": B(b"\x01" * 2049)}, HASH_LIMIT, id="hash-binary"),
    pytest.param({"g": S("g"), "r": S(R1025)}, RANGE_LIMIT, id="range"),
    pytest.param({"m1": S("a"), "m2": S(H2049), "q1": S("q")}, HASH_LIMIT, id="multi-hash"),
    pytest.param({"m1": S("a"), "m2": S("b"), "q1": S("q" * 600), "q2": S("q" * 425)},
                 RANGE_LIMIT, id="multi-range-sum"),
]


@pytest.mark.parametrize("attrs, message", OVER)
def test_put_over_the_limits(api, ltable, attrs, message):
    resp = api("PutItem", {"TableName": ltable, "Item": dict({"pk": S("p")}, **attrs)})
    assert_validation(resp, message)
    assert get(api, ltable, "p") is None


def test_put_at_the_limits(api, ltable):
    item = {"pk": S("p"), "h": S(H2048), "g": S(H2048), "r": S(R1024), "m1": S(H2048),
            "m2": S(H2048), "q1": S("q" * 600), "q2": S("q" * 424), "bh": B(b"\x01" * 2048)}
    api.ok("PutItem", {"TableName": ltable, "Item": item})
    for idx in ("byH", "byGR", "multi", "byB"):
        assert entries(api, ltable, idx) == ["p"], idx
    # One byte more in the RANGE components of `multi` is over.
    resp = api("PutItem", {"TableName": ltable, "Item": dict(item, pk=S("q"), q2=S("q" * 425))})
    assert_validation(resp, RANGE_LIMIT)
    assert entries(api, ltable, "multi") == ["p"]


@pytest.mark.parametrize("attrs, message", OVER)
def test_update_over_the_limits(api, ltable, attrs, message):
    api.ok("PutItem", {"TableName": ltable, "Item": {"pk": S("p"), "keep": N(1)}})
    names = {f"#a{i}": name for i, name in enumerate(attrs)}
    values = {f":v{i}": value for i, value in enumerate(attrs.values())}
    sets = ", ".join(f"#a{i} = :v{i}" for i in range(len(attrs)))
    for pk in ("p", "fresh"):
        resp = api("UpdateItem", {"TableName": ltable, "Key": {"pk": S(pk)},
                                  "UpdateExpression": "SET " + sets,
                                  "ExpressionAttributeNames": names,
                                  "ExpressionAttributeValues": values})
        assert_validation(resp, message)
    assert get(api, ltable, "p") == {"pk": S("p"), "keep": N(1)}
    assert get(api, ltable, "fresh") is None


def test_batch_write_over_the_limits(api, ltable):
    resp = api("BatchWriteItem", {"RequestItems": {ltable: [
        {"PutRequest": {"Item": {"pk": S("ok"), "h": S("fine")}}},
        {"PutRequest": {"Item": {"pk": S("bad"), "g": S("g"), "r": S(R1025)}}},
    ]}})
    assert_validation(resp, RANGE_LIMIT)
    assert get(api, ltable, "ok") is None
    assert entries(api, ltable, "byH") == []


def test_transaction_over_the_limits(api, ltable):
    # A Put's item is checked with the request: ValidationException.
    resp = api("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": ltable, "Item": {"pk": S("ok"), "h": S("fine")}}},
        {"Put": {"TableName": ltable, "Item": {"pk": S("bad"), "h": S(H2049)}}},
    ]})
    assert_validation(resp, HASH_LIMIT)
    # An Update's item is known once applied: the action's ValidationError cancels it.
    resp = api("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": ltable, "Item": {"pk": S("ok"), "h": S("fine")}}},
        {"Update": {"TableName": ltable, "Key": {"pk": S("bad")},
                    "UpdateExpression": "SET g = :g, r = :r",
                    "ExpressionAttributeValues": {":g": S("g"), ":r": S(R1025)}}},
    ]})
    assert_canceled(resp, [NONE, vreason(RANGE_LIMIT)])
    assert get(api, ltable, "ok") is None and get(api, ltable, "bad") is None
    assert entries(api, ltable, "byH") == []


# =========================================================================== backfill



def add_gsi(api, table, name, schema, **types):
    api.ok("UpdateTable", {"TableName": table, "AttributeDefinitions": defs(pk="S", **types),
                           "GlobalSecondaryIndexUpdates": [{"Create": index(name, schema)}]})
    return wait_gsi(api, table, name)


def test_backfill_leaves_out_empty_and_oversized_keys(api, make_table):
    table = make_table(("pk", "S"))
    items = {
        "ok": {"h": S("fine"), "g": S("g"), "r": S("r")},
        "at-limits": {"h": S(H2048), "g": S("g"), "r": S(R1024), "b": B(b"\x02" * 2048)},
        "empty-h": {"h": S(""), "g": S("g"), "r": S("")},
        "empty-b": {"b": B(b"")},
        "long-h": {"h": S(H2049), "g": S("g"), "r": S(R1025)},
        "long-b": {"b": B(b"\x02" * 2049)},
        "long-g": {"g": S(H2049), "r": S("r")},
    }
    for pk, attrs in items.items():
        api.ok("PutItem", {"TableName": table, "Item": dict({"pk": S(pk)}, **attrs)})
    by_h = add_gsi(api, table, "byH", ks("h"), h="S")
    by_gr = add_gsi(api, table, "byGR", ks("g", "|", "r"), g="S", r="S")
    by_b = add_gsi(api, table, "byB", ks("b"), b="B")
    assert entries(api, table, "byH") == ["at-limits", "ok"]
    assert entries(api, table, "byGR") == ["at-limits", "ok"]
    assert entries(api, table, "byB") == ["at-limits"]
    assert (by_h["ItemCount"], by_gr["ItemCount"], by_b["ItemCount"]) == (2, 2, 1)

    # The items left out stay out of the counts when they go, and enter the index once
    # their key value is valid.
    api.ok("DeleteItem", {"TableName": table, "Key": {"pk": S("empty-h")}})
    api.ok("UpdateItem", {"TableName": table, "Key": {"pk": S("long-h")},
                          "UpdateExpression": "SET h = :h REMOVE r",
                          "ExpressionAttributeValues": {":h": S("now-fine")}})
    assert entries(api, table, "byH") == ["at-limits", "long-h", "ok"]
    assert entries(api, table, "byGR") == ["at-limits", "ok"]
    described = api.ok("DescribeTable", {"TableName": table})["Table"]
    counts = {g["IndexName"]: g["ItemCount"] for g in described["GlobalSecondaryIndexes"]}
    assert counts == {"byH": 3, "byGR": 2, "byB": 1}
