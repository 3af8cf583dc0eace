"""PartiQL's limits and hostile input: a NextToken is only ever a resume point Kumo issued
for the same statement, parameters and table; the decomposition rules of keyed reads hold
in batches and transactions too; a transaction reads and writes at most 4 MB; a WHERE whose
key equalities contradict each other reads nothing."""

import base64

from kumo_testlib import assert_validation
from transaction_fixtures import CANCELED, NONE, N, S, assert_canceled, tx, tx2, vreason  # noqa: F401
from partiql_helpers import q

INVALID_TOKEN = "Invalid NextToken"
MISMATCH = "NextToken does not match request"
OVERLAP = "Overlapping conditions with range keys are not supported in where clause"
TOO_MANY = "Too many decomposed read operations for a given query."
TOO_LARGE = "Transaction request cannot be larger than 4 MB"




def execute(api, statement, *params, **extra):
    body = {"Statement": statement}
    if params:
        body["Parameters"] = list(params)
    body.update(extra)
    return api("ExecuteStatement", body)


def fill(api, table, count):
    for i in range(count):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S("a"), "sk": N(i)}})


def first_token(api, table):
    resp = execute(api, f"SELECT * FROM {q(table)}", Limit=1)
    assert resp.status == 200, resp
    return resp.json["NextToken"]


# --------------------------------------------------------------------------- NextToken


def test_token_resumes_only_its_own_statement(api, tx2):
    fill(api, tx2, 3)
    token = first_token(api, tx2)
    resp = execute(api, f"SELECT * FROM {q(tx2)}", Limit=5, NextToken=token)
    assert resp.status == 200, resp
    assert [i["sk"] for i in resp.json["Items"]] == [N(1), N(2)]
    assert "NextToken" not in resp.json
    assert_validation(execute(api, f"SELECT pk FROM {q(tx2)}", Limit=1, NextToken=token),
                      MISMATCH)


def test_token_of_a_recreated_table_does_not_match(api, make_table):
    table = make_table(("pk", "S"), ("sk", "N"))
    fill(api, table, 2)
    token = first_token(api, table)
    api.ok("DeleteTable", {"TableName": table})
    api.ok("CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "other", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "other", "KeyType": "HASH"}]})
    assert_validation(execute(api, f"SELECT * FROM {q(table)}", NextToken=token), MISMATCH)


def forged(token, tail):
    """The token's header (what binds it to the request) with another resume key."""
    raw = base64.b64decode(token)
    return base64.b64encode(raw[:13] + tail).decode()


def test_forged_resume_keys_are_refused(api, tx2):
    fill(api, tx2, 3)
    token = first_token(api, tx2)
    for tail in (b"\x00", b"\xff\xff\xff", b"{}", b'{"pk":{"N":"1"},"sk":{"N":"1"}}',
                 b'{"pk":{"S":"a"}}', b'{"pk":{"S":"a"},"sk":{"N":"1"},"x":{"S":"y"}}',
                 b'{"pk":{"S":"a"},"sk":{"N":"x"}}', b"[1]"):
        assert_validation(execute(api, f"SELECT * FROM {q(tx2)}", NextToken=forged(token, tail)),
                          INVALID_TOKEN)
    # The server is still there and answers.
    resp = execute(api, f"SELECT * FROM {q(tx2)}")
    assert resp.status == 200 and len(resp.json["Items"]) == 3, resp


def test_tokens_that_are_not_tokens(api, tx2):
    for token in ("x", "!!!!", base64.b64encode(b"Q").decode(), "A" * 64):
        assert_validation(execute(api, f"SELECT * FROM {q(tx2)}", NextToken=token), INVALID_TOKEN)


# --------------------------------------------------------------------------- key reads


def test_contradicting_sort_key_equalities_are_no_key_condition(api, tx2):
    fill(api, tx2, 2)
    assert_validation(
        execute(api, f"SELECT * FROM {q(tx2)} WHERE sk = 1 AND sk = 2 ORDER BY sk"),
        "Must have at least one non-optional hash key condition in WHERE clause when using "
        "ORDER BY clause.")
    resp = execute(api, f"SELECT * FROM {q(tx2)} WHERE pk = 'a' AND pk = 'b'")
    assert resp.status == 200 and resp.json["Items"] == [], resp


def test_batch_select_over_fifty_partitions(api, tx):
    keys = ", ".join(f"'k{i}'" for i in range(51))
    resp = api("BatchExecuteStatement", {"Statements": [
        {"Statement": f"SELECT * FROM {q(tx)} WHERE pk IN [{keys}]"}]})
    assert resp.status == 200, resp
    assert resp.json["Responses"] == [{"Error": {"Code": "ValidationError", "Message": TOO_MANY}}]


def test_transaction_statements_that_read_one_partition_twice(api, tx):
    for where in ("pk = 'a' OR pk = 'a'", "pk IN ['a', 'a']"):
        for statement in (f"SELECT * FROM {q(tx)} WHERE {where}",
                          f"UPDATE {q(tx)} SET n = 1 WHERE {where}"):
            resp = api("ExecuteTransaction", {"TransactStatements": [{"Statement": statement}]})
            assert_validation(resp, f"Validation failed in TransactStatements[0]: {OVERLAP}")


# --------------------------------------------------------------------------- 4 MB


def big_item(key):
    return {"pk": S(key), "blob": S("x" * 399_000)}


def test_transaction_reads_past_four_megabytes_are_cancelled(api, tx):
    for i in range(12):
        api.ok("PutItem", {"TableName": tx, "Item": big_item(f"big-{i:02d}")})
    statements = [{"Statement": f"SELECT * FROM {q(tx)} WHERE pk = 'big-{i:02d}'"}
                  for i in range(12)]
    resp = api("ExecuteTransaction", {"TransactStatements": statements})
    # 399,010 bytes each: the eleventh passes 4,194,304.
    assert_canceled(resp, [NONE] * 10 + [vreason(TOO_LARGE), NONE])


def test_transaction_writes_past_four_megabytes_are_refused(api, tx):
    statements = [{"Statement": f"INSERT INTO {q(tx)} VALUE {{'pk': ?, 'blob': ?}}",
                   "Parameters": [S(f"big-{i:02d}"), S("x" * 399_000)]} for i in range(11)]
    assert_validation(api("ExecuteTransaction", {"TransactStatements": statements}), TOO_LARGE)
    assert api.ok("Scan", {"TableName": tx, "Select": "COUNT"})["Count"] == 0


# --------------------------------------------------------------------------- 1 MB


def test_one_megabyte_page_over_several_partitions(api, tx2):
    for pk in ("a", "b"):
        for i in range(4):
            api.ok("PutItem", {"TableName": tx2,
                               "Item": {"pk": S(pk), "sk": N(i), "blob": S("x" * 200_000)}})
    statement = f"SELECT pk, sk FROM {q(tx2)} WHERE pk IN ['a', 'b']"
    first = execute(api, statement)
    assert first.status == 200, first
    # Four items of partition a (800 KB), then partition b until the page has read 1 MB:
    # its second item takes the page past it.
    assert first.json["Items"] == [{"pk": S(p), "sk": N(i)}
                                   for p, i in (("a", 0), ("a", 1), ("a", 2), ("a", 3),
                                                ("b", 0), ("b", 1))]
    rest = execute(api, statement, NextToken=first.json["NextToken"])
    assert rest.status == 200, rest
    assert rest.json["Items"] == [{"pk": S("b"), "sk": N(2)}, {"pk": S("b"), "sk": N(3)}]
    assert "NextToken" not in rest.json


# --------------------------------------------------------------------------- sort-key ranges


def test_sort_key_ranges_overlap_only_where_they_meet(api, tx2, make_table):
    fill(api, tx2, 10)
    resp = execute(api, f"SELECT sk FROM {q(tx2)} WHERE pk = 'a' AND "
                        "((sk > 5 AND sk < 7) OR sk > 8 OR sk BETWEEN 1 AND 2)")
    assert resp.status == 200, resp
    assert resp.json["Items"] == [{"sk": N(1)}, {"sk": N(2)}, {"sk": N(6)}, {"sk": N(9)}]
    assert_validation(execute(api, f"SELECT sk FROM {q(tx2)} WHERE pk = 'a' AND "
                                   "((sk > 5 AND sk < 7) OR sk >= 6)"), OVERLAP)
    resp = execute(api, f"SELECT sk FROM {q(tx2)} WHERE pk = 'a' AND sk > 5 AND sk < 3")
    assert resp.status == 200 and resp.json["Items"] == [], resp
    words = make_table(("pk", "S"), ("sk", "S"))
    for sk in ("apple", "avocado", "banana", "cherry"):
        api.ok("PutItem", {"TableName": words, "Item": {"pk": S("w"), "sk": S(sk)}})
    resp = execute(api, f"SELECT sk FROM {q(words)} WHERE pk = 'w' AND "
                        "(begins_with(sk, 'a') OR begins_with(sk, 'b'))")
    assert resp.status == 200, resp
    assert resp.json["Items"] == [{"sk": S("apple")}, {"sk": S("avocado")}, {"sk": S("banana")}]
    assert_validation(execute(api, f"SELECT sk FROM {q(words)} WHERE pk = 'w' AND "
                                   "(begins_with(sk, 'a') OR sk = 'avocado')"), OVERLAP)
