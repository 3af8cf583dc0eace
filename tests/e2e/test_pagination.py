"""Paging of Query and Scan: pages cut by Limit and by the 1 MB read, LastEvaluatedKey, and the
checks and resumption rules of ExclusiveStartKey. With test_query.py, test_read_options.py and
test_scan.py this covers Query and Scan on tables."""

import math

import pytest

from kumo_testlib import (
    assert_validation,
    item_size,
)

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("query_data")

from query_data import (
    B,
    BIG_COUNT,
    BOOL,
    CAP_ITEMS,
    FAT_COUNT,
    FILT_SIZE,
    N,
    S,
    SORT_TYPES,
    START_INVALID,
    START_OUTSIDE,
    START_PREDICATE,
    START_SCHEMA,
    all_items,
    fat_item,
    full_scan,
    key_of,
    key_tuple,
    ok,
    pk_eq,
    query,
    query_pages,
    scan,
)

pytest_plugins = ["query_fixtures"]

MB = 1024 * 1024


# --------------------------------------------------------------------------- pagination


def big_body(tables, **extra):
    return dict({"TableName": tables["big"], "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": S("big")}}, **extra)


@pytest.mark.parametrize("limit", [7, 500])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
def test_paginate_thousands_by_limit(api, tables, limit, forward):
    pages = query_pages(api, big_body(tables, Limit=limit, ScanIndexForward=forward))
    got = [int(i["sk"]["N"]) for i in all_items(pages)]
    expected = list(range(BIG_COUNT)) if forward else list(range(BIG_COUNT - 1, -1, -1))
    assert got == expected
    full, rest = divmod(BIG_COUNT, limit)
    for page in pages[:full]:
        assert page["Count"] == page["ScannedCount"] == limit
        assert page["LastEvaluatedKey"] == key_of(page["Items"][-1])
    if rest:
        assert len(pages) == full + 1
        assert pages[-1]["Count"] == rest
    else:
        # The last full page stops on Limit exactly at the end: it still carries a key, and
        # the next call returns nothing.
        assert len(pages) == full + 1
        assert pages[-1] == {"Items": [], "Count": 0, "ScannedCount": 0}
    assert "LastEvaluatedKey" not in pages[-1]


def test_boto3_paginator(ddb, tables):
    paginator = ddb.get_paginator("query")
    items = []
    for page in paginator.paginate(TableName=tables["big"], KeyConditionExpression="pk = :p",
                                   ExpressionAttributeValues={":p": S("big")},
                                   PaginationConfig={"PageSize": 1000}):
        items += page["Items"]
    assert [int(i["sk"]["N"]) for i in items] == list(range(BIG_COUNT))


def test_limit_stop_at_exact_end(api, tables):
    t = tables["misc"]
    body = {"TableName": t, "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("five")}, "Limit": 5}
    out = api.ok("Query", body)
    assert [i["sk"] for i in out["Items"]] == [N(i) for i in range(1, 6)]
    assert out["LastEvaluatedKey"] == {"pk": S("five"), "sk": N(5)}
    out = api.ok("Query", dict(body, ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}
    out = api.ok("Query", dict(body, Limit=6))
    assert out["Count"] == 5 and "LastEvaluatedKey" not in out
    # Backward.
    out = api.ok("Query", dict(body, ScanIndexForward=False))
    assert out["LastEvaluatedKey"] == {"pk": S("five"), "sk": N(1)}
    out = api.ok("Query", dict(body, ScanIndexForward=False,
                               ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_scan_limit_stop_at_exact_end(api, tables):
    t = tables["cap"]
    out = ok(scan(api, t, Limit=CAP_ITEMS))
    assert out["Count"] == CAP_ITEMS
    assert out["LastEvaluatedKey"] == key_of(out["Items"][-1])
    out = ok(scan(api, t, Limit=CAP_ITEMS, ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}
    out = ok(scan(api, t, Limit=CAP_ITEMS + 1))
    assert "LastEvaluatedKey" not in out


def test_filtered_pagination_totals(api, tables):
    for forward in (True, False):
        pages = query_pages(api, {
            "TableName": tables["misc"], "KeyConditionExpression": "pk = :p",
            "FilterExpression": "odd = :t", "Limit": 3, "ScanIndexForward": forward,
            "ExpressionAttributeValues": {":p": S("filt"), ":t": BOOL(True)}})
        got = [int(i["sk"]["N"]) for i in all_items(pages)]
        odd = list(range(1, FILT_SIZE, 2))
        assert got == (odd if forward else odd[::-1])
        assert sum(p["Count"] for p in pages) == 10
        assert sum(p["ScannedCount"] for p in pages) == FILT_SIZE
        assert len(pages) == 7


def check_megabyte_pages(pages, consistent=False):
    for page in pages[:-1]:
        # A page stops once 1 MB has been read: with ~100 KB items that is after 10 items
        # (stopping before crossing 1 MB) or 11 (stopping after the item that crosses it).
        assert page["Count"] == page["ScannedCount"] == len(page["Items"])
        assert len(page["Items"]) in (10, 11), len(page["Items"])
        assert page["LastEvaluatedKey"] == key_of(page["Items"][-1])
    for page in pages:
        read = sum(item_size(i) for i in page["Items"])
        assert sum(item_size(i) for i in page["Items"][:-1]) < MB
        units = max(1, math.ceil(read / 4096)) * (1.0 if consistent else 0.5)
        assert page["ConsumedCapacity"]["CapacityUnits"] == units


@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
@pytest.mark.parametrize("limit", [None, 100])
def test_query_megabyte_pages(api, tables, forward, limit):
    body = {"TableName": tables["fat"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("fat")}, "ScanIndexForward": forward,
            "ReturnConsumedCapacity": "TOTAL"}
    if limit:
        body["Limit"] = limit
    pages = query_pages(api, body)
    items = all_items(pages)
    expected = [fat_item("fat", i) for i in range(FAT_COUNT)]
    assert items == (expected if forward else expected[::-1])
    assert len(pages) == 3
    check_megabyte_pages(pages)


def test_scan_megabyte_pages(api, tables):
    pages = query_pages(api, {"TableName": tables["fat"], "ReturnConsumedCapacity": "TOTAL",
                              "ConsistentRead": True}, op="Scan")
    items = all_items(pages)
    expected = [fat_item("fat", i) for i in range(FAT_COUNT)]
    expected += [fat_item(f"fat{j}", i) for j in range(3) for i in range(4)]
    assert sorted(key_tuple(i) for i in items) == sorted(key_tuple(i) for i in expected)
    assert len(items) == len(expected)
    by_key = {key_tuple(i): i for i in expected}
    assert all(by_key[key_tuple(i)] == i for i in items)
    assert len(pages) == 4
    check_megabyte_pages(pages, consistent=True)


def test_megabyte_page_with_filter_and_count(api, tables):
    body = {"TableName": tables["fat"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("fat"), ":x": S("nothing")},
            "FilterExpression": "fill = :x", "Select": "COUNT"}
    pages = query_pages(api, body)
    assert len(pages) == 3
    assert [p["Count"] for p in pages] == [0, 0, 0]
    assert sum(p["ScannedCount"] for p in pages) == FAT_COUNT
    assert pages[0]["ScannedCount"] in (10, 11)
    assert "LastEvaluatedKey" in pages[0] and "LastEvaluatedKey" in pages[1]


# --------------------------------------------------------------------------- ExclusiveStartKey


START_KEY_ERRORS = [
    ({"pk": S("p")}, START_INVALID),
    ({"sk": N(1)}, START_INVALID),
    ({"pk": S("p"), "sk": N(1), "v": N(1)}, START_INVALID),
    ({"pk": S("p"), "other": N(1)}, START_INVALID),
    ({"pk": S("p"), "sk": S("1")}, START_SCHEMA),
    ({"pk": N(1), "sk": N(1)}, START_SCHEMA),
    ({"pk": S("p"), "sk": {"SS": ["1"]}}, START_SCHEMA),
    ({"pk": S("p"), "sk": {}}, START_INVALID + ": Supplied AttributeValue is empty, must contain "
                                               "exactly one of the supported datatypes"),
    ({"pk": S("p"), "sk": N("abc")}, "The parameter cannot be converted to a numeric value: abc"),
]


@pytest.mark.parametrize("op", ["Query", "Scan"])
@pytest.mark.parametrize("start,message", START_KEY_ERRORS,
                         ids=[str(i) for i in range(len(START_KEY_ERRORS))])
def test_start_key_shape_errors(api, tables, op, start, message):
    body = {"TableName": tables["N"], "ExclusiveStartKey": start}
    if op == "Query":
        body["KeyConditions"] = pk_eq("p")
    assert_validation(api(op, body), message)


def test_start_key_outside_query_boundaries(api, tables):
    resp = query(api, tables["N"], "pk = :p", {":p": S("p")},
                 ExclusiveStartKey={"pk": S("q"), "sk": N(1)})
    assert_validation(resp, START_OUTSIDE)
    resp = api("Query", {"TableName": tables["N"], "KeyConditions": pk_eq("p"),
                         "ExclusiveStartKey": {"pk": S("q"), "sk": N(1)}})
    assert_validation(resp, START_OUTSIDE)


@pytest.mark.parametrize("kce,values,sk", [
    ("sk > :a", {":a": N(5)}, N(1)),
    ("sk < :a", {":a": N(0)}, N(1)),
    ("sk BETWEEN :a AND :b", {":a": N(0), ":b": N(1)}, N(2)),
    ("sk >= :a", {":a": N(2)}, N("1.5")),
])
def test_start_key_outside_range_predicate(api, tables, kce, values, sk):
    resp = query(api, tables["N"], "pk = :p AND " + kce, dict({":p": S("p")}, **values),
                 ExclusiveStartKey={"pk": S("p"), "sk": sk})
    assert_validation(resp, START_PREDICATE)


def test_start_key_outside_begins_with_predicate(api, tables):
    resp = query(api, tables["S"], "pk = :p AND begins_with(sk, :a)", {":p": S("p"), ":a": S("a")},
                 ExclusiveStartKey={"pk": S("p"), "sk": S("b")})
    assert_validation(resp, START_PREDICATE)


@pytest.mark.parametrize("kind,start,forward,first", [
    ("N", "0.5", True, "1"),
    ("N", "0.5", False, "0.001"),
    ("N", "-1000", True, "-100"),
    ("N", "1E21", False, "100000000000000000000"),
    ("N", "1E21", True, None),
    ("N", "1", True, "1.5"),
    ("S", "aa", True, "aa!"),
    ("S", "aa", False, "a"),
    ("S", "\uffff", True, "😀"),
    ("B", b"\x80\x00\x00", True, b"\xff"),
    ("B", b"\x00\x00\x00", False, b"\x00\x00"),
])
def test_start_key_need_not_exist(api, tables, kind, start, forward, first):
    values, sort_key, _, canonical = SORT_TYPES[kind]
    written = {"N": N, "S": S, "B": B}[kind]
    out = ok(query(api, tables[kind], "pk = :p", {":p": S("p")}, ScanIndexForward=forward,
                   ExclusiveStartKey={"pk": S("p"), "sk": written(start)}))
    order = values if forward else values[::-1]
    if first is None:
        assert out["Items"] == []
    else:
        k = order.index(first)
        assert [i["sk"] for i in out["Items"]] == [canonical(v) for v in order[k:]]
    assert "LastEvaluatedKey" not in out


def test_start_key_inside_predicate_resumes(api, tables):
    out = ok(query(api, tables["N"], "pk = :p AND sk BETWEEN :a AND :b",
                   {":p": S("p"), ":a": N(-1), ":b": N(2)},
                   ExclusiveStartKey={"pk": S("p"), "sk": N("0.001")}))
    assert [i["sk"]["N"] for i in out["Items"]] == ["1", "1.5", "2"]


def test_scan_start_key_need_not_exist(api, tables):
    t = tables["many"]
    order = [key_tuple(i) for i in full_scan(api, t)]
    position = {k: n for n, k in enumerate(order)}
    # Existing partition, missing sort key between 2 and 3: resumes at (pk, 3).
    k = position[("m017", 3)]
    items = full_scan(api, t, ExclusiveStartKey={"pk": S("m017"), "sk": N("2.5")})
    assert [key_tuple(i) for i in items] == order[k:]
    # Missing partition: the rest is some suffix of the full order.
    items = [key_tuple(i) for i in full_scan(api, t, ExclusiveStartKey={"pk": S("zzz-none"),
                                                                        "sk": N(0)})]
    assert items == order[len(order) - len(items):]
