"""ProjectionExpression and AttributesToGet on GetItem: document paths, placeholders, overlapping
paths and the error texts, which GetItem returns without the write envelope. test_conditions.py,
test_expression_validation.py and test_projection_expression.py together cover expressions,
GetItem, conditional writes and the write envelope (the `1 validation error detected: ` prefix
that PutItem, UpdateItem and DeleteItem put on request-validation errors)."""

import pytest

from kumo_testlib import assert_validation

# Registered before the import, so that the asserts of the shared helpers are rewritten.
pytest.register_assert_rewrite("expression_data")

from expression_data import (
    BOOL_T,
    INVALID,
    N,
    RICH,
    S,
    new_key,
    with_maps,
)

pytest_plugins = ["expression_fixtures"]


# --------------------------------------------------------------------------- ProjectionExpression


def project(api, table, key, expression, names=None, **extra):
    body = with_maps({"TableName": table, "Key": key, "ConsistentRead": True,
                      "ProjectionExpression": expression}, names)
    body.update(extra)
    return api("GetItem", body)


PROJECTIONS = [
    ("s", None, {"s": S("hello world")}),
    ("s, n, absent", None, {"s": S("hello world"), "n": N("42")}),
    ("m.b[1].c", None, {"m": {"M": {"b": {"L": [{"M": {"c": N("2")}}]}}}}),
    ("m.b[1]", None, {"m": {"M": {"b": {"L": [RICH["m"]["M"]["b"]["L"][1]]}}}}),
    ("m.k, s", None, {"m": {"M": {"k": S("v")}}, "s": S("hello world")}),
    ("m.k, m.b[0].c", None,
     {"m": {"M": {"k": S("v"), "b": {"L": [{"M": {"c": N("1")}}]}}}}),
    ("l[2], l[0]", None, {"l": {"L": [S("x"), {"M": {"c": S("deep")}}]}}),
    ("l[3][0]", None, {"l": {"L": [{"L": [S("y")]}]}}),
    ("l[2].c", None, {"l": {"L": [{"M": {"c": S("deep")}}]}}),
    ("l[9], m.nothing, s.x", None, {}),
    ("#w", {"#w": "weird-name"}, {"weird-name": S("w")}),
    ("#ab", {"#ab": "a.b"}, {"a.b": S("top")}),
    ("#a.#b", {"#a": "a", "#b": "b"}, {"a": {"M": {"b": S("nested")}}}),
    ("a.b", None, {"a": {"M": {"b": S("nested")}}}),
    ("m.#dk", {"#dk": "dot.ted"}, {"m": {"M": {"dot.ted": S("dk")}}}),
    ("#st, pk", {"#st": "status"}, None),
    (" s ,\tn ", None, {"s": S("hello world"), "n": N("42")}),
]


@pytest.mark.parametrize("expression,names,expected", PROJECTIONS,
                         ids=[f"{i}:{p[0]}" for i, p in enumerate(PROJECTIONS)])
def test_projection(api, table, rich, expression, names, expected):
    resp = project(api, table, {"pk": rich["pk"]}, expression, names)
    assert resp.status == 200, resp
    if expected is None:
        expected = {"status": S("active"), "pk": rich["pk"]}
    assert resp.json == {"Item": expected}


def test_projection_missing_item(api, table):
    resp = project(api, table, new_key(), "a, b.c")
    assert resp.status == 200 and resp.json == {}


def test_projection_boto3(ddb, table, rich):
    out = ddb.get_item(TableName=table, Key={"pk": rich["pk"]}, ConsistentRead=True,
                       ProjectionExpression="#m.b[1].d, bs",
                       ExpressionAttributeNames={"#m": "m"})
    assert out["Item"]["m"] == {"M": {"b": {"L": [{"M": {"d": {"S": "z"}}}]}}}
    assert set(out["Item"]["bs"]["BS"]) == {b"\x01", b"\x02"}


PROJECTION_ERRORS = [
    ("a, a.b", None, "Two document paths overlap with each other; must remove or rewrite one "
                     "of these paths; path one: [a], path two: [a, b]"),
    ("a, a", None, "Two document paths overlap with each other; must remove or rewrite one of "
                   "these paths; path one: [a], path two: [a]"),
    ("a.b.c, a.b", None, "Two document paths overlap with each other; must remove or rewrite "
                         "one of these paths; path one: [a, b, c], path two: [a, b]"),
    ("l[1], l[1].x", None, "Two document paths overlap with each other; must remove or "
                           "rewrite one of these paths; path one: [l, [1]], path two: "
                           "[l, [1], x]"),
    ("a.b, a[3]", None, "Two document paths conflict with each other; must remove or rewrite "
                        "one of these paths; path one: [a, b], path two: [a, [3]]"),
    ("#a, a", {"#a": "a"}, "Two document paths overlap with each other; must remove or rewrite "
                           "one of these paths; path one: [a], path two: [a]"),
    ("l[0], l[0]", None, "Two document paths overlap with each other; must remove or rewrite "
                         "one of these paths; path one: [l, [0]], path two: [l, [0]]"),
    ("name", None, "Attribute name is a reserved keyword; reserved keyword: name"),
    ("a, m.Size", None, "Attribute name is a reserved keyword; reserved keyword: Size"),
    ("a,,b", None, 'Syntax error; token: ",", near: ",,b"'),
    ("a,", None, 'Syntax error; token: "<EOF>", near: ","'),
    ("a b", None, 'Syntax error; token: "b", near: "a b"'),
    ("a[x]", None, 'Syntax error; token: "x", near: "[x]"'),
    ("", None, "The expression can not be empty;"),
    ("#x", None, "An expression attribute name used in the document path is not defined; "
                 "attribute name: #x"),
]


@pytest.mark.parametrize("expression,names,message", PROJECTION_ERRORS,
                         ids=[f"{i}:{p[0]}" for i, p in enumerate(PROJECTION_ERRORS)])
def test_projection_error_is_bare(api, table, expression, names, message):
    resp = project(api, table, new_key(), expression, names)
    assert_validation(resp, "Invalid ProjectionExpression: " + message)


def test_projection_size_limit(api, table, rich):
    ok = "s" + " " * 4095
    resp = project(api, table, {"pk": rich["pk"]}, ok)
    assert resp.status == 200 and resp.json == {"Item": {"s": S("hello world")}}
    assert_validation(project(api, table, {"pk": rich["pk"]}, ok + " "),
                      "Invalid ProjectionExpression: Expression size has exceeded the maximum "
                      "allowed size; expression size: 4097")


def test_get_unused_names_bare(api, table):
    resp = project(api, table, new_key(), "a", {"#a": "a", "#b": "b"})
    assert_validation(resp, "Value provided in ExpressionAttributeNames unused in expressions: "
                            "keys: {#a, #b}")


def test_get_names_without_projection_bare(api, table):
    resp = api("GetItem", {"TableName": table, "Key": new_key(),
                           "ExpressionAttributeNames": {"#a": "a"}})
    assert_validation(resp, "ExpressionAttributeNames can only be specified when using "
                            "expressions")


def test_get_names_with_attributes_to_get_bare(api, table):
    resp = api("GetItem", {"TableName": table, "Key": new_key(), "AttributesToGet": ["a"],
                           "ExpressionAttributeNames": {"#a": "a"}})
    assert_validation(resp, "ExpressionAttributeNames can only be specified when using "
                            "expressions")


def test_get_empty_names_map_bare(api, table):
    resp = project(api, table, new_key(), "a", {})
    assert_validation(resp, "ExpressionAttributeNames must not be empty")


def test_get_invalid_name_key_bare(api, table):
    resp = project(api, table, new_key(), "#a", {"#a": "a", "bad": "b"})
    assert_validation(resp, 'ExpressionAttributeNames contains invalid key: Syntax error; '
                            'key: "bad"')


def test_get_ignores_expression_attribute_values(api, table, rich):
    # GetItem has no ExpressionAttributeValues member; unknown members are ignored.
    resp = project(api, table, {"pk": rich["pk"]}, "n", ExpressionAttributeValues={":v": S("x")})
    assert resp.status == 200, resp
    assert resp.json == {"Item": {"n": N("42")}}


# --------------------------------------------------------------------------- AttributesToGet


def test_attributes_to_get(api, table, rich):
    out = api.ok("GetItem", {"TableName": table, "Key": {"pk": rich["pk"]},
                             "ConsistentRead": True,
                             "AttributesToGet": ["s", "a.b", "weird-name", "status", "absent"]})
    assert out == {"Item": {"s": S("hello world"), "a.b": S("top"), "weird-name": S("w"),
                            "status": S("active")}}


def test_attributes_to_get_nothing_matches(api, table, rich):
    out = api.ok("GetItem", {"TableName": table, "Key": {"pk": rich["pk"]},
                             "ConsistentRead": True, "AttributesToGet": ["zz"]})
    assert out == {"Item": {}}


def test_attributes_to_get_boto3(ddb, table, rich):
    out = ddb.get_item(TableName=table, Key={"pk": rich["pk"]}, ConsistentRead=True,
                       AttributesToGet=["n", "t"])
    assert out["Item"] == {"n": N("42"), "t": BOOL_T}


def test_attributes_to_get_duplicate(api, table):
    resp = api("GetItem", {"TableName": table, "Key": new_key(),
                           "AttributesToGet": ["a", "b", "b"]})
    assert_validation(resp, INVALID + "Duplicate value in attribute name: b")


def test_attributes_to_get_with_projection(api, table):
    resp = api("GetItem", {"TableName": table, "Key": new_key(), "AttributesToGet": ["a"],
                           "ProjectionExpression": "a"})
    assert_validation(resp, "Can not use both expression and non-expression parameters in the "
                            "same request: Non-expression parameters: {AttributesToGet} "
                            "Expression parameters: {ProjectionExpression}")
