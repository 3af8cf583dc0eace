"""BatchExecuteStatement: 1 to 25 statements run one by one, all reads or all writes; the
top-level refusals (mixed reads and writes, two statements on one item); per-statement
`Error` entries in request order while the others still run; the `TableName` echo; SELECT
members that must read one item by its full key; EXISTS refused; RETURNING rows in `Item`;
ConsumedCapacity as a list with one entry per table; stream records of the writes that
succeeded."""

import time

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_validation,
    item_size,
    normalize_item,
)
from stream_helpers import change, check_records, read_stream, stream_table, streams  # noqa: F401
from transaction_fixtures import N, S, canon, get_item, state, tx, tx2  # noqa: F401
from partiql_helpers import q, st, put

ENVELOPE = "Statement wasn't well formed, can't be processed: "
MIXED = "Read and write requests together in the same batch is not supported."
DUPLICATE_KEYS = "Provided list of item keys contains duplicates"
SELECT_KEY = ("Select statements within BatchExecuteStatement must specify the primary key in "
              "the where clause.")
EXISTS_REFUSED = "EXISTS can only be used in ExecuteTransaction write requests."
CCF = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
DUPLICATE_ITEM = {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
NOT_FOUND = {"Code": "ResourceNotFound", "Message": "Requested resource not found"}






def batch(api, statements, **extra):
    return api("BatchExecuteStatement", dict({"Statements": statements}, **extra))


def responses(api, statements, **extra):
    """Runs a batch that must answer HTTP 200; returns its Responses."""
    resp = batch(api, statements, **extra)
    assert resp.status == 200, resp
    out = resp.json["Responses"]
    assert len(out) == len(statements), out
    return out


def verror(message):
    return {"Code": "ValidationError", "Message": message}




def assert_member_error(member, error, table=None):
    """A member that failed with `error`; `table` given: TableName must be that name;
    None: whether TableName is echoed is not known for this failure, but if it is, nothing
    else is there."""
    assert member.get("Error") == error, member
    assert set(member) <= {"Error", "TableName"}, member
    if table is not None:
        assert member.get("TableName") == table, member


# --------------------------------------------------------------------------- reads


def test_reads_answer_in_request_order_with_table_name(api, tx, tx2):
    a = {"pk": S("a"), "n": N(1)}
    b = {"pk": S("b"), "n": N(2), "m": {"M": {"k": S("v")}}}
    d = {"pk": S("d"), "sk": N(2), "x": S("y")}
    e = {"pk": S("e"), "sk": N(3), "x": S("z")}
    put(api, tx, a)
    put(api, tx, b)
    put(api, tx2, d)
    put(api, tx2, e)
    out = responses(api, [
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
        st(f"SELECT * FROM {q(tx2)} WHERE pk = ? AND sk = ?", S("d"), N(2)),
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'missing'"),
        st(f"SELECT n, m.k FROM {q(tx)} WHERE pk IN ['b']", ConsistentRead=True),
        st(f"SELECT x FROM {q(tx2)} WHERE sk = 3 AND pk = 'e'"),
    ])
    assert out[0] == {"TableName": tx, "Item": a}
    assert out[1] == {"TableName": tx2, "Item": d}
    assert out[2] == {"TableName": tx}
    assert out[3] == {"TableName": tx, "Item": {"n": N(2), "k": S("v")}}
    assert out[4] == {"TableName": tx2, "Item": {"x": S("z")}}


def test_select_members_must_name_the_full_key(api, tx, tx2):
    put(api, tx, {"pk": S("a"), "owner": S("ann"), "n": N(1)})
    put(api, tx2, {"pk": S("p"), "sk": N(1)})
    refused = [
        f"SELECT * FROM {q(tx2)} WHERE pk = 'b'",                          # no sort key
        f"SELECT * FROM {q(tx)} WHERE pk = 'c' AND n = 1",                 # an extra condition
        f"SELECT * FROM {q(tx)}",                                          # no WHERE
        f"SELECT * FROM {q(tx)} WHERE pk IN ['e', 'f']",                   # two items
        f"SELECT * FROM {q(tx)} WHERE pk = 'g' AND pk = 'h'",              # conflicting repeat
        f"SELECT * FROM {q(tx)} WHERE pk > 'i'",                           # not an equality
        f"SELECT * FROM {q(tx)}.\"byOwner\" WHERE owner = 'ann'",          # an index
        f"SELECT * FROM {q(tx)}.\"byOwner\" WHERE pk = 'j'",               # index, table key
    ]
    out = responses(api, [st(s) for s in refused]
                    + [st(f"SELECT * FROM {q(tx2)} WHERE pk IN ['p'] AND sk = 1"),
                       st(f"SELECT pk FROM {q(tx)} WHERE pk = 'a' AND pk = 'a'")])
    for text, member in zip(refused, out):
        # Refused before the table is reached: no TableName.
        assert member == {"Error": verror(SELECT_KEY)}, (text, member)
    assert out[-2] == {"TableName": tx2, "Item": {"pk": S("p"), "sk": N(1)}}
    assert out[-1] == {"TableName": tx, "Item": {"pk": S("a")}}


def test_select_on_missing_table_is_a_member_error(api, tx):
    put(api, tx, {"pk": S("a")})
    out = responses(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                          st("SELECT * FROM \"no-such-table-pqb\" WHERE pk = 'a'")])
    assert out[0] == {"TableName": tx, "Item": {"pk": S("a")}}
    assert_member_error(out[1], NOT_FOUND)


# --------------------------------------------------------------------------- size of the list


def test_twenty_five_writes_all_run(api, tx):
    out = responses(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'k{i}', 'i': {i}}}")
                          for i in range(25)])
    assert out == [{"TableName": tx}] * 25
    assert state(api, tx) == canon([{"pk": S(f"k{i}"), "i": N(i)} for i in range(25)])


def test_twenty_five_reads_all_run(api, tx):
    put(api, tx, {"pk": S("k7")})
    out = responses(api, [st(f"SELECT * FROM {q(tx)} WHERE pk = 'k{i}'") for i in range(25)])
    assert out[7] == {"TableName": tx, "Item": {"pk": S("k7")}}
    assert all(m == {"TableName": tx} for i, m in enumerate(out) if i != 7), out


def test_more_than_twenty_five_statements_refused(api, tx):
    resp = batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'k{i}'}}") for i in range(26)])
    # How the list value is rendered is not known; the rest of the text is.
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith("at 'statements' failed to satisfy constraint: Member must "
                                 "have length less than or equal to 25"), resp.message
    assert state(api, tx) == []


def test_empty_and_missing_statements_refused(api):
    assert_validation(batch(api, []),
                      COR_PREFIX + "Value '[]' at 'statements' failed to satisfy constraint: "
                                   "Member must have length greater than or equal to 1")
    resp = api("BatchExecuteStatement", {})
    assert_validation(resp, message_prefix=COR_PREFIX)
    assert "'statements'" in resp.message, resp.message


# --------------------------------------------------------------------------- top-level refusals


def test_reads_and_writes_mixed_refused(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    for statements in (
        [st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
         st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}")],
        [st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a'"),
         st(f"DELETE FROM {q(tx)} WHERE pk = 'c'"),
         st(f"SELECT * FROM {q(tx)} WHERE pk = 'd'")],
    ):
        assert_validation(batch(api, statements), MIXED)
    assert state(api, tx) == [normalize_item({"pk": S("a"), "n": N(1)})]


def test_mix_is_checked_before_duplicate_keys(api, tx):
    assert_validation(batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                                  st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'")]), MIXED)
    assert state(api, tx) == []


def test_unparsable_member_takes_no_part_in_the_mix_check(api, tx):
    out = responses(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                          st(f"SLECT * FROM {q(tx)} WHERE pk = 'b'")])
    assert out == [{"TableName": tx},
                   {"Error": verror(ENVELOPE + "Expected data manipulation")}]
    assert get_item(api, tx, {"pk": S("a")}) == {"pk": S("a")}
    # ... nor does it stop the check among the others.
    assert_validation(batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'c'}}"),
                                  st(f"SLECT * FROM {q(tx)} WHERE pk = 'b'"),
                                  st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'")]), MIXED)
    assert get_item(api, tx, {"pk": S("c")}) is None


@pytest.mark.parametrize("kind", ["writes", "reads"])
def test_two_statements_on_one_item_refused(api, tx, tx2, kind):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    if kind == "writes":
        statements = [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                      st(f"UPDATE {q(tx)} SET n = 5 WHERE pk = 'a'"),
                      st(f"DELETE FROM {q(tx)} WHERE pk = 'a'")]
    else:
        statements = [st(f"SELECT * FROM {q(tx2)} WHERE pk = 'a' AND sk = 1"),
                      st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),
                      st(f"SELECT n FROM {q(tx)} WHERE pk = 'a'")]
    assert_validation(batch(api, statements), DUPLICATE_KEYS)
    assert state(api, tx) == [normalize_item({"pk": S("a"), "n": N(1)})]


def test_keys_that_share_characters_are_distinct(api, tx, tx2):
    out = responses(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
                          st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'aa'}}"),
                          st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a', 'sk': 1}}"),
                          st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a', 'sk': 11}}"),
                          st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a1', 'sk': 1}}")])
    assert out == [{"TableName": tx}] * 2 + [{"TableName": tx2}] * 3
    assert len(state(api, tx)) == 2 and len(state(api, tx2)) == 3


# --------------------------------------------------------------------------- member errors


def test_member_errors_in_request_order_while_the_others_run(api, tx):
    put(api, tx, {"pk": S("dup"), "n": N(1)})
    put(api, tx, {"pk": S("cond"), "n": N(1)})
    put(api, tx, {"pk": S("gone"), "n": N(1)})
    put(api, tx, {"pk": S("upd"), "n": N(1)})
    out = responses(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'new', 'n': 1}}"),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'dup', 'n': 2}}"),
        st(f"UPDATE {q(tx)} SET n = 3 WHERE pk = 'nothing'"),
        st(f"UPDATE {q(tx)} SET n = 4 WHERE pk = 'cond' AND n = 99"),
        st("INSERT INTO \"no-such-table-pqb\" VALUE {'pk': 'x'}"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'gone'"),
        st(f"UPDATE {q(tx)} SET n = n + 1 WHERE pk = 'upd' AND n = 1"),
        st(f"SLECT * FROM {q(tx)} WHERE pk = 'p'"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'never' AND n = 5"),
    ])
    assert out[0] == {"TableName": tx}
    assert out[1] == {"TableName": tx, "Error": DUPLICATE_ITEM}
    assert out[2] == {"TableName": tx, "Error": CCF}
    assert out[3] == {"TableName": tx, "Error": CCF}
    assert_member_error(out[4], NOT_FOUND)
    assert out[5] == {"TableName": tx}
    assert out[6] == {"TableName": tx}
    assert out[7] == {"Error": verror(ENVELOPE + "Expected data manipulation")}
    assert out[8] == {"TableName": tx}
    assert state(api, tx) == canon([{"pk": S("new"), "n": N(1)}, {"pk": S("dup"), "n": N(1)},
                                    {"pk": S("cond"), "n": N(1)}, {"pk": S("upd"), "n": N(2)}])


@pytest.mark.parametrize("mode", ["ALL_OLD", "NONE"])
def test_return_values_on_condition_check_failure_is_ignored(api, tx, mode):
    stored = {"pk": S("a"), "n": N(1), "s": S("keep")}
    put(api, tx, stored)
    put(api, tx, {"pk": S("b"), "n": N(1)})
    out = responses(api, [
        st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'a' AND n = 5",
           ReturnValuesOnConditionCheckFailure=mode),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'b' AND attribute_not_exists(n)",
           ReturnValuesOnConditionCheckFailure=mode),
    ])
    # No Item in the error, whatever the member asked for.
    assert out == [{"TableName": tx, "Error": CCF}, {"TableName": tx, "Error": CCF}]
    assert get_item(api, tx, {"pk": S("a")}) == stored


def test_parameters_are_per_statement(api, tx):
    out = responses(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'n': ?}}", S("a"), N(7)),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 's': ?}}", S("b"), {"SS": []}),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'n': ?}}", S("c"), N("abc")),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'd', 'n': ?}}", N("1e99999999999")),
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': ?}}", S("e")),
    ])
    assert out[0] == {"TableName": tx}
    assert_member_error(out[1], verror(
        "One or more parameter values were invalid: An string set  may not be empty"))
    assert_member_error(out[2], verror("The parameter cannot be converted to a numeric value: abc"))
    assert_member_error(out[3], verror(
        "The parameter cannot be converted to a numeric value: 1e99999999999"))
    assert out[4] == {"TableName": tx}
    assert state(api, tx) == canon([{"pk": S("a"), "n": N(7)}, {"pk": S("e")}])


def test_exists_is_refused_in_a_batch(api, tx):
    put(api, tx, {"pk": S("a"), "n": N(1)})
    out = responses(api, [st(f"EXISTS(SELECT * FROM {q(tx)} WHERE pk = 'a' AND n = 1)")])
    assert_member_error(out[0], verror(EXISTS_REFUSED))


# --------------------------------------------------------------------------- RETURNING


def test_returning_rows_are_the_member_item(api, tx):
    put(api, tx, {"pk": S("u"), "n": N(1), "s": S("x")})
    put(api, tx, {"pk": S("m"), "n": N(1)})
    put(api, tx, {"pk": S("d"), "n": N(3)})
    put(api, tx, {"pk": S("keep"), "n": N(4)})
    out = responses(api, [
        st(f"UPDATE {q(tx)} SET n = n + 1 WHERE pk = 'u' RETURNING ALL NEW *"),
        st(f"UPDATE {q(tx)} SET fresh = 'f' WHERE pk = 'm' RETURNING MODIFIED OLD *"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'd' RETURNING ALL OLD *"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'absent' RETURNING ALL OLD *"),
        st(f"DELETE FROM {q(tx)} WHERE pk = 'keep' RETURNING ALL NEW *"),
        st(f"UPDATE {q(tx)} SET n = 9 WHERE pk = 'nothing' RETURNING ALL OLD *"),
    ])
    assert out[0] == {"TableName": tx, "Item": {"pk": S("u"), "n": N(2), "s": S("x")}}
    # Nothing to return: no Item, not an empty one.
    assert out[1] == {"TableName": tx}
    assert out[2] == {"TableName": tx, "Item": {"pk": S("d"), "n": N(3)}}
    assert out[3] == {"TableName": tx}
    assert_member_error(out[4], verror(
        "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in "
        "DELETE statements."))
    assert out[5] == {"TableName": tx, "Error": CCF}
    assert get_item(api, tx, {"pk": S("keep")}) == {"pk": S("keep"), "n": N(4)}
    assert get_item(api, tx, {"pk": S("m")}) == {"pk": S("m"), "n": N(1), "fresh": S("f")}
    assert get_item(api, tx, {"pk": S("d")}) is None


# --------------------------------------------------------------------------- capacity


def capacity_by_table(resp_json):
    cc = resp_json["ConsumedCapacity"]
    assert isinstance(cc, list), cc
    got = {}
    for entry in cc:
        assert set(entry) <= {"TableName", "CapacityUnits", "ReadCapacityUnits",
                              "WriteCapacityUnits"}, entry
        assert entry["TableName"] not in got, cc
        got[entry["TableName"]] = entry["CapacityUnits"]
    return got


def test_read_capacity_per_table_rated_by_each_member(api, tx, tx2):
    put(api, tx, {"pk": S("a")})
    put(api, tx, {"pk": S("b")})
    put(api, tx, {"pk": S("c")})
    big = {"pk": S("big"), "sk": N(1), "pad": S("x" * 5000)}
    assert item_size(big) > 4096
    put(api, tx2, big)
    resp = batch(api, [
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'a'"),                        # 0.5
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'b'", ConsistentRead=False), # 0.5
        st(f"SELECT * FROM {q(tx)} WHERE pk = 'c'", ConsistentRead=True),  # 1.0
        st(f"SELECT pk FROM {q(tx2)} WHERE pk = 'big' AND sk = 1"),         # 2 × 0.5
    ], ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert capacity_by_table(resp.json) == {tx: 2.0, tx2: 1.0}


def test_write_capacity_per_table_without_transactional_factor(api, tx, tx2):
    put(api, tx, {"pk": S("u"), "n": N(1)})
    resp = batch(api, [
        st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}"),
        st(f"UPDATE {q(tx)} SET n = 2 WHERE pk = 'u'"),
        st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'a', 'sk': 1}}"),
    ], ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert resp.json["Responses"] == [{"TableName": tx}] * 2 + [{"TableName": tx2}]
    assert capacity_by_table(resp.json) == {tx: 2.0, tx2: 1.0}


def test_capacity_none_and_all_failed(api, tx, tx2):
    put(api, tx, {"pk": S("dup")})
    put(api, tx2, {"pk": S("dup"), "sk": N(1)})
    resp = batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'a'}}")],
                 ReturnConsumedCapacity="NONE")
    assert resp.status == 200 and resp.json == {"Responses": [{"TableName": tx}]}, resp
    # A batch in which every statement failed reports no ConsumedCapacity at all.
    resp = batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'dup'}}")],
                 ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert resp.json == {"Responses": [{"TableName": tx, "Error": DUPLICATE_ITEM}]}
    # A table with only failed statements gets no entry.
    resp = batch(api, [st(f"INSERT INTO {q(tx)} VALUE {{'pk': 'b'}}"),
                       st(f"INSERT INTO {q(tx2)} VALUE {{'pk': 'dup', 'sk': 1}}")],
                 ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert capacity_by_table(resp.json) == {tx: 1.0}


# --------------------------------------------------------------------------- streams, boto3


def test_stream_records_only_for_writes_that_succeeded(api, streams, make_table):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES")
    u = {"pk": S("u"), "n": N(1)}
    d = {"pk": S("d"), "n": N(2)}
    c = {"pk": S("c"), "n": N(3)}
    for item in (u, d, c):
        put(api, t, item)
    t0 = time.time()
    out = responses(api, [
        st(f"INSERT INTO {q(t)} VALUE {{'pk': 'new', 'n': 0}}"),
        st(f"UPDATE {q(t)} SET n = 5 WHERE pk = 'u'"),
        st(f"DELETE FROM {q(t)} WHERE pk = 'd'"),
        st(f"UPDATE {q(t)} SET n = 9 WHERE pk = 'c' AND n = 0"),
        st(f"DELETE FROM {q(t)} WHERE pk = 'absent'"),
        st(f"INSERT INTO {q(t)} VALUE {{'pk': 'c'}}"),
    ])
    t1 = time.time()
    assert out[3] == {"TableName": t, "Error": CCF}
    assert out[5] == {"TableName": t, "Error": DUPLICATE_ITEM}
    expected = [change("INSERT", {"pk": S("u")}, new=u), change("INSERT", {"pk": S("d")}, new=d),
                change("INSERT", {"pk": S("c")}, new=c),
                change("INSERT", {"pk": S("new")}, new={"pk": S("new"), "n": N(0)}),
                change("MODIFY", {"pk": S("u")}, u, {"pk": S("u"), "n": N(5)}),
                change("REMOVE", {"pk": S("d")}, old=d)]
    check_records(read_stream(streams, arn), expected, "NEW_AND_OLD_IMAGES", t0, t1,
                  unordered_groups=((3, 6),))


def test_boto3_batch_execute_statement(ddb, tx):
    out = ddb.batch_execute_statement(Statements=[
        {"Statement": f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'b': ?}}",
         "Parameters": [{"S": "b1"}, {"B": b"\x00\xff"}]},
        {"Statement": f"INSERT INTO {q(tx)} VALUE {{'pk': 'b2', 'n': 2}}"},
    ])
    assert [r["TableName"] for r in out["Responses"]] == [tx, tx]
    assert all("Error" not in r for r in out["Responses"])
    out = ddb.batch_execute_statement(Statements=[
        {"Statement": f"SELECT * FROM {q(tx)} WHERE pk = ?", "Parameters": [{"S": "b1"}]},
        {"Statement": f"SELECT n FROM {q(tx)} WHERE pk = 'b2'", "ConsistentRead": True},
        {"Statement": f"SELECT * FROM {q(tx)} WHERE pk = 'b3'"},
    ])
    assert out["Responses"] == [
        {"TableName": tx, "Item": {"pk": {"S": "b1"}, "b": {"B": b"\x00\xff"}}},
        {"TableName": tx, "Item": {"n": {"N": "2"}}},
        {"TableName": tx}]
    assert "ConsumedCapacity" not in out
