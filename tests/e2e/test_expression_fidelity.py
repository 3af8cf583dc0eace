"""Expression checks that depend on the text and the request's values alone, so that DynamoDB
reports them before any item is read: operand types of ordering comparisons, attribute_type
and size operands, functions of the other grammar, where names start, list index range, path
depth, the expression size in its error, and list_append nesting."""

import pytest

from kumo_testlib import (
    COR_PREFIX,
    assert_error,
    assert_validation,
)

pytest.register_assert_rewrite("expression_data")

from expression_data import (
    BOOL_T,
    CCF,
    CCF_MESSAGE,
    NULL,
    N,
    S,
    new_key,
    read,
    with_maps,
)

pytest_plugins = ["expression_fixtures"]


def operand_type(kind, op, type_):
    return (f"Invalid {kind}: Incorrect operand type for operator or function; operator or "
            f"function: {op}, operand type: {type_}")


def put(api, table, item, condition, names=None, values=None):
    return api("PutItem", with_maps({"TableName": table, "Item": item,
                                     "ConditionExpression": condition}, names, values))


def update(api, table, key, expression, names=None, values=None, **extra):
    return api("UpdateItem", with_maps(dict({"TableName": table, "Key": key,
                                             "UpdateExpression": expression}, **extra),
                                       names, values))


def deep_path(levels):
    """A document path of `levels` elements, alternating map members and list indexes."""
    path = "a"
    for i in range(1, levels):
        path += ".b" if i % 2 else "[0]"
    return path


# --------------------------------------------------------------------------- ordering comparisons

UNORDERABLE = [
    ("<", "a < :x", {"L": [S("x")]}, "L"),
    ("<=", ":x <= a", {"M": {"k": N("1")}}, "M"),
    (">", "a > :x", BOOL_T, "BOOL"),
    (">=", "size(a) >= :x", NULL, "NULL"),
    ("BETWEEN", "a BETWEEN :x AND :x", {"SS": ["a", "b"]}, "SS"),
    ("BETWEEN", ":x BETWEEN a AND b", {"NS": ["1"]}, "NS"),
    ("<", "a = :n OR a < :x", {"BS": ["AQ=="]}, "BS"),
]


@pytest.mark.parametrize("op,condition,value,type_", UNORDERABLE,
                         ids=[f"{c[0]}-{c[3]}" for c in UNORDERABLE])
def test_unorderable_constant_is_a_validation_error(api, table, op, condition, value, type_):
    values = {":x": value, ":n": N("1")} if ":n" in condition else {":x": value}
    message = operand_type("ConditionExpression", op, type_)
    existing = new_key()
    api.ok("PutItem", {"TableName": table, "Item": dict(existing, a=S("v"), b=S("w"))})
    missing = new_key()
    for key in (existing, missing):
        resp = put(api, table, dict(key, c=S("new")), condition, values=values)
        assert_validation(resp, COR_PREFIX + message)
        resp = api("DeleteItem", with_maps({"TableName": table, "Key": key,
                                            "ConditionExpression": condition}, None, values))
        assert_validation(resp, COR_PREFIX + message)
    assert read(api, table, existing) == dict(existing, a=S("v"), b=S("w"))
    assert read(api, table, missing) is None
    resp = api("Scan", {"TableName": table, "FilterExpression": condition,
                        "ExpressionAttributeValues": values})
    assert_validation(resp, operand_type("FilterExpression", op, type_))


def test_unorderable_constant_in_update_and_transaction(api, table):
    key = new_key()
    values = {":x": {"L": []}, ":v": S("v")}
    resp = update(api, table, key, "SET c = :v", values=values, ConditionExpression="a < :x")
    assert_validation(resp, COR_PREFIX + operand_type("ConditionExpression", "<", "L"))
    resp = api("TransactWriteItems", {"TransactItems": [{"ConditionCheck": {
        "TableName": table, "Key": key, "ConditionExpression": "a >= :x",
        "ExpressionAttributeValues": {":x": {"M": {}}}}}]})
    assert_validation(resp, operand_type("ConditionExpression", ">=", "M"))
    resp = api("Query", {"TableName": table, "KeyConditionExpression": "pk = :p",
                         "FilterExpression": "a BETWEEN :x AND :x",
                         "ExpressionAttributeValues": {":p": key["pk"], ":x": BOOL_T}})
    assert_validation(resp, operand_type("FilterExpression", "BETWEEN", "BOOL"))
    assert read(api, table, key) is None


def test_only_unorderable_constants_are_refused(api, table):
    key = new_key()
    item = dict(key, l={"L": [N("1")]}, m={"M": {}}, t=BOOL_T)
    api.ok("PutItem", {"TableName": table, "Item": item})
    # Values from the item that cannot be ordered make the comparison false.
    for condition in ("l < :n", "m >= :n", "t BETWEEN :n AND :n", "l > m"):
        resp = put(api, table, dict(key, c=S("x")), condition,
                   values={":n": N("1")} if ":n" in condition else None)
        assert_error(resp, 400, CCF, CCF_MESSAGE)
    resp = put(api, table, dict(key, c=S("x")), "l < :l", values={":l": {"L": [N("2")]}})
    assert_validation(resp, COR_PREFIX + operand_type("ConditionExpression", "<", "L"))
    assert read(api, table, key) == item


# --------------------------------------------------------------------------- attribute_type, size


def test_attribute_type_of_a_value(api, table):
    key = new_key()
    values = {":v": {"L": []}, ":t": S("L")}
    resp = put(api, table, dict(key, a=S("1")), "attribute_type(:v, :t)", values=values)
    assert resp.status == 200, resp
    assert read(api, table, key) == dict(key, a=S("1"))
    values[":t"] = S("M")
    resp = put(api, table, dict(key, a=S("2")), "attribute_type(:v, :t)", values=values)
    assert_error(resp, 400, CCF, CCF_MESSAGE)
    assert read(api, table, key) == dict(key, a=S("1"))


def test_attribute_type_with_a_path_for_the_type(api, table):
    key = new_key()
    message = ("Operator or function requires an expression attribute value; operator or "
               "function: attribute_type")
    resp = put(api, table, dict(key, a=S("S"), b=S("S")), "attribute_type(a, b)")
    assert_validation(resp, COR_PREFIX + "Invalid ConditionExpression: " + message)
    assert read(api, table, key) is None
    # Validation never depends on data: a Query that matches no item still refuses it.
    resp = api("Query", {"TableName": table, "KeyConditionExpression": "pk = :p",
                         "FilterExpression": "attribute_type(a, b)",
                         "ExpressionAttributeValues": {":p": S("no-such-partition")}})
    assert_validation(resp, "Invalid FilterExpression: " + message)


def test_size_of_size(api, table):
    key = new_key()
    message = operand_type("ConditionExpression", "size", "N")
    for existing in (False, True):
        if existing:
            api.ok("PutItem", {"TableName": table, "Item": dict(key, a=S("abc"))})
        resp = put(api, table, dict(key, c=S("x")), "size(size(a)) = :n", values={":n": N("1")})
        assert_validation(resp, COR_PREFIX + message)
    resp = api("Scan", {"TableName": table, "FilterExpression": "size(size(a)) > :n",
                        "ExpressionAttributeValues": {":n": N("1")}})
    assert_validation(resp, operand_type("FilterExpression", "size", "N"))
    assert read(api, table, key) == dict(key, a=S("abc"))


@pytest.mark.parametrize("function,condition", [
    ("if_not_exists", "if_not_exists(a, :v) = :v"),
    ("list_append", "size(list_append(a, :v)) > :n"),
])
def test_update_functions_are_not_allowed_in_conditions(api, table, function, condition):
    values = {":v": {"L": [S("x")]}}
    if ":n" in condition:
        values[":n"] = N("0")
    detail = f"The function is not allowed in a condition expression; function: {function}"
    resp = put(api, table, new_key(), condition, values=values)
    assert_validation(resp, COR_PREFIX + "Invalid ConditionExpression: " + detail)
    resp = api("Scan", {"TableName": table, "FilterExpression": condition,
                        "ExpressionAttributeValues": values})
    assert_validation(resp, "Invalid FilterExpression: " + detail)


# --------------------------------------------------------------------------- names


def test_names_start_with_a_letter(api, table):
    key = new_key()
    for expression, near in [("SET _123 = :v", "SET _123"), ("SET _abc = :v", "SET _abc"),
                             ("SET a = _f(b)", "= _f")]:
        resp = update(api, table, key, expression, values={":v": S("x")})
        assert_validation(resp, COR_PREFIX + 'Invalid UpdateExpression: Syntax error; token: '
                                             f'"_", near: "{near}"')
    assert read(api, table, key) is None
    # Placeholders may start with '_' or a digit, and name any attribute.
    out = api.ok("UpdateItem", {
        "TableName": table, "Key": key, "UpdateExpression": "SET #_1 = :_v, #2 = :3",
        "ExpressionAttributeNames": {"#_1": "_123", "#2": "_abc"},
        "ExpressionAttributeValues": {":_v": S("x"), ":3": N("3")}, "ReturnValues": "ALL_NEW"})
    assert out["Attributes"] == dict(key, _123=S("x"), _abc=N("3"))


# --------------------------------------------------------------------------- document paths


def test_list_index_out_of_range(api, table):
    key = new_key()
    api.ok("PutItem", {"TableName": table, "Item": dict(key, a={"L": [S("x")]})})
    resp = api("GetItem", {"TableName": table, "Key": key,
                           "ProjectionExpression": "a[99999999999999]"})
    assert_validation(resp, "Invalid ProjectionExpression: List index is not within the "
                            "allowable range; index: [99999999999999]")
    resp = update(api, table, key, "SET a[2147483648] = :v", values={":v": S("y")})
    assert_validation(resp, COR_PREFIX + "Invalid UpdateExpression: List index is not within the "
                                         "allowable range; index: [2147483648]")
    out = api.ok("GetItem", {"TableName": table, "Key": key,
                             "ProjectionExpression": "a[2147483647], pk"})
    assert out["Item"] == key


def test_document_path_depth_in_every_expression_kind(api, table):
    key = new_key()
    path32, path33 = deep_path(32), deep_path(33)
    out = api.ok("GetItem", {"TableName": table, "Key": key, "ProjectionExpression": path32})
    assert "Item" not in out

    def too_deep(kind, levels=33):
        return (f"Invalid {kind}: The document path has too many nesting levels; nesting "
                f"levels: {levels}")

    resp = put(api, table, key, f"attribute_not_exists({path33})")
    assert_validation(resp, COR_PREFIX + too_deep("ConditionExpression"))
    resp = update(api, table, key, f"REMOVE {path33}")
    assert_validation(resp, COR_PREFIX + too_deep("UpdateExpression"))
    resp = api("Scan", {"TableName": table, "FilterExpression": f"{path33}.c = :v",
                        "ExpressionAttributeValues": {":v": S("x")}})
    assert_validation(resp, too_deep("FilterExpression", 34))
    resp = api("Query", {"TableName": table, "KeyConditionExpression": f"pk = :p AND {path33} = :v",
                         "ExpressionAttributeValues": {":p": key["pk"], ":v": S("x")}})
    assert_validation(resp, too_deep("KeyConditionExpression"))
    resp = api("GetItem", {"TableName": table, "Key": key, "ProjectionExpression": path33})
    assert_validation(resp, too_deep("ProjectionExpression"))
    assert read(api, table, key) is None


# --------------------------------------------------------------------------- expression size


def test_expression_size_error_reports_the_size(api, table):
    base = "attribute_not_exists(pk)"
    condition = base + " " * (4097 - len(base))
    resp = put(api, table, new_key(), condition)
    assert_validation(resp, COR_PREFIX + "Invalid ConditionExpression: Expression size has "
                                         "exceeded the maximum allowed size; expression size: 4097")
    update_text = "SET a = :v" + " " * 5000
    resp = update(api, table, new_key(), update_text, values={":v": S("x")})
    assert_validation(resp, COR_PREFIX + "Invalid UpdateExpression: Expression size has exceeded "
                                         "the maximum allowed size; expression size: 5010")
    resp = api("Scan", {"TableName": table, "ProjectionExpression": "a," * 3000 + "a"})
    assert_validation(resp, "Invalid ProjectionExpression: Expression size has exceeded the "
                            "maximum allowed size; expression size: 6001")


# --------------------------------------------------------------------------- list_append nesting


def test_list_append_inside_list_append(api, table):
    key = new_key()
    for expression in ("SET l = list_append(list_append(l, :a), :b)",
                       "SET l = list_append(:a, list_append(:b, l))"):
        resp = update(api, table, key, expression, values={":a": {"L": [N("1")]},
                                                           ":b": {"L": [N("2")]}})
        assert_validation(resp, COR_PREFIX + "Invalid UpdateExpression: The function is not "
                                             "allowed to be used this way in an expression; "
                                             "function: list_append")
    assert read(api, table, key) is None
    # if_not_exists inside list_append stays valid.
    for _ in range(2):
        api.ok("UpdateItem", {"TableName": table, "Key": key,
                              "UpdateExpression": "SET l = list_append(if_not_exists(l, :e), :a)",
                              "ExpressionAttributeValues": {":e": {"L": []},
                                                            ":a": {"L": [N("1")]}}})
    assert read(api, table, key) == dict(key, l={"L": [N("1"), N("1")]})
