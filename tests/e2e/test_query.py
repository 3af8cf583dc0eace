"""Query on tables: key conditions (expression and legacy) on N, S and B sort keys, ordering in both
directions, the error texts of key conditions and the rule against mixing expression and
non-expression parameters. With test_read_options.py, test_pagination.py and test_scan.py this
covers Query and Scan on tables."""

import re
from decimal import Decimal

import pytest

from kumo_testlib import assert_validation

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("query_data")

from query_data import (
    B,
    N,
    NUMS,
    S,
    SORT_TYPES,
    all_items,
    legacy_key,
    ok,
    pk_eq,
    query,
    query_pages,
    returned_sorted_item,
    scan,
)

pytest_plugins = ["query_fixtures"]

INVALID = "One or more parameter values were invalid: "
KCE = "Invalid KeyConditionExpression: "
MISSING_KEY_CONDITION = ("Either the KeyConditions or KeyConditionExpression parameter must be "
                         "specified in the request.")
TYPE_MISMATCH = INVALID + "Condition parameter type does not match schema type"
MIXING = "Can not use both expression and non-expression parameters in the same request: "


def test_reference_orders_are_sorted():
    for name, (values, sort_key, _, _) in SORT_TYPES.items():
        assert values == sorted(values, key=sort_key), name


# --------------------------------------------------------------------------- key conditions

# (type, operator, operands). Operands are raw Python values (str for N and S, bytes for B).
KEY_CASES = [
    ("N", "=", ["1.5"]), ("N", "=", ["0"]), ("N", "=", ["3"]),
    ("N", "<", ["2"]), ("N", "<=", ["2"]), ("N", ">", ["2"]), ("N", ">=", ["2"]),
    ("N", "<", ["-1"]), ("N", ">=", ["0.0005"]), ("N", ">", ["1e20"]),
    ("N", "BETWEEN", ["-1.5", "1"]), ("N", "BETWEEN", ["-0.5", "1.25"]),
    ("N", "BETWEEN", ["2", "2"]),
    ("S", "=", ["中"]), ("S", "<", ["b"]), ("S", "<=", ["b"]), ("S", ">", ["b"]),
    ("S", ">=", ["é"]), ("S", "<", ["a"]), ("S", ">", ["\uffff"]),
    ("S", "BETWEEN", ["ab", "é"]), ("S", "BETWEEN", ["Z", "a"]),
    ("S", "begins_with", ["a"]), ("S", "begins_with", ["中"]), ("S", "begins_with", ["ab"]),
    ("S", "begins_with", ["x"]),
    ("B", "=", [b"\x7f"]), ("B", "<", [b"\x80"]), ("B", "<=", [b"\x80"]), ("B", ">", [b"\x80"]),
    ("B", ">=", [b"\x80\x00"]), ("B", "BETWEEN", [b"\x00\x00", b"\x80"]),
    ("B", "begins_with", [b"\xff"]), ("B", "begins_with", [b"\x00"]),
    ("B", "begins_with", [b"\x80"]),
]

LEGACY_OPS = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "BETWEEN": "BETWEEN",
              "begins_with": "BEGINS_WITH"}


def expected_indexes(kind, op, operands):
    values, sort_key, _, _ = SORT_TYPES[kind]
    ops = [sort_key(x) for x in operands]

    def pred(v):
        k = sort_key(v)
        return {
            "=": lambda: k == ops[0], "<": lambda: k < ops[0], "<=": lambda: k <= ops[0],
            ">": lambda: k > ops[0], ">=": lambda: k >= ops[0],
            "BETWEEN": lambda: ops[0] <= k <= ops[1],
            "begins_with": lambda: k[:len(ops[0])] == ops[0],
        }[op]()

    return [i for i, v in enumerate(values) if pred(v)]


def key_request(table, kind, op, operands, forward, legacy):
    to_value = {"N": N, "S": S, "B": B}[kind]
    body = {"TableName": table, "ScanIndexForward": forward}
    if legacy:
        body["KeyConditions"] = dict(pk_eq("p"), sk={
            "ComparisonOperator": LEGACY_OPS[op],
            "AttributeValueList": [to_value(x) for x in operands]})
        return body
    values = {":p": S("p")}
    if op == "BETWEEN":
        cond = "sk BETWEEN :a AND :b"
        values.update({":a": to_value(operands[0]), ":b": to_value(operands[1])})
    elif op == "begins_with":
        cond = "begins_with(sk, :a)"
        values[":a"] = to_value(operands[0])
    else:
        cond = f"sk {op} :a"
        values[":a"] = to_value(operands[0])
    body["KeyConditionExpression"] = "pk = :p AND " + cond
    body["ExpressionAttributeValues"] = values
    return body


@pytest.mark.parametrize("legacy", [False, True], ids=["expression", "legacy"])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
@pytest.mark.parametrize("kind,op,operands", KEY_CASES,
                         ids=[f"{k}-{o}-{i}" for i, (k, o, _) in enumerate(KEY_CASES)])
def test_key_condition_operators(api, tables, kind, op, operands, forward, legacy):
    t = tables[kind]
    out = api.ok("Query", key_request(t, kind, op, operands, forward, legacy))
    expected = [returned_sorted_item(kind, "p", i) for i in expected_indexes(kind, op, operands)]
    if not forward:
        expected.reverse()
    assert out["Items"] == expected
    assert out["Count"] == out["ScannedCount"] == len(expected)
    assert "LastEvaluatedKey" not in out


@pytest.mark.parametrize("kind", ["N", "S", "B"])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
def test_whole_partition_order(api, tables, kind, forward):
    values = SORT_TYPES[kind][0]
    out = ok(query(api, tables[kind], "pk = :p", {":p": S("p")}, ScanIndexForward=forward))
    expected = [returned_sorted_item(kind, "p", i) for i in range(len(values))]
    assert out["Items"] == (expected if forward else expected[::-1])
    assert out["Count"] == out["ScannedCount"] == len(values)


@pytest.mark.parametrize("kind", ["N", "S", "B"])
def test_order_survives_limit_paging(api, tables, kind):
    values = SORT_TYPES[kind][0]
    for forward in (True, False):
        pages = query_pages(api, {"TableName": tables[kind], "KeyConditionExpression": "pk = :p",
                                  "ExpressionAttributeValues": {":p": S("p")}, "Limit": 2,
                                  "ScanIndexForward": forward})
        expected = [returned_sorted_item(kind, "p", i) for i in range(len(values))]
        assert all_items(pages) == (expected if forward else expected[::-1])


def test_number_sort_key_forms_are_one_key(api, tables):
    t = tables["N"]
    for written in ("1E20", "100000000000000000000", "1.0e+20", "0100000000000000000000.000"):
        out = ok(query(api, t, "pk = :p AND sk = :v", {":p": S("p"), ":v": N(written)}))
        assert out["Items"] == [returned_sorted_item("N", "p", len(NUMS) - 1)], written


def test_partition_isolation(api, tables):
    out = ok(query(api, tables["N"], "pk = :p", {":p": S("q")}))
    assert [i["v"] for i in out["Items"]] == [N(100), N(101), N(102)]
    out = ok(query(api, tables["N"], "pk = :p", {":p": S("nope")}))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_hash_only_table_query(api, tables):
    out = ok(query(api, tables["hash"], "pk = :p", {":p": S("h3")}))
    assert out == {"Items": [{"pk": S("h3"), "v": N(3)}], "Count": 1, "ScannedCount": 1}
    out = ok(api("Query", {"TableName": tables["hash"], "KeyConditions": pk_eq("h2")}))
    assert out["Items"] == [{"pk": S("h2"), "v": N(2)}]


@pytest.mark.parametrize("kce,expected", [
    (":p = pk AND :x <= sk", lambda v: v >= 2),
    (":p = pk AND :x > sk", lambda v: v < 2),
    ("(pk = :p) AND (sk >= :x)", lambda v: v >= 2),
    ("(pk = :p AND sk < :x)", lambda v: v < 2),
    ("sk < :x AND pk = :p", lambda v: v < 2),
    ("#k = :p and #s between :lo AND :x", lambda v: -1 <= v <= 2),
    ("pk=:p AND begins_with ( sk , :s )", None),
])
def test_key_condition_forms(api, tables, kce, expected):
    values = {":p": S("p"), ":x": N("2")}
    names = None
    table = tables["N"]
    if "#k" in kce:
        names = {"#k": "pk", "#s": "sk"}
        values[":lo"] = N("-1")
    if "begins_with" in kce:
        table = tables["S"]
        values = {":p": S("p"), ":s": S("中")}
    out = ok(query(api, table, kce, values, names))
    if expected is None:
        assert [i["sk"] for i in out["Items"]] == [S("中"), S("中文")]
    else:
        assert [i["sk"]["N"] for i in out["Items"]] == [v for v in NUMS if expected(Decimal(v))]


def test_key_condition_keywords_case_insensitive(api, tables):
    out = ok(query(api, tables["N"], "pk = :p aNd sk BeTwEeN :a and :b",
                   {":p": S("p"), ":a": N(0), ":b": N(1)}))
    assert [i["sk"]["N"] for i in out["Items"]] == ["0", "0.001", "1"]


# --------------------------------------------------------------------------- key condition errors

KCE_ERRORS = [
    ("pk = :p OR sk = :n", KCE + "Invalid operator used in KeyConditionExpression: OR"),
    ("NOT pk = :p", KCE + "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk = :p AND NOT sk = :n", KCE + "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk IN (:p)", KCE + "Invalid operator used in KeyConditionExpression: IN"),
    ("pk = :p AND sk <> :n", KCE + "Invalid operator used in KeyConditionExpression: <>"),
    ("pk = :p AND attribute_exists(sk)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_exists"),
    ("pk = :p AND attribute_not_exists(sk)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_not_exists"),
    ("pk = :p AND attribute_type(sk, :t)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_type"),
    ("pk = :p AND contains(sk, :n)",
     KCE + "Invalid operator used in KeyConditionExpression: contains"),
    ("pk = :p AND size(sk) > :n", KCE + "KeyConditionExpressions cannot contain nested operations"),
    ("pk = :p AND sk.x = :n",
     KCE + "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk = :p AND sk[1] = :n",
     KCE + "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk = sk", KCE + "Invalid condition in KeyConditionExpression: Multiple attribute names "
                      "used in one condition"),
    ("pk = :p AND :n = :n2",
     KCE + "Invalid condition in KeyConditionExpression: No key attribute specified"),
    ("pk = :p AND :n BETWEEN sk AND :n2",
     KCE + "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
           "attribute as its first operand"),
    ("pk = :p AND begins_with(:n, sk)",
     KCE + "Invalid condition in KeyConditionExpression: begins_with operator must have the key "
           "attribute as its first operand"),
    ("pk = :p AND pk = :p2", KCE + "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk > :n AND sk < :n2",
     KCE + "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk BETWEEN :n2 AND :n",
     KCE + "The BETWEEN operator requires upper bound to be greater than or equal to lower "
           "bound; lower bound operand: AttributeValue: {N:2}, upper bound operand: "
           "AttributeValue: {N:1}"),
    ("()", KCE + 'Syntax error; token: ")", near: "()"'),
    ("", KCE + "The expression can not be empty;"),
    ("((pk = :p))", KCE + "The expression has redundant parentheses;"),
    ("pk = :p AND BegIns_WiTh(sk, :n)", KCE + "Invalid function name; function: BegIns_WiTh"),
    ("pk = :undefined", KCE + "An expression attribute value used in expression is not defined; "
                              "attribute value: :undefined"),
    ("#nope = :p", KCE + "An expression attribute name used in the document path is not "
                         "defined; attribute name: #nope"),
    ("pk = :p AND size = :n", KCE + "Attribute name is a reserved keyword; reserved keyword: size"),
    # Against the schema: no prefix.
    ("sk = :n", "Query condition missed key schema element: pk"),
    ("foo = :p", "Query condition missed key schema element: pk"),
    ("pk = :p AND foo = :n", "Query condition missed key schema element: sk"),
    ("pk > :p", "Query key condition not supported"),
    ("pk BETWEEN :p AND :p2", "Query key condition not supported"),
    ("begins_with(pk, :p)", "Query key condition not supported"),
    ("pk = :n", TYPE_MISMATCH),
    ("pk = :p AND sk = :p2", TYPE_MISMATCH),
    ("pk = :p AND sk BETWEEN :p AND :p2", TYPE_MISMATCH),
]

KCE_VALUES = {":p": S("p"), ":p2": S("q"), ":n": N(1), ":n2": N(2), ":t": S("N")}


@pytest.mark.parametrize("kce,message", KCE_ERRORS, ids=[m[0] or "empty" for m in KCE_ERRORS])
def test_key_condition_expression_errors(api, tables, kce, message):
    # Only the placeholders the expression names, so that no "unused" error interferes.
    used = {k: v for k, v in KCE_VALUES.items() if k in re.findall(r":[A-Za-z0-9_]+", kce)}
    assert_validation(query(api, tables["N"], kce, used or None), message)


def test_key_condition_begins_with_on_number_sort_key(api, tables):
    # Exact text [open] (incorrect operand type); assert the type only.
    resp = query(api, tables["N"], "pk = :p AND begins_with(sk, :n)", {":p": S("p"), ":n": N(1)})
    assert_validation(resp)


def test_key_condition_hash_only_table_extra_condition(api, tables):
    resp = query(api, tables["hash"], "pk = :p AND v = :n", {":p": S("h1"), ":n": N(1)})
    assert_validation(resp)
    # Two observed texts (older and newer responses).
    assert resp.message in (
        "Query key condition not supported",
        "The number of query conditions (2) exceeds the number of key attributes defined in the "
        "schema (1)"), resp.message


def test_query_without_key_condition(api, tables):
    t = tables["N"]
    assert_validation(api("Query", {"TableName": t}), MISSING_KEY_CONDITION)
    assert_validation(api("Query", {"TableName": t, "QueryFilter": {
        "v": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]}}}), MISSING_KEY_CONDITION)
    assert_validation(api("Query", {"TableName": t, "FilterExpression": "v = :v",
                                    "ExpressionAttributeValues": {":v": N(1)}}),
                      MISSING_KEY_CONDITION)


LEGACY_KEY_ERRORS = [
    ({"sk": ("EQ", [N(1)])}, "Query condition missed key schema element: pk"),
    ({"pk": ("EQ", [S("p")]), "other": ("EQ", [N(1)])},
     "Query condition missed key schema element: sk"),
    ({"pk": ("GT", [S("p")])}, "Query key condition not supported"),
    ({"pk": ("EQ", [S("p")]), "sk": ("NE", [N(1)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("IN", [N(1), N(2)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("CONTAINS", [N(1)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("NOT_NULL", [])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [N(1)])}, TYPE_MISMATCH),
    ({"pk": ("EQ", [S("p")]), "sk": ("GT", [S("1")])}, TYPE_MISMATCH),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(1)])},
     INVALID + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(1), S("x")])},
     INVALID + "AttributeValues inside AttributeValueList must be of same type"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BEGINS_WITH", [N(1)])},
     INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(2), N(1)])},
     "The BETWEEN condition was provided a range where the lower bound is greater than the "
     "upper bound"),
    ({"pk": ("EQ", [S("p")]), "sk": ("GT", [N(1)]), "v": ("EQ", [N(1)])},
     "Conditions can be of length 1 or 2 only"),
]


@pytest.mark.parametrize("conds,message", LEGACY_KEY_ERRORS,
                         ids=[str(i) for i in range(len(LEGACY_KEY_ERRORS))])
def test_legacy_key_condition_errors(api, tables, conds, message):
    resp = api("Query", {"TableName": tables["N"], "KeyConditions": legacy_key(**conds)})
    assert_validation(resp, message)


# --------------------------------------------------------------------------- mixing rule


def test_mixing_key_conditions_with_expression(api, tables):
    t = tables["N"]
    resp = api("Query", {"TableName": t, "KeyConditions": pk_eq("p"),
                         "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")}})
    assert_validation(resp, MIXING + "Non-expression parameters: {KeyConditions} Expression "
                                     "parameters: {KeyConditionExpression}")


def test_mixing_query_filter_with_key_condition_expression(api, tables):
    resp = api("Query", {"TableName": tables["N"], "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")},
                         "QueryFilter": {"v": {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, MIXING + "Non-expression parameters: {QueryFilter} Expression "
                                     "parameters: {KeyConditionExpression}")


def test_mixing_full_lists_in_fixed_order(api, tables):
    resp = api("Query", {
        "TableName": tables["N"], "KeyConditionExpression": "pk = :p",
        "FilterExpression": "v > :v", "ProjectionExpression": "v",
        "ExpressionAttributeValues": {":p": S("p"), ":v": N(0)},
        "KeyConditions": pk_eq("p"), "AttributesToGet": ["v"], "ConditionalOperator": "AND",
        "QueryFilter": {"v": {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, MIXING + "Non-expression parameters: {AttributesToGet, QueryFilter, "
                                     "ConditionalOperator, KeyConditions} Expression parameters: "
                                     "{ProjectionExpression, FilterExpression, "
                                     "KeyConditionExpression}")


def test_mixing_scan(api, tables):
    t = tables["N"]
    assert_validation(scan(api, t, AttributesToGet=["v"], ProjectionExpression="v"),
                      MIXING + "Non-expression parameters: {AttributesToGet} Expression "
                               "parameters: {ProjectionExpression}")
    assert_validation(scan(api, t, ScanFilter={"v": {"ComparisonOperator": "NOT_NULL"}},
                           FilterExpression="attribute_exists(v)"),
                      MIXING + "Non-expression parameters: {ScanFilter} Expression "
                               "parameters: {FilterExpression}")


def test_key_conditions_combine_with_filter_and_projection_expressions(api, tables):
    out = api.ok("Query", {"TableName": tables["N"], "KeyConditions": pk_eq("p"),
                           "FilterExpression": "v >= :v", "ProjectionExpression": "sk",
                           "ExpressionAttributeValues": {":v": N(8)}})
    assert out["Items"] == [{"sk": N(x)} for x in NUMS[8:]]
    assert out["Count"] == 3
    assert out["ScannedCount"] == len(NUMS)


def test_values_without_expression(api, tables):
    t = tables["N"]
    assert_validation(api("Query", {"TableName": t, "KeyConditions": pk_eq("p"),
                                    "ExpressionAttributeValues": {":v": N(1)}}),
                      "ExpressionAttributeValues can only be specified when using expressions: "
                      "FilterExpression and KeyConditionExpression are null")
    assert_validation(scan(api, t, ExpressionAttributeValues={":v": N(1)}),
                      "ExpressionAttributeValues can only be specified when using expressions: "
                      "FilterExpression is null")


def test_unused_value_is_bare_on_query(api, tables):
    resp = query(api, tables["N"], "pk = :p", {":p": S("p"), ":x": N(1)})
    assert_validation(resp, "Value provided in ExpressionAttributeValues unused in expressions: "
                            "keys: {:x}")
