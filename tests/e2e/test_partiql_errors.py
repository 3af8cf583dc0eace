"""ExecuteStatement refusals that come before execution: request members, parameter values,
lexical and syntax errors, refused statement forms, literal errors, the checks on the statement
alone, tables and indexes, key and WHERE-shape rules; and the order in which they are reported
when several apply. The data sets are in partiql_helpers.py."""

import pytest

from kumo_testlib import (
    N,
    S,
    assert_not_found,
    assert_validation,
    unique_name,
)


from partiql_helpers import (  # noqa: E402
    ENVELOPE,
    INVALID,
    NULL,
    SS,
    at,
    execute,
    fails,
    nested_lists,
    nested_maps,
    nested_param,
    run,
)

pytest_plugins = ["partiql_helpers"]

COR = "1 validation error detected: "
KEY_TYPE = "Key attribute's data type should match its data type in table's schema: Key "
OVERLAP = "Overlapping conditions with range keys are not supported in where clause"
TOO_MANY_READS = "Too many decomposed read operations for a given query."
MULTI = ("PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
         "multi-attribute RANGE keys.")
NO_INDEX = "The table does not have the specified index"
NOT_ON_INDEX = "This operation is not supported on an index"
EMPTY_COMPONENT = "Path component cannot be an empty string"
PARAM_COUNT = "Number of parameters in request and statement don't match."
NOT_NUMERIC = "The parameter cannot be converted to a numeric value"
OVERFLOW = ("Number overflow. Attempting to store a number with magnitude larger than supported "
            "range")
UNDERFLOW = ("Number underflow. Attempting to store a number with magnitude smaller than "
             "supported range")
DIGITS = "Attempting to store more than 38 significant digits in a Number"
PARAM_NESTING = ("Nesting Levels have exceeded supported limits: Attributes in the item have "
                 "nested levels beyond supported limit")
OPERAND_TYPE = "Incorrect operand type for operator or function; operator or function: "


def coral(value, path, constraint):
    shown = "null" if value is None else f"'{value}'"
    return f"{COR}Value {shown} at '{path}' failed to satisfy constraint: {constraint}"


@pytest.fixture
def missing():
    """A table name that does not exist."""
    return unique_name("pq-missing")


def select_a(pq):
    return f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a'"


# =========================================================================== request members


def test_statement_missing(api):
    assert_validation(api("ExecuteStatement", {}),
                      coral(None, "statement", "Member must not be null"))


def test_statement_empty(api):
    assert_validation(api("ExecuteStatement", {"Statement": ""}),
                      coral("", "statement", "Member must have length greater than or equal to 1"))


def test_statement_longer_than_8192_characters(api, pq):
    statement = select_a(pq).ljust(8193)
    assert_validation(execute(api, statement),
                      coral(statement, "statement",
                            "Member must have length less than or equal to 8192"))


def test_statement_of_8192_characters_runs(api, pq):
    out = run(api, select_a(pq).ljust(8192))
    assert len(out["Items"]) == 4


def test_statement_length_counts_characters(api, pq):
    base = select_a(pq) + " /*"
    statement = base + "é" * (8192 - len(base) - 2) + "*/"
    assert len(statement) == 8192 and len(statement.encode()) > 8192
    assert len(run(api, statement)["Items"]) == 4


@pytest.mark.parametrize("member, value, message", [
    ("Parameters", [], coral("[]", "parameters",
                             "Member must have length greater than or equal to 1")),
    ("Limit", 0, coral("0", "limit", "Member must have value greater than or equal to 1")),
    ("Limit", -5, coral("-5", "limit", "Member must have value greater than or equal to 1")),
    ("NextToken", "", coral("", "nextToken",
                            "Member must have length greater than or equal to 1")),
    ("NextToken", "a" * 32769, coral("a" * 32769, "nextToken",
                                     "Member must have length less than or equal to 32768")),
    ("ReturnConsumedCapacity", "ALL", coral("ALL", "returnConsumedCapacity",
                                            "Member must satisfy enum value set: "
                                            "[INDEXES, TOTAL, NONE]")),
    ("ReturnConsumedCapacity", "total", coral("total", "returnConsumedCapacity",
                                              "Member must satisfy enum value set: "
                                              "[INDEXES, TOTAL, NONE]")),
    ("ReturnValuesOnConditionCheckFailure", "ALL_NEW",
     coral("ALL_NEW", "returnValuesOnConditionCheckFailure",
           "Member must satisfy enum value set: [ALL_OLD, NONE]")),
], ids=["parameters-empty", "limit-0", "limit-negative", "token-empty", "token-long",
        "capacity-enum", "capacity-case", "rvoccf-enum"])
def test_request_member_constraints(api, pq, member, value, message):
    assert_validation(execute(api, select_a(pq), **{member: value}), message)


def test_two_member_errors_are_reported_together(api, pq):
    resp = execute(api, select_a(pq), Limit=0, ReturnConsumedCapacity="SOME")
    assert_validation(resp, message_prefix="2 validation errors detected: ")
    assert "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater " \
           "than or equal to 1" in resp.message
    assert "Value 'SOME' at 'returnConsumedCapacity' failed to satisfy constraint" in resp.message


def test_next_token_of_32768_characters_is_no_length_error(api, pq):
    fails(api, select_a(pq), "Invalid NextToken", NextToken="a" * 32768)


# =========================================================================== parameter values


PARAM_ERRORS = [
    (SS(), INVALID + "An string set  may not be empty"),
    ({"NS": []}, INVALID + "An number set  may not be empty"),
    ({"BS": []}, INVALID + "Binary sets should not be empty"),
    (SS("a", "a"), INVALID + "Input collection [a, a] contains duplicates."),
    ({"BS": ["Yg==", "Yg=="]}, INVALID + "Input collection [Yg==, Yg==]of type BS contains "
                                         "duplicates."),
    ({"NULL": False}, INVALID + "Null attribute value types must have the value of true"),
    ({}, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"),
    ({"S": "a", "BOOL": True}, "Supplied AttributeValue has more than one datatypes set, must "
                               "contain exactly one of the supported datatypes"),
    (N("1e99999999999"), NOT_NUMERIC + ": 1e99999999999"),
    (N("-1e99999999999"), NOT_NUMERIC + ": -1e99999999999"),
    (N("1e-2147483648"), NOT_NUMERIC + ": 1e-2147483648"),
    (N("abc"), NOT_NUMERIC + ": abc"),
    (N(""), NOT_NUMERIC),
    (N("1e2147483647"), UNDERFLOW),
    (N("1e126"), OVERFLOW),
    (N("-1e126"), OVERFLOW),
    (N("1e-131"), UNDERFLOW),
    (N("1" * 39), DIGITS),
    ({"L": [S("a"), N("abc")]}, NOT_NUMERIC + ": abc"),
    ({"M": {"k": N("abc")}}, NOT_NUMERIC + ": abc"),
    ({"NS": ["1", "abc"]}, NOT_NUMERIC + ": abc"),
    ({"L": [SS()]}, INVALID + "An string set  may not be empty"),
    ({"M": {"k": {"NULL": False}}}, INVALID + "Null attribute value types must have the value "
                                              "of true"),
    (nested_param(40), PARAM_NESTING),
]


@pytest.mark.parametrize("param, message", PARAM_ERRORS,
                         ids=[m[:40] + "-" + str(i) for i, (_, m) in enumerate(PARAM_ERRORS)])
def test_parameter_values(api, pq, param, message):
    fails(api, f"SELECT * FROM \"{pq['data']}\" WHERE n = ?", message, [param])


@pytest.mark.parametrize("params, message", [
    ([S("a"), N("abc")], NOT_NUMERIC + ": abc"),
    ([N("abc"), SS()], NOT_NUMERIC + ": abc"),
    ([SS(), N("abc")], INVALID + "An string set  may not be empty"),
    ([{"M": {"x": N("abc"), "y": {"NULL": False}}}, S("a")], NOT_NUMERIC + ": abc"),
    ([{"M": {"y": {"NULL": False}, "x": N("abc")}}, S("a")],
     INVALID + "Null attribute value types must have the value of true"),
    ([nested_param(40), N("abc")], PARAM_NESTING),
    ([N("abc"), nested_param(40)], NOT_NUMERIC + ": abc"),
], ids=["second", "number-then-set", "set-then-number", "map-order", "map-order-2",
        "nesting-first", "number-first"])
def test_first_bad_parameter_in_document_order_wins(api, pq, params, message):
    fails(api, f"SELECT * FROM \"{pq['data']}\" WHERE m = ? AND n = ?", message, params)


@pytest.mark.parametrize("where, params", [
    ("pk = ?", None),
    ("pk = ?", [S("a"), S("b")]),
    ("pk = 'a'", [S("a")]),
    ("pk = ? AND sk = ?", [S("a")]),
    ("pk = '?'", [S("a")]),
])
def test_parameter_count_must_match(api, pq, where, params):
    fails(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE {where}", PARAM_COUNT, params)


# =========================================================================== lexical and syntax


E = ENVELOPE

# (statement template, message); {t} is the keyed table, {m} a table that does not exist.
SYNTAX_CASES = [
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' foo", E + "Unexpected token after expression"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a')", E + "Unexpected token after expression"),
    ("SELECT * FROM \"{t}\" WHERE n = 1 e5", E + "Unexpected token after expression"),
    ("SELECT * FROM \"{t}\" ORDER BY sk WHERE pk = 'a'", E + "Unexpected token after expression"),
    ("DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = '9' ORDER BY sk",
     E + "Unexpected token after expression"),
    ("INSERT INTO \"{t}\" t VALUE {{'pk': 'z', 'sk': '1'}}",
     E + "Unexpected token after expression"),
    ("FROM \"{t}\" SET f = '1' WHERE pk = 'a' AND sk = '9'",
     E + "Unexpected token after expression"),
    ("SLECT * FROM \"{t}\" WHERE pk = 'a'", E + "Expected data manipulation"),
    ("SELECTT * FROMM \"{t}\"", E + "Expected data manipulation"),
    ("SELECT * FROM", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE;", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE   ", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE NOT", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE (", E + "Unexpected term"),
    ("SELECT * FROM \"{m}\" WHERE", E + "Unexpected term"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' AND", E + "Missing right-hand side expression of infix "
                                                  "operator"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' OR", E + "Missing right-hand side expression of infix "
                                                 "operator"),
    ("SELECT * FROM \"{t}\" WHERE ORDER BY pk", E + "Unexpected keyword"),
    ("SELECT * FROM \"{t}\" WHERE IS NULL", E + "Unexpected operator"),
    ("SELECT * FROM \"{t}\" WHERE pk = LIKE", E + "Unexpected operator"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' AND x IS FOO", E + "Expected type name"),
    ("DELETE FROM", E + "Expected identifier for simple path"),
    ("DELETE FROM;", E + "Expected identifier for simple path"),
    ("DELETE FROM WHERE pk = 'a'", E + "Expected identifier for simple path"),
    ("SELECT * FROM \"{t}\" WHERE m.inner = 1", E + "Invalid path dot component"),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' /* open", E),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' # comment", E),
    ("SELECT * FROM \"abc WHERE pk = 'a'", E),
    ("SELECT * FROM \"{t}\" WHERE n = 1e2147483648", E),
    ("SELECT * FROM \"{t}\" WHERE n = 1e99999999999", E),
    ("SELECT * FROM \"{t}\" WHERE n = 1.5e-2147483647", E),
    ("SELECT * FROM \"{t}\" t WHERE pk = 'a'", "Aliasing is not supported"),
    ("SELECT * FROM \"{t}\" AS t WHERE pk = 'a'", "Aliasing is not supported"),
    ("UPDATE \"{t}\" AS u SET f = '1' WHERE pk = 'a' AND sk = '9'", "Aliasing is not supported"),
    ("DELETE FROM \"{t}\" d WHERE pk = 'a' AND sk = '9'", "Aliasing is not supported"),
    ("SELECT attribute_exists(ss) FROM \"{t}\"", "Unexpected path component at 1:8:16"),
    ("SELECT COUNT(*) FROM \"{t}\"", "Unexpected path component at 1:8:5"),
    ("SELECT pk, COUNT(*) FROM \"{t}\"", "Unexpected path component at 1:12:5"),
    ("SELECT COUNT(pk) FROM \"{t}\" WHERE pk = 'a'", "Unexpected path component at 1:8:5"),
    ("SELECT COUNT(*) FROM \"{m}\"", "Unexpected path component at 1:8:5"),
    ("x IS INT4", "Unsupported operation: IsType"),
    ("x IS INT8", "Unsupported operation: IsType"),
    ("x IS DOUBLE PRECISION", "Unsupported operation: IsType"),
    ("x IS CHARACTER VARYING", "Unsupported operation: IsType"),
    ("SELECT *, pk FROM \"{t}\"", "Other attributes should not be present in the projection "
                                  "when '*' is used."),
    ("SELECT pk, f, pk FROM \"{t}\"", "Duplicate identifiers in select clause: pk"),
    ("SELECT * FROM \"{t}\", \"{t}\"", "Only select from a single table or index is supported."),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a'; SELECT * FROM \"{t}\"",
     "Only one operation is allowed in a statement."),
]


@pytest.mark.parametrize("template, message", SYNTAX_CASES, ids=[c[0] for c in SYNTAX_CASES])
def test_syntax_errors(api, pq, missing, template, message):
    fails(api, template.format(t=pq["keyed"], m=missing), message)


@pytest.mark.parametrize("template", [
    "SELECT * FROM \"{t}\" WHERE pk = 'oops",
    "SELECT * FROM \"{t}\" WHERE (pk = 'a'",
])
def test_unterminated_string_and_parenthesis(api, pq, template):
    assert_validation(execute(api, template.format(t=pq["keyed"])), message_prefix=E)


# DynamoDB's texts are not known for these; each is a ValidationException.
@pytest.mark.parametrize("template, params", [
    ("SELECT * FROM \"{t}\" WHERE f LIKE '1%'", None),
    ("SELECT * FROM \"{t}\" WHERE pk = 'a' LIMIT 1", None),
    ("SELECT * FROM \"{t}\" WHERE size = 1", None),
    ("SELECT * FROM \"{t}\" WHERE pk = -?", [S("a")]),
    ("SELECT * FROM \"{t}\" WHERE -f = 1", None),
    ("UPDATE \"{t}\" SET n = n--1 WHERE pk = 'a' AND sk = '1'", None),
])
def test_refused_without_a_known_text(api, pq, template, params):
    assert_validation(execute(api, template.format(t=pq["keyed"]), params))


def test_positions_count_lines_and_characters(api, pq):
    statement = f"SELECT *\n  FROM \"{pq['keyed']}\"\n  WHERE pk = 'é' AND foo(f) = 1"
    assert at(statement, "foo") == "3:22:3"
    fails(api, statement, "Unrecognized function: foo at 3:22:3")


# =========================================================================== literals


def where_on(pq, where):
    return f"SELECT * FROM \"{pq['data']}\" WHERE {where}"


@pytest.mark.parametrize("where, message", [
    ("n = 1e126", OVERFLOW + " under root"),
    ("n = -1e126", OVERFLOW + " under root"),
    ("n = 1e-131", UNDERFLOW + " under root"),
    ("n = " + "1" * 39, DIGITS + " under root"),
    ("l = [1, 1e126]", OVERFLOW + " under root[1]"),
    ("m = {'x': 1e126}", OVERFLOW + " under root.x"),
    ("m = {'a': [0, {'b': 1e-131}]}", UNDERFLOW + " under root.a[1].b"),
    ("ss = <<>>", "Empty bags are not supported"),
    ("ss = <<1, 'a'>>", "Unsupported data type in Bag. DynamoDB only supports either numbers or "
                        "strings in bags"),
    ("ss = <<'a', 'a'>>", INVALID + "Input collection [a, a] contains duplicates."),
    ("m = " + nested_maps(32), "Nesting Levels have exceeded supported limits under root"
                               + ".a" * 31),
    ("l = " + nested_lists(32), "Nesting Levels have exceeded supported limits under root"
                                + "[0]" * 31),
    ("m = {'a': 1, 'a': 2}", "Duplicate keys in tuple. Key: a under root"),
], ids=lambda v: v[:50] if isinstance(v, str) else None)
def test_literal_errors(api, pq, where, message):
    fails(api, where_on(pq, where), message)


@pytest.mark.parametrize("where", ["m = " + nested_maps(31), "l = " + nested_lists(31),
                                   "l[2147483647] = 1", "l[-0] = 99", "n = 9.9999999999999999999999"
                                   "999999999999999E+125", "n = 1e-130"],
                         ids=["maps-31", "lists-31", "index-max", "index-minus-zero",
                              "number-max", "number-min"])
def test_literals_at_the_limits_are_accepted(api, pq, where):
    assert run(api, where_on(pq, where))["Items"] == []


@pytest.mark.parametrize("where, token", [
    ("l = [?]", "?"),
    ("m = {'k': ?}", "?"),
    ("l = [1, {'k': ?}]", "?"),
])
def test_parameter_inside_a_literal(api, pq, where, token):
    statement = where_on(pq, where)
    path = {"l = [?]": "root[0]", "m = {'k': ?}": "root.k", "l = [1, {'k': ?}]": "root[1].k"}
    fails(api, statement, f"Unsupported data type: Parameter under key {path[where]} at "
                          f"{at(statement, token)}", [S("a")])


@pytest.mark.parametrize("projection, message", [
    ("l[-1]", "List index is not within the allowable range; index: [-1] at 1:11:1"),
    ("l[2147483648]", "List index is not within the allowable range; index: [2147483648] at "
                      "1:10:10"),
])
def test_list_index_out_of_range(api, pq, projection, message):
    fails(api, f"SELECT {projection} FROM \"{pq['data']}\"", message)


def test_list_index_out_of_range_in_where(api, pq):
    statement = where_on(pq, "l[-1] = 1")
    position = at(statement, "1]", length=1)
    fails(api, statement, f"List index is not within the allowable range; index: [-1] at "
                          f"{position}")


# =========================================================================== statement checks


@pytest.mark.parametrize("where, params, op, type_", [
    ("n < TRUE", None, "<", "BOOL"),
    ("n <= NULL", None, "<=", "NULL"),
    ("n > [1]", None, ">", "L"),
    ("n >= {'a': 1}", None, ">=", "M"),
    ("n < <<'a'>>", None, "<", "SS"),
    ("n < <<1>>", None, "<", "NS"),
    ("n < ?", [{"BS": ["AQ=="]}], "<", "BS"),
    ("n < ?", [{"BOOL": True}], "<", "BOOL"),
    ("n > ?", [NULL], ">", "NULL"),
    ("n BETWEEN TRUE AND 5", None, "BETWEEN", "BOOL"),
    ("n BETWEEN 1 AND [5]", None, "BETWEEN", "L"),
    ("(n = 1) < 2", None, "<", "BOOL"),
    ("attribute_exists(n) >= 1", None, ">=", "BOOL"),
])
def test_ordering_operand_types(api, pq, missing, where, params, op, type_):
    message = f"{OPERAND_TYPE}{op}, operand type: {type_}"
    fails(api, where_on(pq, where), message, params)
    # Checked before the table is looked up.
    fails(api, f"SELECT * FROM \"{missing}\" WHERE {where}", message, params)


@pytest.mark.parametrize("where, params, message", [
    ("attribute_exists('ss')", None,
     "Operator or function requires a document path; operator or function: attribute_exists"),
    ("attribute_exists(?)", [S("ss")],
     "Operator or function requires a document path; operator or function: attribute_exists"),
    ("attribute_exists(ss, n)", None, "Incorrect number of operands for operator or function; "
     "operator or function: attribute_exists, number of operands: 2"),
    ("attribute_type(l, 1)", None, OPERAND_TYPE + "attribute_type, operand type: N"),
    ("attribute_type(l, true)", None, OPERAND_TYPE + "attribute_type, operand type: BOOL"),
    ("attribute_type(x, 'X')", None, "Invalid attribute type name found; type: X, valid types: "
     "{N,BS,L,B,NULL,M,S,SS,NS,BOOL}"),
    ("n IN [" + ", ".join(str(i) for i in range(101)) + "]", None,
     "The IN operator is provided with too many operands; number of operands: 101"),
    ("n = MISSING", None, "MISSING must be compared using IS operator"),
    ("n IN []", None, "IN operator must have a left hand argument of type Variable Reference and "
     "right hand argument of type Seq with at least one member"),
    ("1", None, "WHERE clause must contain an expression that resolves to a boolean"),
], ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_function_and_operator_checks(api, pq, where, params, message):
    fails(api, where_on(pq, where), message, params)


@pytest.mark.parametrize("call, name", [
    ("foo(n) = 1", "foo"),
    ("FOO(n) = 1", "foo"),
    ("exists(n)", "exists"),
    ("set_add(ss, <<'a'>>) = ss", "set_add"),
    ("list_append(l, [1]) = l", "list_append"),
])
def test_unrecognized_functions(api, pq, call, name):
    statement = where_on(pq, call)
    written = call.split("(")[0]
    position = at(statement, written + "(", length=len(written))
    fails(api, statement, f"Unrecognized function: {name} at {position}")


def test_exists_only_in_transactions(api, pq):
    fails(api, f"EXISTS(SELECT * FROM \"{pq['keyed']}\" WHERE pk = 'a' AND sk = '1' AND f = '2')",
          "EXISTS can only be used in ExecuteTransaction write requests.")


@pytest.mark.parametrize("variant", ["MODIFIED OLD", "ALL NEW", "MODIFIED NEW"])
def test_delete_returning_variants(api, pq, variant):
    t = pq["keyed"]
    fails(api, f"DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = '1' RETURNING {variant} *",
          f"Invalid returning clause: RETURNING {variant} *. Only RETURNING ALL OLD * is allowed "
          "in DELETE statements.")
    assert len(run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = '1'")["Items"]) == 1


def update_a1(pq, assignment):
    return f"UPDATE \"{pq['keyed']}\" SET {assignment} WHERE pk = 'a' AND sk = '1'"


@pytest.mark.parametrize("assignment, op, type_", [
    ("n = n + 'a'", "+", "S"),
    ("n = n - NULL", "-", "NULL"),
    ("n = n + [1]", "+", "L"),
    ("n = 1 + TRUE", "+", "BOOL"),
])
def test_arithmetic_operand_types(api, pq, assignment, op, type_):
    fails(api, update_a1(pq, assignment), f"{OPERAND_TYPE}{op}, operand type: {type_}")


def test_set_functions(api, pq):
    s = update_a1(pq, "ss = set_add(tags, <<'a'>>)")
    fails(api, s, f"The first argument to SET_ADD must equal the assignment value at "
                  f"{at(s, 'set_add')}")
    s = update_a1(pq, "ss = SET_ADD(<<'b'>>, <<'a'>>)")
    fails(api, s, f"The first argument to SET_ADD must equal the assignment value at "
                  f"{at(s, 'SET_ADD')}")
    s = update_a1(pq, "ss = set_delete(tags, <<'a'>>)")
    fails(api, s, f"The first argument to SET_DELETE must equal the assignment value at "
                  f"{at(s, 'set_delete')}")
    s = update_a1(pq, "ss = set_add(ss, 'a')")
    fails(api, s, f"The second argument to SET_ADD must be a value with type SET at "
                  f"{at(s, 'ss', nth=1)}")
    s = update_a1(pq, "ss = set_delete(ss, 1)")
    fails(api, s, f"The second argument to SET_DELETE must be a value with type SET at "
                  f"{at(s, 'ss', nth=1)}")
    s = update_a1(pq, "ss = set_add(ss)")
    fails(api, s, f"SET_ADD must have exactly two arguments at {at(s, 'set_add')}")
    fails(api, update_a1(pq, "ss = set_add(ss, <<>>)"), "Empty bags are not supported")
    fails(api, update_a1(pq, "ss = set_add(ss, <<'a', 'a'>>)"),
          INVALID + "Input collection [a, a] contains duplicates.")


def test_function_and_parameter_inside_an_insert_item(api, pq):
    t = pq["keyed"]
    s = f"INSERT INTO \"{t}\" VALUE {{'pk': 'z', 'sk': '1', 'ss': set_add(ss, <<'a'>>)}}"
    fails(api, s, f"Unsupported data type: set_add under key root at {at(s, 'set_add')}")
    s = f"INSERT INTO \"{t}\" VALUE {{'pk': 'z', 'sk': '1', 'm': {{'k': ?}}}}"
    fails(api, s, f"Unsupported data type: Parameter under key root.k at {at(s, '?')}", [S("v")])
    s = update_a1(pq, "x = [?]")
    fails(api, s, f"Unsupported data type: Parameter under key root[0] at {at(s, '?')}", [S("v")])
    assert run(api, f"SELECT * FROM \"{t}\" WHERE pk = 'z'")["Items"] == []


# =========================================================================== tables and indexes


def test_missing_table(api, missing):
    assert_not_found(execute(api, f"SELECT * FROM \"{missing}\" WHERE pk = 'a'"))
    assert_not_found(execute(api, f"SELECT * FROM \"{missing}\""))


@pytest.mark.parametrize("source, message", [
    ("\"{i}\".\"nope\"", NO_INDEX),
    ("\"{i}\".\"{i}\"", NO_INDEX),
    ("\"{i}\".\"GSI\"", NO_INDEX),
    ("\"{i}\".\"gsi\".\"x\"", "A path may contain at most 2 components in the FROM clause"),
    ("\"\"", EMPTY_COMPONENT),
    ("\"{i}\".\"\"", EMPTY_COMPONENT),
    ("\"\".\"gsi\"", EMPTY_COMPONENT),
])
def test_from_clause_errors(api, pq, source, message):
    fails(api, f"SELECT * FROM {source.format(i=pq['index'])}", message)


@pytest.mark.parametrize("statement", [
    "SELECT * FROM \"{i}\".\"multi\"",
    "SELECT * FROM \"{i}\".\"multi\" WHERE ma = 'm' AND mb = 'n'",
    "SELECT * FROM \"{i}\".\"multi\" WHERE ma = 'm'",
    "SELECT pk FROM \"{i}\".\"multi\" WHERE other = 'o1'",
    "SELECT * FROM \"{i}\".\"multi\" WHERE ma = 'm' AND mb = 'n' ORDER BY ma",
    "SELECT * FROM \"{i}\".\"multi\" WHERE ma = 1",
    "SELECT COUNT(*) FROM \"{i}\".\"multi\"",
])
def test_multi_attribute_index(api, pq, statement):
    fails(api, statement.format(i=pq["index"]), MULTI)


@pytest.mark.parametrize("statement, params, message", [
    ("UPDATE \"{i}\".\"gsi\" SET f = '1' WHERE pk = 'x' AND sk = '1'", None, NOT_ON_INDEX),
    ("DELETE FROM \"{i}\".\"gsi\" WHERE pk = 'x' AND sk = '1'", None, NOT_ON_INDEX),
    ("DELETE FROM \"{i}\".\"nope\" WHERE pk = 'x' AND sk = '1'", None, NOT_ON_INDEX),
    ("FROM \"{i}\".\"lsi\" WHERE pk = 'x' AND sk = '1' SET f = '1'", None, NOT_ON_INDEX),
    ("INSERT INTO \"{i}\".\"gsi\" VALUE {{'pk': 'n', 'sk': '1'}}", None,
     "FROM clause may only contain a single table name in data manipulation statements"),
    ("INSERT INTO \"{i}\".\"nope\" VALUE {{'pk': 'n', 'sk': '1'}}", None,
     "FROM clause may only contain a single table name in data manipulation statements"),
], ids=["update", "delete", "delete-missing-index", "from-first-update", "insert",
        "insert-missing-index"])
def test_writes_never_take_an_index(api, pq, statement, params, message):
    fails(api, statement.format(i=pq["index"]), message, params)


# =========================================================================== keys and WHERE shape


def values(prefix, count):
    return ", ".join(f"'{prefix}{i:03d}'" for i in range(count))


@pytest.mark.parametrize("where, message", [
    (f"pk IN [{values('k', 51)}]", TOO_MANY_READS),
    (f"pk = 'a' AND sk IN [{values('s', 51)}]", TOO_MANY_READS),
    (f"pk IN [{values('k', 26)}] AND sk IN ['1', '2']", TOO_MANY_READS),
    (f"(pk = 'a' OR pk = 'b') AND sk IN [{values('s', 26)}]", TOO_MANY_READS),
    (f"pk IN [{values('k', 101)}]",
     "The IN operator is provided with too many operands; number of operands: 101"),
    (f"pk = 'a' AND sk IN [{values('s', 101)}]",
     "The IN operator is provided with too many operands; number of operands: 101"),
    (f"f IN [{values('f', 101)}]",
     "The IN operator is provided with too many operands; number of operands: 101"),
    ("pk IN ['a', 'a']", OVERLAP),
    ("pk = 'a' OR pk = 'a'", OVERLAP),
    ("pk = 'a' AND (sk > '0' OR sk < '5')", OVERLAP),
    ("pk = 'a' AND (sk = '1' OR f = 'two')", OVERLAP),
    ("(pk = 'a' AND f = '1') OR (pk = 'a' AND f = '2')", OVERLAP),
    ("pk = 'a' AND f = '1' OR pk = 'a' AND sk = '2'", OVERLAP),
    ("pk = 'a' AND f <> '1' OR pk = 'a' AND sk = '2'", OVERLAP),
    ("pk = 1", KEY_TYPE + "pk"),
    ("pk = 1 OR pk = 'a'", KEY_TYPE + "pk"),
    ("pk IN ['a', 1]", KEY_TYPE + "pk"),
    ("pk = 'a' AND sk IN ['1', 2]", KEY_TYPE + "sk"),
    ("pk = 'a' AND sk = 1", KEY_TYPE + "sk"),
], ids=lambda v: v[:60] if isinstance(v, str) else None)
def test_key_and_where_shape(api, pq, where, message):
    fails(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE {where}", message)


def test_key_type_through_a_parameter(api, pq):
    fails(api, f"SELECT * FROM \"{pq['keyed']}\" WHERE pk = ?", KEY_TYPE + "pk", [N(1)])
    fails(api, f"SELECT * FROM \"{pq['bkey']}\" WHERE pk = 'x'", KEY_TYPE + "pk")


def test_index_key_type(api, pq):
    fails(api, f"SELECT * FROM \"{pq['index']}\".\"gsi\" WHERE gsiPk = 1", KEY_TYPE + "gsiPk")


# =========================================================================== order of checks


def test_member_constraints_before_parameter_values(api):
    resp = api("ExecuteStatement", {"Statement": "SLECT", "Parameters": [SS()], "Limit": 0})
    assert_validation(resp, coral("0", "limit",
                                  "Member must have value greater than or equal to 1"))
    resp = api("ExecuteStatement", {"Statement": "", "Parameters": [N("abc")]})
    assert_validation(resp, coral("", "statement",
                                  "Member must have length greater than or equal to 1"))


@pytest.mark.parametrize("template", [
    "SLECT * FROM \"{t}\" WHERE pk = ?",
    "SELECT * FROM \"{t}\" WHERE pk = ? AND",
    "SELECT * FROM \"{t}\"",
    "SELECT * FROM \"{m}\" WHERE pk = ?",
    "SELECT * FROM \"{t}\" WHERE n = 1e126 AND pk = ?",
    "SELECT COUNT(*) FROM \"{t}\" WHERE pk = ?",
])
def test_parameter_values_before_the_statement(api, pq, missing, template):
    fails(api, template.format(t=pq["keyed"], m=missing), NOT_NUMERIC + ": abc", [N("abc")])


@pytest.mark.parametrize("template, params, message", [
    ("SELECT * FROM \"{m}\" WHERE", None, E + "Unexpected term"),
    ("SELECT * FROM \"{m}\" WHERE pk = 'a' foo", None, E + "Unexpected token after expression"),
    ("SELECT * FROM \"{m}\" WHERE n = 1e2147483648", None, E),
    ("SELECT * FROM \"{m}\" WHERE n = 1e126", None, OVERFLOW + " under root"),
    ("SELECT * FROM \"{m}\" WHERE ss = <<>>", None, "Empty bags are not supported"),
    ("SELECT * FROM \"{t}\" WHERE pk = ? AND", None,
     E + "Missing right-hand side expression of infix operator"),
    ("SELECT * FROM \"{m}\" t WHERE pk = 'a'", None, "Aliasing is not supported"),
])
def test_parsing_before_the_table_and_parameter_count(api, pq, missing, template, params,
                                                       message):
    fails(api, template.format(t=pq["keyed"], m=missing), message, params)


@pytest.mark.parametrize("template, message", [
    ("SELECT * FROM \"{m}\".\"\"", EMPTY_COMPONENT),
    ("SELECT * FROM \"\" WHERE pk = 'a'", EMPTY_COMPONENT),
    ("SELECT * FROM \"{m}\" WHERE n < TRUE", OPERAND_TYPE + "<, operand type: BOOL"),
    ("UPDATE \"{m}\".\"gsi\" SET f = '1' WHERE pk = 'a' AND sk = '1'", NOT_ON_INDEX),
    ("DELETE FROM \"{m}\".\"gsi\" WHERE pk = 'a' AND sk = '1'", NOT_ON_INDEX),
    ("SELECT COUNT(*) FROM \"{m}\"", "Unexpected path component at 1:8:5"),
    ("SELECT attribute_exists(ss) FROM \"{m}\"", "Unexpected path component at 1:8:16"),
    ("SELECT * FROM \"{m}\" WHERE foo(n) = 1",
     "Unrecognized function: foo at 1:{foo}:3"),
    ("EXISTS(SELECT * FROM \"{m}\" WHERE pk = 'a' AND sk = '1' AND f = '2')",
     "EXISTS can only be used in ExecuteTransaction write requests."),
    ("DELETE FROM \"{m}\" WHERE pk = 'a' AND sk = '1' RETURNING ALL NEW *",
     "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in "
     "DELETE statements."),
])
def test_statement_checks_before_the_table(api, missing, template, message):
    statement = template.format(m=missing)
    if "{foo}" in message:
        message = message.format(foo=statement.index("foo") + 1)
    fails(api, statement, message)


@pytest.mark.parametrize("template, extra", [
    ("SELECT * FROM \"{m}\".\"gsi\"", {}),
    ("SELECT * FROM \"{m}\".\"gsi\" WHERE gsiPk = 'y'", {"ConsistentRead": True}),
    ("SELECT * FROM \"{m}\" WHERE pk = 1", {}),
    ("SELECT * FROM \"{m}\" WHERE pk IN ['a', 'a']", {}),
    ("SELECT * FROM \"{m}\" WHERE pk IN [" + values("k", 51) + "]", {}),
    ("SELECT * FROM \"{m}\" ORDER BY sk", {}),
    ("SELECT * FROM \"{m}\" WHERE pk = 'a' ORDER BY Total", {}),
], ids=["index", "index-consistent", "key-type", "overlap", "too-many-reads", "order-by-no-where",
        "order-by-non-key"])
def test_missing_table_before_index_key_and_order_by_rules(api, missing, template, extra):
    assert_not_found(execute(api, template.format(m=missing), **extra))


@pytest.mark.parametrize("statement, extra, message", [
    ("SELECT * FROM \"{i}\".\"nope\"", {"ConsistentRead": True}, NO_INDEX),
    ("SELECT * FROM \"{i}\".\"nope\" WHERE gsiPk = 1", {}, NO_INDEX),
    ("SELECT * FROM \"{i}\".\"multi\" WHERE ma = 'm' AND mb = 'n'", {"ConsistentRead": True},
     "Strongly consistent read is not supported on Global Secondary Indexes"),
    ("SELECT * FROM \"{i}\".\"multi\" WHERE ma = 1 AND mb = 'n'", {}, MULTI),
    ("SELECT * FROM \"{i}\".\"multi\" WHERE pk IN ['a', 'a']", {}, MULTI),
    ("SELECT nonproj FROM \"{i}\".\"gsi\" WHERE gsiPk = 1", {}, KEY_TYPE + "gsiPk"),
    ("SELECT * FROM \"{t}\" WHERE pk = 1 ORDER BY Total", {}, KEY_TYPE + "pk"),
], ids=["index-then-consistent", "index-then-key-type", "consistent-then-multi",
        "multi-then-key-type", "multi-then-overlap", "key-type-then-projection",
        "key-type-then-order-by"])
def test_index_and_key_rules_in_order(api, pq, statement, extra, message):
    fails(api, statement.format(i=pq["index"], t=pq["keyed"]), message, **extra)
