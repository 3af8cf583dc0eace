"""Time to Live settings: UpdateTimeToLive / DescribeTimeToLive with
DynamoDB's exact answers and errors (already enabled or disabled, another attribute, missing
tables, Coral model constraints, wrong JSON types) and the --ttl-cooldown window. The reaper
itself is tested in test_ttl_reaper.py and test_ttl_deletion.py."""

import time

import pytest

from kumo_testlib import (
    COR_PREFIX,
    RESOURCE_NOT_FOUND,
    assert_error,
    assert_serialization,
    assert_validation,
    client_error,
    unique_name,
)
from ttl_helpers import (
    DISABLED,
    ENABLED,
    create_table,
    describe_ttl,
    spec,
    wait_until,
)

ALREADY_ENABLED = "TimeToLive is already enabled"
ALREADY_DISABLED = "TimeToLive is already disabled"
COOLDOWN = "Time to live has been modified multiple times within a fixed interval"


def other_attr(current):
    return f"TimeToLive is active on a different AttributeName: current AttributeName is {current}"


def not_found_message(name):
    return f"Requested resource not found: Table: {name} not found"


def update_ttl(api, table, enabled, attr):
    return api("UpdateTimeToLive", {"TableName": table,
                                    "TimeToLiveSpecification": spec(enabled, attr)})


# =========================================================================== configuration


def test_new_table_is_disabled(api, make_table, ddb):
    name = make_table()
    resp = api("DescribeTimeToLive", {"TableName": name})
    assert resp.status == 200, resp
    assert resp.json == DISABLED
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == \
        {"TimeToLiveStatus": "DISABLED"}


def test_enable_returns_specification_and_describe_shows_it(api, make_table):
    name = make_table()
    resp = update_ttl(api, name, True, "expiresAt")
    assert resp.status == 200, resp
    assert resp.json == {"TimeToLiveSpecification": {"Enabled": True,
                                                     "AttributeName": "expiresAt"}}
    assert describe_ttl(api, name) == ENABLED("expiresAt")


def test_disable_returns_specification_and_describe_shows_disabled(api, make_table):
    name = make_table()
    assert update_ttl(api, name, True, "exp").status == 200
    resp = update_ttl(api, name, False, "exp")
    assert resp.status == 200, resp
    assert resp.json == {"TimeToLiveSpecification": {"Enabled": False, "AttributeName": "exp"}}
    assert describe_ttl(api, name) == DISABLED


def test_boto3_round_trip(ddb, make_table):
    name = make_table()
    out = ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True, "ttl"))
    assert out["TimeToLiveSpecification"] == spec(True, "ttl")
    assert ddb.describe_time_to_live(TableName=name)["TimeToLiveDescription"] == \
        {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True, "ttl"))
    client_error(excinfo, "ValidationException", ALREADY_ENABLED)
    out = ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(False, "ttl"))
    assert out["TimeToLiveSpecification"] == spec(False, "ttl")
    with pytest.raises(ddb.exceptions.ClientError) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(False, "ttl"))
    client_error(excinfo, "ValidationException", ALREADY_DISABLED)


def test_enable_twice_is_already_enabled(api, make_table):
    name = make_table()
    assert update_ttl(api, name, True, "exp").status == 200
    assert_validation(update_ttl(api, name, True, "exp"), ALREADY_ENABLED)
    assert describe_ttl(api, name) == ENABLED("exp")


@pytest.mark.parametrize("attr", ["exp", "other"])
def test_disable_when_disabled_is_already_disabled(api, make_table, attr):
    name = make_table()
    assert_validation(update_ttl(api, name, False, attr), ALREADY_DISABLED)
    assert update_ttl(api, name, True, "exp").status == 200
    assert update_ttl(api, name, False, "exp").status == 200
    assert_validation(update_ttl(api, name, False, attr), ALREADY_DISABLED)
    assert describe_ttl(api, name) == DISABLED


def test_changing_the_attribute_needs_disable_then_enable(api, make_table):
    name = make_table()
    assert update_ttl(api, name, True, "a").status == 200
    assert_validation(update_ttl(api, name, True, "b"), other_attr("a"))
    assert_validation(update_ttl(api, name, False, "b"), other_attr("a"))
    assert describe_ttl(api, name) == ENABLED("a")
    assert update_ttl(api, name, False, "a").status == 200
    resp = update_ttl(api, name, True, "b")
    assert resp.status == 200, resp
    assert resp.json == {"TimeToLiveSpecification": spec(True, "b")}
    assert describe_ttl(api, name) == ENABLED("b")
    assert_validation(update_ttl(api, name, True, "a"), other_attr("b"))


@pytest.mark.parametrize("attr", ["x", "a" * 255, "expires.at", "#ttl :v", "ablaufzeit-é✓",
                                  "pk"])
def test_attribute_names_accepted_verbatim(api, make_table, attr):
    name = make_table()
    resp = update_ttl(api, name, True, attr)
    assert resp.status == 200, resp
    assert resp.json == {"TimeToLiveSpecification": spec(True, attr)}
    assert describe_ttl(api, name) == ENABLED(attr)


def test_recreated_table_starts_disabled(api, ddb, make_table):
    name = make_table()
    assert update_ttl(api, name, True, "exp").status == 200
    api.ok("DeleteTable", {"TableName": name})
    make_table(name=name)
    assert describe_ttl(api, name) == DISABLED


@pytest.mark.parametrize("op", ["UpdateTimeToLive", "DescribeTimeToLive"])
def test_missing_table(api, op):
    name = unique_name("missing")
    body = {"TableName": name}
    if op == "UpdateTimeToLive":
        body["TimeToLiveSpecification"] = spec(True, "exp")
    assert_error(api(op, body), 400, RESOURCE_NOT_FOUND, not_found_message(name))


def test_missing_table_boto3(ddb):
    name = unique_name("missing")
    with pytest.raises(ddb.exceptions.ResourceNotFoundException) as excinfo:
        ddb.describe_time_to_live(TableName=name)
    client_error(excinfo, "ResourceNotFoundException", not_found_message(name))
    with pytest.raises(ddb.exceptions.ResourceNotFoundException) as excinfo:
        ddb.update_time_to_live(TableName=name, TimeToLiveSpecification=spec(True, "e"))
    client_error(excinfo, "ResourceNotFoundException", not_found_message(name))


def _null(path):
    return f"Value null at '{path}' failed to satisfy constraint: Member must not be null"


def _constraint(value, path, constraint):
    return f"Value '{value}' at '{path}' failed to satisfy constraint: {constraint}"


LONG_ATTR = "a" * 256
PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
MODEL_ERRORS = [
    ("no-spec", {}, [_null("timeToLiveSpecification")]),
    ("null-spec", {"TimeToLiveSpecification": None}, [_null("timeToLiveSpecification")]),
    ("no-enabled", {"TimeToLiveSpecification": {"AttributeName": "exp"}},
     [_null("timeToLiveSpecification.enabled")]),
    ("no-attribute", {"TimeToLiveSpecification": {"Enabled": True}},
     [_null("timeToLiveSpecification.attributeName")]),
    ("empty-spec", {"TimeToLiveSpecification": {}},
     [_null("timeToLiveSpecification.enabled"),
      _null("timeToLiveSpecification.attributeName")]),
    ("attribute-256", {"TimeToLiveSpecification": spec(True, LONG_ATTR)},
     [_constraint(LONG_ATTR, "timeToLiveSpecification.attributeName",
                  "Member must have length less than or equal to 255")]),
    ("attribute-empty", {"TimeToLiveSpecification": spec(True, "")},
     [_constraint("", "timeToLiveSpecification.attributeName",
                  "Member must have length greater than or equal to 1")]),
    ("no-table-name", {"TableName": None, "TimeToLiveSpecification": spec(True, "exp")},
     [_null("tableName")]),
    ("short-table-name", {"TableName": "ab", "TimeToLiveSpecification": spec(True, "exp")},
     [_constraint("ab", "tableName", "Member must have length greater than or equal to 3")]),
    ("long-table-name", {"TableName": "t" * 256, "TimeToLiveSpecification": spec(True, "exp")},
     [_constraint("t" * 256, "tableName", "Member must have length less than or equal to 255")]),
    ("table-name-pattern", {"TableName": "bad name",
                            "TimeToLiveSpecification": spec(True, "exp")},
     [_constraint("bad name", "tableName", PATTERN)]),
    ("table-name-two-violations", {"TableName": "a!",
                                   "TimeToLiveSpecification": spec(True, "exp")},
     [_constraint("a!", "tableName", PATTERN),
      _constraint("a!", "tableName", "Member must have length greater than or equal to 3")]),
    ("name-and-spec", {"TableName": "ab", "TimeToLiveSpecification": {"Enabled": True}},
     [_constraint("ab", "tableName", "Member must have length greater than or equal to 3"),
      _null("timeToLiveSpecification.attributeName")]),
]


def _coral_errors(resp, expected):
    count = len(expected)
    prefix = f"{count} validation error{'s' if count > 1 else ''} detected: "
    assert_validation(resp, message_prefix=prefix)
    assert sorted(resp.message[len(prefix):].split("; ")) == sorted(expected), resp.message


@pytest.mark.parametrize("case,body,expected", MODEL_ERRORS, ids=[c[0] for c in MODEL_ERRORS])
def test_update_model_validation(api, make_table, case, body, expected):
    """Coral model errors are raised before the table is looked up: the table named here
    exists for some cases and not for others, and the answer is the same."""
    for table in (make_table(), unique_name("absent")):
        req = {"TableName": table}
        req.update(body)
        req = {k: v for k, v in req.items() if v is not None}
        _coral_errors(api("UpdateTimeToLive", req), expected)


def test_update_single_error_exact_body(api, make_table):
    name = make_table()
    resp = api("UpdateTimeToLive", {"TableName": name})
    assert_validation(resp, COR_PREFIX + _null("timeToLiveSpecification"))


# A missing TableName has a wording of its own (test_validation_fidelity.py).
DESCRIBE_ERRORS = [
    ("short-table-name", {"TableName": "ab"},
     [_constraint("ab", "tableName", "Member must have length greater than or equal to 3")]),
    ("long-table-name", {"TableName": "t" * 256},
     [_constraint("t" * 256, "tableName", "Member must have length less than or equal to 255")]),
    ("table-name-pattern", {"TableName": "tab/le"}, [_constraint("tab/le", "tableName", PATTERN)]),
]


@pytest.mark.parametrize("case,body,expected", DESCRIBE_ERRORS,
                         ids=[c[0] for c in DESCRIBE_ERRORS])
def test_describe_model_validation(api, case, body, expected):
    _coral_errors(api("DescribeTimeToLive", body), expected)


START_STRUCT = "Start of structure or map found where not expected"
START_LIST = "Start of list found where not expected"

SERIALIZATION_CASES = [
    ("UpdateTimeToLive", {"TimeToLiveSpecification": "x"}, "Unexpected field type"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": 5}, "Unexpected field type"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": []}, START_LIST),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": "maybe", "AttributeName": "e"}},
     "Unexpected token received from parser"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": {}, "AttributeName": "e"}},
     START_STRUCT),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": True, "AttributeName": 5}},
     "NUMBER_VALUE cannot be converted to String"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": True, "AttributeName": True}},
     "TRUE_VALUE cannot be converted to String"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": True, "AttributeName": ["e"]}},
     "Unrecognized collection type class java.lang.String"),
    ("UpdateTimeToLive", {"TimeToLiveSpecification": {"Enabled": True,
                                                      "AttributeName": {"a": "b"}}},
     START_STRUCT),
    ("UpdateTimeToLive", {"TableName": 5, "TimeToLiveSpecification": spec(True, "e")},
     "NUMBER_VALUE cannot be converted to String"),
    ("DescribeTimeToLive", {"TableName": 5.5}, "DECIMAL_VALUE cannot be converted to String"),
    ("DescribeTimeToLive", {"TableName": False}, "FALSE_VALUE cannot be converted to String"),
    ("DescribeTimeToLive", {"TableName": {"a": "b"}}, START_STRUCT),
]


@pytest.mark.parametrize("op,body,message", SERIALIZATION_CASES,
                         ids=[f"{op}-{i}" for i, op in enumerate(
                             c.values[0] if hasattr(c, "values") else c[0]
                             for c in SERIALIZATION_CASES)])
def test_wrong_json_types_are_serialization_errors(api, make_table, op, body, message):
    req = {"TableName": make_table()}
    req.update(body)
    assert_serialization(api(op, req), message)


def test_boolean_strings_are_coerced_for_enabled(api, make_table):
    name = make_table()
    resp = api("UpdateTimeToLive", {"TableName": name,
                                    "TimeToLiveSpecification": {"Enabled": "true",
                                                                "AttributeName": "exp"}})
    assert resp.status == 200, resp
    assert resp.json == {"TimeToLiveSpecification": spec(True, "exp")}
    assert describe_ttl(api, name) == ENABLED("exp")


def test_ttl_change_does_not_touch_the_table_description(api, make_table):
    name = make_table()
    before = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert update_ttl(api, name, True, "exp").status == 200
    after = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert after == before


# --------------------------------------------------------------------------- cool-down


def test_cooldown_rejects_a_second_change_within_the_window(start_server):
    srv = start_server(extra_args=["--ttl-cooldown", "1"])
    api, client = srv.api(), srv.client()
    a = create_table(api, client, ttl=None)
    b = create_table(api, client, ttl=None)

    assert update_ttl(api, a, True, "exp").status == 200
    changed = time.monotonic()
    assert_validation(update_ttl(api, a, False, "exp"), COOLDOWN)
    assert describe_ttl(api, a) == ENABLED("exp")
    # The window is per table: b has never been changed.
    assert update_ttl(api, b, True, "exp").status == 200
    assert describe_ttl(api, b) == ENABLED("exp")

    def try_disable():
        resp = update_ttl(api, a, False, "exp")
        if resp.status == 200:
            return resp
        assert_validation(resp, COOLDOWN)
        return None

    resp = wait_until(try_disable, timeout=5.0, step=0.1, what="disable after the cool-down")
    elapsed = time.monotonic() - changed
    assert elapsed >= 0.9, f"second change accepted {elapsed:.2f}s after the first"
    assert resp.json == {"TimeToLiveSpecification": spec(False, "exp")}
    assert describe_ttl(api, a) == DISABLED
    # The accepted disable opened a new window.
    assert_validation(update_ttl(api, a, True, "exp"), COOLDOWN)


def test_no_cooldown_by_default(api, make_table):
    name = make_table()
    for attr in ("a", "b", "c"):
        assert update_ttl(api, name, True, attr).status == 200
        assert update_ttl(api, name, False, attr).status == 200
    assert describe_ttl(api, name) == DISABLED


