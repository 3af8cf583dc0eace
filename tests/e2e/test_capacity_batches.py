"""Throttling in batches, transactions and PartiQL as DynamoDB answers it. A batch processes
its requests in order; the refused ones come back in UnprocessedItems/UnprocessedKeys as sent,
with HTTP 200 when one was processed and the exception when none was. A transaction with a
refused action writes nothing and is cancelled with ProvisionedThroughputExceeded or
ThrottlingError and DynamoDB's texts. ExecuteStatement answers the exception of the operation
it becomes, ExecuteTransaction cancels, BatchExecuteStatement reports each refused statement
in its Error."""

import pytest

from capacity_helpers import (
    KB,
    MAX_ITEM,
    PTEE,
    T1,
    T2,
    T4,
    T6,
    THROTTLING,
    Meters,
    arn,
    assert_cancelled,
    assert_throttle,
    capacity_server,
    item,
    key,
)
from kumo_testlib import S


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"burst-seconds": 0}) as cs:
        yield cs



def write_refusal(resp, table):
    assert_throttle(resp, PTEE, "TableWriteProvisionedThroughputExceeded", arn(table), T1)


def read_refusal(resp, table):
    assert_throttle(resp, PTEE, "TableReadProvisionedThroughputExceeded", arn(table), T1)


# --------------------------------------------------------------------------- batches


def puts(items):
    return [{"PutRequest": {"Item": it}} for it in items]


def test_batch_write_applies_what_the_capacity_allows(srv):
    table = srv.provisioned(5, 10)
    items = [item(f"k{i:02}", 1000) for i in range(25)]
    resp = srv.api("BatchWriteItem", {"RequestItems": {table: puts(items)},
                                      "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert resp.json["UnprocessedItems"] == {table: puts(items[10:])}
    assert resp.json["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 10.0}]
    assert [srv.exists(table, key(f"k{i:02}")) for i in (0, 9, 10, 24)] == [
        True, True, False, False]
    # Again in the same second: nothing can be processed.
    again = {"RequestItems": resp.json["UnprocessedItems"]}
    write_refusal(srv.api("BatchWriteItem", again), table)
    srv.advance(1)
    resp = srv.api("BatchWriteItem", again)
    assert resp.status == 200, resp
    assert resp.json["UnprocessedItems"] == {table: puts(items[20:])}
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.consumed("write") == 20.0
    assert meters.throttle_events("write") == 15 + 15 + 5
    assert meters.throttle_events("write", "provisioned_throughput") == 35
    assert meters.throttled_requests("BatchWriteItem") == 1


def test_batch_write_over_two_tables(srv):
    full = srv.provisioned(5, 1)
    roomy = srv.provisioned(5, 100)
    srv.put(full, item("x", 100))
    request = {full: puts([item("a", 100)]), roomy: puts([item("b", 100)])}
    resp = srv.api("BatchWriteItem", {"RequestItems": request})
    assert resp.status == 200, resp
    assert resp.json["UnprocessedItems"] == {full: request[full]}
    assert srv.exists(roomy, key("b")) and not srv.exists(full, key("a"))


def test_batch_get_returns_unprocessed_keys_as_asked(srv):
    table = srv.provisioned(5, 10)
    for i in range(10):
        assert srv.put(table, item(f"k{i}", 1000, name=S(f"n{i}"))).status == 200
    keys = [key(f"k{i}") for i in range(10)]
    ask = {"Keys": keys, "ConsistentRead": True, "ProjectionExpression": "pk, #n",
           "ExpressionAttributeNames": {"#n": "name"}}
    resp = srv.api("BatchGetItem", {"RequestItems": {table: ask},
                                    "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    got = sorted(it["pk"]["S"] for it in resp.json["Responses"][table])
    assert got == [f"k{i}" for i in range(5)]
    assert resp.json["UnprocessedKeys"] == {table: dict(ask, Keys=keys[5:])}
    assert resp.json["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 5.0}]
    read_refusal(srv.api("BatchGetItem", {"RequestItems": resp.json["UnprocessedKeys"]}),
                 table)
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttle_events("read") == 10
    assert meters.throttled_requests("BatchGetItem") == 1
    assert meters.consumed("read") == 5.0


def test_an_on_demand_batch_refused_whole_is_a_throttling_exception(srv):
    table = srv.create(OnDemandThroughput={"MaxWriteRequestUnits": 2})
    items = [item(f"k{i}", 100) for i in range(3)]
    resp = srv.api("BatchWriteItem", {"RequestItems": {table: puts(items)}})
    assert resp.status == 200, resp
    assert resp.json["UnprocessedItems"] == {table: puts(items[2:])}
    resp = srv.api("BatchWriteItem", {"RequestItems": resp.json["UnprocessedItems"]})
    assert_throttle(resp, THROTTLING, "TableWriteMaxOnDemandThroughputExceeded", arn(table), T6)


# --------------------------------------------------------------------------- transactions


def tput(table, it):
    return {"Put": {"TableName": table, "Item": it}}


def test_a_refused_transaction_action_cancels_it(srv):
    small = srv.provisioned(5, 2)  # one transactional 1 KB write a second
    other = srv.provisioned(5, 100)
    srv.api.ok("TransactWriteItems", {"TransactItems": [tput(small, item("a", 100))]})
    resp = srv.api("TransactWriteItems", {"TransactItems": [
        tput(other, item("x", 100)), tput(small, item("b", 100))]})
    assert_cancelled(resp, [("None", None), ("ProvisionedThroughputExceeded", T1)])
    assert not srv.exists(other, key("x")) and not srv.exists(small, key("b"))
    srv.advance(1)
    assert Meters(srv.admin, small).throttled_requests("TransactWriteItems") == 1
    srv.api.ok("TransactWriteItems", {"TransactItems": [
        tput(other, item("x", 100)), tput(small, item("b", 100))]})


def test_an_index_without_capacity_cancels_a_transaction(srv):
    table = srv.create(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 100},
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2}}])
    srv.api.ok("TransactWriteItems", {"TransactItems": [tput(table, item("a", 100, g=S("v")))]})
    resp = srv.api("TransactWriteItems", {"TransactItems": [
        tput(table, item("b", 100)), tput(table, item("c", 100, g=S("v")))]})
    assert_cancelled(resp, [("None", None), ("ProvisionedThroughputExceeded", T2 + ".")])
    assert not srv.exists(table, key("b"))


def test_a_hot_key_cancels_an_on_demand_transaction(srv):
    table, other = srv.create(), srv.create()
    for _ in range(2):  # 800 units each: the key's partition owes 600
        srv.api.ok("TransactWriteItems", {"TransactItems": [tput(table, item("hot", MAX_ITEM))]})
    resp = srv.api("TransactWriteItems", {"TransactItems": [
        tput(other, item("x", KB)),
        {"Update": {"TableName": table, "Key": key("hot"), "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": S("1")}}}]})
    assert_cancelled(resp, [("None", None), ("ThrottlingError", T4 + ".")])
    assert not srv.exists(other, key("x"))


def test_an_on_demand_maximum_cancels_a_transaction(srv):
    table = srv.create(OnDemandThroughput={"MaxWriteRequestUnits": 2})
    srv.api.ok("TransactWriteItems", {"TransactItems": [tput(table, item("a", 100))]})
    resp = srv.api("TransactWriteItems", {"TransactItems": [tput(table, item("b", 100))]})
    assert_cancelled(resp, [("ThrottlingError", T6)])


def test_a_refused_transactional_read_cancels_it(srv):
    small = srv.provisioned(2, 5)  # one transactional read of 4 KB a second
    other = srv.provisioned(5, 5)
    srv.put(small, item("a", 100))
    srv.put(other, item("x", 100))
    gets = [{"Get": {"TableName": other, "Key": key("x")}},
            {"Get": {"TableName": small, "Key": key("a")}}]
    out = srv.api.ok("TransactGetItems", {"TransactItems": gets[1:]})
    assert out["Responses"][0]["Item"]["pk"] == S("a")
    resp = srv.api("TransactGetItems", {"TransactItems": gets})
    assert_cancelled(resp, [("None", None), ("ProvisionedThroughputExceeded", T1)])
    srv.advance(1)
    assert Meters(srv.admin, small).throttled_requests("TransactGetItems") == 1


# --------------------------------------------------------------------------- PartiQL


def statement(text, *params, **extra):
    body = {"Statement": text, **extra}
    if params:
        body["Parameters"] = list(params)
    return body


def test_execute_statement_answers_the_operation_s_exception(srv):
    table = srv.provisioned(1, 1)
    srv.api.ok("ExecuteStatement", statement(f'INSERT INTO "{table}" VALUE {{\'pk\': ?}}',
                                             S("a")))
    write_refusal(srv.api("ExecuteStatement", statement(
        f'INSERT INTO "{table}" VALUE {{\'pk\': ?}}', S("b"))), table)
    write_refusal(srv.api("ExecuteStatement", statement(
        f'UPDATE "{table}" SET v = 1 WHERE pk = ?', S("a"))), table)
    write_refusal(srv.api("ExecuteStatement", statement(
        f'DELETE FROM "{table}" WHERE pk = ?', S("a"))), table)
    select = statement(f'SELECT * FROM "{table}" WHERE pk = ?', S("a"), ConsistentRead=True)
    assert srv.api.ok("ExecuteStatement", select)["Items"] == [{"pk": S("a")}]
    read_refusal(srv.api("ExecuteStatement", select), table)
    srv.advance(1)
    meters = Meters(srv.admin, table)
    assert meters.throttled_requests("ExecuteStatement") == 4
    assert meters.throttle_events("write") == 3 and meters.throttle_events("read") == 1
    assert not srv.exists(table, key("b"))


def test_execute_transaction_cancels(srv):
    small = srv.provisioned(5, 2)
    other = srv.provisioned(5, 100)
    srv.api.ok("ExecuteTransaction", {"TransactStatements": [
        statement(f'INSERT INTO "{small}" VALUE {{\'pk\': ?}}', S("a"))]})
    resp = srv.api("ExecuteTransaction", {"TransactStatements": [
        statement(f'INSERT INTO "{other}" VALUE {{\'pk\': ?}}', S("x")),
        statement(f'INSERT INTO "{small}" VALUE {{\'pk\': ?}}', S("b"))]})
    assert_cancelled(resp, [("None", None), ("ProvisionedThroughputExceeded", T1)])
    assert not srv.exists(other, key("x"))


def batch_error(member, code, message):
    assert member.get("Error") == {"Code": code, "Message": message}, member
    assert set(member) <= {"Error", "TableName"}, member


def test_batch_execute_statement_reports_refused_statements(srv):
    table = srv.provisioned(5, 2)
    resp = srv.api("BatchExecuteStatement", {"Statements": [
        statement(f'INSERT INTO "{table}" VALUE {{\'pk\': ?}}', S(f"k{i}")) for i in range(3)]})
    assert resp.status == 200, resp
    out = resp.json["Responses"]
    assert [("Error" in m) for m in out] == [False, False, True], out
    batch_error(out[2], "ProvisionedThroughputExceeded", T1)
    assert not srv.exists(table, key("k2"))
    # Every statement refused: still HTTP 200.
    resp = srv.api("BatchExecuteStatement", {"Statements": [
        statement(f'INSERT INTO "{table}" VALUE {{\'pk\': ?}}', S(f"m{i}")) for i in range(2)]})
    assert resp.status == 200, resp
    for member in resp.json["Responses"]:
        batch_error(member, "ProvisionedThroughputExceeded", T1)
