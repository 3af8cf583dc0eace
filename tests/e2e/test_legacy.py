"""Legacy conditional parameters: Expected in its Value/Exists and ComparisonOperator forms,
ConditionalOperator, AttributeUpdates, and the rule against mixing legacy and expression
parameters; write operations prefix their request-validation errors with
`1 validation error detected: `."""

import uuid

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_DYNAMODB,
    assert_error,
    assert_validation,
    b64,
    create_table_args,
    normalize,
    normalize_item,
    unique_name,
    wait_table_active,
)

CCF = NS_DYNAMODB + "ConditionalCheckFailedException"
INVALID = "One or more parameter values were invalid: "
MIXING = "Can not use both expression and non-expression parameters in the same request: "


def S(x):
    return {"S": x}


def N(x):
    return {"N": x}


def B(x):
    return {"B": b64(x)}


def SS(*xs):
    return {"SS": list(xs)}


def NS(*xs):
    return {"NS": list(xs)}


def L(*xs):
    return {"L": list(xs)}


NULL = {"NULL": True}


@pytest.fixture(scope="module")
def _module_table(server):
    state = {"generation": None, "name": None}
    yield state
    if state["name"]:
        try:
            server.client().delete_table(TableName=state["name"])
        except Exception:
            pass


@pytest.fixture
def table(server, _module_table):
    """One module-wide table (pk S), made again if the shared server was restarted."""
    if _module_table["generation"] != server.generation:
        c = server.client()
        name = unique_name("legacy")
        c.create_table(**create_table_args(name, ("pk", "S")))
        wait_table_active(c, name)
        _module_table.update(generation=server.generation, name=name)
    return _module_table["name"]


def new_key():
    return {"pk": S("l-" + uuid.uuid4().hex[:12])}


def read(api, table, key):
    out = api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    return out.get("Item")


def seed(api, table, **attrs):
    key = new_key()
    item = dict(key, **attrs)
    api.ok("PutItem", {"TableName": table, "Item": item})
    return key, item


def assert_write_validation(resp, message):
    assert_validation(resp, COR_PREFIX + message)


def assert_ccf(resp, item=None):
    assert_error(resp, 400, CCF, "The conditional request failed")
    if item is None:
        assert "Item" not in resp.json, resp
    else:
        assert normalize_item(resp.json["Item"]) == normalize_item(item)


# --------------------------------------------------------------------------- Expected

STORED = {
    "s": S("hello world"),
    "n": N("42"),
    "b": B(b"\x01\x02\x03"),
    "ss": SS("a", "b", "c"),
    "ns": NS("1", "2", "3"),
    "l": L(S("x"), N("1")),
    "nul": NULL,
    "t": {"BOOL": True},
    "a.b": S("top"),
    "weird-name": S("w"),
    "status": S("active"),
    "m": {"M": {"k": S("v")}},
}


@pytest.fixture
def stored(api, table):
    key, item = seed(api, table, **STORED)
    return item


def holds(api, table, item, expected, conditional_operator=None):
    """Evaluates `expected` against the stored `item` through a PutItem that writes the same
    item back: True on success, False on ConditionalCheckFailedException."""
    body = {"TableName": table, "Item": item, "Expected": expected}
    if conditional_operator is not None:
        body["ConditionalOperator"] = conditional_operator
    resp = api("PutItem", body)
    if resp.status == 200:
        return True
    assert resp.status == 400 and resp.full_type == CCF, f"{expected!r}: {resp!r}"
    return False


def cmp(op, *values):
    out = {"ComparisonOperator": op}
    if values:
        out["AttributeValueList"] = list(values)
    return out


EXPECTED_CASES = [
    # Value / Exists form
    ({"s": {"Value": S("hello world")}}, True),
    ({"s": {"Value": S("hello")}}, False),
    ({"absent": {"Value": S("x")}}, False),
    ({"s": {"Value": S("hello world"), "Exists": True}}, True),
    ({"s": {"Value": S("other"), "Exists": True}}, False),
    ({"absent": {"Exists": False}}, True),
    ({"s": {"Exists": False}}, False),
    ({"nul": {"Exists": False}}, False),
    ({"pk": {"Exists": False}}, False),
    ({"ss": {"Value": SS("c", "a", "b")}}, True),
    ({"n": {"Value": N("42.0")}}, True),
    ({"n": {"Value": S("42")}}, False),
    ({"b": {"Value": B(b"\x01\x02\x03")}}, True),
    ({"a.b": {"Value": S("top")}}, True),
    ({"weird-name": {"Value": S("w")}}, True),
    ({"status": {"Value": S("active")}}, True),
    ({"s": {"Value": S("hello world")}, "n": {"Value": N("42")}}, True),
    ({"s": {"Value": S("hello world")}, "n": {"Value": N("1")}}, False),
    # EQ / NE
    ({"s": cmp("EQ", S("hello world"))}, True),
    ({"n": cmp("EQ", N("4.2e1"))}, True),
    ({"absent": cmp("EQ", S("x"))}, False),
    ({"ns": cmp("EQ", NS("3", "2", "1"))}, True),
    ({"s": cmp("NE", S("other"))}, True),
    ({"s": cmp("NE", S("hello world"))}, False),
    ({"absent": cmp("NE", S("x"))}, True),
    ({"s": cmp("NE", N("1"))}, True),
    # ordering
    ({"n": cmp("LT", N("43"))}, True),
    ({"n": cmp("LT", N("42"))}, False),
    ({"n": cmp("LE", N("42"))}, True),
    ({"n": cmp("GT", N("41.5"))}, True),
    ({"n": cmp("GT", N("42"))}, False),
    ({"n": cmp("GE", N("42"))}, True),
    ({"n": cmp("GE", N("100"))}, False),
    ({"s": cmp("GT", S("hello"))}, True),
    ({"s": cmp("LT", S("Hello"))}, False),
    ({"b": cmp("LT", B(b"\x01\x02\x04"))}, True),
    ({"b": cmp("GE", B(b"\xff"))}, False),
    ({"n": cmp("LT", S("zzz"))}, False),
    ({"absent": cmp("LT", N("1"))}, False),
    # BETWEEN / IN
    ({"n": cmp("BETWEEN", N("40"), N("50"))}, True),
    ({"n": cmp("BETWEEN", N("42"), N("42"))}, True),
    ({"n": cmp("BETWEEN", N("43"), N("50"))}, False),
    ({"s": cmp("BETWEEN", S("a"), S("z"))}, True),
    ({"s": cmp("BETWEEN", S("i"), S("z"))}, False),
    ({"n": cmp("IN", N("1"), N("42"))}, True),
    ({"n": cmp("IN", N("1"), N("2"))}, False),
    ({"s": cmp("IN", S("x"), S("hello world"))}, True),
    ({"absent": cmp("IN", S("x"))}, False),
    # BEGINS_WITH / CONTAINS / NOT_CONTAINS
    ({"s": cmp("BEGINS_WITH", S("hello"))}, True),
    ({"s": cmp("BEGINS_WITH", S("world"))}, False),
    ({"b": cmp("BEGINS_WITH", B(b"\x01\x02"))}, True),
    ({"n": cmp("BEGINS_WITH", S("4"))}, False),
    ({"s": cmp("CONTAINS", S("lo w"))}, True),
    ({"s": cmp("CONTAINS", S("xyz"))}, False),
    ({"ss": cmp("CONTAINS", S("b"))}, True),
    ({"ss": cmp("CONTAINS", S("z"))}, False),
    ({"ns": cmp("CONTAINS", N("2"))}, True),
    ({"l": cmp("CONTAINS", S("x"))}, True),
    ({"l": cmp("CONTAINS", N("1"))}, True),
    ({"b": cmp("CONTAINS", B(b"\x02"))}, True),
    ({"ss": cmp("NOT_CONTAINS", S("z"))}, True),
    ({"ss": cmp("NOT_CONTAINS", S("a"))}, False),
    ({"s": cmp("NOT_CONTAINS", S("xyz"))}, True),
    ({"l": cmp("NOT_CONTAINS", S("x"))}, False),
    # NULL / NOT_NULL
    ({"absent": cmp("NULL")}, True),
    ({"s": cmp("NULL")}, False),
    ({"nul": cmp("NULL")}, False),
    ({"s": cmp("NOT_NULL")}, True),
    ({"nul": cmp("NOT_NULL")}, True),
    ({"absent": cmp("NOT_NULL")}, False),
    # ComparisonOperator with Value instead of AttributeValueList
    ({"n": {"ComparisonOperator": "GT", "Value": N("5")}}, True),
    ({"n": {"ComparisonOperator": "LT", "Value": N("5")}}, False),
]


@pytest.mark.parametrize("expected,result", EXPECTED_CASES,
                         ids=[f"{i}:{str(c[0])[:40]}" for i, c in enumerate(EXPECTED_CASES)])
def test_expected(api, table, stored, expected, result):
    assert holds(api, table, stored, expected) is result
    assert normalize_item(read(api, table, {"pk": stored["pk"]})) == normalize_item(stored)


def test_conditional_operator(api, table, stored):
    one_true = {"s": {"Value": S("wrong")}, "n": {"Value": N("42")}}
    assert holds(api, table, stored, one_true) is False
    assert holds(api, table, stored, one_true, "AND") is False
    assert holds(api, table, stored, one_true, "OR") is True
    none_true = {"s": cmp("NULL"), "n": cmp("LT", N("0")), "absent": cmp("NOT_NULL")}
    assert holds(api, table, stored, none_true, "OR") is False
    all_true = {"s": cmp("NOT_NULL"), "n": cmp("GT", N("0")), "absent": {"Exists": False}}
    assert holds(api, table, stored, all_true, "AND") is True
    assert holds(api, table, stored, all_true, "OR") is True


def test_expected_on_missing_item(api, table):
    key = new_key()
    item = dict(key, a=S("1"))
    assert holds(api, table, item, {"pk": {"Exists": True, "Value": key["pk"]}}) is False
    assert read(api, table, key) is None
    assert holds(api, table, item, {"pk": {"Exists": False}}) is True
    assert read(api, table, key) == item
    assert holds(api, table, dict(item, a=S("2")), {"pk": {"Exists": False}}) is False
    assert read(api, table, key) == item


def test_expected_on_delete(api, table):
    key, item = seed(api, table, v=N("1"))
    body = {"TableName": table, "Key": key, "Expected": {"v": {"Value": N("2")}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    assert_ccf(api("DeleteItem", body), item)
    assert read(api, table, key) == item
    out = api.ok("DeleteItem", dict(body, Expected={"v": cmp("EQ", N("1"))},
                                    ReturnValues="ALL_OLD"))
    assert out == {"Attributes": item}
    assert read(api, table, key) is None


def test_expected_on_update(api, table):
    key, item = seed(api, table, v=N("1"))
    legacy = {"TableName": table, "Key": key,
              "AttributeUpdates": {"v": {"Action": "PUT", "Value": N("2")}}}
    assert_ccf(api("UpdateItem", dict(legacy, Expected={"v": {"Value": N("0")}})))
    assert read(api, table, key) == item
    out = api.ok("UpdateItem", dict(legacy, Expected={"v": {"Value": N("1")}},
                                    ReturnValues="ALL_NEW"))
    assert out == {"Attributes": dict(key, v=N("2"))}


def test_expected_failure_all_old_put(api, table):
    key, item = seed(api, table, v=N("1"))
    resp = api("PutItem", {"TableName": table, "Item": dict(key, v=N("9")),
                           "Expected": {"v": {"Exists": False}},
                           "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
    assert_ccf(resp, item)
    resp = api("PutItem", {"TableName": table, "Item": dict(key, v=N("9")),
                           "Expected": {"v": {"Exists": False}}})
    assert_ccf(resp)
    assert read(api, table, key) == item


def test_expected_boto3(ddb, table, api):
    key, item = seed(api, table, v=N("1"))
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.put_item(TableName=table, Item=dict(key, v=N("2")),
                     Expected={"v": {"ComparisonOperator": "GT",
                                     "AttributeValueList": [N("1")]}})
    ddb.put_item(TableName=table, Item=dict(key, v=N("2")),
                 Expected={"v": {"Value": N("1"), "Exists": True}})
    assert read(api, table, key) == dict(key, v=N("2"))


EXPECTED_ERRORS = [
    ({"n": cmp("BETWEEN", N("1"))},
     INVALID + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"n": cmp("BETWEEN", N("1"), N("2"), N("3"))},
     INVALID + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"n": cmp("EQ", N("1"), N("2"))},
     INVALID + "Invalid number of argument(s) for the EQ ComparisonOperator"),
    ({"n": cmp("NULL", N("1"))},
     INVALID + "Invalid number of argument(s) for the NULL ComparisonOperator"),
    ({"n": cmp("NOT_NULL", N("1"))},
     INVALID + "Invalid number of argument(s) for the NOT_NULL ComparisonOperator"),
    ({"n": cmp("BETWEEN", N("1"), S("2"))},
     INVALID + "AttributeValues inside AttributeValueList must be of same type"),
    ({"n": cmp("IN", S("1"), N("2"))},
     INVALID + "AttributeValues inside AttributeValueList must be of same type"),
    ({"n": cmp("BEGINS_WITH", N("1"))},
     INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ({"n": cmp("LT", SS("a"))},
     INVALID + "ComparisonOperator LT is not valid for SS AttributeValue type"),
    ({"n": cmp("GE", {"BOOL": True})},
     INVALID + "ComparisonOperator GE is not valid for BOOL AttributeValue type"),
    ({"n": cmp("IN", SS("a"))},
     INVALID + "ComparisonOperator IN is not valid for SS AttributeValue type"),
    ({"n": cmp("BETWEEN", N("5"), N("1"))},
     "The BETWEEN condition was provided a range where the lower bound is greater than the "
     "upper bound"),
    ({"s": {"ComparisonOperator": "EQ", "Value": S("a"), "AttributeValueList": [S("a")]}},
     INVALID + "Value and AttributeValueList cannot be used together for Attribute: s"),
    ({"s": {"Exists": True, "ComparisonOperator": "EQ", "AttributeValueList": [S("a")]}},
     INVALID + "Exists and ComparisonOperator cannot be used together for Attribute: s"),
    ({"s": {"ComparisonOperator": "LT"}},
     INVALID + "Value or AttributeValueList must be used with ComparisonOperator: LT for "
               "Attribute: s"),
    ({"s": {"AttributeValueList": [S("a")]}},
     INVALID + "AttributeValueList can only be used with a ComparisonOperator for Attribute: s"),
    ({"s": {"Exists": True}},
     INVALID + "Value must be provided when Exists is true for Attribute: s"),
    ({"s": {}}, INVALID + "Value must be provided when Exists is null for Attribute: s"),
    ({"s": {"Exists": False, "Value": S("a")}},
     INVALID + "Value cannot be used when Exists is false for Attribute: s"),
    ({"s": {"Value": SS()}}, INVALID + "An string set  may not be empty"),
    ({"s": cmp("EQ", {"NULL": False})},
     INVALID + "Null attribute value types must have the value of true"),
]


@pytest.mark.parametrize("expected,message", EXPECTED_ERRORS,
                         ids=[f"{i}:{str(c[0])[:40]}" for i, c in enumerate(EXPECTED_ERRORS)])
def test_expected_errors_put(api, table, expected, message):
    key = new_key()
    resp = api("PutItem", {"TableName": table, "Item": key, "Expected": expected})
    assert_write_validation(resp, message)
    assert read(api, table, key) is None


@pytest.mark.parametrize("op", ["UpdateItem", "DeleteItem"])
def test_expected_errors_update_delete(api, table, op):
    key = new_key()
    resp = api(op, {"TableName": table, "Key": key,
                    "Expected": {"s": {"Exists": False, "Value": S("a")}}})
    assert_write_validation(resp, INVALID + "Value cannot be used when Exists is false for "
                                            "Attribute: s")
    assert read(api, table, key) is None


def test_expected_comparison_operator_enum(api, table):
    resp = api("PutItem", {"TableName": table, "Item": new_key(),
                           "Expected": {"s": {"ComparisonOperator": "FOO",
                                              "AttributeValueList": [S("a")]}}})
    assert_validation(resp, "1 validation error detected: Value 'FOO' at "
                            "'expected.s.member.comparisonOperator' failed to satisfy "
                            "constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, "
                            "LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, "
                            "CONTAINS]")


def test_conditional_operator_enum(api, table):
    resp = api("PutItem", {"TableName": table, "Item": new_key(),
                           "Expected": {"s": {"Exists": False}}, "ConditionalOperator": "XOR"})
    assert_validation(resp, "1 validation error detected: Value 'XOR' at 'conditionalOperator' "
                            "failed to satisfy constraint: Member must satisfy enum value set: "
                            "[OR, AND]")


def test_expected_with_names_map(api, table):
    resp = api("PutItem", {"TableName": table, "Item": new_key(),
                           "Expected": {"s": {"Exists": False}},
                           "ExpressionAttributeNames": {"#s": "s"}})
    assert_write_validation(resp, "ExpressionAttributeNames can only be specified when using "
                                  "expressions")


def test_expected_with_values_map(api, table):
    resp = api("DeleteItem", {"TableName": table, "Key": new_key(),
                              "Expected": {"s": {"Exists": False}},
                              "ExpressionAttributeValues": {":s": S("s")}})
    assert_write_validation(resp, "ExpressionAttributeValues can only be specified when using "
                                  "expressions")


# --------------------------------------------------------------------------- AttributeUpdates


def attribute_updates(api, table, key, updates, **extra):
    return api("UpdateItem", dict({"TableName": table, "Key": key, "AttributeUpdates": updates},
                                  **extra))


def test_attribute_updates_put(api, table):
    key, _ = seed(api, table, a=S("old"), keep=S("k"))
    out = api.ok("UpdateItem", {"TableName": table, "Key": key, "ReturnValues": "UPDATED_NEW",
                                "AttributeUpdates": {
                                    "a": {"Action": "PUT", "Value": S("new")},
                                    "b": {"Value": {"L": [N("1")]}},
                                    "a.b": {"Action": "PUT", "Value": S("dotted")},
                                    "status": {"Value": S("active")}}})
    assert out == {"Attributes": {"a": S("new"), "b": {"L": [N("1")]}, "a.b": S("dotted"),
                                  "status": S("active")}}
    assert read(api, table, key) == dict(key, a=S("new"), keep=S("k"), b={"L": [N("1")]},
                                         status=S("active"), **{"a.b": S("dotted")})


def test_attribute_updates_upsert(api, table):
    key = new_key()
    out = api.ok("UpdateItem", {"TableName": table, "Key": key, "ReturnValues": "ALL_NEW",
                                "AttributeUpdates": {"n": {"Action": "ADD", "Value": N("5")},
                                                     "s": {"Action": "PUT", "Value": S("x")}}})
    assert out == {"Attributes": dict(key, n=N("5"), s=S("x"))}
    assert read(api, table, key) == dict(key, n=N("5"), s=S("x"))


def test_attribute_updates_add(api, table):
    key, _ = seed(api, table, n=N("0.1"), ss=SS("a"), ns=NS("1"), l=L(S("x")))
    api.ok("UpdateItem", {"TableName": table, "Key": key, "AttributeUpdates": {
        "n": {"Action": "ADD", "Value": N("0.2")},
        "ss": {"Action": "ADD", "Value": SS("a", "b")},
        "ns": {"Action": "ADD", "Value": NS("2")},
        "l": {"Action": "ADD", "Value": L(S("y"), N("2"))},
        "fresh_n": {"Action": "ADD", "Value": N("-7")},
        "fresh_s": {"Action": "ADD", "Value": SS("z")},
    }})
    item = read(api, table, key)
    assert item["n"] == N("0.3")
    assert normalize(item["ss"]) == normalize(SS("a", "b"))
    assert normalize(item["ns"]) == normalize(NS("1", "2"))
    assert item["l"] == L(S("x"), S("y"), N("2"))
    assert item["fresh_n"] == N("-7")
    assert item["fresh_s"] == SS("z")


def test_attribute_updates_delete(api, table):
    key, _ = seed(api, table, a=S("1"), ss=SS("a", "b", "c"), ns=NS("1", "2"), keep=S("k"))
    out = api.ok("UpdateItem", {"TableName": table, "Key": key, "ReturnValues": "UPDATED_OLD",
                                "AttributeUpdates": {
                                    "a": {"Action": "DELETE"},
                                    "ss": {"Action": "DELETE", "Value": SS("a", "z")},
                                    "ns": {"Action": "DELETE", "Value": NS("1", "2")},
                                    "absent": {"Action": "DELETE"}}})
    assert normalize_item(out["Attributes"]) == normalize_item(
        {"a": S("1"), "ss": SS("a", "b", "c"), "ns": NS("1", "2")})
    item = read(api, table, key)
    assert normalize_item(item) == normalize_item(dict(key, ss=SS("b", "c"), keep=S("k")))


def test_attribute_updates_delete_on_missing_item(api, table):
    key = new_key()
    resp = attribute_updates(api, table, key, {"a": {"Action": "DELETE"}})
    assert resp.status == 200, resp
    item = read(api, table, key)
    assert item is None or item == key


def test_attribute_updates_with_expected(api, table):
    key, item = seed(api, table, v=N("1"))
    resp = attribute_updates(api, table, key, {"v": {"Action": "ADD", "Value": N("1")}},
                             Expected={"v": cmp("GT", N("1"))},
                             ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert_ccf(resp, item)
    out = api.ok("UpdateItem", {"TableName": table, "Key": key, "ReturnValues": "UPDATED_NEW",
                                "AttributeUpdates": {"v": {"Action": "ADD", "Value": N("1")}},
                                "Expected": {"v": cmp("GT", N("1")), "w": {"Exists": False}},
                                "ConditionalOperator": "OR"})
    assert out == {"Attributes": {"v": N("2")}}


def test_attribute_updates_boto3(ddb, table, api):
    key = new_key()
    out = ddb.update_item(TableName=table, Key=key, ReturnValues="ALL_NEW",
                          AttributeUpdates={"c": {"Action": "ADD", "Value": N("2")}})
    assert out["Attributes"] == dict(key, c=N("2"))


@pytest.mark.parametrize("updates,message", [
    ({"a": {"Action": "PUT"}},
     INVALID + "Only DELETE action is allowed when no attribute value is specified"),
    ({"a": {}}, INVALID + "Only DELETE action is allowed when no attribute value is specified"),
    ({"a": {"Action": "ADD"}},
     INVALID + "Only DELETE action is allowed when no attribute value is specified"),
    ({"a": {"Action": "DELETE", "Value": S("x")}},
     INVALID + "DELETE action with value is not supported for the type S"),
    ({"a": {"Action": "DELETE", "Value": N("1")}},
     INVALID + "DELETE action with value is not supported for the type N"),
    ({"a": {"Action": "ADD", "Value": S("x")}},
     INVALID + "ADD action is not supported for the type S"),
    ({"a": {"Action": "ADD", "Value": B(b"x")}},
     INVALID + "ADD action is not supported for the type B"),
    ({"a": {"Action": "ADD", "Value": {"BOOL": True}}},
     INVALID + "ADD action is not supported for the type BOOL"),
    ({"a": {"Action": "ADD", "Value": NULL}},
     INVALID + "ADD action is not supported for the type NULL"),
    ({"a": {"Action": "ADD", "Value": {"M": {}}}},
     INVALID + "ADD action is not supported for the type M"),
    ({"a": {"Action": "PUT", "Value": NS()}}, INVALID + "An number set  may not be empty"),
])
def test_attribute_updates_errors(api, table, updates, message):
    key = new_key()
    assert_write_validation(attribute_updates(api, table, key, updates), message)
    assert read(api, table, key) is None


@pytest.mark.parametrize("action", [{"Action": "PUT", "Value": S("x")},
                                    {"Action": "ADD", "Value": SS("x")},
                                    {"Action": "DELETE"}])
def test_attribute_updates_key_attribute(api, table, action):
    key, item = seed(api, table, a=S("1"))
    resp = attribute_updates(api, table, key, {"pk": action})
    assert_validation(resp, INVALID + "Cannot update attribute pk. This attribute is part of "
                                      "the key")
    assert read(api, table, key) == item


# --------------------------------------------------------------------------- mixing the two forms

EXPECTED = {"a": {"Exists": False}}
UPDATES = {"a": {"Action": "PUT", "Value": S("x")}}

MIXING_CASES = [
    ("PutItem", {"Expected": EXPECTED, "ConditionExpression": "attribute_not_exists(a)"},
     "{Expected}", "{ConditionExpression}"),
    ("PutItem", {"Expected": EXPECTED, "ConditionalOperator": "OR",
                 "ConditionExpression": "attribute_not_exists(a)"},
     "{Expected, ConditionalOperator}", "{ConditionExpression}"),
    ("DeleteItem", {"Expected": EXPECTED, "ConditionExpression": "attribute_not_exists(a)"},
     "{Expected}", "{ConditionExpression}"),
    ("DeleteItem", {"ConditionalOperator": "AND",
                    "ConditionExpression": "attribute_not_exists(a)"},
     "{ConditionalOperator}", "{ConditionExpression}"),
    ("UpdateItem", {"AttributeUpdates": UPDATES, "UpdateExpression": "REMOVE b"},
     "{AttributeUpdates}", "{UpdateExpression}"),
    ("UpdateItem", {"AttributeUpdates": UPDATES, "Expected": EXPECTED,
                    "UpdateExpression": "REMOVE b",
                    "ConditionExpression": "attribute_not_exists(a)"},
     "{AttributeUpdates, Expected}", "{UpdateExpression, ConditionExpression}"),
    ("UpdateItem", {"Expected": EXPECTED, "UpdateExpression": "REMOVE b"},
     "{Expected}", "{UpdateExpression}"),
    ("UpdateItem", {"AttributeUpdates": UPDATES,
                    "ConditionExpression": "attribute_not_exists(a)"},
     "{AttributeUpdates}", "{ConditionExpression}"),
    ("UpdateItem", {"AttributeUpdates": UPDATES, "Expected": EXPECTED,
                    "ConditionalOperator": "AND", "UpdateExpression": "REMOVE b"},
     "{AttributeUpdates, Expected, ConditionalOperator}", "{UpdateExpression}"),
]


@pytest.mark.parametrize("op,members,legacy,expression", MIXING_CASES,
                         ids=[f"{c[0]}:{c[2]}+{c[3]}" for c in MIXING_CASES])
def test_mixing_write(api, table, op, members, legacy, expression):
    key = new_key()
    body = dict({"TableName": table, "Item" if op == "PutItem" else "Key": key}, **members)
    resp = api(op, body)
    assert_write_validation(resp, f"{MIXING}Non-expression parameters: {legacy} "
                                  f"Expression parameters: {expression}")
    assert read(api, table, key) is None


def test_mixing_get_is_bare(api, table):
    resp = api("GetItem", {"TableName": table, "Key": new_key(), "AttributesToGet": ["a"],
                           "ProjectionExpression": "#a", "ExpressionAttributeNames": {"#a": "a"}})
    assert_validation(resp, f"{MIXING}Non-expression parameters: {{AttributesToGet}} "
                            "Expression parameters: {ProjectionExpression}")
