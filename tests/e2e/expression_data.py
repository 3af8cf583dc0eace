"""Values and helpers shared by the expression tests (test_conditions.py,
test_expression_validation.py, test_projection_expression.py): the rich item, and `holds`, which
evaluates a condition against a stored item. Their fixtures are in expression_fixtures.py."""

import uuid

from kumo_testlib import (
    NS_DYNAMODB,
    b64,
)

CCF = NS_DYNAMODB + "ConditionalCheckFailedException"
CCF_MESSAGE = "The conditional request failed"
INVALID = "One or more parameter values were invalid: "


def S(x):
    return {"S": x}


def N(x):
    return {"N": x}


def B(x):
    return {"B": b64(x)}


BOOL_T = {"BOOL": True}
NULL = {"NULL": True}


def new_key(prefix="k"):
    return {"pk": S(f"{prefix}-{uuid.uuid4().hex[:10]}")}


def read(api, table, key):
    out = api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    return out.get("Item")


def with_maps(body, names=None, values=None):
    if names is not None:
        body["ExpressionAttributeNames"] = names
    if values is not None:
        body["ExpressionAttributeValues"] = values
    return body


# --------------------------------------------------------------------------- the rich item

RICH = {
    "s": S("hello world"),
    "n": N("42"),
    "n2": N("7.5"),
    "neg": N("-3"),
    "b": B(b"\x01\x02\x03"),
    "bhi": B(b"\xff"),
    "t": BOOL_T,
    "f": {"BOOL": False},
    "nul": NULL,
    "ss": {"SS": ["a", "b", "c"]},
    "ns": {"NS": ["1", "2", "3"]},
    "bs": {"BS": [b64(b"\x01"), b64(b"\x02")]},
    "l": {"L": [S("x"), N("1"), {"M": {"c": S("deep")}}, {"L": [S("y")]}]},
    "m": {"M": {
        "b": {"L": [{"M": {"c": N("1")}}, {"M": {"c": N("2"), "d": S("z")}}]},
        "k": S("v"),
        "dot.ted": S("dk"),
    }},
    "e": S(""),
    "emoji": S("\U0001F600"),
    "weird-name": S("w"),
    "a.b": S("top"),
    "a": {"M": {"b": S("nested")}},
    "status": S("active"),
    "remove": S("r"),
}


def holds(api, table, item, expression, names=None, values=None):
    """Evaluates `expression` against the stored `item` through a conditional PutItem that
    writes the same item back: True on success, False on ConditionalCheckFailedException."""
    body = with_maps({"TableName": table, "Item": item, "ConditionExpression": expression},
                     names, values)
    resp = api("PutItem", body)
    if resp.status == 200:
        return True
    assert resp.status == 400 and resp.full_type == CCF, (
        f"condition {expression!r} did not evaluate: {resp!r}")
    return False
