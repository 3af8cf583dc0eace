"""What the PartiQL write tests share: calls of ExecuteStatement that assert its answer, the
tables they write, and DynamoDB's texts."""

import pytest

from kumo_testlib import (
    NS_DYNAMODB,
    N,
    S,
    assert_error,
    assert_not_found,
    assert_validation,
    b64,
    client_error,
    create_table_args,
    item_size,
    normalize,
    normalize_item,
    scan_all,
    sized,
    unique_name,
    wait_table_active,
)
from partiql_helpers import put

DUPLICATE = NS_DYNAMODB + "DuplicateItemException"
CONDITIONAL = NS_DYNAMODB + "ConditionalCheckFailedException"
DUPLICATE_MESSAGE = "Duplicate primary key exists in table"
CONDITIONAL_MESSAGE = "The conditional request failed"
INVALID = "One or more parameter values were invalid: "
MANDATORY_KEY = "Where clause does not contain a mandatory equality on all key attributes"
ON_INDEX = "This operation is not supported on an index"
MISSING_OPERAND = "The provided expression refers to an attribute that does not exist in the item"
WRONG_OPERAND = "An operand in the update expression has an incorrect data type"
INVALID_PATH = "The document path provided in the update expression is invalid for update"
MAX_ITEM = 409600


def B(data):
    return {"B": b64(data)}


# --------------------------------------------------------------------------- calls


def es(api, statement, params=None, **members):
    """One raw ExecuteStatement → Response."""
    body = {"Statement": statement}
    if params is not None:
        body["Parameters"] = params
    body.update(members)
    return api("ExecuteStatement", body)


def run(api, statement, params=None, **members):
    """ExecuteStatement that must succeed → its JSON body."""
    resp = es(api, statement, params, **members)
    assert resp.status == 200, f"{statement!r} failed: {resp!r}"
    return resp.json


def written(api, statement, params=None, **members):
    """A write without RETURNING: the answer is exactly {"Items": []}."""
    out = run(api, statement, params, **members)
    assert out == {"Items": []}, out
    return out


def rows(api, statement, params=None, **members):
    """A write with RETURNING: the body holds `Items` only (never `Attributes`); → Items."""
    out = run(api, statement, params, **members)
    assert set(out) == {"Items"}, out
    assert len(out["Items"]) <= 1, out
    return out["Items"]


def get(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": key,
                              "ConsistentRead": True}).get("Item")




def same(got, want):
    assert got is not None, f"no item, expected {want}"
    assert normalize_item(got) == normalize_item(want), f"\n got  {got}\n want {want}"


def same_rows(got, want):
    assert [normalize_item(r) for r in got] == [normalize_item(r) for r in want], (
        f"\n got  {got}\n want {want}")


def assert_duplicate(resp):
    assert_error(resp, 400, DUPLICATE, DUPLICATE_MESSAGE)
    assert resp.json.get("message") == DUPLICATE_MESSAGE, resp  # member `message`
    assert "Item" not in resp.json


def assert_conditional(resp, item=None):
    assert_error(resp, 400, CONDITIONAL, CONDITIONAL_MESSAGE)
    assert "ConsumedCapacity" not in resp.json, resp
    if item is None:
        assert "Item" not in resp.json, resp
    else:
        same(resp.json.get("Item"), item)


def col(statement, token, start=0):
    """1-based column of `token` in a one-line statement."""
    return statement.index(token, start) + 1


# --------------------------------------------------------------------------- tables


@pytest.fixture
def t(make_table):
    """pk S."""
    return make_table(("pk", "S"))


@pytest.fixture
def tc(make_table):
    """pk S, sk N."""
    return make_table(("pk", "S"), ("sk", "N"))


@pytest.fixture(scope="module")
def cond_table(api, ddb):
    """One pk-S table shared by the parametrized condition cases (each uses its own key)."""
    name = unique_name("pq-cond")
    api.ok("CreateTable", create_table_args(name, ("pk", "S")))
    wait_table_active(ddb, name)
    yield name
    api("DeleteTable", {"TableName": name})
