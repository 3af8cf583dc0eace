"""Scan on tables: whole-table order, parallel scan (segments, ExclusiveStartKey across segments and
the segment errors) and hash-only tables. With test_query.py, test_read_options.py and
test_pagination.py this covers Query and Scan on tables."""

from decimal import Decimal

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_validation,
    unique_name,
)

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("query_data")

from query_data import (
    MANY_PARTITIONS,
    MANY_PER_PARTITION,
    N,
    S,
    START_INVALID,
    START_SCHEMA,
    all_items,
    full_scan,
    key_tuple,
    many_item,
    ok,
    query_pages,
    scan,
)

pytest_plugins = ["query_fixtures"]


# --------------------------------------------------------------------------- scan, parallel scan


def test_scan_whole_table(api, tables):
    t = tables["many"]
    items = full_scan(api, t)
    expected = {(f"m{p:03d}", Decimal(i)) for p in range(MANY_PARTITIONS)
                for i in range(MANY_PER_PARTITION)}
    keys = [key_tuple(i) for i in items]
    assert len(keys) == len(expected) and set(keys) == expected
    # Partitions are contiguous and in sort-key order inside.
    seen = []
    for pk, sk in keys:
        if not seen or seen[-1] != pk:
            assert pk not in seen, f"partition {pk} appears twice"
            seen.append(pk)
    for n in range(0, len(keys), MANY_PER_PARTITION):
        assert [sk for _, sk in keys[n:n + MANY_PER_PARTITION]] == list(range(MANY_PER_PARTITION))
    # The order is stable, and the same when paged.
    assert [key_tuple(i) for i in full_scan(api, t)] == keys
    assert [key_tuple(i) for i in full_scan(api, t, limit=37)] == keys
    assert [key_tuple(i) for i in full_scan(api, t, limit=1000)] == keys


def test_scan_items_are_whole(api, tables):
    items = full_scan(api, tables["many"], limit=300)
    assert all(i == many_item(int(i["p"]["N"]), int(i["sk"]["N"])) for i in items)


def test_scan_boto3_paginator(ddb, tables):
    paginator = ddb.get_paginator("scan")
    n = 0
    for page in paginator.paginate(TableName=tables["many"], Segment=1, TotalSegments=2,
                                   PaginationConfig={"PageSize": 99}):
        n += page["Count"]
    half = ddb.scan(TableName=tables["many"], Segment=0, TotalSegments=2, Select="COUNT")
    assert n + half["Count"] == MANY_PARTITIONS * MANY_PER_PARTITION


@pytest.mark.parametrize("total", [1, 3, 7, 16])
def test_parallel_scan_covers_every_item_once(api, tables, total):
    t = tables["many"]
    full = [key_tuple(i) for i in full_scan(api, t)]
    segments = []
    for s in range(total):
        items = full_scan(api, t, limit=37, Segment=s, TotalSegments=total)
        segments.append([key_tuple(i) for i in items])
    everything = [k for seg in segments for k in seg]
    assert len(everything) == len(set(everything)) == len(full)
    assert set(everything) == set(full)
    owner = {}
    for s, seg in enumerate(segments):
        for pk, _ in seg:
            assert owner.setdefault(pk, s) == s, f"partition {pk} in segments {owner[pk]}, {s}"
    # Segment i is a slice of the token order: the segments, in order, make the full scan.
    assert everything == full
    if total == 16:
        assert sum(1 for seg in segments if seg) >= 12  # 200 partitions spread out


def test_parallel_scan_single_page_per_segment_matches_paged(api, tables):
    t = tables["many"]
    for s in range(3):
        a = full_scan(api, t, Segment=s, TotalSegments=3)
        b = full_scan(api, t, limit=11, Segment=s, TotalSegments=3)
        assert a == b


def test_parallel_scan_last_segments_of_a_huge_split(api, tables):
    t = tables["many"]
    n = 0
    for s in (0, 999_999):
        n += ok(scan(api, t, Segment=s, TotalSegments=1_000_000, Select="COUNT"))["Count"]
    assert n <= MANY_PARTITIONS * MANY_PER_PARTITION


def first_key_by_segment(api, table, total):
    keys = {}
    for s in range(total):
        out = ok(scan(api, table, Segment=s, TotalSegments=total, Limit=1))
        if out["Items"]:
            keys[s] = out["LastEvaluatedKey"]
    return keys


@pytest.mark.parametrize("total", [3, 7])
def test_start_key_from_another_segment(api, tables, total):
    t = tables["many"]
    keys = first_key_by_segment(api, t, total)
    assert len(keys) >= 2
    for s, key in keys.items():
        other = (s + 1) % total
        resp = scan(api, t, Segment=other, TotalSegments=total, ExclusiveStartKey=key)
        assert_validation(resp, "The provided starting key is invalid: Invalid ExclusiveStartKey. "
                                "Please use ExclusiveStartKey with correct Segment. "
                                f"TotalSegments: {total} Segment: {other}")
        assert ok(scan(api, t, Segment=s, TotalSegments=total, ExclusiveStartKey=key,
                       Limit=1))["Count"] == 1


def test_start_key_any_segment_without_parallel_scan(api, tables):
    t = tables["many"]
    for key in first_key_by_segment(api, t, 3).values():
        assert ok(scan(api, t, ExclusiveStartKey=key, Limit=1))["Count"] == 1


SEGMENT_ERRORS = [
    ({"Segment": 0}, "The TotalSegments parameter is required but was not present in the request "
                     "when Segment parameter is present"),
    ({"TotalSegments": 4}, "The Segment parameter is required but was not present in the request "
                           "when parameter TotalSegments is present"),
    ({"Segment": 3, "TotalSegments": 3}, "The Segment parameter is zero-based and must be less "
                                         "than parameter TotalSegments: Segment: 3 is not less "
                                         "than TotalSegments: 3"),
    ({"Segment": 10, "TotalSegments": 1}, "The Segment parameter is zero-based and must be less "
                                          "than parameter TotalSegments: Segment: 10 is not less "
                                          "than TotalSegments: 1"),
    ({"Segment": -1, "TotalSegments": 2},
     COR_PREFIX + "Value '-1' at 'segment' failed to satisfy constraint: Member must have value "
                  "greater than or equal to 0"),
    ({"Segment": 1000000, "TotalSegments": 1000000},
     COR_PREFIX + "Value '1000000' at 'segment' failed to satisfy constraint: Member must have "
                  "value less than or equal to 999999"),
    ({"Segment": 0, "TotalSegments": 0},
     COR_PREFIX + "Value '0' at 'totalSegments' failed to satisfy constraint: Member must have "
                  "value greater than or equal to 1"),
    ({"Segment": 0, "TotalSegments": 1000001},
     COR_PREFIX + "Value '1000001' at 'totalSegments' failed to satisfy constraint: Member must "
                  "have value less than or equal to 1000000"),
]


@pytest.mark.parametrize("extra,message", SEGMENT_ERRORS,
                         ids=[str(i) for i in range(len(SEGMENT_ERRORS))])
def test_segment_errors(api, tables, extra, message):
    assert_validation(scan(api, tables["many"], **extra), message)


def test_segment_errors_on_missing_table_are_validation_first(api):
    resp = scan(api, unique_name("qs-missing"), Segment=0)
    assert_validation(resp, "The TotalSegments parameter is required but was not present in the "
                            "request when Segment parameter is present")


def test_hash_only_table_keys(api, tables):
    t = tables["hash"]
    pages = query_pages(api, {"TableName": t, "Limit": 2}, op="Scan")
    assert sorted(i["pk"]["S"] for i in all_items(pages)) == [f"h{i}" for i in range(5)]
    for page in pages[:-1]:
        assert page["LastEvaluatedKey"] == {"pk": page["Items"][-1]["pk"]}
    assert_validation(scan(api, t, ExclusiveStartKey={"pk": S("h1"), "sk": N(1)}), START_INVALID)
    assert_validation(scan(api, t, ExclusiveStartKey={"pk": N(1)}), START_SCHEMA)
