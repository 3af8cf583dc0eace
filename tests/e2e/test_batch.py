"""BatchWriteItem and BatchGetItem: multi-table writes and
reads, secondary-index entries that follow batch writes, UnprocessedItems/UnprocessedKeys,
per-item capacity rounding, and every validation message, with the stored state read back
after each rejected call."""

import math

import pytest

from kumo_testlib import (
    COR_PREFIX,
    N,
    S,
    VALIDATION,
    assert_error,
    assert_not_found,
    assert_validation,
    item_size,
    normalize_item,
    scan_all,
    sized,
    table_arn,
)

INVALID = "One or more parameter values were invalid: "
KEY_MISMATCH = "The provided key element does not match the schema"
DUPLICATES = "Provided list of item keys contains duplicates"
ITEM_TOO_BIG = "Item size has exceeded the maximum allowed size"
BAD_REQUEST_MEMBER = ("Supplied AttributeValue has more than one datatypes set, must contain "
                      "exactly one of the supported datatypes")
EMPTY_GET_REQUEST_ITEMS = ("1 validation error detected: Value at 'RequestItems' failed to "
                           "satisfy constraint: Member must have length greater than or equal to 1")
EMPTY_WRITE_REQUEST_ITEMS = "The requestItems parameter is required for BatchWriteItem"
WRITE_LIST_CONSTRAINT = ("at 'requestItems' failed to satisfy constraint: Map value must satisfy "
                         "constraint: [Member must have length less than or equal to 25, Member "
                         "must have length greater than or equal to 1]")
TABLE_NAME_CONSTRAINT = ("at 'requestItems' failed to satisfy constraint: Map keys must satisfy "
                         "constraint: [Member must have length less than or equal to 255, Member "
                         "must have length greater than or equal to 3, Member must satisfy regular "
                         "expression pattern: [a-zA-Z0-9_.-]+]")


def write_units(size):
    return float(max(1, math.ceil(size / 1024)))


def read_units(size, consistent):
    chunks = max(1, math.ceil(size / 4096))
    return float(chunks) if consistent else chunks * 0.5


def put_req(item):
    return {"PutRequest": {"Item": item}}


def del_req(key):
    return {"DeleteRequest": {"Key": key}}


def get_item(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


def key_set(items, *names):
    return sorted(tuple(next(iter(i[n].values())) for n in names) for i in items)


def capacity_by_table(resp_json):
    cc = resp_json["ConsumedCapacity"]
    assert isinstance(cc, list), f"ConsumedCapacity must be a list, got {cc!r}"
    out = {}
    for entry in cc:
        assert entry["TableName"] not in out, f"table listed twice in {cc!r}"
        out[entry["TableName"]] = entry
    return out


def sort_items(items):
    return sorted((normalize_item(i) for i in items), key=lambda i: repr(sorted(i.items())))


# --------------------------------------------------------------------------- tables


@pytest.fixture
def t_s(make_table):
    """pk S."""
    return make_table(("pk", "S"))


@pytest.fixture
def t_sn(make_table):
    """pk S, sk N."""
    return make_table(("pk", "S"), ("sk", "N"))


@pytest.fixture
def t_n(make_table):
    """pk N."""
    return make_table(("pk", "N"))


@pytest.fixture
def t_gsi(make_table):
    """pk S, sk N; GSI byColor (color S | rank N), projection ALL."""
    return make_table(
        ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "color", "AttributeType": "S"},
                              {"AttributeName": "rank", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[{
            "IndexName": "byColor",
            "KeySchema": [{"AttributeName": "color", "KeyType": "HASH"},
                          {"AttributeName": "rank", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}])


def gsi_entries(api, table):
    return key_set(scan_all(api, table, "byColor"), "color", "rank", "pk", "sk")


def color_query(api, table, color):
    out = api.ok("Query", {"TableName": table, "IndexName": "byColor",
                           "KeyConditionExpression": "color = :c",
                           "ExpressionAttributeValues": {":c": S(color)}})
    return [(i["pk"]["S"], i["sk"]["N"]) for i in out["Items"]]


# =========================================================================== BatchWriteItem


def test_batch_write_puts_and_deletes_over_tables_with_gsi(api, t_s, t_gsi):
    for pk, color, rank in [("a", "red", 1), ("b", "blue", 2), ("c", "green", 3)]:
        api.ok("PutItem", {"TableName": t_gsi, "Item": {"pk": S(pk), "sk": N(1),
                                                         "color": S(color), "rank": N(rank)}})
    for pk in ("x1", "x2"):
        api.ok("PutItem", {"TableName": t_s, "Item": {"pk": S(pk), "v": N(1)}})
    assert gsi_entries(api, t_gsi) == [("blue", "2", "b", "1"), ("green", "3", "c", "1"),
                                       ("red", "1", "a", "1")]

    resp = api("BatchWriteItem", {"RequestItems": {
        t_gsi: [
            # Replaces a: its index entry moves from red to yellow.
            put_req({"pk": S("a"), "sk": N(1), "color": S("yellow"), "rank": N(9), "v": S("new")}),
            # Deletes b: its index entry disappears.
            del_req({"pk": S("b"), "sk": N(1)}),
            # New item in the index.
            put_req({"pk": S("d"), "sk": N(2), "color": S("red"), "rank": N(4)}),
            # New item without index attributes: sparse, not in the index.
            put_req({"pk": S("e"), "sk": N(1), "other": S("z")}),
        ],
        t_s: [
            put_req({"pk": S("x3"), "v": N(3)}),
            del_req({"pk": S("x1")}),
            del_req({"pk": S("never-existed")}),
        ],
    }})
    assert resp.status == 200, resp
    assert resp.json == {"UnprocessedItems": {}}

    assert get_item(api, t_gsi, {"pk": S("a"), "sk": N(1)}) == {
        "pk": S("a"), "sk": N(1), "color": S("yellow"), "rank": N(9), "v": S("new")}
    assert get_item(api, t_gsi, {"pk": S("b"), "sk": N(1)}) is None
    assert get_item(api, t_gsi, {"pk": S("e"), "sk": N(1)}) == {
        "pk": S("e"), "sk": N(1), "other": S("z")}
    assert key_set(scan_all(api, t_gsi), "pk", "sk") == [("a", "1"), ("c", "1"), ("d", "2"),
                                                         ("e", "1")]
    assert gsi_entries(api, t_gsi) == [("green", "3", "c", "1"), ("red", "4", "d", "2"),
                                       ("yellow", "9", "a", "1")]
    assert color_query(api, t_gsi, "red") == [("d", "2")]
    assert color_query(api, t_gsi, "blue") == []
    assert color_query(api, t_gsi, "yellow") == [("a", "1")]
    entry = api.ok("Query", {"TableName": t_gsi, "IndexName": "byColor",
                             "KeyConditionExpression": "color = :c",
                             "ExpressionAttributeValues": {":c": S("yellow")}})["Items"][0]
    assert entry == {"pk": S("a"), "sk": N(1), "color": S("yellow"), "rank": N(9), "v": S("new")}

    assert key_set(scan_all(api, t_s), "pk") == [("x2",), ("x3",)]
    assert get_item(api, t_s, {"pk": S("x3")}) == {"pk": S("x3"), "v": N(3)}


def test_batch_write_delete_removes_gsi_entries_of_every_item(api, t_gsi):
    items = [{"pk": S(f"p{i}"), "sk": N(i), "color": S("c"), "rank": N(i)} for i in range(10)]
    resp = api("BatchWriteItem", {"RequestItems": {t_gsi: [put_req(i) for i in items]}})
    assert resp.status == 200 and resp.json == {"UnprocessedItems": {}}, resp
    assert len(color_query(api, t_gsi, "c")) == 10
    resp = api("BatchWriteItem", {"RequestItems": {
        t_gsi: [del_req({"pk": i["pk"], "sk": i["sk"]}) for i in items[:7]]}})
    assert resp.status == 200 and resp.json == {"UnprocessedItems": {}}, resp
    assert color_query(api, t_gsi, "c") == [("p7", "7"), ("p8", "8"), ("p9", "9")]
    assert api.ok("Scan", {"TableName": t_gsi, "Select": "COUNT"})["Count"] == 3


def test_batch_write_consumed_capacity_per_table_items_rounded_separately(api, t_s, t_sn):
    old = sized({"pk": S("old")}, 2500)
    api.ok("PutItem", {"TableName": t_s, "Item": old})
    gone = sized({"pk": S("g"), "sk": N(1)}, 600)
    api.ok("PutItem", {"TableName": t_sn, "Item": gone})

    s_items = [
        sized({"pk": S("old")}, 100),    # replaces a 2500-byte item: max(2500, 100) → 3
        sized({"pk": S("n1")}, 1500),    # 2
        sized({"pk": S("n2")}, 1024),    # 1
        sized({"pk": S("n3")}, 1025),    # 2
    ]
    sn_items = [sized({"pk": S("g"), "sk": N(2)}, 3000)]  # 3
    resp = api("BatchWriteItem", {
        "RequestItems": {
            t_s: [put_req(i) for i in s_items] + [del_req({"pk": S("missing")})],  # + 1
            t_sn: [put_req(i) for i in sn_items] + [del_req({"pk": S("g"), "sk": N(1)})],  # + 1
        },
        "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert set(resp.json) == {"UnprocessedItems", "ConsumedCapacity"}
    assert resp.json["UnprocessedItems"] == {}
    cc = capacity_by_table(resp.json)
    # Rounded per request: 3 + 2 + 1 + 2 + 1 (rounding the summed sizes once would give 6).
    assert cc == {t_s: {"TableName": t_s, "CapacityUnits": 9.0},
                  t_sn: {"TableName": t_sn, "CapacityUnits": 4.0}}
    assert get_item(api, t_s, {"pk": S("old")}) == s_items[0]
    assert get_item(api, t_sn, {"pk": S("g"), "sk": N(1)}) is None


def test_batch_write_capacity_indexes_mode_and_none(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req(sized({"pk": S("i")}, 2000))]},
                                  "ReturnConsumedCapacity": "INDEXES"})
    assert resp.status == 200, resp
    assert resp.json == {"UnprocessedItems": {},
                         "ConsumedCapacity": [{"TableName": t_s, "CapacityUnits": 2.0,
                                               "Table": {"CapacityUnits": 2.0}}]}
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [del_req({"pk": S("i")})]},
                                  "ReturnConsumedCapacity": "NONE"})
    assert resp.status == 200 and resp.json == {"UnprocessedItems": {}}, resp


def test_batch_write_table_by_arn_echoed_in_capacity(api, t_s):
    arn = table_arn(t_s)
    resp = api("BatchWriteItem", {"RequestItems": {arn: [put_req({"pk": S("arn")})]},
                                  "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert resp.json == {"UnprocessedItems": {},
                         "ConsumedCapacity": [{"TableName": arn, "CapacityUnits": 1.0}]}
    assert get_item(api, t_s, {"pk": S("arn")}) == {"pk": S("arn")}


def test_batch_write_boto3_client(ddb, t_s, t_n):
    out = ddb.batch_write_item(RequestItems={
        t_s: [{"PutRequest": {"Item": {"pk": {"S": "b3"}, "l": {"L": [{"N": "1"}]}}}}],
        t_n: [{"PutRequest": {"Item": {"pk": {"N": "7"}, "b": {"B": b"\x00\x01"}}}}],
    }, ReturnConsumedCapacity="TOTAL")
    assert out["UnprocessedItems"] == {}
    assert sorted((c["TableName"], c["CapacityUnits"]) for c in out["ConsumedCapacity"]) == \
        sorted([(t_s, 1.0), (t_n, 1.0)])
    got = ddb.get_item(TableName=t_n, Key={"pk": {"N": "7"}}, ConsistentRead=True)["Item"]
    assert got == {"pk": {"N": "7"}, "b": {"B": b"\x00\x01"}}


def test_batch_write_exactly_25_across_tables_accepted(api, t_s, t_sn):
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S(f"k{i}")}) for i in range(13)],
        t_sn: [put_req({"pk": S("k"), "sk": N(i)}) for i in range(12)]}})
    assert resp.status == 200 and resp.json == {"UnprocessedItems": {}}, resp
    assert len(scan_all(api, t_s)) == 13
    assert len(scan_all(api, t_sn)) == 12


def test_batch_write_more_than_25_in_one_table(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S(f"k{i}")}) for i in range(26)]}})
    # The rendering of the offending value (a Java dump of the request) is [open]: only its
    # start and the path and constraint are asserted.
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert WRITE_LIST_CONSTRAINT in resp.message, resp.message
    assert resp.message.endswith(WRITE_LIST_CONSTRAINT), resp.message
    assert scan_all(api, t_s) == []


def test_batch_write_empty_list_for_a_table(api, t_s, t_sn):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [], t_sn: [put_req({"pk": S("a"),
                                                                             "sk": N(1)})]}})
    # Value rendering [open], as above.
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith(WRITE_LIST_CONSTRAINT), resp.message
    assert scan_all(api, t_sn) == []


def test_batch_write_more_than_25_across_tables(api, t_s, t_sn):
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S(f"k{i}")}) for i in range(13)],
        t_sn: [put_req({"pk": S("k"), "sk": N(i)}) for i in range(13)]}})
    # The text for more than 25 requests in total is [open]: type only.
    assert_error(resp, 400, VALIDATION)
    assert resp.message
    assert scan_all(api, t_s) == []
    assert scan_all(api, t_sn) == []


def test_batch_write_empty_request_items(api):
    assert_validation(api("BatchWriteItem", {"RequestItems": {}}), EMPTY_WRITE_REQUEST_ITEMS)


def test_batch_write_bad_table_name(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {"ab": [put_req({"pk": S("a")})],
                                                   t_s: [put_req({"pk": S("b")})]}})
    # The value rendering is [open].
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith(TABLE_NAME_CONSTRAINT), resp.message
    assert scan_all(api, t_s) == []


@pytest.mark.parametrize("request_obj", [
    pytest.param({}, id="neither"),
    pytest.param({"PutRequest": {"Item": {"pk": {"S": "z"}}},
                  "DeleteRequest": {"Key": {"pk": {"S": "z"}}}}, id="both"),
])
def test_batch_write_request_with_neither_or_both_members(api, t_s, request_obj):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req({"pk": S("ok")}), request_obj]}})
    assert_validation(resp, BAD_REQUEST_MEMBER)
    assert scan_all(api, t_s) == []


@pytest.mark.parametrize("first, second", [
    pytest.param(put_req({"pk": S("d"), "sk": N(1)}), put_req({"pk": S("d"), "sk": N(1)}),
                 id="put-put"),
    pytest.param(put_req({"pk": S("d"), "sk": N(1), "a": S("x")}),
                 del_req({"pk": S("d"), "sk": N(1)}), id="put-delete"),
    pytest.param(del_req({"pk": S("d"), "sk": N(1)}), del_req({"pk": S("d"), "sk": N(1)}),
                 id="delete-delete"),
    pytest.param(put_req({"pk": S("d"), "sk": N("1")}), put_req({"pk": S("d"), "sk": N("1.00")}),
                 id="numerically-equal-sort-keys"),
])
def test_batch_write_duplicate_keys(api, t_sn, t_s, first, second):
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S("other")})],
        t_sn: [put_req({"pk": S("first"), "sk": N(0)}), first, second]}})
    assert_validation(resp, DUPLICATES)
    assert scan_all(api, t_sn) == []
    assert scan_all(api, t_s) == []


def test_batch_write_same_key_in_different_tables_is_not_duplicate(api, t_s, make_table):
    other = make_table(("pk", "S"))
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req({"pk": S("same")})],
                                                   other: [put_req({"pk": S("same")})]}})
    assert resp.status == 200, resp
    assert get_item(api, t_s, {"pk": S("same")}) == {"pk": S("same")}
    assert get_item(api, other, {"pk": S("same")}) == {"pk": S("same")}


@pytest.mark.parametrize("bad", [
    pytest.param(put_req({"sk": N(1), "a": S("x")}), id="put-missing-hash"),
    pytest.param(put_req({"pk": S("p"), "a": S("x")}), id="put-missing-range"),
    pytest.param(put_req({"pk": N(1), "sk": N(1)}), id="put-hash-wrong-type"),
    pytest.param(put_req({"pk": S("p"), "sk": S("1")}), id="put-range-wrong-type"),
    pytest.param(del_req({"pk": S("p")}), id="delete-missing-range"),
    pytest.param(del_req({"pk": S("p"), "sk": N(1), "extra": S("x")}), id="delete-extra-attr"),
    pytest.param(del_req({"pk": S("p"), "sk": S("1")}), id="delete-wrong-type"),
    pytest.param(del_req({"pk": S("p"), "other": N(1)}), id="delete-wrong-name"),
])
def test_batch_write_key_mismatch(api, t_sn, bad):
    resp = api("BatchWriteItem", {"RequestItems": {
        t_sn: [put_req({"pk": S("good"), "sk": N(1)}), bad]}})
    assert_validation(resp, KEY_MISMATCH)
    assert scan_all(api, t_sn) == []


def test_batch_write_empty_string_key(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req({"pk": S("good")}),
                                                         put_req({"pk": S("")})]}})
    assert_validation(resp, "One or more parameter values are not valid. The AttributeValue for "
                            "a key attribute cannot contain an empty string value. Key: pk")
    assert scan_all(api, t_s) == []


def test_batch_write_item_size_limit(api, t_s):
    ok = sized({"pk": S("max")}, 409600)
    big = sized({"pk": S("big")}, 409601)
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req({"pk": S("small")}),
                                                         put_req(big)]}})
    assert_validation(resp, ITEM_TOO_BIG)
    assert scan_all(api, t_s) == []
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req(ok)]},
                                  "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert resp.json["ConsumedCapacity"] == [{"TableName": t_s, "CapacityUnits": 400.0}]
    assert get_item(api, t_s, {"pk": S("max")}) == ok


def test_batch_write_invalid_attribute_value_rejects_whole_batch(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [
        put_req({"pk": S("good")}), put_req({"pk": S("bad"), "ss": {"SS": []}})]}})
    assert_validation(resp, INVALID + "An string set  may not be empty")
    assert scan_all(api, t_s) == []


def test_batch_write_missing_table_rejects_whole_call(api, t_s, t_sn):
    api.ok("PutItem", {"TableName": t_s, "Item": {"pk": S("keep")}})
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S("new")}), del_req({"pk": S("keep")})],
        "no-such-table-batch": [put_req({"pk": S("x")})],
        t_sn: [put_req({"pk": S("p"), "sk": N(1)})]}})
    assert_not_found(resp)
    assert key_set(scan_all(api, t_s), "pk") == [("keep",)]
    assert scan_all(api, t_sn) == []


def test_batch_write_index_key_type_mismatch_rejects_whole_batch(api, t_gsi, t_s):
    api.ok("PutItem", {"TableName": t_gsi, "Item": {"pk": S("pre"), "sk": N(1),
                                                     "color": S("red"), "rank": N(1)}})
    resp = api("BatchWriteItem", {"RequestItems": {
        t_s: [put_req({"pk": S("s1")})],
        t_gsi: [put_req({"pk": S("a"), "sk": N(1), "color": S("blue"), "rank": N(1)}),
                del_req({"pk": S("pre"), "sk": N(1)}),
                put_req({"pk": S("b"), "sk": N(1), "color": S("blue"), "rank": S("high")})]}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key rank Expected: N Actual: S "
                                      "IndexName: byColor")
    assert scan_all(api, t_s) == []
    assert key_set(scan_all(api, t_gsi), "pk", "sk") == [("pre", "1")]
    assert gsi_entries(api, t_gsi) == [("red", "1", "pre", "1")]


def test_batch_write_empty_index_key_rejects_whole_batch(api, t_gsi):
    resp = api("BatchWriteItem", {"RequestItems": {t_gsi: [
        put_req({"pk": S("a"), "sk": N(1), "color": S("blue"), "rank": N(1)}),
        put_req({"pk": S("b"), "sk": N(1), "color": S(""), "rank": N(1)})]}})
    assert_validation(resp, "One or more parameter values are not valid. A value specified for a "
                            "secondary index key is not supported. The AttributeValue for a key "
                            "attribute cannot contain an empty string value. IndexName: byColor, "
                            "IndexKey: color")
    assert scan_all(api, t_gsi) == []
    assert gsi_entries(api, t_gsi) == []


def test_batch_write_bad_return_consumed_capacity(api, t_s):
    resp = api("BatchWriteItem", {"RequestItems": {t_s: [put_req({"pk": S("a")})]},
                                  "ReturnConsumedCapacity": "ALL"})
    assert_validation(resp, "1 validation error detected: Value 'ALL' at 'returnConsumedCapacity' "
                            "failed to satisfy constraint: Member must satisfy enum value set: "
                            "[INDEXES, TOTAL, NONE]")
    assert scan_all(api, t_s) == []


# =========================================================================== BatchGetItem


@pytest.fixture
def read_tables(api, t_s, t_sn, t_n):
    """Populated: t_s has big (5000 B) and small (100 B); t_sn has (p, 1) of 4097 B; t_n empty."""
    big = sized({"pk": S("big")}, 5000, a=S("A"), b=N(2), m={"M": {"x": S("X"), "y": S("Y")}})
    small = sized({"pk": S("small")}, 100, a=S("a-small"), b=N(3))
    row = sized({"pk": S("p"), "sk": N(1)}, 4097, b=S("B"), c=S("C"))
    for table, item in [(t_s, big), (t_s, small), (t_sn, row)]:
        api.ok("PutItem", {"TableName": table, "Item": item})
    return {"s": t_s, "sn": t_sn, "n": t_n, "big": big, "small": small, "row": row}


def test_batch_get_over_tables_with_options_and_capacity(api, read_tables):
    rt = read_tables
    resp = api("BatchGetItem", {
        "RequestItems": {
            rt["s"]: {"Keys": [{"pk": S("big")}, {"pk": S("missing")}, {"pk": S("small")}],
                      "ConsistentRead": True,
                      "ProjectionExpression": "#k, a, m.x",
                      "ExpressionAttributeNames": {"#k": "pk"}},
            rt["sn"]: {"Keys": [{"pk": S("p"), "sk": N(1)}, {"pk": S("p"), "sk": N(2)}],
                       "AttributesToGet": ["pk", "c"]},
            rt["n"]: {"Keys": [{"pk": N(5)}]},
        },
        "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    body = resp.json
    assert set(body) == {"Responses", "UnprocessedKeys", "ConsumedCapacity"}
    assert body["UnprocessedKeys"] == {}
    assert set(body["Responses"]) == {rt["s"], rt["sn"], rt["n"]}
    assert sort_items(body["Responses"][rt["s"]]) == sort_items([
        {"pk": S("big"), "a": S("A"), "m": {"M": {"x": S("X")}}},
        {"pk": S("small"), "a": S("a-small")}])
    assert body["Responses"][rt["sn"]] == [{"pk": S("p"), "c": S("C")}]
    assert body["Responses"][rt["n"]] == []
    # Capacity is computed on the whole stored item, each item rounded separately; a missing
    # key costs the minimum (1 strongly consistent, 0.5 eventually consistent).
    assert capacity_by_table(body) == {
        rt["s"]: {"TableName": rt["s"], "CapacityUnits": 2.0 + 1.0 + 1.0},
        rt["sn"]: {"TableName": rt["sn"], "CapacityUnits": 1.0 + 0.5},
        rt["n"]: {"TableName": rt["n"], "CapacityUnits": 0.5},
    }


@pytest.mark.parametrize("sizes, consistent, units", [
    pytest.param([100, 4096, 4097], False, 0.5 + 0.5 + 1.0, id="eventual"),
    pytest.param([100, 4096, 4097], True, 1.0 + 1.0 + 2.0, id="strong"),
    pytest.param([3000, 3000], True, 2.0, id="not-summed-first"),
    pytest.param([12289], False, 2.0, id="four-chunks-eventual"),
])
def test_batch_get_capacity_each_item_rounded_separately(api, t_s, sizes, consistent, units):
    keys = []
    for i, size in enumerate(sizes):
        item = sized({"pk": S(f"c{i}")}, size)
        api.ok("PutItem", {"TableName": t_s, "Item": item})
        keys.append({"pk": S(f"c{i}")})
    resp = api("BatchGetItem", {"RequestItems": {t_s: {"Keys": keys, "ConsistentRead": consistent}},
                                "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert len(resp.json["Responses"][t_s]) == len(sizes)
    expected = sum(read_units(s, consistent) for s in sizes)
    assert expected == units
    assert resp.json["ConsumedCapacity"] == [{"TableName": t_s, "CapacityUnits": units}]


def test_batch_get_without_capacity_and_all_missing(api, t_s, t_sn):
    resp = api("BatchGetItem", {"RequestItems": {
        t_s: {"Keys": [{"pk": S("nope")}]},
        t_sn: {"Keys": [{"pk": S("nope"), "sk": N(0)}]}}})
    assert resp.status == 200, resp
    assert resp.json == {"Responses": {t_s: [], t_sn: []}, "UnprocessedKeys": {}}


def test_batch_get_returns_full_items_without_projection(api, read_tables):
    rt = read_tables
    resp = api("BatchGetItem", {"RequestItems": {
        rt["s"]: {"Keys": [{"pk": S("small")}, {"pk": S("big")}]}}})
    assert resp.status == 200, resp
    assert sort_items(resp.json["Responses"][rt["s"]]) == sort_items([rt["big"], rt["small"]])


def test_batch_get_table_by_arn(api, read_tables):
    rt = read_tables
    arn = table_arn(rt["s"])
    resp = api("BatchGetItem", {"RequestItems": {arn: {"Keys": [{"pk": S("small")}],
                                                       "ConsistentRead": True}},
                                "ReturnConsumedCapacity": "TOTAL"})
    assert resp.status == 200, resp
    assert resp.json == {"Responses": {arn: [rt["small"]]}, "UnprocessedKeys": {},
                         "ConsumedCapacity": [{"TableName": arn, "CapacityUnits": 1.0}]}


def test_batch_get_boto3_client(ddb, read_tables):
    rt = read_tables
    out = ddb.batch_get_item(RequestItems={
        rt["sn"]: {"Keys": [{"pk": {"S": "p"}, "sk": {"N": "1"}}],
                   "ProjectionExpression": "b"}})
    assert out["Responses"] == {rt["sn"]: [{"b": {"S": "B"}}]}
    assert out["UnprocessedKeys"] == {}


def test_batch_get_exactly_100_keys_accepted(api, t_s, t_n):
    resp = api("BatchGetItem", {"RequestItems": {
        t_s: {"Keys": [{"pk": S(f"k{i}")} for i in range(60)]},
        t_n: {"Keys": [{"pk": N(i)} for i in range(40)]}}})
    assert resp.status == 200, resp
    assert resp.json == {"Responses": {t_s: [], t_n: []}, "UnprocessedKeys": {}}


def test_batch_get_more_than_100_keys_in_total(api, t_s, t_n):
    resp = api("BatchGetItem", {"RequestItems": {
        t_s: {"Keys": [{"pk": S(f"k{i}")} for i in range(60)]},
        t_n: {"Keys": [{"pk": N(i)} for i in range(41)]}}})
    assert_validation(resp, "Too many items requested for the BatchGetItem call")


def test_batch_get_more_than_100_keys_in_one_table(api, t_s):
    resp = api("BatchGetItem", {"RequestItems": {
        t_s: {"Keys": [{"pk": S(f"k{i}")} for i in range(101)]}}})
    assert_validation(resp, COR_PREFIX + f"Value at 'RequestItems.{t_s}.member.Keys' failed to "
                            "satisfy constraint: Member must have length less than or equal to 100")


def test_batch_get_empty_keys_list(api, t_s):
    resp = api("BatchGetItem", {"RequestItems": {t_s: {"Keys": []}}})
    assert_validation(resp, COR_PREFIX + f"Value at 'RequestItems.{t_s}.member.Keys' failed to "
                            "satisfy constraint: Member must have length greater than or equal to 1")


@pytest.mark.parametrize("keys", [
    pytest.param([{"pk": S("p"), "sk": N(1)}, {"pk": S("q"), "sk": N(1)},
                  {"pk": S("p"), "sk": N(1)}], id="identical"),
    pytest.param([{"sk": N(1), "pk": S("p")}, {"pk": S("p"), "sk": N(1)}],
                 id="member-order"),
])
def test_batch_get_duplicate_keys(api, t_sn, keys):
    assert_validation(api("BatchGetItem", {"RequestItems": {t_sn: {"Keys": keys}}}), DUPLICATES)


def test_batch_get_same_key_in_two_tables_is_not_duplicate(api, t_s, make_table):
    other = make_table(("pk", "S"))
    api.ok("PutItem", {"TableName": other, "Item": {"pk": S("k"), "v": S("other")}})
    resp = api("BatchGetItem", {"RequestItems": {t_s: {"Keys": [{"pk": S("k")}]},
                                                 other: {"Keys": [{"pk": S("k")}]}}})
    assert resp.status == 200, resp
    assert resp.json == {"Responses": {t_s: [], other: [{"pk": S("k"), "v": S("other")}]},
                         "UnprocessedKeys": {}}


def test_batch_get_empty_request_items(api):
    assert_validation(api("BatchGetItem", {"RequestItems": {}}), EMPTY_GET_REQUEST_ITEMS)


def test_batch_get_bad_table_name(api):
    resp = api("BatchGetItem", {"RequestItems": {"a!": {"Keys": [{"pk": S("x")}]}}})
    # Value rendering [open].
    assert_validation(resp, message_prefix=COR_PREFIX + "Value '")
    assert resp.message.endswith(TABLE_NAME_CONSTRAINT), resp.message


@pytest.mark.parametrize("key", [
    pytest.param({"pk": S("p")}, id="missing-range"),
    pytest.param({"pk": N(1), "sk": N(1)}, id="hash-wrong-type"),
    pytest.param({"pk": S("p"), "sk": S("1")}, id="range-wrong-type"),
    pytest.param({"pk": S("p"), "sk": N(1), "x": S("extra")}, id="extra-attr"),
    pytest.param({"sk": N(1)}, id="missing-hash"),
    pytest.param({}, id="empty"),
])
def test_batch_get_key_mismatch(api, t_sn, t_s, key):
    resp = api("BatchGetItem", {"RequestItems": {t_s: {"Keys": [{"pk": S("fine")}]},
                                                 t_sn: {"Keys": [{"pk": S("ok"), "sk": N(0)},
                                                                 key]}}})
    assert_validation(resp, KEY_MISMATCH)


def test_batch_get_empty_string_key(api, t_s):
    resp = api("BatchGetItem", {"RequestItems": {t_s: {"Keys": [{"pk": S("")}]}}})
    assert_validation(resp, INVALID + "The AttributeValue for a key attribute cannot contain an "
                                      "empty string value. Key: pk")


def test_batch_get_missing_table(api, read_tables):
    resp = api("BatchGetItem", {"RequestItems": {
        read_tables["s"]: {"Keys": [{"pk": S("small")}]},
        "no-such-table-bget": {"Keys": [{"pk": S("x")}]}}})
    assert_not_found(resp)


def test_batch_get_mixing_legacy_and_expression_projection(api, t_s):
    resp = api("BatchGetItem", {"RequestItems": {t_s: {
        "Keys": [{"pk": S("x")}], "AttributesToGet": ["a"], "ProjectionExpression": "b"}}})
    assert_validation(resp, "Can not use both expression and non-expression parameters in the "
                            "same request: Non-expression parameters: {AttributesToGet} "
                            "Expression parameters: {ProjectionExpression}")


def test_batch_get_unused_expression_attribute_name(api, t_s):
    resp = api("BatchGetItem", {"RequestItems": {t_s: {
        "Keys": [{"pk": S("x")}], "ProjectionExpression": "a",
        "ExpressionAttributeNames": {"#unused": "b"}}}})
    # BatchGetItem reports request-validation errors without the coral envelope
    # (no "1 validation error detected: " prefix).
    assert_validation(resp, "Value provided in ExpressionAttributeNames unused in expressions: "
                            "keys: {#unused}")
