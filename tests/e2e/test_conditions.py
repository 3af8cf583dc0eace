"""Condition expressions on PutItem, UpdateItem and DeleteItem: every comparator, function and
operator against an item holding all types, precedence, nested paths, and conditional failures
(ConditionalCheckFailedException, ReturnValuesOnConditionCheckFailure). test_conditions.py,
test_expression_validation.py and test_projection_expression.py together cover expressions,
GetItem, conditional writes and the write envelope (the `1 validation error detected: ` prefix
that PutItem, UpdateItem and DeleteItem put on request-validation errors)."""

import pytest

from kumo_testlib import (
    assert_error,
    b64,
    normalize_item,
)

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("expression_data")

from expression_data import (
    B,
    BOOL_T,
    CCF,
    CCF_MESSAGE,
    N,
    NULL,
    RICH,
    S,
    holds,
    new_key,
    read,
)

pytest_plugins = ["expression_fixtures"]


def assert_ccf(resp, item=None):
    assert_error(resp, 400, CCF, CCF_MESSAGE)
    if item is None:
        assert "Item" not in resp.json, resp
    else:
        assert normalize_item(resp.json["Item"]) == normalize_item(item)


# (expression, names, values, expected)
CONDITIONS = [
    # equality and inequality across types
    ("n = :v", None, {":v": N("42")}, True),
    ("n = :v", None, {":v": N("42.000")}, True),
    ("n = :v", None, {":v": N("4.2E1")}, True),
    ("n = :v", None, {":v": S("42")}, False),
    ("n <> :v", None, {":v": S("42")}, True),
    ("n <> :v", None, {":v": N("42")}, False),
    ("absent <> :v", None, {":v": N("1")}, True),
    ("absent = :v", None, {":v": N("1")}, False),
    ("s = :v", None, {":v": S("hello world")}, True),
    ("s = :v", None, {":v": S("Hello world")}, False),
    ("e = :v", None, {":v": S("")}, True),
    ("b = :v", None, {":v": B(b"\x01\x02\x03")}, True),
    ("b = :v", None, {":v": B(b"\x01\x02")}, False),
    ("t = :v", None, {":v": BOOL_T}, True),
    ("t = :v", None, {":v": {"BOOL": False}}, False),
    ("f = :v", None, {":v": {"BOOL": False}}, True),
    ("nul = :v", None, {":v": NULL}, True),
    ("ss = :v", None, {":v": {"SS": ["c", "a", "b"]}}, True),
    ("ss = :v", None, {":v": {"SS": ["a", "b"]}}, False),
    ("ns = :v", None, {":v": {"NS": ["3", "1.0", "2"]}}, True),
    ("bs = :v", None, {":v": {"BS": [b64(b"\x02"), b64(b"\x01")]}}, True),
    ("ss = :v", None, {":v": {"L": [S("a"), S("b"), S("c")]}}, False),
    ("l = :v", None, {":v": RICH["l"]}, True),
    ("l = :v", None, {":v": {"L": list(reversed(RICH["l"]["L"]))}}, False),
    ("m = :v", None, {":v": RICH["m"]}, True),
    ("m = :v", None, {":v": {"M": {"k": S("v")}}}, False),
    ("n = n2", None, None, False),
    ("n <> n2", None, None, True),
    # ordering: numbers numerically, strings and binaries by unsigned bytes
    ("n > :v", None, {":v": N("41.999")}, True),
    ("n >= :v", None, {":v": N("42")}, True),
    ("n < :v", None, {":v": N("42")}, False),
    ("n <= :v", None, {":v": N("42")}, True),
    ("n2 < n", None, None, True),
    ("neg < :v", None, {":v": N("0")}, True),
    ("neg > :v", None, {":v": N("-3.5")}, True),
    ("s < :v", None, {":v": S("hello x")}, True),
    ("s > :v", None, {":v": S("Hello")}, True),
    ("s >= :v", None, {":v": S("hello world")}, True),
    ("emoji > :v", None, {":v": S("\uffff")}, True),
    ("bhi > b", None, None, True),
    ("b > :v", None, {":v": B(b"\x01\x02")}, True),
    ("b < :v", None, {":v": B(b"\x80")}, True),
    ("n < :v", None, {":v": S("zzz")}, False),
    ("s > :v", None, {":v": N("1")}, False),
    # Values of the item that cannot be ordered compare false (constants are refused:
    # test_expression_fidelity.py).
    ("t >= f", None, None, False),
    ("l <= m.b", None, None, False),
    ("absent < :v", None, {":v": N("1")}, False),
    ("n < :v", None, {":v": N("1E125")}, True),
    ("n > :v", None, {":v": N("-9.9999999999999999999999999999999999999E+125")}, True),
    ("n > :v", None, {":v": N("41." + "9" * 36)}, True),
    ("n < :v", None, {":v": N("42." + "0" * 35 + "1")}, True),
    ("n > :v", None, {":v": N("1E-130")}, True),
    # BETWEEN
    ("n BETWEEN :lo AND :hi", None, {":lo": N("40"), ":hi": N("50")}, True),
    ("n BETWEEN :lo AND :hi", None, {":lo": N("42"), ":hi": N("42")}, True),
    ("n BETWEEN :lo AND :hi", None, {":lo": N("43"), ":hi": N("50")}, False),
    ("n between :lo and :hi", None, {":lo": N("-1"), ":hi": N("100")}, True),
    ("s BETWEEN :lo AND :hi", None, {":lo": S("a"), ":hi": S("z")}, True),
    ("s BETWEEN :lo AND :hi", None, {":lo": S("i"), ":hi": S("z")}, False),
    ("b BETWEEN :lo AND :hi", None, {":lo": B(b"\x01"), ":hi": B(b"\x02")}, True),
    ("n BETWEEN :lo AND :hi", None, {":lo": S("0"), ":hi": S("9")}, False),
    ("absent BETWEEN :lo AND :hi", None, {":lo": N("0"), ":hi": N("9")}, False),
    # IN
    ("n IN (:a, :b, :c)", None, {":a": N("1"), ":b": N("42"), ":c": N("3")}, True),
    ("n IN (:a, :b)", None, {":a": N("1"), ":b": S("42")}, False),
    ("n in (:a)", None, {":a": N("42.0")}, True),
    ("s IN (:a, :b)", None, {":a": S("x"), ":b": S("hello world")}, True),
    ("absent IN (:a)", None, {":a": N("1")}, False),
    # attribute_exists / attribute_not_exists
    ("attribute_exists(s)", None, None, True),
    ("attribute_exists(absent)", None, None, False),
    ("attribute_exists(nul)", None, None, True),
    ("attribute_exists(e)", None, None, True),
    ("attribute_not_exists(absent)", None, None, True),
    ("attribute_not_exists(s)", None, None, False),
    ("attribute_exists(pk)", None, None, True),
    # size
    ("size(s) = :v", None, {":v": N("11")}, True),
    ("size(e) = :v", None, {":v": N("0")}, True),
    ("size(b) = :v", None, {":v": N("3")}, True),
    ("size(ss) = :v", None, {":v": N("3")}, True),
    ("size(ns) = :v", None, {":v": N("3")}, True),
    ("size(bs) = :v", None, {":v": N("2")}, True),
    ("size(l) = :v", None, {":v": N("4")}, True),
    ("size(m) = :v", None, {":v": N("3")}, True),
    ("size(m.b) = :v", None, {":v": N("2")}, True),
    ("size(l) > size(ss)", None, None, True),
    ("size(s) < :v", None, {":v": N("11")}, False),
    ("size(n) = :v", None, {":v": N("2")}, False),
    ("size(t) = :v", None, {":v": N("1")}, False),
    ("size(absent) = :v", None, {":v": N("0")}, False),
    ("size(s) BETWEEN :lo AND :hi", None, {":lo": N("10"), ":hi": N("12")}, True),
    # contains
    ("contains(s, :v)", None, {":v": S("lo wo")}, True),
    ("contains(s, :v)", None, {":v": S("xyz")}, False),
    ("contains(ss, :v)", None, {":v": S("b")}, True),
    ("contains(ss, :v)", None, {":v": S("z")}, False),
    ("contains(ns, :v)", None, {":v": N("2")}, True),
    ("contains(ns, :v)", None, {":v": N("2.0")}, True),
    ("contains(ns, :v)", None, {":v": S("2")}, False),
    ("contains(bs, :v)", None, {":v": B(b"\x02")}, True),
    ("contains(l, :v)", None, {":v": S("x")}, True),
    ("contains(l, :v)", None, {":v": N("1")}, True),
    ("contains(l, :v)", None, {":v": {"M": {"c": S("deep")}}}, True),
    ("contains(l, :v)", None, {":v": S("deep")}, False),
    ("contains(l[3], :v)", None, {":v": S("y")}, True),
    ("contains(b, :v)", None, {":v": B(b"\x02\x03")}, True),
    ("contains(n, :v)", None, {":v": N("4")}, False),
    ("contains(absent, :v)", None, {":v": S("a")}, False),
    ("contains(s, :v)", None, {":v": N("1")}, False),
    # begins_with
    ("begins_with(s, :v)", None, {":v": S("hello")}, True),
    ("begins_with(s, :v)", None, {":v": S("world")}, False),
    ("begins_with(s, :v)", None, {":v": S("")}, True),
    ("begins_with(b, :v)", None, {":v": B(b"\x01\x02")}, True),
    ("begins_with(b, :v)", None, {":v": B(b"\x02")}, False),
    ("begins_with(n, :v)", None, {":v": S("4")}, False),
    ("begins_with(m.k, :v)", None, {":v": S("v")}, True),
    ("begins_with(absent, :v)", None, {":v": S("")}, False),
    # NOT / AND / OR precedence (T = attribute_exists(s), F = attribute_exists(absent))
    ("attribute_exists(s) OR attribute_exists(absent) AND attribute_exists(absent)",
     None, None, True),
    ("(attribute_exists(s) OR attribute_exists(absent)) AND attribute_exists(absent)",
     None, None, False),
    ("NOT attribute_exists(s) AND attribute_exists(absent)", None, None, False),
    ("NOT (attribute_exists(s) AND attribute_exists(absent))", None, None, True),
    ("NOT attribute_exists(s) OR attribute_exists(s)", None, None, True),
    ("NOT (attribute_exists(s) OR attribute_exists(s))", None, None, False),
    ("NOT NOT attribute_exists(s)", None, None, True),
    ("attribute_exists(absent) AND attribute_exists(s) OR attribute_exists(s)",
     None, None, True),
    ("not attribute_exists(absent) and n = :v", None, {":v": N("42")}, True),
    ("n = :a OR n = :b AND n = :c", None, {":a": N("42"), ":b": N("0"), ":c": N("1")}, True),
    ("(n = :a OR n = :b) AND n = :c", None, {":a": N("42"), ":b": N("0"), ":c": N("1")},
     False),
    ("NOT n = :a", None, {":a": N("42")}, False),
    ("NOT n BETWEEN :a AND :b", None, {":a": N("0"), ":b": N("1")}, True),
    ("n BETWEEN :a AND :b AND s = :s", None,
     {":a": N("0"), ":b": N("100"), ":s": S("hello world")}, True),
    ("n BETWEEN :a AND :b AND s = :s", None,
     {":a": N("0"), ":b": N("100"), ":s": S("x")}, False),
    ("NOT n IN (:a, :b) OR s = :s", None, {":a": N("42"), ":b": N("1"), ":s": S("x")}, False),
    ("(n = :a)", None, {":a": N("42")}, True),
    ("(n = :a) AND (NOT (s = :s))", None, {":a": N("42"), ":s": S("x")}, True),
    # nested paths and placeholders
    ("m.b[1].c = :v", None, {":v": N("2")}, True),
    ("m.b[0].c = :v", None, {":v": N("2")}, False),
    ("m.b[1].d = :v", None, {":v": S("z")}, True),
    ("#m.#b[0].#c = :v", {"#m": "m", "#b": "b", "#c": "c"}, {":v": N("1")}, True),
    ("l[2].c = :v", None, {":v": S("deep")}, True),
    ("l[3][0] = :v", None, {":v": S("y")}, True),
    ("l[0] = :v", None, {":v": S("x")}, True),
    ("attribute_exists(m.b[1].d)", None, None, True),
    ("attribute_exists(m.b[0].d)", None, None, False),
    ("attribute_exists(m.b[7])", None, None, False),
    ("attribute_not_exists(l[10])", None, None, True),
    ("attribute_exists(s.x)", None, None, False),
    ("attribute_exists(s[0])", None, None, False),
    ("attribute_exists(m.#dk)", {"#dk": "dot.ted"}, None, True),
    ("attribute_exists(m.dot.ted)", None, None, False),
    ("a.b = :v", None, {":v": S("nested")}, True),
    ("#ab = :v", {"#ab": "a.b"}, {":v": S("top")}, True),
    ("#ab = :v", {"#ab": "a.b"}, {":v": S("nested")}, False),
    ("#a.#b = :v", {"#a": "a", "#b": "b"}, {":v": S("nested")}, True),
    ("#w = :v", {"#w": "weird-name"}, {":v": S("w")}, True),
    ("#st = :v", {"#st": "status"}, {":v": S("active")}, True),
    ("#st = :v AND #st <> :w", {"#st": "status"}, {":v": S("active"), ":w": S("x")}, True),
    ("attribute_not_exists(remove)", None, None, False),
    ("s=:v", None, {":v": S("hello world")}, True),
    ("\tn\r\n=\n:v ", None, {":v": N("42")}, True),
]


@pytest.mark.parametrize("expression,names,values,expected", CONDITIONS,
                         ids=[f"{i}:{c[0][:40]}" for i, c in enumerate(CONDITIONS)])
def test_condition(api, table, rich, expression, names, values, expected):
    assert holds(api, table, rich, expression, names, values) is expected
    assert normalize_item(read(api, table, {"pk": rich["pk"]})) == normalize_item(rich)


ALL_TYPES = {"s": "S", "ss": "SS", "n": "N", "ns": "NS", "b": "B", "bs": "BS", "t": "BOOL",
             "nul": "NULL", "l": "L", "m": "M"}


def test_attribute_type_all_ten_types(api, table, rich):
    wrong = []
    for attr, actual in ALL_TYPES.items():
        for t in ALL_TYPES.values():
            got = holds(api, table, rich, "attribute_type(#a, :t)", {"#a": attr}, {":t": S(t)})
            if got is not (t == actual):
                wrong.append((attr, t, got))
    assert wrong == []
    assert holds(api, table, rich, "attribute_type(absent, :t)", None, {":t": S("S")}) is False
    assert holds(api, table, rich, "attribute_type(m.b, :t)", None, {":t": S("L")}) is True
    assert holds(api, table, rich, "attribute_type(l[2], :t)", None, {":t": S("M")}) is True
    assert holds(api, table, rich, "NOT attribute_type(s, :t)", None, {":t": S("N")}) is True


def test_condition_on_missing_item(api, table):
    key = new_key()
    item = dict(key, a=S("1"))
    assert holds(api, table, item, "attribute_exists(pk)") is False
    assert read(api, table, key) is None
    assert holds(api, table, item, "a <> :v", None, {":v": S("1")}) is True
    assert read(api, table, key) == item


def test_put_if_absent(api, table):
    key = new_key()
    body = {"TableName": table, "Item": dict(key, v=N("1")),
            "ConditionExpression": "attribute_not_exists(pk)"}
    api.ok("PutItem", body)
    resp = api("PutItem", dict(body, Item=dict(key, v=N("2"))))
    assert_ccf(resp)
    assert read(api, table, key) == dict(key, v=N("1"))


# --------------------------------------------------------------------------- conditional failure


def failing_request(op, table, key):
    body = {"TableName": table, "ConditionExpression": "v = :other",
            "ExpressionAttributeValues": {":other": N("999")}}
    if op == "PutItem":
        body["Item"] = dict(key, v=N("5"), extra=S("new"))
    else:
        body["Key"] = key
    if op == "UpdateItem":
        body["UpdateExpression"] = "SET v = :other"
    return body


@pytest.mark.parametrize("op", ["PutItem", "UpdateItem", "DeleteItem"])
@pytest.mark.parametrize("mode", [None, "NONE", "ALL_OLD"])
def test_conditional_failure_leaves_item(api, table, op, mode):
    key = new_key()
    stored = dict(key, v=N("1"), ss={"SS": ["x", "y"]}, m={"M": {"k": {"L": [S("q")]}}})
    api.ok("PutItem", {"TableName": table, "Item": stored})
    body = failing_request(op, table, key)
    body["ReturnValues"] = "ALL_OLD"
    if mode is not None:
        body["ReturnValuesOnConditionCheckFailure"] = mode
    resp = api(op, body)
    assert_ccf(resp, stored if mode == "ALL_OLD" else None)
    assert normalize_item(read(api, table, key)) == normalize_item(stored)


@pytest.mark.parametrize("op", ["PutItem", "UpdateItem", "DeleteItem"])
def test_conditional_failure_all_old_on_missing_item(api, table, op):
    key = new_key()
    body = failing_request(op, table, key)
    body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    assert_ccf(api(op, body))
    assert read(api, table, key) is None


def test_conditional_failure_boto3(ddb, table, api):
    key = new_key()
    api.ok("PutItem", {"TableName": table, "Item": dict(key, v=N("1"))})
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException) as e:
        ddb.delete_item(TableName=table, Key=key, ConditionExpression="v > :x",
                        ExpressionAttributeValues={":x": N("1")})
    assert e.value.response["Error"]["Message"] == CCF_MESSAGE
    assert read(api, table, key) == dict(key, v=N("1"))


def test_conditional_delete_success(api, table):
    key = new_key()
    api.ok("PutItem", {"TableName": table, "Item": dict(key, v=N("1"))})
    out = api.ok("DeleteItem", {"TableName": table, "Key": key, "ReturnValues": "ALL_OLD",
                                "ConditionExpression": "v = :one",
                                "ExpressionAttributeValues": {":one": N("1")}})
    assert out == {"Attributes": dict(key, v=N("1"))}
    assert read(api, table, key) is None


def test_conditional_update_success_and_failure(api, table):
    key = new_key()
    api.ok("PutItem", {"TableName": table, "Item": dict(key, version=N("1"))})
    body = {"TableName": table, "Key": key, "UpdateExpression": "SET version = :new",
            "ConditionExpression": "version = :old",
            "ExpressionAttributeValues": {":old": N("1"), ":new": N("2")},
            "ReturnValues": "ALL_NEW"}
    assert api.ok("UpdateItem", body) == {"Attributes": dict(key, version=N("2"))}
    assert_ccf(api("UpdateItem", body))
    assert read(api, table, key) == dict(key, version=N("2"))


def test_conditional_update_on_missing_item_does_not_create(api, table):
    key = new_key()
    resp = api("UpdateItem", {"TableName": table, "Key": key, "UpdateExpression": "SET a = :v",
                              "ConditionExpression": "attribute_exists(pk)",
                              "ExpressionAttributeValues": {":v": S("x")}})
    assert_ccf(resp)
    assert read(api, table, key) is None
