"""Single-item operations: PutItem, GetItem, DeleteItem,
AttributeValue validation, numbers, sizes, ReturnValues and consumed capacity."""

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_not_found,
    assert_validation,
    b64,
    create_table_args,
    item_size,
    normalize_item,
    unique_name,
    wait_table_active,
)

INVALID = "One or more parameter values were invalid: "
NOT_VALID = "One or more parameter values are not valid. "
KEY_MISMATCH = "The provided key element does not match the schema"


TABLE_SPECS = {
    "s": (("pk", "S"), None),
    "sn": (("pk", "S"), ("sk", "N")),
    "ss": (("pk", "S"), ("sk", "S")),
    "n": (("pk", "N"), None),
    "b": (("pk", "B"), None),
}


@pytest.fixture(scope="module")
def _module_tables(server):
    state = {"generation": None, "names": {}}
    yield state
    c = server.client()
    for name in state["names"].values():
        try:
            c.delete_table(TableName=name)
        except Exception:
            pass


@pytest.fixture
def tables(server, _module_tables):
    """Module-wide tables: s (pk S), sn (pk S, sk N), ss (pk S, sk S), n (pk N), b (pk B);
    made again if the shared server was restarted."""
    if _module_tables["generation"] != server.generation:
        c = server.client()
        names = {}
        for key, (h, r) in TABLE_SPECS.items():
            names[key] = unique_name("items-" + key)
            c.create_table(**create_table_args(names[key], h, r))
        for name in names.values():
            wait_table_active(c, name)
        _module_tables.update(generation=server.generation, names=names)
    return _module_tables["names"]


def put(api, table, item, **extra):
    return api("PutItem", dict({"TableName": table, "Item": item}, **extra))


def get(api, table, key, **extra):
    return api("GetItem", dict({"TableName": table, "Key": key}, **extra))


def delete(api, table, key, **extra):
    return api("DeleteItem", dict({"TableName": table, "Key": key}, **extra))


def get_item(api, table, key):
    out = api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    return out.get("Item")


def S(x):
    return {"S": x}


def N(x):
    return {"N": x}


# --------------------------------------------------------------------------- round trips

BIN = b"\x00\x01\x00\xff\x00"

FULL_ITEM = {
    "pk": S("round-trip"),
    "s": S("héllo wörld ✓ 🎉"),
    "n": N("-12.50"),
    "b": {"B": b64(BIN)},
    "t": {"BOOL": True},
    "f": {"BOOL": False},
    "nul": {"NULL": True},
    "ss": {"SS": ["b", "a", "c"]},
    "ns": {"NS": ["3", "1.50", "-2", "1e2"]},
    "bs": {"BS": [b64(b"\x00"), b64(b"\x01\x02"), b64(b"\xff")]},
    "l": {"L": [S("x"), N("007"), {"M": {}}, {"L": []}, {"NULL": True}, {"BOOL": False},
                {"SS": ["q"]}, {"L": [{"L": [N("1.0")]}]}]},
    "m": {"M": {
        "nested": {"M": {"deep": {"L": [S("a"), {"M": {"x": N("+5")}}]}}},
        "empty_s": S(""),
        "empty_b": {"B": ""},
        "empty_l": {"L": []},
        "empty_m": {"M": {}},
        "bin": {"B": b64(BIN)},
    }},
    "empty_s": S(""),
    "empty_b": {"B": ""},
    "empty_l": {"L": []},
    "empty_m": {"M": {}},
}

EXPECTED = dict(FULL_ITEM)
EXPECTED.update({
    "n": N("-12.5"),
    "ns": {"NS": ["3", "1.5", "-2", "100"]},
    "l": {"L": [S("x"), N("7"), {"M": {}}, {"L": []}, {"NULL": True}, {"BOOL": False},
                {"SS": ["q"]}, {"L": [{"L": [N("1")]}]}]},
    "m": {"M": dict(FULL_ITEM["m"]["M"], nested={"M": {"deep": {"L": [
        S("a"), {"M": {"x": N("5")}}]}}})},
})


def test_round_trip_all_types(api, tables):
    t = tables["s"]
    assert put(api, t, FULL_ITEM).status == 200
    for consistent in (True, False):
        resp = get(api, t, {"pk": S("round-trip")}, ConsistentRead=consistent)
        assert resp.status == 200, resp
        got = resp.json["Item"]
        assert normalize_item(got) == normalize_item(EXPECTED)
        assert got["b"] == {"B": "AAEA/wA="}
        assert got["l"]["L"][0] == S("x")
    assert delete(api, t, {"pk": S("round-trip")}).status == 200
    resp = get(api, t, {"pk": S("round-trip")}, ConsistentRead=True)
    assert resp.status == 200
    assert resp.body == b"{}"


def test_round_trip_boto3(ddb, tables):
    t = tables["s"]
    item = {"pk": S("boto"), "b": {"B": BIN}, "bs": {"BS": [b"\x00", b"\x00\x00"]},
            "m": {"M": {"l": {"L": [{"N": "1"}, {"B": b""}]}}}}
    ddb.put_item(TableName=t, Item=item)
    got = ddb.get_item(TableName=t, Key={"pk": S("boto")}, ConsistentRead=True)["Item"]
    assert got["b"] == {"B": BIN}
    assert set(got["bs"]["BS"]) == {b"\x00", b"\x00\x00"}
    assert got["m"] == {"M": {"l": {"L": [{"N": "1"}, {"B": b""}]}}}


def test_control_characters_come_back_escaped(api, ddb, tables):
    # Every character below 0x20, in keys, strings, sets, lists and maps: the answer must be
    # JSON that any client parses (raw control characters are not), and give them back.
    t = tables["s"]
    # Each between runs of plain text, so that a scan of 16 bytes at a time meets it.
    text = "".join("a" * 20 + chr(c) for c in range(0x20)) + "a" * 20
    item = {"pk": S("ctl" + text), "s": S(text), "ss": {"SS": [text, "x" + text]},
            "l": {"L": [S(text)]}, "m": {"M": {text: S(text)}}}
    assert put(api, t, item).status == 200
    resp = get(api, t, {"pk": S("ctl" + text)}, ConsistentRead=True)
    assert resp.status == 200, resp
    assert not any(b < 0x20 for b in resp.body), resp.body
    got = resp.json["Item"]
    assert got["s"] == S(text)
    assert sorted(got["ss"]["SS"]) == sorted([text, "x" + text])
    assert got["l"] == {"L": [S(text)]}
    assert got["m"] == {"M": {text: S(text)}}
    via_boto3 = ddb.get_item(TableName=t, Key={"pk": S("ctl" + text)})["Item"]
    assert via_boto3["s"] == S(text)


def test_put_replaces_whole_item(api, tables):
    t = tables["s"]
    put(api, t, {"pk": S("replace"), "a": S("1"), "b": S("2")})
    put(api, t, {"pk": S("replace"), "c": S("3")})
    assert get_item(api, t, {"pk": S("replace")}) == {"pk": S("replace"), "c": S("3")}


def test_delete_missing_item_succeeds(api, tables):
    resp = delete(api, tables["s"], {"pk": S("never-existed")})
    assert resp.status == 200
    assert resp.body == b"{}"


def test_get_missing_item_is_empty_object(api, tables):
    resp = get(api, tables["s"], {"pk": S("nothing-here")})
    assert resp.status == 200
    assert resp.json == {}


def test_hash_range_items_are_distinct(api, tables):
    t = tables["sn"]
    for sk in ("1", "2", "-3.5"):
        put(api, t, {"pk": S("hr"), "sk": N(sk), "v": S(sk)})
    assert get_item(api, t, {"pk": S("hr"), "sk": N("-3.50")})["v"] == S("-3.5")
    assert get_item(api, t, {"pk": S("hr"), "sk": N("2")})["v"] == S("2")
    delete(api, t, {"pk": S("hr"), "sk": N("2")})
    assert get_item(api, t, {"pk": S("hr"), "sk": N("2")}) is None
    assert get_item(api, t, {"pk": S("hr"), "sk": N("1")})["v"] == S("1")


def test_binary_keys(api, tables):
    t = tables["b"]
    keys = [b"\x00", b"\x00\x00", b"\x00\x01", b"\xff", b"a"]
    for i, k in enumerate(keys):
        put(api, t, {"pk": {"B": b64(k)}, "i": N(str(i))})
    for i, k in enumerate(keys):
        got = get_item(api, t, {"pk": {"B": b64(k)}})
        assert got == {"pk": {"B": b64(k)}, "i": N(str(i))}


# --------------------------------------------------------------------------- numbers

CANONICAL = [
    ("0042.1200", "42.12"),
    ("1e3", "1000"),
    ("1000.0", "1000"),
    ("+1000", "1000"),
    ("-0", "0"),
    ("-0.0", "0"),
    ("0.0", "0"),
    ("1.5e-3", "0.0015"),
    ("1E125", "1" + "0" * 125),
    ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
    ("-1234567890123456789.0123456789012345678", "-1234567890123456789.0123456789012345678"),
    ("123456789012345678901234567890123456780000",
     "123456789012345678901234567890123456780000"),
    ("0000000000000000000000000000000000000000.42", "0.42"),
    ("+1.23", "1.23"),
    (".123", "0.123"),
    ("5.", "5"),
    ("1e-003", "0.001"),
    ("-17.4E37", "-174" + "0" * 36),
    ("1E-130", "0." + "0" * 129 + "1"),
    ("9.9999999999999999999999999999999999999E+125", "9" * 38 + "0" * 88),
    ("-9.9999999999999999999999999999999999999E+125", "-" + "9" * 38 + "0" * 88),
]


@pytest.mark.parametrize("given,canonical", CANONICAL, ids=[c[0][:24] for c in CANONICAL])
def test_number_canonical_form(api, tables, given, canonical):
    t = tables["s"]
    key = {"pk": S("num-" + given)}
    resp = put(api, t, dict(key, n=N(given), ns={"NS": [given, "7"]}, l={"L": [N(given)]}))
    assert resp.status == 200, resp
    got = get_item(api, t, key)
    assert got["n"] == N(canonical)
    assert sorted(got["ns"]["NS"]) == sorted([canonical, "7"])
    assert got["l"] == {"L": [N(canonical)]}


def test_number_key_equivalence(api, make_table, ddb):
    t = make_table(hash_key=("pk", "N"))
    put(api, t, {"pk": N("1"), "v": S("first")})
    assert get_item(api, t, {"pk": N("1.0")}) == {"pk": N("1"), "v": S("first")}
    assert get_item(api, t, {"pk": N("1E0")}) == {"pk": N("1"), "v": S("first")}
    put(api, t, {"pk": N("1E0"), "v": S("second")})
    put(api, t, {"pk": N("0.00010e4"), "v": S("third")})
    assert get_item(api, t, {"pk": N("+1")}) == {"pk": N("1"), "v": S("third")}
    put(api, t, {"pk": N("10"), "v": S("ten")})
    assert get_item(api, t, {"pk": N("1e1")}) == {"pk": N("10"), "v": S("ten")}
    assert ddb.describe_table(TableName=t)["Table"]["ItemCount"] == 2
    delete(api, t, {"pk": N("1.000")})
    assert get_item(api, t, {"pk": N("1")}) is None


def test_number_key_zero_forms(api, tables):
    t = tables["n"]
    put(api, t, {"pk": N("-0.0"), "v": S("zero")})
    assert get_item(api, t, {"pk": N("0")}) == {"pk": N("0"), "v": S("zero")}


# --------------------------------------------------------------------------- ReturnValues


def test_put_return_values(api, tables):
    t = tables["s"]
    key = {"pk": S("rv-put")}
    resp = put(api, t, dict(key, v=S("1")), ReturnValues="ALL_OLD")
    assert resp.status == 200 and resp.json == {}, resp
    resp = put(api, t, dict(key, v=S("2"), extra={"SS": ["x"]}), ReturnValues="ALL_OLD")
    assert resp.json == {"Attributes": dict(key, v=S("1"))}
    resp = put(api, t, dict(key, v=S("3")), ReturnValues="NONE")
    assert resp.json == {}
    resp = put(api, t, dict(key, v=S("4")))
    assert resp.json == {}
    assert get_item(api, t, key) == dict(key, v=S("4"))


def test_delete_return_values(api, tables):
    t = tables["s"]
    key = {"pk": S("rv-del")}
    put(api, t, dict(key, v=N("1.50")))
    resp = delete(api, t, key, ReturnValues="ALL_OLD")
    assert resp.json == {"Attributes": dict(key, v=N("1.5"))}
    resp = delete(api, t, key, ReturnValues="ALL_OLD")
    assert resp.status == 200 and resp.json == {}
    put(api, t, dict(key, v=S("x")))
    assert delete(api, t, key, ReturnValues="NONE").json == {}
    assert get_item(api, t, key) is None


def _assert_only_all_old_or_none(resp):
    assert_validation(resp)
    # The 2026 write-operation envelope may or may not prefix this text.
    assert resp.message in ("ReturnValues can only be ALL_OLD or NONE",
                            COR_PREFIX + "ReturnValues can only be ALL_OLD or NONE"), resp.message


@pytest.mark.parametrize("rv", ["UPDATED_NEW", "ALL_NEW", "UPDATED_OLD"])
def test_put_return_values_only_all_old_or_none(api, tables, rv):
    t = tables["s"]
    key = {"pk": S("rv-bad-" + rv)}
    _assert_only_all_old_or_none(put(api, t, dict(key, v=S("1")), ReturnValues=rv))
    assert get_item(api, t, key) is None


@pytest.mark.parametrize("rv", ["UPDATED_NEW", "ALL_NEW", "UPDATED_OLD"])
def test_delete_return_values_only_all_old_or_none(api, tables, rv):
    t = tables["s"]
    key = {"pk": S("rv-bad-del-" + rv)}
    put(api, t, key)
    _assert_only_all_old_or_none(delete(api, t, key, ReturnValues=rv))
    assert get_item(api, t, key) == key


@pytest.mark.parametrize("op", ["PutItem", "DeleteItem"])
def test_return_values_bad_enum(api, tables, op):
    body = {"TableName": tables["s"], "ReturnValues": "EVERYTHING"}
    body["Item" if op == "PutItem" else "Key"] = {"pk": S("x")}
    assert_validation(api(op, body),
                      "1 validation error detected: Value 'EVERYTHING' at 'returnValues' failed "
                      "to satisfy constraint: Member must satisfy enum value set: "
                      "[ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]")


# --------------------------------------------------------------------------- GetItem options


def test_consistent_read_and_attributes_to_get(api, tables):
    t = tables["s"]
    key = {"pk": S("atg")}
    put(api, t, dict(key, a=S("1"), b=N("2"), c={"BOOL": True}))
    out = api.ok("GetItem", {"TableName": t, "Key": key, "ConsistentRead": True,
                             "AttributesToGet": ["a", "c", "missing"]})
    assert out == {"Item": {"a": S("1"), "c": {"BOOL": True}}}
    out = api.ok("GetItem", {"TableName": t, "Key": key, "ConsistentRead": False})
    assert out["Item"] == dict(key, a=S("1"), b=N("2"), c={"BOOL": True})


def test_attributes_to_get_duplicates(api, tables):
    resp = get(api, tables["s"], {"pk": S("x")}, AttributesToGet=["a", "b", "a"])
    assert_validation(resp, INVALID + "Duplicate value in attribute name: a")


# --------------------------------------------------------------------------- capacity


def sized_item(pk, size):
    """An item with key pk (S) of exactly `size` bytes (attribute name bytes plus value bytes)."""
    base = 2 + len(pk) + 4
    item = {"pk": S(pk), "data": S("x" * (size - base))}
    assert item_size(item) == size
    return item


def cc_total(table, units):
    return {"TableName": table, "CapacityUnits": units}


@pytest.mark.parametrize("size,units", [(10, 1.0), (1024, 1.0), (1025, 2.0), (2048, 2.0),
                                        (10 * 1024 + 1, 11.0), (409600, 400.0)])
def test_put_capacity_new_item(api, tables, size, units):
    t = tables["s"]
    resp = put(api, t, sized_item(f"p{size}", size), ReturnConsumedCapacity="TOTAL")
    assert resp.status == 200, resp
    assert resp.json == {"ConsumedCapacity": cc_total(t, units)}


def test_put_capacity_is_larger_of_old_and_new(api, tables):
    t = tables["s"]
    put(api, t, sized_item("cap-old", 3000))
    resp = put(api, t, sized_item("cap-old", 20), ReturnConsumedCapacity="TOTAL",
               ReturnValues="ALL_OLD")
    assert resp.json["ConsumedCapacity"] == cc_total(t, 3.0)
    assert resp.json["Attributes"] == sized_item("cap-old", 3000)
    resp = put(api, t, sized_item("cap-old", 1500), ReturnConsumedCapacity="TOTAL")
    assert resp.json["ConsumedCapacity"] == cc_total(t, 2.0)


@pytest.mark.parametrize("size,eventual,strong", [(100, 0.5, 1.0), (4096, 0.5, 1.0),
                                                  (4097, 1.0, 2.0), (12289, 2.0, 4.0)])
def test_get_capacity(api, tables, size, eventual, strong):
    t = tables["s"]
    item = sized_item(f"g{size}", size)
    put(api, t, item)
    key = {"pk": item["pk"]}
    resp = get(api, t, key, ReturnConsumedCapacity="TOTAL")
    assert resp.json == {"Item": item, "ConsumedCapacity": cc_total(t, eventual)}
    resp = get(api, t, key, ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert resp.json == {"Item": item, "ConsumedCapacity": cc_total(t, strong)}


def test_get_capacity_missing_item(api, tables):
    t = tables["s"]
    resp = get(api, t, {"pk": S("cap-none")}, ReturnConsumedCapacity="TOTAL")
    assert resp.json == {"ConsumedCapacity": cc_total(t, 0.5)}
    resp = get(api, t, {"pk": S("cap-none")}, ReturnConsumedCapacity="TOTAL",
               ConsistentRead=True)
    assert resp.json == {"ConsumedCapacity": cc_total(t, 1.0)}


def test_delete_capacity(api, tables):
    t = tables["s"]
    put(api, t, sized_item("cap-del", 2500))
    resp = delete(api, t, {"pk": S("cap-del")}, ReturnConsumedCapacity="TOTAL")
    assert resp.json == {"ConsumedCapacity": cc_total(t, 3.0)}
    resp = delete(api, t, {"pk": S("cap-del")}, ReturnConsumedCapacity="TOTAL")
    assert resp.json == {"ConsumedCapacity": cc_total(t, 1.0)}


def test_capacity_indexes_and_none(api, tables):
    t = tables["s"]
    item = sized_item("cap-idx", 1500)
    resp = put(api, t, item, ReturnConsumedCapacity="INDEXES")
    assert resp.json == {"ConsumedCapacity": {"TableName": t, "CapacityUnits": 2.0,
                                              "Table": {"CapacityUnits": 2.0}}}
    resp = get(api, t, {"pk": item["pk"]}, ReturnConsumedCapacity="INDEXES",
               ConsistentRead=True)
    assert resp.json["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": 1.0,
                                             "Table": {"CapacityUnits": 1.0}}
    resp = delete(api, t, {"pk": item["pk"]}, ReturnConsumedCapacity="INDEXES")
    assert resp.json["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": 2.0,
                                             "Table": {"CapacityUnits": 2.0}}
    assert put(api, t, item, ReturnConsumedCapacity="NONE").json == {}
    assert "ConsumedCapacity" not in get(api, t, {"pk": item["pk"]},
                                         ReturnConsumedCapacity="NONE").json


@pytest.mark.parametrize("op", ["PutItem", "GetItem", "DeleteItem"])
def test_return_consumed_capacity_bad_enum(api, tables, op):
    body = {"TableName": tables["s"], "ReturnConsumedCapacity": "ALL"}
    body["Item" if op == "PutItem" else "Key"] = {"pk": S("x")}
    assert_validation(api(op, body),
                      "1 validation error detected: Value 'ALL' at 'returnConsumedCapacity' "
                      "failed to satisfy constraint: Member must satisfy enum value set: "
                      "[INDEXES, TOTAL, NONE]")


def test_boto3_consumed_capacity(ddb, tables):
    t = tables["s"]
    out = ddb.put_item(TableName=t, Item={"pk": S("cap-boto")}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == cc_total(t, 1.0)


# --------------------------------------------------------------------------- AttributeValues

INVALID_VALUES = [
    ({}, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"),
    ({"S": "a", "N": "1"}, "Supplied AttributeValue has more than one datatypes set, must "
                           "contain exactly one of the supported datatypes"),
    ({"BOOL": True, "NULL": True}, "Supplied AttributeValue has more than one datatypes set, "
                                   "must contain exactly one of the supported datatypes"),
    ({"NULL": False}, INVALID + "Null attribute value types must have the value of true"),
    ({"SS": []}, INVALID + "An string set  may not be empty"),
    ({"NS": []}, INVALID + "An number set  may not be empty"),
    ({"BS": []}, INVALID + "Binary sets should not be empty"),
    ({"SS": ["a", "a"]}, INVALID + 'Input collection ["a", "a"] contains duplicates.'),
    ({"SS": ["a", "b", "a"]}, INVALID + 'Input collection ["a", "b", "a"] contains duplicates.'),
    ({"SS": ["c", "b", "c", "a"]},
     INVALID + 'Input collection ["b", "c", "c", "a"] contains duplicates.'),
    ({"BS": ["Yg==", "Yg=="]}, INVALID + "Input collection [Yg==, Yg==]of type BS contains "
                                         "duplicates."),
    ({"NS": ["1", "1.0"]}, INVALID + "Input collection contains duplicates."),
    ({"NS": ["1", "2", "1e0"]}, INVALID + "Input collection contains duplicates."),
    ({"N": "abc"}, "The parameter cannot be converted to a numeric value: abc"),
    ({"N": ""}, "The parameter cannot be converted to a numeric value"),
    ({"N": "NaN"}, "The parameter cannot be converted to a numeric value: NaN"),
    ({"N": "Infinity"}, "The parameter cannot be converted to a numeric value: Infinity"),
    ({"N": "0x10"}, "The parameter cannot be converted to a numeric value: 0x10"),
    ({"N": " 1"}, "The parameter cannot be converted to a numeric value:  1"),
    ({"N": "1.2.3"}, "The parameter cannot be converted to a numeric value: 1.2.3"),
    ({"N": "."}, "The parameter cannot be converted to a numeric value: ."),
    ({"N": "1" * 39}, "Attempting to store more than 38 significant digits in a Number"),
    ({"N": "1.00000000000000000000000000000000000001"},
     "Attempting to store more than 38 significant digits in a Number"),
    ({"N": "1e126"}, "Number overflow. Attempting to store a number with magnitude larger than "
                     "supported range"),
    ({"N": "-1e126"}, "Number overflow. Attempting to store a number with magnitude larger than "
                      "supported range"),
    ({"N": "1e-131"}, "Number underflow. Attempting to store a number with magnitude smaller "
                      "than supported range"),
    ({"NS": ["1", "abc"]}, "The parameter cannot be converted to a numeric value: abc"),
    ({"M": {"x": {"SS": []}}}, INVALID + "An string set  may not be empty"),
    ({"L": [S("ok"), {}]}, "Supplied AttributeValue is empty, must contain exactly one of the "
                           "supported datatypes"),
    ({"L": [{"M": {"deep": {"N": "1e126"}}}]},
     "Number overflow. Attempting to store a number with magnitude larger than supported range"),
]
INVALID_IDS = [f"{i}-{str(v)[:28]}" for i, (v, _) in enumerate(INVALID_VALUES)]


@pytest.mark.parametrize("value,message", INVALID_VALUES, ids=INVALID_IDS)
def test_put_invalid_attribute_value_is_enveloped(api, tables, value, message):
    t = tables["s"]
    resp = put(api, t, {"pk": S("bad-value"), "a": value})
    assert_validation(resp, COR_PREFIX + message)
    assert get_item(api, t, {"pk": S("bad-value")}) is None


@pytest.mark.parametrize("value,message", INVALID_VALUES, ids=INVALID_IDS)
def test_get_invalid_attribute_value_is_bare(api, tables, value, message):
    assert_validation(get(api, tables["s"], {"pk": value}), message)


@pytest.mark.parametrize("value,message", INVALID_VALUES, ids=INVALID_IDS)
def test_delete_invalid_attribute_value_is_enveloped(api, tables, value, message):
    assert_validation(delete(api, tables["s"], {"pk": value}), COR_PREFIX + message)


def test_invalid_value_reported_before_missing_table(api):
    missing = unique_name()
    resp = put(api, missing, {"pk": S("a"), "s": {"SS": []}})
    assert_validation(resp, COR_PREFIX + INVALID + "An string set  may not be empty")
    resp = get(api, missing, {"pk": {"N": "abc"}})
    assert_validation(resp, "The parameter cannot be converted to a numeric value: abc")


def nested(depth):
    v = S("leaf")
    for i in range(depth):
        v = {"L": [v]} if i % 2 else {"M": {"m": v}}
    return v


def test_nesting_31_levels_accepted(api, tables):
    t = tables["s"]
    item = {"pk": S("nest-31"), "deep": nested(31)}
    assert put(api, t, item).status == 200
    assert get_item(api, t, {"pk": S("nest-31")}) == item


def test_nesting_32_levels_rejected(api, tables):
    resp = put(api, tables["s"], {"pk": S("nest-32"), "deep": nested(32)})
    assert_validation(resp, COR_PREFIX + "Nesting Levels have exceeded supported limits: "
                                         "Attributes in the item have nested levels beyond "
                                         "supported limit")


# --------------------------------------------------------------------------- item size


def test_item_size_limit_exact(api, tables):
    t = tables["s"]
    ok = sized_item("size-ok", 409600)
    assert put(api, t, ok).status == 200
    assert get_item(api, t, {"pk": S("size-ok")}) == ok
    resp = put(api, t, sized_item("size-big", 409601))
    assert_validation(resp, "Item size has exceeded the maximum allowed size")
    assert get_item(api, t, {"pk": S("size-big")}) is None


def test_item_size_counts_every_type(api, tables):
    t = tables["s"]
    item = {
        "pk": S("size-mixed"),
        "num": N("123456"),
        "neg": N("-27"),
        "frac": N("3.14159"),
        "m": {"M": {"a": S("xy"), "b": {"NULL": True}}},
        "l": {"L": [N("1"), {"BOOL": False}, {"L": []}]},
        "ss": {"SS": ["ab", "c"]},
        "ns": {"NS": ["1", "1000"]},
        "bs": {"BS": [b64(b"\x00\x01"), b64(b"\x02")]},
        "bin": {"B": b64(b"\x00\x00\x00")},
        "flag": {"BOOL": True},
        "nothing": {"NULL": True},
        "ünï": S("é"),
    }
    fixed = item_size(item)
    pad_name = "pad"
    item[pad_name] = S("p" * (409600 - fixed - len(pad_name)))
    assert item_size(item) == 409600
    assert put(api, t, item).status == 200
    item[pad_name] = S(item[pad_name]["S"] + "p")
    assert_validation(put(api, t, item), "Item size has exceeded the maximum allowed size")


# --------------------------------------------------------------------------- keys


def test_put_missing_key(api, tables):
    assert_validation(put(api, tables["s"], {"other": S("x")}),
                      INVALID + "Missing the key pk in the item")
    assert_validation(put(api, tables["sn"], {"pk": S("x")}),
                      INVALID + "Missing the key sk in the item")


def test_put_key_type_mismatch(api, tables):
    assert_validation(put(api, tables["s"], {"pk": N("1")}),
                      INVALID + "Type mismatch for key pk expected: S actual: N")
    assert_validation(put(api, tables["sn"], {"pk": S("a"), "sk": S("1")}),
                      INVALID + "Type mismatch for key sk expected: N actual: S")
    assert_validation(put(api, tables["b"], {"pk": {"SS": ["a"]}}),
                      INVALID + "Type mismatch for key pk expected: B actual: SS")


def test_put_empty_string_key(api, tables):
    assert_validation(put(api, tables["s"], {"pk": S("")}),
                      NOT_VALID + "The AttributeValue for a key attribute cannot contain an "
                                  "empty string value. Key: pk")
    assert_validation(put(api, tables["ss"], {"pk": S("a"), "sk": S("")}),
                      NOT_VALID + "The AttributeValue for a key attribute cannot contain an "
                                  "empty string value. Key: sk")


def test_put_empty_binary_key(api, tables):
    assert_validation(put(api, tables["b"], {"pk": {"B": ""}}),
                      NOT_VALID + "The AttributeValue for a key attribute cannot contain an "
                                  "empty binary value. Key: pk")


@pytest.mark.parametrize("op", ["GetItem", "DeleteItem"])
def test_key_parameter_empty_string(api, tables, op):
    resp = api(op, {"TableName": tables["s"], "Key": {"pk": S("")}})
    assert_validation(resp, INVALID + "The AttributeValue for a key attribute cannot contain "
                                      "an empty string value. Key: pk")


@pytest.mark.parametrize("op", ["GetItem", "DeleteItem"])
def test_key_parameter_empty_binary(api, tables, op):
    resp = api(op, {"TableName": tables["b"], "Key": {"pk": {"B": ""}}})
    assert_validation(resp, INVALID + "The AttributeValue for a key attribute cannot contain "
                                      "an empty binary value. Key: pk")


def test_hash_key_size_limit(api, tables):
    t = tables["s"]
    ok = "é" * 1024
    assert len(ok.encode()) == 2048
    assert put(api, t, {"pk": S(ok)}).status == 200
    assert get_item(api, t, {"pk": S(ok)}) == {"pk": S(ok)}
    assert_validation(put(api, t, {"pk": S(ok + "a")}),
                      INVALID + "Size of hashkey has exceeded the maximum size limit of2048 bytes")
    tb = tables["b"]
    assert put(api, tb, {"pk": {"B": b64(b"\x01" * 2048)}}).status == 200
    assert_validation(put(api, tb, {"pk": {"B": b64(b"\x01" * 2049)}}),
                      INVALID + "Size of hashkey has exceeded the maximum size limit of2048 bytes")


def test_range_key_size_limit(api, tables):
    t = tables["ss"]
    assert put(api, t, {"pk": S("rk"), "sk": S("r" * 1024)}).status == 200
    assert_validation(put(api, t, {"pk": S("rk"), "sk": S("r" * 1025)}),
                      INVALID + "Aggregated size of all range keys has exceeded the size limit "
                                "of 1024 bytes")


def test_large_number_key_is_fine(api, tables):
    t = tables["n"]
    big = "9" * 38 + "0" * 88
    assert put(api, t, {"pk": N(big)}).status == 200
    assert get_item(api, t, {"pk": N(big)}) == {"pk": N(big)}


KEY_SHAPES = [
    {"pk": S("a")},
    {"pk": S("a"), "sk": N("1"), "extra": S("x")},
    {"pk": N("1"), "sk": N("1")},
    {"pk": S("a"), "sk": S("1")},
    {"other": S("a"), "sk": N("1")},
    {"sk": N("1")},
]


@pytest.mark.parametrize("op", ["GetItem", "DeleteItem"])
@pytest.mark.parametrize("key", KEY_SHAPES, ids=[str(i) for i in range(len(KEY_SHAPES))])
def test_key_does_not_match_schema(api, tables, op, key):
    resp = api(op, {"TableName": tables["sn"], "Key": key})
    assert_validation(resp, KEY_MISMATCH)


@pytest.mark.parametrize("op", ["GetItem", "DeleteItem"])
def test_key_does_not_match_schema_hash_only(api, tables, op):
    for key in ({"pk": S("a"), "sk": S("b")}, {"pk": {"B": "AA=="}}, {"PK": S("a")}):
        assert_validation(api(op, {"TableName": tables["s"], "Key": key}), KEY_MISMATCH)


# --------------------------------------------------------------------------- missing tables


@pytest.mark.parametrize("op,body", [
    ("PutItem", {"Item": {"pk": S("a")}}),
    ("GetItem", {"Key": {"pk": S("a")}}),
    ("DeleteItem", {"Key": {"pk": S("a")}}),
])
def test_data_ops_on_missing_table(api, op, body):
    assert_not_found(api(op, dict(body, TableName=unique_name())))


def test_data_ops_on_missing_table_boto3(ddb):
    with pytest.raises(ddb.exceptions.ResourceNotFoundException) as e:
        ddb.get_item(TableName=unique_name(), Key={"pk": S("a")})
    assert e.value.response["Error"]["Message"] == "Requested resource not found"


@pytest.mark.parametrize("op,body,path", [
    ("PutItem", {"TableName": "abc"}, "item"),
    ("GetItem", {"TableName": "abc"}, "key"),
    ("DeleteItem", {"TableName": "abc"}, "key"),
])
def test_required_members(api, op, body, path):
    assert_validation(api(op, body),
                      f"1 validation error detected: Value null at '{path}' failed to satisfy "
                      f"constraint: Member must not be null")
