"""ExecuteTransaction: 1 to 100 statements applied all or nothing; read transactions
(`Responses` with `Item` or `{}`) and write transactions (`Responses: []`); EXISTS condition
checks; the request-level refusals with their `Validation failed in TransactStatements[i]: `
prefix, the read/write mix and two statements on one item; TransactionCanceledException with
one reason per statement; ClientRequestToken idempotency; transactional ConsumedCapacity;
stream records, one per written item and none for a cancelled or replayed transaction."""

import time
import uuid

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_error,
    assert_validation,
)
from stream_helpers import change, check_records, read_stream, stream_table, streams  # noqa: F401
from transaction_fixtures import (  # noqa: F401
    CANCELED,
    CCF,
    KEY_MISMATCH,
    MISMATCH,
    MULTIPLE_OPS,
    NONE,
    N,
    S,
    assert_canceled,
    canon,
    get_item,
    state,
    tx,
    tx2,
    vreason,
)
from partiql_helpers import q, st, put

ENVELOPE = "Statement wasn't well formed, can't be processed: "
MIXED = ("ExecuteTransaction API does not support both read and write operations in the same "
         "request.")
SELECT_KEY = ("Select statements within ExecuteTransaction must specify the primary key in the "
              "where clause.")
EXISTS_NEEDS_CONDITION = "EXISTS() must contain a single item read with additional condition"
RETURNING_REFUSED = "RETURNING clause is not supported in ExecuteTransaction."
INDEX_READ = "Reads on indices are not supported within transactions."
INDEX_WRITE = "This operation is not supported on an index"
NOT_FOUND = {"Code": "ResourceNotFound", "Message": "Requested resource not found"}
DUPLICATE_ITEM = {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
MISSING_TABLE = '"no-such-table-pqt"'






def execute(api, statements, **extra):
    return api("ExecuteTransaction", dict({"TransactStatements": statements}, **extra))


def prefixed(i, message):
    return f"Validation failed in TransactStatements[{i}]: {message}"




ACCT1 = {"pk": S("acct-1"), "owner": S("ann"), "balance": N(100)}
ACCT2 = {"pk": S("acct-2"), "owner": S("bob"), "balance": N(50)}
GATE = {"pk": S("gate"), "open": {"BOOL": True}}
DOC = {"pk": S("doc"), "sk": N(1), "v": N(1)}


def populate(api, tx, tx2):
    for item in (ACCT1, ACCT2, GATE):
        put(api, tx, item)
    put(api, tx2, DOC)


def four_writes(tx, tx2, amount=30):
    """INSERT, UPDATE with a condition, DELETE, EXISTS, over two tables."""
    return [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'acct-3', 'owner': 'cat', 'balance': 0}}"),
        st(f"UPDATE {q(tx)} SET balance = balance - ? SET owner = 'dan' "
           f"WHERE pk = 'acct-1' AND balance >= ?", N(amount), N(amount)),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'acct-2' AND owner = 'bob'"),
        st(f"EXISTS(SELECT * FROM {q(tx2)} WHERE pk = 'doc' AND sk = 1 AND v = 1)"),
    ]


# --------------------------------------------------------------------------- writes


def test_write_transaction_applies_every_statement(api, tx, tx2):
    populate(api, tx, tx2)
    resp = execute(api, four_writes(tx, tx2))
    assert resp.status == 200, resp
    assert resp.json == {"Responses": []}
    assert state(api, tx) == canon([
        {"pk": S("acct-1"), "owner": S("dan"), "balance": N(70)},
        {"pk": S("acct-3"), "owner": S("cat"), "balance": N(0)},
        GATE])
    assert state(api, tx2) == canon([DOC])


def test_a_failing_statement_leaves_every_item_unchanged(api, tx, tx2):
    populate(api, tx, tx2)
    before_tx, before_tx2 = state(api, tx), state(api, tx2)
    # The UPDATE's condition (balance >= 500) is false.
    resp = execute(api, four_writes(tx, tx2, amount=500))
    assert_canceled(resp, [NONE, CCF, NONE, NONE])
    assert state(api, tx) == before_tx
    assert state(api, tx2) == before_tx2
    # So is the EXISTS of the last statement here.
    statements = four_writes(tx, tx2)
    statements[3] = st(f"EXISTS(SELECT * FROM {q(tx2)} WHERE pk = 'doc' AND sk = 1 AND v = 2)")
    assert_canceled(execute(api, statements), [NONE, NONE, NONE, CCF])
    assert state(api, tx) == before_tx
    assert state(api, tx2) == before_tx2


def test_update_delete_insert_semantics(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    # DELETE of a missing item succeeds and writes nothing; REMOVE and SET apply.
    resp = execute(api, [st(f"DELETE FROM {q(tx)} WHERE pk = 'none' AND n = 7"),
                         st(f"UPDATE {q(tx)} REMOVE n SET s = 'x' WHERE pk = 'a'"),
                         st(f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'l': [1, 'two'], "
                            f"'m': {{'k': <<'a', 'b'>>}}}}", S("b"))])
    assert resp.status == 200 and resp.json == {"Responses": []}, resp
    assert state(api, tx) == canon([
        {"pk": S("a"), "s": S("x")},
        {"pk": S("b"), "l": {"L": [N(1), S("two")]}, "m": {"M": {"k": {"SS": ["a", "b"]}}}}])


def test_one_hundred_statements(api, tx):
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'k{i}', 'i': {i}}}")
                         for i in range(100)])
    assert resp.status == 200 and resp.json == {"Responses": []}, resp
    assert len(state(api, tx)) == 100
    resp = execute(api, [st(f"SELECT i FROM {q(tx)} WHERE pk = 'k{i}'") for i in range(100)])
    assert resp.status == 200, resp
    assert resp.json == {"Responses": [{"Item": {"i": N(i)}} for i in range(100)]}


def test_more_than_one_hundred_statements_refused(api, tx):
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'k{i}'}}") for i in range(101)])
    # How the list value is rendered is not known; the rest of the text is.
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith("at 'transactStatements' failed to satisfy constraint: Member "
                                 "must have length less than or equal to 100"), resp.message
    assert state(api, tx) == []


def test_empty_statement_list_refused(api):
    assert_validation(execute(api, []),
                      COR_PREFIX + "Value '[]' at 'transactStatements' failed to satisfy "
                                   "constraint: Member must have length greater than or equal "
                                   "to 1")


# --------------------------------------------------------------------------- reads


def test_read_transaction_answers_item_or_empty_in_order(api, tx, tx2):
    populate(api, tx, tx2)
    put(api, tx, {"pk": S("m"), "n": N(1), "mm": {"M": {"k": {"L": [S("a"), S("b")]}}}})
    resp = execute(api, [
        st(f"SELECT * FROM {q(tx2)} WHERE pk = 'doc' AND sk = 1"),
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'missing'"),
        st(f"SELECT owner, balance FROM {q(tx)} WHERE pk = ?", S("acct-1")),
        st(f"SELECT nope, absent FROM {q(tx)} WHERE pk = 'gate'"),
        st(f"SELECT mm.k[1], n FROM {q(tx)} WHERE pk IN ['m']"),
        st(f"SELECT * FROM {q(tx)} WHERE (pk = 'acct-2')"),
        st(f"SELECT pk FROM {q(tx2)} WHERE sk = 5 AND pk = 'nope' AND sk = 5"),
    ])
    assert resp.status == 200, resp
    assert resp.json == {"Responses": [
        {"Item": DOC},
        {},
        {"Item": {"owner": S("ann"), "balance": N(100)}},
        {"Item": {}},
        {"Item": {"k[1]": S("b"), "n": N(1)}},
        {"Item": ACCT2},
        {},
    ]}


@pytest.mark.parametrize("where", [
    pytest.param("pk = 'a' AND n = 1", id="extra-term"),
    pytest.param("pk = 'a' AND pk = 'b'", id="conflicting-repeat"),
    pytest.param("pk = 'a' AND pk IN ['b']", id="in-beside-equality"),
    pytest.param("pk IN ['a', 'b']", id="two-values"),
    pytest.param("pk > 'a'", id="range"),
    pytest.param(None, id="no-where"),
])
def test_select_must_name_exactly_the_full_key(api, tx, where):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    text = f"SELECT * FROM {q(tx)}" + ("" if where is None else f" WHERE {where}")
    resp = execute(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'z'"), st(text)])
    assert_validation(resp, prefixed(1, SELECT_KEY))


def test_select_without_the_sort_key_refused(api, tx2):
    resp = execute(api, [st(f"SELECT * FROM {q(tx2)} WHERE pk = 'doc'")])
    assert_validation(resp, prefixed(0, SELECT_KEY))


def test_select_on_an_index_refused(api, tx):
    resp = execute(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                         st(f"SELECT * FROM {q(tx)}.\"byOwner\" WHERE owner = 'ann'")])
    assert_validation(resp, prefixed(1, INDEX_READ))


# --------------------------------------------------------------------------- EXISTS


def test_exists_true_false_and_missing_item(api, tx):
    put(api, tx, {"pk": S("gate"), "open": {"BOOL": True}, "n": N(3)})
    ok = execute(api, [
        st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'gate' AND \"open\" = true "
           f"AND n > ?)", N(2)),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
    ])
    assert ok.status == 200 and ok.json == {"Responses": []}, ok
    assert get_item(api, tx, {"pk": S("a")}) == {"pk": S("a")}

    false = execute(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
        st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'gate' AND \"open\" = false)"),
    ])
    assert_canceled(false, [NONE, CCF])
    missing = execute(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
        st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'nobody' AND n = 3)"),
    ])
    assert_canceled(missing, [NONE, CCF])
    assert get_item(api, tx, {"pk": S("b")}) is None


def test_exists_with_two_values_for_one_key_fails_its_condition(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    put(api, tx, {"pk": S("b"), "n": N(1)})
    resp = execute(api, [st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'a' AND pk = 'b' "
                            f"AND n = 1)"),
                         st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'c'}}")])
    assert_canceled(resp, [CCF, NONE])
    assert get_item(api, tx, {"pk": S("c")}) is None


@pytest.mark.parametrize("where", [
    pytest.param("pk = 'gate'", id="key-only"),
    pytest.param("pk IN ['gate', 'other']", id="key-in-list"),
    pytest.param("pk IN ['gate', 'other'] AND n = 1", id="key-in-list-and-condition"),
])
def test_exists_needs_one_item_and_a_condition(api, tx, where):
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                         st(f"EXISTS(SELECT * FROM {q(tx)} WHERE {where})")])
    assert_validation(resp, prefixed(1, EXISTS_NEEDS_CONDITION))
    assert state(api, tx) == []


# --------------------------------------------------------------------------- refusals


def test_mixing_reads_and_writes_refused(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    for statements in (
        [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
         st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}")],
        # EXISTS counts with the writes.
        [st(f"SELECT * FROM {q(tx)} WHERE pk = 'c'"),
         st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'a' AND n = 1)")],
    ):
        assert_validation(execute(api, statements), MIXED)
    assert state(api, tx) == canon([{"pk": S("a"), "n": N(1)}])


@pytest.mark.parametrize("kind", ["writes", "reads", "exists-and-write"])
def test_two_statements_on_one_item_refused(api, tx, tx2, kind):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    first = {
        "writes": f"UPDATE {q(tx)} SET n = 3 WHERE pk = 'a'",
        "reads": f"SELECT n FROM {q(tx)} WHERE pk = 'a'",
        "exists-and-write": f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'a' AND n = 1)",
    }[kind]
    second = {
        "writes": f"DELETE FROM {q(tx)} WHERE pk = 'a'",
        "reads": f"SELECT * FROM {q(tx)} WHERE pk = 'a'",
        "exists-and-write": f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a'",
    }[kind]
    other = (f"SELECT * FROM {q(tx2)} WHERE pk = 'a' AND sk = 1" if kind == "reads"
             else f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a', 'sk': 1}}")
    assert_validation(execute(api, [st(first), st(other), st(second)]), MULTIPLE_OPS)
    assert state(api, tx) == canon([{"pk": S("a"), "n": N(1)}])
    assert state(api, tx2) == []


def test_key_shape_cancellation_comes_before_the_duplicate_refusal(api, tx):
    put(api, tx, {"pk": S("a")})
    resp = execute(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                         st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                         st(f"SELECT * FROM {q(tx)} WHERE pk = 1")])
    assert_canceled(resp, [NONE, NONE, vreason(KEY_MISMATCH)])


def test_parse_error_is_prefixed_with_its_index(api, tx):
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                         st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"SLECT * FROM {q(tx)} WHERE pk = 'c'")])
    assert_validation(resp, prefixed(2, ENVELOPE + "Expected data manipulation"))
    assert state(api, tx) == []


def test_literal_problem_is_prefixed(api, tx):
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a', 's': <<'x', 'x'>>}}")])
    assert_validation(resp, prefixed(0, "One or more parameter values were invalid: Input "
                                        "collection [x, x] contains duplicates."))
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                         st(f"UPDATE {q(tx)} SET n = n + 'one' WHERE pk = 'b'")])
    assert_validation(resp, prefixed(1, "Incorrect operand type for operator or function; "
                                        "operator or function: +, operand type: S"))
    assert state(api, tx) == []


def test_parameter_values_are_refused_without_a_prefix_and_first(api, tx):
    resp = execute(api, [
        st(f"SLECT * FROM {q(tx)} WHERE pk = 'c'"),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a', 's': ?}}", {"SS": ["a", "a"]}),
    ])
    assert_validation(resp, "One or more parameter values were invalid: Input collection "
                            "[a, a] contains duplicates.")
    resp = execute(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
        st(f"UPDATE {q(tx)} SET n = ? WHERE pk = 'b'", N("1e99999999999")),
    ])
    assert_validation(resp, "The parameter cannot be converted to a numeric value: "
                            "1e99999999999")
    assert state(api, tx) == []


def test_returning_refused(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a' RETURNING ALL NEW *")])
    assert_validation(resp, prefixed(1, RETURNING_REFUSED))
    resp = execute(api, [st(f"DELETE FROM {q(tx)} WHERE pk = 'a' RETURNING ALL OLD *")])
    assert_validation(resp, prefixed(0, RETURNING_REFUSED))
    assert state(api, tx) == canon([{"pk": S("a"), "n": N(1)}])


def test_write_on_an_index_refused(api, tx):
    put(api, tx, {"pk": S("a"), "owner": S("ann")})
    resp = execute(api, [st(f"UPDATE {q(tx)}.\"byOwner\" SET n = 2 WHERE pk = 'a'")])
    assert_validation(resp, prefixed(0, INDEX_WRITE))
    assert state(api, tx) == canon([{"pk": S("a"), "owner": S("ann")}])


def test_in_list_over_one_hundred_operands_refused(api, tx):
    values = ", ".join(str(i) for i in range(101))
    resp = execute(api, [st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a' AND n IN [{values}]")])
    assert_validation(resp, prefixed(0, "The IN operator is provided with too many operands; "
                                        "number of operands: 101"))


def test_refusals_beat_a_missing_table(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    resp = execute(api, [st(f"INSERT INTO {MISSING_TABLE} VALUE {{'pk': 'x'}}"),
                         st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a' RETURNING ALL NEW *")])
    assert_validation(resp, prefixed(1, RETURNING_REFUSED))
    resp = execute(api, [st(f"SELECT * FROM {MISSING_TABLE} WHERE pk = 'x'"),
                         st(f"SELECT * FROM {q(tx)}.\"byOwner\" WHERE owner = 'ann'")])
    assert_validation(resp, prefixed(1, INDEX_READ))


# --------------------------------------------------------------------------- cancellations


def test_missing_table_is_a_reason_for_each_of_its_statements(api, tx):
    put(api, tx, {"pk": S("a")})
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"UPDATE {MISSING_TABLE} SET n = 1 WHERE pk = 'x'"),
                         st(f"DELETE FROM {MISSING_TABLE} WHERE pk = 'y'")])
    assert_canceled(resp, [NONE, NOT_FOUND, NOT_FOUND])
    resp = execute(api, [st(f"SELECT * FROM {MISSING_TABLE} WHERE pk = 'x'"),
                         st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'")])
    assert_canceled(resp, [NOT_FOUND, NONE])
    assert state(api, tx) == canon([{"pk": S("a")}])


def test_missing_table_wins_over_checks_that_need_the_table(api, tx):
    # RETURNING and an index qualifier are judged against the table: with none, the
    # statement is a ResourceNotFound reason.
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"UPDATE {MISSING_TABLE} SET n = 1 WHERE pk = 'x' "
                            f"RETURNING ALL NEW *")])
    assert_canceled(resp, [NONE, NOT_FOUND])
    resp = execute(api, [st(f"SELECT * FROM {MISSING_TABLE}.\"idx\" WHERE pk = 'x'")])
    assert_canceled(resp, [NOT_FOUND])
    assert state(api, tx) == []


def test_reasons_in_statement_order(api, tx, tx2):
    populate(api, tx, tx2)
    resp = execute(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'acct-9'}}"),
        st(f"UPDATE {q(tx)} SET balance = 0 WHERE pk = 'acct-missing'"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'acct-2' AND balance > 1000"),
        st(f"UPDATE {q(tx2)} SET v = 2 WHERE pk = 'doc' AND sk = 1"),
        st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'gate' AND \"open\" = false)"),
        st(f"UPDATE {q(tx)} SET balance = balance + 1 WHERE pk = 'acct-1' AND owner = 'ann'"),
    ])
    assert_canceled(resp, [NONE, CCF, CCF, NONE, CCF, NONE])
    assert state(api, tx) == canon([ACCT1, ACCT2, GATE])
    assert state(api, tx2) == canon([DOC])


def test_all_old_puts_the_stored_item_in_the_reason(api, tx):
    a = {"pk": S("a"), "n": N(1), "s": S("keep")}
    b = {"pk": S("b"), "n": N(2)}
    put(api, tx, a)
    put(api, tx, b)
    resp = execute(api, [
        st(f"UPDATE {q(tx)} SET n = 5 WHERE pk = 'a' AND n = 9",
           ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'b' AND n = 9)",
           ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'c'", ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        st(f"UPDATE {q(tx)} SET n = 5 WHERE pk = 'missing'",
           ReturnValuesOnConditionCheckFailure="ALL_OLD"),
    ])
    # No Item for a missing item.
    assert_canceled(resp, [dict(CCF, Item=a), dict(CCF, Item=b), NONE, CCF])
    resp = execute(api, [st(f"UPDATE {q(tx)} SET n = 5 WHERE pk = 'a' AND n = 9",
                            ReturnValuesOnConditionCheckFailure="NONE")])
    assert_canceled(resp, [CCF])
    assert state(api, tx) == canon([a, b])


@pytest.mark.parametrize("statement, message", [
    pytest.param("UPDATE {t} SET v = 1 WHERE pk = 'p'", KEY_MISMATCH, id="partition-key-only"),
    pytest.param("DELETE FROM {t} WHERE sk = 1", KEY_MISMATCH, id="sort-key-only"),
    pytest.param("UPDATE {t} SET v = 1 WHERE pk = 'p' AND sk = 'one'", KEY_MISMATCH,
                 id="wrong-type"),
    pytest.param("INSERT INTO {t} VALUE {{'pk': 'p'}}",
                 "One or more parameter values were invalid: Missing the key sk in the item",
                 id="insert-without-sort-key"),
])
def test_key_shape_is_a_validation_reason(api, tx, tx2, statement, message):
    put(api, tx2, DOC)
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'new'}}"),
                         st(statement.format(t=q(tx2)))])
    assert_canceled(resp, [NONE, vreason(message)])
    assert state(api, tx) == []
    assert state(api, tx2) == canon([DOC])


def test_insert_of_an_existing_key_cancels(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a', 'n': 2}}")])
    assert_error(resp, 400, CANCELED)
    assert state(api, tx) == canon([{"pk": S("a"), "n": N(1)}])
    # DynamoDB's reason here is not known; DuplicateItem is the documented default.
    assert_canceled(resp, [NONE, DUPLICATE_ITEM])


def test_execution_error_is_a_validation_reason(api, tx):
    put(api, tx, {"pk": S("a"), "n": S("text")})
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                         st(f"UPDATE {q(tx)} SET n = n + 1 WHERE pk = 'a'")])
    assert_canceled(resp, [NONE, vreason(
        "An operand in the update expression has an incorrect data type")])
    assert state(api, tx) == canon([{"pk": S("a"), "n": S("text")}])


# --------------------------------------------------------------------------- ClientRequestToken


def counter_request(tx2, token, amount=1):
    return {"TransactStatements": [
        st(f"UPDATE {q(tx2)} SET n = n + ? WHERE pk = 'c' AND sk = 0", N(amount)),
        st(f"EXISTS(SELECT * FROM {q(tx2)} WHERE pk = 'doc' AND sk = 1 AND v = 1)"),
    ], "ClientRequestToken": token}


def counter(api, tx2):
    return get_item(api, tx2, {"pk": S("c"), "sk": N(0)})["n"]["N"]


def test_same_token_same_request_applies_once(api, tx2):
    put(api, tx2, DOC)
    put(api, tx2, {"pk": S("c"), "sk": N(0), "n": N(0)})
    token = str(uuid.uuid4())
    first = api("ExecuteTransaction", counter_request(tx2, token))
    assert first.status == 200 and first.json == {"Responses": []}, first
    replay = api("ExecuteTransaction", counter_request(tx2, token))
    assert replay.status == 200 and replay.json == first.json, replay
    assert counter(api, tx2) == "1"


def test_same_token_other_request_is_a_mismatch(api, tx2):
    put(api, tx2, DOC)
    put(api, tx2, {"pk": S("c"), "sk": N(0), "n": N(0)})
    token = str(uuid.uuid4())
    assert api("ExecuteTransaction", counter_request(tx2, token)).status == 200
    resp = api("ExecuteTransaction", counter_request(tx2, token, amount=5))
    # The text is not known: type, status and the member (capital `Message`).
    assert_error(resp, 400, MISMATCH)
    assert set(resp.json) == {"__type", "Message"} and resp.json["Message"], resp
    assert counter(api, tx2) == "1"
    # The original request still replays, without applying again.
    resp = api("ExecuteTransaction", counter_request(tx2, token))
    assert resp.status == 200 and resp.json == {"Responses": []}, resp
    assert counter(api, tx2) == "1"


def test_token_too_long_refused(api, tx):
    token = "t" * 37
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}")],
                   ClientRequestToken=token)
    assert_validation(resp, COR_PREFIX + f"Value '{token}' at 'clientRequestToken' failed to "
                                         "satisfy constraint: Member must have length less "
                                         "than or equal to 36")
    assert state(api, tx) == []
    resp = execute(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}")],
                   ClientRequestToken=str(uuid.uuid4())[:4] + "p" * 32)
    assert resp.status == 200, resp


# --------------------------------------------------------------------------- capacity


@pytest.fixture
def indexed(make_table):
    """pk S, sk N; GSI byG (g), LSI byL (l), both projecting everything."""
    return make_table(
        ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "byG",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{"IndexName": "byL",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}])


def write_units(units):
    return {"CapacityUnits": units, "WriteCapacityUnits": units}


def test_write_capacity_is_transactional(api, indexed, tx2):
    insert = st(f"INSERT INTO {q(indexed)} VALUE {{'pk': 'a', 'sk': 1, 'g': 'x', 'l': 'y'}}")
    resp = execute(api, [insert], ReturnConsumedCapacity="INDEXES")
    assert resp.status == 200, resp
    assert resp.json == {"Responses": [], "ConsumedCapacity": [dict(
        {"TableName": indexed, "Table": write_units(2.0),
         "GlobalSecondaryIndexes": {"byG": write_units(1.0)},
         "LocalSecondaryIndexes": {"byL": write_units(1.0)}}, **write_units(4.0))]}
    resp = execute(api, [
        st(f"INSERT INTO {q(indexed)} VALUE {{'pk': 'b', 'sk': 1, 'g': 'x', 'l': 'y'}}"),
        st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a', 'sk': 1}}"),
        st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'b', 'sk': 1}}"),
    ], ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert resp.json["Responses"] == []
    assert sorted(resp.json["ConsumedCapacity"], key=lambda c: c["TableName"]) == sorted([
        dict({"TableName": indexed}, **write_units(4.0)),
        dict({"TableName": tx2}, **write_units(4.0))], key=lambda c: c["TableName"])


def test_read_capacity_is_two_units_per_item(api, tx):
    put(api, tx, {"pk": S("a")})
    put(api, tx, {"pk": S("b")})
    resp = execute(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                         st(f"SELECT * FROM {q(tx)} WHERE pk = 'b'")],
                   ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert resp.json["ConsumedCapacity"] == [
        {"TableName": tx, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}]
    resp = execute(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'")],
                   ReturnConsumedCapacity="NONE")
    assert resp.status == 200 and resp.json == {"Responses": [{"Item": {"pk": S("a")}}]}, resp


def test_replay_reports_read_units(api, tx):
    req = {"TransactStatements": [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'r'}}")],
           "ClientRequestToken": str(uuid.uuid4()), "ReturnConsumedCapacity": "TOTAL"}
    first = api("ExecuteTransaction", req)
    assert first.status == 200, first
    assert first.json["ConsumedCapacity"] == [dict({"TableName": tx}, **write_units(2.0))]
    replay = api("ExecuteTransaction", req)
    assert replay.status == 200, replay
    assert replay.json == {"Responses": [], "ConsumedCapacity": [
        {"TableName": tx, "CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}]}


# --------------------------------------------------------------------------- streams, boto3


def test_stream_records_one_per_written_item_none_when_cancelled(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES")
    u = {"pk": S("u"), "n": N(1)}
    d = {"pk": S("d"), "n": N(2)}
    c = {"pk": S("c"), "n": N(3)}
    for item in (u, d, c):
        put(api, t, item)
    t0 = time.time()
    token = str(uuid.uuid4())
    request = {"TransactStatements": [
        st(f"INSERT INTO {q(t)} VALUE {{'pk': 'new', 'n': 0}}"),
        st(f"UPDATE {q(t)} SET n = 5 WHERE pk = 'u'"),
        st(f"DELETE FROM {q(t)} WHERE pk = 'd'"),
        st(f"EXISTS(SELECT * FROM {q(t)} WHERE pk = 'c' AND n = 3)"),
        st(f"DELETE FROM {q(t)} WHERE pk = 'absent'"),
    ], "ClientRequestToken": token}
    assert api.ok("ExecuteTransaction", request) == {"Responses": []}
    # Replayed: nothing new.
    assert api.ok("ExecuteTransaction", request) == {"Responses": []}
    # Cancelled: nothing at all.
    cancelled = execute(api, [st(f"INSERT INTO {q(t)} VALUE {{'pk': 'other'}}"),
                              st(f"UPDATE {q(t)} SET n = 7 WHERE pk = 'c'"),
                              st(f"EXISTS(SELECT * FROM {q(t)} WHERE pk = 'u' AND n = 1)")])
    assert_canceled(cancelled, [NONE, NONE, CCF])
    t1 = time.time()
    expected = [change("INSERT", {"pk": S("u")}, new=u), change("INSERT", {"pk": S("d")}, new=d),
                change("INSERT", {"pk": S("c")}, new=c),
                change("INSERT", {"pk": S("new")}, new={"pk": S("new"), "n": N(0)}),
                change("MODIFY", {"pk": S("u")}, u, {"pk": S("u"), "n": N(5)}),
                change("REMOVE", {"pk": S("d")}, old=d)]
    check_records(read_stream(streams, arn), expected, "NEW_AND_OLD_IMAGES", t0, t1,
                  unordered_groups=((3, 6),))


def test_boto3_execute_transaction(ddb, tx):
    out = ddb.execute_transaction(TransactStatements=[
        {"Statement": f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'b': ?}}",
         "Parameters": [{"S": "b1"}, {"B": b"\x00\xff"}]},
        {"Statement": f"INSERT INTO {q(tx)} VALUE {{'pk': 'b2', 'n': 2}}"},
    ])
    assert out["Responses"] == []
    out = ddb.execute_transaction(TransactStatements=[
        {"Statement": f"SELECT * FROM {q(tx)} WHERE pk = ?", "Parameters": [{"S": "b1"}]},
        {"Statement": f"SELECT * FROM {q(tx)} WHERE pk = 'b3'"},
    ])
    assert out["Responses"] == [{"Item": {"pk": {"S": "b1"}, "b": {"B": b"\x00\xff"}}}, {}]
    with pytest.raises(ddb.exceptions.TransactionCanceledException) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": f"UPDATE {q(tx)} SET n = 3 WHERE pk = 'b2' AND n = 9"}])
    assert e.value.response["CancellationReasons"] == [
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]
    assert ddb.get_item(TableName=tx, Key={"pk": {"S": "b2"}},
                        ConsistentRead=True)["Item"]["n"] == {"N": "2"}
