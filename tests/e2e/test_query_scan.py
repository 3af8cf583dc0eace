"""Query and Scan on tables (contract §5.5, §6.2–6.5, §8.1–8.2, §9.2): key conditions
(expression and legacy), ordering of N, S and B sort keys, pagination by Limit and by the
1 MB page, filters, projections, Select, ExclusiveStartKey validation, parallel scan,
consumed capacity and the error texts of all of these."""

import http.client
import math
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from kumo_testlib import (
    COR_PREFIX,
    TARGET_PREFIX,
    assert_not_found,
    assert_validation,
    b64,
    client_error,
    create_table_args,
    item_size,
    normalize_item,
    signed_request,
    unique_name,
    wait_table_active,
)

INVALID = "One or more parameter values were invalid: "
KCE = "Invalid KeyConditionExpression: "
START_INVALID = "The provided starting key is invalid"
START_SCHEMA = START_INVALID + ": The provided key element does not match the schema"
START_OUTSIDE = "The provided starting key is outside query boundaries based on provided conditions"
START_PREDICATE = "The provided starting key does not match the range key predicate"
MISSING_KEY_CONDITION = ("Either the KeyConditions or KeyConditionExpression parameter must be "
                         "specified in the request.")
TYPE_MISMATCH = INVALID + "Condition parameter type does not match schema type"
MIXING = "Can not use both expression and non-expression parameters in the same request: "
SELECT_ENUM = ("Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
               "ALL_PROJECTED_ATTRIBUTES]")
MB = 1024 * 1024


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def B(x):
    return {"B": b64(x)}


def BOOL(x):
    return {"BOOL": x}


# --------------------------------------------------------------------------- data sets

# Sort keys listed in DynamoDB's order. N: numeric (canonical forms as returned).
NUMS = ["-100", "-1.5", "-1", "-0.001", "0", "0.001", "1", "1.5", "2", "10",
        "100000000000000000000"]
# How some of them are written when stored (any equivalent form must land in the same place).
NUM_WRITTEN = {"100000000000000000000": "1E20", "-0.001": "-1e-3", "1.5": "1.50",
               "10": "+10"}
# S: by UTF-8 bytes. U+FB01 (EF AC 81) sorts before U+1F600 (F0 9F 98 80) by bytes but after
# it by UTF-16 code units; uppercase sorts before lowercase.
STRS = ["A", "Z", "a", "aa!", "ab", "abc", "b", "z", "é", "中", "中文", "\ufb01", "😀"]
# B: by unsigned bytes.
BINS = [b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\x80\x00", b"\xff", b"\xff\xff"]

SORT_TYPES = {
    "N": (NUMS, Decimal, lambda v: N(NUM_WRITTEN.get(v, v)), N),
    "S": (STRS, lambda v: v.encode("utf-8"), S, S),
    "B": (BINS, bytes, B, B),
}


def test_reference_orders_are_sorted():
    for name, (values, sort_key, _, _) in SORT_TYPES.items():
        assert values == sorted(values, key=sort_key), name


def sorted_item(kind, pk, index):
    values, _, written, _ = SORT_TYPES[kind]
    return {"pk": S(pk), "sk": written(values[index]), "v": N(index)}


def returned_sorted_item(kind, pk, index):
    values, _, _, canonical = SORT_TYPES[kind]
    return {"pk": S(pk), "sk": canonical(values[index]), "v": N(index)}


FILT_SIZE = 20


def filt_item(i):
    return {
        "pk": S("filt"), "sk": N(i), "num": N(i), "odd": BOOL(i % 2 == 1),
        "tag": S(f"t{i % 4}"), "m": {"M": {"x": N(i), "y": S("why")}},
        "l": {"L": [N(i), S("l1"), S("l2")]}, "ss": {"SS": [f"s{i}", "common"]},
    }


CAP_ITEMS = 10


def cap_item(i):
    """An item of exactly 1 KB (§2.4)."""
    item = {"pk": S("cap"), "sk": N(i), "fill": S("")}
    item["fill"] = S("x" * (1024 - item_size(item)))
    assert item_size(item) == 1024
    return item


FAT_COUNT = 25
FAT_PAD = 100 * 1024


def fat_item(pk, i):
    return {"pk": S(pk), "sk": N(i), "fill": S(chr(ord("a") + i % 26) * FAT_PAD)}


BIG_COUNT = 3000
MANY_PARTITIONS = 200
MANY_PER_PARTITION = 5


def many_item(p, i):
    return {"pk": S(f"m{p:03d}"), "sk": N(i), "p": N(p)}


def put_all(port, table, items, threads=8):
    """PutItem every item from several threads over keep-alive connections."""
    local = threading.local()
    conns = []
    lock = threading.Lock()

    def one(item):
        body = {"TableName": table, "Item": item}
        for attempt in range(2):
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                with lock:
                    conns.append(conn)
            try:
                resp = signed_request(port, TARGET_PREFIX + "PutItem", body, conn=conn)
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                local.conn = None
                if attempt:
                    raise
        assert resp.status == 200, f"PutItem into {table} failed: {resp!r}"

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, items))
    for conn in conns:
        conn.close()


TABLE_BUILDERS = {}


def builder(name, hash_key, range_key):
    def wrap(fn):
        TABLE_BUILDERS[name] = (hash_key, range_key, fn)
        return fn
    return wrap


@builder("N", ("pk", "S"), ("sk", "N"))
def _build_n(port, t):
    items = [sorted_item("N", "p", i) for i in range(len(NUMS))]
    items += [{"pk": S("q"), "sk": N(i), "v": N(100 + i)} for i in range(3)]
    put_all(port, t, items[::-1])


@builder("S", ("pk", "S"), ("sk", "S"))
def _build_s(port, t):
    items = [sorted_item("S", "p", i) for i in range(len(STRS))]
    items += [{"pk": S("q"), "sk": S(x), "v": N(100)} for x in ("a", "b")]
    put_all(port, t, items[::-1])


@builder("B", ("pk", "S"), ("sk", "B"))
def _build_b(port, t):
    items = [sorted_item("B", "p", i) for i in range(len(BINS))]
    items += [{"pk": S("q"), "sk": B(b"\x10"), "v": N(100)}]
    put_all(port, t, items[::-1])


@builder("hash", ("pk", "S"), None)
def _build_hash(port, t):
    put_all(port, t, [{"pk": S(f"h{i}"), "v": N(i)} for i in range(5)])


@builder("misc", ("pk", "S"), ("sk", "N"))
def _build_misc(port, t):
    items = [{"pk": S("five"), "sk": N(i)} for i in range(1, 6)]
    items += [filt_item(i) for i in range(FILT_SIZE)]
    put_all(port, t, items)


@builder("cap", ("pk", "S"), ("sk", "N"))
def _build_cap(port, t):
    put_all(port, t, [cap_item(i) for i in range(CAP_ITEMS)])


@builder("big", ("pk", "S"), ("sk", "N"))
def _build_big(port, t):
    put_all(port, t, [{"pk": S("big"), "sk": N(i)} for i in range(BIG_COUNT)])


@builder("fat", ("pk", "S"), ("sk", "N"))
def _build_fat(port, t):
    items = [fat_item("fat", i) for i in range(FAT_COUNT)]
    items += [fat_item(f"fat{j}", i) for j in range(3) for i in range(4)]
    put_all(port, t, items, threads=4)


@builder("many", ("pk", "S"), ("sk", "N"))
def _build_many(port, t):
    put_all(port, t, [many_item(p, i) for p in range(MANY_PARTITIONS)
                      for i in range(MANY_PER_PARTITION)])


@pytest.fixture(scope="module")
def _datasets(server):
    state = {"generation": None, "names": {}}
    yield state
    c = server.client()
    for name in state["names"].values():
        try:
            c.delete_table(TableName=name)
        except Exception:
            pass


@pytest.fixture
def tables(server, _datasets):
    """tables[kind] → the name of a loaded module-wide table, built on first use (and again
    if the shared server was restarted)."""
    if _datasets["generation"] != server.generation:
        _datasets.update(generation=server.generation, names={})

    class Lazy:
        def __getitem__(self, kind):
            names = _datasets["names"]
            if kind not in names:
                hash_key, range_key, build = TABLE_BUILDERS[kind]
                name = unique_name("qs-" + kind.lower())
                c = server.client()
                c.create_table(**create_table_args(name, hash_key, range_key))
                wait_table_active(c, name)
                build(server.port, name)
                names[kind] = name
            return names[kind]

    return Lazy()


# --------------------------------------------------------------------------- helpers


def query(api, table, kce=None, values=None, names=None, **extra):
    body = {"TableName": table}
    if kce is not None:
        body["KeyConditionExpression"] = kce
    if values is not None:
        body["ExpressionAttributeValues"] = values
    if names is not None:
        body["ExpressionAttributeNames"] = names
    body.update(extra)
    return api("Query", body)


def scan(api, table, **extra):
    return api("Scan", dict({"TableName": table}, **extra))


def ok(resp):
    assert resp.status == 200, resp
    return resp.json


def pk_eq(pk):
    return {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S(pk)]}}


def query_pages(api, body, op="Query", max_pages=10000):
    """Follows LastEvaluatedKey to the end; returns the list of page bodies."""
    pages = []
    body = dict(body)
    while True:
        page = api.ok(op, body)
        pages.append(page)
        assert len(pages) <= max_pages, "pagination does not end"
        if "LastEvaluatedKey" not in page:
            return pages
        body["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def all_items(pages):
    return [item for page in pages for item in page["Items"]]


def key_of(item, names=("pk", "sk")):
    return {k: item[k] for k in names if k in item}


def key_tuple(item):
    return (item["pk"]["S"], Decimal(item["sk"]["N"]))


# --------------------------------------------------------------------------- key conditions

# (type, operator, operands). Operands are raw Python values (str for N and S, bytes for B).
KEY_CASES = [
    ("N", "=", ["1.5"]), ("N", "=", ["0"]), ("N", "=", ["3"]),
    ("N", "<", ["2"]), ("N", "<=", ["2"]), ("N", ">", ["2"]), ("N", ">=", ["2"]),
    ("N", "<", ["-1"]), ("N", ">=", ["0.0005"]), ("N", ">", ["1e20"]),
    ("N", "BETWEEN", ["-1.5", "1"]), ("N", "BETWEEN", ["-0.5", "1.25"]),
    ("N", "BETWEEN", ["2", "2"]),
    ("S", "=", ["中"]), ("S", "<", ["b"]), ("S", "<=", ["b"]), ("S", ">", ["b"]),
    ("S", ">=", ["é"]), ("S", "<", ["a"]), ("S", ">", ["\uffff"]),
    ("S", "BETWEEN", ["ab", "é"]), ("S", "BETWEEN", ["Z", "a"]),
    ("S", "begins_with", ["a"]), ("S", "begins_with", ["中"]), ("S", "begins_with", ["ab"]),
    ("S", "begins_with", ["x"]),
    ("B", "=", [b"\x7f"]), ("B", "<", [b"\x80"]), ("B", "<=", [b"\x80"]), ("B", ">", [b"\x80"]),
    ("B", ">=", [b"\x80\x00"]), ("B", "BETWEEN", [b"\x00\x00", b"\x80"]),
    ("B", "begins_with", [b"\xff"]), ("B", "begins_with", [b"\x00"]),
    ("B", "begins_with", [b"\x80"]),
]

LEGACY_OPS = {"=": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE", "BETWEEN": "BETWEEN",
              "begins_with": "BEGINS_WITH"}


def expected_indexes(kind, op, operands):
    values, sort_key, _, _ = SORT_TYPES[kind]
    ops = [sort_key(x) for x in operands]

    def pred(v):
        k = sort_key(v)
        return {
            "=": lambda: k == ops[0], "<": lambda: k < ops[0], "<=": lambda: k <= ops[0],
            ">": lambda: k > ops[0], ">=": lambda: k >= ops[0],
            "BETWEEN": lambda: ops[0] <= k <= ops[1],
            "begins_with": lambda: k[:len(ops[0])] == ops[0],
        }[op]()

    return [i for i, v in enumerate(values) if pred(v)]


def key_request(table, kind, op, operands, forward, legacy):
    to_value = {"N": N, "S": S, "B": B}[kind]
    body = {"TableName": table, "ScanIndexForward": forward}
    if legacy:
        body["KeyConditions"] = dict(pk_eq("p"), sk={
            "ComparisonOperator": LEGACY_OPS[op],
            "AttributeValueList": [to_value(x) for x in operands]})
        return body
    values = {":p": S("p")}
    if op == "BETWEEN":
        cond = "sk BETWEEN :a AND :b"
        values.update({":a": to_value(operands[0]), ":b": to_value(operands[1])})
    elif op == "begins_with":
        cond = "begins_with(sk, :a)"
        values[":a"] = to_value(operands[0])
    else:
        cond = f"sk {op} :a"
        values[":a"] = to_value(operands[0])
    body["KeyConditionExpression"] = "pk = :p AND " + cond
    body["ExpressionAttributeValues"] = values
    return body


@pytest.mark.parametrize("legacy", [False, True], ids=["expression", "legacy"])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
@pytest.mark.parametrize("kind,op,operands", KEY_CASES,
                         ids=[f"{k}-{o}-{i}" for i, (k, o, _) in enumerate(KEY_CASES)])
def test_key_condition_operators(api, tables, kind, op, operands, forward, legacy):
    t = tables[kind]
    out = api.ok("Query", key_request(t, kind, op, operands, forward, legacy))
    expected = [returned_sorted_item(kind, "p", i) for i in expected_indexes(kind, op, operands)]
    if not forward:
        expected.reverse()
    assert out["Items"] == expected
    assert out["Count"] == out["ScannedCount"] == len(expected)
    assert "LastEvaluatedKey" not in out


@pytest.mark.parametrize("kind", ["N", "S", "B"])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
def test_whole_partition_order(api, tables, kind, forward):
    values = SORT_TYPES[kind][0]
    out = ok(query(api, tables[kind], "pk = :p", {":p": S("p")}, ScanIndexForward=forward))
    expected = [returned_sorted_item(kind, "p", i) for i in range(len(values))]
    assert out["Items"] == (expected if forward else expected[::-1])
    assert out["Count"] == out["ScannedCount"] == len(values)


@pytest.mark.parametrize("kind", ["N", "S", "B"])
def test_order_survives_limit_paging(api, tables, kind):
    values = SORT_TYPES[kind][0]
    for forward in (True, False):
        pages = query_pages(api, {"TableName": tables[kind], "KeyConditionExpression": "pk = :p",
                                  "ExpressionAttributeValues": {":p": S("p")}, "Limit": 2,
                                  "ScanIndexForward": forward})
        expected = [returned_sorted_item(kind, "p", i) for i in range(len(values))]
        assert all_items(pages) == (expected if forward else expected[::-1])


def test_number_sort_key_forms_are_one_key(api, tables):
    t = tables["N"]
    for written in ("1E20", "100000000000000000000", "1.0e+20", "0100000000000000000000.000"):
        out = ok(query(api, t, "pk = :p AND sk = :v", {":p": S("p"), ":v": N(written)}))
        assert out["Items"] == [returned_sorted_item("N", "p", len(NUMS) - 1)], written


def test_partition_isolation(api, tables):
    out = ok(query(api, tables["N"], "pk = :p", {":p": S("q")}))
    assert [i["v"] for i in out["Items"]] == [N(100), N(101), N(102)]
    out = ok(query(api, tables["N"], "pk = :p", {":p": S("nope")}))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_hash_only_table_query(api, tables):
    out = ok(query(api, tables["hash"], "pk = :p", {":p": S("h3")}))
    assert out == {"Items": [{"pk": S("h3"), "v": N(3)}], "Count": 1, "ScannedCount": 1}
    out = ok(api("Query", {"TableName": tables["hash"], "KeyConditions": pk_eq("h2")}))
    assert out["Items"] == [{"pk": S("h2"), "v": N(2)}]


@pytest.mark.parametrize("kce,expected", [
    (":p = pk AND :x <= sk", lambda v: v >= 2),
    (":p = pk AND :x > sk", lambda v: v < 2),
    ("(pk = :p) AND (sk >= :x)", lambda v: v >= 2),
    ("(pk = :p AND sk < :x)", lambda v: v < 2),
    ("sk < :x AND pk = :p", lambda v: v < 2),
    ("#k = :p and #s between :lo AND :x", lambda v: -1 <= v <= 2),
    ("pk=:p AND begins_with ( sk , :s )", None),
])
def test_key_condition_forms(api, tables, kce, expected):
    values = {":p": S("p"), ":x": N("2")}
    names = None
    table = tables["N"]
    if "#k" in kce:
        names = {"#k": "pk", "#s": "sk"}
        values[":lo"] = N("-1")
    if "begins_with" in kce:
        table = tables["S"]
        values = {":p": S("p"), ":s": S("中")}
    out = ok(query(api, table, kce, values, names))
    if expected is None:
        assert [i["sk"] for i in out["Items"]] == [S("中"), S("中文")]
    else:
        assert [i["sk"]["N"] for i in out["Items"]] == [v for v in NUMS if expected(Decimal(v))]


def test_key_condition_keywords_case_insensitive(api, tables):
    out = ok(query(api, tables["N"], "pk = :p aNd sk BeTwEeN :a and :b",
                   {":p": S("p"), ":a": N(0), ":b": N(1)}))
    assert [i["sk"]["N"] for i in out["Items"]] == ["0", "0.001", "1"]


# --------------------------------------------------------------------------- key condition errors

KCE_ERRORS = [
    ("pk = :p OR sk = :n", KCE + "Invalid operator used in KeyConditionExpression: OR"),
    ("NOT pk = :p", KCE + "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk = :p AND NOT sk = :n", KCE + "Invalid operator used in KeyConditionExpression: NOT"),
    ("pk IN (:p)", KCE + "Invalid operator used in KeyConditionExpression: IN"),
    ("pk = :p AND sk <> :n", KCE + "Invalid operator used in KeyConditionExpression: <>"),
    ("pk = :p AND attribute_exists(sk)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_exists"),
    ("pk = :p AND attribute_not_exists(sk)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_not_exists"),
    ("pk = :p AND attribute_type(sk, :t)",
     KCE + "Invalid operator used in KeyConditionExpression: attribute_type"),
    ("pk = :p AND contains(sk, :n)",
     KCE + "Invalid operator used in KeyConditionExpression: contains"),
    ("pk = :p AND size(sk) > :n", KCE + "KeyConditionExpressions cannot contain nested operations"),
    ("pk = :p AND sk.x = :n",
     KCE + "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk = :p AND sk[1] = :n",
     KCE + "KeyConditionExpressions cannot have conditions on nested attributes"),
    ("pk = sk", KCE + "Invalid condition in KeyConditionExpression: Multiple attribute names "
                      "used in one condition"),
    ("pk = :p AND :n = :n2",
     KCE + "Invalid condition in KeyConditionExpression: No key attribute specified"),
    ("pk = :p AND :n BETWEEN sk AND :n2",
     KCE + "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
           "attribute as its first operand"),
    ("pk = :p AND begins_with(:n, sk)",
     KCE + "Invalid condition in KeyConditionExpression: begins_with operator must have the key "
           "attribute as its first operand"),
    ("pk = :p AND pk = :p2", KCE + "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk > :n AND sk < :n2",
     KCE + "KeyConditionExpressions must only contain one condition per key"),
    ("pk = :p AND sk BETWEEN :n2 AND :n",
     KCE + "The BETWEEN operator requires upper bound to be greater than or equal to lower "
           "bound; lower bound operand: AttributeValue: {N:2}, upper bound operand: "
           "AttributeValue: {N:1}"),
    ("()", KCE + 'Syntax error; token: ")", near: "()"'),
    ("", KCE + "The expression can not be empty;"),
    ("((pk = :p))", KCE + "The expression has redundant parentheses;"),
    ("pk = :p AND BegIns_WiTh(sk, :n)", KCE + "Invalid function name; function: BegIns_WiTh"),
    ("pk = :undefined", KCE + "An expression attribute value used in expression is not defined; "
                              "attribute value: :undefined"),
    ("#nope = :p", KCE + "An expression attribute name used in the document path is not "
                         "defined; attribute name: #nope"),
    ("pk = :p AND size = :n", KCE + "Attribute name is a reserved keyword; reserved keyword: size"),
    # Against the schema: no prefix.
    ("sk = :n", "Query condition missed key schema element: pk"),
    ("foo = :p", "Query condition missed key schema element: pk"),
    ("pk = :p AND foo = :n", "Query condition missed key schema element: sk"),
    ("pk > :p", "Query key condition not supported"),
    ("pk BETWEEN :p AND :p2", "Query key condition not supported"),
    ("begins_with(pk, :p)", "Query key condition not supported"),
    ("pk = :n", TYPE_MISMATCH),
    ("pk = :p AND sk = :p2", TYPE_MISMATCH),
    ("pk = :p AND sk BETWEEN :p AND :p2", TYPE_MISMATCH),
]

KCE_VALUES = {":p": S("p"), ":p2": S("q"), ":n": N(1), ":n2": N(2), ":t": S("N")}


@pytest.mark.parametrize("kce,message", KCE_ERRORS, ids=[m[0] or "empty" for m in KCE_ERRORS])
def test_key_condition_expression_errors(api, tables, kce, message):
    # Only the placeholders the expression names, so that no "unused" error interferes.
    used = {k: v for k, v in KCE_VALUES.items() if k in re.findall(r":[A-Za-z0-9_]+", kce)}
    assert_validation(query(api, tables["N"], kce, used or None), message)


def test_key_condition_begins_with_on_number_sort_key(api, tables):
    # Exact text [open] (incorrect operand type); assert the type only.
    resp = query(api, tables["N"], "pk = :p AND begins_with(sk, :n)", {":p": S("p"), ":n": N(1)})
    assert_validation(resp)


def test_key_condition_hash_only_table_extra_condition(api, tables):
    resp = query(api, tables["hash"], "pk = :p AND v = :n", {":p": S("h1"), ":n": N(1)})
    assert_validation(resp)
    # Two observed texts (older and newer responses).
    assert resp.message in (
        "Query key condition not supported",
        "The number of query conditions (2) exceeds the number of key attributes defined in the "
        "schema (1)"), resp.message


def test_query_without_key_condition(api, tables):
    t = tables["N"]
    assert_validation(api("Query", {"TableName": t}), MISSING_KEY_CONDITION)
    assert_validation(api("Query", {"TableName": t, "QueryFilter": {
        "v": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]}}}), MISSING_KEY_CONDITION)
    assert_validation(api("Query", {"TableName": t, "FilterExpression": "v = :v",
                                    "ExpressionAttributeValues": {":v": N(1)}}),
                      MISSING_KEY_CONDITION)


def legacy_key(**conds):
    return {name: {"ComparisonOperator": op, "AttributeValueList": vals}
            for name, (op, vals) in conds.items()}


LEGACY_KEY_ERRORS = [
    ({"sk": ("EQ", [N(1)])}, "Query condition missed key schema element: pk"),
    ({"pk": ("EQ", [S("p")]), "other": ("EQ", [N(1)])},
     "Query condition missed key schema element: sk"),
    ({"pk": ("GT", [S("p")])}, "Query key condition not supported"),
    ({"pk": ("EQ", [S("p")]), "sk": ("NE", [N(1)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("IN", [N(1), N(2)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("CONTAINS", [N(1)])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [S("p")]), "sk": ("NOT_NULL", [])},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": ("EQ", [N(1)])}, TYPE_MISMATCH),
    ({"pk": ("EQ", [S("p")]), "sk": ("GT", [S("1")])}, TYPE_MISMATCH),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(1)])},
     INVALID + "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(1), S("x")])},
     INVALID + "AttributeValues inside AttributeValueList must be of same type"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BEGINS_WITH", [N(1)])},
     INVALID + "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ({"pk": ("EQ", [S("p")]), "sk": ("BETWEEN", [N(2), N(1)])},
     "The BETWEEN condition was provided a range where the lower bound is greater than the "
     "upper bound"),
    ({"pk": ("EQ", [S("p")]), "sk": ("GT", [N(1)]), "v": ("EQ", [N(1)])},
     "Conditions can be of length 1 or 2 only"),
]


@pytest.mark.parametrize("conds,message", LEGACY_KEY_ERRORS,
                         ids=[str(i) for i in range(len(LEGACY_KEY_ERRORS))])
def test_legacy_key_condition_errors(api, tables, conds, message):
    resp = api("Query", {"TableName": tables["N"], "KeyConditions": legacy_key(**conds)})
    assert_validation(resp, message)


# --------------------------------------------------------------------------- mixing rule


def test_mixing_key_conditions_with_expression(api, tables):
    t = tables["N"]
    resp = api("Query", {"TableName": t, "KeyConditions": pk_eq("p"),
                         "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")}})
    assert_validation(resp, MIXING + "Non-expression parameters: {KeyConditions} Expression "
                                     "parameters: {KeyConditionExpression}")


def test_mixing_query_filter_with_key_condition_expression(api, tables):
    resp = api("Query", {"TableName": tables["N"], "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")},
                         "QueryFilter": {"v": {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, MIXING + "Non-expression parameters: {QueryFilter} Expression "
                                     "parameters: {KeyConditionExpression}")


def test_mixing_full_lists_in_fixed_order(api, tables):
    resp = api("Query", {
        "TableName": tables["N"], "KeyConditionExpression": "pk = :p",
        "FilterExpression": "v > :v", "ProjectionExpression": "v",
        "ExpressionAttributeValues": {":p": S("p"), ":v": N(0)},
        "KeyConditions": pk_eq("p"), "AttributesToGet": ["v"], "ConditionalOperator": "AND",
        "QueryFilter": {"v": {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, MIXING + "Non-expression parameters: {AttributesToGet, QueryFilter, "
                                     "ConditionalOperator, KeyConditions} Expression parameters: "
                                     "{ProjectionExpression, FilterExpression, "
                                     "KeyConditionExpression}")


def test_mixing_scan(api, tables):
    t = tables["N"]
    assert_validation(scan(api, t, AttributesToGet=["v"], ProjectionExpression="v"),
                      MIXING + "Non-expression parameters: {AttributesToGet} Expression "
                               "parameters: {ProjectionExpression}")
    assert_validation(scan(api, t, ScanFilter={"v": {"ComparisonOperator": "NOT_NULL"}},
                           FilterExpression="attribute_exists(v)"),
                      MIXING + "Non-expression parameters: {ScanFilter} Expression "
                               "parameters: {FilterExpression}")


def test_key_conditions_combine_with_filter_and_projection_expressions(api, tables):
    out = api.ok("Query", {"TableName": tables["N"], "KeyConditions": pk_eq("p"),
                           "FilterExpression": "v >= :v", "ProjectionExpression": "sk",
                           "ExpressionAttributeValues": {":v": N(8)}})
    assert out["Items"] == [{"sk": N(x)} for x in NUMS[8:]]
    assert out["Count"] == 3
    assert out["ScannedCount"] == len(NUMS)


def test_values_without_expression(api, tables):
    t = tables["N"]
    assert_validation(api("Query", {"TableName": t, "KeyConditions": pk_eq("p"),
                                    "ExpressionAttributeValues": {":v": N(1)}}),
                      "ExpressionAttributeValues can only be specified when using expressions: "
                      "FilterExpression and KeyConditionExpression are null")
    assert_validation(scan(api, t, ExpressionAttributeValues={":v": N(1)}),
                      "ExpressionAttributeValues can only be specified when using expressions: "
                      "FilterExpression is null")


def test_unused_value_is_bare_on_query(api, tables):
    resp = query(api, tables["N"], "pk = :p", {":p": S("p"), ":x": N(1)})
    assert_validation(resp, "Value provided in ExpressionAttributeValues unused in expressions: "
                            "keys: {:x}")


# --------------------------------------------------------------------------- filters


def filt_query(api, tables, **extra):
    return query(api, tables["misc"], "pk = :p", dict({":p": S("filt")},
                                                      **extra.pop("values", {})), **extra)


def test_filter_expression_count_below_scanned_count(api, tables):
    out = ok(filt_query(api, tables, FilterExpression="odd = :t", values={":t": BOOL(True)}))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in range(1, FILT_SIZE, 2)]
    assert (out["Count"], out["ScannedCount"]) == (10, 20)
    assert "LastEvaluatedKey" not in out


def test_filter_applies_after_limit(api, tables):
    out = ok(filt_query(api, tables, FilterExpression="odd = :t", values={":t": BOOL(True)},
                        Limit=5))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(1)),
                                                          normalize_item(filt_item(3))]
    assert (out["Count"], out["ScannedCount"]) == (2, 5)
    assert out["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(4)}


def test_fully_filtered_page_keeps_last_evaluated_key(api, tables):
    body = {"TableName": tables["misc"], "KeyConditionExpression": "pk = :p",
            "FilterExpression": "tag = :none",
            "ExpressionAttributeValues": {":p": S("filt"), ":none": S("none")}, "Limit": 4}
    pages = query_pages(api, body)
    assert len(pages) == 6  # 5 full pages, the last one stopped by Limit at the exact end
    for i, page in enumerate(pages[:5]):
        assert page["Items"] == []
        assert (page["Count"], page["ScannedCount"]) == (0, 4)
        assert page["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(4 * i + 3)}
    assert pages[5] == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_fully_filtered_scan_page_keeps_last_evaluated_key(api, tables):
    out = ok(scan(api, tables["misc"], Limit=3, ScanFilter={
        "num": {"ComparisonOperator": "GT", "AttributeValueList": [N(1000)]}}))
    assert out["Items"] == []
    assert (out["Count"], out["ScannedCount"]) == (0, 3)
    assert set(out["LastEvaluatedKey"]) == {"pk", "sk"}


@pytest.mark.parametrize("query_filter,conditional,expected", [
    ({"num": ("GE", [N(10)])}, None, range(10, 20)),
    ({"num": ("LT", [N(2)]), "tag": ("EQ", [S("t3")])}, "OR", [0, 1, 3, 7, 11, 15, 19]),
    ({"num": ("LT", [N(12)]), "tag": ("EQ", [S("t3")])}, "AND", [3, 7, 11]),
    ({"num": ("BETWEEN", [N(3), N(5)])}, None, [3, 4, 5]),
    ({"tag": ("IN", [S("t0"), S("t2")])}, None, range(0, 20, 2)),
    ({"tag": ("NE", [S("t0")])}, None, [i for i in range(20) if i % 4]),
    ({"tag": ("BEGINS_WITH", [S("t1")])}, None, range(1, 20, 4)),
    ({"ss": ("CONTAINS", [S("s7")])}, None, [7]),
    ({"ss": ("NOT_CONTAINS", [S("s7")])}, None, [i for i in range(20) if i != 7]),
    ({"nothere": ("NULL", [])}, None, range(20)),
    ({"nothere": ("NOT_NULL", [])}, None, []),
])
def test_query_filter(api, tables, query_filter, conditional, expected):
    body = {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
            "QueryFilter": legacy_key(**query_filter)}
    if conditional:
        body["ConditionalOperator"] = conditional
    out = api.ok("Query", body)
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in expected]
    assert (out["Count"], out["ScannedCount"]) == (len(list(expected)), FILT_SIZE)


def test_scan_filter(api, tables):
    t = tables["misc"]
    total = 5 + FILT_SIZE
    out = ok(scan(api, t, ScanFilter=legacy_key(pk=("EQ", [S("filt")]), num=("GE", [N(15)]))))
    assert sorted(key_tuple(i) for i in out["Items"]) == [("filt", i) for i in range(15, 20)]
    assert (out["Count"], out["ScannedCount"]) == (5, total)
    out = ok(scan(api, t, ScanFilter=legacy_key(pk=("EQ", [S("five")]), num=("GE", [N(15)])),
                  ConditionalOperator="OR"))
    assert sorted(key_tuple(i) for i in out["Items"]) == (
        [("filt", i) for i in range(15, 20)] + [("five", i) for i in range(1, 6)])
    assert (out["Count"], out["ScannedCount"]) == (10, total)


def test_scan_filter_expression_may_use_key_attributes(api, tables):
    out = ok(scan(api, tables["misc"], FilterExpression="pk = :p AND sk < :n",
                  ExpressionAttributeValues={":p": S("five"), ":n": N(3)}))
    assert sorted(key_tuple(i) for i in out["Items"]) == [("five", 1), ("five", 2)]
    assert (out["Count"], out["ScannedCount"]) == (2, 5 + FILT_SIZE)


@pytest.mark.parametrize("filt,names,attr", [
    ("sk > :n", None, "sk"),
    ("pk = :p2", None, "pk"),
    ("#k > :n", {"#k": "sk"}, "sk"),
    ("num > :n AND attribute_exists(sk)", None, "sk"),
    ("begins_with(pk, :p2) OR num > :n", None, "pk"),
])
def test_filter_on_key_attribute_in_query(api, tables, filt, names, attr):
    values = {":p": S("filt")}
    if ":n" in filt:
        values[":n"] = N(1)
    if ":p2" in filt:
        values[":p2"] = S("f")
    resp = query(api, tables["misc"], "pk = :p", values, names, FilterExpression=filt)
    assert_validation(resp, "Filter Expression can only contain non-primary key attributes: "
                            f"Primary key attribute: {attr}")


@pytest.mark.parametrize("attr", ["sk", "pk"])
def test_query_filter_on_key_attribute(api, tables, attr):
    resp = api("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                         "QueryFilter": {attr: {"ComparisonOperator": "NOT_NULL"}}})
    assert_validation(resp, "QueryFilter can only contain non-primary key attributes: "
                            f"Primary key attribute: {attr}")


def test_filter_syntax_error(api, tables):
    resp = filt_query(api, tables, FilterExpression="num >")
    assert_validation(resp, 'Invalid FilterExpression: Syntax error; token: "<EOF>", near: ">"')


# --------------------------------------------------------------------------- projections, Select


def test_projection_expression(api, tables):
    out = ok(filt_query(api, tables, ProjectionExpression="num, m.x, #t, l[2]",
                        names={"#t": "tag"}, Limit=3))
    assert out["Items"] == [{"num": N(i), "m": {"M": {"x": N(i)}}, "tag": S(f"t{i % 4}"),
                             "l": {"L": [S("l2")]}} for i in range(3)]
    assert (out["Count"], out["ScannedCount"]) == (3, 3)
    assert out["LastEvaluatedKey"] == {"pk": S("filt"), "sk": N(2)}


def test_projection_of_missing_attribute_keeps_empty_items(api, tables):
    out = ok(filt_query(api, tables, ProjectionExpression="nothere"))
    assert out["Items"] == [{}] * FILT_SIZE
    assert out["Count"] == FILT_SIZE


def test_attributes_to_get(api, tables):
    out = api.ok("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                           "AttributesToGet": ["tag", "sk", "nothere"], "Limit": 2})
    assert out["Items"] == [{"tag": S("t0"), "sk": N(0)}, {"tag": S("t1"), "sk": N(1)}]
    out = ok(scan(api, tables["misc"], AttributesToGet=["num"],
                  ScanFilter=legacy_key(pk=("EQ", [S("filt")]), num=("LT", [N(2)]))))
    assert sorted(out["Items"], key=lambda i: i["num"]["N"]) == [{"num": N(0)}, {"num": N(1)}]


def test_select_specific_and_all_attributes(api, tables):
    out = ok(filt_query(api, tables, Select="SPECIFIC_ATTRIBUTES", ProjectionExpression="num",
                        Limit=2))
    assert out["Items"] == [{"num": N(0)}, {"num": N(1)}]
    out = api.ok("Query", {"TableName": tables["misc"], "KeyConditions": pk_eq("filt"),
                           "Select": "SPECIFIC_ATTRIBUTES", "AttributesToGet": ["num"], "Limit": 1})
    assert out["Items"] == [{"num": N(0)}]
    out = ok(filt_query(api, tables, Select="ALL_ATTRIBUTES", Limit=2))
    assert [normalize_item(i) for i in out["Items"]] == [normalize_item(filt_item(i))
                                                          for i in range(2)]


def test_select_count(api, tables):
    out = ok(filt_query(api, tables, Select="COUNT"))
    assert out == {"Count": FILT_SIZE, "ScannedCount": FILT_SIZE}
    out = ok(filt_query(api, tables, Select="COUNT", FilterExpression="odd = :t",
                        values={":t": BOOL(True)}, Limit=7))
    assert out == {"Count": 3, "ScannedCount": 7,
                   "LastEvaluatedKey": {"pk": S("filt"), "sk": N(6)}}
    out = ok(scan(api, tables["misc"], Select="COUNT"))
    assert out == {"Count": 5 + FILT_SIZE, "ScannedCount": 5 + FILT_SIZE}


def test_select_count_boto3(ddb, tables):
    out = ddb.query(TableName=tables["misc"], KeyConditionExpression="pk = :p",
                    ExpressionAttributeValues={":p": S("five")}, Select="COUNT")
    assert "Items" not in out
    assert (out["Count"], out["ScannedCount"]) == (5, 5)


SELECT_ERRORS = [
    ({"Select": "SPECIFIC_ATTRIBUTES"},
     "Must specify the AttributesToGet or ProjectionExpression when choosing to get "
     "SPECIFIC_ATTRIBUTES"),
    ({"Select": "ALL_ATTRIBUTES", "ProjectionExpression": "num"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "COUNT", "ProjectionExpression": "num"},
     "Cannot specify the ProjectionExpression when choosing to get only the Count"),
    ({"Select": "ALL_ATTRIBUTES", "AttributesToGet": ["num"]},
     "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES"),
    ({"Select": "COUNT", "AttributesToGet": ["num"]},
     "Cannot specify the AttributesToGet when choosing to get only the Count"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES"},
     "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
    ({"Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "num", "IndexName": "idx"},
     "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
]


def _select_body(table, extra, op):
    body = {"TableName": table}
    if op == "Query":
        body["KeyConditions"] = pk_eq("filt")
    body.update(extra)
    return body


@pytest.mark.parametrize("extra,message", SELECT_ERRORS,
                         ids=[str(i) for i in range(len(SELECT_ERRORS))])
def test_select_errors_query_prefixed(api, tables, extra, message):
    resp = api("Query", _select_body(tables["misc"], extra, "Query"))
    assert_validation(resp, COR_PREFIX + message)


@pytest.mark.parametrize("extra,message", SELECT_ERRORS,
                         ids=[str(i) for i in range(len(SELECT_ERRORS))])
def test_select_errors_scan_bare(api, tables, extra, message):
    resp = api("Scan", _select_body(tables["misc"], extra, "Scan"))
    assert_validation(resp, message)


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_select_bad_enum(api, tables, op):
    resp = api(op, _select_body(tables["misc"], {"Select": "count"}, op))
    assert_validation(resp, COR_PREFIX + "Value 'count' at 'select' failed to satisfy constraint: "
                      + SELECT_ENUM)


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_unknown_index(api, tables, op):
    body = _select_body(tables["misc"], {"IndexName": "nope"}, op)
    assert_validation(api(op, body), "The table does not have the specified index: nope")
    body["Select"] = "ALL_PROJECTED_ATTRIBUTES"
    assert_validation(api(op, body), "The table does not have the specified index: nope")


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_missing_table(api, ddb, op):
    name = unique_name("qs-missing")
    assert_not_found(api(op, _select_body(name, {}, op)))
    with pytest.raises(ClientError) as e:
        if op == "Query":
            ddb.query(TableName=name, KeyConditionExpression="pk = :p",
                      ExpressionAttributeValues={":p": S("x")})
        else:
            ddb.scan(TableName=name)
    client_error(e, "ResourceNotFoundException", "Requested resource not found")


@pytest.mark.parametrize("op", ["Query", "Scan"])
@pytest.mark.parametrize("limit", [0, -1])
def test_limit_below_one(api, tables, op, limit):
    resp = api(op, _select_body(tables["misc"], {"Limit": limit}, op))
    assert_validation(resp, COR_PREFIX + f"Value '{limit}' at 'limit' failed to satisfy "
                                         "constraint: Member must have value greater than or "
                                         "equal to 1")


@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_return_consumed_capacity_bad_enum(api, tables, op):
    resp = api(op, _select_body(tables["misc"], {"ReturnConsumedCapacity": "ALL"}, op))
    assert_validation(resp, COR_PREFIX + "Value 'ALL' at 'returnConsumedCapacity' failed to "
                                         "satisfy constraint: Member must satisfy enum value set: "
                                         "[INDEXES, TOTAL, NONE]")


# --------------------------------------------------------------------------- capacity


def cap_body(tables, **extra):
    return dict({"TableName": tables["cap"], "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": S("cap")}}, **extra)


@pytest.mark.parametrize("consistent,units", [(True, 3.0), (False, 1.5)])
def test_query_capacity_sums_then_rounds(api, tables, consistent, units):
    # 10 items of 1 KB = 10 KB read → ceil(10 KB / 4 KB) = 3 units (not 10).
    t = tables["cap"]
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="TOTAL",
                                   ConsistentRead=consistent))
    assert out["Items"] == [cap_item(i) for i in range(CAP_ITEMS)]
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="INDEXES",
                                   ConsistentRead=consistent))
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units,
                                       "Table": {"CapacityUnits": units}}


@pytest.mark.parametrize("consistent,units", [(True, 3.0), (False, 1.5)])
def test_scan_capacity_sums_then_rounds(api, tables, consistent, units):
    t = tables["cap"]
    out = ok(scan(api, t, ReturnConsumedCapacity="TOTAL", ConsistentRead=consistent))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}
    out = ok(scan(api, t, ReturnConsumedCapacity="INDEXES", ConsistentRead=consistent))
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units,
                                       "Table": {"CapacityUnits": units}}


@pytest.mark.parametrize("extra,strong", [
    ({"Limit": 4}, 1.0),           # 4 KB exactly
    ({"Limit": 5}, 2.0),           # 5 KB
    ({"Select": "COUNT"}, 3.0),    # COUNT pays for what was read
    ({"ProjectionExpression": "sk"}, 3.0),
    ({"FilterExpression": "fill = :none"}, 3.0),
    ({"KeyConditionExpression": "pk = :p AND sk > :n"}, 1.0),    # 1 item read (sk 9)
    ({"KeyConditionExpression": "pk = :p AND sk > :big"}, 1.0),  # nothing read: minimum
])
def test_query_capacity_counts_items_read(api, tables, extra, strong):
    t = tables["cap"]
    body = cap_body(tables, ReturnConsumedCapacity="TOTAL", **extra)
    values = body["ExpressionAttributeValues"]
    if ":none" in str(extra):
        values[":none"] = S("none")
    if ":n" in body["KeyConditionExpression"]:
        values[":n"] = N(8)
    if ":big" in body["KeyConditionExpression"]:
        values[":big"] = N(100)
    for consistent, units in ((True, strong), (False, strong / 2)):
        out = api.ok("Query", dict(body, ConsistentRead=consistent))
        assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": units}, (
            consistent, out)


def test_capacity_none_and_boto3(api, ddb, tables):
    out = api.ok("Query", cap_body(tables, ReturnConsumedCapacity="NONE"))
    assert "ConsumedCapacity" not in out
    out = ddb.scan(TableName=tables["cap"], ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert out["ConsumedCapacity"] == {"TableName": tables["cap"], "CapacityUnits": 3.0}


def test_consistent_read_returns_same_items(api, tables):
    a = api.ok("Query", cap_body(tables, ConsistentRead=True))
    b = api.ok("Query", cap_body(tables, ConsistentRead=False))
    assert a == b


# --------------------------------------------------------------------------- pagination


def big_body(tables, **extra):
    return dict({"TableName": tables["big"], "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": S("big")}}, **extra)


@pytest.mark.parametrize("limit", [7, 500])
@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
def test_paginate_thousands_by_limit(api, tables, limit, forward):
    pages = query_pages(api, big_body(tables, Limit=limit, ScanIndexForward=forward))
    got = [int(i["sk"]["N"]) for i in all_items(pages)]
    expected = list(range(BIG_COUNT)) if forward else list(range(BIG_COUNT - 1, -1, -1))
    assert got == expected
    full, rest = divmod(BIG_COUNT, limit)
    for page in pages[:full]:
        assert page["Count"] == page["ScannedCount"] == limit
        assert page["LastEvaluatedKey"] == key_of(page["Items"][-1])
    if rest:
        assert len(pages) == full + 1
        assert pages[-1]["Count"] == rest
    else:
        # The last full page stops on Limit exactly at the end: it still carries a key, and
        # the next call returns nothing.
        assert len(pages) == full + 1
        assert pages[-1] == {"Items": [], "Count": 0, "ScannedCount": 0}
    assert "LastEvaluatedKey" not in pages[-1]


def test_boto3_paginator(ddb, tables):
    paginator = ddb.get_paginator("query")
    items = []
    for page in paginator.paginate(TableName=tables["big"], KeyConditionExpression="pk = :p",
                                   ExpressionAttributeValues={":p": S("big")},
                                   PaginationConfig={"PageSize": 1000}):
        items += page["Items"]
    assert [int(i["sk"]["N"]) for i in items] == list(range(BIG_COUNT))


def test_limit_stop_at_exact_end(api, tables):
    t = tables["misc"]
    body = {"TableName": t, "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("five")}, "Limit": 5}
    out = api.ok("Query", body)
    assert [i["sk"] for i in out["Items"]] == [N(i) for i in range(1, 6)]
    assert out["LastEvaluatedKey"] == {"pk": S("five"), "sk": N(5)}
    out = api.ok("Query", dict(body, ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}
    out = api.ok("Query", dict(body, Limit=6))
    assert out["Count"] == 5 and "LastEvaluatedKey" not in out
    # Backward.
    out = api.ok("Query", dict(body, ScanIndexForward=False))
    assert out["LastEvaluatedKey"] == {"pk": S("five"), "sk": N(1)}
    out = api.ok("Query", dict(body, ScanIndexForward=False,
                               ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}


def test_scan_limit_stop_at_exact_end(api, tables):
    t = tables["cap"]
    out = ok(scan(api, t, Limit=CAP_ITEMS))
    assert out["Count"] == CAP_ITEMS
    assert out["LastEvaluatedKey"] == key_of(out["Items"][-1])
    out = ok(scan(api, t, Limit=CAP_ITEMS, ExclusiveStartKey=out["LastEvaluatedKey"]))
    assert out == {"Items": [], "Count": 0, "ScannedCount": 0}
    out = ok(scan(api, t, Limit=CAP_ITEMS + 1))
    assert "LastEvaluatedKey" not in out


def check_megabyte_pages(pages, consistent=False):
    for page in pages[:-1]:
        # A page stops once 1 MB has been read: with ~100 KB items that is after 10 items
        # (stopping before crossing 1 MB) or 11 (stopping after the item that crosses it).
        assert page["Count"] == page["ScannedCount"] == len(page["Items"])
        assert len(page["Items"]) in (10, 11), len(page["Items"])
        assert page["LastEvaluatedKey"] == key_of(page["Items"][-1])
    for page in pages:
        read = sum(item_size(i) for i in page["Items"])
        assert sum(item_size(i) for i in page["Items"][:-1]) < MB
        units = max(1, math.ceil(read / 4096)) * (1.0 if consistent else 0.5)
        assert page["ConsumedCapacity"]["CapacityUnits"] == units


@pytest.mark.parametrize("forward", [True, False], ids=["fwd", "back"])
@pytest.mark.parametrize("limit", [None, 100])
def test_query_megabyte_pages(api, tables, forward, limit):
    body = {"TableName": tables["fat"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("fat")}, "ScanIndexForward": forward,
            "ReturnConsumedCapacity": "TOTAL"}
    if limit:
        body["Limit"] = limit
    pages = query_pages(api, body)
    items = all_items(pages)
    expected = [fat_item("fat", i) for i in range(FAT_COUNT)]
    assert items == (expected if forward else expected[::-1])
    assert len(pages) == 3
    check_megabyte_pages(pages)


def test_scan_megabyte_pages(api, tables):
    pages = query_pages(api, {"TableName": tables["fat"], "ReturnConsumedCapacity": "TOTAL",
                              "ConsistentRead": True}, op="Scan")
    items = all_items(pages)
    expected = [fat_item("fat", i) for i in range(FAT_COUNT)]
    expected += [fat_item(f"fat{j}", i) for j in range(3) for i in range(4)]
    assert sorted(key_tuple(i) for i in items) == sorted(key_tuple(i) for i in expected)
    assert len(items) == len(expected)
    by_key = {key_tuple(i): i for i in expected}
    assert all(by_key[key_tuple(i)] == i for i in items)
    assert len(pages) == 4
    check_megabyte_pages(pages, consistent=True)


def test_megabyte_page_with_filter_and_count(api, tables):
    body = {"TableName": tables["fat"], "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("fat"), ":x": S("nothing")},
            "FilterExpression": "fill = :x", "Select": "COUNT"}
    pages = query_pages(api, body)
    assert len(pages) == 3
    assert [p["Count"] for p in pages] == [0, 0, 0]
    assert sum(p["ScannedCount"] for p in pages) == FAT_COUNT
    assert pages[0]["ScannedCount"] in (10, 11)
    assert "LastEvaluatedKey" in pages[0] and "LastEvaluatedKey" in pages[1]


# --------------------------------------------------------------------------- ExclusiveStartKey


START_KEY_ERRORS = [
    ({"pk": S("p")}, START_INVALID),
    ({"sk": N(1)}, START_INVALID),
    ({"pk": S("p"), "sk": N(1), "v": N(1)}, START_INVALID),
    ({"pk": S("p"), "other": N(1)}, START_INVALID),
    ({"pk": S("p"), "sk": S("1")}, START_SCHEMA),
    ({"pk": N(1), "sk": N(1)}, START_SCHEMA),
    ({"pk": S("p"), "sk": {"SS": ["1"]}}, START_SCHEMA),
    ({"pk": S("p"), "sk": {}}, START_INVALID + ": Supplied AttributeValue is empty, must contain "
                                               "exactly one of the supported datatypes"),
    ({"pk": S("p"), "sk": N("abc")}, "The parameter cannot be converted to a numeric value: abc"),
]


@pytest.mark.parametrize("op", ["Query", "Scan"])
@pytest.mark.parametrize("start,message", START_KEY_ERRORS,
                         ids=[str(i) for i in range(len(START_KEY_ERRORS))])
def test_start_key_shape_errors(api, tables, op, start, message):
    body = {"TableName": tables["N"], "ExclusiveStartKey": start}
    if op == "Query":
        body["KeyConditions"] = pk_eq("p")
    assert_validation(api(op, body), message)


def test_start_key_outside_query_boundaries(api, tables):
    resp = query(api, tables["N"], "pk = :p", {":p": S("p")},
                 ExclusiveStartKey={"pk": S("q"), "sk": N(1)})
    assert_validation(resp, START_OUTSIDE)
    resp = api("Query", {"TableName": tables["N"], "KeyConditions": pk_eq("p"),
                         "ExclusiveStartKey": {"pk": S("q"), "sk": N(1)}})
    assert_validation(resp, START_OUTSIDE)


@pytest.mark.parametrize("kce,values,sk", [
    ("sk > :a", {":a": N(5)}, N(1)),
    ("sk < :a", {":a": N(0)}, N(1)),
    ("sk BETWEEN :a AND :b", {":a": N(0), ":b": N(1)}, N(2)),
    ("sk >= :a", {":a": N(2)}, N("1.5")),
])
def test_start_key_outside_range_predicate(api, tables, kce, values, sk):
    resp = query(api, tables["N"], "pk = :p AND " + kce, dict({":p": S("p")}, **values),
                 ExclusiveStartKey={"pk": S("p"), "sk": sk})
    assert_validation(resp, START_PREDICATE)


def test_start_key_outside_begins_with_predicate(api, tables):
    resp = query(api, tables["S"], "pk = :p AND begins_with(sk, :a)", {":p": S("p"), ":a": S("a")},
                 ExclusiveStartKey={"pk": S("p"), "sk": S("b")})
    assert_validation(resp, START_PREDICATE)


@pytest.mark.parametrize("kind,start,forward,first", [
    ("N", "0.5", True, "1"),
    ("N", "0.5", False, "0.001"),
    ("N", "-1000", True, "-100"),
    ("N", "1E21", False, "100000000000000000000"),
    ("N", "1E21", True, None),
    ("N", "1", True, "1.5"),
    ("S", "aa", True, "aa!"),
    ("S", "aa", False, "a"),
    ("S", "\uffff", True, "😀"),
    ("B", b"\x80\x00\x00", True, b"\xff"),
    ("B", b"\x00\x00\x00", False, b"\x00\x00"),
])
def test_start_key_need_not_exist(api, tables, kind, start, forward, first):
    values, sort_key, _, canonical = SORT_TYPES[kind]
    written = {"N": N, "S": S, "B": B}[kind]
    out = ok(query(api, tables[kind], "pk = :p", {":p": S("p")}, ScanIndexForward=forward,
                   ExclusiveStartKey={"pk": S("p"), "sk": written(start)}))
    order = values if forward else values[::-1]
    if first is None:
        assert out["Items"] == []
    else:
        k = order.index(first)
        assert [i["sk"] for i in out["Items"]] == [canonical(v) for v in order[k:]]
    assert "LastEvaluatedKey" not in out


def test_start_key_inside_predicate_resumes(api, tables):
    out = ok(query(api, tables["N"], "pk = :p AND sk BETWEEN :a AND :b",
                   {":p": S("p"), ":a": N(-1), ":b": N(2)},
                   ExclusiveStartKey={"pk": S("p"), "sk": N("0.001")}))
    assert [i["sk"]["N"] for i in out["Items"]] == ["1", "1.5", "2"]


def full_scan(api, table, limit=None, **extra):
    body = dict({"TableName": table}, **extra)
    if limit:
        body["Limit"] = limit
    return all_items(query_pages(api, body, op="Scan"))


def test_scan_start_key_need_not_exist(api, tables):
    t = tables["many"]
    order = [key_tuple(i) for i in full_scan(api, t)]
    position = {k: n for n, k in enumerate(order)}
    # Existing partition, missing sort key between 2 and 3: resumes at (pk, 3).
    k = position[("m017", 3)]
    items = full_scan(api, t, ExclusiveStartKey={"pk": S("m017"), "sk": N("2.5")})
    assert [key_tuple(i) for i in items] == order[k:]
    # Missing partition: the rest is some suffix of the full order.
    items = [key_tuple(i) for i in full_scan(api, t, ExclusiveStartKey={"pk": S("zzz-none"),
                                                                        "sk": N(0)})]
    assert items == order[len(order) - len(items):]


# --------------------------------------------------------------------------- scan, parallel scan


def test_scan_whole_table(api, tables):
    t = tables["many"]
    items = full_scan(api, t)
    expected = {(f"m{p:03d}", Decimal(i)) for p in range(MANY_PARTITIONS)
                for i in range(MANY_PER_PARTITION)}
    keys = [key_tuple(i) for i in items]
    assert len(keys) == len(expected) and set(keys) == expected
    # Partitions are contiguous and in sort-key order inside.
    seen = []
    for pk, sk in keys:
        if not seen or seen[-1] != pk:
            assert pk not in seen, f"partition {pk} appears twice"
            seen.append(pk)
    for n in range(0, len(keys), MANY_PER_PARTITION):
        assert [sk for _, sk in keys[n:n + MANY_PER_PARTITION]] == list(range(MANY_PER_PARTITION))
    # The order is stable, and the same when paged.
    assert [key_tuple(i) for i in full_scan(api, t)] == keys
    assert [key_tuple(i) for i in full_scan(api, t, limit=37)] == keys
    assert [key_tuple(i) for i in full_scan(api, t, limit=1000)] == keys


def test_scan_items_are_whole(api, tables):
    items = full_scan(api, tables["many"], limit=300)
    assert all(i == many_item(int(i["p"]["N"]), int(i["sk"]["N"])) for i in items)


def test_scan_boto3_paginator(ddb, tables):
    paginator = ddb.get_paginator("scan")
    n = 0
    for page in paginator.paginate(TableName=tables["many"], Segment=1, TotalSegments=2,
                                   PaginationConfig={"PageSize": 99}):
        n += page["Count"]
    half = ddb.scan(TableName=tables["many"], Segment=0, TotalSegments=2, Select="COUNT")
    assert n + half["Count"] == MANY_PARTITIONS * MANY_PER_PARTITION


@pytest.mark.parametrize("total", [1, 3, 7, 16])
def test_parallel_scan_covers_every_item_once(api, tables, total):
    t = tables["many"]
    full = [key_tuple(i) for i in full_scan(api, t)]
    segments = []
    for s in range(total):
        items = full_scan(api, t, limit=37, Segment=s, TotalSegments=total)
        segments.append([key_tuple(i) for i in items])
    everything = [k for seg in segments for k in seg]
    assert len(everything) == len(set(everything)) == len(full)
    assert set(everything) == set(full)
    owner = {}
    for s, seg in enumerate(segments):
        for pk, _ in seg:
            assert owner.setdefault(pk, s) == s, f"partition {pk} in segments {owner[pk]}, {s}"
    # Segment i is a slice of the token order: the segments, in order, make the full scan.
    assert everything == full
    if total == 16:
        assert sum(1 for seg in segments if seg) >= 12  # 200 partitions spread out


def test_parallel_scan_single_page_per_segment_matches_paged(api, tables):
    t = tables["many"]
    for s in range(3):
        a = full_scan(api, t, Segment=s, TotalSegments=3)
        b = full_scan(api, t, limit=11, Segment=s, TotalSegments=3)
        assert a == b


def test_parallel_scan_last_segments_of_a_huge_split(api, tables):
    t = tables["many"]
    n = 0
    for s in (0, 999_999):
        n += ok(scan(api, t, Segment=s, TotalSegments=1_000_000, Select="COUNT"))["Count"]
    assert n <= MANY_PARTITIONS * MANY_PER_PARTITION


def first_key_by_segment(api, table, total):
    keys = {}
    for s in range(total):
        out = ok(scan(api, table, Segment=s, TotalSegments=total, Limit=1))
        if out["Items"]:
            keys[s] = out["LastEvaluatedKey"]
    return keys


@pytest.mark.parametrize("total", [3, 7])
def test_start_key_from_another_segment(api, tables, total):
    t = tables["many"]
    keys = first_key_by_segment(api, t, total)
    assert len(keys) >= 2
    for s, key in keys.items():
        other = (s + 1) % total
        resp = scan(api, t, Segment=other, TotalSegments=total, ExclusiveStartKey=key)
        assert_validation(resp, "The provided starting key is invalid: Invalid ExclusiveStartKey. "
                                "Please use ExclusiveStartKey with correct Segment. "
                                f"TotalSegments: {total} Segment: {other}")
        assert ok(scan(api, t, Segment=s, TotalSegments=total, ExclusiveStartKey=key,
                       Limit=1))["Count"] == 1


def test_start_key_any_segment_without_parallel_scan(api, tables):
    t = tables["many"]
    for key in first_key_by_segment(api, t, 3).values():
        assert ok(scan(api, t, ExclusiveStartKey=key, Limit=1))["Count"] == 1


SEGMENT_ERRORS = [
    ({"Segment": 0}, "The TotalSegments parameter is required but was not present in the request "
                     "when Segment parameter is present"),
    ({"TotalSegments": 4}, "The Segment parameter is required but was not present in the request "
                           "when parameter TotalSegments is present"),
    ({"Segment": 3, "TotalSegments": 3}, "The Segment parameter is zero-based and must be less "
                                         "than parameter TotalSegments: Segment: 3 is not less "
                                         "than TotalSegments: 3"),
    ({"Segment": 10, "TotalSegments": 1}, "The Segment parameter is zero-based and must be less "
                                          "than parameter TotalSegments: Segment: 10 is not less "
                                          "than TotalSegments: 1"),
    ({"Segment": -1, "TotalSegments": 2},
     COR_PREFIX + "Value '-1' at 'segment' failed to satisfy constraint: Member must have value "
                  "greater than or equal to 0"),
    ({"Segment": 1000000, "TotalSegments": 1000000},
     COR_PREFIX + "Value '1000000' at 'segment' failed to satisfy constraint: Member must have "
                  "value less than or equal to 999999"),
    ({"Segment": 0, "TotalSegments": 0},
     COR_PREFIX + "Value '0' at 'totalSegments' failed to satisfy constraint: Member must have "
                  "value greater than or equal to 1"),
    ({"Segment": 0, "TotalSegments": 1000001},
     COR_PREFIX + "Value '1000001' at 'totalSegments' failed to satisfy constraint: Member must "
                  "have value less than or equal to 1000000"),
]


@pytest.mark.parametrize("extra,message", SEGMENT_ERRORS,
                         ids=[str(i) for i in range(len(SEGMENT_ERRORS))])
def test_segment_errors(api, tables, extra, message):
    assert_validation(scan(api, tables["many"], **extra), message)


def test_segment_errors_on_missing_table_are_validation_first(api):
    resp = scan(api, unique_name("qs-missing"), Segment=0)
    assert_validation(resp, "The TotalSegments parameter is required but was not present in the "
                            "request when Segment parameter is present")


# --------------------------------------------------------------------------- odds and ends


def test_hash_only_table_keys(api, tables):
    t = tables["hash"]
    pages = query_pages(api, {"TableName": t, "Limit": 2}, op="Scan")
    assert sorted(i["pk"]["S"] for i in all_items(pages)) == [f"h{i}" for i in range(5)]
    for page in pages[:-1]:
        assert page["LastEvaluatedKey"] == {"pk": page["Items"][-1]["pk"]}
    assert_validation(scan(api, t, ExclusiveStartKey={"pk": S("h1"), "sk": N(1)}), START_INVALID)
    assert_validation(scan(api, t, ExclusiveStartKey={"pk": N(1)}), START_SCHEMA)


def test_table_arn(api, tables):
    t = tables["cap"]
    arn = f"arn:aws:dynamodb:us-east-1:000000000000:table/{t}"
    out = api.ok("Query", dict(cap_body(tables, ReturnConsumedCapacity="TOTAL"), TableName=arn))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": arn, "CapacityUnits": 1.5}
    out = ok(scan(api, arn, ReturnConsumedCapacity="TOTAL", ConsistentRead=True))
    assert out["Count"] == CAP_ITEMS
    assert out["ConsumedCapacity"] == {"TableName": arn, "CapacityUnits": 3.0}


def test_filtered_pagination_totals(api, tables):
    for forward in (True, False):
        pages = query_pages(api, {
            "TableName": tables["misc"], "KeyConditionExpression": "pk = :p",
            "FilterExpression": "odd = :t", "Limit": 3, "ScanIndexForward": forward,
            "ExpressionAttributeValues": {":p": S("filt"), ":t": BOOL(True)}})
        got = [int(i["sk"]["N"]) for i in all_items(pages)]
        odd = list(range(1, FILT_SIZE, 2))
        assert got == (odd if forward else odd[::-1])
        assert sum(p["Count"] for p in pages) == 10
        assert sum(p["ScannedCount"] for p in pages) == FILT_SIZE
        assert len(pages) == 7


def test_scan_projection_expression(api, tables):
    out = ok(scan(api, tables["misc"], ProjectionExpression="sk, m.y",
                  FilterExpression="pk = :p AND num < :n",
                  ExpressionAttributeValues={":p": S("filt"), ":n": N(2)}))
    assert sorted(out["Items"], key=lambda i: i["sk"]["N"]) == [
        {"sk": N(0), "m": {"M": {"y": S("why")}}}, {"sk": N(1), "m": {"M": {"y": S("why")}}}]


def test_filter_expression_errors(api, tables):
    resp = filt_query(api, tables, FilterExpression="num = :missing")
    assert_validation(resp, "Invalid FilterExpression: An expression attribute value used in "
                            "expression is not defined; attribute value: :missing")
    resp = filt_query(api, tables, FilterExpression="num = :n", values={":n": N(1)},
                      names={"#unused": "x"})
    assert_validation(resp, "Value provided in ExpressionAttributeNames unused in expressions: "
                            "keys: {#unused}")
    resp = scan(api, tables["misc"], FilterExpression="")
    assert_validation(resp, "Invalid FilterExpression: The expression can not be empty;")
