"""PartiQL writes are ordinary item writes: INSERT, UPDATE and DELETE through ExecuteStatement
write the same stream records as PutItem, UpdateItem and DeleteItem (INSERT, MODIFY,
REMOVE; none for a failed statement, a DELETE of a missing key or an UPDATE that changes
nothing; no userIdentity), keep secondary indexes in step, and move the Time to Live
schedule like any write: an expired item written by PartiQL is reaped, one whose TTL a
PartiQL UPDATE moved or removed is not, and an expired item not reaped yet is still read,
updated and deleted by PartiQL.

Stream tables live on the shared server (stream_helpers.py); the TTL tests use the reaper
server of ttl_helpers.py (`--ttl-interval 0.2`) or a server of their own whose reaper does
not run during the test."""

import time

import pytest

from kumo_testlib import (
    NS_DYNAMODB,
    N,
    S,
    assert_error,
    assert_validation,
    make_client,
    normalize_item,
    scan_all,
    sized,
)
from stream_helpers import (  # noqa: F401 (streams: fixture)
    VIEW_TYPES,
    change,
    check_records,
    read_stream,
    stream_table,
    streams,
)
from ttl_helpers import (  # noqa: F401 (fixtures)
    DEADLINE,
    _ttl_server_guard,
    create_table,
    due_soon,
    present,
    stream_records,
    tapi,
    tddb,
    ttl_server,
    ttl_table,
    wait_until,
)

DUPLICATE = NS_DYNAMODB + "DuplicateItemException"
CONDITIONAL = NS_DYNAMODB + "ConditionalCheckFailedException"
SERVICE_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def es(api, statement, params=None, **members):
    body = {"Statement": statement}
    if params is not None:
        body["Parameters"] = params
    body.update(members)
    return api("ExecuteStatement", body)


def run(api, statement, params=None, **members):
    resp = es(api, statement, params, **members)
    assert resp.status == 200, f"{statement!r} failed: {resp!r}"
    return resp.json


def conditional(resp):
    assert_error(resp, 400, CONDITIONAL, "The conditional request failed")


# --------------------------------------------------------------------------- stream records


@pytest.mark.parametrize("view", VIEW_TYPES)
def test_insert_update_delete_records(api, make_table, streams, view):
    t, arn = stream_table(make_table, api, view, range_key=("sk", "N"))
    ka, kb = {"pk": S("a"), "sk": N(1)}, {"pk": S("b"), "sk": N(2)}
    v1 = dict(ka, v=S("x"), l={"L": [N(1)]})
    v2 = dict(ka, v=S("y"), n=N(1))
    v3 = dict(ka, v=S("y"), n=N(2))
    b1 = dict(kb, s={"SS": ["p"]})
    before = time.time()
    run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': 1, 'v': 'x', 'l': [1]}}")
    run(api, f"UPDATE \"{t}\" SET v = 'y', n = 1 REMOVE l WHERE pk = 'a' AND sk = 1")
    run(api, f"UPDATE \"{t}\" SET n = n + 1 WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *")
    run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?, 's': ?}}",
        [S("b"), N("2.0"), {"SS": ["p"]}])
    run(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1")
    run(api, f"FROM \"{t}\" WHERE pk = 'b' AND sk = 2 SET s = set_add(s, <<'q'>>)")
    b2 = dict(kb, s={"SS": ["p", "q"]})
    run(api, f"DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 2 AND contains(s, 'q') "
             "RETURNING ALL OLD *")
    after = time.time()
    check_records(read_stream(streams, arn), [
        change("INSERT", ka, new=v1),
        change("MODIFY", ka, old=v1, new=v2),
        change("MODIFY", ka, old=v2, new=v3),
        change("INSERT", kb, new=b1),
        change("REMOVE", ka, old=v3),
        change("MODIFY", kb, old=b1, new=b2),
        change("REMOVE", kb, old=b2),
    ], view, before, after)


def test_failed_and_unchanged_statements_write_no_record(api, make_table, streams):
    t, arn = stream_table(make_table, api, "NEW_AND_OLD_IMAGES")
    key = {"pk": S("a")}
    item = dict(key, v=N(1), ss={"SS": ["x"]})
    run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'v': 1, 'ss': <<'x'>>}}")

    # Failures.
    assert_error(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a'}}"), 400, DUPLICATE,
                 "Duplicate primary key exists in table")
    conditional(es(api, f"UPDATE \"{t}\" SET v = 2 WHERE pk = 'missing'"))
    conditional(es(api, f"UPDATE \"{t}\" SET v = 2 WHERE pk = 'a' AND v = 5"))
    conditional(es(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND v = 5"))
    assert_validation(es(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' RETURNING ALL NEW *"),
                      "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * "
                      "is allowed in DELETE statements.")
    big = sized({"pk": S("big")}, 409601)
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'pad': ?}}",
                         [big["pk"], big["pad"]]),
                      "Item size has exceeded the maximum allowed size")
    assert_validation(es(api, f"UPDATE \"{t}\" SET l = list_append(l, [1]) WHERE pk = 'a'"),
                      "The provided expression refers to an attribute that does not exist in the "
                      "item")
    assert_validation(es(api, f"UPDATE \"{t}\" SET pk = 'z' WHERE pk = 'a'"),
                      "One or more parameter values were invalid: Cannot update attribute pk. "
                      "This attribute is part of the key")
    # A DELETE of a missing key succeeds and writes nothing.
    assert run(api, f"DELETE FROM \"{t}\" WHERE pk = 'missing'") == {"Items": []}
    assert run(api, f"DELETE FROM \"{t}\" WHERE pk = 'missing' RETURNING ALL OLD *") == \
        {"Items": []}
    # Updates that leave the item as it was.
    for stmt in (f"UPDATE \"{t}\" SET ss = set_add(ss, <<'x'>>) WHERE pk = 'a'",
                 f"UPDATE \"{t}\" SET ss = set_delete(ss, <<'q'>>) WHERE pk = 'a'",
                 f"UPDATE \"{t}\" SET v = 1 WHERE pk = 'a'",
                 f"UPDATE \"{t}\" SET v = v + 0 WHERE pk = 'a'",
                 f"UPDATE \"{t}\" REMOVE absent WHERE pk = 'a'",
                 f"UPDATE \"{t}\" SET gone = set_delete(gone, <<1>>) WHERE pk = 'a'"):
        assert run(api, stmt) == {"Items": []}
    # One real change closes the sequence.
    run(api, f"UPDATE \"{t}\" SET v = 2 WHERE pk = 'a'")
    check_records(read_stream(streams, arn), [
        change("INSERT", key, new=item),
        change("MODIFY", key, old=item, new=dict(item, v=N(2))),
    ], "NEW_AND_OLD_IMAGES")


# --------------------------------------------------------------------------- indexes


@pytest.fixture
def gsi_table(make_table):
    """pk S / sk S; GSI byG (gk, ALL); GSI byGS (gk | gs N, KEYS_ONLY); LSI byL (pk | lk, ALL)."""
    return make_table(
        ("pk", "S"), ("sk", "S"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "gk", "AttributeType": "S"},
                              {"AttributeName": "gs", "AttributeType": "N"},
                              {"AttributeName": "lk", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "byG", "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "byGS", "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"},
                                                {"AttributeName": "gs", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[
            {"IndexName": "byL", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                               {"AttributeName": "lk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}}])


def _query_gsi(api, t, index, gk):
    return api.ok("Query", {"TableName": t, "IndexName": index,
                            "KeyConditionExpression": "gk = :g",
                            "ExpressionAttributeValues": {":g": S(gk)}})["Items"]


def _entries(api, t):
    """Every index's entries, normalized: {index: [entry, ...]} sorted by table key."""
    out = {}
    for index in ("byG", "byGS", "byL"):
        items = [normalize_item(it) for it in scan_all(api, t, index)]
        out[index] = sorted(items, key=lambda it: (it["pk"], it["sk"]))
    return out


def _expect(**indexes):
    out = {"byG": [], "byGS": [], "byL": []}
    for index, items in indexes.items():
        out[index] = sorted((normalize_item(it) for it in items),
                            key=lambda it: (it["pk"], it["sk"]))
    return out


def test_indexes_follow_partiql_writes(api, gsi_table):
    t = gsi_table
    key = {"pk": S("a"), "sk": S("1")}

    run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': '1', 'gk': 'x', 'v': 1}}")
    item = dict(key, gk=S("x"), v=N(1))
    assert _entries(api, t) == _expect(byG=[item])
    assert _query_gsi(api, t, "byG", "x") == [item]

    run(api, f"UPDATE \"{t}\" SET gs = 5, lk = 'l1' WHERE pk = 'a' AND sk = '1'")
    item = dict(item, gs=N(5), lk=S("l1"))
    keys_only = dict(key, gk=S("x"), gs=N(5))
    assert _entries(api, t) == _expect(byG=[item], byGS=[keys_only], byL=[item])

    run(api, f"UPDATE \"{t}\" SET gk = 'y', v = v + 1 WHERE pk = 'a' AND sk = '1'")
    item = dict(item, gk=S("y"), v=N(2))
    keys_only = dict(keys_only, gk=S("y"))
    assert _entries(api, t) == _expect(byG=[item], byGS=[keys_only], byL=[item])
    assert _query_gsi(api, t, "byG", "x") == [] and _query_gsi(api, t, "byGS", "x") == []
    assert [normalize_item(i) for i in _query_gsi(api, t, "byG", "y")] == [normalize_item(item)]
    lsi = api.ok("Query", {"TableName": t, "IndexName": "byL", "ConsistentRead": True,
                           "KeyConditionExpression": "pk = :p AND lk = :l",
                           "ExpressionAttributeValues": {":p": S("a"), ":l": S("l1")}})["Items"]
    assert [normalize_item(i) for i in lsi] == [normalize_item(item)]

    # Failed statements leave the indexes as they were.
    conditional(es(api, f"UPDATE \"{t}\" SET gk = 'z' WHERE pk = 'a' AND sk = '1' AND v = 9"))
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'b', 'sk': '1', 'gk': 1}}"),
                      "One or more parameter values were invalid: Type mismatch for Index Key gk "
                      "Expected: S Actual: N IndexName: byG")
    assert _entries(api, t) == _expect(byG=[item], byGS=[keys_only], byL=[item])

    # REMOVE of the GSI key takes the item out of both GSIs (sparse), not out of the LSI.
    run(api, f"UPDATE \"{t}\" REMOVE gk WHERE pk = 'a' AND sk = '1'")
    item = {k: v for k, v in item.items() if k != "gk"}
    assert _entries(api, t) == _expect(byL=[item])

    # A second item through parameters, then both deleted.
    run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?, 'gk': ?, 'gs': ?}}",
        [S("b"), S("2"), S("y"), N("1e1")])
    other = {"pk": S("b"), "sk": S("2"), "gk": S("y"), "gs": N(10)}
    assert _entries(api, t) == _expect(byG=[other], byGS=[other], byL=[item])
    run(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = '1'")
    run(api, f"DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = '2' RETURNING ALL OLD *")
    assert _entries(api, t) == _expect()


# --------------------------------------------------------------------------- Time to Live


def _streams_client(srv):
    return make_client(srv.endpoint, service="dynamodbstreams")


def test_ttl_reaps_items_written_by_partiql(tapi, ttl_table, ttl_server):
    t = ttl_table(StreamSpecification={"StreamEnabled": True,
                                       "StreamViewType": "NEW_AND_OLD_IMAGES"})
    now = int(time.time())
    past, future = N(now - 10), N(now + 3600)
    run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': 'gone', 'exp': ?}}", [past])
    run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': 'keep', 'exp': ?}}", [future])
    run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': 'text', 'exp': 'not a number'}}")
    run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': 'moved', 'exp': ?}}", [future])
    run(tapi, f"UPDATE \"{t}\" SET exp = ? WHERE pk = 'moved'", [past])
    run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': 'literal', 'exp': {now - 10}}}")
    wait_until(lambda: present(tapi, t) == {"keep", "text"}, DEADLINE,
               what="the expired items deleted")

    arn = tapi.ok("DescribeTable", {"TableName": t})["Table"]["LatestStreamArn"]
    records = stream_records(_streams_client(ttl_server), arn)
    events = sorted((r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records)
    assert events == sorted([("INSERT", "gone"), ("INSERT", "keep"), ("INSERT", "text"),
                             ("INSERT", "moved"), ("MODIFY", "moved"), ("INSERT", "literal"),
                             ("REMOVE", "gone"), ("REMOVE", "moved"), ("REMOVE", "literal")])
    for r in records:
        if r["eventName"] == "REMOVE":
            assert r.get("userIdentity") == SERVICE_IDENTITY, r
        else:
            assert "userIdentity" not in r, r


def test_partiql_update_moves_the_ttl_schedule(tapi, ttl_table):
    t = ttl_table()
    due = N(f"{due_soon(1.0):.3f}")
    for pk in ("control", "moved", "removed", "retyped", "deleted"):
        run(tapi, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'exp': ?}}", [S(pk), due])
    run(tapi, f"UPDATE \"{t}\" SET exp = ? WHERE pk = 'moved'", [N(int(time.time()) + 3600)])
    run(tapi, f"UPDATE \"{t}\" REMOVE exp WHERE pk = 'removed'")
    run(tapi, f"UPDATE \"{t}\" SET exp = 'later' WHERE pk = 'retyped'")
    run(tapi, f"DELETE FROM \"{t}\" WHERE pk = 'deleted'")
    # The items share one due time: the pass that reaps the control would reap the others.
    wait_until(lambda: "control" not in present(tapi, t), DEADLINE,
               what="the control item reaped")
    assert present(tapi, t) == {"moved", "removed", "retyped"}


def test_expired_items_are_served_until_reaped(start_server):
    """A server whose reaper does not run during the test: expired items stay, and PartiQL
    reads, conditions, updates and deletes them like any item."""
    srv = start_server(extra_args=["--ttl-interval", "3600"])
    api, client = srv.api(), srv.client()
    t = create_table(api, client, ttl="exp")
    now = int(time.time())
    for pk in ("e1", "e2", "e3"):
        api.ok("PutItem", {"TableName": t, "Item": {"pk": S(pk), "exp": N(now - 100)}})

    assert run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'e1'") == \
        {"Items": [{"pk": S("e1"), "exp": N(now - 100)}]}
    assert_error(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'e1'}}"), 400, DUPLICATE,
                 "Duplicate primary key exists in table")
    got = run(api, f"UPDATE \"{t}\" SET v = 1 WHERE pk = 'e1' AND exp < ? RETURNING ALL NEW *",
              [N(now)])
    assert got == {"Items": [{"pk": S("e1"), "exp": N(now - 100), "v": N(1)}]}
    run(api, f"UPDATE \"{t}\" SET exp = ? WHERE pk = 'e2'", [N(now + 3600)])
    got = run(api, f"DELETE FROM \"{t}\" WHERE pk = 'e3' AND attribute_exists(exp) "
                   "RETURNING ALL OLD *")
    assert got == {"Items": [{"pk": S("e3"), "exp": N(now - 100)}]}
    assert present(api, t) == {"e1", "e2"}
