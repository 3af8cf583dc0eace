"""Read options of Query and Scan: filters (FilterExpression, QueryFilter, ScanFilter), projections,
Select, request checks common to both operations, and consumed capacity. With test_query.py,
test_pagination.py and test_scan.py this covers Query and Scan on tables."""

import pytest
from botocore.exceptions import ClientError

from kumo_testlib import (
    COR_PREFIX,
    assert_not_found,
    assert_validation,
    client_error,
    normalize_item,
    unique_name,
)

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("query_data")

from query_data import (
    BOOL,
    CAP_ITEMS,
    FILT_SIZE,
    N,
    S,
    cap_item,
    filt_item,
    key_tuple,
    legacy_key,
    ok,
    pk_eq,
    query,
    query_pages,
    scan,
)

pytest_plugins = ["query_fixtures"]

SELECT_ENUM = ("Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
               "ALL_PROJECTED_ATTRIBUTES]")


# --------------------------------------------------------------------------- filters


def filt_query(api, tables, **extra):
    return query(api, tables["misc"], "pk = :p", dict({":p": S("filt")},
                                                      **extra.pop("values", {})), **extra)


def test_filter_expression_count_below_scanned_count(api, tables):
    out = ok(filt_query(api, tables, FilterExpression="odd = :t", values={":t": BOOL(True)}))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in range(1, FILT_SIZE, 2)]
    assert (out["Count"], out["ScannedCount"]) == (10, 20)
    assert "LastEvaluatedKey" not in out


def test_filter_applies_after_limit(api, tables):
    out = ok(filt_query(api, tables, FilterExpression="odd = :t", values={":t": BOOL(True)},
                        Limit=5))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(1)),
                                                          normalize_item(filt_item(3))]
    assert (out["Count"], out["ScannedCount"]) == (2, 5)
    assert out["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(4)}


def test_fully_filtered_page_keeps_last_evaluated_key(api, tables):
    body = {"TableName": tables["misc"], "KeyConditionExpression": "pk = :p",
            "FilterExpression": "tag = :none",
            "ExpressionAttributeValues": {":p": S("filt"), ":none": S("none")}, "Limit": 4}
    pages = query_pages(api, body)
    assert len(pages) == 6  # 5 full pages, the last one stopped by Limit at the exact end
    for i, page in enumerate(pages[:5]):
        assert page["Items"] == []
        assert (page["Count"], page["ScannedCount"]) == (0, 4)
        assert page["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(4 * i + 3)}
    assert pages[5] == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_fully_filtered_scan_page_keeps_last_evaluated_key(api, tables):
    out = ok(scan(api, tables["misc"], Limit=3, ScanFilter={
        "num": {"ComparisonOperator": "GT", "AttributeValueList": [N(1000)]}}))
    assert out["Items"] == []
    assert (out["Count"], out["ScannedCount"]) == (0, 3)
    assert set(out["LastEvaluatedKey"]) == {"pk", "sk"}


@pytest.mark.parametrize("query_filter,conditional,expected", [
    ({"num": ("GE", [N(10)])}, None, range(10, 20)),
    ({"num": ("LT", [N(2)]), "tag": ("EQ", [S("t3")])}, "OR", [0, 1, 3, 7, 11, 15, 19]),
    ({"num": ("LT", [N(12)]), "tag": ("EQ", [S("t3")])}, "AND", [3, 7, 11]),
    ({"num": ("BETWEEN", [N(3), N(5)])}, None, [3, 4, 5]),
    ({"tag": ("IN", [S("t0"), S("t2")])}, None, range(0, 20, 2)),
    ({"tag": ("NE", [S("t0")])}, None, [i for i in range(20) if i % 4]),
    ({"tag": ("BEGINS_WITH", [S("t1")])}, None, range(1, 20, 4)),
    ({"ss": ("CONTAINS", [S("s7")])}, None, [7]),
    ({"ss": ("NOT_CONTAINS", [S("s7")])}, None, [i for i in range(20) if i != 7]),
    ({"nothere": ("NULL", [])}, None, range(20)),
    ({"nothere": ("NOT_NULL", [])}, None, []),
])
def test_query_filter(api, tables, query_filter, conditional, expected):
    body = {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
            "QueryFilter": legacy_key(**query_filter)}
    if conditional:
        body["ConditionalOperator"] = conditional
    out = api.ok("Query", body)
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in expected]
    assert (out["Count"], out["ScannedCount"]) == (len(list(expected)), FILT_SIZE)


def test_scan_filter(api, tables):
    t = tables["misc"]
    total = 5 + FILT_SIZE
    out = ok(scan(api, t, ScanFilter=legacy_key(pk=("EQ", [S("filt")]), num=("GE", [N(15)]))))
    assert sorted(key_tuple(i) for i in out["Items"]) == [("filt", i) for i in range(15, 20)]
    assert (out["Count"], out["ScannedCount"]) == (5, total)
    out = ok(scan(api, t, ScanFilter=legacy_key(pk=("EQ", [S("five")]), num=("GE", [N(15)])),
                  ConditionalOperator="OR"))
    assert sorted(key_tuple(i) for i in out["Items"]) == (
        [("filt", i) for i in range(15, 20)] + [("five", i) for i in range(1, 6)])
    assert (out["Count"], out["ScannedCount"]) == (10, total)


def test_scan_filter_expression_may_use_key_attributes(api, tables):
    out = ok(scan(api, tables["misc"], FilterExpression="pk = :p AND sk < :n",
                  ExpressionAttributeValues={":p": S("five"), ":n": N(3)}))
    assert sorted(key_tuple(i) for i in out["Items"]) == [("five", 1), ("five", 2)]
    assert (out["Count"], out["ScannedCount"]) == (2, 5 + FILT_SIZE)


@pytest.mark.parametrize("filt,names,attr", [
    ("sk > :n", None, "sk"),
    ("pk = :p2", None, "pk"),
    ("#k > :n", {"#k": "sk"}, "sk"),
    ("num > :n AND attribute_exists(sk)", None, "sk"),
    ("begins_with(pk, :p2) OR num > :n", None, "pk"),
])
def test_filter_on_key_attribute_in_query(api, tables, filt, names, attr):
    values = {":p": S("filt")}
    if ":n" in filt:
        values[":n"] = N(1)
    if ":p2" in filt:
        values[":p2"] = S("f")
    resp = query(api, tables["misc"], "pk = :p", values, names, FilterExpression=filt)
    assert_validation(resp, "Filter Expression can only contain non-primary key attributes: "
                            f"Primary key attribute: {attr}")


@pytest.mark.parametrize("attr", ["sk", "pk"])
def test_query_filter_on_key_attribute(api, tables, attr):
    resp = api("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                         "QueryFilter": {attr: {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, "QueryFilter can only contain non-primary key attributes: "
                            f"Primary key attribute: {attr}")


def test_filter_syntax_error(api, tables):
    resp = filt_query(api, tables, FilterExpression="num >")
    assert_validation(resp, 'Invalid FilterExpression: Syntax error; token: "<EOF>", near: ">"')


def test_filter_expression_errors(api, tables):
    resp = filt_query(api, tables, FilterExpression="num = :missing")
    assert_validation(resp, "Invalid FilterExpression: An expression attribute value used in "
                            "expression is not defined; attribute value: :missing")
    resp = filt_query(api, tables, FilterExpression="num = :n", values={":n": N(1)},
                      names={"#unused": "x"})
    assert_validation(resp, "Value provided in ExpressionAttributeNames unused in expressions: "
                            "keys: {#unused}")
    resp = scan(api, tables["misc"], FilterExpression="")
    assert_validation(resp, "Invalid FilterExpression: The expression can not be empty;")


# --------------------------------------------------------------------------- projections, Select


def test_projection_expression(api, tables):
    out = ok(filt_query(api, tables, ProjectionExpression="num, m.x, #t, l[2]",
                        names={"#t": "tag"}, Limit=3))
    assert out["Items"] == [{"num": N(i), "m": {"M": {"x": N(i)}}, "tag": S(f"t{i % 4}"),
                             "l": {"L": [S("l2")]}} for i in range(3)]
    assert (out["Count"], out["ScannedCount"]) == (3, 3)
    assert out["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(2)}


def test_projection_of_missing_attribute_keeps_empty_items(api, tables):
    out = ok(filt_query(api, tables, ProjectionExpression="nothere"))
    assert out["Items"] == [{}] * FILT_SIZE
    assert out["Count"] == FILT_SIZE


def test_scan_projection_expression(api, tables):
    out = ok(scan(api, tables["misc"], ProjectionExpression="sk, m.y",
                  FilterExpression="pk = :p AND num < :n",
                  ExpressionAttributeValues={":p": S("filt"), ":n": N(2)}))
    assert sorted(out["Items"], key=lambda i: i["sk"]["N"]) == [
        {"sk": N(0), "m": {"M": {"y": S("why")}}}, {"sk": N(1), "m": {"M": {"y": S("why")}}}]


def test_attributes_to_get(api, tables):
    out = api.ok("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                           "AttributesToGet": ["tag", "sk", "nothere"], "Limit": 2})
    assert out["Items"] == [{"tag": S("t0"), "sk": N(0)}, {"tag": S("t1"), "sk": N(1)}]
    out = ok(scan(api, tables["misc"], AttributesToGet=["num"],
                  ScanFilter=legacy_key(pk=("EQ", [S("filt")]), num=("LT", [N(2)]))))
    assert sorted(out["Items"], key=lambda i: i["num"]["N"]) == [{"num": N(0)}, {"num": N(1)}]


def test_select_specific_and_all_attributes(api, tables):
    out = ok(filt_query(api, tables, Select="SPECIFIC_ATTRIBUTES", ProjectionExpression="num",
                        Limit=2))
    assert out["Items"] == [{"num": N(0)}, {"num": N(1)}]
    out = api.ok("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                           "Select": "SPECIFIC_ATTRIBUTES", "AttributesToGet": ["num"], "Limit": 1})
    assert out["Items"] == [{"num": N(0)}]
    out = ok(filt_query(api, tables, Select="ALL_ATTRIBUTES", Limit=2))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in range(2)]


def test_select_count(api, tables):
    out = ok(filt_query(api, tables, Select="COUNT"))
    assert out == {"Count": FILT_SIZE, "ScannedCount": FILT_SIZE}
    out = ok(filt_query(api, tables, Select="COUNT", FilterExpression="odd = :t",
                        values={":t": BOOL(True)}, Limit=7))
    assert out == {"Count": 3, "ScannedCount": 7,
                   "LastEvaluatedKey": {"pk": S("filt"), "sk": N(6)}}
    out = ok(scan(api, tables["misc"], Select="COUNT"))
    assert out == {"Count": 5 + FILT_SIZE, "ScannedCount": 5 + FILT_SIZE}


def test_select_count_boto3(ddb, tables):
    out = ddb.query(TableName=tables["misc"], KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": S("five")}, Select="COUNT")
    assert "Items" not in out
    assert (out["Count"], out["ScannedCount"]) == (5, 5)


SELECT_ERRORS = [
    ({"Select": "SPECIFIC_ATTRIBUTES"},
     "Must specify the AttributesToGet or ProjectionExpression when choosing to get "
     "SPECIFIC_ATTRIBUTES"),
    ({"Select": "ALL_ATTRIBUTES", "ProjectionExpression": "num"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "COUNT", "ProjectionExpression": "num"},
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ({"Select": "ALL_ATTRIBUTES", "AttributesToGet": ["num"]},
     "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "COUNT", "AttributesToGet": ["num"]},
     "Cannot specify the AttributesToGet when choosing to get only the Count"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES"},
     "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "num", "IndexName": "idx"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
]


def _select_body(table, extra, op):
    body = {"TableName": table}
    if op == "Query":
        body["KeyConditions"] = pk_eq("filt")
    body.update(extra)
    return body


@pytest.mark.parametrize("extra,message", SELECT_ERRORS,
                         ids=[str(i) for i in range(len(SELECT_ERRORS))])
def test_select_errors_query_prefixed(api, tables, extra, message):
    resp = api("Query", _select_body(tables["misc"], extra, "Query"))
    assert_validation(resp, COR_PREFIX + message)


@pytest.mark.parametrize("extra,message", SELECT_ERRORS,
                         ids=[str(i) for i in range(len(SELECT_ERRORS))])
def test_select_errors_scan_bare(api, tables, extra, message):
    resp = api("Scan", _select_body(tables["misc"], extra, "Scan"))
    assert_validation(resp, message)


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_select_bad_enum(api, tables, op):
    resp = api(op, _select_body(tables["misc"], {"Select": "count"}, op))
    assert_validation(resp, COR_PREFIX + "Value 'count' at 'select' failed to satisfy constraint: "
                      + SELECT_ENUM)


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_unknown_index(api, tables, op):
    body = _select_body(tables["misc"], {"IndexName": "nope"}, op)
    assert_validation(api(op, body), "The table does not have the specified index: nope")
    body["Select"] = "ALL_PROJECTED_ATTRIBUTES"
    assert_validation(api(op, body), "The table does not have the specified index: nope")


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_missing_table(api, ddb, op):
    name = unique_name("qs-missing")
    assert_not_found(api(op, _select_body(name, {}, op)))
    with pytest.raises(ClientError) as e:
        if op == "Query":
            ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": S("x")})
        else:
            ddb.scan(TableName=name)
    client_error(e, "ResourceNotFoundException", "Requested resource not found")


@pytest.mark.parametrize("op", ["Query", "Scan"])
@pytest.mark.parametrize("limit", [0, -1])
def test_limit_below_one(api, tables, op, limit):
    resp = api(op, _select_body(tables["misc"], {"Limit": limit}, op))
    # Query names the member as sent and not its value; Scan keeps the older form.
    value_at = "Value at 'Limit'" if op == "Query" else f"Value '{limit}' at 'limit'"
    assert_validation(resp, COR_PREFIX + value_at + " failed to satisfy constraint: Member must "
                                                    "have value greater than or equal to 1")


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_return_consumed_capacity_bad_enum(api, tables, op):
    resp = api(op, _select_body(tables["misc"], {"ReturnConsumedCapacity": "ALL"}, op))
    assert_validation(resp, COR_PREFIX + "Value 'ALL' at 'returnConsumedCapacity' failed to "
                                         "satisfy constraint: Member must satisfy enum value set: "
                                         "[INDEXES, TOTAL, NONE]")


# --------------------------------------------------------------------------- capacity


def cap_body(tables, **extra):
    return dict({"TableName": tables["cap"], "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": S("cap")}}, **extra)


@pytest.mark.parametrize("consistent,units", [(True, 3.0), (False, 1.5)])
def test_query_capacity_sums_then_rounds(api, tables, consistent, units):
    # 10 items of 1 KB = 10 KB read → ceil(10 KB / 4 KB) = 3 units (not 10).
    t = tables["cap"]
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="TOTAL",
                                   ConsistentRead=consistent))
    assert out["Items"] == [cap_item(i) for i in range(CAP_ITEMS)]
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="INDEXES",
                                   ConsistentRead=consistent))
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units,
                                       "Table": {"CapacityUnits": units}}


@pytest.mark.parametrize("consistent,units", [(True, 3.0), (False, 1.5)])
def test_scan_capacity_sums_then_rounds(api, tables, consistent, units):
    t = tables["cap"]
    out = ok(scan(api, t, ReturnConsumedCapacity="TOTAL", ConsistentRead=consistent))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}
    out = ok(scan(api, t, ReturnConsumedCapacity="INDEXES", ConsistentRead=consistent))
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units,
                                       "Table": {"CapacityUnits": units}}


@pytest.mark.parametrize("extra,strong", [
    ({"Limit": 4}, 1.0),           # 4 KB exactly
    ({"Limit": 5}, 2.0),           # 5 KB
    ({"Select": "COUNT"}, 3.0),    # COUNT pays for what was read
    ({"ProjectionExpression": "sk"}, 3.0),
    ({"FilterExpression": "fill = :none"}, 3.0),
    ({"KeyConditionExpression": "pk = :p AND sk > :n"}, 1.0),    # 1 item read (sk 9)
    ({"KeyConditionExpression": "pk = :p AND sk > :big"}, 1.0),  # nothing read: minimum
])
def test_query_capacity_counts_items_read(api, tables, extra, strong):
    t = tables["cap"]
    body = cap_body(tables, ReturnConsumedCapacity="TOTAL", **extra)
    values = body["ExpressionAttributeValues"]
    if ":none" in str(extra):
        values[":none"] = S("none")
    if ":n" in body["KeyConditionExpression"]:
        values[":n"] = N(8)
    if ":big" in body["KeyConditionExpression"]:
        values[":big"] = N(100)
    for consistent, units in ((True, strong), (False, strong / 2)):
        out = api.ok("Query", dict(body, ConsistentRead=consistent))
        assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}, (
            consistent, out)


def test_capacity_none_and_boto3(api, ddb, tables):
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="NONE"))
    assert "ConsumedCapacity" not in out
    out = ddb.scan(TableName=tables["cap"], ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert out["ConsumedCapacity"] == {"TableName": tables["cap"], "CapacityUnits": 3.0}


def test_consistent_read_returns_same_items(api, tables):
    a = api.ok("Query", cap_body(tables, ConsistentRead=True))
    b = api.ok("Query", cap_body(tables, ConsistentRead=False))
    assert a == b


def test_table_arn(api, tables):
    t = tables["cap"]
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{t}"
    out = api.ok("Query", dict(cap_body(tables, ReturnConsumedCapacity="TOTAL"), TableName=arn))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": arn, "CapacityUnits": 1.5}
    out = ok(scan(api, arn, ReturnConsumedCapacity="TOTAL", ConsistentRead=True))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": arn, "CapacityUnits": 3.0}
