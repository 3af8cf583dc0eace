"""The bad-input matrix, part one: the Case type and the
expectations every hostile request is checked against, and the utf8, nesting, number and
unknown groups of cases (with GOOD_NUMBERS, the accepted edge values). The type and order
groups are in bad_input_members.py; test_bad_input_matrix.py sends them all.

Shared by the bad-input modules: the two tables they work on (MAIN, pk S; NUMERIC, pk N),
the module-scoped `target` fixture that creates them on a private server, the "server still
serves a normal GetItem" check, and the raw-socket helpers of the HTTP-level cases."""

import json
import socket

import pytest

from kumo_testlib import (
    COR_PREFIX,
    JSON_10,
    SERIALIZATION,
    TARGET_PREFIX,
    VALIDATION,
    create_table_args,
    signed_request,
)

MAIN = "bad-input-main"      # pk S
NUMERIC = "bad-input-num"    # pk N
SEEDED_KEY = {"pk": {"S": "seeded"}}
SEEDED_ITEM = {"pk": {"S": "seeded"}, "v": {"S": "still here ✓"}, "n": {"N": "42"}}
SERIALIZATION_BODY = b'{"__type":"com.amazon.coral.service#SerializationException"}'
NEST = ("Nesting Levels have exceeded supported limits: Attributes in the item have nested "
        "levels beyond supported limit")


def S(v):
    return {"S": v}


def N(v):
    return {"N": v}


def nested(depth, leaf=None):
    """A scalar wrapped in `depth` alternating M/L levels."""
    v = leaf or S("leaf")
    for i in range(depth):
        v = {"L": [v]} if i % 2 else {"M": {"m": v}}
    return v


def dumps(body):
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


# --------------------------------------------------------------------------- expectations
# ("bare",)                      → 400, body exactly SERIALIZATION_BODY
# ("error", status, type, msg)   → that status and __type, and message == msg
# ("type", status, type)         → that status and __type, any message
# ("ok",)                        → 200
# ("clean",)                     → 200, or 400 with a JSON error body (the answer is not known)

BARE = ("bare",)
OK = ("ok",)
CLEAN = ("clean",)


def ser(message):
    return ("error", 400, SERIALIZATION, message)


def val(message):
    return ("error", 400, VALIDATION, message)


class Case:
    def __init__(self, name, op, body, expect, bug=None):
        self.name = name
        self.op = op
        self.body = body if isinstance(body, bytes) else dumps(body)
        self.expect = expect
        self.bug = bug  # reason of a strict xfail


def check(resp, expect):
    kind = expect[0]
    if kind == "bare":
        assert resp.status == 400 and resp.body == SERIALIZATION_BODY, resp
        return
    if kind == "ok":
        assert resp.status == 200, resp
        return
    if kind == "clean":
        assert resp.status in (200, 400), resp
        if resp.status == 400:
            assert resp.json["__type"] in (SERIALIZATION, VALIDATION), resp
        return
    status, full_type = expect[1], expect[2]
    assert resp.status == status, f"expected {status} {full_type}, got {resp!r}"
    body = resp.json
    assert body.get("__type") == full_type, f"expected {full_type}, got {resp!r}"
    if kind == "error":
        assert resp.message == expect[3], (
            f"\nexpected message: {expect[3]!r}\n     got message: {resp.message!r}")
    else:
        assert resp.message, resp


# --------------------------------------------------------------------------- utf8

BAD_UTF8 = [
    ("lone-continuation", b"\x80"),
    ("byte-ff", b"\xff"),
    ("byte-fe", b"\xfe"),
    ("overlong-2", b"\xc0\xaf"),
    ("overlong-3", b"\xe0\x80\xaf"),
    ("cesu-surrogate", b"\xed\xa0\x80"),
    ("above-10ffff", b"\xf4\x90\x80\x80"),
    ("five-byte", b"\xf8\x88\x80\x80\x80"),
    ("truncated-3", b"\xe2\x82"),
    ("bad-continuation", b"\xc3\x28"),
    ("escaped-high-surrogate", b"\\ud800"),
    ("escaped-low-surrogate", b"\\udc00"),
    ("escaped-unpaired", b"\\ud800\\u0041"),
]

# (name, op, body template with X where the bad bytes go)
UTF8_PLACES = [
    ("table-name", "GetItem", b'{"TableName":"bad-X","Key":{"pk":{"S":"k"}}}'),
    ("s-value", "PutItem", b'{"TableName":"' + MAIN.encode()
     + b'","Item":{"pk":{"S":"utf8"},"v":{"S":"aXb"}}}'),
    ("key-value", "GetItem", b'{"TableName":"' + MAIN.encode() + b'","Key":{"pk":{"S":"Xk"}}}'),
    ("attr-name", "PutItem", b'{"TableName":"' + MAIN.encode()
     + b'","Item":{"pk":{"S":"utf8"},"nX":{"S":"v"}}}'),
    ("ss-member", "PutItem", b'{"TableName":"' + MAIN.encode()
     + b'","Item":{"pk":{"S":"utf8"},"v":{"SS":["a","X"]}}}'),
    ("map-key", "PutItem", b'{"TableName":"' + MAIN.encode()
     + b'","Item":{"pk":{"S":"utf8"},"v":{"M":{"kX":{"N":"1"}}}}}'),
    ("update-expression", "UpdateItem", b'{"TableName":"' + MAIN.encode()
     + b'","Key":{"pk":{"S":"utf8"}},"UpdateExpression":"SET #a = :X"}'),
    ("names-value", "GetItem", b'{"TableName":"' + MAIN.encode()
     + b'","Key":{"pk":{"S":"k"}},"ProjectionExpression":"#p","ExpressionAttributeNames":'
       b'{"#p":"X"}}'),
    ("unknown-member", "ListTables", b'{"UnknownX":"x"}'),
    ("batch-key", "BatchGetItem", b'{"RequestItems":{"' + MAIN.encode()
     + b'":{"Keys":[{"pk":{"S":"X"}}]}}}'),
]


# Every sequence is tried in these places; the other places get UTF8_SUBSET.
UTF8_FULL_PLACES = ("s-value", "attr-name", "table-name", "update-expression")
UTF8_SUBSET = ("byte-ff", "overlong-2", "cesu-surrogate", "truncated-3", "escaped-high-surrogate")


def utf8_cases():
    out = []
    for place, op, template in UTF8_PLACES:
        for name, bad in BAD_UTF8:
            if place in UTF8_FULL_PLACES or name in UTF8_SUBSET:
                out.append(Case(f"{place}-{name}", op, template.replace(b"X", bad), BARE))
    # Bytes outside any string: between tokens and after the document.
    head = b'{"TableName":"' + MAIN.encode() + b'",'
    tail = b'"Key":{"pk":{"S":"k"}}}'
    for name, bad in BAD_UTF8:
        if name in UTF8_SUBSET and not name.startswith("escaped"):
            out.append(Case(f"between-tokens-{name}", "GetItem", head + bad + tail, BARE))
            out.append(Case(f"after-document-{name}", "GetItem", head + tail + bad, BARE))
    return out


# --------------------------------------------------------------------------- nesting

def nesting_cases():
    out = []
    put = lambda v: {"TableName": MAIN, "Item": {"pk": S("nest"), "v": v}}
    upd = lambda v: {"TableName": MAIN, "Key": {"pk": S("nest")}, "UpdateExpression": "SET v = :v",
                     "ExpressionAttributeValues": {":v": v}}
    dele = lambda v: {"TableName": MAIN, "Key": {"pk": S("nest-none")},
                      "ConditionExpression": "v = :v", "ExpressionAttributeValues": {":v": v}}
    get = lambda v: {"TableName": MAIN, "Key": {"pk": v}}
    query = lambda v: {"TableName": MAIN, "KeyConditionExpression": "pk = :p",
                       "FilterExpression": "v = :v",
                       "ExpressionAttributeValues": {":p": S("nest"), ":v": v}}
    scan = lambda v: {"TableName": MAIN, "FilterExpression": "v = :v",
                      "ExpressionAttributeValues": {":v": v}}
    bwrite = lambda v: {"RequestItems": {MAIN: [{"PutRequest": {"Item": {"pk": S("nest-b"),
                                                                         "v": v}}}]}}
    bget = lambda v: {"RequestItems": {MAIN: {"Keys": [{"pk": v}]}}}
    tput = lambda v: {"TransactItems": [{"Put": {"TableName": MAIN,
                                                 "Item": {"pk": S("nest-t"), "v": v}}}]}
    tupd = lambda v: {"TransactItems": [{"Update": dict(upd(v), Key={"pk": S("nest-t")})}]}
    tcheck = lambda v: {"TransactItems": [{"ConditionCheck": {
        "TableName": MAIN, "Key": {"pk": S("nest-t")}, "ConditionExpression": "v = :v",
        "ExpressionAttributeValues": {":v": v}}}]}
    in_values = "ExpressionAttributeValues contains invalid value: " + NEST + " for key :v"
    places = [
        # name, op, body builder, message for a too-deep value
        ("put-item", "PutItem", put, COR_PREFIX + NEST),
        ("update-values", "UpdateItem", upd, COR_PREFIX + in_values),
        ("delete-condition-values", "DeleteItem", dele, COR_PREFIX + in_values),
        ("get-key", "GetItem", get, NEST),
        ("query-values", "Query", query, in_values),
        ("scan-values", "Scan", scan, in_values),
        ("batch-write-put", "BatchWriteItem", bwrite, NEST),
        ("batch-get-key", "BatchGetItem", bget, NEST),
        ("transact-put", "TransactWriteItems", tput, NEST),
        ("transact-update-values", "TransactWriteItems", tupd, in_values),
        ("transact-check-values", "TransactWriteItems", tcheck, in_values),
    ]
    for name, op, build, message in places:
        for depth in (32, 33, 100, 400):
            out.append(Case(f"{name}-depth{depth}", op, build(nested(depth)), val(message)))
    # 31 levels are accepted wherever an item value is written (positive controls).
    for name, op, build in [("put-item", "PutItem", put), ("update-values", "UpdateItem", upd),
                            ("batch-write-put", "BatchWriteItem", bwrite),
                            ("transact-put", "TransactWriteItems", tput),
                            ("transact-update-values", "TransactWriteItems", tupd)]:
        out.append(Case(f"{name}-depth31-accepted", op, build(nested(31)), OK))
    # Too deep one level below an otherwise shallow, wide map.
    wide = {"M": {f"k{i}": (nested(31) if i == 7 else S("x")) for i in range(10)}}
    out.append(Case("put-item-wide-map-depth32", "PutItem", put(wide),
                    val(COR_PREFIX + NEST)))

    # Raw JSON nesting far past the parser's depth limit, in many members.
    deep_arr = lambda d: b"[" * d + b"]" * d
    deep_obj = lambda d: b'{"a":' * d + b"1" + b"}" * d
    raw = [
        ("unknown-member-arrays-5000", "ListTables", b'{"X":' + deep_arr(5000) + b"}"),
        ("unknown-member-objects-5000", "ListTables", b'{"X":' + deep_obj(5000) + b"}"),
        ("table-name-arrays-3000", "DescribeTable", b'{"TableName":' + deep_arr(3000) + b"}"),
        ("key-objects-3000", "GetItem", b'{"TableName":"' + MAIN.encode() + b'","Key":'
         + deep_obj(3000) + b"}"),
        ("names-map-objects-3000", "GetItem", b'{"TableName":"' + MAIN.encode()
         + b'","Key":{"pk":{"S":"k"}},"ExpressionAttributeNames":' + deep_obj(3000) + b"}"),
        ("item-L-2000", "PutItem", b'{"TableName":"' + MAIN.encode()
         + b'","Item":{"pk":{"S":"deep"},"v":' + b'{"L":[' * 2000 + b'{"S":"x"}' + b"]}" * 2000
         + b"}}"),
        ("item-M-2000", "PutItem", b'{"TableName":"' + MAIN.encode()
         + b'","Item":{"pk":{"S":"deep"},"v":' + b'{"M":{"m":' * 2000 + b'{"S":"x"}'
         + b"}}" * 2000 + b"}}"),
        ("transact-items-arrays-4000", "TransactWriteItems", b'{"TransactItems":'
         + deep_arr(4000) + b"}"),
        ("unclosed-arrays-20000", "ListTables", b'{"X":' + b"[" * 20000),
        ("unclosed-objects-20000", "ListTables", b'{"X":' + b'{"a":' * 20000),
        ("mismatched-closers-3000", "ListTables", b'{"X":' + b"[" * 3000 + b"}" * 3000 + b"}"),
    ]
    for name, op, body in raw:
        out.append(Case(f"raw-{name}", op, body, BARE))
    # Around the parser's depth limit (JsonDocument::kMaxDepth, 1024): either way a clean answer.
    for d in (1022, 1023, 1024, 1025):
        out.append(Case(f"raw-total-depth-{d + 1}", "ListTables", b'{"X":' + deep_arr(d) + b"}",
                        CLEAN))
    # Brackets inside a string are not nesting.
    out.append(Case("raw-brackets-in-string", "GetItem", {
        "TableName": MAIN, "Key": SEEDED_KEY, "ProjectionExpression": "#p",
        "ExpressionAttributeNames": {"#p": "[" * 5000 + "{" * 5000}}, OK))
    return out


# --------------------------------------------------------------------------- number

OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger than "
            "supported range")
UNDERFLOW = ("Number underflow. Attempting to store a number with magnitude smaller than "
             "supported range")
DIGITS = "Attempting to store more than 38 significant digits in a Number"


def not_numeric(text):
    return f"The parameter cannot be converted to a numeric value: {text}"


BAD_NUMBERS = [
    ("39-digits", "1" * 39, DIGITS),
    ("39-digits-negative", "-" + "9" * 39, DIGITS),
    ("39-digits-fraction", "1." + "0" * 37 + "1", DIGITS),
    ("39-digits-straddling", "1" * 20 + "." + "1" * 19, DIGITS),
    ("39-digits-after-zeros", "0.000" + "7" * 39, DIGITS),
    ("39-digits-exponent", "1" * 39 + "e-50", DIGITS),
    ("1e126", "1e126", OVERFLOW),
    ("1E+126", "1E+126", OVERFLOW),
    ("-1E+126", "-1E+126", OVERFLOW),
    ("10E+125", "10E+125", OVERFLOW),
    ("0.1e127", "0.1e127", OVERFLOW),
    ("1e999999999999", "1e999999999999", OVERFLOW),
    ("-1e999999999999", "-1e999999999999", OVERFLOW),
    ("exponent-beyond-int64", "1e99999999999999999999999999", OVERFLOW),
    ("1-and-100000-zeros", "1" + "0" * 100000, OVERFLOW),
    ("zero-huge-exponent", "0e999999999999", OVERFLOW),
    ("zero-exponent-126", "0e126", OVERFLOW),
    ("1e-131", "1e-131", UNDERFLOW),
    ("1E-131", "1E-131", UNDERFLOW),
    ("-1e-131", "-1e-131", UNDERFLOW),
    ("0.1e-130", "0.1e-130", UNDERFLOW),
    ("1e-999999999999", "1e-999999999999", UNDERFLOW),
    ("negative-exponent-beyond-int64", "1e-99999999999999999999999999", UNDERFLOW),
    ("100000-zeros-then-1", "0." + "0" * 100000 + "1", UNDERFLOW),
    ("minus", "-", not_numeric("-")),
    ("plus", "+", not_numeric("+")),
    ("empty", "", "The parameter cannot be converted to a numeric value"),
    ("leading-space", " 1", not_numeric(" 1")),
    ("trailing-space", "1 ", not_numeric("1 ")),
    ("hex", "0x10", not_numeric("0x10")),
    ("NaN", "NaN", not_numeric("NaN")),
    ("Infinity", "Infinity", not_numeric("Infinity")),
    ("-Infinity", "-Infinity", not_numeric("-Infinity")),
    ("inf", "inf", not_numeric("inf")),
    ("bare-e", "1e", not_numeric("1e")),
    ("e-sign-only", "1e+", not_numeric("1e+")),
    ("no-mantissa", "e5", not_numeric("e5")),
    ("dot", ".", not_numeric(".")),
    ("two-signs", "+-1", not_numeric("+-1")),
    ("two-dots", "1..2", not_numeric("1..2")),
    ("comma", "1,000", not_numeric("1,000")),
    ("fullwidth-digit", "１", not_numeric("１")),
    ("arabic-indic-digit", "١", not_numeric("١")),
    ("nul-inside", "1\u00002", not_numeric("1\u00002")),
]
# The places where every bad number is tried; the others get a representative subset.
FULL_NUMBER_PLACES = ("put-attribute", "batch-write-put", "update-values")
NUMBER_SUBSET = ("39-digits", "1E+126", "1e999999999999", "1e-131", "empty", "NaN", "minus",
                 "100000-zeros-then-1")


def number_cases():
    in_values = lambda m: f"ExpressionAttributeValues contains invalid value: {m} for key :v"
    places = [
        ("put-attribute", "PutItem",
         lambda n: {"TableName": MAIN, "Item": {"pk": S("num"), "v": N(n)}},
         lambda m: COR_PREFIX + m),
        ("batch-write-put", "BatchWriteItem",
         lambda n: {"RequestItems": {MAIN: [{"PutRequest": {"Item": {"pk": S("num"),
                                                                     "v": N(n)}}}]}},
         lambda m: m),
        ("update-values", "UpdateItem",
         lambda n: {"TableName": MAIN, "Key": {"pk": S("num")}, "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": N(n)}},
         lambda m: COR_PREFIX + in_values(m)),
        ("put-number-set", "PutItem",
         lambda n: {"TableName": MAIN, "Item": {"pk": S("num"), "v": {"NS": ["1", n]}}},
         lambda m: COR_PREFIX + m),
        ("put-nested", "PutItem",
         lambda n: {"TableName": MAIN,
                    "Item": {"pk": S("num"), "v": {"M": {"l": {"L": [S("x"), N(n)]}}}}},
         lambda m: COR_PREFIX + m),
        ("get-numeric-key", "GetItem",
         lambda n: {"TableName": NUMERIC, "Key": {"pk": N(n)}}, lambda m: m),
        ("batch-get-numeric-key", "BatchGetItem",
         lambda n: {"RequestItems": {NUMERIC: {"Keys": [{"pk": N(n)}]}}}, lambda m: m),
        ("transact-put", "TransactWriteItems",
         lambda n: {"TransactItems": [{"Put": {"TableName": MAIN,
                                               "Item": {"pk": S("num"), "v": N(n)}}}]},
         lambda m: m),
        ("scan-values", "Scan",
         lambda n: {"TableName": MAIN, "FilterExpression": "v = :v",
                    "ExpressionAttributeValues": {":v": N(n)}}, in_values),
        ("query-values", "Query",
         lambda n: {"TableName": MAIN, "KeyConditionExpression": "pk = :p",
                    "FilterExpression": "v < :v",
                    "ExpressionAttributeValues": {":p": S("num"), ":v": N(n)}}, in_values),
    ]
    out = []
    for place, op, build, wrap in places:
        for name, text, message in BAD_NUMBERS:
            if place in FULL_NUMBER_PLACES or name in NUMBER_SUBSET:
                out.append(Case(f"{place}-{name}", op, build(text), val(wrap(message))))
    return out


# Accepted edge values and the canonical form they come back in (plain decimal, no exponent,
# no leading or trailing zeros, no `+`, -0 is 0).
GOOD_NUMBERS = [
    ("38-digits", "1" * 38, "1" * 38),
    ("38-digits-trailing-zeros", "1" * 38 + "0" * 10, "1" * 38 + "0" * 10),
    ("max", "9.9999999999999999999999999999999999999E+125", "9" * 38 + "0" * 88),
    ("min-negative", "-9.9999999999999999999999999999999999999E+125", "-" + "9" * 38 + "0" * 88),
    ("smallest", "1e-130", "0." + "0" * 129 + "1"),
    ("smallest-negative", "-1E-130", "-0." + "0" * 129 + "1"),
    ("exponent-leading-zeros", "1e0000000000000125", "1" + "0" * 125),
    ("100000-leading-zeros", "0" * 100000 + "42", "42"),
    ("zero-exponent-at-the-limit", "0.0e126", "0"),
    ("negative-zero-tiny-exponent", "-0.0e-999", "0"),
    ("39-digits-of-which-trailing-zero", "1" * 38 + "0", "1" * 38 + "0"),
]


# --------------------------------------------------------------------------- unknown

def unknown_member_cases():
    ops = {
        "PutItem": {"TableName": MAIN, "Item": {"pk": S("unknown"), "v": S("x")}},
        "GetItem": {"TableName": MAIN, "Key": SEEDED_KEY},
        "UpdateItem": {"TableName": MAIN, "Key": {"pk": S("unknown")},
                       "UpdateExpression": "SET v = :v",
                       "ExpressionAttributeValues": {":v": S("y")}},
        "DeleteItem": {"TableName": MAIN, "Key": {"pk": S("unknown-gone")}},
        "Query": {"TableName": MAIN, "KeyConditionExpression": "pk = :p",
                  "ExpressionAttributeValues": {":p": S("seeded")}},
        "Scan": {"TableName": MAIN, "Limit": 1},
        "BatchWriteItem": {"RequestItems": {
            MAIN: [{"PutRequest": {"Item": {"pk": S("unknown-b")}}}]}},
        "BatchGetItem": {"RequestItems": {MAIN: {"Keys": [SEEDED_KEY]}}},
        "TransactWriteItems": {"TransactItems": [{"Put": {"TableName": MAIN,
                                                          "Item": {"pk": S("unknown-t")}}}]},
        "TransactGetItems": {"TransactItems": [{"Get": {"TableName": MAIN, "Key": SEEDED_KEY}}]},
        "DescribeTable": {"TableName": MAIN},
        "ListTables": {"Limit": 5},
        "DescribeContributorInsights": {"TableName": MAIN},
        "ListContributorInsights": {"MaxResults": 5},
    }
    unknowns = [
        ("number", {"Unknown": 1}),
        ("wrong-case-of-a-real-member", {"tablename": 7, "KEY": "x", "item": []}),
        ("__type", {"__type": "com.amazon.coral.service#SerializationException"}),
        ("deep-object", {"Extra": nested(300)}),
        ("big-string", {"Extra": "x" * 200000}),
        ("empty-name-and-null", {"": "", "Nothing": None}),
        ("mixed-array", {"Extra": [1, "a", None, True, {"b": [2.5e300]}]}),
    ]
    out = []
    for op, base in ops.items():
        for name, extra in unknowns:
            body = dict(base)
            body.update(extra)
            out.append(Case(f"{op}-{name}", op, body, OK))
    return out


# --------------------------------------------------------------------------- the tables

def assert_serves_get(port):
    resp = signed_request(port, TARGET_PREFIX + "GetItem",
                          {"TableName": MAIN, "Key": SEEDED_KEY, "ConsistentRead": True})
    assert resp.status == 200, f"GetItem after the hostile input failed: {resp!r}"
    assert resp.json == {"Item": SEEDED_ITEM}, resp


def setup_tables(srv):
    api = srv.api()
    for name, key in ((MAIN, ("pk", "S")), (NUMERIC, ("pk", "N"))):
        if api("DescribeTable", {"TableName": name}).status != 200:
            api.ok("CreateTable", create_table_args(name, key))
    api.ok("PutItem", {"TableName": MAIN, "Item": SEEDED_ITEM})


@pytest.fixture(scope="module")
def target(module_server):
    setup_tables(module_server)
    return module_server


# --------------------------------------------------------------------------- raw HTTP


def raw_exchange(port, data, shut_write=True, timeout=10.0):
    """Sends raw bytes, optionally half-closes, and reads until the server closes.
    Returns (bytes received, True if the server closed the connection)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    closed = False
    try:
        sock.sendall(data)
        if shut_write:
            sock.shutdown(socket.SHUT_WR)
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            out += chunk
    except socket.timeout:
        pass
    finally:
        sock.close()
    return out, closed


def head(extra=b"", target="ListTables"):
    return (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + JSON_10.encode()
            + b"\r\nX-Amz-Target: " + (TARGET_PREFIX + target).encode() + b"\r\n" + extra
            + b"\r\n")
