"""Optimistic locking with a version attribute, and concurrent conditional updates.

The pattern DynamoDB documents (and ORMs such as the DynamoDBMapper, ElectroDB and
dynamodb-toolbox implement): create the item only if absent, update it only if its version
is the one read, and reject a stale write. Many writers racing on one item must never lose
an update: each successful conditional update is applied exactly once.
"""
import threading

import botocore.exceptions
import pytest


def _conditional_failed(excinfo):
    err = excinfo.value.response["Error"]
    assert err["Code"] == "ConditionalCheckFailedException"
    assert err["Message"] == "The conditional request failed"


def test_create_if_absent_then_stale_create_rejected(ddb, make_table):
    table = make_table()
    ddb.put_item(TableName=table, Item={"pk": {"S": "doc"}, "version": {"N": "1"}},
                 ConditionExpression="attribute_not_exists(pk)")
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        ddb.put_item(TableName=table, Item={"pk": {"S": "doc"}, "version": {"N": "1"},
                                            "body": {"S": "second"}},
                     ConditionExpression="attribute_not_exists(pk)")
    _conditional_failed(excinfo)
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "doc"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "doc"}, "version": {"N": "1"}}


def test_update_if_version_matches_and_stale_write_rejected(ddb, make_table):
    table = make_table()
    ddb.put_item(TableName=table, Item={"pk": {"S": "doc"}, "version": {"N": "1"},
                                        "body": {"S": "v1"}})
    # Two writers both read version 1.
    first = ddb.update_item(
        TableName=table, Key={"pk": {"S": "doc"}},
        UpdateExpression="SET body = :body, version = version + :one",
        ConditionExpression="version = :read",
        ExpressionAttributeValues={":body": {"S": "first"}, ":one": {"N": "1"},
                                   ":read": {"N": "1"}},
        ReturnValues="ALL_NEW")
    assert first["Attributes"] == {"pk": {"S": "doc"}, "version": {"N": "2"},
                                   "body": {"S": "first"}}
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        ddb.update_item(
            TableName=table, Key={"pk": {"S": "doc"}},
            UpdateExpression="SET body = :body, version = version + :one",
            ConditionExpression="version = :read",
            ExpressionAttributeValues={":body": {"S": "stale"}, ":one": {"N": "1"},
                                       ":read": {"N": "1"}})
    _conditional_failed(excinfo)
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "doc"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "doc"}, "version": {"N": "2"}, "body": {"S": "first"}}


def test_delete_if_version_matches(ddb, make_table):
    table = make_table()
    ddb.put_item(TableName=table, Item={"pk": {"S": "doc"}, "version": {"N": "3"}})
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        ddb.delete_item(TableName=table, Key={"pk": {"S": "doc"}},
                        ConditionExpression="version = :v",
                        ExpressionAttributeValues={":v": {"N": "2"}})
    _conditional_failed(excinfo)
    ddb.delete_item(TableName=table, Key={"pk": {"S": "doc"}},
                    ConditionExpression="version = :v", ExpressionAttributeValues={":v": {"N": "3"}})
    assert "Item" not in ddb.get_item(TableName=table, Key={"pk": {"S": "doc"}},
                                      ConsistentRead=True)


def test_concurrent_versioned_updates_lose_nothing(client_factory, ddb, make_table):
    """Eight threads each apply 40 increments with read-version-then-conditional-update
    retries. Every acknowledged update must be in the final count, and the version must
    equal the number of acknowledged updates."""
    table = make_table()
    ddb.put_item(TableName=table, Item={"pk": {"S": "counter"}, "version": {"N": "0"},
                                        "count": {"N": "0"}})
    threads, per_thread = 8, 40
    acknowledged = [0] * threads
    conflicts = [0] * threads
    errors = []

    def worker(index):
        client = client_factory()
        try:
            for _ in range(per_thread):
                while True:
                    item = client.get_item(TableName=table, Key={"pk": {"S": "counter"}},
                                           ConsistentRead=True)["Item"]
                    version = item["version"]["N"]
                    try:
                        client.update_item(
                            TableName=table, Key={"pk": {"S": "counter"}},
                            UpdateExpression="SET #c = #c + :one, version = version + :one",
                            ConditionExpression="version = :read",
                            ExpressionAttributeNames={"#c": "count"},
                            ExpressionAttributeValues={":one": {"N": "1"}, ":read": {"N": version}})
                        acknowledged[index] += 1
                        break
                    except botocore.exceptions.ClientError as e:
                        if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                            raise
                        conflicts[index] += 1
        except Exception as e:  # surfaced below
            errors.append(e)

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    assert not errors, errors
    assert sum(acknowledged) == threads * per_thread
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "counter"}}, ConsistentRead=True)["Item"]
    assert item["count"] == {"N": str(threads * per_thread)}
    assert item["version"] == {"N": str(threads * per_thread)}


def test_concurrent_unconditional_add_loses_nothing(client_factory, ddb, make_table):
    """ADD is a read-modify-write done under the item's lock: concurrent ADDs all count."""
    table = make_table()
    threads, per_thread = 8, 50

    def worker():
        client = client_factory()
        for _ in range(per_thread):
            client.update_item(TableName=table, Key={"pk": {"S": "hits"}},
                               UpdateExpression="ADD hits :one",
                               ExpressionAttributeValues={":one": {"N": "1"}})

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    item = ddb.get_item(TableName=table, Key={"pk": {"S": "hits"}}, ConsistentRead=True)["Item"]
    assert item["hits"] == {"N": str(threads * per_thread)}
