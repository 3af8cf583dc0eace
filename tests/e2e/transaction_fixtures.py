"""Shared by the transaction tests (test_transactions.py, test_transact_get.py): messages,
request helpers, the two tables every test transacts over, and their starting items."""

import copy
import json
import uuid

import pytest

from kumo_testlib import (
    COR_PREFIX,
    N,
    NS_DYNAMODB,
    S,
    assert_error,
    assert_not_found,
    assert_validation,
    item_size,
    normalize_item,
    scan_all,
    sized,
    table_arn,
)

INVALID = "One or more parameter values were invalid: "
KEY_MISMATCH = "The provided key element does not match the schema"
MULTIPLE_OPS = "Transaction request cannot include multiple operations on one item"
ONE_ACTION = "TransactItems can only contain one of Check, Put, Update or Delete"
CANCELED = NS_DYNAMODB + "TransactionCanceledException"
MISMATCH = NS_DYNAMODB + "IdempotentParameterMismatchException"
CCF = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
NONE = {"Code": "None"}


def vreason(message):
    return {"Code": "ValidationError", "Message": message}


def transact(api, items, **extra):
    return api("TransactWriteItems", dict({"TransactItems": items}, **extra))


def assert_canceled(resp, reasons):
    """The whole error body, member for member: type, capital `Message` and one
    CancellationReasons entry per action."""
    codes = ", ".join(r["Code"] for r in reasons)
    assert resp.status == 400, resp
    expected = {
        "__type": CANCELED,
        "Message": "Transaction cancelled, please refer cancellation reasons for specific "
                   f"reasons [{codes}]",
        "CancellationReasons": reasons,
    }
    body = resp.json
    assert body == expected, f"\nexpected {json.dumps(expected)}\n     got {json.dumps(body)}"


def canon(items):
    """Items → comparable sorted list (sets unordered, attribute order irrelevant)."""
    return sorted((normalize_item(i) for i in items), key=lambda i: repr(sorted(i.items())))


def state(api, table):
    return canon(scan_all(api, table))


def get_item(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


# --------------------------------------------------------------------------- tables


@pytest.fixture
def tx(make_table):
    """pk S; GSI byOwner (owner S), projection ALL."""
    return make_table(
        ("pk", "S"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "owner", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "byOwner",
                                 "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])


@pytest.fixture
def tx2(make_table):
    """pk S, sk N."""
    return make_table(("pk", "S"), ("sk", "N"))


def owners(api, table):
    """GSI byOwner as sorted (owner, pk) pairs."""
    return sorted((i["owner"]["S"], i["pk"]["S"])
                  for i in scan_all(api, table, "byOwner"))


def owner_query(api, table, owner):
    out = api.ok("Query", {"TableName": table, "IndexName": "byOwner",
                           "KeyConditionExpression": "#o = :o",
                           "ExpressionAttributeNames": {"#o": "owner"},
                           "ExpressionAttributeValues": {":o": S(owner)}})
    return sorted(i["pk"]["S"] for i in out["Items"])


SETUP_TX = [
    {"pk": S("acct-1"), "owner": S("ann"), "balance": N(100)},
    {"pk": S("acct-2"), "owner": S("bob"), "balance": N(50)},
    {"pk": S("gate"), "open": {"BOOL": True}},
]
SETUP_TX2 = [{"pk": S("doc"), "sk": N(1), "v": N(1), "keep": S("k")}]


def populate(api, tx, tx2, tx_items=SETUP_TX, tx2_items=SETUP_TX2):
    for item in tx_items:
        api.ok("PutItem", {"TableName": tx, "Item": item})
    for item in tx2_items:
        api.ok("PutItem", {"TableName": tx2, "Item": item})


def five_actions(tx, tx2, amount=30, bob="bob"):
    """Put, Update, Delete, ConditionCheck on tx and an Update on tx2, each with a condition."""
    return [
        {"Put": {"TableName": tx,
                 "Item": {"pk": S("acct-3"), "owner": S("cat"), "balance": N(0)},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Update": {"TableName": tx, "Key": {"pk": S("acct-1")},
                    "UpdateExpression": "SET balance = balance - :amt, #o = :dan ADD visits :one",
                    "ConditionExpression": "balance >= :amt",
                    "ExpressionAttributeNames": {"#o": "owner"},
                    "ExpressionAttributeValues": {":amt": N(amount), ":dan": S("dan"),
                                                  ":one": N(1)}}},
        {"Delete": {"TableName": tx, "Key": {"pk": S("acct-2")},
                    "ConditionExpression": "#o = :bob",
                    "ExpressionAttributeNames": {"#o": "owner"},
                    "ExpressionAttributeValues": {":bob": S(bob)}}},
        {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("gate")},
                            "ConditionExpression": "#open = :t",
                            "ExpressionAttributeNames": {"#open": "open"},
                            "ExpressionAttributeValues": {":t": {"BOOL": True}}}},
        {"Update": {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)},
                    "UpdateExpression": "REMOVE v SET w = :w",
                    "ConditionExpression": "attribute_exists(v)",
                    "ExpressionAttributeValues": {":w": S("written")}}},
    ]


def check_capacity_list(resp_json, expected):
    """expected: {table: units}. ReadCapacityUnits/WriteCapacityUnits are [open] extras."""
    cc = resp_json["ConsumedCapacity"]
    assert isinstance(cc, list), cc
    got = {}
    for entry in cc:
        assert set(entry) <= {"TableName", "CapacityUnits", "ReadCapacityUnits",
                              "WriteCapacityUnits"}, entry
        assert entry["TableName"] not in got
        got[entry["TableName"]] = entry["CapacityUnits"]
    assert got == expected, cc
