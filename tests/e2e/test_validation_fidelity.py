"""Request validation as DynamoDB words it today: empty AttributesToGet on every read, the
messages reworded in 2026, NonKeyAttributes names, what a GSI query may ask for, key
conditions on hash-only indexes, restarting a query that reads one item, and numbers that
name one key two ways or are written out of range."""

import pytest

from kumo_testlib import (
    COR_PREFIX,
    Api,
    N,
    S,
    assert_validation,
    create_table_args,
    unique_name,
)

INVALID = "One or more parameter values were invalid: "
MIN_ONE = "Member must have length greater than or equal to 1"
NAME_REQUIRED = "The parameter 'TableName' is required but was not present in the request"
OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger than supported "
            "range")


@pytest.fixture(scope="module")
def tables(server):
    """A hash-only S table, a hash-only N table, and a table (p | s) with a hash-only GSI on g
    projecting INCLUDE [a]; one item in each."""
    api = Api(server.port)
    names = {"s": unique_name(), "n": unique_name(), "gsi": unique_name()}
    api.ok("CreateTable", create_table_args(names["s"], ("p", "S")))
    api.ok("CreateTable", create_table_args(names["n"], ("p", "N")))
    api.ok("CreateTable", create_table_args(
        names["gsi"], ("p", "S"), ("s", "S"),
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"},
                              {"AttributeName": "s", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "INCLUDE",
                                                "NonKeyAttributes": ["a"]}}]))
    api.ok("PutItem", {"TableName": names["s"], "Item": {"p": S("a"), "v": S("x")}})
    api.ok("PutItem", {"TableName": names["n"], "Item": {"p": N("1000"), "v": S("thousand")}})
    api.ok("PutItem", {"TableName": names["gsi"], "Item": {
        "p": S("x"), "s": S("y"), "g": S("G"), "a": S("A"), "b": S("B")}})
    yield names
    for name in names.values():
        api("DeleteTable", {"TableName": name})


def get_item(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


# --------------------------------------------------------------------------- AttributesToGet []

EMPTY_ATTRIBUTES = COR_PREFIX + "Value '[]' at '{}' failed to satisfy constraint: " + MIN_ONE


def test_empty_attributes_to_get_on_query(api, tables):
    resp = api("Query", {"TableName": tables["s"], "AttributesToGet": [], "KeyConditions": {
        "p": {"ComparisonOperator": "EQ", "AttributeValueList": [S("a")]}}})
    assert_validation(resp, EMPTY_ATTRIBUTES.format("attributesToGet"))


def test_empty_attributes_to_get_on_scan(api, tables):
    resp = api("Scan", {"TableName": tables["s"], "AttributesToGet": []})
    assert_validation(resp, EMPTY_ATTRIBUTES.format("attributesToGet"))


def test_empty_attributes_to_get_on_batch_get(api, tables):
    t = tables["s"]
    resp = api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"p": S("a")}],
                                                     "AttributesToGet": []}}})
    assert_validation(resp, EMPTY_ATTRIBUTES.format(f"requestItems.{t}.member.attributesToGet"))


# --------------------------------------------------------------------------- 2026 wordings


def test_query_limit_zero_names_the_member(api, tables):
    resp = api("Query", {"TableName": tables["s"], "Limit": 0, "KeyConditionExpression": "p = :p",
                         "ExpressionAttributeValues": {":p": S("a")}})
    assert_validation(resp, COR_PREFIX + "Value at 'Limit' failed to satisfy constraint: Member "
                                         "must have value greater than or equal to 1")
    resp = api("Scan", {"TableName": tables["s"], "Limit": 0})
    assert_validation(resp, COR_PREFIX + "Value '0' at 'limit' failed to satisfy constraint: "
                                         "Member must have value greater than or equal to 1")


def test_batch_get_key_list_lengths(api, tables):
    t = tables["s"]
    resp = api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"p": S(str(i))}
                                                              for i in range(101)]}}})
    assert_validation(resp, COR_PREFIX + f"Value at 'RequestItems.{t}.member.Keys' failed to "
                                         "satisfy constraint: Member must have length less than "
                                         "or equal to 100")
    resp = api("BatchGetItem", {"RequestItems": {t: {"Keys": []}}})
    assert_validation(resp, COR_PREFIX + f"Value at 'RequestItems.{t}.member.Keys' failed to "
                                         "satisfy constraint: " + MIN_ONE)


def test_empty_request_items(api):
    assert_validation(api("BatchGetItem", {"RequestItems": {}}),
                      COR_PREFIX + "Value at 'RequestItems' failed to satisfy constraint: "
                      + MIN_ONE)
    assert_validation(api("BatchWriteItem", {"RequestItems": {}}),
                      "The requestItems parameter is required for BatchWriteItem")


@pytest.mark.parametrize("op,body", [
    ("CreateTable", {k: v for k, v in create_table_args("x", ("p", "S")).items()
                     if k != "TableName"}),
    ("DescribeTable", {}),
    ("DeleteTable", {}),
    ("UpdateTable", {"DeletionProtectionEnabled": False}),
    ("DescribeTimeToLive", {}),
])
def test_control_plane_without_table_name(api, op, body):
    assert_validation(api(op, body), NAME_REQUIRED)


@pytest.mark.parametrize("op,body", [
    ("GetItem", {"Key": {"p": S("a")}}),
    ("PutItem", {"Item": {"p": S("a")}}),
    ("UpdateItem", {"Key": {"p": S("a")}}),
    ("DeleteItem", {"Key": {"p": S("a")}}),
    ("Query", {"KeyConditionExpression": "p = :p", "ExpressionAttributeValues": {":p": S("a")}}),
    ("Scan", {}),
])
def test_empty_table_name_on_item_operations(api, op, body):
    resp = api(op, dict(body, TableName=""))
    assert_validation(resp, COR_PREFIX + "Value '' at 'tableName' failed to satisfy constraint: "
                      + MIN_ONE)
    # A missing name keeps the model's wording.
    assert_validation(api(op, body), COR_PREFIX + "Value null at 'tableName' failed to satisfy "
                                                  "constraint: Member must not be null")


@pytest.mark.parametrize("op", ["TransactWriteItems", "TransactGetItems"])
def test_empty_transact_items(api, op):
    assert_validation(api(op, {"TransactItems": []}),
                      COR_PREFIX + "Value '[]' at 'transactItems' failed to satisfy constraint: "
                      + MIN_ONE)


QUOTED_SS = INVALID + 'Input collection ["b", "c", "c", "a"] contains duplicates.'
PLAIN_SS = INVALID + "Input collection [c, b, c, a] contains duplicates."
DUP_SS = {"SS": ["c", "b", "c", "a"]}


def test_duplicate_set_members_on_writes(api, tables):
    t = tables["s"]
    key = {"p": S("dup")}
    assert_validation(api("PutItem", {"TableName": t, "Item": dict(key, x=DUP_SS)}),
                      COR_PREFIX + QUOTED_SS)
    assert_validation(api("PutItem", {"TableName": t, "Item": dict(key, x={"NS": ["1", "1"]})}),
                      COR_PREFIX + INVALID + "Input collection contains duplicates.")
    assert_validation(api("UpdateItem", {"TableName": t, "Key": key,
                                         "UpdateExpression": "SET x = :v",
                                         "ExpressionAttributeValues": {":v": DUP_SS}}),
                      COR_PREFIX + f"ExpressionAttributeValues contains invalid value: {QUOTED_SS} "
                                   "for key :v")
    assert_validation(api("DeleteItem", {"TableName": t, "Key": key,
                                         "ConditionExpression": "x = :v",
                                         "ExpressionAttributeValues": {":v": DUP_SS}}),
                      COR_PREFIX + f"ExpressionAttributeValues contains invalid value: {QUOTED_SS} "
                                   "for key :v")
    assert get_item(api, t, key) is None
    # BatchWriteItem keeps the older form.
    assert_validation(api("BatchWriteItem", {"RequestItems": {t: [
        {"PutRequest": {"Item": dict(key, x=DUP_SS)}}]}}), PLAIN_SS)


def test_duplicate_set_members_on_reads(api, tables):
    t = tables["s"]
    assert_validation(api("GetItem", {"TableName": t, "Key": {"p": DUP_SS}}), QUOTED_SS)
    assert_validation(api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"p": DUP_SS}]}}}),
                      QUOTED_SS)
    assert_validation(api("Query", {"TableName": t, "KeyConditionExpression": "p = :p",
                                    "FilterExpression": "x = :v",
                                    "ExpressionAttributeValues": {":p": S("a"), ":v": DUP_SS}}),
                      f"ExpressionAttributeValues contains invalid value: {QUOTED_SS} for key :v")
    assert_validation(api("Query", {"TableName": t, "KeyConditionExpression": "p = :p",
                                    "FilterExpression": "x = :v",
                                    "ExpressionAttributeValues": {":p": S("a"),
                                                                  ":v": {"NS": ["2", "2.0"]}}}),
                      "ExpressionAttributeValues contains invalid value: " + INVALID
                      + "Input collection contains duplicates. for key :v")
    # Scan keeps the older forms.
    assert_validation(api("Scan", {"TableName": t, "FilterExpression": "x = :v",
                                   "ExpressionAttributeValues": {":v": DUP_SS}}),
                      f"ExpressionAttributeValues contains invalid value: {PLAIN_SS} for key :v")
    assert_validation(api("Scan", {"TableName": t, "FilterExpression": "x = :v",
                                   "ExpressionAttributeValues": {":v": {"NS": ["1", "1"]}}}),
                      "ExpressionAttributeValues contains invalid value: Input collection "
                      "contains duplicates for key :v")


@pytest.mark.parametrize("op,member", [("PutItem", "Item"), ("DeleteItem", "Key")])
def test_values_without_an_expression(api, tables, op, member):
    t = tables["s"]
    resp = api(op, {"TableName": t, member: {"p": S("eav")},
                    "ExpressionAttributeValues": {":v": S("x")}})
    assert_validation(resp, COR_PREFIX + "ExpressionAttributeValues can only be specified when "
                                         "using expressions")
    assert get_item(api, t, {"p": S("eav")}) is None


# --------------------------------------------------------------------------- NonKeyAttributes


def index_table_args(name, kind, non_key):
    index = {"IndexName": "idx", "Projection": {"ProjectionType": "INCLUDE",
                                                "NonKeyAttributes": non_key}}
    if kind == "global":
        index["KeySchema"] = [{"AttributeName": "g", "KeyType": "HASH"}]
        member = "GlobalSecondaryIndexes"
    else:
        index["KeySchema"] = [{"AttributeName": "p", "KeyType": "HASH"},
                              {"AttributeName": "g", "KeyType": "RANGE"}]
        member = "LocalSecondaryIndexes"
    return create_table_args(
        name, ("p", "S"), ("s", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in "psg"],
        **{member: [index]})


@pytest.mark.parametrize("kind,path", [("global", "globalSecondaryIndexes"),
                                       ("local", "localSecondaryIndexes")])
def test_non_key_attribute_longer_than_255_characters(api, kind, path):
    name = unique_name()
    long_name = "é" * 256
    resp = api("CreateTable", index_table_args(name, kind, ["a", long_name]))
    assert_validation(resp, COR_PREFIX + f"Value '[a, {long_name}]' at '{path}.1.member.projection"
                      ".nonKeyAttributes' failed to satisfy constraint: Member must satisfy "
                      "constraint: [Member must have length less than or equal to 255, Member "
                      "must have length greater than or equal to 1]")
    assert api("DescribeTable", {"TableName": name}).status == 400
    # 255 characters (510 bytes of UTF-8) are within the limit.
    resp = api("CreateTable", index_table_args(name, kind, ["é" * 255]))
    assert resp.status == 200, resp
    api.ok("DeleteTable", {"TableName": name})


# --------------------------------------------------------------------------- GSI reads


def gsi_query(tables, **extra):
    body = {"TableName": tables["gsi"], "IndexName": "by_g",
            "KeyConditions": {"g": {"ComparisonOperator": "EQ", "AttributeValueList": [S("G")]}}}
    body.update(extra)
    return body


NOT_PROJECTED = INVALID + "Attribute b is not projected into global secondary index by_g"


def test_gsi_query_asking_for_an_unprojected_attribute(api, tables):
    assert_validation(api("Query", gsi_query(tables, AttributesToGet=["a", "b"],
                                             Select="SPECIFIC_ATTRIBUTES")), NOT_PROJECTED)
    assert_validation(api("Query", gsi_query(tables, AttributesToGet=["b"])), NOT_PROJECTED)
    body = {"TableName": tables["gsi"], "IndexName": "by_g", "KeyConditionExpression": "g = :g",
            "ExpressionAttributeValues": {":g": S("G")}}
    assert_validation(api("Query", dict(body, ProjectionExpression="b")), NOT_PROJECTED)
    assert_validation(api("Query", dict(body, ProjectionExpression="#b.c",
                                        ExpressionAttributeNames={"#b": "b"})), NOT_PROJECTED)
    assert_validation(api("Scan", {"TableName": tables["gsi"], "IndexName": "by_g",
                                   "ProjectionExpression": "a, b"}), NOT_PROJECTED)
    # Projected attributes (the index key, the table key, INCLUDE) are fine.
    out = api.ok("Query", dict(body, ProjectionExpression="a, g, p, s"))
    assert out["Items"] == [{"a": S("A"), "g": S("G"), "p": S("x"), "s": S("y")}]
    out = api.ok("Query", gsi_query(tables, AttributesToGet=["a"]))
    assert out["Items"] == [{"a": S("A")}]


@pytest.mark.parametrize("second", ["p = :w", "zz = :w"])
def test_hash_only_gsi_with_a_second_key_condition(api, tables, second):
    resp = api("Query", {"TableName": tables["gsi"], "IndexName": "by_g",
                         "KeyConditionExpression": "g = :g AND " + second,
                         "ExpressionAttributeValues": {":g": S("G"), ":w": S("x")}})
    assert_validation(resp, "Query key condition not supported")
    # A hash-only table counts the conditions.
    resp = api("Query", {"TableName": tables["s"], "KeyConditionExpression": "p = :p AND zz = :w",
                         "ExpressionAttributeValues": {":p": S("a"), ":w": S("x")}})
    assert_validation(resp, "The number of query conditions (2) exceeds the number of key "
                            "attributes defined in the schema (1)")


# --------------------------------------------------------------------------- ExclusiveStartKey


def test_query_on_hash_only_table_cannot_restart(api, tables):
    resp = api("Query", {"TableName": tables["s"], "KeyConditionExpression": "p = :p",
                         "ExpressionAttributeValues": {":p": S("a")},
                         "ExclusiveStartKey": {"p": S("a")}})
    assert_validation(resp, "The provided exclusive start key is invalid: ExclusiveStartKey: "
                            "{p=AttributeValue: {S:a}}")
    resp = api("Query", {"TableName": tables["n"], "KeyConditionExpression": "p = :p",
                         "ExpressionAttributeValues": {":p": N("1000")},
                         "ExclusiveStartKey": {"p": N("1000")}})
    assert_validation(resp, "The provided exclusive start key is invalid: ExclusiveStartKey: "
                            "{p=AttributeValue: {N:1000}}")


# --------------------------------------------------------------------------- numbers


def test_batch_get_one_number_written_two_ways(api, tables):
    t = tables["n"]
    resp = api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"p": N("1000")},
                                                              {"p": N("1e3")}]}}})
    assert resp.status == 200, resp
    assert resp.json["Responses"] == {t: [{"p": N("1000"), "v": S("thousand")}]}
    assert resp.json["UnprocessedKeys"] == {}
    # The same text twice is still a duplicate.
    resp = api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"p": N("1e3")}, {"p": N("1e3")}]}}})
    assert_validation(resp, "Provided list of item keys contains duplicates")


def test_zero_range_follows_its_written_exponent(api, tables):
    t = tables["s"]
    resp = api("PutItem", {"TableName": t, "Item": {"p": S("zero"), "z": N("0e126")}})
    assert_validation(resp, COR_PREFIX + OVERFLOW)
    assert get_item(api, t, {"p": S("zero")}) is None
    api.ok("PutItem", {"TableName": t, "Item": {"p": S("zero"), "z": N("0.0e126")}})
    assert get_item(api, t, {"p": S("zero")}) == {"p": S("zero"), "z": N("0")}
    assert_validation(api("GetItem", {"TableName": tables["n"], "Key": {"p": N("0e126")}}),
                      OVERFLOW)
