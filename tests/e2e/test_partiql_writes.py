"""PartiQL writes through ExecuteStatement: INSERT, UPDATE and DELETE, asserting DynamoDB's
answers (status, __type, full message, the `Items` returned), the stored items afterwards and
the consumed capacity.

INSERT puts an item only if its key is absent (DuplicateItemException otherwise); UPDATE
changes an existing item only (ConditionalCheckFailedException for a missing one, nothing
created); DELETE of a missing key succeeds. Every WHERE term beyond the key is a condition on
the stored item. RETURNING puts 0 or 1 row in `Items`, never `Attributes`. A write costs
what the equivalent PutItem/UpdateItem/DeleteItem costs, index arms included.

Requests are raw signed JSON (the `api` fixture), so the exact texts are visible and members
newer than the installed botocore (ReturnValuesOnConditionCheckFailure) can be sent."""

import pytest

from kumo_testlib import (  # noqa: F401
    NS_DYNAMODB,
    N,
    S,
    assert_error,
    assert_not_found,
    assert_validation,
    b64,
    client_error,
    create_table_args,
    item_size,
    normalize,
    normalize_item,
    scan_all,
    sized,
    unique_name,
    wait_table_active,
)
from partiql_helpers import put  # noqa: F401
from partiql_write_helpers import (  # noqa: F401
    DUPLICATE,
    CONDITIONAL,
    DUPLICATE_MESSAGE,
    CONDITIONAL_MESSAGE,
    INVALID,
    MANDATORY_KEY,
    ON_INDEX,
    MISSING_OPERAND,
    WRONG_OPERAND,
    INVALID_PATH,
    MAX_ITEM,
    B,
    es,
    run,
    written,
    rows,
    get,
    same,
    same_rows,
    assert_duplicate,
    assert_conditional,
    col,
    t,
    tc,
    cond_table,
)


# =========================================================================== UPDATE


def test_update_sets_attributes_and_answers_empty_items(api, t):
    put(api, t, {"pk": S("k"), "a": N(1)})
    written(api, f"UPDATE \"{t}\" SET a = 2 SET b = 'x' WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "a": N(2), "b": S("x")})
    written(api, f"UPDATE \"{t}\" SET c = 1E3, d = [1, <<'s'>>], e = {{'f': NULL}} "
                 f"WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "a": N(2), "b": S("x"), "c": N(1000),
          "d": {"L": [N(1), {"SS": ["s"]}]}, "e": {"M": {"f": {"NULL": True}}}})


def test_update_with_parameters(api, tc):
    put(api, tc, {"pk": S("k"), "sk": N(1)})
    written(api, f'UPDATE "{tc}" SET a = ?, b = ? WHERE pk = ? AND sk = ?',
            [{"SS": ["x"]}, N("1.50"), S("k"), N("1.0")])
    same(get(api, tc, {"pk": S("k"), "sk": N(1)}),
         {"pk": S("k"), "sk": N(1), "a": {"SS": ["x"]}, "b": N("1.5")})


def test_update_nested_paths_and_list_indexes(api, t):
    put(api, t, {"pk": S("k"), "m": {"M": {"a": {"M": {"b": N(1)}}, "z": S("keep")}},
                 "l": {"L": [S("a"), S("b"), S("c")]}})
    written(api, f"UPDATE \"{t}\" SET m.a.b = 2, m.c = 'new', l[1] = 'B' WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "m": {"M": {"a": {"M": {"b": N(2)}}, "z": S("keep"), "c": S("new")}},
          "l": {"L": [S("a"), S("B"), S("c")]}})
    written(api, f"UPDATE \"{t}\" REMOVE m.a REMOVE l[0] WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "m": {"M": {"z": S("keep"), "c": S("new")}},
          "l": {"L": [S("B"), S("c")]}})
    # Quoted names for reserved words and odd names.
    written(api, f"UPDATE \"{t}\" SET m.\"inner\" = 1, \"value\" = 'v', \"a b\" = 2 "
                 f"WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "m": {"M": {"z": S("keep"), "c": S("new"), "inner": N(1)}},
          "l": {"L": [S("B"), S("c")]}, "value": S("v"), "a b": N(2)})


def test_update_list_index_past_end_appends_and_remove_shifts(api, t):
    put(api, t, {"pk": S("k"), "tags": {"L": [S("a"), S("b")]}})
    written(api, f"UPDATE \"{t}\" SET tags[5] = 'c' WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "tags": {"L": [S("a"), S("b"), S("c")]}})
    written(api, f"UPDATE \"{t}\" REMOVE tags[1] WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "tags": {"L": [S("a"), S("c")]}})
    # REMOVE of an index past the end, or of a missing attribute, changes nothing.
    written(api, f"UPDATE \"{t}\" REMOVE tags[9] REMOVE absent WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "tags": {"L": [S("a"), S("c")]}})


def test_update_arithmetic(api, t):
    put(api, t, {"pk": S("k"), "n": N("1.5"), "m": {"M": {"c": N(10)}}})
    written(api, f"UPDATE \"{t}\" SET n = n + 1 WHERE pk = 'k'")
    assert get(api, t, {"pk": S("k")})["n"] == N("2.5")
    written(api, f"UPDATE \"{t}\" SET n = n - 2.50 WHERE pk = 'k'")
    assert get(api, t, {"pk": S("k")})["n"] == N("0")
    written(api, f"UPDATE \"{t}\" SET n=n-1 WHERE pk = 'k'")
    assert get(api, t, {"pk": S("k")})["n"] == N("-1")
    written(api, f"UPDATE \"{t}\" SET n = n - - 2 WHERE pk = 'k'")
    assert get(api, t, {"pk": S("k")})["n"] == N("1")
    written(api, f"UPDATE \"{t}\" SET n = n + ?, m.c = m.c - 1E1 WHERE pk = 'k'", [N("1e3")])
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "n": N(1001), "m": {"M": {"c": N(0)}}})
    # The value of another attribute, computed from the item before the update.
    written(api, f"UPDATE \"{t}\" SET o = n + 1, n = n + 1 WHERE pk = 'k'")
    item = get(api, t, {"pk": S("k")})
    assert item["o"] == N(1002) and item["n"] == N(1002)


def test_update_arithmetic_errors(api, t):
    put(api, t, {"pk": S("k"), "n": N(1), "s": S("x"),
                 "big": N("9.9999999999999999999999999999999999999E+125")})
    assert_validation(es(api, f"UPDATE \"{t}\" SET z = z + 1 WHERE pk = 'k'"), MISSING_OPERAND)
    assert_validation(es(api, f"UPDATE \"{t}\" SET s = s + 1 WHERE pk = 'k'"), WRONG_OPERAND)
    assert_validation(es(api, f"UPDATE \"{t}\" SET big = big + big WHERE pk = 'k'"),
                      "Number overflow. Attempting to store a number with magnitude larger than "
                      "supported range")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "n": N(1), "s": S("x"),
          "big": N("9" + "9" * 37 + "0" * 88)})


@pytest.mark.parametrize("expr, op, typ", [
    ("n + 'x'", "+", "S"), ("n - NULL", "-", "NULL"), ("n + [1]", "+", "L"),
    ("n + true", "+", "BOOL"), ("n - {'a': 1}", "-", "M"), ("n + <<1>>", "+", "NS"),
])
def test_update_arithmetic_literal_of_wrong_type_refused_before_the_item(api, t, expr, op, typ):
    msg = f"Incorrect operand type for operator or function; operator or function: {op}, " \
          f"operand type: {typ}"
    put(api, t, {"pk": S("k"), "n": N(1)})
    assert_validation(es(api, f"UPDATE \"{t}\" SET n = {expr} WHERE pk = 'k'"), msg)
    # Refused before any condition: a missing item does not turn it into a condition failure.
    assert_validation(es(api, f"UPDATE \"{t}\" SET n = {expr} WHERE pk = 'missing'"), msg)
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "n": N(1)})


def test_update_list_append_both_ways(api, t):
    put(api, t, {"pk": S("k"), "years": {"L": [N(2011)]}})
    written(api, f"UPDATE \"{t}\" SET years = list_append(years, [2012]) WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET years = list_append([2010], years) WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET years = list_append(years, ?) WHERE pk = 'k'",
            [{"L": [N(2013), S("x")]}])
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "years": {"L": [N(2010), N(2011), N(2012), N(2013), S("x")]}})
    written(api, f"UPDATE \"{t}\" SET copy = list_append(years, []) WHERE pk = 'k'")
    assert len(get(api, t, {"pk": S("k")})["copy"]["L"]) == 5


def test_update_list_append_errors(api, t):
    put(api, t, {"pk": S("k"), "s": S("x"), "l": {"L": []}})
    assert_validation(es(api, f"UPDATE \"{t}\" SET nl = list_append(nl, [1]) WHERE pk = 'k'"),
                      MISSING_OPERAND)
    assert_validation(es(api, f"UPDATE \"{t}\" SET s = list_append(s, [1]) WHERE pk = 'k'"),
                      WRONG_OPERAND)
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "s": S("x"), "l": {"L": []}})


def test_update_set_add_and_set_delete(api, t):
    put(api, t, {"pk": S("k"), "ss": {"SS": ["a"]}, "ns": {"NS": ["1", "2"]}})
    key = {"pk": S("k")}
    written(api, f"UPDATE \"{t}\" SET ss = set_add(ss, <<'b', 'c'>>) WHERE pk = 'k'")
    assert normalize(get(api, t, key)["ss"]) == normalize({"SS": ["a", "b", "c"]})
    written(api, f"UPDATE \"{t}\" SET ss = SET_DELETE(ss, <<'a'>>) WHERE pk = 'k'")
    assert normalize(get(api, t, key)["ss"]) == normalize({"SS": ["b", "c"]})
    written(api, f"UPDATE \"{t}\" SET ss = set_add(ss, ?) WHERE pk = 'k'", [{"SS": ["d"]}])
    assert normalize(get(api, t, key)["ss"]) == normalize({"SS": ["b", "c", "d"]})
    # Adding an existing member, deleting an absent one: nothing changes.
    written(api, f"UPDATE \"{t}\" SET ss = set_add(ss, <<'b'>>) WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET ss = set_delete(ss, <<'zz'>>) WHERE pk = 'k'")
    assert normalize(get(api, t, key)["ss"]) == normalize({"SS": ["b", "c", "d"]})
    # Numbers by value.
    written(api, f"UPDATE \"{t}\" SET ns = set_add(ns, <<2.0, 3E0>>) WHERE pk = 'k'")
    assert normalize(get(api, t, key)["ns"]) == normalize({"NS": ["1", "2", "3"]})
    # Adding to a missing attribute creates the set; deleting every member removes it;
    # deleting from a missing attribute leaves it absent.
    written(api, f"UPDATE \"{t}\" SET fresh = set_add(fresh, <<5>>) WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET ns = set_delete(ns, <<1, 2, 3>>) WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET none = set_delete(none, <<'q'>>) WHERE pk = 'k'")
    same(get(api, t, key), {"pk": S("k"), "ss": {"SS": ["b", "c", "d"]},
                            "fresh": {"NS": ["5"]}})
    # Nested set.
    written(api, f"UPDATE \"{t}\" SET m = {{'s': <<'x'>>}} WHERE pk = 'k'")
    written(api, f"UPDATE \"{t}\" SET m.s = set_add(m.s, <<'y'>>) WHERE pk = 'k'")
    assert normalize(get(api, t, key)["m"]) == normalize({"M": {"s": {"SS": ["x", "y"]}}})


def test_set_add_type_errors(api, t):
    item = {"pk": S("k"), "ss": {"SS": ["a"]}, "s": S("x")}
    put(api, t, item)
    assert_validation(es(api, f"UPDATE \"{t}\" SET ss = set_add(ss, <<1>>) WHERE pk = 'k'"),
                      WRONG_OPERAND)
    assert_validation(es(api, f"UPDATE \"{t}\" SET ss = set_delete(ss, <<1>>) WHERE pk = 'k'"),
                      WRONG_OPERAND)
    assert_validation(es(api, f"UPDATE \"{t}\" SET s = set_add(s, <<'a'>>) WHERE pk = 'k'"),
                      WRONG_OPERAND)
    same(get(api, t, {"pk": S("k")}), item)


def test_set_add_argument_rules(api, t):
    item = {"pk": S("k"), "ss": {"SS": ["a"]}, "ns": {"NS": ["1"]}}
    put(api, t, item)
    stmt = f"UPDATE \"{t}\" SET ss = set_add(other, <<'x'>>) WHERE pk = 'k'"
    assert_validation(es(api, stmt), "The first argument to SET_ADD must equal the assignment "
                                     f"value at 1:{col(stmt, 'set_add')}:7")
    stmt = f"UPDATE \"{t}\" SET ss = set_delete(other, <<'x'>>) WHERE pk = 'k'"
    assert_validation(es(api, stmt), "The first argument to SET_DELETE must equal the assignment "
                                     f"value at 1:{col(stmt, 'set_delete')}:10")
    stmt = f"UPDATE \"{t}\" SET ss = set_add(ss, 'x') WHERE pk = 'k'"
    assert_validation(es(api, stmt), "The second argument to SET_ADD must be a value with type "
                                     f"SET at 1:{col(stmt, 'ss', col(stmt, 'set_add'))}:2")
    stmt = f"UPDATE \"{t}\" SET ss = set_add(ss) WHERE pk = 'k'"
    assert_validation(es(api, stmt), "SET_ADD must have exactly two arguments at "
                                     f"1:{col(stmt, 'set_add')}:7")
    assert_validation(es(api, f"UPDATE \"{t}\" SET ss = set_add(ss, <<'x', 'x'>>) "
                              f"WHERE pk = 'k'"),
                      INVALID + "Input collection [x, x] contains duplicates.")
    assert_validation(es(api, f"UPDATE \"{t}\" SET ns = set_add(ns, <<2, 2.0>>) "
                              f"WHERE pk = 'k'"),
                      INVALID + "Input collection [2, 2.0] contains duplicates! under root")
    assert_validation(es(api, f"UPDATE \"{t}\" SET ss = set_add(ss, <<>>) WHERE pk = 'k'"),
                      "Empty bags are not supported")
    same(get(api, t, {"pk": S("k")}), item)


def test_repeated_set_and_remove_clauses(api, t):
    put(api, t, {"pk": S("k"), "a": N(0), "c": N(0), "d": N(0), "x": N(0), "y": N(0)})
    written(api, f"UPDATE \"{t}\" SET a = 1 SET b = 2 REMOVE c REMOVE d SET e = 3, f = 4 "
                 f"WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "a": N(1), "b": N(2), "e": N(3), "f": N(4), "x": N(0), "y": N(0)})
    written(api, f"UPDATE \"{t}\" REMOVE x REMOVE y WHERE pk = 'k'")
    same(get(api, t, {"pk": S("k")}),
         {"pk": S("k"), "a": N(1), "b": N(2), "e": N(3), "f": N(4)})


def test_from_first_update_form(api, t):
    put(api, t, {"pk": S("k"), "a": N(1)})
    written(api, f"from \"{t}\" where pk = 'k' set c = 2 remove a")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "c": N(2)})
    got = rows(api, f"FROM \"{t}\" WHERE pk = ? SET c = c + 1 RETURNING ALL NEW *", [S("k")])
    same_rows(got, [{"pk": S("k"), "c": N(3)}])
    assert_conditional(es(api, f"FROM \"{t}\" WHERE pk = 'nope' SET c = 1"))
    assert_validation(es(api, f"FROM \"{t}\" SET c = 1 WHERE pk = 'k'"),
                      "Statement wasn't well formed, can't be processed: "
                      "Unexpected token after expression")
    assert_validation(es(api, f"FROM \"{t}\" WHERE c = 3 SET c = 1"), MANDATORY_KEY)
    assert_not_found(es(api, f"FROM \"{unique_name('gone')}\" WHERE pk = 'k' SET c = 1"))


def test_update_of_missing_item_fails_and_creates_nothing(api, t):
    for stmt in (f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'nope'",
                 f"UPDATE \"{t}\" REMOVE a WHERE pk = 'nope'",
                 f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'nope' RETURNING ALL NEW *",
                 f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'nope' RETURNING ALL OLD *",
                 f"UPDATE \"{t}\" SET s = set_add(s, <<'a'>>) WHERE pk = 'nope'",
                 f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'nope' AND attribute_not_exists(pk)",
                 f"UPDATE \"{t}\" SET a = 1 WHERE pk = 'nope' AND a IS MISSING"):
        assert_conditional(es(api, stmt, ReturnConsumedCapacity="TOTAL"))
    assert scan_all(api, t) == []


# Item of the condition cases; each case writes it under its own key.
COND_ITEM = {"n": N(1), "s": S("abc"), "ss": {"SS": ["a", "b"]}, "l": {"L": [N(1), N(2)]},
             "m": {"M": {"x": N(1)}}, "f": {"BOOL": True}, "nul": {"NULL": True}}

TRUE_CONDITIONS = [
    ("n = 1", None), ("n = 1.0", None), ("n = 1E0", None), ("n <> 2", None), ("n != 2", None),
    ("n > 0", None), ("n >= 1", None), ("n < 2", None), ("n <= 1", None),
    ("n BETWEEN 1 AND 2", None), ("n IN [3, 1]", None), ("n IN (1, 2)", None),
    ("n IN [?, 5]", [N(1)]), ("n = ?", [N("1.00")]), ("s = 'abc'", None), ("s > 'abb'", None),
    ("begins_with(s, 'ab')", None), ("contains(s, 'bc')", None), ("contains(ss, 'a')", None),
    ("attribute_exists(m.x)", None), ("attribute_not_exists(zz)", None),
    ("attribute_exists(\"ss\")", None), ("zz IS MISSING", None), ("n IS NOT MISSING", None),
    ("nul IS NULL", None), ("zz IS NOT NULL", None), ("n IS NOT NULL", None),
    ("size(s) = 3", None), ("size(l) = 2", None), ("attribute_type(l, 'L')", None),
    ("ss = ?", [{"SS": ["b", "a"]}]), ("ss = <<'b', 'a'>>", None), ("m = {'x': 1}", None),
    ("l = [1, 2]", None), ("f = true", None), ("f = ?", [{"BOOL": True}]), ("NOT n = 2", None),
    ("NOT zz = 2", None), ("(n = 1 OR zz = 1)", None), ("n = 1 AND s = 'abc'", None),
    ("attribute_exists(zz) = false", None), ("(n BETWEEN 0 AND 5) = true", None),
    ("attribute_exists(n) IN [true, false]", None), ("contains(zz, 'z') = false", None),
    ("(n > 'a' OR n = 1)", None), ("NOT n IN [2, 3]", None), ("n NOT IN [2, 3]", None),
    ("NOT n BETWEEN 2 AND 3", None), ("n NOT BETWEEN 2 AND 3", None),
]

FALSE_CONDITIONS = [
    ("n = 2", None), ("n = '1'", None), ("n <> 1", None), ("n > 1", None),
    ("n BETWEEN 2 AND 3", None), ("n IN [2, 3]", None), ("zz = 1", None), ("zz <> 1", None),
    ("begins_with(s, 'b')", None), ("contains(ss, 'z')", None), ("attribute_exists(zz)", None),
    ("attribute_not_exists(n)", None), ("n IS MISSING", None), ("nul IS NOT NULL", None),
    ("zz IS NULL", None), ("l = [2, 1]", None), ("m = {'x': 2}", None), ("f = 1", None),
    ("s > 1", None), ("ss = ?", [{"SS": ["a"]}]), ("contains(zz, 'z')", None),
    ("attribute_exists(n) = 1", None), ("size(s) = 4", None),
    ("NOT n IN [1, 2]", None), ("n NOT BETWEEN 0 AND 2", None),
]


def _cond_key(request):
    return S(request.node.name)


@pytest.mark.parametrize("cond, params", TRUE_CONDITIONS)
def test_update_condition_true_applies(api, cond_table, request, cond, params):
    key = _cond_key(request)
    put(api, cond_table, dict(COND_ITEM, pk=key))
    written(api, f"UPDATE \"{cond_table}\" SET done = TRUE WHERE pk = ? AND {cond}",
            [key] + (params or []))
    same(get(api, cond_table, {"pk": key}), dict(COND_ITEM, pk=key, done={"BOOL": True}))


@pytest.mark.parametrize("cond, params", FALSE_CONDITIONS)
def test_update_condition_false_is_conditional_failure(api, cond_table, request, cond, params):
    key = _cond_key(request)
    put(api, cond_table, dict(COND_ITEM, pk=key))
    assert_conditional(es(api, f"UPDATE \"{cond_table}\" SET done = TRUE WHERE pk = ? "
                               f"AND {cond}", [key] + (params or [])))
    same(get(api, cond_table, {"pk": key}), dict(COND_ITEM, pk=key))


@pytest.mark.parametrize("cond, params", TRUE_CONDITIONS[::4])
def test_delete_condition_true_deletes(api, cond_table, request, cond, params):
    key = _cond_key(request)
    put(api, cond_table, dict(COND_ITEM, pk=key))
    written(api, f"DELETE FROM \"{cond_table}\" WHERE pk = ? AND {cond}", [key] + (params or []))
    assert get(api, cond_table, {"pk": key}) is None


@pytest.mark.parametrize("cond, params", FALSE_CONDITIONS[::3])
def test_delete_condition_false_keeps_the_item(api, cond_table, request, cond, params):
    key = _cond_key(request)
    put(api, cond_table, dict(COND_ITEM, pk=key))
    assert_conditional(es(api, f"DELETE FROM \"{cond_table}\" WHERE pk = ? AND {cond}",
                          [key] + (params or [])))
    same(get(api, cond_table, {"pk": key}), dict(COND_ITEM, pk=key))


# --------------------------------------------------------------------------- key rules


def _keyed_write(verb, table, where):
    if verb == "UPDATE":
        return f"UPDATE \"{table}\" SET x = 1{where}"
    return f"DELETE FROM \"{table}\"{where}"


@pytest.mark.parametrize("verb", ["UPDATE", "DELETE"])
@pytest.mark.parametrize("where", [
    "", " WHERE pk = 'a'", " WHERE sk = 1", " WHERE n = 1", " WHERE pk = 'a' AND sk > 0",
    " WHERE pk = 'a' OR sk = 1", " WHERE pk = 'a' AND (sk = 1 OR n = 1)",
    " WHERE pk IN ['a', 'b'] AND sk = 1", " WHERE NOT pk = 'b' AND sk = 1",
    " WHERE pk = 'a' AND sk <> 2",
    # AND binds tighter than OR: the key is inside one branch of an OR.
    " WHERE pk = 'a' AND sk = 1 OR n = 1",
])
def test_write_key_must_be_pinned_by_equality(api, tc, verb, where):
    put(api, tc, {"pk": S("a"), "sk": N(1), "n": N(1)})
    assert_validation(es(api, _keyed_write(verb, tc, where)), MANDATORY_KEY)
    same(get(api, tc, {"pk": S("a"), "sk": N(1)}), {"pk": S("a"), "sk": N(1), "n": N(1)})


@pytest.mark.parametrize("verb", ["UPDATE", "DELETE"])
@pytest.mark.parametrize("where, name", [
    (" WHERE pk = 'a' AND sk = 1 AND pk = 'b'", "pk"),
    (" WHERE sk = 1 AND pk = 'a' AND sk = 2", "sk"),
    (" WHERE (pk = 'a' AND sk = 1) AND n = 1 AND sk = 1.5", "sk"),
])
def test_write_key_with_two_values_refused(api, tc, verb, where, name):
    put(api, tc, {"pk": S("a"), "sk": N(1), "n": N(1)})
    assert_validation(es(api, _keyed_write(verb, tc, where)),
                      f"Multiple conditions on same key {name}. Only single item "
                      "Update/Insert/Delete are supported")
    same(get(api, tc, {"pk": S("a"), "sk": N(1)}), {"pk": S("a"), "sk": N(1), "n": N(1)})


@pytest.mark.parametrize("verb", ["UPDATE", "DELETE"])
def test_write_key_type_must_match_the_schema(api, tc, verb):
    put(api, tc, {"pk": S("1"), "sk": N(1)})
    head = f"UPDATE \"{tc}\" SET x = 1" if verb == "UPDATE" else f"DELETE FROM \"{tc}\""
    assert_validation(es(api, f"{head} WHERE pk = 1 AND sk = 1"),
                      "Key attribute's data type should match its data type in table's schema: "
                      "Key pk")
    assert_validation(es(api, f"{head} WHERE pk = '1' AND sk = '1'"),
                      "Key attribute's data type should match its data type in table's schema: "
                      "Key sk")
    assert_validation(es(api, f"{head} WHERE pk = '1' AND sk = ?", [S("1")]),
                      "Key attribute's data type should match its data type in table's schema: "
                      "Key sk")
    same(get(api, tc, {"pk": S("1"), "sk": N(1)}), {"pk": S("1"), "sk": N(1)})


def test_write_key_forms_that_are_accepted(api, tc):
    put(api, tc, {"pk": S("a"), "sk": N(1)})
    written(api, f"UPDATE \"{tc}\" SET x = 1 WHERE sk = 1 AND pk = 'a'")
    written(api, f"UPDATE \"{tc}\" SET y = 2 WHERE (pk = 'a' AND sk = 1.0)")
    written(api, f"UPDATE \"{tc}\" SET z = 3 WHERE pk = 'a' AND sk = 1 AND pk = 'a'")
    written(api, f"UPDATE \"{tc}\" SET w = 4 WHERE (pk = 'a' AND sk = 1E0) AND x = 1")
    same(get(api, tc, {"pk": S("a"), "sk": N(1)}),
         {"pk": S("a"), "sk": N(1), "x": N(1), "y": N(2), "z": N(3), "w": N(4)})
    written(api, f"DELETE FROM \"{tc}\" WHERE (sk = 1) AND pk = 'a' AND pk = 'a'")
    assert scan_all(api, tc) == []


def test_update_of_key_attributes_refused(api, tc):
    item = {"pk": S("a"), "sk": N(1), "n": N(1)}
    put(api, tc, item)
    for stmt, name in ((f"UPDATE \"{tc}\" SET pk = 'b' WHERE pk = 'a' AND sk = 1", "pk"),
                       (f"UPDATE \"{tc}\" SET sk = 2 WHERE pk = 'a' AND sk = 1", "sk"),
                       (f"UPDATE \"{tc}\" SET sk = sk + 1 WHERE pk = 'a' AND sk = 1", "sk"),
                       (f"UPDATE \"{tc}\" REMOVE pk WHERE pk = 'a' AND sk = 1", "pk"),
                       (f"UPDATE \"{tc}\" SET n = 2 REMOVE sk WHERE pk = 'a' AND sk = 1", "sk")):
        assert_validation(es(api, stmt), INVALID + f"Cannot update attribute {name}. "
                                                   "This attribute is part of the key")
    same(get(api, tc, {"pk": S("a"), "sk": N(1)}), item)


# --------------------------------------------------------------------------- execution errors


def test_update_paths_through_missing_or_scalar_parents(api, t):
    item = {"pk": S("k"), "s": S("x"), "m": {"M": {}}, "l": {"L": []}}
    put(api, t, item)
    for target in ("newlist[0]", "nomap.x", "m.x.y", "s.x", "s[0]", "l[0].x", "m[0]"):
        assert_validation(es(api, f"UPDATE \"{t}\" SET {target} = 'v' WHERE pk = 'k'"),
                          INVALID_PATH)
    same(get(api, t, {"pk": S("k")}), item)


def test_update_item_size_limit_on_the_finished_item(api, t):
    base = sized({"pk": S("k")}, MAX_ITEM - 100)
    put(api, t, base)
    # Exactly 409,600 bytes after the update: a 1-letter name and a 99-byte string.
    written(api, f"UPDATE \"{t}\" SET z = ? WHERE pk = 'k'", [S("x" * 99)])
    assert item_size(get(api, t, {"pk": S("k")})) == MAX_ITEM
    assert_validation(es(api, f"UPDATE \"{t}\" SET z = ? WHERE pk = 'k'", [S("x" * 100)]),
                      "Item size to update has exceeded the maximum allowed size")
    # Measured on the finished item: replacing `pad` by a value of the same size is fine.
    written(api, f"UPDATE \"{t}\" SET \"pad\" = ? WHERE pk = 'k'", [S("y" * len(base["pad"]["S"]))])
    assert item_size(get(api, t, {"pk": S("k")})) == MAX_ITEM


def _nested(levels):
    """A string wrapped in `levels` lists."""
    v = S("x")
    for _ in range(levels):
        v = {"L": [v]}
    return v


def test_update_depth_limit(api, t):
    put(api, t, {"pk": S("k"), "m": {"M": {}}})
    # m is one level; 30 more are fine, 31 more make 32 nested levels under the attribute.
    written(api, f"UPDATE \"{t}\" SET m.ok = ? WHERE pk = 'k'", [_nested(30)])
    assert_validation(es(api, f"UPDATE \"{t}\" SET m.deep = ? WHERE pk = 'k'", [_nested(31)]),
                      "Nesting Levels have exceeded supported limits")
    item = get(api, t, {"pk": S("k")})
    assert set(item["m"]["M"]) == {"ok"}


def test_update_index_key_type_checked(api, make_table):
    t = make_table(("pk", "S"), AttributeDefinitions=[
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "gk", "AttributeType": "S"}],
        GlobalSecondaryIndexes=[{"IndexName": "gsi",
                                 "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    put(api, t, {"pk": S("k"), "gk": S("x")})
    assert_validation(es(api, f"UPDATE \"{t}\" SET gk = 1 WHERE pk = 'k'"),
                      INVALID + "Type mismatch for Index Key gk Expected: S Actual: N "
                                "IndexName: gsi")
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'j', 'gk': 1}}"),
                      INVALID + "Type mismatch for Index Key gk Expected: S Actual: N "
                                "IndexName: gsi")
    same(get(api, t, {"pk": S("k")}), {"pk": S("k"), "gk": S("x")})
    assert get(api, t, {"pk": S("j")}) is None


def test_update_missing_table(api):
    assert_not_found(es(api, f"UPDATE \"{unique_name('gone')}\" SET a = 1 WHERE pk = 'k'"))
    assert_not_found(es(api, f"DELETE FROM \"{unique_name('gone')}\" WHERE pk = 'k'"))


# --------------------------------------------------------------------------- RETURNING


@pytest.fixture
def rt(api, t):
    """Table with a fresh item `k` for each reset(); → (table, reset)."""
    item = {"pk": S("k"), "a": N(1), "profile": {"M": {"sub": S("old"), "other": S("o")}},
            "tags": {"L": [S("a"), S("b"), S("c")]}, "ss": {"SS": ["x"]}}

    def reset(**changes):
        full = dict(item, **changes)
        put(api, t, full)
        return full

    return t, reset


def test_returning_all_old_and_all_new(api, rt):
    t, reset = rt
    old = reset()
    got = rows(api, f"UPDATE \"{t}\" SET a = 2, b = 'x' WHERE pk = 'k' RETURNING ALL OLD *")
    same_rows(got, [old])
    new = dict(old, a=N(2), b=S("x"))
    same(get(api, t, {"pk": S("k")}), new)
    got = rows(api, f"UPDATE \"{t}\" REMOVE b WHERE pk = 'k' RETURNING ALL NEW *")
    same_rows(got, [dict(old, a=N(2))])
    got = rows(api, f"update \"{t}\" set a = a + 1 where pk = 'k' returning all new *")
    same_rows(got, [dict(old, a=N(3))])


@pytest.mark.parametrize("action, old, new", [
    ("SET a = 2", [{"a": N(1)}], [{"a": N(2)}]),
    ("SET a = a + 1", [{"a": N(1)}], [{"a": N(2)}]),
    ("SET profile.sub = 'new'", [{"profile": {"M": {"sub": S("old")}}}],
     [{"profile": {"M": {"sub": S("new")}}}]),
    ("SET tags[2] = 'y', tags[0] = 'x'", [{"tags": {"L": [S("a"), S("c")]}}],
     [{"tags": {"L": [S("x"), S("y")]}}]),
    ("SET tags[1] = 'B'", [{"tags": {"L": [S("b")]}}], [{"tags": {"L": [S("B")]}}]),
    ("SET tags[5] = 'd'", [], []),
    ("SET tags[3] = 'd'", [], [{"tags": {"L": [S("d")]}}]),
    ("REMOVE tags[1]", [{"tags": {"L": [S("b")]}}], [{"tags": {"L": [S("c")]}}]),
    ("REMOVE tags[2]", [{"tags": {"L": [S("c")]}}], []),
    ("REMOVE profile", [{"profile": {"M": {"sub": S("old"), "other": S("o")}}}], []),
    ("SET fresh = 1", [], [{"fresh": N(1)}]),
    ("REMOVE absent", [], []),
    ("SET a = 5 REMOVE profile.other", [{"a": N(1), "profile": {"M": {"other": S("o")}}}],
     [{"a": N(5)}]),
    ("SET ss = set_add(ss, <<'y'>>)", [{"ss": {"SS": ["x"]}}], [{"ss": {"SS": ["x", "y"]}}]),
])
def test_returning_modified(api, rt, action, old, new):
    t, reset = rt
    reset()
    same_rows(rows(api, f"UPDATE \"{t}\" {action} WHERE pk = 'k' RETURNING MODIFIED OLD *"), old)
    reset()
    same_rows(rows(api, f"UPDATE \"{t}\" {action} WHERE pk = 'k' RETURNING MODIFIED NEW *"), new)


def test_returning_all_new_with_set_add(api, rt):
    t, reset = rt
    item = reset()
    got = rows(api, f"UPDATE \"{t}\" SET ss = set_add(ss, ?) WHERE pk = 'k' RETURNING ALL NEW *",
               [{"SS": ["z"]}])
    same_rows(got, [dict(item, ss={"SS": ["x", "z"]})])


def test_returning_on_missing_item_or_false_condition(api, rt):
    t, reset = rt
    item = reset()
    for rv in ("ALL OLD", "ALL NEW", "MODIFIED OLD", "MODIFIED NEW"):
        assert_conditional(es(api, f"UPDATE \"{t}\" SET a = 9 WHERE pk = 'x' RETURNING {rv} *"))
        assert_conditional(es(api, f"UPDATE \"{t}\" SET a = 9 WHERE pk = 'k' AND a = 2 "
                                   f"RETURNING {rv} *"))
    same(get(api, t, {"pk": S("k")}), item)
    assert len(scan_all(api, t)) == 1


# --------------------------------------------------------------------------- DELETE


def test_delete_existing_item(api, tc):
    put(api, tc, {"pk": S("a"), "sk": N(1), "v": S("x")})
    put(api, tc, {"pk": S("a"), "sk": N(2)})
    written(api, f"DELETE FROM \"{tc}\" WHERE pk = 'a' AND sk = 1")
    assert get(api, tc, {"pk": S("a"), "sk": N(1)}) is None
    assert len(scan_all(api, tc)) == 1


def test_delete_of_missing_item_succeeds_without_evaluating_conditions(api, t):
    put(api, t, {"pk": S("other")})
    written(api, f"DELETE FROM \"{t}\" WHERE pk = 'nope'")
    written(api, f"DELETE FROM \"{t}\" WHERE pk = 'nope' AND n = 5")
    written(api, f"DELETE FROM \"{t}\" WHERE pk = 'nope' AND attribute_exists(zz)")
    assert rows(api, f"DELETE FROM \"{t}\" WHERE pk = 'nope' RETURNING ALL OLD *") == []
    assert rows(api, f"DELETE FROM \"{t}\" WHERE pk = 'nope' AND n = 5 RETURNING ALL OLD *") == []
    assert [it["pk"] for it in scan_all(api, t)] == [S("other")]


def test_delete_returning_all_old(api, t):
    item = {"pk": S("a"), "n": N(1), "l": {"L": [S("x")]}}
    put(api, t, item)
    same_rows(rows(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' RETURNING ALL OLD *"), [item])
    assert get(api, t, {"pk": S("a")}) is None


@pytest.mark.parametrize("variant", ["MODIFIED OLD", "ALL NEW", "MODIFIED NEW"])
def test_delete_refuses_other_returning_variants(api, t, variant):
    put(api, t, {"pk": S("a")})
    assert_validation(es(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' RETURNING {variant} *"),
                      f"Invalid returning clause: RETURNING {variant} *. Only RETURNING ALL OLD "
                      "* is allowed in DELETE statements.")
    same(get(api, t, {"pk": S("a")}), {"pk": S("a")})


# --------------------------------------------------------------------------- index targets


@pytest.fixture
def indexed(make_table):
    """pk S / sk S; GSI gsi (gk, KEYS_ONLY); LSI lsi (pk | lk, ALL)."""
    return make_table(
        ("pk", "S"), ("sk", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "gk", "lk")],
        GlobalSecondaryIndexes=[{"IndexName": "gsi",
                                 "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[{"IndexName": "lsi",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "lk", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}])


def test_writes_on_an_index_refused(api, indexed):
    item = {"pk": S("a"), "sk": S("1"), "gk": S("g"), "lk": S("l")}
    put(api, indexed, item)
    for index in ("gsi", "lsi", "nosuch"):
        assert_validation(es(api, f"INSERT INTO \"{indexed}\".\"{index}\" VALUE "
                                  "{'pk': 'b', 'sk': '1'}"),
                          "FROM clause may only contain a single table name in data manipulation "
                          "statements")
        assert_validation(es(api, f"UPDATE \"{indexed}\".\"{index}\" SET x = 1 "
                                  "WHERE pk = 'a' AND sk = '1'"), ON_INDEX)
        assert_validation(es(api, f"DELETE FROM \"{indexed}\".\"{index}\" "
                                  "WHERE pk = 'a' AND sk = '1'"), ON_INDEX)
    # The qualifier is refused before the table is looked up.
    gone = unique_name("gone")
    assert_validation(es(api, f"UPDATE \"{gone}\".\"gsi\" SET x = 1 WHERE pk = 'a'"), ON_INDEX)
    assert_validation(es(api, f"DELETE FROM \"{gone}\".\"gsi\" WHERE pk = 'a'"), ON_INDEX)
    assert scan_all(api, indexed) == [item]


# --------------------------------------------------------------------------- ALL_OLD on failure


def test_return_values_on_condition_check_failure(api, t):
    item = {"pk": S("a"), "n": N(1), "m": {"M": {"x": S("y")}}}
    put(api, t, item)
    upd = f"UPDATE \"{t}\" SET n = 5 WHERE pk = 'a' AND n = 2"
    dele = f"DELETE FROM \"{t}\" WHERE pk = 'a' AND n = 2"
    assert_conditional(es(api, upd, ReturnValuesOnConditionCheckFailure="ALL_OLD"), item)
    assert_conditional(es(api, dele, ReturnValuesOnConditionCheckFailure="ALL_OLD"), item)
    assert_conditional(es(api, upd + " RETURNING ALL NEW *",
                          ReturnValuesOnConditionCheckFailure="ALL_OLD"), item)
    assert_conditional(es(api, upd, ReturnValuesOnConditionCheckFailure="NONE"))
    assert_conditional(es(api, upd))
    # A missing item has nothing to return.
    assert_conditional(es(api, f"UPDATE \"{t}\" SET n = 5 WHERE pk = 'zz'",
                          ReturnValuesOnConditionCheckFailure="ALL_OLD"))
    same(get(api, t, {"pk": S("a")}), item)
    # On success the member changes nothing in the answer.
    written(api, f"UPDATE \"{t}\" SET n = 5 WHERE pk = 'a' AND n = 1",
            ReturnValuesOnConditionCheckFailure="ALL_OLD")


# =========================================================================== capacity


def _cc(table, table_units, mode, g=None, l=None):
    total = float(table_units + (g or 0) + (l or 0))
    if mode == "TOTAL":
        return {"TableName": table, "CapacityUnits": total}
    cc = {"TableName": table, "CapacityUnits": total,
          "Table": {"CapacityUnits": float(table_units)}}
    if g is not None:
        cc["GlobalSecondaryIndexes"] = {"gsi": {"CapacityUnits": float(g)}}
    if l is not None:
        cc["LocalSecondaryIndexes"] = {"lsi": {"CapacityUnits": float(l)}}
    return cc


def _capacity(api, statement, mode, params=None):
    out = run(api, statement, params, ReturnConsumedCapacity=mode)
    return out["ConsumedCapacity"]


def _api_capacity(api, op, body, mode):
    return api.ok(op, dict(body, ReturnConsumedCapacity=mode))["ConsumedCapacity"]


@pytest.mark.parametrize("mode", ["TOTAL", "INDEXES"])
def test_capacity_of_writes(api, indexed, mode):
    t = indexed
    # INSERT of an item in both indexes: table 1 + GSI 1 + LSI 1.
    assert _capacity(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': '1', 'gk': 'g', "
                          "'lk': 'l', 'x': 1}", mode) == _cc(t, 1, mode, g=1, l=1)
    # In no index: the table only.
    assert _capacity(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'b', 'sk': '1'}}", mode) == \
        _cc(t, 1, mode)
    # UPDATE of an attribute outside the KEYS_ONLY GSI: no GSI arm; the ALL LSI is written.
    assert _capacity(api, f"UPDATE \"{t}\" SET x = 2 WHERE pk = 'a' AND sk = '1'", mode) == \
        _cc(t, 1, mode, l=1)
    # A changed GSI key: delete and put on the GSI.
    assert _capacity(api, f"UPDATE \"{t}\" SET gk = 'h' WHERE pk = 'a' AND sk = '1'", mode) == \
        _cc(t, 1, mode, g=2, l=1)
    # DELETE removes both entries.
    assert _capacity(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = '1'", mode) == \
        _cc(t, 1, mode, g=1, l=1)
    # DELETE of a missing key costs 1.
    assert _capacity(api, f"DELETE FROM \"{t}\" WHERE pk = 'zz' AND sk = '1'", mode) == \
        _cc(t, 1, mode)
    assert _capacity(api, f"DELETE FROM \"{t}\" WHERE pk = 'zz' AND sk = '1' RETURNING ALL OLD *",
                     mode) == _cc(t, 1, mode)


@pytest.mark.parametrize("mode", ["TOTAL", "INDEXES"])
def test_capacity_by_item_size(api, indexed, mode):
    t = indexed
    big = sized({"pk": S("a"), "sk": S("1"), "gk": S("g")}, 2500)
    # 2,500 bytes: 3 units on the table, 1 on the KEYS_ONLY GSI; not in the LSI (no lk).
    assert _capacity(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': '1', 'gk': 'g', "
                          "'pad': ?}", mode, [big["pad"]]) == _cc(t, 3, mode, g=1)
    # UPDATE: the larger of the old and new item; `pad` is not in the GSI.
    assert _capacity(api, f"UPDATE \"{t}\" REMOVE \"pad\" WHERE pk = 'a' AND sk = '1'", mode) == \
        _cc(t, 3, mode)
    assert _capacity(api, f"UPDATE \"{t}\" SET \"pad\" = ? WHERE pk = 'a' AND sk = '1'", mode,
                     [S("x" * 1100)]) == _cc(t, 2, mode)
    # DELETE: the size of the deleted item.
    assert _capacity(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = '1' "
                          "RETURNING ALL OLD *", mode) == _cc(t, 2, mode, g=1)


@pytest.mark.parametrize("mode", ["TOTAL", "INDEXES"])
def test_capacity_equals_the_equivalent_api_call(api, indexed, mode):
    t = indexed
    item = {"pk": S("p"), "sk": S("1"), "gk": S("g"), "lk": S("l"), "pad": S("z" * 1500)}
    twin = dict(item, pk=S("q"))
    assert _capacity(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'p', 'sk': '1', 'gk': 'g', "
                          "'lk': 'l', 'pad': ?}", mode, [item["pad"]]) == \
        _api_capacity(api, "PutItem", {"TableName": t, "Item": twin}, mode)
    for action, expr in (("SET gk = 'h'", "SET gk = :v"), ("SET x = 1", "SET x = :w"),
                         ("REMOVE lk", "REMOVE lk")):
        values = {":v": S("h"), ":w": N(1)}
        body = {"TableName": t, "Key": {"pk": S("q"), "sk": S("1")}, "UpdateExpression": expr}
        used = {k: v for k, v in values.items() if k in expr}
        if used:
            body["ExpressionAttributeValues"] = used
        assert _capacity(api, f"UPDATE \"{t}\" {action} WHERE pk = 'p' AND sk = '1'", mode) == \
            _api_capacity(api, "UpdateItem", body, mode), action
    assert _capacity(api, f"DELETE FROM \"{t}\" WHERE pk = 'p' AND sk = '1'", mode) == \
        _api_capacity(api, "DeleteItem", {"TableName": t,
                                          "Key": {"pk": S("q"), "sk": S("1")}}, mode)


def test_capacity_only_when_asked(api, t):
    assert run(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a'}}") == {"Items": []}
    assert run(api, f"UPDATE \"{t}\" SET n = 1 WHERE pk = 'a'",
               ReturnConsumedCapacity="NONE") == {"Items": []}
    out = run(api, f"UPDATE \"{t}\" SET n = 2 WHERE pk = 'a' RETURNING MODIFIED NEW *",
              ReturnConsumedCapacity="TOTAL")
    assert out == {"Items": [{"n": N(2)}], "ConsumedCapacity": {"TableName": t,
                                                                 "CapacityUnits": 1.0}}
    # Failures carry no ConsumedCapacity.
    resp = es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a'}}", ReturnConsumedCapacity="INDEXES")
    assert_duplicate(resp)
    assert "ConsumedCapacity" not in resp.json, resp
    assert_conditional(es(api, f"UPDATE \"{t}\" SET n = 2 WHERE pk = 'a' AND n = 7",
                          ReturnConsumedCapacity="INDEXES"))
