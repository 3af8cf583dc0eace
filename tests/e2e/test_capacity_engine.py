"""Throttling end to end, on a server with `--capacity enforce --clock manual` (docs/capacity.md):
a provisioned table refusing the read past its RCU, a GSI holding back a base write, batches
returning what was refused, transactions and PartiQL cancelling, and ConsumedCapacity equal
to the metered units."""

import pytest

import kumo_testlib
from kumo_testlib import S, sized, unique_name

if not hasattr(kumo_testlib, "start_capacity_server"):
    pytest.skip("needs the capacity server flags (--capacity, --clock manual, --admin-port)",
                allow_module_level=True)

PTEE = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"
T1 = ("The level of configured provisioned throughput for the table was exceeded. Consider "
      "increasing your provisioning level with the UpdateTable API.")
T2 = ("The level of configured provisioned throughput for one or more global secondary indexes "
      "of the table was exceeded. Consider increasing your provisioning level for the "
      "under-provisioned global secondary indexes with the UpdateTable API")
ACCOUNT = "arn:aws:dynamodb:us-east-1:000000000000:table/"


@pytest.fixture(scope="module")
def srv(kumo_bin, server_workdir):
    server = kumo_testlib.start_capacity_server(kumo_bin, server_workdir,
                                                flags={"burst-seconds": 0})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api(srv):
    return kumo_testlib.Api(srv.port)


def create(api, rcu=5, wcu=5, gsi=None):
    name = unique_name("cap")
    body = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": rcu, "WriteCapacityUnits": wcu},
    }
    if gsi:
        body["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        body["GlobalSecondaryIndexes"] = [{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": gsi[0], "WriteCapacityUnits": gsi[1]},
        }]
    api.ok("CreateTable", body)
    return name


def test_the_sixth_four_kilobyte_read_of_five_rcu_is_refused(api, srv):
    table = create(api, rcu=5, wcu=10)
    api.ok("PutItem", {"TableName": table, "Item": sized({"pk": S("a")}, 4096)})
    get = {"TableName": table, "Key": {"pk": S("a")}, "ConsistentRead": True,
           "ReturnConsumedCapacity": "TOTAL"}
    for _ in range(5):
        assert api.ok("GetItem", get)["ConsumedCapacity"]["CapacityUnits"] == 1.0
    resp = api("GetItem", get)
    assert resp.status == 400
    assert resp.json == {
        "__type": PTEE,
        "message": T1,
        "ThrottlingReasons": [{"reason": "TableReadProvisionedThroughputExceeded",
                               "resource": ACCOUNT + table}],
    }
    srv.admin.advance(1)
    assert api("GetItem", get).status == 200


def test_a_gsi_of_one_wcu_holds_back_the_base_write_and_nothing_is_written(api, srv):
    table = create(api, rcu=5, wcu=100, gsi=(1, 1))
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("a"), "g": S("x")}})
    resp = api("PutItem", {"TableName": table, "Item": {"pk": S("b"), "g": S("y")}})
    assert resp.status == 400
    assert resp.json == {
        "__type": PTEE,
        "message": T2,
        "ThrottlingReasons": [{"reason": "IndexWriteProvisionedThroughputExceeded",
                               "resource": ACCOUNT + table + "/index/by_g"}],
    }
    assert "Item" not in api.ok("GetItem", {"TableName": table, "Key": {"pk": S("b")}})
    # A write touching no GSI entry is never held back by a GSI.
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("c")}})


def test_batch_write_returns_the_refused_requests_as_unprocessed_items(api, srv):
    table = create(api, rcu=5, wcu=10)
    srv.admin.advance(1)
    requests = [{"PutRequest": {"Item": sized({"pk": S(f"k{i:02}")}, 1000)}} for i in range(25)]
    body = {"RequestItems": {table: requests}, "ReturnConsumedCapacity": "TOTAL"}
    out = api.ok("BatchWriteItem", body)
    assert out["UnprocessedItems"] == {table: requests[10:]}
    assert out["ConsumedCapacity"] == [{"TableName": table, "CapacityUnits": 10.0}]
    # Again within the same second: every request is refused, and the call fails.
    resp = api("BatchWriteItem", {"RequestItems": {table: requests[10:]}})
    assert resp.status == 400
    assert resp.json["__type"] == PTEE
    assert resp.json["ThrottlingReasons"][0]["reason"] == "TableWriteProvisionedThroughputExceeded"


def test_a_refused_transaction_action_cancels_it(api, srv):
    table = create(api, rcu=5, wcu=1)
    srv.admin.advance(1)
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("b")}})  # the second's unit
    resp = api("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": table, "Item": {"pk": S("a")}}},
    ]})
    assert resp.status == 400
    assert resp.json["CancellationReasons"] == [
        {"Code": "ProvisionedThroughputExceeded", "Message": T1}]
    assert resp.json["Message"] == ("Transaction cancelled, please refer cancellation reasons "
                                    "for specific reasons [ProvisionedThroughputExceeded]")
    assert "Item" not in api.ok("GetItem", {"TableName": table, "Key": {"pk": S("a")}})


def test_batch_execute_statement_answers_a_refused_statement_with_its_error(api, srv):
    table = create(api, rcu=1, wcu=5)
    api.ok("PutItem", {"TableName": table, "Item": sized({"pk": S("a")}, 4096)})
    srv.admin.advance(1)
    statements = [{"Statement": f'SELECT * FROM "{table}" WHERE pk = \'{pk}\'',
                   "ConsistentRead": True} for pk in ("a", "b")]
    out = api.ok("BatchExecuteStatement", {"Statements": statements})
    assert "Error" not in out["Responses"][0]
    assert out["Responses"][1]["Error"] == {"Code": "ProvisionedThroughputExceeded",
                                            "Message": T1}


def test_consumed_capacity_equals_the_metered_units(api, srv):
    table = create(api, rcu=100, wcu=100)
    srv.admin.advance(1)
    put = api.ok("PutItem", {"TableName": table, "Item": sized({"pk": S("a")}, 2500),
                             "ReturnConsumedCapacity": "TOTAL"})
    get = api.ok("GetItem", {"TableName": table, "Key": {"pk": S("a")},
                             "ReturnConsumedCapacity": "TOTAL"})
    srv.admin.advance(60)
    resources = srv.admin.table(table)["resources"]
    mine = next(r for r in resources if r["index"] is None)
    assert mine["write"]["consumed"] == put["ConsumedCapacity"]["CapacityUnits"] == 3.0
    assert mine["read"]["consumed"] == get["ConsumedCapacity"]["CapacityUnits"] == 0.5
