"""TransactGetItems: responses in request order from one snapshot,
projections, transactional read capacity, and request validation."""

import copy
import json
import uuid

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_DYNAMODB,
    assert_error,
    assert_not_found,
    assert_validation,
    item_size,
    normalize_item,
    table_arn,
)
from transaction_fixtures import (  # noqa: F401
    CANCELED,
    CCF,
    INVALID,
    KEY_MISMATCH,
    MISMATCH,
    MULTIPLE_OPS,
    NONE,
    ONE_ACTION,
    SETUP_TX,
    SETUP_TX2,
    N,
    S,
    assert_canceled,
    canon,
    check_capacity_list,
    five_actions,
    get_item,
    owner_query,
    owners,
    populate,
    scan_all,
    sized,
    state,
    transact,
    tx,
    tx2,
    vreason,
)


# =========================================================================== TransactGetItems


def tget(api, gets, **extra):
    return api("TransactGetItems", dict({"TransactItems": [{"Get": g} for g in gets]}, **extra))


def test_transact_get_in_order_with_missing_and_projections(api, tx, tx2):
    populate(api, tx, tx2)
    api.ok("PutItem", {"TableName": tx2, "Item": {"pk": S("nest"), "sk": N(2),
                                                  "m": {"M": {"a": N(1), "b": N(2)}},
                                                  "l": {"L": [S("x"), S("y")]}, "z": S("z")}})
    resp = tget(api, [
        {"TableName": tx2, "Key": {"pk": S("nest"), "sk": N(2)},
         "ProjectionExpression": "m.b, l[1], #z", "ExpressionAttributeNames": {"#z": "z"}},
        {"TableName": tx, "Key": {"pk": S("nobody")}},
        {"TableName": tx, "Key": {"pk": S("acct-1")}},
        {"TableName": tx, "Key": {"pk": S("acct-2")}, "ProjectionExpression": "#o",
         "ExpressionAttributeNames": {"#o": "owner"}},
        {"TableName": tx, "Key": {"pk": S("gate")}, "ProjectionExpression": "nothing_here"},
        {"TableName": tx2, "Key": {"pk": S("gone"), "sk": N(0)}, "ProjectionExpression": "pk"},
    ])
    assert resp.status == 200, resp
    assert resp.json == {"Responses": [
        {"Item": {"m": {"M": {"b": N(2)}}, "l": {"L": [S("y")]}, "z": S("z")}},
        {},
        {"Item": SETUP_TX[0]},
        {"Item": {"owner": S("bob")}},
        {"Item": {}},
        {},
    ]}


def test_transact_get_capacity_twice_strongly_consistent(api, make_table):
    a = make_table(("pk", "S"))
    b = make_table(("pk", "S"))
    api.ok("PutItem", {"TableName": a, "Item": sized({"pk": S("big")}, 5000)})
    api.ok("PutItem", {"TableName": a, "Item": sized({"pk": S("small")}, 100)})
    api.ok("PutItem", {"TableName": b, "Item": sized({"pk": S("huge")}, 12289)})
    resp = tget(api, [
        {"TableName": a, "Key": {"pk": S("big")}},           # 2 × 2
        {"TableName": b, "Key": {"pk": S("huge")},
         "ProjectionExpression": "pk"},                      # 2 × 4, whole item counts
        {"TableName": a, "Key": {"pk": S("small")}},         # 2 × 1
        {"TableName": a, "Key": {"pk": S("missing")}},       # 2 × 1 (minimum)
    ], ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert [bool(r) for r in resp.json["Responses"]] == [True, True, True, False]
    assert resp.json["Responses"][1] == {"Item": {"pk": S("huge")}}
    check_capacity_list(resp.json, {a: 8.0, b: 8.0})


def test_transact_get_capacity_indexes_mode_accepted(api, tx):
    api.ok("PutItem", {"TableName": tx, "Item": {"pk": S("i")}})
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("i")}}], ReturnConsumedCapacity="INDEXES")
    assert resp.status == 200, resp
    assert resp.json["Responses"] == [{"Item": {"pk": S("i")}}]
    cc = resp.json["ConsumedCapacity"]
    assert len(cc) == 1 and cc[0]["TableName"] == tx and cc[0]["CapacityUnits"] == 2.0, cc
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("i")}}], ReturnConsumedCapacity="NONE")
    assert resp.status == 200 and resp.json == {"Responses": [{"Item": {"pk": S("i")}}]}, resp


def test_transact_get_boto3(ddb, api, tx, tx2):
    populate(api, tx, tx2)
    out = ddb.transact_get_items(TransactItems=[
        {"Get": {"TableName": tx2, "Key": {"pk": {"S": "doc"}, "sk": {"N": "1"}}}},
        {"Get": {"TableName": tx, "Key": {"pk": {"S": "none"}}}},
    ])
    assert out["Responses"] == [
        {"Item": {"pk": {"S": "doc"}, "sk": {"N": "1"}, "v": {"N": "1"}, "keep": {"S": "k"}}},
        {}]


def test_transact_get_missing_table(api, tx):
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("a")}},
                      {"TableName": "no-such-table-tget", "Key": {"pk": S("a")}}])
    assert_not_found(resp)


@pytest.mark.parametrize("key", [
    pytest.param({"pk": S("p")}, id="missing-range"),
    pytest.param({"pk": S("p"), "sk": S("1")}, id="wrong-type"),
    pytest.param({"pk": S("p"), "sk": N(1), "x": S("x")}, id="extra-attr"),
    pytest.param({}, id="empty"),
])
def test_transact_get_key_mismatch(api, tx2, key):
    resp = tget(api, [{"TableName": tx2, "Key": {"pk": S("ok"), "sk": N(1)}},
                      {"TableName": tx2, "Key": key}])
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH)])


def test_transact_get_more_than_100(api, tx):
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S(f"k{i}")}} for i in range(101)])
    # Value rendering [open].
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith("at 'transactItems' failed to satisfy constraint: Member must "
                                 "have length less than or equal to 100"), resp.message


def test_transact_get_exactly_100(api, tx):
    api.ok("PutItem", {"TableName": tx, "Item": {"pk": S("k42")}})
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S(f"k{i}")}} for i in range(100)])
    assert resp.status == 200, resp
    responses = resp.json["Responses"]
    assert len(responses) == 100
    assert responses[42] == {"Item": {"pk": S("k42")}}
    assert all(r == {} for i, r in enumerate(responses) if i != 42)


def test_transact_get_element_without_get(api, tx):
    resp = api("TransactGetItems", {"TransactItems": [{"Get": {"TableName": tx,
                                                               "Key": {"pk": S("a")}}}, {}]})
    assert_validation(resp, "1 validation error detected: Value null at "
                            "'transactItems.2.member.get' failed to satisfy constraint: Member "
                            "must not be null")
