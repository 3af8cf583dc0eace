"""Tables, tags, backups and streams answering as DynamoDB does in the corners: the shape of
DeleteTable's description, UpdateTable requests that ask for nothing or redefine an
attribute, DescribeContinuousBackups, tag lengths counted in characters, and the Streams
API's validation of iterator types, stream ARNs, shard ids and shard filters."""

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_DYNAMODB,
    S,
    assert_error,
    assert_validation,
    create_table_args,
    table_arn,
    unique_name,
    wait_table_active,
)
from stream_helpers import (  # noqa: F401
    all_shards,
    change,
    check_new_shards,
    check_records,
    describe_stream,
    pk_item,
    read_from,
    stream_table,
    streams,
    write_n,
)

INVALID = "One or more parameter values were invalid: "
NOTHING_TO_DO = ("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                 "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
                 "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
                 "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass "
                 "is required")
REDEFINED = (INVALID + "Attributes cannot be redefined. Please check that your attribute has "
                       "the same type as previously defined")
TABLE_NOT_FOUND = NS_DYNAMODB + "TableNotFoundException"
SHARD = "shardId-00000000000000000000-00000000"


def coral(path, value, constraint):
    shown = "null" if value is None else f"'{value}'"
    return COR_PREFIX + f"Value {shown} at '{path}' failed to satisfy constraint: {constraint}"


# --------------------------------------------------------------------------- DeleteTable


SCHEMA_MEMBERS = {"CreationDateTime", "KeySchema", "AttributeDefinitions",
                  "LocalSecondaryIndexes", "GlobalSecondaryIndexes"}


def test_delete_table_description_leaves_out_the_schema(api, make_table):
    name = make_table(
        range_key=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        LocalSecondaryIndexes=[{"IndexName": "lsi", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}]}])
    before = api.ok("DescribeTable", {"TableName": name})["Table"]
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("a"), "sk": S("b")}})
    desc = api.ok("DeleteTable", {"TableName": name})["TableDescription"]
    assert desc["TableName"] == name
    assert desc["TableStatus"] == "DELETING"
    assert desc["TableId"] == before["TableId"]
    assert desc["TableArn"] == table_arn(name)
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert desc["ProvisionedThroughput"] == {"NumberOfDecreasesToday": 0,
                                             "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    assert isinstance(desc["ItemCount"], int) and isinstance(desc["TableSizeBytes"], int)
    assert not SCHEMA_MEMBERS & set(desc), desc


def test_delete_table_description_of_a_provisioned_table(api, make_table):
    name = make_table(BillingMode="PROVISIONED",
                      ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4})
    desc = api.ok("DeleteTable", {"TableName": name})["TableDescription"]
    assert desc["TableStatus"] == "DELETING"
    assert desc["ProvisionedThroughput"] == {"NumberOfDecreasesToday": 0,
                                             "ReadCapacityUnits": 3, "WriteCapacityUnits": 4}
    assert not SCHEMA_MEMBERS & set(desc), desc


# --------------------------------------------------------------------------- UpdateTable


def test_update_table_with_empty_index_updates_changes_nothing(api, make_table):
    name = make_table()
    resp = api("UpdateTable", {"TableName": name, "GlobalSecondaryIndexUpdates": []})
    assert_validation(resp, NOTHING_TO_DO)


def gsi_create(index, attribute):
    return [{"Create": {"IndexName": index, "Projection": {"ProjectionType": "ALL"},
                        "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}]}}]


@pytest.mark.parametrize("attribute", ["pk", "g"])
def test_update_table_cannot_redefine_an_attribute(api, make_table, attribute):
    # pk is the table's key (S); g is the key of an existing index (S).
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "old", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}])
    resp = api("UpdateTable", {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": attribute, "AttributeType": "N"}],
        "GlobalSecondaryIndexUpdates": gsi_create("new", attribute)})
    assert_validation(resp, message_prefix=REDEFINED)
    table = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["old"]
    assert {"AttributeName": attribute, "AttributeType": "S"} in table["AttributeDefinitions"]


def test_attributes_of_a_deleted_index_can_be_defined_anew(api, make_table):
    name = make_table(
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "old", "Projection": {"ProjectionType": "ALL"},
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}])
    api.ok("UpdateTable", {"TableName": name,
                           "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "old"}}]})
    table = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    api.ok("UpdateTable", {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "N"}],
        "GlobalSecondaryIndexUpdates": gsi_create("new", "g")})
    table = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"},
                                             {"AttributeName": "g", "AttributeType": "N"}]


@pytest.mark.parametrize("updates", [[{}], gsi_create("x", "undefined")])
def test_update_table_long_attribute_name_comes_before_index_errors(api, make_table, updates):
    name = make_table()
    long_name = "a" * 256
    resp = api("UpdateTable", {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": long_name, "AttributeType": "S"}],
        "GlobalSecondaryIndexUpdates": updates})
    assert_validation(resp, coral("attributeDefinitions.1.member.attributeName", long_name,
                                  "Member must have length less than or equal to 255"))


# --------------------------------------------------------------------------- backups


def test_describe_continuous_backups(api, ddb, make_table):
    name = make_table()
    # A settled table: continuous backups ENABLED, point-in-time recovery DISABLED.
    expected = {"ContinuousBackupsDescription": {
        "ContinuousBackupsStatus": "ENABLED",
        "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}}
    assert api.ok("DescribeContinuousBackups", {"TableName": name}) == expected
    assert api.ok("DescribeContinuousBackups", {"TableName": table_arn(name)}) == expected
    out = ddb.describe_continuous_backups(TableName=name)
    assert out["ContinuousBackupsDescription"] == expected["ContinuousBackupsDescription"]


def test_describe_continuous_backups_of_a_missing_table(api):
    name = unique_name()
    resp = api("DescribeContinuousBackups", {"TableName": name})
    assert_error(resp, 400, TABLE_NOT_FOUND, f"Table not found: {name}")


def test_describe_continuous_backups_needs_a_table_name(api):
    resp = api("DescribeContinuousBackups", {})
    assert_validation(resp)
    assert "tablename" in resp.message.lower(), resp


# --------------------------------------------------------------------------- tags


ALEPH = "\u05d0"  # two bytes in UTF-8


def test_tag_lengths_count_characters_not_bytes(api, ddb, make_table):
    key, value = ALEPH * 128, ALEPH * 256
    name = make_table(Tags=[{"Key": key, "Value": value}])
    arn = table_arn(name)
    assert api.ok("ListTagsOfResource", {"ResourceArn": arn})["Tags"] == [
        {"Key": key, "Value": value}]
    other = "b" + ALEPH * 127
    api.ok("TagResource", {"ResourceArn": arn, "Tags": [{"Key": other, "Value": value}]})
    assert len(ddb.list_tags_of_resource(ResourceArn=arn)["Tags"]) == 2
    api.ok("UntagResource", {"ResourceArn": arn, "TagKeys": [key, other]})
    assert api.ok("ListTagsOfResource", {"ResourceArn": arn})["Tags"] == []


@pytest.mark.parametrize("tag,path,limit", [
    ({"Key": ALEPH * 129, "Value": "v"}, "tags.1.member.key", 128),
    ({"Key": "k", "Value": ALEPH * 257}, "tags.1.member.value", 256),
])
def test_tag_lengths_over_the_limit_in_characters(api, make_table, tag, path, limit):
    name = make_table()
    resp = api("TagResource", {"ResourceArn": table_arn(name), "Tags": [tag]})
    value = tag["Key"] if path.endswith("key") else tag["Value"]
    assert_validation(resp, coral(path, value,
                                  f"Member must have length less than or equal to {limit}"))
    resp = api("CreateTable", create_table_args(unique_name(), Tags=[tag]))
    assert_validation(resp, coral(path, value,
                                  f"Member must have length less than or equal to {limit}"))


# --------------------------------------------------------------------------- streams


@pytest.fixture
def empty_stream(api, streams, make_table):
    """A stream without records: (table, arn, its first shard)."""
    t, arn = stream_table(make_table, api, "KEYS_ONLY")
    return t, arn, check_new_shards(all_shards(streams, arn))[0]


def iterator_request(arn, shard, kind, sequence=None):
    body = {"StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": kind}
    if sequence is not None:
        body["SequenceNumber"] = sequence
    return body


def test_starting_sequence_number_of_an_empty_shard(api, streams, empty_stream):
    # Every shard (one per partition) takes its StartingSequenceNumber before it has a
    # record; the iterators at it then read the records written after.
    t, arn, _ = empty_stream
    shards = all_shards(streams, arn)
    ats = []
    for shard in shards:
        start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
        ats.append(streams.ok("GetShardIterator", iterator_request(
            arn, shard, "AT_SEQUENCE_NUMBER", start))["ShardIterator"])
        streams.ok("GetShardIterator",
                   iterator_request(arn, shard, "AFTER_SEQUENCE_NUMBER", start))
    write_n(api, t, 2)
    records = read_from(streams, ats)
    check_records(records, [change("INSERT", pk_item(0)), change("INSERT", pk_item(1))],
                  "KEYS_ONLY")
    for shard, own in zip(shards, records.shards):
        start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
        assert all(int(r["dynamodb"]["SequenceNumber"]) >= int(start) for r in own), shard


@pytest.mark.parametrize("kind", ["TRIM_HORIZON", "LATEST"])
def test_trim_horizon_and_latest_take_no_sequence_number(api, streams, empty_stream, kind):
    t, arn, shard = empty_stream
    write_n(api, t, 1)
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    resp = streams("GetShardIterator", iterator_request(arn, shard, kind, start))
    assert_validation(resp, f"A SequenceNumber is not allowed for ShardIteratorType {kind}")


@pytest.mark.parametrize("not_an_arn", ["not-an-arn-" * 4,
                                        "arn:aws:dynamodb-us-east-1-000000000000-table-x-stream"])
def test_stream_arn_that_is_no_arn(streams, empty_stream, not_an_arn):
    _, _, shard = empty_stream
    for op, body in [
        ("DescribeStream", {"StreamArn": not_an_arn}),
        ("GetShardIterator", iterator_request(not_an_arn, shard, "TRIM_HORIZON")),
        ("ListStreams", {"ExclusiveStartStreamArn": not_an_arn}),
    ]:
        assert_validation(streams(op, body), "Invalid StreamArn")


def test_describe_stream_after_an_unknown_shard(streams, empty_stream):
    _, arn, _ = empty_stream
    full = describe_stream(streams, arn)
    out = streams.ok("DescribeStream", {"StreamArn": arn, "ExclusiveStartShardId": SHARD})
    assert out["StreamDescription"] == dict(full, Shards=[])


@pytest.mark.parametrize("shard_filter,path", [
    ({"ShardId": SHARD}, "shardFilter.type"),
    ({"Type": "CHILD_SHARDS"}, "shardFilter.shardId"),
])
def test_shard_filter_needs_type_and_shard_id(streams, empty_stream, shard_filter, path):
    _, arn, _ = empty_stream
    resp = streams("DescribeStream", {"StreamArn": arn, "ShardFilter": shard_filter})
    assert_validation(resp, coral(path, None, "Member must not be null"))
