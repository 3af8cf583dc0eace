"""Data sets, tables and request helpers of the PartiQL read and error tests
(test_partiql_select.py, test_partiql_errors.py). The `pq` fixture builds each table on first
use, once per module (and again if the shared server was restarted)."""

import pytest

from kumo_testlib import (
    N,
    S,
    assert_validation,
    b64,
    create_table_args,
    unique_name,
    wait_table_active,
)

ENVELOPE = "Statement wasn't well formed, can't be processed: "
INVALID = "One or more parameter values were invalid: "
DUPLICATE_ITEM = "com.amazonaws.dynamodb.v20120810#DuplicateItemException"


# --------------------------------------------------------------------------- values


def B(data):
    return {"B": b64(data)}


def BOOL(value):
    return {"BOOL": value}


NULL = {"NULL": True}


def L(*values):
    return {"L": list(values)}


def M(**members):
    return {"M": members}


def SS(*values):
    return {"SS": list(values)}


def NS(*values):
    return {"NS": [str(v) for v in values]}


def BS(*values):
    return {"BS": [b64(v) for v in values]}


# --------------------------------------------------------------------------- data sets

# "data" (pk S): every type, for WHERE semantics. d5 has none of the typed attributes.
DATA = {
    "d1": dict(n=N(1), s=S("abc"), v=S("3"), flag=BOOL(True), nul=NULL, l=L(N(1), S("x")),
               m=M(a=N(1), b=S("x")), ss=SS("a", "b"), ns=NS(1, 2), b=B(b"\x01\x02"),
               bs=BS(b"\x01", b"\x02"), yes=BOOL(True), txt=S("a--b /*c*/")),
    "d2": dict(n=N(5), s=S("abd"), v=N(3), flag=BOOL(False), l=L(S("x"), N(1)),
               m=M(b=S("x"), a=N(1)), ss=SS("c"), ns=NS(5), b=B(b"\xff"), yes=BOOL(False),
               txt=S("it's here")),
    "d3": dict(n=N(10), s=S("b"), v=BOOL(True), nul=S("not null")),
    "d4": dict(n=N(7310000)),
    "d5": dict(other=S("x")),
    "d6": dict(n=N("-2.5"), s=S("ab"), nul=NULL, l=L(N(-1))),
}
ALL_DATA = sorted(DATA)

# "proj" (pk S): paths for projection lists; p2 has none of them.
PROJ = {
    "p1": {"mymap": M(nested=S("v"), inner=S("in")), "profile": M(sub=S("ps"), x=S("px")),
           "tags": L(S("a"), S("b"), S("c")), "m": M(k=L(N(1), N(2))), "l": L(S("z"), S("y")),
           "deep": M(a=M(b=L(M(c=S("x"))))), "count": N(3), "a b": S("sp"), 'a"b': S("q"),
           "value": S("val")},
    "p2": {"other": S("o")},
}

# "keyed" (pk S, sk S): partitions for keyed reads and ORDER BY.
KEYED = [
    ("a", "0", {"f": S("1"), "flag": S("one")}),
    ("a", "1", {"f": S("2")}),
    ("a", "2", {"f": S("1")}),
    ("a", "3", {"f": S("x")}),
    ("b", "1", {"f": S("2")}),
    ("b", "2", {}),
    ("o", "1", {"Total": N(10)}),
    ("o", "2", {"Total": N(20)}),
    ("o", "3", {"Total": N(30)}),
    ("p", "1", {"Total": N(11)}),
    ("p", "2", {"Total": N(21)}),
    ("p", "3", {"Total": N(31)}),
]
ALL_KEYED = sorted((pk, sk) for pk, sk, _ in KEYED)

# "index" (pk S, sk S) and its indexes:
#   gsi   HASH gsiPk, INCLUDE [projattr]
#   gsi2  HASH gk | RANGE gs, KEYS_ONLY (sparse: needs both)
#   lsi   pk | RANGE lsk, INCLUDE [projattr]
#   multi HASH ma, mb (a multi-attribute key)
INDEXED = [
    ("x", "1", {"gsiPk": S("y"), "projattr": S("proj1"), "nonproj": S("np1"), "zz": S("1"),
                "aa": S("2"), "gk": S("g"), "gs": S("1"), "lsk": S("l1"), "ma": S("m"),
                "mb": S("n"), "other": S("o1")}),
    ("x", "2", {"gsiPk": S("y"), "projattr": S("proj2"), "gk": S("g"), "lsk": S("l2")}),
    ("x", "3", {"gsiPk": S("z"), "projattr": S("x"), "u1": S("1"), "gs": S("2"),
                "lsk": S("l3")}),
    ("x", "4", {"gk": S("g"), "gs": S("3"), "other": S("o4")}),
    ("q", "1", {"gsiPk": S("q"), "u2": S("1")}),
    ("b", "1", {"gsiPk": S("b"), "u1": S("1")}),
    ("y2", "1", {"gsiPk": S("y2")}),
]

BIG_COUNT = 12
BIG_PAD = 200_000  # bytes of padding per item: 12 items are about 2.4 MB


def _key_schema(*names_and_kinds):
    return [{"AttributeName": n, "KeyType": k} for n, k in names_and_kinds]


def _defs(**types):
    return [{"AttributeName": k, "AttributeType": v} for k, v in types.items()]


def _index(name, schema, ptype, nka=None):
    projection = {"ProjectionType": ptype}
    if nka:
        projection["NonKeyAttributes"] = nka
    return {"IndexName": name, "KeySchema": schema, "Projection": projection}


INDEX_TABLE_ARGS = dict(
    AttributeDefinitions=_defs(pk="S", sk="S", gsiPk="S", gk="S", gs="S", lsk="S", ma="S",
                               mb="S"),
    GlobalSecondaryIndexes=[
        _index("gsi", _key_schema(("gsiPk", "HASH")), "INCLUDE", ["projattr"]),
        _index("gsi2", _key_schema(("gk", "HASH"), ("gs", "RANGE")), "KEYS_ONLY"),
        _index("multi", _key_schema(("ma", "HASH"), ("mb", "HASH")), "ALL"),
    ],
    LocalSecondaryIndexes=[
        _index("lsi", _key_schema(("pk", "HASH"), ("lsk", "RANGE")), "INCLUDE", ["projattr"]),
    ],
)


def data_item(pk):
    return dict({"pk": S(pk)}, **DATA[pk])


def keyed_item(pk, sk, attrs):
    return dict({"pk": S(pk), "sk": S(sk)}, **attrs)


def big_item(i):
    return {"pk": S("big"), "sk": S(f"{i:02d}"), "pad": S("x" * BIG_PAD)}


# (hash key, range key, CreateTable extras, items, name prefix)
TABLES = {
    "data": (("pk", "S"), None, {}, lambda: [data_item(k) for k in DATA], "pq-data"),
    "proj": (("pk", "S"), None, {}, lambda: [dict({"pk": S(k)}, **v) for k, v in PROJ.items()],
             "pq-proj"),
    "keyed": (("pk", "S"), ("sk", "S"), {}, lambda: [keyed_item(*r) for r in KEYED], "pq-keyed"),
    "index": (("pk", "S"), ("sk", "S"), INDEX_TABLE_ARGS,
              lambda: [keyed_item(*r) for r in INDEXED], "pq-index"),
    "big": (("pk", "S"), ("sk", "S"), {}, lambda: [big_item(i) for i in range(BIG_COUNT)],
            "pq-big"),
    "bkey": (("pk", "B"), None, {},
             lambda: [{"pk": B(b"\x00\x01"), "v": S("one")}, {"pk": B(b"\xff"), "v": S("two")}],
             "pq-bkey"),
    # Names that need no quotes: letters and digits only, mixed case; a GSI "byG".
    "mixed": (("pk", "S"), None,
              dict(AttributeDefinitions=_defs(pk="S", g="S"),
                   GlobalSecondaryIndexes=[_index("byG", _key_schema(("g", "HASH")), "ALL")]),
              lambda: [{"pk": S("a"), "g": S("h"), "Pk": S("other")}], "PqMixed"),
    # A name with a dot and a dash: needs quotes.
    "dotted": (("pk", "S"), None, {}, lambda: [{"pk": S("a"), "v": S("dot")}], "pq.sel"),
}


class Tables:
    """tables[kind] → the name of a loaded table, built on first use."""

    def __init__(self, server):
        self.server = server
        self.generation = None
        self.names = {}

    def __getitem__(self, kind):
        if self.generation != self.server.generation:
            self.generation, self.names = self.server.generation, {}
        if kind not in self.names:
            self.names[kind] = self._build(kind)
        return self.names[kind]

    def _build(self, kind):
        hash_key, range_key, extra, items, prefix = TABLES[kind]
        name = unique_name(prefix)
        if kind == "mixed":
            name = name.replace("-", "")
        api = self.server.api()
        c = self.server.client()
        resp = api("CreateTable", create_table_args(name, hash_key, range_key, **extra))
        assert resp.status == 200, resp
        wait_table_active(c, name)
        for it in items():
            out = api("PutItem", {"TableName": name, "Item": it})
            assert out.status == 200, out
        return name

    def drop(self):
        if self.generation != self.server.generation:
            return
        api = self.server.api()
        for name in self.names.values():
            try:
                api("DeleteTable", {"TableName": name})
            except Exception:
                pass


@pytest.fixture(scope="module")
def pq(server):
    tables = Tables(server)
    yield tables
    tables.drop()


# --------------------------------------------------------------------------- requests


def execute(api, statement, params=None, **extra):
    """ExecuteStatement → Response."""
    body = {"Statement": statement}
    if params is not None:
        body["Parameters"] = params
    body.update(extra)
    return api("ExecuteStatement", body)


def run(api, statement, params=None, **extra):
    """ExecuteStatement that must succeed → its JSON body (Items always present, never a
    LastEvaluatedKey)."""
    resp = execute(api, statement, params, **extra)
    assert resp.status == 200, f"{statement!r} failed: {resp!r}"
    out = resp.json
    assert isinstance(out.get("Items"), list), out
    assert "LastEvaluatedKey" not in out, out
    return out


def run_pages(api, statement, params=None, limit=None, max_pages=200, **extra):
    """Every page, following NextToken to the end → (items, pages)."""
    if limit is not None:
        extra["Limit"] = limit
    items, pages, token = [], [], None
    for _ in range(max_pages):
        body = dict(extra)
        if token is not None:
            body["NextToken"] = token
        page = run(api, statement, params, **body)
        pages.append(page)
        items += page["Items"]
        token = page.get("NextToken")
        if token is None:
            return items, pages
    raise AssertionError(f"paging of {statement!r} did not end")


def rows(api, statement, params=None, **extra):
    """Every row of a SELECT, over all pages."""
    return run_pages(api, statement, params, **extra)[0]


def fails(api, statement, message, params=None, **extra):
    """The statement is refused with a ValidationException carrying exactly `message`."""
    assert_validation(execute(api, statement, params, **extra), message)


def pks(items):
    """Sorted partition-key strings of the rows."""
    return sorted(i["pk"]["S"] for i in items)


def keys(items):
    """(pk, sk) of each row, in row order."""
    return [(i["pk"]["S"], i["sk"]["S"]) for i in items]


def at(statement, token, nth=0, length=None):
    """DynamoDB's position "<line>:<column>:<length>" of the nth occurrence of `token` in the
    statement: 1-based, in characters, a newline starting a new line."""
    offset = -1
    for _ in range(nth + 1):
        offset = statement.index(token, offset + 1)
    before = statement[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1) + 1
    return f"{line}:{column}:{len(token) if length is None else length}"


def capacity(table, units, mode="TOTAL", table_units=None, gsi=None, lsi=None):
    """ExecuteStatement's ConsumedCapacity: CapacityUnits only, at every level."""
    cc = {"TableName": table, "CapacityUnits": units}
    if mode == "INDEXES":
        cc["Table"] = {"CapacityUnits": units if table_units is None else table_units}
        if gsi:
            cc["GlobalSecondaryIndexes"] = {k: {"CapacityUnits": v} for k, v in gsi.items()}
        if lsi:
            cc["LocalSecondaryIndexes"] = {k: {"CapacityUnits": v} for k, v in lsi.items()}
    return cc


def nested_maps(levels, leaf="1"):
    """A map literal `levels` maps deep: {'a': {'a': ... 1}}."""
    text = leaf
    for _ in range(levels):
        text = "{'a': " + text + "}"
    return text


def nested_lists(levels, leaf="1"):
    text = leaf
    for _ in range(levels):
        text = "[" + text + "]"
    return text


def nested_param(levels):
    """An L parameter `levels` lists deep around a number."""
    value = N(1)
    for _ in range(levels):
        value = {"L": [value]}
    return value


def q(name):
    """A table or index name as PartiQL quotes it."""
    return f'"{name}"'


def st(text, *params, **extra):
    """One statement of a batch or a transaction: Statement, Parameters and other members."""
    body = {"Statement": text}
    if params:
        body["Parameters"] = list(params)
    body.update(extra)
    return body


def put(api, table, item):
    api.ok("PutItem", {"TableName": table, "Item": item})
