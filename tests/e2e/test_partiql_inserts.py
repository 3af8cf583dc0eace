"""PartiQL INSERT through ExecuteStatement: every literal and parameter type as stored, numbers
in canonical form, DuplicateItemException for an existing key (nothing changed), PutItem's
key and size rules, a missing table."""

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


def test_insert_answers_empty_items_and_stores_the_item(api, t):
    written(api, f'INSERT INTO "{t}" VALUE {{\'pk\': \'a\', \'s\': \'it\'\'s\', \'n\': 1}}')
    same(get(api, t, {"pk": S("a")}), {"pk": S("a"), "s": S("it's"), "n": N(1)})
    assert len(scan_all(api, t)) == 1


def test_insert_every_literal_type(api, t):
    stmt = (f'INSERT INTO "{t}" VALUE {{'
            "'pk': 'all', "
            "'s': 'héllo wörld', 'empty': '', 'dashes': 'a--b /*c*/', "
            "'n': 42, 'neg': -7.3, "
            "'t': TRUE, 'f': false, 'tt': True, 'nul': NULL, 'nul2': null, "
            "'l': [1, 'two', [3], {'four': 4}, NULL, true, <<'x'>>], 'el': [], "
            "'m': {'a': 1, 'b': {'c': 'deep', 'd': [1, 2]}, 'e': {}}, 'em': {}, "
            "'ss': <<'b', 'a', 'c'>>, 'ns': <<1, 2.5, -3>>, "
            "'Case': 'upper', 'case': 'lower'}")
    written(api, stmt)
    same(get(api, t, {"pk": S("all")}), {
        "pk": S("all"),
        "s": S("héllo wörld"), "empty": S(""), "dashes": S("a--b /*c*/"),
        "n": N(42), "neg": N("-7.3"),
        "t": {"BOOL": True}, "f": {"BOOL": False}, "tt": {"BOOL": True},
        "nul": {"NULL": True}, "nul2": {"NULL": True},
        "l": {"L": [N(1), S("two"), {"L": [N(3)]}, {"M": {"four": N(4)}}, {"NULL": True},
                    {"BOOL": True}, {"SS": ["x"]}]},
        "el": {"L": []},
        "m": {"M": {"a": N(1), "b": {"M": {"c": S("deep"), "d": {"L": [N(1), N(2)]}}},
                    "e": {"M": {}}}},
        "em": {"M": {}},
        "ss": {"SS": ["a", "b", "c"]}, "ns": {"NS": ["1", "2.5", "-3"]},
        "Case": S("upper"), "case": S("lower"),
    })


@pytest.mark.parametrize("literal, canonical", [
    ("1", "1"), ("-7.3", "-7.3"), ("1.0", "1"), ("1e0", "1"), ("7.31E6", "7310000"),
    ("7.31e+6", "7310000"), ("73100000e-1", "7310000"), (".73e1", "7.3"), ("-.73e1", "-7.3"),
    ("1E3", "1000"), ("-1.5e-3", "-0.0015"), ("2.50", "2.5"), ("-0", "0"), ("0.000", "0"),
    ("- - 1", "1"), ("-/* c */-1", "1"), ("- 2", "-2"), ("+5", "5"), ("1E125", "1" + "0" * 125),
    ("1e-130", "0." + "0" * 129 + "1"),
])
def test_insert_number_literal_is_stored_canonical(api, t, literal, canonical):
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'n', 'v': {literal}, "
                 f"'l': [{literal}], 'm': {{'x': {literal}}}}}")
    same(get(api, t, {"pk": S("n")}),
         {"pk": S("n"), "v": N(canonical), "l": {"L": [N(canonical)]},
          "m": {"M": {"x": N(canonical)}}})


def test_insert_number_set_and_list_signs_canonical(api, t):
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'ns', 'ns': <<1E3, 2.50, -0.5e1>>, "
                 "'l': [- 1, +2, 3.0]}")
    same(get(api, t, {"pk": S("ns")}),
         {"pk": S("ns"), "ns": {"NS": ["1000", "2.5", "-5"]},
          "l": {"L": [N(-1), N(2), N(3)]}})


def test_insert_number_key_is_canonical(api, make_table):
    t = make_table(("pk", "N"))
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 1E3, 'v': 'first'}}")
    same(get(api, t, {"pk": N(1000)}), {"pk": N(1000), "v": S("first")})
    for same_key in ("1000", "1000.0", "10e2", "+1000"):
        assert_duplicate(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': {same_key}, 'v': 'x'}}"))
    assert_duplicate(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'v': 'x'}}", [N("1e3")]))
    same(get(api, t, {"pk": N(1000)}), {"pk": N(1000), "v": S("first")})


@pytest.mark.parametrize("literal, message", [
    ("1e126", "Number overflow. Attempting to store a number with magnitude larger than "
              "supported range under root"),
    ("1e-131", "Number underflow. Attempting to store a number with magnitude smaller than "
               "supported range under root"),
    ("123456789012345678901234567890123456789",
     "Attempting to store more than 38 significant digits in a Number under root"),
])
def test_insert_number_out_of_range_refused(api, t, literal, message):
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'v': {literal}}}"),
                      message)
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', "
                              f"'m': {{'x': [1, {literal}]}}}}"), message + ".x[1]")
    assert scan_all(api, t) == []


def test_insert_set_literal_rules(api, t):
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'ss': <<'a', 'a'>>}}"),
                      INVALID + "Input collection [a, a] contains duplicates.")
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'ss': <<>>}}"),
                      "Empty bags are not supported")
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'ss': <<'a', 1>>}}"),
                      "Unsupported data type in Bag. DynamoDB only supports either numbers or "
                      "strings in bags")
    assert scan_all(api, t) == []


def test_insert_parameters_of_every_type(api, t):
    values = {
        "s": S("text"), "n": N("0012.50"), "t": {"BOOL": True}, "nul": {"NULL": True},
        "b": B(b"\x00\x01\xff"), "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1e2", "3"]},
        "bs": {"BS": [b64(b"\x01"), b64(b"\x02\x03")]},
        "l": {"L": [S("a"), N("1E1"), {"B": b64(b"z")}]},
        "m": {"M": {"k": {"NS": ["2.0"]}, "e": {"L": []}}},
    }
    names = list(values)
    members = ", ".join(f"'{k}': ?" for k in names)
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, {members}}}",
            [S("params")] + [values[k] for k in names])
    same(get(api, t, {"pk": S("params")}), {
        "pk": S("params"), "s": S("text"), "n": N("12.5"), "t": {"BOOL": True},
        "nul": {"NULL": True}, "b": B(b"\x00\x01\xff"), "ss": {"SS": ["x", "y"]},
        "ns": {"NS": ["100", "3"]}, "bs": {"BS": [b64(b"\x01"), b64(b"\x02\x03")]},
        "l": {"L": [S("a"), N(10), {"B": b64(b"z")}]},
        "m": {"M": {"k": {"NS": ["2"]}, "e": {"L": []}}},
    })


def test_binary_key_through_parameters(api, make_table):
    t = make_table(("pk", "B"), ("sk", "B"))
    key = {"pk": B(b"\x00k"), "sk": B(b"\xff")}
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?, 'bs': ?}}",
            [key["pk"], key["sk"], {"BS": [b64(b"a"), b64(b"b")]}])
    same(get(api, t, key), dict(key, bs={"BS": [b64(b"a"), b64(b"b")]}))
    assert_duplicate(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?}}",
                        [key["pk"], key["sk"]]))
    written(api, f'UPDATE "{t}" SET bs = set_add(bs, ?), b = ? WHERE pk = ? AND sk = ?',
            [{"BS": [b64(b"c")]}, B(b"\x10"), key["pk"], key["sk"]])
    same(get(api, t, key), dict(key, bs={"BS": [b64(b"a"), b64(b"b"), b64(b"c")]},
                                b=B(b"\x10")))
    old = rows(api, f'DELETE FROM "{t}" WHERE pk = ? AND sk = ? RETURNING ALL OLD *',
               [key["pk"], key["sk"]])
    same_rows(old, [dict(key, bs={"BS": [b64(b"a"), b64(b"b"), b64(b"c")]}, b=B(b"\x10"))])
    assert get(api, t, key) is None


def test_insert_existing_key_is_duplicate_and_changes_nothing(api, t):
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'v': 1}}")
    resp = es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'v': 2, 'w': 'new'}}",
              ReturnConsumedCapacity="TOTAL")
    assert_duplicate(resp)
    same(get(api, t, {"pk": S("a")}), {"pk": S("a"), "v": N(1)})
    # An item written by PutItem is a duplicate as well; after a DELETE the key is free again.
    put(api, t, {"pk": S("b")})
    assert_duplicate(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'b'}}"))
    written(api, f"DELETE FROM \"{t}\" WHERE pk = 'a'")
    written(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'v': 3}}")
    same(get(api, t, {"pk": S("a")}), {"pk": S("a"), "v": N(3)})


def test_insert_duplicate_on_composite_key(api, tc):
    written(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'a', 'sk': 1}}")
    written(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'a', 'sk': 2}}")
    written(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'b', 'sk': 1}}")
    assert_duplicate(es(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'a', 'sk': 1.0, 'x': 1}}"))
    assert len(scan_all(api, tc)) == 3
    same(get(api, tc, {"pk": S("a"), "sk": N(1)}), {"pk": S("a"), "sk": N(1)})


def test_duplicate_through_boto3(ddb, api, t):
    out = ddb.execute_statement(Statement=f"INSERT INTO \"{t}\" VALUE {{'pk': 'a'}}")
    assert out["Items"] == []
    with pytest.raises(ddb.exceptions.DuplicateItemException) as excinfo:
        ddb.execute_statement(Statement=f"INSERT INTO \"{t}\" VALUE {{'pk': 'a'}}")
    client_error(excinfo, "DuplicateItemException", DUPLICATE_MESSAGE)


def test_insert_missing_key_attribute(api, t, tc):
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'v': 1}}"),
                      INVALID + "Missing the key pk in the item")
    assert_validation(es(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'a', 'v': 1}}"),
                      INVALID + "Missing the key sk in the item")
    assert_validation(es(api, f"INSERT INTO \"{tc}\" VALUE {{'sk': 1}}"),
                      INVALID + "Missing the key pk in the item")
    # Attribute names are case-sensitive: 'PK' is not the key.
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'PK': 'a'}}"),
                      INVALID + "Missing the key pk in the item")
    assert scan_all(api, t) == [] and scan_all(api, tc) == []


def test_insert_key_rules_of_putitem(api, t, tc):
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': 1}}"),
                      INVALID + "Type mismatch for key pk expected: S actual: N")
    assert_validation(es(api, f"INSERT INTO \"{tc}\" VALUE {{'pk': 'a', 'sk': '1'}}"),
                      INVALID + "Type mismatch for key sk expected: N actual: S")
    assert_validation(es(api, f"INSERT INTO \"{t}\" VALUE {{'pk': ''}}"),
                      "One or more parameter values are not valid. The AttributeValue for a key "
                      "attribute cannot contain an empty string value. Key: pk")
    assert scan_all(api, t) == [] and scan_all(api, tc) == []


def test_insert_item_size_limit(api, t):
    stmt = f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'pad': ?}}"
    exact = sized({"pk": S("max")}, MAX_ITEM)
    written(api, stmt, [exact["pk"], exact["pad"]])
    assert item_size(get(api, t, {"pk": S("max")})) == MAX_ITEM
    over = sized({"pk": S("big")}, MAX_ITEM + 1)
    assert_validation(es(api, stmt, [over["pk"], over["pad"]]),
                      "Item size has exceeded the maximum allowed size")
    assert get(api, t, {"pk": S("big")}) is None


def test_insert_into_missing_table(api):
    assert_not_found(es(api, f"INSERT INTO \"{unique_name('gone')}\" VALUE {{'pk': 'a'}}"))
