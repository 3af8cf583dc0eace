"""Item collections on tables with local secondary indexes (the items sharing a partition key
plus their LSI entries, capped in size): a
write that would grow a full collection fails with ItemCollectionSizeLimitExceededException
and writes nothing. The server is started with a small limit so the rule shows quickly."""
import botocore.exceptions
import pytest

from kumo_testlib import make_client

LIMIT = 4000  # bytes: a few items of ~1 KB fill a collection


def _lsi_table(client, name):
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "alt", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "byAlt",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "alt", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}])


@pytest.fixture
def small_collections(start_server):
    srv = start_server(extra_args=("--in-memory", "--item-collection-limit", str(LIMIT)))
    return make_client(srv.endpoint)


def _put(client, table, pk, sk, size=1000):
    client.put_item(TableName=table, Item={"pk": {"S": pk}, "sk": {"S": sk},
                                           "alt": {"S": sk}, "pad": {"S": "x" * size}})


def test_full_collection_rejects_growth_and_writes_nothing(small_collections):
    client = small_collections
    _lsi_table(client, "collections")
    written = 0
    with pytest.raises(botocore.exceptions.ClientError) as excinfo:
        for i in range(10):
            _put(client, "collections", "p", "s%02d" % i)
            written += 1
    err = excinfo.value.response["Error"]
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert err["Code"] == "ItemCollectionSizeLimitExceededException"
    assert err["Message"] == "Collection size exceeded."
    assert 1 <= written < 10
    # The refused item is absent; the collection holds exactly what was acknowledged.
    items = client.query(TableName="collections", KeyConditionExpression="pk = :p",
                         ExpressionAttributeValues={":p": {"S": "p"}})["Items"]
    assert [i["sk"]["S"] for i in items] == ["s%02d" % i for i in range(written)]
    # Another partition is its own collection.
    _put(client, "collections", "q", "s00")
    # Shrinking is always allowed, and makes room again.
    client.delete_item(TableName="collections", Key={"pk": {"S": "p"}, "sk": {"S": "s00"}})
    _put(client, "collections", "p", "s00")


def test_tables_without_lsis_have_no_collection_limit(small_collections):
    client = small_collections
    client.create_table(
        TableName="plain", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}])
    for i in range(10):
        client.put_item(TableName="plain", Item={"pk": {"S": "p"}, "sk": {"S": "s%02d" % i},
                                                 "pad": {"S": "x" * 1000}})
    assert client.query(TableName="plain", KeyConditionExpression="pk = :p",
                        ExpressionAttributeValues={":p": {"S": "p"}})["Count"] == 10
