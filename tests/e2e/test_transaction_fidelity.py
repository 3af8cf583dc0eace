"""Transactions as DynamoDB answers them: two Gets of one item, a Key that does not match its
table's schema (a cancellation with one ValidationError reason, every other action None),
and the 4 MB limit on the items of one transaction, written or read."""

import pytest

from kumo_testlib import assert_not_found, assert_validation, item_size, table_arn
from transaction_fixtures import (  # noqa: F401
    CCF,
    KEY_MISMATCH,
    MULTIPLE_OPS,
    NONE,
    N,
    S,
    assert_canceled,
    get_item,
    populate,
    sized,
    state,
    transact,
    tx,
    tx2,
    vreason,
)

TOO_LARGE = "Transaction request cannot be larger than 4 MB"
MB4 = 4 * 1024 * 1024

# Built once: item values of 390,000 and 350 KB (11 of the first pass 4 MB, 10 do not).
BIG = "x" * 390_000
KB350 = "y" * (350 * 1024)


def tget(api, gets, **extra):
    return api("TransactGetItems", dict({"TransactItems": [{"Get": g} for g in gets]}, **extra))


# =========================================================================== TransactGetItems


def test_get_same_item_twice(api, tx, tx2):
    populate(api, tx, tx2)
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("acct-1")}},
                      {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)}},
                      {"TableName": tx, "Key": {"pk": S("acct-1")}}])
    assert_validation(resp, MULTIPLE_OPS)
    # The table named by its ARN is the same item too.
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("acct-1")}},
                      {"TableName": table_arn(tx), "Key": {"pk": S("acct-1")},
                       "ProjectionExpression": "pk"}])
    assert_validation(resp, MULTIPLE_OPS)


@pytest.mark.parametrize("key", [
    pytest.param({}, id="empty"),
    pytest.param({"pk": S("p")}, id="missing-range"),
    pytest.param({"pk": S("p"), "sk": S("1")}, id="wrong-type"),
    pytest.param({"pk": S("p"), "sk": N(1), "x": S("x")}, id="extra-attr"),
])
def test_get_key_mismatch_cancels(api, tx, tx2, key):
    populate(api, tx, tx2)
    resp = tget(api, [{"TableName": tx, "Key": {"pk": S("acct-1")}},
                      {"TableName": tx2, "Key": key},
                      {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)}}])
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH), NONE])


def test_get_key_mismatch_reported_on_the_first_only(api, tx, tx2):
    resp = tget(api, [{"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)}},
                      {"TableName": tx, "Key": {"pk": N(1)}},
                      {"TableName": tx2, "Key": {}}])
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH), NONE])
    resp = tget(api, [{"TableName": tx, "Key": {}}])
    assert_canceled(resp, [vreason(KEY_MISMATCH)])


def test_get_table_errors_stay_top_level(api, tx):
    # A missing table, even after a Key that does not match, is ResourceNotFoundException.
    resp = tget(api, [{"TableName": tx, "Key": {}},
                      {"TableName": "no-such-table-tget-fid", "Key": {"pk": S("a")}}])
    assert_not_found(resp)
    # A malformed table name is a request validation error.
    resp = tget(api, [{"TableName": tx, "Key": {}}, {"TableName": "ab", "Key": {"pk": S("a")}}])
    assert_validation(resp, "1 validation error detected: Value 'ab' at "
                            "'transactItems.2.member.get.tableName' failed to satisfy constraint: "
                            "Member must have length greater than or equal to 3")


@pytest.fixture
def big_items(api, make_table):
    """A table with 12 items of about 390 KB ("big-0" .. "big-11") and one small one."""
    name = make_table(("pk", "S"))
    for i in range(12):
        api.ok("PutItem", {"TableName": name, "Item": {"pk": S(f"big-{i}"), "v": S(BIG)}})
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("small"), "v": S("s")}})
    return name


def test_get_within_4mb(api, big_items):
    gets = [{"TableName": big_items, "Key": {"pk": S(f"big-{i}")}} for i in range(10)]
    resp = tget(api, gets + [{"TableName": big_items, "Key": {"pk": S("small")}}],
                ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    responses = resp.json["Responses"]
    assert [r["Item"]["pk"]["S"] for r in responses] == [f"big-{i}" for i in range(10)] + ["small"]
    assert all(r["Item"]["v"]["S"] == BIG for r in responses[:10])
    # A projection does not make the items read smaller: 11 × 390 KB is still over.
    gets = [{"TableName": big_items, "Key": {"pk": S(f"big-{i}")}, "ProjectionExpression": "pk"}
            for i in range(11)]
    resp = tget(api, gets)
    assert_canceled(resp, [NONE] * 10 + [vreason(TOO_LARGE)])


def test_get_over_4mb_cancels_at_the_get_that_passes_it(api, big_items):
    gets = [{"TableName": big_items, "Key": {"pk": S("small")}},
            {"TableName": big_items, "Key": {"pk": S("absent")}}]
    gets += [{"TableName": big_items, "Key": {"pk": S(f"big-{i}")}} for i in range(12)]
    resp = tget(api, gets)
    # 2 + 10 Gets stay within 4 MB; the 11th big item passes it; the 12th is not read.
    assert_canceled(resp, [NONE] * 12 + [vreason(TOO_LARGE), NONE])


# =========================================================================== TransactWriteItems


def test_write_over_4mb_is_refused(api, tx, tx2):
    populate(api, tx, tx2)
    before = state(api, tx)
    items = [{"Put": {"TableName": tx, "Item": {"pk": S(f"big-{i}"), "v": S(BIG)}}}
             for i in range(11)]
    assert sum(390_000 + len(f"pkbig-{i}v") for i in range(11)) > MB4
    resp = transact(api, items)
    assert_validation(resp, TOO_LARGE)
    # The Keys of the other actions count too: these Puts stay within 4 MB, and a Delete's
    # Key takes them past it.
    puts = [{"pk": S(f"big-{i}"), "v": S(BIG)} for i in range(10)]
    rest = MB4 - sum(item_size(p) for p in puts) - 1000
    puts.append({"pk": S("rest"), "v": S("r" * (rest - len("pkrestv")))})
    assert sum(item_size(p) for p in puts) == MB4 - 1000
    items = [{"Put": {"TableName": tx, "Item": p}} for p in puts]
    delete = {"Delete": {"TableName": tx, "Key": {"pk": S("d" * 1000)}}}
    resp = transact(api, items + [delete])
    assert_validation(resp, TOO_LARGE)
    assert state(api, tx) == before
    delete["Delete"]["Key"]["pk"] = S("d" * 998)
    resp = transact(api, items + [delete])
    assert resp.status == 200, resp
    assert get_item(api, tx, {"pk": S("rest")}) == puts[-1]
    # Ten items of 350 KB are within the limit.
    items = [{"Put": {"TableName": tx, "Item": {"pk": S(f"kb-{i}"), "v": S(KB350)}}}
             for i in range(10)]
    resp = transact(api, items)
    assert resp.status == 200, resp
    assert get_item(api, tx, {"pk": S("kb-9")})["v"]["S"] == KB350


# ----------------------------------------------------------------- a Key of the wrong type


def test_write_key_of_wrong_type_cancels(api, tx, tx2):
    populate(api, tx, tx2)
    before = (state(api, tx), state(api, tx2))
    resp = transact(api, [
        {"Put": {"TableName": tx, "Item": {"pk": S("new")}}},
        {"Update": {"TableName": tx2, "Key": {"pk": S("doc"), "sk": S("1")},
                    "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": N(2)}}},
        {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("acct-1")},
                            "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Delete": {"TableName": tx, "Key": {"pk": N(7)}}},
    ])
    # The first invalid action has the reason; a false condition and a later invalid Key
    # are None.
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH), NONE, NONE])
    assert (state(api, tx), state(api, tx2)) == before


def test_write_key_of_wrong_type_after_a_false_condition(api, tx, tx2):
    populate(api, tx, tx2)
    resp = transact(api, [
        {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("acct-1")},
                            "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Delete": {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1), "x": N(1)}}},
    ])
    assert_canceled(resp, [NONE, vreason(KEY_MISMATCH)])
    # Without the invalid Key the condition is what fails.
    resp = transact(api, [
        {"ConditionCheck": {"TableName": tx, "Key": {"pk": S("acct-1")},
                            "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Delete": {"TableName": tx2, "Key": {"pk": S("doc"), "sk": N(1)}}},
    ])
    assert_canceled(resp, [CCF, NONE])


@pytest.mark.parametrize("kind", ["Update", "Delete", "ConditionCheck"])
def test_write_single_action_key_of_wrong_type(api, tx, kind):
    action = {"TableName": tx, "Key": {"pk": {"B": "AQI="}}}
    if kind == "Update":
        action.update(UpdateExpression="SET a = :a", ExpressionAttributeValues={":a": N(1)})
    if kind == "ConditionCheck":
        action["ConditionExpression"] = "attribute_exists(pk)"
    resp = transact(api, [{kind: action}])
    assert_canceled(resp, [vreason(KEY_MISMATCH)])
    assert state(api, tx) == []


def test_write_key_mismatch_after_request_errors(api, tx):
    # Two actions on one item are refused before any Key is checked against its schema.
    resp = transact(api, [{"Delete": {"TableName": tx, "Key": {"pk": N(1)}}},
                          {"Put": {"TableName": tx, "Item": {"pk": S("a")}}},
                          {"Delete": {"TableName": tx, "Key": {"pk": S("a")}}}])
    assert_validation(resp, MULTIPLE_OPS)
    # A missing table stays ResourceNotFoundException.
    resp = transact(api, [{"Delete": {"TableName": tx, "Key": {"pk": N(1)}}},
                          {"Delete": {"TableName": "no-such-table-tx-fid",
                                      "Key": {"pk": S("a")}}}])
    assert_not_found(resp)
