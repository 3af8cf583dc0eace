"""Query and Scan on indexes: key-condition rules of multi-attribute GSI keys, ordering component by
component, paging and ExclusiveStartKey, projections, Select, filters, consistent reads, LSIs and
parallel scan. With the other test_index_*.py modules this covers secondary indexes."""

import random
import re

import pytest

from index_helpers import (
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
    create_table_args,
    normalize_item,
    unique_name,
    wait_table_active,
)

START_INVALID = "The provided starting key is invalid"
GSI_CONSISTENT = "Consistent reads are not supported on global secondary indexes"
FILTER_KEY = "Filter Expression can only contain non-primary key attributes: Primary key attribute: "


# =========================================================================== Query (GSI, LSI)

# Table pk S / sk N. GSI "mix": HASH tenant S, rgn N | RANGE cat S, score N (ALL).
# GSI "keyso": same key, KEYS_ONLY. GSI "incg": HASH tenant | RANGE score, INCLUDE [inc].
# GSI "deep": HASH tenant | RANGE ra S, rb N, rc S, rd N (for key-condition rule errors).
# LSI "bylsk": pk | lsk N, INCLUDE [inc].
MIX_KEY = ["tenant", "rgn", "cat", "score"]
TABLE_KEY = ["pk", "sk"]

# The (t1, 1) partition of "mix", in DynamoDB's order: cat by UTF-8 bytes, then score
# numerically, then (tie) by the table key.
P_ROWS = [
    ("i10", 1, "B", "5"),
    ("i01", 1, "a", "-10"),
    ("i02", 1, "a", "-1.5"),
    ("i13", 1, "a", "-1"),
    ("i03", 1, "a", "0"),
    ("i04", 1, "a", "2"),
    ("i05", 1, "a", "10"),
    ("i06", 1, "ab", "-100"),
    ("i07", 1, "b", "-3"),
    ("i08", 1, "b", "7"),
    ("i08", 2, "b", "7"),
    ("i09", 1, "b", "7"),
    ("i14", 1, "b", "70"),
    ("i11", 1, "c", "-0.5"),
    ("i12", 1, "c", "100"),
]


def _mix_items():
    items = []
    for pk, sk, cat, score in P_ROWS:
        items.append({"pk": S(pk), "sk": N(sk), "tenant": S("t1"), "rgn": N(1), "cat": S(cat),
                      "score": N(score), "inc": S("inc-" + pk), "misc": S("o")})
    # Other composite partitions.
    items += [
        {"pk": S("d1"), "sk": N(1), "tenant": S("t1"), "rgn": N(2), "cat": S("a"), "score": N(0)},
        {"pk": S("d2"), "sk": N(1), "tenant": S("t2"), "rgn": N(1), "cat": S("a"), "score": N(0)},
        {"pk": S("d3"), "sk": N(1), "tenant": S("t1"), "rgn": N(-1), "cat": S("a"),
         "score": N(1)},
        {"pk": S("d4"), "sk": N(1), "tenant": S("t"), "rgn": N(11), "cat": S("a"),
         "score": N(1)},
    ]
    # Sparse in the (t1, 1) partition of "mix" (missing cat or score).
    items += [
        {"pk": S("s1"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "cat": S("a")},
        {"pk": S("s2"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "score": N(0)},
    ]
    # LSI partition "L": lsk order with a tie (sk breaks it) and one item without lsk.
    for sk, lsk in [(1, "5"), (2, "-2"), (3, "5"), (4, "0"), (5, "3.5"), (6, None), (7, "-20")]:
        it = {"pk": S("L"), "sk": N(sk), "inc": S(f"inc{sk}"), "misc": S(f"misc{sk}")}
        if lsk is not None:
            it["lsk"] = N(lsk)
        items.append(it)
    return items


MIX_ITEMS = _mix_items()
P_ORDER = [(pk, str(sk)) for pk, sk, _, _ in P_ROWS]


@pytest.fixture(scope="module")
def _qstate(server):
    state = {"generation": None, "name": None}
    yield state
    if state["name"]:
        server.api()("DeleteTable", {"TableName": state["name"]})


@pytest.fixture
def qt(server, api, _qstate):
    """The loaded module-wide query table (rebuilt if the shared server was restarted)."""
    if _qstate["generation"] != server.generation or _qstate["name"] is None:
        name = unique_name("ix-q")
        args = create_table_args(
            name, ("pk", "S"), ("sk", "N"),
            AttributeDefinitions=defs(pk="S", sk="N", tenant="S", rgn="N", cat="S", score="N",
                                      lsk="N", ra="S", rb="N", rc="S", rd="N"),
            LocalSecondaryIndexes=[index("bylsk", ks("pk", "|", "lsk"), "INCLUDE", ["inc"])],
            GlobalSecondaryIndexes=[
                index("mix", ks("tenant", "rgn", "|", "cat", "score")),
                index("keyso", ks("tenant", "rgn", "|", "cat", "score"), "KEYS_ONLY"),
                index("incg", ks("tenant", "|", "score"), "INCLUDE", ["inc"]),
                index("deep", ks("tenant", "|", "ra", "rb", "rc", "rd")),
            ])
        api.ok("CreateTable", args)
        wait_table_active(server.client(), name)
        shuffled = list(MIX_ITEMS)
        random.Random(7).shuffle(shuffled)
        for it in shuffled:
            api.ok("PutItem", {"TableName": name, "Item": it})
        _qstate.update(generation=server.generation, name=name)
    return _qstate["name"]


def item_by_key(pk, sk):
    for it in MIX_ITEMS:
        if it["pk"]["S"] == pk and it["sk"]["N"] == str(sk):
            return it
    raise KeyError((pk, sk))


def keys_of(items):
    return [(i["pk"]["S"], i["sk"]["N"]) for i in items]


def mix_query(api, qt, kce, values=None, names=None, index_name="mix", **extra):
    vals = {":t": S("t1"), ":r": N(1)}
    vals.update(values or {})
    body = {"TableName": qt, "IndexName": index_name, "KeyConditionExpression": kce}
    body.update(extra)
    text = kce + " " + body.get("FilterExpression", "")

    def used(k):
        return re.search(re.escape(k) + r"(?![A-Za-z0-9_])", text) is not None

    body["ExpressionAttributeValues"] = {k: v for k, v in vals.items() if used(k)}
    if names:
        body["ExpressionAttributeNames"] = {k: v for k, v in names.items() if used(k)}
    return body


def P_where(pred):
    return [(pk, str(sk)) for pk, sk, cat, score in P_ROWS if pred(cat, float(score))]


HASH = "tenant = :t AND rgn = :r"


@pytest.mark.parametrize("cond, values, expected", [
    ("", {}, P_where(lambda c, s: True)),
    (" AND cat = :c", {":c": S("b")}, P_where(lambda c, s: c == "b")),
    (" AND cat > :c", {":c": S("a")}, P_where(lambda c, s: c > "a")),
    (" AND cat <= :c", {":c": S("ab")}, P_where(lambda c, s: c <= "ab")),
    (" AND begins_with(cat, :c)", {":c": S("a")}, P_where(lambda c, s: c.startswith("a"))),
    (" AND cat BETWEEN :c1 AND :c2", {":c1": S("ab"), ":c2": S("b")},
     P_where(lambda c, s: "ab" <= c <= "b")),
    (" AND cat = :c AND score = :s", {":c": S("b"), ":s": N(7)},
     P_where(lambda c, s: c == "b" and s == 7)),
    (" AND cat = :c AND score > :s", {":c": S("a"), ":s": N("-1.5")},
     P_where(lambda c, s: c == "a" and s > -1.5)),
    (" AND cat = :c AND score >= :s", {":c": S("a"), ":s": N("-1.5")},
     P_where(lambda c, s: c == "a" and s >= -1.5)),
    (" AND cat = :c AND score < :s", {":c": S("a"), ":s": N(0)},
     P_where(lambda c, s: c == "a" and s < 0)),
    (" AND cat = :c AND score <= :s", {":c": S("a"), ":s": N(-1)},
     P_where(lambda c, s: c == "a" and s <= -1)),
    (" AND cat = :c AND score BETWEEN :s1 AND :s2", {":c": S("a"), ":s1": N(-2), ":s2": N(2)},
     P_where(lambda c, s: c == "a" and -2 <= s <= 2)),
    (" AND cat = :c AND score BETWEEN :s1 AND :s2", {":c": S("b"), ":s1": N(7), ":s2": N(7)},
     P_where(lambda c, s: c == "b" and s == 7)),
])
@pytest.mark.parametrize("forward", [True, False])
def test_gsi_query_conditions_and_order(api, qt, cond, values, expected, forward):
    body = mix_query(api, qt, HASH + cond, values, ScanIndexForward=forward)
    r = api.ok("Query", body)
    want = expected if forward else list(reversed(expected))
    assert keys_of(r["Items"]) == want
    assert r["Count"] == len(want) and r["ScannedCount"] == len(want)
    assert "LastEvaluatedKey" not in r
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, sk)) for pk, sk in want]


@pytest.mark.parametrize("kce", [
    "rgn = :r AND tenant = :t",
    "score > :s AND cat = :c AND rgn = :r AND tenant = :t",
    "cat = :c AND tenant = :t AND score > :s AND rgn = :r",
    "(tenant = :t) AND (rgn = :r) AND (cat = :c) AND (score > :s)",
    "#t = :t AND #r = :r AND #c = :c AND #s > :s",
    ":t = tenant AND :r = rgn AND :c = cat AND :s < score",
])
def test_gsi_query_clause_order_irrelevant(api, qt, kce):
    names = {k: v for k, v in {"#t": "tenant", "#r": "rgn", "#c": "cat", "#s": "score"}.items()
             if k in kce}
    values = {k: v for k, v in {":c": S("a"), ":s": N(-1)}.items() if k in kce}
    r = api.ok("Query", mix_query(api, qt, kce, values, names or None))
    if ":c" in kce:
        assert keys_of(r["Items"]) == P_where(lambda c, s: c == "a" and s > -1)
    else:
        assert keys_of(r["Items"]) == P_ORDER


def test_gsi_query_other_partitions(api, qt):
    for t, reg, want in [("t1", 2, [("d1", "1")]), ("t2", 1, [("d2", "1")]),
                         ("t1", -1, [("d3", "1")]), ("t", 11, [("d4", "1")]), ("t1", 3, [])]:
        r = api.ok("Query", mix_query(api, qt, HASH, {":t": S(t), ":r": N(reg)}))
        assert keys_of(r["Items"]) == want, (t, reg)


def test_gsi_query_number_component_forms_equal(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH + " AND cat = :c AND score = :s",
                                  {":r": N("1.0E0"), ":c": S("a"), ":s": N("-1.50")}))
    assert keys_of(r["Items"]) == [("i02", "1")]


def test_gsi_query_legacy_key_conditions(api, qt):
    conds = {
        "tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]},
        "rgn": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
        "cat": {"ComparisonOperator": "EQ", "AttributeValueList": [S("a")]},
        "score": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [N(-1.5), N(2)]},
    }
    r = api.ok("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    assert keys_of(r["Items"]) == P_where(lambda c, s: c == "a" and -1.5 <= s <= 2)
    conds2 = {k: conds[k] for k in ("tenant", "rgn")}
    conds2["cat"] = {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [S("a")]}
    r = api.ok("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds2,
                         "ScanIndexForward": False})
    assert keys_of(r["Items"]) == list(reversed(P_where(lambda c, s: c.startswith("a"))))


def test_gsi_query_legacy_key_conditions_gap(api, qt):
    conds = {
        "tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]},
        "rgn": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
        "score": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
    }
    resp = api("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    assert_validation(resp, "RANGE key attributes cat must have equality conditions specified in "
                      "the query because a condition is present on key attribute score")


def test_gsi_query_legacy_missing_hash(api, qt):
    conds = {"tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]}}
    resp = api("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    # [open] exact wording: the text names HASH and equality.
    assert_validation(resp)
    assert "HASH" in resp.message and "equality" in resp.message, resp.message


@pytest.mark.parametrize("kce, values", [
    ("tenant = :t", {}),
    ("rgn = :r", {}),
    ("tenant = :t AND cat = :c", {":c": S("a")}),
    ("tenant = :t AND rgn > :r", {}),
    ("tenant = :t AND rgn BETWEEN :r AND :r2", {":r2": N(5)}),
    ("begins_with(tenant, :t) AND rgn = :r", {}),
    ("tenant < :t AND rgn = :r AND cat = :c", {":c": S("a")}),
])
def test_gsi_query_hash_components_need_equality(api, qt, kce, values):
    resp = api("Query", mix_query(api, qt, kce, values))
    # [open] exact wording: the text names HASH and equality.
    assert_validation(resp)
    assert "HASH" in resp.message and "equality" in resp.message, resp.message


def rng_msg(a, b):
    return (f"RANGE key attributes {a} must have equality conditions specified in the query "
            f"because a condition is present on key attribute {b}")


@pytest.mark.parametrize("index_name, kce, values, message", [
    ("mix", HASH + " AND score = :s", {":s": N(1)}, rng_msg("cat", "score")),
    ("mix", HASH + " AND score > :s", {":s": N(1)}, rng_msg("cat", "score")),
    ("mix", HASH + " AND cat > :c AND score = :s", {":c": S("a"), ":s": N(1)},
     rng_msg("cat", "score")),
    ("mix", HASH + " AND begins_with(cat, :c) AND score = :s", {":c": S("a"), ":s": N(1)},
     rng_msg("cat", "score")),
    ("mix", HASH + " AND cat BETWEEN :c AND :c2 AND score <= :s",
     {":c": S("a"), ":c2": S("b"), ":s": N(1)}, rng_msg("cat", "score")),
    ("deep", "tenant = :t AND ra = :a AND rc = :c", {":a": S("x"), ":c": S("y")},
     rng_msg("rb", "rc")),
    ("deep", "tenant = :t AND ra = :a AND rb > :b AND rc = :c",
     {":a": S("x"), ":b": N(1), ":c": S("y")}, rng_msg("rb", "rc")),
    ("deep", "tenant = :t AND rb = :b", {":b": N(1)}, rng_msg("ra", "rb")),
    ("deep", "tenant = :t AND ra = :a AND rb = :b AND rd = :d",
     {":a": S("x"), ":b": N(1), ":d": N(2)}, rng_msg("rc", "rd")),
])
def test_gsi_query_range_prefix_rules(api, qt, index_name, kce, values, message):
    vals = dict(values)
    if index_name == "deep":
        body = {"TableName": qt, "IndexName": "deep", "KeyConditionExpression": kce,
                "ExpressionAttributeValues": dict({":t": S("t1")}, **vals)}
    else:
        body = mix_query(api, qt, kce, vals)
    assert_validation(api("Query", body), message)


def test_gsi_query_two_range_operators(api, qt):
    resp = api("Query", mix_query(api, qt, HASH + " AND cat > :c AND score > :s",
                                  {":c": S("a"), ":s": N(1)}))
    # [open] exact wording: probably the same sentence naming cat and score.
    assert_validation(resp)
    assert re.search("RANGE.*equality", resp.message), resp.message


def test_gsi_query_deep_prefixes_accepted(api, qt):
    for kce, vals in [
        ("tenant = :t AND ra = :a AND rb = :b AND rc = :c AND rd > :d",
         {":a": S("x"), ":b": N(1), ":c": S("y"), ":d": N(0)}),
        ("tenant = :t AND ra = :a AND rb = :b AND begins_with(rc, :c)",
         {":a": S("x"), ":b": N(1), ":c": S("y")}),
        ("tenant = :t AND ra BETWEEN :a AND :b", {":a": S("x"), ":b": S("y")}),
    ]:
        r = api.ok("Query", {"TableName": qt, "IndexName": "deep", "KeyConditionExpression": kce,
                             "ExpressionAttributeValues": dict({":t": S("t1")}, **vals)})
        assert r["Count"] == 0 and r["Items"] == []


def test_gsi_query_component_value_type_mismatch(api, qt):
    resp = api("Query", mix_query(api, qt, HASH, {":r": S("1")}))
    assert_validation(resp, INVALID + "Condition parameter type does not match schema type")
    resp = api("Query", mix_query(api, qt, HASH + " AND cat = :c", {":c": N(1)}))
    assert_validation(resp, INVALID + "Condition parameter type does not match schema type")


@pytest.mark.parametrize("attr", ["tenant", "rgn", "cat", "score"])
def test_gsi_query_filter_on_index_component(api, qt, attr):
    body = mix_query(api, qt, HASH, {":x": S("zz")}, {"#a": attr},
                     FilterExpression="#a <> :x")
    assert_validation(api("Query", body), FILTER_KEY + attr)


def test_gsi_query_filter_on_table_key_allowed(api, qt):
    body = mix_query(api, qt, HASH, {":p": S("i08")}, FilterExpression="pk = :p")
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == [("i08", "1"), ("i08", "2")]
    assert r["Count"] == 2 and r["ScannedCount"] == len(P_ROWS)


def test_gsi_query_consistent_read(api, qt):
    assert_validation(api("Query", mix_query(api, qt, HASH, ConsistentRead=True)), GSI_CONSISTENT)
    assert api.ok("Query", mix_query(api, qt, HASH, ConsistentRead=False))["Count"] == len(P_ROWS)


def test_gsi_scan_consistent_read(api, qt):
    assert_validation(api("Scan", {"TableName": qt, "IndexName": "mix", "ConsistentRead": True}),
                      GSI_CONSISTENT)


def test_unknown_index(api, qt):
    assert_validation(api("Query", mix_query(api, qt, HASH, index_name="nope")),
                      "The table does not have the specified index: nope")
    assert_validation(api("Scan", {"TableName": qt, "IndexName": "nope"}),
                      "The table does not have the specified index: nope")


@pytest.mark.parametrize("limit", [1, 2, 4, 5, 15, 16])
@pytest.mark.parametrize("forward", [True, False])
def test_gsi_query_paging(api, qt, limit, forward):
    items, pages = query_pages(api, mix_query(api, qt, HASH, ScanIndexForward=forward), limit)
    want = P_ORDER if forward else list(reversed(P_ORDER))
    assert keys_of(items) == want
    for p in pages:
        assert p["Count"] <= limit
        if "LastEvaluatedKey" in p:
            lek = p["LastEvaluatedKey"]
            assert set(lek) == set(MIX_KEY + TABLE_KEY)
            last = p["Items"][-1]
            assert lek == {k: last[k] for k in MIX_KEY + TABLE_KEY}
    # Full pages until the end (no look-ahead: a page that ends exactly on the last entry
    # may still carry a LastEvaluatedKey).
    assert all(p["Count"] == limit for p in pages[:-1])


def test_gsi_query_paging_with_range_condition(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c AND score > :s", {":c": S("a"), ":s": N(-5)})
    items, pages = query_pages(api, body, 2)
    assert keys_of(items) == P_where(lambda c, s: c == "a" and s > -5)
    assert len(pages) >= 2


def test_gsi_query_paging_through_ties(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c AND score = :s", {":c": S("b"), ":s": N(7)})
    items, pages = query_pages(api, body, 1)
    assert keys_of(items) == [("i08", "1"), ("i08", "2"), ("i09", "1")]
    assert pages[0]["LastEvaluatedKey"] == {"pk": S("i08"), "sk": N(1), "tenant": S("t1"),
                                            "rgn": N(1), "cat": S("b"), "score": N(7)}


def test_gsi_query_exclusive_start_key_not_existing(api, qt):
    # Resumes strictly after the position, even if nothing is stored there.
    start = {"pk": S("i00"), "sk": N(0), "tenant": S("t1"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    r = api.ok("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start))
    assert keys_of(r["Items"]) == P_ORDER[P_ORDER.index(("i03", "1")):]


@pytest.mark.parametrize("drop, add", [
    ("score", None), ("cat", None), ("rgn", None), ("tenant", None), ("sk", None),
    ("pk", None), (None, "misc"),
])
def test_gsi_query_bad_exclusive_start_key(api, qt, drop, add):
    start = {"pk": S("i03"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    if drop:
        del start[drop]
    if add:
        start[add] = S("x")
    resp = api("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start))
    assert_validation(resp, START_INVALID)


def test_gsi_query_exclusive_start_key_outside_partition(api, qt):
    start = {"pk": S("d2"), "sk": N(1), "tenant": S("t2"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    assert_validation(api("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start)),
                      "The provided starting key is outside query boundaries based on provided "
                      "conditions")


def test_gsi_query_boto3_paginator(ddb, qt):
    pages = ddb.get_paginator("query").paginate(
        TableName=qt, IndexName="mix", KeyConditionExpression="tenant = :t AND #r = :r",
        ExpressionAttributeNames={"#r": "rgn"},
        ExpressionAttributeValues={":t": {"S": "t1"}, ":r": {"N": "1"}},
        PaginationConfig={"PageSize": 4})
    items = [i for p in pages for i in p["Items"]]
    assert keys_of(items) == P_ORDER


def test_gsi_keys_only_projection(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, index_name="keyso"))
    assert keys_of(r["Items"]) == P_ORDER
    for it in r["Items"]:
        assert set(it) == set(MIX_KEY + TABLE_KEY)
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in MIX_KEY + TABLE_KEY}
    r2 = api.ok("Query", mix_query(api, qt, HASH, index_name="keyso",
                                   Select="ALL_PROJECTED_ATTRIBUTES"))
    assert r2["Items"] == r["Items"]


@pytest.mark.parametrize("index_name", ["keyso", "incg"])
def test_gsi_select_all_attributes_not_all_projection(api, qt, index_name):
    kce = HASH if index_name == "keyso" else "tenant = :t"
    body = mix_query(api, qt, kce, index_name=index_name, Select="ALL_ATTRIBUTES")
    assert_validation(api("Query", body),
                      INVALID + f"Select type ALL_ATTRIBUTES is not supported for global secondary "
                      f"index {index_name} because its projection type is not ALL")
    assert_validation(api("Scan", {"TableName": qt, "IndexName": index_name,
                                   "Select": "ALL_ATTRIBUTES"}),
                      INVALID + f"Select type ALL_ATTRIBUTES is not supported for global secondary "
                      f"index {index_name} because its projection type is not ALL")


def test_gsi_select_all_attributes_on_all_projection(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, Select="ALL_ATTRIBUTES"))
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, sk)) for pk, sk in P_ORDER]


def test_gsi_include_projection(api, qt):
    body = {"TableName": qt, "IndexName": "incg", "KeyConditionExpression": "tenant = :t",
            "ExpressionAttributeValues": {":t": S("t1")}}
    r = api.ok("Query", body)
    # tenant t1 with a score: the P rows, s2 and d1, d3 — ordered by score, then table key.
    rows = [(pk, str(sk), float(score)) for pk, sk, _, score in P_ROWS]
    rows += [("s2", "1", 0.0), ("d1", "1", 0.0), ("d3", "1", 1.0)]
    want = [(pk, sk) for pk, sk, _ in sorted(rows, key=lambda r: (r[2], r[0], int(r[1])))]
    assert keys_of(r["Items"]) == want
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        expected = {k: full[k] for k in ("pk", "sk", "tenant", "score", "inc") if k in full}
        assert it == expected
    # A projection may name only what the GSI projects.
    r = api.ok("Query", dict(body, ProjectionExpression="pk, sk, inc"))
    assert keys_of(r["Items"]) == want
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in ("pk", "sk", "inc") if k in full}
    assert_validation(api("Query", dict(body, ProjectionExpression="pk, sk, misc, inc")),
                      INVALID + "Attribute misc is not projected into global secondary index incg")


def test_gsi_select_count(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, Select="COUNT"))
    assert "Items" not in r
    assert r["Count"] == len(P_ROWS) and r["ScannedCount"] == len(P_ROWS)


def test_gsi_query_filter_on_non_key(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c", {":c": S("a"), ":i": S("inc-i03")},
                     FilterExpression="inc <> :i")
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == [k for k in P_where(lambda c, s: c == "a") if k != ("i03", "1")]
    assert r["ScannedCount"] == r["Count"] + 1


LSI_ORDER = [("L", "7"), ("L", "2"), ("L", "4"), ("L", "5"), ("L", "1"), ("L", "3")]


@pytest.mark.parametrize("forward", [True, False])
def test_lsi_query_order(api, qt, forward):
    body = {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("L")}, "ScanIndexForward": forward}
    r = api.ok("Query", body)
    want = LSI_ORDER if forward else list(reversed(LSI_ORDER))
    assert keys_of(r["Items"]) == want
    # Default Select on an index: the projection (table key, index key, INCLUDE attributes).
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in ("pk", "sk", "lsk", "inc")}


def test_lsi_query_range_condition_and_paging(api, qt):
    body = {"TableName": qt, "IndexName": "bylsk",
            "KeyConditionExpression": "pk = :p AND lsk BETWEEN :a AND :b",
            "ExpressionAttributeValues": {":p": S("L"), ":a": N(-2), ":b": N(5)}}
    items, pages = query_pages(api, body, 2)
    assert keys_of(items) == LSI_ORDER[1:]
    lek = pages[0]["LastEvaluatedKey"]
    assert lek == {"pk": S("L"), "sk": N(4), "lsk": N(0)}


def test_lsi_select_all_attributes_fetches_from_table(api, qt):
    body = {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("L")}, "Select": "ALL_ATTRIBUTES"}
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == LSI_ORDER
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, int(sk))) for pk, sk in LSI_ORDER]
    # A projection naming an unprojected attribute fetches it too.
    del body["Select"]
    r = api.ok("Query", dict(body, ProjectionExpression="sk, misc"))
    assert r["Items"] == [{"sk": N(sk), "misc": S(f"misc{sk}")} for _, sk in LSI_ORDER]


def test_lsi_consistent_read_allowed(api, qt):
    r = api.ok("Query", {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("L")}, "ConsistentRead": True})
    assert keys_of(r["Items"]) == LSI_ORDER


def test_lsi_filter_on_index_key(api, qt):
    resp = api("Query", {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
                         "FilterExpression": "lsk > :z",
                         "ExpressionAttributeValues": {":p": S("L"), ":z": N(0)}})
    assert_validation(resp, FILTER_KEY + "lsk")


# =========================================================================== Scan on indexes

MIX_ALL = P_ORDER + [("d1", "1"), ("d2", "1"), ("d3", "1"), ("d4", "1")]


def test_gsi_scan(api, qt):
    items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "mix"})
    assert sorted(keys_of(items)) == sorted(MIX_ALL)
    # Within one composite partition the entries come in index order.
    p = [k for k, i in zip(keys_of(items), items)
         if i["tenant"] == S("t1") and i["rgn"] == N(1)]
    assert p == P_ORDER


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_gsi_scan_paging(api, qt, limit):
    items, pages = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "keyso"}, limit)
    assert sorted(keys_of(items)) == sorted(MIX_ALL)
    assert len(items) == len(set(keys_of(items)))
    for p in pages:
        if "LastEvaluatedKey" in p:
            assert set(p["LastEvaluatedKey"]) == set(MIX_KEY + TABLE_KEY)


def test_lsi_scan(api, qt):
    items, pages = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "bylsk"}, 4)
    assert keys_of(items) == LSI_ORDER
    assert set(pages[0]["LastEvaluatedKey"]) == {"pk", "sk", "lsk"}


@pytest.mark.parametrize("total", [3, 7])
@pytest.mark.parametrize("index_name", ["mix", "incg", "bylsk"])
def test_index_parallel_scan(api, qt, total, index_name):
    seen = []
    for seg in range(total):
        items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": index_name,
                                     "Segment": seg, "TotalSegments": total}, 3)
        seen += keys_of(items)
    everything, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": index_name})
    assert len(seen) == len(set(seen))
    assert sorted(seen) == sorted(keys_of(everything))
    expected = {"mix": len(MIX_ALL), "incg": len(P_ROWS) + 5, "bylsk": len(LSI_ORDER)}[index_name]
    assert len(seen) == expected


def test_gsi_parallel_scan_keeps_composite_partition_together(api, qt):
    total = 7
    segments_of_p = set()
    for seg in range(total):
        items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "mix",
                                     "Segment": seg, "TotalSegments": total})
        if any(i["tenant"] == S("t1") and i["rgn"] == N(1) for i in items):
            segments_of_p.add(seg)
    assert len(segments_of_p) == 1
