"""Bad-input matrix: hostile and malformed requests, each answered exactly as DynamoDB
answers it or, where DynamoDB's answer is not known, with a clean error and no crash. After
every case the server must still serve a normal GetItem.

Groups (the pytest ids carry `<group>:<index>/<group size>`, so the count of every group is
visible in `pytest --collect-only -q`; CASE_COUNTS holds the same numbers). The cases are built
in bad_input_cases.py (utf8, nesting, number, unknown) and bad_input_members.py (type, order):

* utf8     invalid UTF-8 (raw bytes and escaped lone surrogates) in every kind of JSON
           string: bare SerializationException (no message), as for any other body that is
           not JSON (JSON text must be UTF-8).
* nesting  AttributeValue nesting past 32 levels in every place an AttributeValue is
           read ("Nesting Levels have exceeded supported limits: ...", with the
           `1 validation error detected: ` prefix on writes and, in ExpressionAttributeValues,
           inside "ExpressionAttributeValues contains invalid value: ... for key <key>"), and
           raw JSON nesting far past the parser's depth limit.
* number   N values beyond 38 significant digits, beyond 1E+126 / 1E-130, with absurd
           exponents, or not numbers at all (DynamoDB's number texts) in every place an N is
           read.
* unknown  unknown top-level members of every JSON type on every operation: ignored.
* type     every member of PutItem, GetItem, UpdateItem, DeleteItem, Query, Scan,
           BatchWriteItem, BatchGetItem, TransactWriteItems and CreateTable (nested
           structures included) given a value of the wrong JSON type: SerializationException
           with DynamoDB's type-mismatch text. Generated from the MEMBERS table (member
           path → model type).
* order    a type mismatch together with a later-stage error (legacy/expression mix):
           the type mismatch wins (JSON types are checked before model constraints and
           semantic validation).

Where DynamoDB's text for a combination is not known, the expected text follows the same
Jackson rule the known texts follow ("<TOKEN> cannot be converted to <Type>", "Unrecognized
collection type class java.lang.<Type>") when Kumo already answers that way; where there is
neither a known text nor an obvious rule (number or array for a Boolean, non-string for a Blob)
only status and __type are checked.

Also here: the valid neighbours of the invalid cases (edge numbers, unusual Unicode), and a
memory check (VmRSS of a private server before and after replaying the whole matrix). The
HTTP-level cases are in test_bad_input_http.py.

A case may carry `bug=` (a strict xfail naming the server bug) while that bug is open; none
is open now.
"""

import http.client
import json

import pytest

from bad_input_cases import (  # noqa: F401
    GOOD_NUMBERS,
    MAIN,
    NUMERIC,
    OK,
    Case,
    N,
    S,
    assert_serves_get,
    check,
    head,
    nesting_cases,
    number_cases,
    raw_exchange,
    setup_tables,
    target,
    unknown_member_cases,
    utf8_cases,
)
from bad_input_members import (
    AVMAP,
    BOOL,
    INT,
    LIST,
    LONG,
    MAP,
    MEMBERS,
    STR,
    STRUCT,
    TIME,
    order_cases,
    type_cases,
)
from kumo_testlib import TARGET_PREFIX, signed_request


# --------------------------------------------------------------------------- the matrix

GROUPS = {
    "utf8": utf8_cases(),
    "nesting": nesting_cases(),
    "number": number_cases(),
    "unknown": unknown_member_cases(),
    "type": type_cases(),
    "order": order_cases(),
}
CASE_COUNTS = {g: len(c) for g, c in GROUPS.items()}
CASE_COUNT = sum(CASE_COUNTS.values())


def _params():
    out = []
    for group, cases in GROUPS.items():
        for i, case in enumerate(cases):
            marks = [pytest.mark.xfail(strict=True, reason=case.bug)] if case.bug else []
            ident = f"{group}:{i + 1:03d}/{len(cases)}:{case.name}"[:160]
            out.append(pytest.param(case, id=ident, marks=marks))
    return out


def send(port, case):
    return signed_request(port, TARGET_PREFIX + case.op, case.body)


@pytest.mark.parametrize("case", _params())
def test_matrix(target, case):
    resp = send(target.port, case)
    check(resp, case.expect)
    assert_serves_get(target.port)


def test_matrix_size():
    """The matrix is big enough to mean something (and its size is visible with -s)."""
    print(f"\nbad-input matrix: {CASE_COUNT} cases {CASE_COUNTS}")
    assert CASE_COUNT >= 300
    assert all(CASE_COUNTS.values())


def test_members_table_covers_the_botocore_model():
    """Every top-level input member of the installed botocore model appears in MEMBERS with
    the same type (MEMBERS also has members newer than that model)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("dynamodb")
    kinds = {"string": {STR}, "integer": {INT}, "long": {LONG}, "boolean": {BOOL},
             "list": {LIST}, "map": {MAP, AVMAP}, "structure": {STRUCT}, "timestamp": {TIME}}
    tried = {}
    for op, _, members in MEMBERS:
        for path, kind in members:
            if "." not in path:
                tried.setdefault(op, {})[path] = kind
    missing = []
    for op, members in tried.items():
        shape = model.operation_model(op).input_shape
        for name, member in shape.members.items():
            if name not in members:
                missing.append(f"{op}.{name}")
            else:
                assert members[name] in kinds[member.type_name], (op, name, member.type_name)
    assert not missing, f"members of the botocore model not in MEMBERS: {missing}"


@pytest.mark.parametrize("name,text,canonical", GOOD_NUMBERS, ids=[g[0] for g in GOOD_NUMBERS])
def test_edge_numbers_are_accepted_in_canonical_form(target, name, text, canonical):
    api = target.api()
    key = {"pk": S(f"good-number-{name}")}
    api.ok("PutItem", {"TableName": MAIN, "Item": dict(key, v=N(text), s={"NS": [text, "7"]})})
    got = api.ok("GetItem", {"TableName": MAIN, "Key": key, "ConsistentRead": True})["Item"]
    assert got["v"] == N(canonical)
    assert sorted(got["s"]["NS"]) == sorted([canonical, "7"])
    # The same number as a key on the numeric table.
    api.ok("PutItem", {"TableName": NUMERIC, "Item": {"pk": N(text)}})
    got = api.ok("GetItem", {"TableName": NUMERIC, "Key": {"pk": N(canonical)},
                             "ConsistentRead": True})
    assert got.get("Item") == {"pk": N(canonical)}
    api.ok("DeleteItem", {"TableName": NUMERIC, "Key": {"pk": N(text)}})


@pytest.mark.parametrize("text", [
    "\u0000", "a\u0000b", "\U0001F600", "\uFFFE", "\uFFFF", "\U0010FFFF", "\u2028\u2029",
    "\ud7ff\ue000", "é" * 1000,
], ids=["nul", "inner-nul", "emoji", "U+FFFE", "U+FFFF", "U+10FFFF", "line-separators",
        "surrogate-neighbours", "long-2-byte"])
def test_valid_unusual_unicode_round_trips(target, text):
    """The valid neighbours of the invalid UTF-8 cases: stored and returned unchanged, as
    attribute name, value, key and set member, whether sent escaped or raw."""
    api = target.api()
    key = {"pk": S("u:" + text)}
    item = dict(key, **{"n:" + text: S(text), "set": {"SS": [text, "x"]}})
    for ensure_ascii in (True, False):
        body = json.dumps({"TableName": MAIN, "Item": item}, ensure_ascii=ensure_ascii)
        assert api("PutItem", body.encode()).status == 200
        got = api.ok("GetItem", {"TableName": MAIN, "Key": key, "ConsistentRead": True})
        assert got["Item"]["n:" + text] == S(text)
        assert sorted(got["Item"]["set"]["SS"]) == sorted([text, "x"])
        assert got["Item"]["pk"] == key["pk"]
    assert_serves_get(target.port)


# --------------------------------------------------------------------------- memory


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


MEMORY_PASSES = 3
MEMORY_LIMIT_MIB = 64


def test_memory_does_not_grow_under_the_hostile_matrix(start_server):
    """Replays the whole matrix (plus the big-body and framing cases) MEMORY_PASSES times
    on a private server after one warm-up pass: VmRSS may not grow by more than 64 MiB."""
    srv = start_server()
    setup_tables(srv)
    cases = [c for group in GROUPS.values() for c in group]
    big = Case("big-unknown", "ListTables", {"Pad": "x" * (4 * 1024 * 1024)}, OK)
    framing = [head(b"Content-Length: abc\r\n") + b"{}",
               head(b"Content-Length: 100\r\n") + b"{",
               head(b"Content-Length: 16777217\r\n")]
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)

    def one_pass():
        for case in cases + [big]:
            resp = signed_request(srv.port, TARGET_PREFIX + case.op, case.body, conn=conn)
            if case.bug is None:
                check(resp, case.expect)
        for data in framing:
            raw_exchange(srv.port, data)

    try:
        one_pass()
        before = rss_kib(srv.proc.pid)
        for _ in range(MEMORY_PASSES):
            one_pass()
        after = rss_kib(srv.proc.pid)
    finally:
        conn.close()
    assert srv.alive()
    assert_serves_get(srv.port)
    # ASan keeps freed memory in quarantine (256 MB by default), so RSS grows by design
    # there; the replay above still ran under its checks. gcc links ASan as libasan, clang
    # into the executable.
    with open(f"/proc/{srv.proc.pid}/maps") as maps:
        shared_asan = "libasan" in maps.read()
    with open(f"/proc/{srv.proc.pid}/exe", "rb") as exe:
        static_asan = b"__asan_init" in exe.read()
    if shared_asan or static_asan:
        pytest.skip("RSS is not bounded under AddressSanitizer's quarantine")
    grown = (after - before) / 1024
    print(f"\nVmRSS {before / 1024:.1f} MiB → {after / 1024:.1f} MiB after {MEMORY_PASSES} passes "
          f"of {len(cases) + 1} requests")
    assert grown <= MEMORY_LIMIT_MIB, f"VmRSS grew by {grown:.1f} MiB"
