"""UpdateItem with UpdateExpression: upserts, SET arithmetic, if_not_exists, list_append, list
indexes, REMOVE, ADD, DELETE, nested maps, ReturnValues, and the parse-time and update-time
errors (request-validation errors carry the `1 validation error detected: ` prefix)."""

import uuid

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_validation,
    b64,
    create_table_args,
    normalize,
    normalize_item,
    unique_name,
    wait_table_active,
)

INVALID = "One or more parameter values were invalid: "
MISSING_OPERAND = "The provided expression refers to an attribute that does not exist in the item"
BAD_OPERAND_TYPE = "An operand in the update expression has an incorrect data type"
TYPE_MISMATCH = "Type mismatch for attribute to update"
BAD_PATH = "The document path provided in the update expression is invalid for update"
OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger than supported "
            "range")


def S(x):
    return {"S": x}


def N(x):
    return {"N": x}


def L(*xs):
    return {"L": list(xs)}


def M(**kw):
    return {"M": kw}


def SS(*xs):
    return {"SS": list(xs)}


def NS(*xs):
    return {"NS": list(xs)}


def BS(*xs):
    return {"BS": [b64(x) for x in xs]}


TABLE_SPECS = {
    "s": dict(hash_key=("pk", "S")),
    "sn": dict(hash_key=("pk", "S"), range_key=("sk", "N")),
    "gsi": dict(
        hash_key=("pk", "S"),
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "gk", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-gk",
                                 "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}]),
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
    """Module-wide tables s (pk S), sn (pk S, sk N), gsi (pk S, GSI on gk S); made again if
    the shared server was restarted."""
    if _module_tables["generation"] != server.generation:
        c = server.client()
        names = {}
        for k, spec in TABLE_SPECS.items():
            names[k] = unique_name("upd-" + k)
            c.create_table(**create_table_args(names[k], **spec))
        for name in names.values():
            wait_table_active(c, name)
        _module_tables.update(generation=server.generation, names=names)
    return _module_tables["names"]


@pytest.fixture
def table(tables):
    return tables["s"]


def new_key():
    return {"pk": S("u-" + uuid.uuid4().hex[:12])}


def read(api, table, key):
    out = api.ok("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    return out.get("Item")


def update(api, table, key, expression, names=None, values=None, **extra):
    body = {"TableName": table, "Key": key}
    if expression is not None:
        body["UpdateExpression"] = expression
    if names is not None:
        body["ExpressionAttributeNames"] = names
    if values is not None:
        body["ExpressionAttributeValues"] = values
    body.update(extra)
    return api("UpdateItem", body)


def update_ok(api, table, key, expression, names=None, values=None, **extra):
    resp = update(api, table, key, expression, names, values, **extra)
    assert resp.status == 200, resp
    return resp.json


def seed(api, table, **attrs):
    key = new_key()
    item = dict(key, **attrs)
    api.ok("PutItem", {"TableName": table, "Item": item})
    return key, item


def same(a, b):
    return normalize_item(a) == normalize_item(b)


def assert_write_validation(resp, message):
    assert_validation(resp, COR_PREFIX + message)


# --------------------------------------------------------------------------- upsert


def test_upsert_creates_item(api, table):
    key = new_key()
    out = update_ok(api, table, key, "SET a = :a, b = :b", values={":a": S("x"), ":b": N("1")},
                    ReturnValues="ALL_NEW")
    assert out == {"Attributes": dict(key, a=S("x"), b=N("1"))}
    assert read(api, table, key) == dict(key, a=S("x"), b=N("1"))


def test_upsert_all_old_has_no_attributes(api, table):
    key = new_key()
    assert update_ok(api, table, key, "SET a = :a", values={":a": S("x")},
                     ReturnValues="ALL_OLD") == {}
    assert read(api, table, key) == dict(key, a=S("x"))


def test_upsert_composite_key(api, tables):
    t = tables["sn"]
    key = {"pk": S("c-" + uuid.uuid4().hex[:8]), "sk": N("7.50")}
    out = update_ok(api, t, key, "ADD c :one", values={":one": N("1")}, ReturnValues="ALL_NEW")
    assert out == {"Attributes": {"pk": key["pk"], "sk": N("7.5"), "c": N("1")}}


def test_update_replaces_only_named_attributes(api, table):
    key, _ = seed(api, table, a=S("1"), b=S("2"))
    update_ok(api, table, key, "SET b = :v, c = :v", values={":v": S("new")})
    assert read(api, table, key) == dict(key, a=S("1"), b=S("new"), c=S("new"))


def test_update_boto3(ddb, table, api):
    key = new_key()
    out = ddb.update_item(TableName=table, Key=key,
                          UpdateExpression="SET #c = if_not_exists(#c, :zero) + :one",
                          ExpressionAttributeNames={"#c": "count"},
                          ExpressionAttributeValues={":zero": N("0"), ":one": N("1")},
                          ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"count": N("1")}
    out = ddb.update_item(TableName=table, Key=key,
                          UpdateExpression="SET #c = if_not_exists(#c, :zero) + :one",
                          ExpressionAttributeNames={"#c": "count"},
                          ExpressionAttributeValues={":zero": N("0"), ":one": N("1")},
                          ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"count": N("2")}


# --------------------------------------------------------------------------- SET arithmetic


@pytest.mark.parametrize("stored,expression,operand,result", [
    ("0.1", "n + :d", "0.2", "0.3"),
    ("1", "n - :d", "0.9", "0.1"),
    ("5", "n - :d", "7", "-2"),
    ("0.5", "n - :d", "0.5", "0"),
    ("1.10", "n + :d", "2.20", "3.3"),
    ("12345678901234567890123456789012345678", "n + :d", "1",
     "12345678901234567890123456789012345679"),
    ("99999999999999999999999999999999999999", "n + :d", "1",
     "100000000000000000000000000000000000000"),
    ("1E125", "n + :d", "1E125", "2" + "0" * 125),
    ("-1E-130", "n + :d", "2E-130", "0." + "0" * 129 + "1"),
    ("3", ":d - n", "10", "7"),
    ("1e2", "n + :d", "-1e2", "0"),
])
def test_set_arithmetic_exact(api, table, stored, expression, operand, result):
    key, _ = seed(api, table, n=N(stored))
    out = update_ok(api, table, key, f"SET n = {expression}", values={":d": N(operand)},
                    ReturnValues="UPDATED_NEW")
    assert out == {"Attributes": {"n": N(result)}}
    assert read(api, table, key)["n"] == N(result)


def test_set_arithmetic_constants_and_paths(api, table):
    key, _ = seed(api, table, a=N("0.1"), b=N("0.2"))
    update_ok(api, table, key, "SET c = a + b, d = :x + :y, e = b - a",
              values={":x": N("0.1"), ":y": N("0.2")})
    item = read(api, table, key)
    assert (item["c"], item["d"], item["e"]) == (N("0.3"), N("0.3"), N("0.1"))


@pytest.mark.parametrize("stored,expression,operand", [
    ("12345678901234567890123456789012345678", "n + :d", "0.1"),
    ("9.9999999999999999999999999999999999999E+125", "n + :d", "1E+125"),
    ("-9.9999999999999999999999999999999999999E+125", "n - :d", "1E+125"),
    ("1E125", "n - :d", "1"),
    ("2E-130", "n - :d", "1.5E-130"),
])
def test_set_arithmetic_overflow(api, table, stored, expression, operand):
    key, _ = seed(api, table, n=N(stored))
    before = read(api, table, key)
    resp = update(api, table, key, f"SET n = {expression}", values={":d": N(operand)})
    assert_validation(resp, OVERFLOW)
    assert read(api, table, key) == before


def test_add_arithmetic_exact_and_overflow(api, table):
    key, _ = seed(api, table, n=N("0.1"))
    update_ok(api, table, key, "ADD n :d", values={":d": N("0.2")})
    assert read(api, table, key)["n"] == N("0.3")
    key, item = seed(api, table, n=N("99999999999999999999999999999999999999"))
    resp = update(api, table, key, "ADD n :d", values={":d": N("0.5")})
    assert_validation(resp, OVERFLOW)
    assert same(read(api, table, key), item)


def test_arithmetic_on_wrong_stored_type(api, table):
    key, item = seed(api, table, s=S("1"), n=N("1"))
    resp = update(api, table, key, "SET n = s + :one", values={":one": N("1")})
    assert_validation(resp, BAD_OPERAND_TYPE)
    assert read(api, table, key) == item


def test_arithmetic_on_missing_attribute(api, table):
    key, item = seed(api, table, n=N("1"))
    resp = update(api, table, key, "SET n = absent + :one", values={":one": N("1")})
    assert_validation(resp, MISSING_OPERAND)
    assert read(api, table, key) == item


def test_arithmetic_on_missing_item_does_not_create(api, table):
    key = new_key()
    resp = update(api, table, key, "SET n = n + :one", values={":one": N("1")})
    assert_validation(resp, MISSING_OPERAND)
    assert read(api, table, key) is None


@pytest.mark.parametrize("expression,value,type_code", [
    ("SET a = a + :v", S("1"), "S"),
    ("SET a = :v - a", {"BOOL": True}, "BOOL"),
    ("SET a = a + :v", SS("1"), "SS"),
])
def test_arithmetic_constant_wrong_type(api, table, expression, value, type_code):
    op = "+" if "+" in expression else "-"
    resp = update(api, table, new_key(), expression, values={":v": value})
    assert_write_validation(resp, "Invalid UpdateExpression: Incorrect operand type for operator "
                                  f"or function; operator or function: {op}, operand type: "
                                  f"{type_code}")


# --------------------------------------------------------------------------- if_not_exists


def test_if_not_exists(api, table):
    key, _ = seed(api, table, a=S("kept"))
    update_ok(api, table, key, "SET a = if_not_exists(a, :d), b = if_not_exists(b, :d), "
                               "c = if_not_exists(a, :d)", values={":d": S("default")})
    assert read(api, table, key) == dict(key, a=S("kept"), b=S("default"), c=S("kept"))


def test_if_not_exists_counter(api, table):
    key = new_key()
    for _ in range(3):
        update_ok(api, table, key, "SET c = if_not_exists(c, :zero) + :one",
                  values={":zero": N("0"), ":one": N("1")})
    assert read(api, table, key) == dict(key, c=N("3"))


def test_if_not_exists_nested(api, table):
    key, _ = seed(api, table, m=M(x=N("1")))
    update_ok(api, table, key, "SET m.x = if_not_exists(m.x, :d), m.y = if_not_exists(m.y, :d)",
              values={":d": N("9")})
    assert read(api, table, key)["m"] == M(x=N("1"), y=N("9"))


@pytest.mark.parametrize("expression,message", [
    ("SET a = if_not_exists(a)",
     "Incorrect number of operands for operator or function; operator or function: "
     "if_not_exists, number of operands: 1"),
    ("SET a = if_not_exists(:v, a)",
     "Operator or function requires a document path; operator or function: if_not_exists"),
    ("SET a = list_append(:v)",
     "Incorrect number of operands for operator or function; operator or function: "
     "list_append, number of operands: 1"),
    ("SET a = foo(a, :v)", "Invalid function name; function: foo"),
    ("SET a = If_Not_Exists(a, :v)", "Invalid function name; function: If_Not_Exists"),
])
def test_update_function_errors(api, table, expression, message):
    resp = update(api, table, new_key(), expression, values={":v": L(S("x"))})
    assert_write_validation(resp, "Invalid UpdateExpression: " + message)


# --------------------------------------------------------------------------- list_append


def test_list_append_both_orders(api, table):
    key, _ = seed(api, table, l=L(N("1"), N("2")))
    update_ok(api, table, key, "SET l = list_append(l, :t)", values={":t": L(N("3"))})
    assert read(api, table, key)["l"] == L(N("1"), N("2"), N("3"))
    update_ok(api, table, key, "SET l = list_append(:h, l)", values={":h": L(N("-1"), N("0"))})
    assert read(api, table, key)["l"] == L(N("-1"), N("0"), N("1"), N("2"), N("3"))


def test_list_append_constants_and_missing(api, table):
    key = new_key()
    update_ok(api, table, key,
              "SET a = list_append(:x, :y), b = list_append(if_not_exists(b, :e), :y)",
              values={":x": L(S("a")), ":y": L(S("b"), M()), ":e": L()})
    item = read(api, table, key)
    assert item["a"] == L(S("a"), S("b"), M())
    assert item["b"] == L(S("b"), M())


def test_list_append_missing_operand(api, table):
    key, item = seed(api, table, x=N("1"))
    resp = update(api, table, key, "SET l = list_append(l, :t)", values={":t": L(N("3"))})
    assert_validation(resp, MISSING_OPERAND)
    assert read(api, table, key) == item


def test_list_append_stored_non_list(api, table):
    key, item = seed(api, table, l=SS("a"))
    resp = update(api, table, key, "SET l = list_append(l, :t)", values={":t": L(S("b"))})
    assert_validation(resp, BAD_OPERAND_TYPE)
    assert read(api, table, key) == item


@pytest.mark.parametrize("value,code", [(S("x"), "S"), (N("1"), "N"), (SS("x"), "SS"),
                                        (M(), "M")])
def test_list_append_constant_non_list(api, table, value, code):
    resp = update(api, table, new_key(), "SET l = list_append(l, :t)", values={":t": value})
    assert_write_validation(resp, "Invalid UpdateExpression: Incorrect operand type for operator "
                                  "or function; operator or function: list_append, operand type: "
                                  + code)


# --------------------------------------------------------------------------- list indexes


def test_set_list_index_replaces_and_appends(api, table):
    key, _ = seed(api, table, l=L(S("a"), S("b")))
    update_ok(api, table, key, "SET l[1] = :x", values={":x": S("B")})
    assert read(api, table, key)["l"] == L(S("a"), S("B"))
    update_ok(api, table, key, "SET l[10] = :x", values={":x": S("c")})
    assert read(api, table, key)["l"] == L(S("a"), S("B"), S("c"))


def test_set_several_indexes_beyond_end_in_index_order(api, table):
    key, _ = seed(api, table, l=L(S("a"), S("b")))
    update_ok(api, table, key, "SET l[10] = :ten, l[5] = :five, l[0] = :zero",
              values={":ten": S("ten"), ":five": S("five"), ":zero": S("zero")})
    assert read(api, table, key)["l"] == L(S("zero"), S("b"), S("five"), S("ten"))


def test_remove_list_elements_uses_original_indexes(api, table):
    key, _ = seed(api, table, l=L(*[S(c) for c in "abcde"]))
    update_ok(api, table, key, "REMOVE l[1], l[3]")
    assert read(api, table, key)["l"] == L(S("a"), S("c"), S("e"))


def test_remove_list_elements_any_order_and_beyond_end(api, table):
    key, _ = seed(api, table, l=L(*[S(c) for c in "abcde"]))
    update_ok(api, table, key, "REMOVE l[4], l[0], l[9]")
    assert read(api, table, key)["l"] == L(S("b"), S("c"), S("d"))


def test_remove_attributes_and_missing(api, table):
    key, _ = seed(api, table, a=S("1"), b=S("2"), m=M(x=N("1"), y=N("2")))
    update_ok(api, table, key, "REMOVE a, absent, m.x, m.nothing")
    assert read(api, table, key) == dict(key, b=S("2"), m=M(y=N("2")))


def test_nested_list_in_map(api, table):
    key, _ = seed(api, table, m=M(l=L(M(k=S("v")), N("2"))))
    update_ok(api, table, key, "SET m.l[0].k = :a, m.l[0].fresh = :b REMOVE m.l[1]",
              values={":a": S("A"), ":b": S("B")})
    assert read(api, table, key)["m"] == M(l=L(M(k=S("A"), fresh=S("B"))))


# --------------------------------------------------------------------------- ADD / DELETE


def test_add_numbers(api, table):
    key, _ = seed(api, table, n=N("10"))
    update_ok(api, table, key, "ADD n :d, fresh :d", values={":d": N("-2.5")})
    item = read(api, table, key)
    assert (item["n"], item["fresh"]) == (N("7.5"), N("-2.5"))


def test_add_creates_item(api, table):
    key = new_key()
    out = update_ok(api, table, key, "ADD n :d, s :s", values={":d": N("5"), ":s": SS("a")},
                    ReturnValues="ALL_NEW")
    assert same(out["Attributes"], dict(key, n=N("5"), s=SS("a")))


@pytest.mark.parametrize("stored,added,result,created", [
    (SS("a", "b"), SS("b", "c"), SS("a", "b", "c"), SS("b", "c")),
    (NS("1", "2"), NS("2.0", "3"), NS("1", "2", "3"), NS("2", "3")),
    (BS(b"\x01"), BS(b"\x01", b"\x02"), BS(b"\x01", b"\x02"), BS(b"\x01", b"\x02")),
])
def test_add_to_sets(api, table, stored, added, result, created):
    key, _ = seed(api, table, s=stored)
    out = update_ok(api, table, key, "ADD s :v, t :v", values={":v": added},
                    ReturnValues="UPDATED_NEW")
    assert same(out["Attributes"], {"s": result, "t": created})
    item = read(api, table, key)
    assert normalize(item["s"]) == normalize(result)


def test_add_nested_number(api, table):
    key, _ = seed(api, table, m=M(c=N("1")))
    update_ok(api, table, key, "ADD m.c :one, m.d :one", values={":one": N("1")})
    assert read(api, table, key)["m"] == M(c=N("2"), d=N("1"))


def test_delete_from_sets(api, table):
    key, _ = seed(api, table, ss=SS("a", "b", "c"), ns=NS("1", "2"), bs=BS(b"\x01", b"\x02"))
    update_ok(api, table, key, "DELETE ss :s, ns :n, bs :b, absent :s",
              values={":s": SS("a", "x"), ":n": NS("2.0"), ":b": BS(b"\x02")})
    item = read(api, table, key)
    assert normalize(item["ss"]) == normalize(SS("b", "c"))
    assert item["ns"] == NS("1")
    assert item["bs"] == BS(b"\x01")
    assert "absent" not in item


def test_delete_last_elements_removes_attribute(api, table):
    key, _ = seed(api, table, ss=SS("a", "b"), keep=S("k"))
    out = update_ok(api, table, key, "DELETE ss :s", values={":s": SS("a", "b", "z")},
                    ReturnValues="ALL_NEW")
    assert out == {"Attributes": dict(key, keep=S("k"))}
    assert read(api, table, key) == dict(key, keep=S("k"))


@pytest.mark.parametrize("clause,value,word", [
    ("ADD", S("x"), "STRING"),
    ("ADD", {"B": b64(b"x")}, "BINARY"),
    ("ADD", {"BOOL": True}, "BOOLEAN"),
    ("ADD", {"NULL": True}, "NULL"),
    ("ADD", L(N("1")), "LIST"),
    ("ADD", M(), "MAP"),
    ("DELETE", N("1"), "NUMBER"),
    ("DELETE", S("x"), "STRING"),
    ("DELETE", L(S("x")), "LIST"),
])
def test_add_delete_constant_types(api, table, clause, value, word):
    resp = update(api, table, new_key(), f"{clause} a :v", values={":v": value})
    assert_write_validation(resp, "Invalid UpdateExpression: Incorrect operand type for operator "
                                  f"or function; operator: {clause}, operand type: {word}")


@pytest.mark.parametrize("stored,expression,value,message", [
    (S("x"), "ADD a :v", N("1"), BAD_OPERAND_TYPE),
    (L(N("1")), "ADD a :v", N("1"), BAD_OPERAND_TYPE),
    (N("1"), "ADD a :v", SS("x"), BAD_OPERAND_TYPE),
    (SS("x"), "ADD a :v", NS("1"), TYPE_MISMATCH),
    (NS("1"), "DELETE a :v", SS("x"), TYPE_MISMATCH),
    (S("x"), "DELETE a :v", SS("x"), BAD_OPERAND_TYPE),
])
def test_add_delete_stored_type_errors(api, table, stored, expression, value, message):
    key, item = seed(api, table, a=stored)
    assert_validation(update(api, table, key, expression, values={":v": value}), message)
    assert read(api, table, key) == item


# --------------------------------------------------------------------------- nested maps


def test_nested_map_updates(api, table):
    key, _ = seed(api, table, m=M(a=M(b=N("1")), keep=S("k")))
    update_ok(api, table, key, "SET m.a.c = :c, m.x = :x, #m.#a.#b = :b",
              names={"#m": "m", "#a": "a", "#b": "b"},
              values={":c": S("c"), ":x": L(), ":b": N("2")})
    assert read(api, table, key)["m"] == M(a=M(b=N("2"), c=S("c")), keep=S("k"), x=L())


def test_nested_names_with_dots(api, table):
    key, _ = seed(api, table, **{"a.b": S("top"), "a": M(b=S("nested"))})
    update_ok(api, table, key, "SET #ab = :t, #a.#b = :n",
              names={"#ab": "a.b", "#a": "a", "#b": "b"}, values={":t": S("T"), ":n": S("N")})
    assert read(api, table, key) == dict(key, **{"a.b": S("T"), "a": M(b=S("N"))})


@pytest.mark.parametrize("stored,expression", [
    ({}, "SET m.absent.y = :v"),
    ({"m": M()}, "SET m.absent.y = :v"),
    ({"s": S("x")}, "SET s.x = :v"),
    ({"s": S("x")}, "SET s[0] = :v"),
    ({"m": M()}, "SET m[0] = :v"),
    ({"l": L(S("a"))}, "SET l.x = :v"),
    ({"l": L(S("a"))}, "SET l[5].x = :v"),
    ({"s": S("x")}, "REMOVE s.x"),
    ({"s": S("x")}, "REMOVE s[0]"),
    ({}, "SET absent[0] = :v"),
])
def test_invalid_document_path_for_update(api, table, stored, expression):
    key, item = seed(api, table, **stored)
    assert_validation(update(api, table, key, expression, values=(
        {":v": S("v")} if ":v" in expression else None)), BAD_PATH)
    assert read(api, table, key) == item


def test_operands_read_the_item_before_the_update(api, table):
    key, _ = seed(api, table, a=S("A"), b=S("B"), l=L(S("x"), S("y")), n=N("1"))
    update_ok(api, table, key, "SET a = b, b = a, l[0] = l[1], l[1] = l[0], "
                               "c = n + :one, n = n + :ten",
              values={":one": N("1"), ":ten": N("10")})
    assert read(api, table, key) == dict(key, a=S("B"), b=S("A"), l=L(S("y"), S("x")),
                                         c=N("2"), n=N("11"))


def test_remove_and_read_same_element(api, table):
    key, _ = seed(api, table, l=L(S("x"), S("y")))
    update_ok(api, table, key, "SET head = l[0] REMOVE l[0]")
    assert read(api, table, key) == dict(key, l=L(S("y")), head=S("x"))


def test_nested_set_add_delete(api, table):
    key, _ = seed(api, table, m=M(ss=SS("a", "b"), ns=NS("1")))
    update_ok(api, table, key, "DELETE m.ss :a ADD m.ns :two", values={":a": SS("a"),
                                                                      ":two": NS("2")})
    item = read(api, table, key)
    assert item["m"]["M"]["ss"] == SS("b")
    assert normalize(item["m"]["M"]["ns"]) == normalize(NS("1", "2"))


def test_nested_set_on_missing_item(api, table):
    key = new_key()
    assert_validation(update(api, table, key, "SET m.x = :v", values={":v": S("v")}), BAD_PATH)
    assert read(api, table, key) is None


# --------------------------------------------------------------------------- ReturnValues


@pytest.fixture
def rv_item(api, table):
    key, item = seed(api, table, a=N("1"), b=N("2"), keep=S("k"),
                     m=M(x=N("1"), y=M(z=N("2"), w=N("3"))), l=L(N("1"), N("2"), N("3")))
    return key, item


RV_CASES = [
    ("SET a = :v, newattr = :v REMOVE b", {":v": N("10")},
     {"a": N("1"), "b": N("2")}, {"a": N("10"), "newattr": N("10")}),
    ("SET m.y.z = :v", {":v": N("20")},
     {"m": M(y=M(z=N("2")))}, {"m": M(y=M(z=N("20")))}),
    ("SET m.y.z = :v, m.x = :w", {":v": N("20"), ":w": S("x")},
     {"m": M(x=N("1"), y=M(z=N("2")))}, {"m": M(x=S("x"), y=M(z=N("20")))}),
    ("SET l[1] = :v", {":v": S("two")}, {"l": L(N("2"))}, {"l": L(S("two"))}),
    ("REMOVE m.x", None, {"m": M(x=N("1"))}, None),
    ("SET m.q = :v", {":v": S("q")}, None, {"m": M(q=S("q"))}),
    ("ADD a :v", {":v": N("1")}, {"a": N("1")}, {"a": N("2")}),
    ("SET a = a + :v, m.y.w = m.y.w - :v", {":v": N("1")},
     {"a": N("1"), "m": M(y=M(w=N("3")))}, {"a": N("2"), "m": M(y=M(w=N("2")))}),
]


@pytest.mark.parametrize("expression,values,old,new", RV_CASES,
                         ids=[c[0] for c in RV_CASES])
def test_return_values_updated(api, table, rv_item, expression, values, old, new):
    key, item = rv_item
    out = update_ok(api, table, key, expression, values=values, ReturnValues="UPDATED_OLD")
    assert out == ({"Attributes": old} if old is not None else {})
    api.ok("PutItem", {"TableName": table, "Item": item})
    out = update_ok(api, table, key, expression, values=values, ReturnValues="UPDATED_NEW")
    assert out == ({"Attributes": new} if new is not None else {})


def test_return_values_list_elements(api, table, rv_item):
    key, item = rv_item
    out = update_ok(api, table, key, "SET l[2] = :a, l[0] = :b", values={":a": S("a"),
                                                                        ":b": S("b")},
                    ReturnValues="UPDATED_NEW")
    assert out == {"Attributes": {"l": L(S("b"), S("a"))}}
    api.ok("PutItem", {"TableName": table, "Item": item})
    out = update_ok(api, table, key, "REMOVE l[1]", ReturnValues="UPDATED_OLD")
    assert out == {"Attributes": {"l": L(N("2"))}}
    api.ok("PutItem", {"TableName": table, "Item": item})
    out = update_ok(api, table, key, "SET l = list_append(l, :t)", values={":t": L(N("4"))},
                    ReturnValues="UPDATED_NEW")
    assert out == {"Attributes": {"l": L(N("1"), N("2"), N("3"), N("4"))}}


def test_return_values_all(api, table, rv_item):
    key, item = rv_item
    out = update_ok(api, table, key, "SET a = :v REMOVE keep", values={":v": N("5")},
                    ReturnValues="ALL_OLD")
    assert out == {"Attributes": item}
    new = dict(item, a=N("5"))
    del new["keep"]
    api.ok("PutItem", {"TableName": table, "Item": item})
    out = update_ok(api, table, key, "SET a = :v REMOVE keep", values={":v": N("5")},
                    ReturnValues="ALL_NEW")
    assert out == {"Attributes": new}
    api.ok("PutItem", {"TableName": table, "Item": item})
    assert update_ok(api, table, key, "SET a = :v REMOVE keep", values={":v": N("5")},
                     ReturnValues="NONE") == {}
    assert update_ok(api, table, key, "SET a = :v", values={":v": N("6")}) == {}
    assert read(api, table, key)["a"] == N("6")


def test_return_values_updated_on_upsert(api, table):
    key = new_key()
    assert update_ok(api, table, key, "SET a = :v", values={":v": N("1")},
                     ReturnValues="UPDATED_OLD") == {}
    key = new_key()
    assert update_ok(api, table, key, "SET a = :v", values={":v": N("1")},
                     ReturnValues="UPDATED_NEW") == {"Attributes": {"a": N("1")}}


def test_return_values_updated_set(api, table):
    key, _ = seed(api, table, s=SS("a"))
    out = update_ok(api, table, key, "ADD s :v", values={":v": SS("b")},
                    ReturnValues="UPDATED_OLD")
    assert out == {"Attributes": {"s": SS("a")}}
    out = update_ok(api, table, key, "DELETE s :v", values={":v": SS("a")},
                    ReturnValues="UPDATED_NEW")
    assert out == {"Attributes": {"s": SS("b")}}
    out = update_ok(api, table, key, "DELETE s :v", values={":v": SS("b")},
                    ReturnValues="UPDATED_NEW")
    assert out == {}


# --------------------------------------------------------------------------- key attributes


@pytest.mark.parametrize("expression,values,attr", [
    ("SET pk = :v", {":v": S("other")}, "pk"),
    ("SET sk = :n", {":n": N("1")}, "sk"),
    ("REMOVE sk", None, "sk"),
    ("ADD sk :n", {":n": N("1")}, "sk"),
    ("DELETE pk :s", {":s": SS("x")}, "pk"),
    ("SET a = :v, pk = :v", {":v": S("x")}, "pk"),
    ("SET #k = :v", {":v": S("x")}, "pk"),
])
def test_update_key_attribute(api, tables, expression, values, attr):
    t = tables["sn"]
    key = {"pk": S("key-" + uuid.uuid4().hex[:8]), "sk": N("1")}
    api.ok("PutItem", {"TableName": t, "Item": dict(key, a=S("a"))})
    names = {"#k": "pk"} if "#k" in expression else None
    assert_validation(update(api, t, key, expression, names=names, values=values),
                      f"{INVALID}Cannot update attribute {attr}. This attribute is part of the key")
    assert read(api, t, key) == dict(key, a=S("a"))


@pytest.mark.parametrize("expression", ["SET pk.x = :v", "SET pk[0] = :v", "REMOVE pk.x"])
def test_nested_path_through_key(api, table, expression):
    values = {":v": S("x")} if ":v" in expression else None
    assert_validation(update(api, table, new_key(), expression, values=values),
                      "Key attributes must be scalars; list random access '[]' and map lookup "
                      "'.' are not allowed: Key: pk")


def test_update_index_key_wrong_type(api, tables):
    t = tables["gsi"]
    key = new_key()
    api.ok("PutItem", {"TableName": t, "Item": dict(key, gk=S("g"))})
    assert_validation(update(api, t, key, "SET gk = :v", values={":v": N("1")}),
                      f"{INVALID}Type mismatch for Index Key gk Expected: S Actual: N "
                      "IndexName: by-gk")
    assert read(api, t, key) == dict(key, gk=S("g"))


def test_update_index_key_empty_string(api, tables):
    t = tables["gsi"]
    key = new_key()
    assert_validation(update(api, t, key, "SET gk = :v", values={":v": S("")}),
                      "One or more parameter values are not valid. The update expression "
                      "attempted to update a secondary index key to a value that is not "
                      "supported. The AttributeValue for a key attribute cannot contain an empty "
                      "string value.")
    assert read(api, t, key) is None


# --------------------------------------------------------------------------- parse-time errors


SYNTAX_ERRORS = [
    ("SET #a = :a, #b = :b,", 'token: "<EOF>", near: ","'),
    ("INVALID SYNTAX HERE", 'token: "INVALID", near: "INVALID SYNTAX"'),
    ("SET str_set bad_value", 'token: "bad_value", near: "str_set bad_value"'),
    ("SET a = :a REMOVE", 'token: "<EOF>", near: "REMOVE"'),
    ("SET a = :a +", 'token: "<EOF>", near: "+"'),
    ("SET a = :a + :b + :a", 'token: "+", near: ":b + :a"'),
    ("REMOVE a b", 'token: "b", near: "a b"'),
    ("ADD a", 'token: "<EOF>", near: "a"'),
    ("SET a[b] = :a", 'token: "b", near: "[b]"'),
]


@pytest.mark.parametrize("expression,tail", SYNTAX_ERRORS, ids=[e for e, _ in SYNTAX_ERRORS])
def test_update_syntax_errors(api, table, expression, tail):
    names = {k: k[1:] for k in ("#a", "#b") if k in expression} or None
    values = {k: N("1") for k in (":a", ":b") if k in expression} or None
    key = new_key()
    resp = update(api, table, key, expression, names=names, values=values)
    assert_write_validation(resp, "Invalid UpdateExpression: Syntax error; " + tail)
    assert read(api, table, key) is None


@pytest.mark.parametrize("expression,values,message", [
    ("", None, "The expression can not be empty;"),
    ("SET a = :v SET b = :v", {":v": N("1")},
     'The "SET" section can only be used once in an update expression;'),
    ("REMOVE a REMOVE b", None,
     'The "REMOVE" section can only be used once in an update expression;'),
    ("ADD a :v SET b = :v ADD c :v", {":v": N("1")},
     'The "ADD" section can only be used once in an update expression;'),
    ("SET a = :v REMOVE a", {":v": N("1")},
     "Two document paths overlap with each other; must remove or rewrite one of these paths; "
     "path one: [a], path two: [a]"),
    ("SET a = :v, a.b = :v", {":v": N("1")},
     "Two document paths overlap with each other; must remove or rewrite one of these paths; "
     "path one: [a], path two: [a, b]"),
    ("SET a.b = :v, a[1] = :v", {":v": N("1")},
     "Two document paths conflict with each other; must remove or rewrite one of these paths; "
     "path one: [a, b], path two: [a, [1]]"),
    ("ADD s :v DELETE s :v", {":v": SS("x")},
     "Two document paths overlap with each other; must remove or rewrite one of these paths; "
     "path one: [s], path two: [s]"),
    ("SET l[1] = :v REMOVE l[1]", {":v": N("1")},
     "Two document paths overlap with each other; must remove or rewrite one of these paths; "
     "path one: [l, [1]], path two: [l, [1]]"),
    ("SET Count = :v", {":v": N("1")},
     "Attribute name is a reserved keyword; reserved keyword: Count"),
    ("SET a = :v REMOVE m.TTL", {":v": N("1")},
     "Attribute name is a reserved keyword; reserved keyword: TTL"),
    ("SET #n = :v", {":v": N("1")},
     "An expression attribute name used in the document path is not defined; "
     "attribute name: #n"),
    ("SET a = :undefined", {":v": N("1")},
     "An expression attribute value used in expression is not defined; "
     "attribute value: :undefined"),
    ("ADD a :undefined", {":v": N("1")},
     "An expression attribute value used in expression is not defined; "
     "attribute value: :undefined"),
])
def test_update_parse_errors(api, table, expression, values, message):
    key = new_key()
    resp = update(api, table, key, expression, values=values)
    assert_write_validation(resp, "Invalid UpdateExpression: " + message)
    assert read(api, table, key) is None


def test_update_expression_parsed_before_condition(api, table):
    resp = update(api, table, new_key(), "SET a = = :v", values={":v": N("1")},
                  ConditionExpression="b = = :v")
    assert_write_validation(resp, 'Invalid UpdateExpression: Syntax error; token: "=", '
                                  'near: "= = :v"')


def test_maps_checked_before_expressions(api, table):
    resp = update(api, table, new_key(), "SET a = = :v", values={":v": N("1"), "bad": N("1")})
    assert_write_validation(resp, 'ExpressionAttributeValues contains invalid key: Syntax '
                                  'error; key: "bad"')


def test_update_unused_names_and_values(api, table):
    key = new_key()
    resp = update(api, table, key, "SET a = :a", names={"#count": "count"},
                  values={":a": N("1")})
    assert_write_validation(
        resp, "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}")
    resp = update(api, table, key, "SET a = :a", values={":a": N("1"), ":b": N("2")})
    assert_write_validation(
        resp, "Value provided in ExpressionAttributeValues unused in expressions: keys: {:b}")
    assert read(api, table, key) is None


def test_update_expression_size_limit(api, table):
    key = new_key()
    base = "SET a = :v"
    ok = base + " " * (4096 - len(base))
    update_ok(api, table, key, ok, values={":v": N("1")})
    assert read(api, table, key) == dict(key, a=N("1"))
    for t in (table, unique_name("nope")):
        resp = update(api, t, key, ok + " ", values={":v": N("2")})
        assert_write_validation(resp, "Invalid UpdateExpression: Expression size has exceeded "
                                      "the maximum allowed size; expression size: 4097")
    assert read(api, table, key) == dict(key, a=N("1"))


def test_update_item_size_limit(api, table):
    key, item = seed(api, table, big=S("x" * 409_000))
    resp = update(api, table, key, "SET more = :v", values={":v": S("y" * 1000)})
    assert_validation(resp, "Item size to update has exceeded the maximum allowed size")
    assert read(api, table, key) == item


def test_update_without_expression_on_existing_item(api, table):
    key, item = seed(api, table, a=S("1"))
    assert update_ok(api, table, key, None, ReturnValues="ALL_NEW") == {"Attributes": item}
    assert read(api, table, key) == item


def test_clauses_any_order_and_case(api, table):
    key, _ = seed(api, table, ss=SS("a", "b"), n=N("1"), x=S("x"))
    update_ok(api, table, key, "delete ss :s add n :one remove x set a=:v,b=:v",
              values={":s": SS("a"), ":one": N("1"), ":v": S("v")})
    assert read(api, table, key) == dict(key, ss=SS("b"), n=N("2"), a=S("v"), b=S("v"))


def test_update_sets_every_type(api, table):
    key = new_key()
    values = {":s": S(""), ":n": N("-0.0"), ":b": {"B": ""}, ":t": {"BOOL": False},
              ":z": {"NULL": True}, ":ss": SS("x"), ":ns": NS("1e2"), ":bs": BS(b"\x00"),
              ":l": L(), ":m": M(k=L(M()))}
    update_ok(api, table, key, "SET s = :s, n = :n, b = :b, t = :t, z = :z, ss = :ss, "
                               "ns = :ns, bs = :bs, l = :l, m = :m", values=values)
    expected = dict(key, **{k[1:]: v for k, v in values.items()})
    expected["n"] = N("0")
    expected["ns"] = NS("100")
    assert same(read(api, table, key), expected)
