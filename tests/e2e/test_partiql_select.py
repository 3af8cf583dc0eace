"""ExecuteStatement SELECT end to end: whole items and projection lists, keywords, comments and
quoted names, WHERE (every comparison, BETWEEN, IN, AND/OR/NOT, IS, the functions, absent
operands), parameters of every type, keyed reads and scans, secondary indexes, ORDER BY,
Limit/NextToken paging and the 1 MB page, ConsistentRead and ConsumedCapacity. The refusals are
in test_partiql_errors.py; the data sets in partiql_helpers.py."""

import pytest

from kumo_testlib import N, S, normalize_item


from partiql_helpers import (  # noqa: E402
    ALL_DATA,
    ALL_KEYED,
    B,
    BIG_COUNT,
    BOOL,
    BS,
    INDEXED,
    KEYED,
    L,
    M,
    NS,
    NULL,
    PROJ,
    SS,
    capacity,
    fails,
    keys,
    pks,
    rows,
    run,
    run_pages,
)

pytest_plugins = ["partiql_helpers"]


def norm(items):
    return [normalize_item(i) for i in items]


def sorted_norm(items):
    """Rows as an order-independent list (each row's members sorted by name)."""
    return sorted(norm(items), key=lambda row: repr(sorted(row.items())))


def keyed_rows(*pairs):
    attrs = {(pk, sk): a for pk, sk, a in KEYED}
    return [dict({"pk": S(pk), "sk": S(sk)}, **attrs[(pk, sk)]) for pk, sk in pairs]


def index_attrs(pk, sk):
    return next(a for p, s, a in INDEXED if (p, s) == (pk, sk))


def entry(pk, sk, *names):
    """An index entry: the table key plus the named attributes the item has."""
    attrs = index_attrs(pk, sk)
    out = {"pk": S(pk), "sk": S(sk)}
    out.update({n: attrs[n] for n in names if n in attrs})
    return out


GSI_ATTRS = ("gsiPk", "projattr")
LSI_ATTRS = ("lsk", "projattr")
GSI2_ATTRS = ("gk", "gs")
A_ROWS = [("a", "0"), ("a", "1"), ("a", "2"), ("a", "3")]
B_ROWS = [("b", "1"), ("b", "2")]


# =========================================================================== SELECT, projection


def test_select_star_returns_whole_item(api, pq):
    out = run(api, f"SELECT * FROM \"{pq['proj']}\" WHERE pk = 'p1'")
    assert norm(out["Items"]) == norm([dict({"pk": S("p1")}, **PROJ["p1"])])
    assert "NextToken" not in out


def test_select_star_without_where_returns_every_item(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['keyed']}\"")
    assert sorted_norm(got) == sorted_norm(keyed_rows(*ALL_KEYED))


def test_select_without_match_returns_empty_items(api, pq):
    out = run(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'nothing'")
    assert out["Items"] == []
    assert "NextToken" not in out


# Each row is keyed by the last named component of its path, keeping any trailing index.
@pytest.mark.parametrize("projection, expected", [
    ("mymap.nested", {"nested": S("v")}),
    ("mymap.nested, tags[1], profile.sub, m.k[0], l[-0]",
     {"nested": S("v"), "tags[1]": S("b"), "sub": S("ps"), "k[0]": N(1), "l[0]": S("z")}),
    ("tags[1]", {"tags[1]": S("b")}),
    ("m.k", {"k": L(N(1), N(2))}),
    ("m.k[1]", {"k[1]": N(2)}),
    ("deep.a.b[0].c", {"c": S("x")}),
    ("deep.a.b[0]", {"b[0]": M(c=S("x"))}),
    ("l[0], l[1]", {"l[0]": S("z"), "l[1]": S("y")}),
    ("pk, tags", {"pk": S("p1"), "tags": L(S("a"), S("b"), S("c"))}),
    ("profile", {"profile": M(sub=S("ps"), x=S("px"))}),
    ('"count", "a b", "value"', {"count": N(3), "a b": S("sp"), "value": S("val")}),
    ('"a""b"', {'a"b': S("q")}),
    ('mymap."inner"', {"inner": S("in")}),
    ('"mymap"."nested"', {"nested": S("v")}),
    # Paths the item lacks are left out of its row.
    ("nope, tags[9], mymap.nope, l[2147483647], pk", {"pk": S("p1")}),
], ids=lambda v: v if isinstance(v, str) else None)
def test_projection_list_keys(api, pq, projection, expected):
    out = run(api, f"SELECT {projection} FROM \"{pq['proj']}\" WHERE pk = 'p1'")
    assert norm(out["Items"]) == norm([expected])


def test_projection_item_with_none_of_the_paths_is_an_empty_row(api, pq):
    out = run(api, f"SELECT tags, mymap.nested FROM \"{pq['proj']}\" WHERE pk = 'p2'")
    assert out["Items"] == [{}]


def test_projection_scan_keeps_empty_rows(api, pq):
    got = rows(api, f"SELECT tags FROM \"{pq['proj']}\"")
    assert sorted(norm(got), key=len) == [{}, normalize_item({"tags": PROJ["p1"]["tags"]})]


# =========================================================================== tokens and names


@pytest.mark.parametrize("template", [
    "select * from \"{t}\" where pk = 'a' and sk = '1'",
    "SeLeCt * FrOm \"{t}\" WhErE pk = 'a' AnD sk = '1'",
    "SELECT/**/* FROM \"{t}\" WHERE pk/* key */='a' AND sk='1'",
    "-- leading comment\nSELECT * FROM \"{t}\"\nWHERE pk = 'a'\n  AND sk = '1'",
    "/* before */ SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1' /* after */",
    "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1' -- trailing",
    "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1';",
    "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1'; -- done",
    "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1' ; /* done */",
    "SELECT\t*\tFROM\t\"{t}\"\tWHERE\tpk='a'\tAND\tsk='1'",
    "SELECT * FROM \"{t}\" WHERE (pk = 'a') AND ((sk = '1'))",
    "SELECT * FROM \"{t}\" WHERE \"pk\" = 'a' AND \"sk\" = '1'",
    "SELECT * FROM \"{t}\" WHERE pk IN ['a'] AND sk BETWEEN '1' AND '1'",
    "SELECT * FROM \"{t}\" where pk in ('a') and sk between '1' and '1'",
], ids=range(14))
def test_statement_forms_read_one_item(api, pq, template):
    out = run(api, template.format(t=pq["keyed"]))
    assert norm(out["Items"]) == norm(keyed_rows(("a", "1")))


def test_unquoted_table_name_is_not_case_folded(api, pq):
    t = pq["mixed"]
    out = run(api, f"SELECT * FROM {t} WHERE pk = 'a'")
    assert norm(out["Items"]) == norm([{"pk": S("a"), "g": S("h"), "Pk": S("other")}])


def test_unquoted_table_and_index(api, pq):
    t = pq["mixed"]
    for source in (f"{t}.byG", f"\"{t}\".\"byG\""):
        out = run(api, f"SELECT pk FROM {source} WHERE g = 'h'")
        assert out["Items"] == [{"pk": S("a")}]


def test_unquoted_attribute_names_are_not_case_folded(api, pq):
    t = pq["mixed"]
    assert run(api, f"SELECT pk FROM {t} WHERE Pk = 'other'")["Items"] == [{"pk": S("a")}]
    assert run(api, f"SELECT pk FROM {t} WHERE Pk = 'a'")["Items"] == []
    assert run(api, f"SELECT Pk FROM {t} WHERE pk = 'a'")["Items"] == [{"Pk": S("other")}]


def test_quoted_table_name_with_dot_and_dash(api, pq):
    t = pq["dotted"]
    assert "." in t and "-" in t
    out = run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'a'")
    assert out["Items"] == [{"pk": S("a"), "v": S("dot")}]


@pytest.mark.parametrize("where", [
    '"count" = 3', '"a b" = \'sp\'', '"a""b" = \'q\'', '"value" = \'val\'',
    'mymap."inner" = \'in\'', 'attribute_exists("count")',
])
def test_quoted_attribute_names_in_where(api, pq, where):
    assert pks(rows(api, f"SELECT pk FROM \"{pq['proj']}\" WHERE {where}")) == ["p1"]


# =========================================================================== WHERE


# d1..d6 of partiql_helpers.DATA; every comparison, the type rules, absent operands.
WHERE_CASES = [
    # equality and canonical numbers
    ("n = 5", ["d2"]),
    ("n = 1.0", ["d1"]),
    ("n = 1e0", ["d1"]),
    ("n = 7.31e6", ["d4"]),
    ("n = 7.31E6", ["d4"]),
    ("n = 7.31e+6", ["d4"]),
    ("n = 73100000e-1", ["d4"]),
    ("n = .1e2", ["d3"]),
    ("n = 10.00", ["d3"]),
    ("n = -2.50", ["d6"]),
    ("n = -.25e1", ["d6"]),
    ("n = - 2.5", ["d6"]),
    ("n = - - 1", ["d1"]),
    ("n = -/* c */-1", ["d1"]),
    ("n = +5", ["d2"]),
    # every comparison
    ("n <> 5", ["d1", "d3", "d4", "d6"]),
    ("n != 5", ["d1", "d3", "d4", "d6"]),
    ("n < 5", ["d1", "d6"]),
    ("n <= 5", ["d1", "d2", "d6"]),
    ("n > 5", ["d3", "d4"]),
    ("n >= 5", ["d2", "d3", "d4"]),
    ("n BETWEEN 1 AND 10", ["d1", "d2", "d3"]),
    ("n BETWEEN 5 AND 5", ["d2"]),
    ("n between -3 and 1", ["d1", "d6"]),
    ("n IN [1, 10]", ["d1", "d3"]),
    ("n IN (1, 10)", ["d1", "d3"]),
    ("n in [1, '5']", ["d1"]),
    ("NOT n IN [1, 5] AND attribute_exists(n)", ["d3", "d4", "d6"]),
    ("NOT n BETWEEN 1 AND 5 AND n IS NOT MISSING", ["d3", "d4", "d6"]),
    # strings, mixed types (no coercion; an S/N ordering matches nothing)
    ("s < 'b'", ["d1", "d2", "d6"]),
    ("s <= 'ab'", ["d6"]),
    ("s > 'abc'", ["d2", "d3"]),
    ("s >= 'b'", ["d3"]),
    ("s BETWEEN 'ab' AND 'abc'", ["d1", "d6"]),
    ("v = 3", ["d2"]),
    ("v = '3'", ["d1"]),
    ("v <> 3", ["d1", "d3"]),
    ("v > 1", ["d2"]),
    ("v < 'a'", ["d1"]),
    ("v = true", ["d3"]),
    ("v = 1 OR v = '1'", []),
    # AND / OR / NOT and precedence
    ("NOT n = 5", ["d1", "d3", "d4", "d5", "d6"]),
    ("NOT (n = 5)", ["d1", "d3", "d4", "d5", "d6"]),
    ("NOT NOT n = 5", ["d2"]),
    ("n = 5 OR s = 'b'", ["d2", "d3"]),
    ("n > 0 AND s = 'abc'", ["d1"]),
    ("s = 'abc' OR n = 5 AND s = 'b'", ["d1"]),
    ("(s = 'abc' OR n = 5) AND s = 'b'", []),
    ("NOT n = 5 AND s = 'abc'", ["d1"]),
    ("n = 1 OR n = 5 OR n = 10", ["d1", "d2", "d3"]),
    # BOOL, NULL, L, M, sets
    ("flag = true", ["d1"]),
    ("flag = True", ["d1"]),
    ("flag = FALSE", ["d2"]),
    ("flag <> true", ["d2"]),
    ("nul = NULL", ["d1", "d6"]),
    ("nul = null", ["d1", "d6"]),
    ("nul <> NULL", ["d3"]),
    ("l = [1, 'x']", ["d1"]),
    ("l = ['x', 1]", ["d2"]),
    ("l = [- 1]", ["d6"]),
    ("l[1] = 'x'", ["d1"]),
    ("l[0] = 'x'", ["d2"]),
    ("l[-0] = 'x'", ["d2"]),
    ("m = {'a': 1, 'b': 'x'}", ["d1", "d2"]),
    ("m = {'b': 'x', 'a': 1}", ["d1", "d2"]),
    ("m = {'a': 1}", []),
    ("m.a = 1", ["d1", "d2"]),
    ("ss = <<'b', 'a'>>", ["d1"]),
    ("ss = ['a', 'b']", []),
    ("ns = <<2, 1>>", ["d1"]),
    ("ns = <<5>>", ["d2"]),
    ("txt = 'a--b /*c*/'", ["d1"]),
    ("txt = 'it''s here'", ["d2"]),
    # IS
    ("nul IS NULL", ["d1", "d6"]),
    ("nul is null", ["d1", "d6"]),
    ("nul IS NOT NULL", ["d2", "d3", "d4", "d5"]),
    ("nul IS MISSING", ["d2", "d4", "d5"]),
    ("nul IS NOT MISSING", ["d1", "d3", "d6"]),
    ("nul Is Not Missing", ["d1", "d3", "d6"]),
    ("flag IS BOOLEAN", ["d1", "d2"]),
    ("flag IS BOOL", ["d1", "d2"]),
    ("v IS BOOL", ["d3"]),
    ("s IS STRING", ["d1", "d2", "d3", "d6"]),
    ("v IS STRING", ["d1"]),
    ("v IS NUMERIC", ["d2"]),
    ("b IS BLOB", ["d1", "d2"]),
    ("m IS STRUCT", ["d1", "d2"]),
    ("m IS TUPLE", ["d1", "d2"]),
    ("l IS LIST", ["d1", "d2", "d6"]),
    # functions
    ("begins_with(s, 'ab')", ["d1", "d2", "d6"]),
    ("BEGINS_WITH(s, 'abc')", ["d1"]),
    ("Begins_With(s, 'b')", ["d3"]),
    ("contains(s, 'bd')", ["d2"]),
    ("contains(ss, 'a')", ["d1"]),
    ("contains(ns, 5)", ["d2"]),
    ("CONTAINS(txt, '/*')", ["d1"]),
    ("size(s) = 3", ["d1", "d2"]),
    ("size(ss) = 2", ["d1"]),
    ("size(ns) = 1", ["d2"]),
    ("size(l) = 2", ["d1", "d2"]),
    ("size(m) = 2", ["d1", "d2"]),
    ("size(b) = 2", ["d1"]),
    ("size(bs) = 2", ["d1"]),
    ("SIZE(l) > 1", ["d1", "d2"]),
    ("attribute_exists(n)", ["d1", "d2", "d3", "d4", "d6"]),
    ("attribute_not_exists(n)", ["d5"]),
    ("attribute_exists(\"ss\")", ["d1", "d2"]),
    ("attribute_exists(m.a)", ["d1", "d2"]),
    ("attribute_exists(l[1])", ["d1", "d2"]),
    ("attribute_not_exists(l[1])", ["d3", "d4", "d5", "d6"]),
    ("ATTRIBUTE_EXISTS(nul)", ["d1", "d3", "d6"]),
    ("Attribute_Not_Exists(other)", ["d1", "d2", "d3", "d4", "d6"]),
    ("attribute_type(n, 'N')", ["d1", "d2", "d3", "d4", "d6"]),
    ("attribute_type(s, 'S')", ["d1", "d2", "d3", "d6"]),
    ("attribute_type(ss, 'SS')", ["d1", "d2"]),
    ("attribute_type(ns, 'NS')", ["d1", "d2"]),
    ("attribute_type(b, 'B')", ["d1", "d2"]),
    ("attribute_type(bs, 'BS')", ["d1"]),
    ("attribute_type(flag, 'BOOL')", ["d1", "d2"]),
    ("attribute_type(nul, 'NULL')", ["d1", "d6"]),
    ("attribute_type(l, 'L')", ["d1", "d2", "d6"]),
    ("attribute_type(m, 'M')", ["d1", "d2"]),
    ("attribute_type(v, 'N')", ["d2"]),
    ("ATTRIBUTE_TYPE(v, 'BOOL')", ["d3"]),
    # conditions are BOOL values
    ("attribute_exists(n) = false", ["d5"]),
    ("(n BETWEEN 0 AND 5) = true", ["d1", "d2"]),
    ("attribute_exists(ss) IN [true, false]", ALL_DATA),
    ("attribute_exists(n) = attribute_exists(s)", ["d1", "d2", "d3", "d5", "d6"]),
    ("attribute_exists(n) = yes", ["d1"]),
    ("attribute_exists(n) = 1", []),
    ("attribute_exists(n) <> 1", ALL_DATA),
    # absent operands: every comparison is false, <> included; NOT of it is true
    ("nope = 1", []),
    ("nope <> 1", []),
    ("nope != 'x'", []),
    ("NOT nope = 1", ALL_DATA),
    ("nope < 1", []),
    ("nope >= 'a'", []),
    ("nope BETWEEN 0 AND 2", []),
    ("nope IN [1, 'a']", []),
    ("nope = nope2", []),
    ("begins_with(nope, 'a')", []),
    ("NOT begins_with(nope, 'a')", ALL_DATA),
    ("contains(nope, 'z') = false", ALL_DATA),
    ("size(nope) = 0", []),
    ("attribute_type(nope, 'S')", []),
    ("m.nope = 1 OR l[5] = 1", []),
]


@pytest.mark.parametrize("where, expected", WHERE_CASES, ids=[c[0] for c in WHERE_CASES])
def test_where(api, pq, where, expected):
    got = rows(api, f"SELECT pk FROM \"{pq['data']}\" WHERE {where}")
    assert pks(got) == sorted(expected)


# Binary ordering is by unsigned bytes: 0xff sorts after 0x80.
@pytest.mark.parametrize("op, value, expected", [
    (">", b"\x01\x02", ["d2"]),
    (">=", b"\x01\x02", ["d1", "d2"]),
    ("<", b"\x80", ["d1"]),
    ("<=", b"\xff", ["d1", "d2"]),
    ("=", b"\xff", ["d2"]),
])
def test_where_binary_ordering(api, pq, op, value, expected):
    got = rows(api, f"SELECT pk FROM \"{pq['data']}\" WHERE b {op} ?", [B(value)])
    assert pks(got) == expected


# =========================================================================== parameters


PARAM_CASES = [
    ("s = ?", [S("abc")], ["d1"]),
    ("n = ?", [N("5.0")], ["d2"]),
    ("n = ?", [N("7.31E6")], ["d4"]),
    ("b = ?", [B(b"\x01\x02")], ["d1"]),
    ("flag = ?", [BOOL(False)], ["d2"]),
    ("nul = ?", [NULL], ["d1", "d6"]),
    ("l = ?", [L(N(1), S("x"))], ["d1"]),
    ("m = ?", [M(b=S("x"), a=N(1))], ["d1", "d2"]),
    ("ss = ?", [SS("b", "a")], ["d1"]),
    ("ns = ?", [NS(2, 1)], ["d1"]),
    ("bs = ?", [BS(b"\x02", b"\x01")], ["d1"]),
    ("n IN [?, 10]", [N(1)], ["d1", "d3"]),
    ("n IN [?, ?]", [N(1), N(5)], ["d1", "d2"]),
    ("n BETWEEN ? AND ?", [N(1), N(5)], ["d1", "d2"]),
    ("begins_with(s, ?)", [S("ab")], ["d1", "d2", "d6"]),
    ("contains(ss, ?)", [S("c")], ["d2"]),
    ("contains(bs, ?)", [B(b"\x01")], ["d1"]),
    ("size(ss) = ?", [N(2)], ["d1"]),
    ("s = ? AND n = ?", [S("abc"), N(1)], ["d1"]),
    ("s = ? AND n = ?", [S("abc"), N(5)], []),
    ("pk = ?", [S("d3")], ["d3"]),
    ("pk IN [?, ?]", [S("d3"), S("d5")], ["d3", "d5"]),
    ("v = ?", [N(3)], ["d2"]),
    ("v = ?", [S("3")], ["d1"]),
]


@pytest.mark.parametrize("where, params, expected", PARAM_CASES,
                         ids=[f"{c[0]}-{next(iter(c[1][0]))}" for c in PARAM_CASES])
def test_parameters(api, pq, where, params, expected):
    got = rows(api, f"SELECT pk FROM \"{pq['data']}\" WHERE {where}", params)
    assert pks(got) == expected


def test_quoted_question_mark_is_a_string(api, pq):
    assert run(api, f"SELECT pk FROM \"{pq['data']}\" WHERE s = '?'")["Items"] == []


def test_binary_key_parameter(api, pq):
    t = pq["bkey"]
    out = run(api, f"SELECT * FROM \"{t}\" WHERE pk = ?", [B(b"\x00\x01")])
    assert out["Items"] == [{"pk": B(b"\x00\x01"), "v": S("one")}]
    got = rows(api, f"SELECT v FROM \"{t}\" WHERE pk IN [?, ?]", [B(b"\xff"), B(b"\x00\x01")])
    assert sorted(i["v"]["S"] for i in got) == ["one", "two"]


def test_boto3_binary_parameters(ddb, pq):
    out = ddb.execute_statement(Statement=f"SELECT * FROM \"{pq['bkey']}\" WHERE pk = ?",
                                Parameters=[{"B": b"\xff"}])
    assert out["Items"] == [{"pk": {"B": b"\xff"}, "v": {"S": "two"}}]
    out = ddb.execute_statement(Statement=f"SELECT pk FROM \"{pq['data']}\" WHERE bs = ?",
                                Parameters=[{"BS": [b"\x02", b"\x01"]}])
    assert out["Items"] == [{"pk": {"S": "d1"}}]


# =========================================================================== keyed reads and scans


# (where, expected (pk, sk), ordered): `ordered` rows read from one partition come back in
# sort-key order; other results are compared as sets.
KEYED_CASES = [
    ("pk = 'a' AND sk = '1'", [("a", "1")], True),
    ("pk = 'a' AND sk = '9'", [], True),
    ("pk = 'zz'", [], True),
    ("pk = 'a'", A_ROWS, True),
    ("pk = 'a' AND sk > '1'", [("a", "2"), ("a", "3")], True),
    ("pk = 'a' AND sk >= '2'", [("a", "2"), ("a", "3")], True),
    ("pk = 'a' AND sk < '1'", [("a", "0")], True),
    ("pk = 'a' AND sk <= '1'", [("a", "0"), ("a", "1")], True),
    ("pk = 'a' AND sk BETWEEN '1' AND '2'", [("a", "1"), ("a", "2")], True),
    ("pk = 'a' AND begins_with(sk, '1')", [("a", "1")], True),
    ("pk = 'a' AND f = '1'", [("a", "0"), ("a", "2")], True),
    ("(pk = 'a' AND sk = '1') AND f = '2'", [("a", "1")], True),
    ("pk = 'a' AND sk = '1' AND f = '1'", [], True),
    ("pk = 'a' AND sk = '1' AND sk > '0'", [("a", "1")], False),
    # sort-key shapes a KeyConditionExpression cannot hold
    ("pk = 'a' AND (sk = '1' OR sk = '2')", [("a", "1"), ("a", "2")], False),
    ("pk = 'a' AND sk IN ['1', '3']", [("a", "1"), ("a", "3")], False),
    ("pk = 'a' AND NOT sk = '1'", [("a", "0"), ("a", "2"), ("a", "3")], False),
    ("pk = 'a' AND sk <> '1'", [("a", "0"), ("a", "2"), ("a", "3")], False),
    ("pk = 'a' AND sk > '0' AND sk <> '1'", [("a", "2"), ("a", "3")], False),
    ("pk = 'a' AND (sk < '1' OR sk > '1' OR sk = '1')", A_ROWS, False),
    # an OR of non-key attributes beside the key condition only filters (as on an index)
    ("pk = 'a' AND (f = '1' OR f = '2')", [("a", "0"), ("a", "1"), ("a", "2")], False),
    # several partitions
    ("pk IN ['a', 'b']", A_ROWS + B_ROWS, False),
    ("pk = 'a' OR pk = 'b'", A_ROWS + B_ROWS, False),
    ("pk IN ['a', 'b'] AND sk = '1'", [("a", "1"), ("b", "1")], False),
    ("(pk = 'a' AND sk = '1') OR (pk = 'b' AND sk = '2')", [("a", "1"), ("b", "2")], False),
    ("pk IN ['a', 'nothing', 'zz']", A_ROWS, False),
    # a negated or <> sort-key branch beside an equality branch: the union
    ("pk = 'a' AND NOT sk = '1' OR pk = 'a' AND sk = '2'",
     [("a", "0"), ("a", "2"), ("a", "3")], False),
    ("pk = 'a' AND NOT begins_with(sk, '1') OR pk = 'a' AND sk = '1'", A_ROWS, False),
    ("pk = 'a' AND NOT sk IN ['1', '2'] OR pk = 'a' AND sk = '2'",
     [("a", "0"), ("a", "2"), ("a", "3")], False),
    ("pk = 'a' AND NOT sk > '1' OR pk = 'a' AND sk = '3'",
     [("a", "0"), ("a", "1"), ("a", "3")], False),
    ("pk = 'a' AND NOT (sk = '1') OR pk = 'a' AND sk = '1'", A_ROWS, False),
    ("pk = 'a' AND sk <> '1' OR pk = 'a' AND sk = '1'", A_ROWS, False),
    ("pk = 'a' OR pk = 'a' AND NOT sk = '1'", A_ROWS, False),
    # scans: no partition-key equality in every branch
    ("pk > 'o'", [("p", "1"), ("p", "2"), ("p", "3")], False),
    ("pk > 1", [], False),
    ("pk = 'a' OR sk = '1'", A_ROWS + [("b", "1"), ("o", "1"), ("p", "1")], False),
    ("f = '1'", [("a", "0"), ("a", "2")], False),
    ("sk = '2'", [("a", "2"), ("b", "2"), ("o", "2"), ("p", "2")], False),
    ("pk IN [" + ", ".join(f"'k{i:02d}'" for i in range(51)) + "] OR flag = 'one'",
     [("a", "0")], False),
]


@pytest.mark.parametrize("where, expected, ordered", KEYED_CASES,
                         ids=[c[0][:90] for c in KEYED_CASES])
def test_keyed_reads_and_scans(api, pq, where, expected, ordered):
    got = rows(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE {where}")
    if ordered:
        assert norm(got) == norm(keyed_rows(*expected))
    else:
        assert sorted_norm(got) == sorted_norm(keyed_rows(*expected))


def test_fifty_decomposed_reads_run(api, pq):
    t = pq["keyed"]
    values = ["'a'", "'b'"] + [f"'k{i:02d}'" for i in range(48)]
    got = rows(api, f"SELECT * FROM \"{t}\" WHERE pk IN [{', '.join(values)}]")
    assert sorted(keys(got)) == A_ROWS + B_ROWS
    parts = ", ".join(["'a'"] + [f"'k{i:02d}'" for i in range(24)])
    got = rows(api, f"SELECT * FROM \"{t}\" WHERE pk IN [{parts}] AND sk IN ['1', '2']")
    assert sorted(keys(got)) == [("a", "1"), ("a", "2")]


def test_one_hundred_in_operands_on_a_non_key_attribute(api, pq):
    values = ", ".join(f"'{i}'" for i in range(99)) + ", 'x'"
    got = rows(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE f IN [{values}]")
    assert sorted(keys(got)) == A_ROWS + [("b", "1")]


# =========================================================================== indexes


def test_gsi_scan_returns_sparse_projected_entries(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\"")
    expected = [entry(pk, sk, *GSI_ATTRS) for pk, sk, a in INDEXED if "gsiPk" in a]
    assert len(expected) == 6
    assert sorted_norm(got) == sorted_norm(expected)


def test_gsi_keyed_read_returns_the_projection(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\" WHERE gsiPk = 'y'")
    assert sorted_norm(got) == sorted_norm([entry("x", "1", *GSI_ATTRS),
                                            entry("x", "2", *GSI_ATTRS)])


def test_gsi_projection_list(api, pq):
    got = rows(api, f"SELECT sk, projattr, gsiPk FROM \"{pq['index']}\".\"gsi\" "
                    "WHERE gsiPk IN ['z', 'q']")
    assert sorted_norm(got) == sorted_norm([
        {"sk": S("3"), "projattr": S("x"), "gsiPk": S("z")},
        {"sk": S("1"), "gsiPk": S("q")}])


def test_gsi_with_sort_key_holds_items_with_both_key_attributes(api, pq):
    t = pq["index"]
    got = rows(api, f"SELECT * FROM \"{t}\".\"gsi2\"")
    assert sorted_norm(got) == sorted_norm([entry("x", "1", *GSI2_ATTRS),
                                            entry("x", "4", *GSI2_ATTRS)])
    got = rows(api, f"SELECT * FROM \"{t}\".\"gsi2\" WHERE gk = 'g'")
    assert norm(got) == norm([entry("x", "1", *GSI2_ATTRS), entry("x", "4", *GSI2_ATTRS)])
    got = rows(api, f"SELECT pk, sk FROM \"{t}\".\"gsi2\" WHERE gk = 'g' AND gs > '1'")
    assert keys(got) == [("x", "4")]


def test_gsi_scan_filters_on_projected_and_unprojected_attributes(api, pq):
    t = pq["index"]
    got = rows(api, f"SELECT pk, sk FROM \"{t}\".\"gsi\" WHERE projattr = 'proj1'")
    assert keys(got) == [("x", "1")]
    # A scan is never refused; the entries lack `nonproj`, so it compares false.
    assert rows(api, f"SELECT * FROM \"{t}\".\"gsi\" WHERE nonproj = 'np1'") == []
    got = rows(api, f"SELECT * FROM \"{t}\".\"gsi\" WHERE NOT nonproj = 'np1'")
    assert len(got) == 6


def test_lsi_keyed_read_in_index_order(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"lsi\" WHERE pk = 'x'")
    assert norm(got) == norm([entry("x", s, *LSI_ATTRS) for s in ("1", "2", "3")])


def test_lsi_scan_is_sparse(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"lsi\"")
    assert sorted_norm(got) == sorted_norm([entry("x", s, *LSI_ATTRS) for s in ("1", "2", "3")])


def test_lsi_fetches_unprojected_attributes(api, pq):
    t = pq["index"]
    got = rows(api, f"SELECT other FROM \"{t}\".\"lsi\" WHERE pk = 'x'")
    assert got == [{"other": S("o1")}, {}, {}]
    got = rows(api, f"SELECT pk, other, lsk FROM \"{t}\".\"lsi\" WHERE pk = 'x' AND lsk = 'l1'")
    assert got == [{"pk": S("x"), "other": S("o1"), "lsk": S("l1")}]


def test_base_table_of_a_multi_attribute_index_works(api, pq):
    t = pq["index"]
    got = rows(api, f"SELECT pk, sk FROM \"{t}\" WHERE pk = 'x' AND ma = 'm'")
    assert keys(got) == [("x", "1")]


GSI_FILTER_REFUSED = ("One or more parameter values were invalid: Secondary index gsi does not "
                      "project one or more filter attributes: ")
OVERLAP = "Overlapping conditions with range keys are not supported in where clause"

# Filtering a keyed index read on attributes the index does not project. (where, refused
# names or None, rows when it runs). `projattr` is projected, the other names are not.
INDEX_FILTER_CASES = [
    ("gsiPk = 'y' AND NOT (nonproj = 'np1' OR projattr = 'x')", "[nonproj]", None),
    ("gsiPk = 'y' AND b = '1' AND (a = '2' OR projattr = '3')", "[a, b]", None),
    ("gsiPk = 'y' AND (zz = '1' OR aa = '2' OR mm = '3')", "[zz, aa, mm]", None),
    ("gsiPk = 'y' AND (projattr = 'proj1' OR projattr = 'proj2')", None,
     [("x", "1"), ("x", "2")]),
    ("gsiPk = 'y' AND (gsiPk = 'z' OR zz = '1')", None, []),
    ("(gsiPk = 'y' OR gsiPk = 'z') AND zz = '1'", "[zz]", None),
    ("(gsiPk = 'b' AND u1 = '1') OR (gsiPk = 'q' AND u2 = '1')", "[u2]", None),
    ("(gsiPk = 'q' AND u1 = '1') OR (gsiPk = 'b' AND u2 = '1')", "[u1]", None),
    ("(gsiPk = 'y' AND projattr = 'proj1') OR (gsiPk = 'z' AND aa = '1')", None, [("x", "1")]),
    ("(gsiPk = 'y' AND nonproj = 'np1') OR (gsiPk = 'y2')", None, [("y2", "1")]),
    ("(gsiPk = 'y' AND zz = '1') OR aa = '1'", None, []),
    ("gsiPk > 'a' AND zz = '1'", None, []),
    ("gsiPk = 'y' AND nonproj IS MISSING", "[nonproj]", None),
    ("gsiPk = 'y' AND begins_with(nonproj, 'n')", "[nonproj]", None),
    ("gsiPk = 'y' AND NOT nonproj = 'np1'", "[nonproj]", None),
]


@pytest.mark.parametrize("where, refused, expected", INDEX_FILTER_CASES,
                         ids=[c[0] for c in INDEX_FILTER_CASES])
def test_gsi_filter_on_unprojected_attributes(api, pq, where, refused, expected):
    statement = f"SELECT * FROM \"{pq['index']}\".\"gsi\" WHERE {where}"
    if refused is not None:
        fails(api, statement, GSI_FILTER_REFUSED + refused)
    else:
        assert sorted(keys(rows(api, statement))) == expected


def test_gsi_overlapping_keyed_branches(api, pq):
    fails(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\" WHERE (gsiPk = 'y' AND zz = '1') "
               "OR (gsiPk = 'y' AND aa = '1')", OVERLAP)


@pytest.mark.parametrize("where", ["pk = 'x' AND other = 'o1'",
                                   "pk = 'x' AND lsk BETWEEN 'l1' AND 'l3' AND other = 'o1'",
                                   "pk IN ['x', 'q'] AND NOT other = 'o1'"])
def test_lsi_keyed_filter_on_unprojected_attribute(api, pq, where):
    fails(api, f"SELECT * FROM \"{pq['index']}\".\"lsi\" WHERE {where}",
          "One or more parameter values were invalid: Secondary index lsi does not project one "
          "or more filter attributes: [other]")


@pytest.mark.parametrize("where", ["", " WHERE gsiPk = 'y'"])
def test_gsi_refuses_unprojected_names_in_the_projection(api, pq, where):
    fails(api, f"SELECT nonproj, pk, other FROM \"{pq['index']}\".\"gsi\"{where}",
          "One or more parameter values were invalid: Global secondary index gsi does not "
          "project [nonproj, other]")


def test_keys_only_gsi_refuses_a_non_key_name(api, pq):
    fails(api, f"SELECT projattr FROM \"{pq['index']}\".\"gsi2\" WHERE gk = 'g'",
          "One or more parameter values were invalid: Global secondary index gsi2 does not "
          "project [projattr]")


# =========================================================================== ORDER BY


@pytest.mark.parametrize("tail, expected", [
    ("WHERE pk = 'o' ORDER BY sk DESC", [("o", "3"), ("o", "2"), ("o", "1")]),
    ("WHERE pk = 'o' ORDER BY sk", [("o", "1"), ("o", "2"), ("o", "3")]),
    ("WHERE pk = 'o' ORDER BY sk ASC", [("o", "1"), ("o", "2"), ("o", "3")]),
    ("where pk = 'o' order by sk desc", [("o", "3"), ("o", "2"), ("o", "1")]),
    ("WHERE pk IN ['o', 'p'] ORDER BY pk DESC, sk ASC",
     [("p", "1"), ("p", "2"), ("p", "3"), ("o", "1"), ("o", "2"), ("o", "3")]),
    ("WHERE pk IN ['o', 'p'] ORDER BY pk DESC",
     [("p", "3"), ("p", "2"), ("p", "1"), ("o", "3"), ("o", "2"), ("o", "1")]),
    # Naming only the partition key returns each partition in descending sort order.
    ("WHERE pk = 'o' ORDER BY pk ASC", [("o", "3"), ("o", "2"), ("o", "1")]),
    ("WHERE pk = 'o' AND sk > '1' ORDER BY sk DESC", [("o", "3"), ("o", "2")]),
])
def test_order_by(api, pq, tail, expected):
    got = rows(api, f"SELECT * FROM \"{pq['keyed']}\" {tail}")
    assert keys(got) == expected


@pytest.mark.parametrize("tail, expected", [
    ("WHERE pk IN ['o', 'p'] ORDER BY pk DESC",
     [("p", "3"), ("p", "2"), ("p", "1"), ("o", "3"), ("o", "2"), ("o", "1")]),
    ("WHERE pk = 'o' ORDER BY sk DESC", [("o", "3"), ("o", "2"), ("o", "1")]),
])
@pytest.mark.parametrize("limit", [1, 2, 4])
def test_order_by_pages_continue_in_order(api, pq, tail, expected, limit):
    got, pages = run_pages(api, f"SELECT * FROM \"{pq['keyed']}\" {tail}", limit=limit)
    assert keys(got) == expected
    assert all(len(p["Items"]) <= limit for p in pages)


@pytest.mark.parametrize("tail, message", [
    ("ORDER BY sk", "Must have WHERE clause in the statement when using ORDER BY clause."),
    ("WHERE pk = 'o' ORDER BY Total DESC",
     "Attribute Total in ORDER BY clause must be part of the primary key"),
    ("WHERE pk > 'a' ORDER BY sk", "Must have at least one non-optional hash key condition in "
     "WHERE clause when using ORDER BY clause."),
    ("WHERE Total = 10 ORDER BY sk", "Must have at least one non-optional hash key condition in "
     "WHERE clause when using ORDER BY clause."),
    ("WHERE pk IN ['o', 'p'] ORDER BY sk DESC", "Must have hash key in ORDER BY clause when "
     "more than one hash key condition specified in WHERE clause."),
], ids=["no-where", "non-key", "pk-range", "no-pk", "two-partitions"])
def test_order_by_rules(api, pq, tail, message):
    fails(api, f"SELECT * FROM \"{pq['keyed']}\" {tail}", message)


# =========================================================================== paging


def check_pages(pages, limit):
    assert all(len(p["Items"]) <= limit for p in pages)
    assert all("NextToken" in p for p in pages[:-1])
    assert "NextToken" not in pages[-1]


@pytest.mark.parametrize("limit", [1, 3])
def test_limit_pages_a_partition_in_order(api, pq, limit):
    got, pages = run_pages(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a'", limit=limit)
    assert keys(got) == A_ROWS
    assert len(pages[0]["Items"]) == limit
    check_pages(pages, limit)


@pytest.mark.parametrize("limit", [1, 5, 11, 12])
def test_limit_pages_a_scan_without_repeats_or_gaps(api, pq, limit):
    got, pages = run_pages(api, f"SELECT pk, sk FROM \"{pq['keyed']}\"", limit=limit)
    assert sorted(keys(got)) == ALL_KEYED
    assert len(got) == len(ALL_KEYED)
    assert len(pages[0]["Items"]) == limit
    check_pages(pages, limit)


def test_limit_counts_items_evaluated_before_the_filter(api, pq):
    statement = f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a' AND f = 'x'"
    first = run(api, statement, Limit=2)
    assert first["Items"] == []
    assert "NextToken" in first
    got, pages = run_pages(api, statement, limit=2)
    assert keys(got) == [("a", "3")]
    check_pages(pages, 2)


def test_limit_on_a_filtered_scan(api, pq):
    got, pages = run_pages(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE f = '2'", limit=3)
    assert sorted(keys(got)) == [("a", "1"), ("b", "1")]
    assert len(pages) >= 4
    check_pages(pages, 3)


def test_limit_on_several_partitions(api, pq):
    got, pages = run_pages(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk IN ['a', 'b']",
                           limit=1)
    assert sorted(keys(got)) == A_ROWS + B_ROWS
    assert len(got) == 6
    check_pages(pages, 1)


def test_limit_on_a_gsi_with_ties_on_the_index_key(api, pq):
    t = pq["index"]
    got, pages = run_pages(api, f"SELECT pk, sk FROM \"{t}\".\"gsi\" WHERE gsiPk = 'y'", limit=1)
    assert sorted(keys(got)) == [("x", "1"), ("x", "2")]
    assert len(got) == 2
    got, pages = run_pages(api, f"SELECT pk, sk FROM \"{t}\".\"gsi\"", limit=2)
    assert len(got) == 6 and len(set(keys(got))) == 6
    check_pages(pages, 2)


def test_limit_larger_than_the_result(api, pq):
    out = run(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'b'", Limit=100)
    assert keys(out["Items"]) == B_ROWS
    assert "NextToken" not in out


def test_single_item_read_has_no_next_token(api, pq):
    out = run(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a' AND sk = '1'", Limit=1)
    assert keys(out["Items"]) == [("a", "1")]
    assert "NextToken" not in out


@pytest.mark.parametrize("statement", [
    "SELECT * FROM \"{t}\" WHERE pk = 'big'",
    "SELECT pk, sk FROM \"{t}\"",
    "SELECT sk FROM \"{t}\" WHERE pk = 'big' AND sk >= '00'",
])
def test_a_page_stops_after_one_megabyte(api, pq, statement):
    statement = statement.format(t=pq["big"])
    first = run(api, statement)
    assert "NextToken" in first
    assert 4 <= len(first["Items"]) <= 6, len(first["Items"])
    got, pages = run_pages(api, statement)
    assert sorted(i["sk"]["S"] for i in got) == [f"{i:02d}" for i in range(BIG_COUNT)]
    assert len(pages) >= 2


def test_one_megabyte_query_pages_keep_sort_order(api, pq):
    got, _ = run_pages(api, f"SELECT sk FROM \"{pq['big']}\" WHERE pk = 'big'")
    assert [i["sk"]["S"] for i in got] == [f"{i:02d}" for i in range(BIG_COUNT)]


def test_next_token_replayed_with_another_statement(api, pq):
    t = pq["keyed"]
    first = run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'a'", Limit=1)
    token = first["NextToken"]
    for other in (f"SELECT * FROM \"{t}\" WHERE pk = 'b'",
                  f"SELECT * FROM \"{t}\"",
                  f"SELECT * FROM \"{pq['data']}\" WHERE pk = 'a'"):
        fails(api, other, "NextToken does not match request", NextToken=token)


def test_next_token_replayed_on_another_index(api, pq):
    t = pq["index"]
    first = run(api, f"SELECT * FROM \"{t}\".\"gsi\"", Limit=1)
    fails(api, f"SELECT * FROM \"{t}\".\"gsi2\"", "NextToken does not match request",
          NextToken=first["NextToken"])


def test_next_token_resumes_with_the_same_statement_and_parameters(api, pq):
    statement = f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = ?"
    first = run(api, statement, [S("a")], Limit=2)
    second = run(api, statement, [S("a")], Limit=2, NextToken=first["NextToken"])
    assert keys(first["Items"] + second["Items"]) == A_ROWS


def test_next_token_not_issued_by_the_server(api, pq):
    fails(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a'", "Invalid NextToken",
          NextToken="bm90IGEgdG9rZW4=")


def test_boto3_paging(ddb, pq):
    statement = f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a'"
    got, kwargs = [], {}
    for _ in range(10):
        out = ddb.execute_statement(Statement=statement, Limit=3, **kwargs)
        got += out["Items"]
        if "NextToken" not in out:
            break
        kwargs = {"NextToken": out["NextToken"]}
    assert [i["sk"]["S"] for i in got] == ["0", "1", "2", "3"]


# =========================================================================== ConsistentRead


@pytest.mark.parametrize("where", ["pk = 'a' AND sk = '1'", "pk = 'a'", "f = '2'"])
def test_consistent_read_on_the_table(api, pq, where):
    statement = f"SELECT * FROM \"{pq['keyed']}\" WHERE {where}"
    assert sorted_norm(rows(api, statement, ConsistentRead=True)) == sorted_norm(
        rows(api, statement))


def test_consistent_read_on_an_lsi(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"lsi\" WHERE pk = 'x'",
               ConsistentRead=True)
    assert len(got) == 3


def test_eventually_consistent_read_on_a_gsi(api, pq):
    got = rows(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\" WHERE gsiPk = 'y'",
               ConsistentRead=False)
    assert len(got) == 2


@pytest.mark.parametrize("where", ["", " WHERE gsiPk = 'y'"])
def test_consistent_read_on_a_gsi_is_refused(api, pq, where):
    fails(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\"{where}",
          "Strongly consistent read is not supported on Global Secondary Indexes",
          ConsistentRead=True)


# =========================================================================== ConsumedCapacity


@pytest.mark.parametrize("mode", [None, "NONE"])
def test_no_consumed_capacity_unless_asked(api, pq, mode):
    extra = {} if mode is None else {"ReturnConsumedCapacity": mode}
    out = run(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a' AND sk = '1'", **extra)
    assert "ConsumedCapacity" not in out


@pytest.mark.parametrize("consistent, units", [(False, 0.5), (True, 1.0)])
@pytest.mark.parametrize("mode", ["TOTAL", "INDEXES"])
@pytest.mark.parametrize("where", ["pk = 'a' AND sk = '1'", "pk = 'a' AND sk = 'missing'"])
def test_capacity_of_a_single_item_read(api, pq, consistent, units, mode, where):
    t = pq["keyed"]
    out = run(api, f"SELECT * FROM \"{t}\" WHERE {where}", ConsistentRead=consistent,
              ReturnConsumedCapacity=mode)
    assert out["ConsumedCapacity"] == capacity(t, units, mode)


@pytest.mark.parametrize("mode", ["TOTAL", "INDEXES"])
def test_single_item_read_on_a_table_with_indexes_has_no_index_arm(api, pq, mode):
    t = pq["index"]
    out = run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'x' AND sk = '1'",
              ReturnConsumedCapacity=mode)
    assert out["ConsumedCapacity"] == capacity(t, 0.5, mode)


@pytest.mark.parametrize("consistent, units", [(False, 0.5), (True, 1.0)])
@pytest.mark.parametrize("where", ["WHERE pk = 'a'", "WHERE f = '2'", ""])
def test_capacity_of_queries_and_scans_of_small_items(api, pq, consistent, units, where):
    t = pq["keyed"]
    out = run(api, f"SELECT * FROM \"{t}\" {where}", ConsistentRead=consistent,
              ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == capacity(t, units)


def test_capacity_of_a_keyed_gsi_read(api, pq):
    t = pq["index"]
    statement = f"SELECT * FROM \"{t}\".\"gsi\" WHERE gsiPk = 'y'"
    out = run(api, statement, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == capacity(t, 0.5, "INDEXES", table_units=0.0,
                                               gsi={"gsi": 0.5})
    out = run(api, statement, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == capacity(t, 0.5)


@pytest.mark.parametrize("consistent, units", [(False, 0.5), (True, 1.0)])
def test_capacity_of_a_keyed_lsi_read(api, pq, consistent, units):
    t = pq["index"]
    out = run(api, f"SELECT * FROM \"{t}\".\"lsi\" WHERE pk = 'x'", ConsistentRead=consistent,
              ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == capacity(t, units, "INDEXES", table_units=0.0,
                                               lsi={"lsi": units})


def lsi_fetch_capacity(api, t, where, **extra):
    out = run(api, f"SELECT pk, other FROM \"{t}\".\"lsi\" WHERE {where}",
              ReturnConsumedCapacity="INDEXES", **extra)
    cc = out["ConsumedCapacity"]
    assert set(cc) == {"TableName", "CapacityUnits", "Table", "LocalSecondaryIndexes"}, cc
    table = cc["Table"]["CapacityUnits"]
    lsi = cc["LocalSecondaryIndexes"]["lsi"]["CapacityUnits"]
    assert cc["CapacityUnits"] == table + lsi
    return table, lsi


def test_capacity_of_lsi_fetches_is_per_row_walked(api, pq):
    t = pq["index"]
    table_all, lsi_all = lsi_fetch_capacity(api, t, "pk = 'x'")
    assert table_all > 0 and lsi_all == 0.5
    # A filter on a projected attribute keeps one row of three: the fetch is still charged
    # for every row walked.
    table_filtered, _ = lsi_fetch_capacity(api, t, "pk = 'x' AND projattr = 'proj1'")
    assert table_filtered == table_all
    # Limit walks fewer rows.
    table_limited, _ = lsi_fetch_capacity(api, t, "pk = 'x'", Limit=1)
    assert 0 < table_limited < table_all
    # Consistent reads double every arm.
    table_cr, lsi_cr = lsi_fetch_capacity(api, t, "pk = 'x'", ConsistentRead=True)
    assert (table_cr, lsi_cr) == (2 * table_all, 2 * lsi_all)


def test_boto3_consumed_capacity(ddb, pq):
    t = pq["keyed"]
    out = ddb.execute_statement(Statement=f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1'",
                                ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": t, "CapacityUnits": 0.5}
