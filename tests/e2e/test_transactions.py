"""TransactWriteItems: every action kind
with conditions, all-or-nothing including secondary-index entries, the exact
TransactionCanceledException body, request-level validation, ClientRequestToken idempotency
and transactional capacity."""

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


# =========================================================================== TransactWriteItems


def test_every_action_kind_commits(api, tx, tx2):
    populate(api, tx, tx2)
    assert owners(api, tx) == [("ann", "acct-1"), ("bob", "acct-2")]
    resp = transact(api, five_actions(tx, tx2))
    assert resp.status == 200, resp
    assert resp.json == {}

    assert state(api, tx) == canon([
        {"pk": S("acct-1"), "owner": S("dan"), "balance": N(70), "visits": N(1)},
        {"pk": S("acct-3"), "owner": S("cat"), "balance": N(0)},
        {"pk": S("gate"), "open": {"BOOL": True}},
    ])
    assert state(api, tx2) == [normalize_item(
        {"pk": S("doc"), "sk": N(1), "keep": S("k"), "w": S("written")})]
    # Index entries moved with the writes: ann → dan, bob deleted, cat added.
    assert owners(api, tx) == [("cat", "acct-3"), ("dan", "acct-1")]
    assert owner_query(api, tx, "ann") == []
    assert owner_query(api, tx, "bob") == []
    assert owner_query(api, tx, "dan") == ["acct-1"]
    entry = api.ok("Query", {"TableName": tx, "IndexName": "byOwner",
                             "KeyConditionExpression": "#o = :o",
                             "ExpressionAttributeNames": {"#o": "owner"},
                             "ExpressionAttributeValues": {":o": S("dan")}})["Items"]
    assert entry == [{"pk": S("acct-1"), "owner": S("dan"), "balance": N(70), "visits": N(1)}]


def test_boto3_transact_write_items(ddb, tx, tx2):
    out = ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": tx, "Item": {"pk": {"S": "b1"}, "owner": {"S": "zed"},
                                           "bin": {"B": b"\x00\xff"}}}},
        {"Update": {"TableName": tx2, "Key": {"pk": {"S": "b2"}, "sk": {"N": "2"}},
                    "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
    ])
    assert "ConsumedCapacity" not in out
    assert ddb.get_item(TableName=tx, Key={"pk": {"S": "b1"}}, ConsistentRead=True)["Item"] == \
        {"pk": {"S": "b1"}, "owner": {"S": "zed"}, "bin": {"B": b"\x00\xff"}}
    assert ddb.get_item(TableName=tx2, Key={"pk": {"S": "b2"}, "sk": {"N": "2"}},
                        ConsistentRead=True)["Item"] == \
        {"pk": {"S": "b2"}, "sk": {"N": "2"}, "n": {"N": "1"}}


def test_update_creates_missing_item_and_delete_of_missing_item_succeeds(api, tx, tx2):
    resp = transact(api, [
        {"Update": {"TableName": tx, "Key": {"pk": S("fresh")},
                    "UpdateExpression": "SET #o = :o, n = if_not_exists(n, :zero) + :one",
                    "ExpressionAttributeNames": {"#o": "owner"},
                    "ExpressionAttributeValues": {":o": S("eve"), ":zero": N(0), ":one": N(1)}}},
        {"Delete": {"TableName": tx2, "Key": {"pk": S("never"), "sk": N(0)}}},
        {"ConditionCheck": {"TableName": tx2, "Key": {"pk": S("never"), "sk": N(1)},
                            "ConditionExpression": "attribute_not_exists(pk)"}},
    ])
    assert resp.status == 200 and resp.json == {}, resp
    assert get_item(api, tx, {"pk": S("fresh")}) == {"pk": S("fresh"), "owner": S("eve"),
                                                     "n": N(1)}
    assert owner_query(api, tx, "eve") == ["fresh"]
    assert state(api, tx2) == []


def test_put_replaces_whole_item_and_moves_index_entry(api, tx, tx2):
    populate(api, tx, tx2)
    resp = transact(api, [{"Put": {"TableName": tx,
                                   "Item": {"pk": S("acct-1"), "owner": S("zoe")},
                                   "ConditionExpression": "balance = :b",
                                   "ExpressionAttributeValues": {":b": N(100)}}}])
    assert resp.status == 200, resp
    assert get_item(api, tx, {"pk": S("acct-1")}) == {"pk": S("acct-1"), "owner": S("zoe")}
    assert owners(api, tx) == [("bob", "acct-2"), ("zoe", "acct-1")]


# Each case makes exactly one of the five actions fail its condition, by changing the stored
# state before the call or a value in the request.
FAIL_CASES = {
    "put": 0,
    "update": 1,
    "delete": 2,
    "condition-check": 3,
    "update-other-table": 4,
}


@pytest.mark.parametrize("case", list(FAIL_CASES))
def test_one_failing_condition_cancels_everything(api, tx, tx2, case):
    tx_items = copy.deepcopy(SETUP_TX)
    tx2_items = copy.deepcopy(SETUP_TX2)
    amount, bob = 30, "bob"
    if case == "put":
        tx_items.append({"pk": S("acct-3"), "owner": S("old-cat"), "balance": N(7)})
    elif case == "update":
        amount = 101
    elif case == "delete":
        bob = "not-bob"
    elif case == "condition-check":
        tx_items[2]["open"] = {"BOOL": False}
    else:
        del tx2_items[0]["v"]
    populate(api, tx, tx2, tx_items, tx2_items)
    before_tx, before_tx2, before_idx = state(api, tx), state(api, tx2), owners(api, tx)

    resp = transact(api, five_actions(tx, tx2, amount=amount, bob=bob))
    reasons = [NONE] * 5
    reasons[FAIL_CASES[case]] = CCF
    assert_canceled(resp, reasons)

    assert state(api, tx) == before_tx
    assert state(api, tx2) == before_tx2
    assert owners(api, tx) == before_idx
    assert owner_query(api, tx, "cat") == []
    assert owner_query(api, tx, "dan") == []


def test_several_failing_conditions_all_reported(api, tx, tx2):
    populate(api, tx, tx2)
    resp = transact(api, five_actions(tx, tx2, amount=1000, bob="nobody"))
    assert_canceled(resp, [NONE, CCF, CCF, NONE, NONE])
    assert get_item(api, tx, {"pk": S("acct-1")}) == SETUP_TX[0]


def test_cancellation_item_only_with_all_old_and_existing_item(api, tx, tx2):
    populate(api, tx, tx2)
    resp = transact(api, [
        # Passes, with ALL_OLD: plain None.
        {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("gate")},
                            "ConditionExpression": "attribute_exists(pk)",
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        # Fails on an existing item with ALL_OLD: the item is returned.
        {"Update": {"TableName": tx, "Key": {"pk": S("acct-1")},
                    "UpdateExpression": "SET balance = :z",
                    "ConditionExpression": "balance > :big",
                    "ExpressionAttributeValues": {":z": N(0), ":big": N(1000)},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        # Fails on a missing item with ALL_OLD: no Item.
        {"Delete": {"TableName": tx, "Key": {"pk": S("ghost")},
                    "ConditionExpression": "attribute_exists(pk)",
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        # Fails on an existing item with NONE: no Item.
        {"Put": {"TableName": tx, "Item": {"pk": S("acct-2"), "owner": S("x")},
                 "ConditionExpression": "attribute_not_exists(pk)",
                 "ReturnValuesOnConditionCheckFailure": "NONE"}},
        # Fails on an existing item without the member: no Item.
        {"ConditionCheck": {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)},
                            "ConditionExpression": "v = :two",
                            "ExpressionAttributeValues": {":two": N(2)}}},
    ])
    assert_canceled(resp, [NONE, dict(CCF, Item=SETUP_TX[0]), CCF, CCF, CCF])
    assert state(api, tx) == canon(SETUP_TX)


def test_boto3_sees_cancellation_reasons(ddb, api, tx, tx2):
    populate(api, tx, tx2)
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as excinfo:
        ddb.transact_write_items(TransactItems=[
            {"Put": {"TableName": tx, "Item": {"pk": {"S": "new"}}}},
            {"ConditionCheck": {"TableName": tx, "Key": {"pk": {"S": "acct-2"}},
                                "ConditionExpression": "balance > :b",
                                "ExpressionAttributeValues": {":b": {"N": "50"}},
                                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        ])
    err = excinfo.value.response
    assert err["Error"]["Code"] == "TransactionCanceledException"
    assert err["Error"]["Message"] == ("Transaction cancelled, please refer cancellation reasons "
                                       "for specific reasons [None, ConditionalCheckFailed]")
    assert err["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
         "Item": {"pk": {"S": "acct-2"}, "owner": {"S": "bob"}, "balance": {"N": "50"}}}]
    assert get_item(api, tx, {"pk": S("new")}) is None


BIG_PAD = "p" * 409000

VALIDATION_CASES = [
    pytest.param({"pk": S("t"), "s": S("text")}, "ADD s :n", {":n": N(1)},
                 "An operand in the update expression has an incorrect data type", id="add-to-string"),
    pytest.param({"pk": S("t"), "s": S("text")}, "SET s = s + :n", {":n": N(1)},
                 "An operand in the update expression has an incorrect data type", id="plus-string"),
    pytest.param({"pk": S("t")}, "SET a = nothere + :n", {":n": N(1)},
                 "The provided expression refers to an attribute that does not exist in the item",
                 id="missing-operand"),
    pytest.param({"pk": S("t"), "ss": {"SS": ["a"]}}, "ADD ss :ns", {":ns": {"NS": ["1"]}},
                 "Type mismatch for attribute to update", id="set-type"),
    pytest.param({"pk": S("t"), "s": S("text")}, "SET s.child = :n", {":n": N(1)},
                 "The document path provided in the update expression is invalid for update",
                 id="bad-document-path"),
    pytest.param({"pk": S("t"), "n": N("9" * 38 + "0" * 88)}, "SET n = n + :n",
                 {":n": N("9" * 38 + "E+88")},
                 "Number overflow. Attempting to store a number with magnitude larger than "
                 "supported range", id="overflow"),
    pytest.param({"pk": S("t"), "big": S(BIG_PAD)}, "SET more = :pad", {":pad": S("q" * 1000)},
                 "Item size to update has exceeded the maximum allowed size", id="item-too-big"),
]


@pytest.mark.parametrize("stored, update, values, message", VALIDATION_CASES)
def test_execution_time_validation_error_cancels(api, tx, tx2, stored, update, values, message):
    api.ok("PutItem", {"TableName": tx, "Item": stored})
    resp = transact(api, [
        {"Put": {"TableName": tx, "Item": {"pk": S("side"), "owner": S("sid")}}},
        {"Update": {"TableName": tx2, "Key": {"pk": S("other"), "sk": N(1)},
                    "UpdateExpression": "SET a = :a",
                    "ExpressionAttributeValues": {":a": S("a")}}},
        {"Update": {"TableName": tx, "Key": {"pk": S("t")}, "UpdateExpression": update,
                    "ExpressionAttributeValues": values}},
    ])
    assert_canceled(resp, [NONE, NONE, vreason(message)])
    assert state(api, tx) == [normalize_item(stored)]
    assert state(api, tx2) == []
    assert owners(api, tx) == []


def test_update_index_key_to_wrong_type_cancels(api, tx, tx2):
    populate(api, tx, tx2)
    resp = transact(api, [
        {"Put": {"TableName": tx2, "Item": {"pk": S("x"), "sk": N(1)}}},
        {"Update": {"TableName": tx, "Key": {"pk": S("acct-1")},
                    "UpdateExpression": "SET #o = :n",
                    "ExpressionAttributeNames": {"#o": "owner"},
                    "ExpressionAttributeValues": {":n": N(5)}}},
    ])
    assert resp.status == 400, resp
    body = resp.json
    assert body["__type"] == CANCELED
    assert body["Message"] == ("Transaction cancelled, please refer cancellation reasons for "
                               "specific reasons [None, ValidationError]")
    assert body["CancellationReasons"][0] == NONE
    reason = body["CancellationReasons"][1]
    assert reason["Code"] == "ValidationError" and set(reason) == {"Code", "Message"}
    # DynamoDB has been seen to give both the documented transaction text and UpdateItem's
    # text for this situation; either is accepted.
    assert reason["Message"] in (
        "The update expression attempted to update the secondary index key to unsupported type",
        INVALID + "Type mismatch for Index Key owner Expected: S Actual: N IndexName: byOwner",
    ), reason
    assert state(api, tx2) == canon(SETUP_TX2)
    assert owners(api, tx) == [("ann", "acct-1"), ("bob", "acct-2")]


# --------------------------------------------------------------------------- request level


def assert_nothing_written(api, tx, tx2, expected_tx=(), expected_tx2=()):
    assert state(api, tx) == canon(expected_tx)
    assert state(api, tx2) == canon(expected_tx2)


@pytest.mark.parametrize("first, second", [
    pytest.param({"Put": {"Item": {"pk": S("same"), "sk": N(1)}}},
                 {"ConditionCheck": {"Key": {"pk": S("same"), "sk": N(1)},
                                     "ConditionExpression": "attribute_not_exists(pk)"}},
                 id="put-check"),
    pytest.param({"Update": {"Key": {"pk": S("same"), "sk": N(1)}, "UpdateExpression": "SET a = :a",
                             "ExpressionAttributeValues": {":a": N(1)}}},
                 {"Delete": {"Key": {"pk": S("same"), "sk": N("1.000")}}},
                 id="update-delete-numerically-equal"),
    pytest.param({"Put": {"Item": {"pk": S("same"), "sk": N(1), "a": S("x")}}},
                 {"Put": {"Item": {"pk": S("same"), "sk": N(1), "a": S("y")}}}, id="put-put"),
])
def test_multiple_operations_on_one_item(api, tx, tx2, first, second):
    for action in (first, second):
        next(iter(action.values()))["TableName"] = tx2
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("ok"), "owner": S("o")}}},
                          first, second])
    assert_validation(resp, MULTIPLE_OPS)
    assert_nothing_written(api, tx, tx2)
    assert owners(api, tx) == []


def test_same_key_in_two_tables_is_two_items(api, tx, make_table):
    other = make_table(("pk", "S"))
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("k"), "v": S("1")}}},
                          {"Put": {"TableName": other, "Item": {"pk": S("k"), "v": S("2")}}}])
    assert resp.status == 200, resp
    assert get_item(api, tx, {"pk": S("k")}) == {"pk": S("k"), "v": S("1")}
    assert get_item(api, other, {"pk": S("k")}) == {"pk": S("k"), "v": S("2")}


@pytest.mark.parametrize("element", [
    pytest.param({}, id="zero-actions"),
    pytest.param("two", id="put-and-delete"),
    pytest.param("check-update", id="check-and-update"),
])
def test_element_with_zero_or_two_actions(api, tx, tx2, element):
    if element == "two":
        element = {"Put": {"TableName": tx2, "Item": {"pk": S("z"), "sk": N(1)}},
                   "Delete": {"TableName": tx2, "Key": {"pk": S("y"), "sk": N(1)}}}
    elif element == "check-update":
        element = {"ConditionCheck": {"TableName": tx2, "Key": {"pk": S("z"), "sk": N(1)},
                                      "ConditionExpression": "attribute_not_exists(pk)"},
                   "Update": {"TableName": tx2, "Key": {"pk": S("y"), "sk": N(1)},
                              "UpdateExpression": "SET a = :a",
                              "ExpressionAttributeValues": {":a": N(1)}}}
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("ok")}}}, element])
    assert_validation(resp, ONE_ACTION)
    assert_nothing_written(api, tx, tx2)


def test_more_than_100_actions(api, tx):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S(f"k{i}")}}}
                          for i in range(101)])
    # Text [open]: type and the coral prefix; then "Value '...' at '<path>' failed to satisfy
    # constraint: <constraint>".
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith("at 'transactItems' failed to satisfy constraint: Member must "
                                 "have length less than or equal to 100"), resp.message
    assert state(api, tx) == []


def test_exactly_100_actions_accepted(api, tx, tx2):
    items = [{"Put": {"TableName": tx, "Item": {"pk": S(f"k{i}"), "owner": S(f"o{i % 3}")}}}
             for i in range(50)]
    items += [{"Update": {"TableName": tx2, "Key": {"pk": S("p"), "sk": N(i)},
                          "UpdateExpression": "ADD n :one",
                          "ExpressionAttributeValues": {":one": N(1)}}} for i in range(50)]
    resp = transact(api, items)
    assert resp.status == 200, resp
    assert len(scan_all(api, tx)) == 50
    assert len(scan_all(api, tx2)) == 50
    assert len(owner_query(api, tx, "o0")) == 17


def test_empty_transact_items(api):
    resp = transact(api, [])
    assert_validation(resp, COR_PREFIX + "Value '[]' at 'transactItems' failed to satisfy "
                            "constraint: Member must have length greater than or equal to 1")


def test_missing_table(api, tx, tx2):
    resp = transact(api, [
        {"Put": {"TableName": tx, "Item": {"pk": S("a"), "owner": S("o")}}},
        {"Update": {"TableName": "no-such-table-tx", "Key": {"pk": S("a")},
                    "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": N(1)}}},
        {"Delete": {"TableName": tx2, "Key": {"pk": S("a"), "sk": N(1)}}},
    ])
    assert_not_found(resp)
    assert_nothing_written(api, tx, tx2)
    assert owners(api, tx) == []


@pytest.mark.parametrize("kind, key", [
    pytest.param("Update", {"pk": S("p")}, id="update-missing-range"),
    pytest.param("Update", {"pk": S("p"), "sk": S("1")}, id="update-range-wrong-type"),
    pytest.param("Delete", {"pk": S("p"), "sk": N(1), "x": N(1)}, id="delete-extra-attr"),
    pytest.param("Delete", {"pk": N(1), "sk": N(1)}, id="delete-hash-wrong-type"),
    pytest.param("ConditionCheck", {"sk": N(1)}, id="check-missing-hash"),
])
def test_key_mismatch(api, tx, tx2, kind, key):
    action = {"TableName": tx2, "Key": key}
    if kind == "Update":
        action.update(UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": N(1)})
    if kind == "ConditionCheck":
        action["ConditionExpression"] = "attribute_exists(pk)"
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("ok")}}}, {kind: action}])
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH)])
    assert_nothing_written(api, tx, tx2)


@pytest.mark.parametrize("item, message", [
    pytest.param({"sk": N(1), "a": S("x")}, INVALID + "Missing the key pk in the item",
                 id="missing-hash"),
    pytest.param({"pk": S("p"), "a": S("x")}, INVALID + "Missing the key sk in the item",
                 id="missing-range"),
    pytest.param({"pk": S("p"), "sk": S("1")},
                 INVALID + "Type mismatch for key sk expected: N actual: S", id="range-type"),
    pytest.param({"pk": S(""), "sk": N(1)},
                 "One or more parameter values are not valid. The AttributeValue for a key "
                 "attribute cannot contain an empty string value. Key: pk", id="empty-hash"),
])
def test_put_key_errors(api, tx, tx2, item, message):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("ok")}}},
                          {"Put": {"TableName": tx2, "Item": item}}])
    assert_validation(resp, message)
    assert_nothing_written(api, tx, tx2)


def test_put_index_key_type_mismatch_is_request_level(api, tx, tx2):
    resp = transact(api, [{"Put": {"TableName": tx2, "Item": {"pk": S("a"), "sk": N(1)}}},
                          {"Put": {"TableName": tx, "Item": {"pk": S("b"), "owner": N(3)}}}])
    assert_validation(resp, INVALID + "Type mismatch for Index Key owner Expected: S Actual: N "
                                      "IndexName: byOwner")
    assert_nothing_written(api, tx, tx2)


def test_put_item_too_big(api, tx, tx2):
    big = sized({"pk": S("big"), "sk": N(1)}, 409601)
    ok = sized({"pk": S("ok"), "sk": N(1)}, 409600)
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"Put": {"TableName": tx2, "Item": big}}])
    assert_validation(resp, "Item size has exceeded the maximum allowed size")
    assert_nothing_written(api, tx, tx2)
    resp = transact(api, [{"Put": {"TableName": tx2, "Item": ok}}])
    assert resp.status == 200, resp
    assert get_item(api, tx2, {"pk": S("ok"), "sk": N(1)}) == ok


def test_condition_check_requires_condition_expression(api, tx):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("b")}}}])
    assert_validation(resp, "1 validation error detected: Value null at "
                            "'transactItems.2.member.conditionCheck.conditionExpression' failed to "
                            "satisfy constraint: Member must not be null")
    assert state(api, tx) == []


def test_update_of_key_attribute(api, tx, tx2):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"Update": {"TableName": tx2, "Key": {"pk": S("p"), "sk": N(1)},
                                      "UpdateExpression": "SET sk = :v",
                                      "ExpressionAttributeValues": {":v": N(2)}}}])
    assert_validation(resp, INVALID + "Cannot update attribute sk. This attribute is part of the key")
    assert_nothing_written(api, tx, tx2)


def test_unused_expression_attribute_name(api, tx):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"Delete": {"TableName": tx, "Key": {"pk": S("b")},
                                      "ConditionExpression": "attribute_exists(pk)",
                                      "ExpressionAttributeNames": {"#x": "x"}}}])
    # Transact operations report request-validation errors without the coral envelope
    # (no "1 validation error detected: " prefix).
    assert_validation(resp, "Value provided in ExpressionAttributeNames unused in expressions: "
                            "keys: {#x}")
    assert state(api, tx) == []


def test_undefined_attribute_name_in_condition(api, tx):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("b")},
                                              "ConditionExpression": "attribute_exists(#n)"}}])
    assert_validation(resp, "Invalid ConditionExpression: An expression attribute name used in "
                            "the document path is not defined; attribute name: #n")
    assert state(api, tx) == []


def test_invalid_attribute_value(api, tx):
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"Put": {"TableName": tx, "Item": {"pk": S("b"), "s": {"SS": []}}}}])
    assert_validation(resp, INVALID + "An string set  may not be empty")
    assert state(api, tx) == []


# --------------------------------------------------------------------------- idempotency


def counter_request(tx, tx2, token, amount=1):
    return {
        "TransactItems": [
            {"Put": {"TableName": tx, "Item": {"pk": S("once"), "owner": S("idem")},
                     "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Update": {"TableName": tx2, "Key": {"pk": S("counter"), "sk": N(0)},
                        "UpdateExpression": "ADD n :inc",
                        "ExpressionAttributeValues": {":inc": N(amount)}}},
        ],
        "ClientRequestToken": token,
    }


def counter(api, tx2):
    item = get_item(api, tx2, {"pk": S("counter"), "sk": N(0)})
    return None if item is None else item["n"]["N"]


def reorder(obj):
    """The same JSON with every object's members in reverse order."""
    if isinstance(obj, dict):
        return {k: reorder(obj[k]) for k in reversed(list(obj))}
    if isinstance(obj, list):
        return [reorder(v) for v in obj]
    return obj


def test_same_token_same_request_is_applied_once(api, tx, tx2):
    token = str(uuid.uuid4())
    req = counter_request(tx, tx2, token)
    first = api("TransactWriteItems", req)
    assert first.status == 200 and first.json == {}, first
    assert counter(api, tx2) == "1"

    # Re-applying would fail the Put's condition and add 1 again; a replay does neither.
    again = api("TransactWriteItems", req)
    assert again.status == 200, again
    assert again.json == {}
    assert counter(api, tx2) == "1"

    # Member order is irrelevant to the comparison.
    shuffled = reorder(req)
    assert json.dumps(shuffled) != json.dumps(req)
    third = api("TransactWriteItems", shuffled)
    assert third.status == 200 and third.json == {}, third
    assert counter(api, tx2) == "1"
    assert owner_query(api, tx, "idem") == ["once"]

    # Without the token the same request is a new transaction, and its condition fails.
    fresh = dict(req)
    del fresh["ClientRequestToken"]
    assert_canceled(api("TransactWriteItems", fresh), [CCF, NONE])
    assert counter(api, tx2) == "1"

    # A new token is a new transaction too.
    assert_canceled(api("TransactWriteItems", counter_request(tx, tx2, str(uuid.uuid4()))),
                    [CCF, NONE])
    assert counter(api, tx2) == "1"


def test_same_token_different_request_is_a_mismatch(api, tx, tx2):
    token = "tok-" + uuid.uuid4().hex[:20]
    assert api("TransactWriteItems", counter_request(tx, tx2, token)).status == 200
    resp = api("TransactWriteItems", counter_request(tx, tx2, token, amount=5))
    # The message text is [open]: type, status and the member name (capital `Message` for this
    # exception) only.
    assert_error(resp, 400, MISMATCH)
    assert set(resp.json) == {"__type", "Message"}, resp
    assert resp.json["Message"]
    assert counter(api, tx2) == "1"
    # The original request with the token still replays.
    resp = api("TransactWriteItems", counter_request(tx, tx2, token))
    assert resp.status == 200 and resp.json == {}, resp
    assert counter(api, tx2) == "1"


def test_token_mismatch_with_boto3(ddb, tx, tx2):
    token = str(uuid.uuid4())
    items = [{"Update": {"TableName": tx2, "Key": {"pk": {"S": "c"}, "sk": {"N": "0"}},
                         "UpdateExpression": "ADD n :inc",
                         "ExpressionAttributeValues": {":inc": {"N": "1"}}}}]
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    items[0]["Update"]["ExpressionAttributeValues"][":inc"] = {"N": "2"}
    with pytest.raises(ddb.exceptions.IdempotentParameterMismatchException):
        ddb.transact_write_items(TransactItems=items, ClientRequestToken=token)
    got = ddb.get_item(TableName=tx2, Key={"pk": {"S": "c"}, "sk": {"N": "0"}},
                       ConsistentRead=True)["Item"]
    assert got["n"] == {"N": "1"}


def test_token_too_long(api, tx):
    token = "t" * 37
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}}],
                    ClientRequestToken=token)
    assert_validation(resp, f"1 validation error detected: Value '{token}' at 'clientRequestToken' "
                            "failed to satisfy constraint: Member must have length less than or "
                            "equal to 36")
    assert state(api, tx) == []
    resp = transact(api, [{"Put": {"TableName": tx, "Item": {"pk": S("a")}}}],
                    ClientRequestToken=str(uuid.uuid4())[:4] + "t" * 32)
    assert resp.status == 200, resp


def test_token_replay_reports_read_units(api, make_table):
    t = make_table(("pk", "S"))
    req = {"TransactItems": [{"Put": {"TableName": t, "Item": sized({"pk": S("r")}, 3000)}}],
           "ClientRequestToken": str(uuid.uuid4()), "ReturnConsumedCapacity": "TOTAL"}
    first = api("TransactWriteItems", req)
    assert first.status == 200, first
    assert first.json["ConsumedCapacity"][0]["CapacityUnits"] == 6.0
    replay = api("TransactWriteItems", req)
    assert replay.status == 200, replay
    # A replay reports read units, not the write units of the original call;
    # reading one 3000-byte item costs at most 2 units, its transactional write 6.
    cc = replay.json["ConsumedCapacity"]
    assert len(cc) == 1 and cc[0]["TableName"] == t
    assert cc[0]["CapacityUnits"] <= 2.0, cc


# --------------------------------------------------------------------------- capacity


def test_write_capacity_total_is_twice_per_item(api, make_table):
    a = make_table(("pk", "S"))
    b = make_table(("pk", "S"))
    api.ok("PutItem", {"TableName": a, "Item": sized({"pk": S("small")}, 200)})
    api.ok("PutItem", {"TableName": b, "Item": sized({"pk": S("del")}, 2500)})
    api.ok("PutItem", {"TableName": b, "Item": sized({"pk": S("rep")}, 3000)})
    resp = transact(api, [
        {"Put": {"TableName": a, "Item": sized({"pk": S("new")}, 1500)}},          # 2 × 2
        {"Update": {"TableName": a, "Key": {"pk": S("small")},
                    "UpdateExpression": "SET z = :z",
                    "ExpressionAttributeValues": {":z": S("z")}}},                  # 2 × 1
        {"Delete": {"TableName": b, "Key": {"pk": S("del")}}},                      # 2 × 3
        {"Put": {"TableName": b, "Item": sized({"pk": S("rep")}, 100)}},            # 2 × 3
    ], ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert set(resp.json) == {"ConsumedCapacity"}
    check_capacity_list(resp.json, {a: 6.0, b: 12.0})
    assert get_item(api, b, {"pk": S("del")}) is None


def test_write_capacity_none_and_by_arn(api, make_table):
    a = make_table(("pk", "S"))
    resp = transact(api, [{"Put": {"TableName": a, "Item": {"pk": S("x")}}}],
                    ReturnConsumedCapacity="NONE")
    assert resp.status == 200 and resp.json == {}, resp
    arn = table_arn(a)
    resp = transact(api, [{"Put": {"TableName": arn, "Item": {"pk": S("y")}}}],
                    ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    check_capacity_list(resp.json, {arn: 2.0})
