"""UpdateItem as DynamoDB does it where it is easy to get wrong: an update that only removes
creates no item on a missing key (and records nothing in the stream), UPDATED_NEW sees the
new item through the update's paths as written, legacy AttributeUpdates are not an
expression (no size limit, their own type-mismatch text), ConditionalOperator needs
Expected, and attribute names are 1 to 65,535 bytes long wherever a request names one."""

import uuid

import pytest

from kumo_testlib import COR_PREFIX, assert_validation, normalize_item
from stream_helpers import (  # noqa: F401
    N,
    S,
    read_stream,
    stream_table,
    streams,
)

INVALID = "One or more parameter values were invalid: "
TYPE_MISMATCH = "Type mismatch for attribute to update"
EMPTY_NAME = "Empty attribute name"
LONG_NAME = "Attribute name has exceeded the maximum allowed length of 65535 bytes"
CONDITIONAL_OPERATOR = ("ConditionalOperator can only be used when Expected is specified and "
                        "not empty")


def SS(*xs):
    return {"SS": list(xs)}


def L(*xs):
    return {"L": list(xs)}


def M(**kw):
    return {"M": kw}


@pytest.fixture
def table(make_table, api):
    """A table (pk S) with a NEW_AND_OLD_IMAGES stream: returns (name, stream arn)."""
    return stream_table(make_table, api)


def new_key():
    return {"pk": S("f-" + uuid.uuid4().hex[:12])}


def read(api, name, key):
    return api.ok("GetItem", {"TableName": name, "Key": key, "ConsistentRead": True}).get("Item")


def update_item(api, name, key, **body):
    return api("UpdateItem", dict({"TableName": name, "Key": key}, **body))


# --------------------------------------------------------------- updates that only remove


REMOVALS = [
    {"UpdateExpression": "REMOVE a"},
    {"UpdateExpression": "REMOVE a, b"},
    {"UpdateExpression": "REMOVE x.y"},
    {"UpdateExpression": "REMOVE x[0]"},
    {"UpdateExpression": "REMOVE a, x.y[1].z"},
    {"UpdateExpression": "DELETE s :s REMOVE x.y", "ExpressionAttributeValues": {":s": SS("v")}},
    {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE", "Value": SS("v")}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE"}, "b": {"Action": "DELETE",
                                                           "Value": SS("v")}}},
]


def removal_id(body):
    if "UpdateExpression" in body:
        return body["UpdateExpression"]
    return "AttributeUpdates " + ", ".join(
        f"{name}:DELETE{'+Value' if 'Value' in u else ''}"
        for name, u in body["AttributeUpdates"].items())


@pytest.mark.parametrize("body", REMOVALS, ids=[removal_id(b) for b in REMOVALS])
def test_removals_on_missing_item_create_nothing(api, streams, table, body):
    name, arn = table
    key = new_key()
    for return_values in ("ALL_NEW", "UPDATED_NEW", "NONE"):
        resp = update_item(api, name, key, ReturnValues=return_values, **body)
        assert resp.status == 200, resp
        assert "Attributes" not in resp.json, resp
    assert read(api, name, key) is None
    assert read_stream(streams, arn) == []
    # The real insert later is an INSERT, not a MODIFY of a key-only item.
    api.ok("PutItem", {"TableName": name, "Item": dict(key, v=N("1"))})
    assert [r["eventName"] for r in read_stream(streams, arn)] == ["INSERT"]


def test_only_an_update_that_removes_needs_the_item(api, streams, table):
    name, arn = table
    gone, key = new_key(), new_key()
    resp = update_item(api, name, gone, AttributeUpdates={"a": {"Action": "DELETE"}},
                       ReturnValues="ALL_NEW")
    assert resp.status == 200 and resp.json == {}, resp
    # An empty AttributeUpdates is no removal: it creates the key-only item.
    out = api.ok("UpdateItem", {"TableName": name, "Key": key, "AttributeUpdates": {},
                                "ReturnValues": "ALL_NEW"})
    assert out == {"Attributes": key}
    assert read(api, name, gone) is None
    assert read(api, name, key) == key
    records = read_stream(streams, arn)
    assert [(r["eventName"], r["dynamodb"]["Keys"]) for r in records] == [("INSERT", key)]
    # On an existing item removals apply, and a path through a missing parent is an error.
    api.ok("PutItem", {"TableName": name, "Item": dict(key, a=N("1"), x=M(y=N("2")))})
    out = api.ok("UpdateItem", {"TableName": name, "Key": key, "UpdateExpression": "REMOVE a",
                                "ReturnValues": "ALL_NEW"})
    assert out == {"Attributes": dict(key, x=M(y=N("2")))}
    resp = update_item(api, name, key, UpdateExpression="REMOVE q.r")
    assert_validation(resp, "The document path provided in the update expression is invalid "
                            "for update")


# --------------------------------------------------------------- UPDATED_NEW and list indexes


def test_updated_new_sees_list_indexes_as_written(api, table):
    name, _ = table
    key = new_key()
    api.ok("PutItem", {"TableName": name,
                       "Item": dict(key, a=M(c=L(N("1"), N("2"), N("3"))))})
    out = api.ok("UpdateItem", {"TableName": name, "Key": key,
                                "UpdateExpression": "SET a.c[100] = :v",
                                "ExpressionAttributeValues": {":v": S("v")},
                                "ReturnValues": "UPDATED_NEW"})
    assert out == {}
    assert read(api, name, key)["a"] == M(c=L(N("1"), N("2"), N("3"), S("v")))
    out = api.ok("UpdateItem", {"TableName": name, "Key": key,
                                "UpdateExpression": "REMOVE a.c[1]",
                                "ReturnValues": "UPDATED_NEW"})
    assert out == {"Attributes": {"a": M(c=L(N("3")))}}
    out = api.ok("UpdateItem", {"TableName": name, "Key": key,
                                "UpdateExpression": "REMOVE a.c[1]",
                                "ReturnValues": "UPDATED_OLD"})
    assert out == {"Attributes": {"a": M(c=L(N("3")))}}
    assert read(api, name, key)["a"] == M(c=L(N("1"), S("v")))
    out = api.ok("UpdateItem", {"TableName": name, "Key": key,
                                "UpdateExpression": "REMOVE a.c[5]",
                                "ReturnValues": "UPDATED_NEW"})
    assert out == {}


# --------------------------------------------------------------- AttributeUpdates


def test_attribute_updates_are_not_an_expression(api, table):
    name, _ = table
    key = new_key()
    puts = {f"attribute_{i:03}": {"Action": "PUT", "Value": N(str(i))} for i in range(200)}
    api.ok("UpdateItem", {"TableName": name, "Key": key, "AttributeUpdates": puts})
    item = read(api, name, key)
    assert len(item) == 201 and item["attribute_199"] == N("199")
    # Each legacy list ADD is a list_append: 200 of them are no operator limit either.
    adds = {f"list_{i:03}": {"Action": "ADD", "Value": L(N(str(i)))} for i in range(200)}
    out = api.ok("UpdateItem", {"TableName": name, "Key": key, "AttributeUpdates": adds,
                                "ReturnValues": "UPDATED_NEW"})
    assert len(out["Attributes"]) == 200 and out["Attributes"]["list_007"] == L(N("7"))


CLASHES = [
    (SS("x"), "ADD", N("1")),          # number added to a set
    (N("1"), "ADD", SS("x")),          # set added to a number
    (L(N("1")), "ADD", SS("x")),       # set added to a list
    (SS("x"), "ADD", L(N("1"))),       # list appended to a set
    (N("1"), "ADD", L(N("1"))),        # list appended to a number
    (N("1"), "DELETE", SS("x")),       # set deleted from a number
    (S("x"), "DELETE", SS("x")),       # set deleted from a string
    (L(S("x")), "DELETE", SS("x")),    # set deleted from a list
]


@pytest.mark.parametrize("stored,action,value", CLASHES,
                         ids=[f"{a}-{list(v)[0]}-to-{list(s)[0]}" for s, a, v in CLASHES])
def test_attribute_updates_type_mismatch(api, table, stored, action, value):
    name, _ = table
    key = new_key()
    item = dict(key, a=stored)
    api.ok("PutItem", {"TableName": name, "Item": item})
    resp = update_item(api, name, key, AttributeUpdates={"a": {"Action": action, "Value": value}})
    assert_validation(resp, TYPE_MISMATCH)
    assert read(api, name, key) == item


# --------------------------------------------------------------- ConditionalOperator


@pytest.mark.parametrize("operation", ["PutItem", "UpdateItem", "DeleteItem"])
@pytest.mark.parametrize("expected", [None, {}])
def test_conditional_operator_needs_expected(api, table, operation, expected):
    name, _ = table
    key = new_key()
    api.ok("PutItem", {"TableName": name, "Item": dict(key, v=N("1"))})
    body = {"TableName": name, "ConditionalOperator": "OR"}
    body.update({"Item": dict(key, v=N("2"))} if operation == "PutItem" else {"Key": key})
    if operation == "UpdateItem":
        body["AttributeUpdates"] = {"v": {"Action": "PUT", "Value": N("2")}}
    if expected is not None:
        body["Expected"] = expected
    assert_validation(api(operation, body), COR_PREFIX + CONDITIONAL_OPERATOR)
    assert read(api, name, key) == dict(key, v=N("1"))


# --------------------------------------------------------------- attribute names


def long_name():
    return "n" * 65536


@pytest.mark.parametrize("attribute,error", [("", EMPTY_NAME), (None, LONG_NAME)],
                         ids=["empty", "65536-bytes"])
def test_invalid_attribute_names(api, table, attribute, error):
    name, _ = table
    attribute = long_name() if attribute is None else attribute
    key = new_key()
    resp = api("PutItem", {"TableName": name, "Item": dict(key, **{attribute: S("v")})})
    assert_validation(resp, COR_PREFIX + INVALID + error)
    assert read(api, name, key) is None
    resp = update_item(api, name, key, AttributeUpdates={attribute: {"Value": S("v")}})
    assert_validation(resp, COR_PREFIX + INVALID + error)
    resp = update_item(api, name, key, UpdateExpression="SET #a = :v",
                       ExpressionAttributeNames={"#a": attribute},
                       ExpressionAttributeValues={":v": S("v")})
    assert_validation(resp, COR_PREFIX + "ExpressionAttributeNames contains invalid value: "
                      f"{error} for key #a")
    assert read(api, name, key) is None
    resp = api("GetItem", {"TableName": name, "Key": key, "ProjectionExpression": "#a",
                           "ExpressionAttributeNames": {"#a": attribute}})
    assert_validation(resp, f"ExpressionAttributeNames contains invalid value: {error} for key #a")
    resp = api("GetItem", {"TableName": name, "Key": key, "AttributesToGet": ["v", attribute]})
    assert_validation(resp, INVALID + error)
    resp = api("Scan", {"TableName": name, "AttributesToGet": [attribute]})
    assert_validation(resp, INVALID + error)
    # 65,535 bytes is the longest name.
    longest = "n" * 65535
    api.ok("PutItem", {"TableName": name, "Item": dict(key, **{longest: S("v")})})
    out = api.ok("GetItem", {"TableName": name, "Key": key, "AttributesToGet": [longest]})
    assert out["Item"] == {longest: S("v")}
    api.ok("UpdateItem", {"TableName": name, "Key": key,
                          "AttributeUpdates": {longest: {"Action": "DELETE"}}})
    assert normalize_item(read(api, name, key)) == normalize_item(key)


