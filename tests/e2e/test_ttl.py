"""Time to Live (contract §3.9 and §10.1): UpdateTimeToLive / DescribeTimeToLive with
DynamoDB's exact answers and errors, the --ttl-cooldown window, and the background reaper:
which values expire, that expired items stay readable and writable until deleted, that
writes reschedule items, that enabling and disabling TTL take effect on existing items, that
deletion removes index entries and updates the table's counts, the REMOVE stream record with
the service identity, and the schedule surviving a restart.

Reaper tests run on a private server started with `--ttl-interval 0.2` and poll with a
deadline. A "not deleted" check first waits for a control item, due at the same time or
earlier, to be deleted, then SETTLE (three more reaper passes), once per test."""

import threading
import time

import pytest

from kumo_testlib import (
    COR_PREFIX,
    Api,
    KumoServer,
    RESOURCE_NOT_FOUND,
    assert_error,
    assert_serialization,
    assert_validation,
    b64,
    client_error,
    make_client,
    unique_name,
)
from ttl_helpers import (
    DAY,
    FIVE_YEARS,
    N,
    S,
    batch_put,
    create_table,
    due_soon,
    enable_ttl,
    get,
    present,
    scan_all,
    stream_records,
    wait_until,
)

INTERVAL = 0.2     # --ttl-interval of the reaper server
SETTLE = 0.6       # three reaper passes after a control item went
DEADLINE = 5.0     # upper bound for an expired item to disappear

ALREADY_ENABLED = "TimeToLive is already enabled"
ALREADY_DISABLED = "TimeToLive is already disabled"
COOLDOWN = "Time to live has been modified multiple times within a fixed interval"
CCF = "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"
SERVICE_IDENTITY = {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}


def other_attr(current):
    return f"TimeToLive is active on a different AttributeName: current AttributeName is {current}"


def not_found_message(name):
    return f"Requested resource not found: Table: {name} not found"


def spec(enabled, attr):
    return {"Enabled": enabled, "AttributeName": attr}


def update_ttl(api, table, enabled, attr):
    return api("UpdateTimeToLive", {"TableName": table,
                                    "TimeToLiveSpecification": spec(enabled, attr)})


def describe_ttl(api, table):
    return api.ok("DescribeTimeToLive", {"TableName": table})


ENABLED = lambda attr: {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED",  # noqa: E731
                                                  "AttributeName": attr}}
DISABLED = {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}


# --------------------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def ttl_server(kumo_bin, tmp_path_factory):
    """In-memory server whose reaper runs every 0.2 s. The small item-collection limit only
    concerns tables with an LSI (test_deletion_frees_item_collection_space)."""
    srv = KumoServer(kumo_bin, str(tmp_path_factory.mktemp("kumo-ttl")),
                     extra_args=["--ttl-interval", str(INTERVAL),
                                 "--item-collection-limit", "4000"])
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _ttl_server_guard(request):
    """Fails the test during which the reaper server died, and restarts it."""
    yield
    if "ttl_server" not in request.fixturenames:
        return
    srv = request.getfixturevalue("ttl_server")
    if not srv.alive():
        status, log, tail = srv.proc.returncode, srv.log_path, srv.log_tail()
        srv.start()
        pytest.fail(f"kumo (--ttl-interval {INTERVAL}) died during this test (exit status "
                    f"{status}); log {log}:\n{tail}", pytrace=False)


@pytest.fixture
def tapi(ttl_server):
    return ttl_server.api()


@pytest.fixture
def tddb(ttl_server):
    return ttl_server.client()


@pytest.fixture
def streams(ttl_server):
    return make_client(ttl_server.endpoint, service="dynamodbstreams")


@pytest.fixture
def ttl_table(tapi, tddb):
    """ttl_table(hash_key=("pk","S"), range_key=None, ttl="exp", **CreateTable args) → name
    of a table on the reaper server with TTL enabled on `ttl` (None: disabled)."""
    created = []

    def _make(*args, **kwargs):
        name = create_table(tapi, tddb, *args, **kwargs)
        created.append(name)
        return name

    yield _make
    for name in created:
        tapi("DeleteTable", {"TableName": name})


@pytest.fixture
def slow_server(start_server):
    """A server whose reaper never gets to run during a test (first pass after an hour)."""
    return start_server(extra_args=["--ttl-interval", "3600"])


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


DESCRIBE_ERRORS = [
    ("no-table-name", {}, [_null("tableName")]),
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


# =========================================================================== the reaper


def test_expired_numbers_are_deleted_and_other_values_ignored(tapi, ttl_table):
    name = ttl_table()
    now = int(time.time())
    expiring = {
        "past": N(now - 10),
        "just-past": N(now - 1),
        "fraction": N(f"{time.time() - 2.5:.3f}"),
        "exponent": N(f"{(now - 30) / 10}E1"),
        "38-digits": N(f"{now - 5}.{'1' * 28}"),
        "almost-five-years": N(now - FIVE_YEARS + 10 * DAY),
        "soon": N(f"{due_soon():.3f}"),  # future at first, expires a little later
    }
    kept = {
        "future": N(now + 3600),
        "far-future": N("1E+38"),
        "milliseconds": N((now + 3600) * 1000),
        "over-five-years": N(now - FIVE_YEARS - 10 * DAY),
        "zero": N(0),
        "negative": N(-(now - 10)),
        "string": S(now - 10),
        "list": {"L": [N(now - 10)]},
        "map": {"M": {"exp": N(now - 10)}},
        "number-set": {"NS": [str(now - 10)]},
        "bool": {"BOOL": True},
        "null": {"NULL": True},
        "binary": {"B": b64(str(now - 10).encode())},
    }
    items = [{"pk": S(k), "exp": v, "x": S(k)} for k, v in {**expiring, **kept}.items()]
    items += [{"pk": S("missing"), "x": S("no exp")},
              {"pk": S("nested"), "meta": {"M": {"exp": N(now - 10)}}},
              {"pk": S("other-name"), "Exp": N(now - 10), "expires": N(now - 10)}]
    for it in items:
        tapi.ok("PutItem", {"TableName": name, "Item": it})

    gone = set(expiring) - {"soon"}
    wait_until(lambda: not (present(tapi, name) & gone), DEADLINE,
               what="the expired items deleted")
    wait_until(lambda: "soon" not in present(tapi, name), DEADLINE,
               what="the item whose TTL passed deleted")
    time.sleep(SETTLE)
    by_pk = {it["pk"]["S"]: it for it in scan_all(tapi, name)}
    expected = {it["pk"]["S"]: it for it in items if it["pk"]["S"] not in expiring}
    assert sorted(by_pk) == sorted(expected)
    for pk, it in expected.items():
        if pk not in ("far-future", "milliseconds", "exponent"):
            assert by_pk[pk] == it, pk


def test_future_item_lives_until_its_time(tapi, ttl_table):
    name = ttl_table()
    exp = due_soon(0.5)
    tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("a"), "exp": N(f"{exp:.3f}")}})
    deadline = exp + DEADLINE
    while get(tapi, name, {"pk": S("a")}) is not None:
        assert time.time() < deadline, "the item still there 5 s after its TTL"
        time.sleep(0.02)
    seen_gone = time.time()
    assert seen_gone >= exp, f"deleted {exp - seen_gone:.3f}s before its TTL"


def test_dotted_attribute_name_is_a_top_level_name(tapi, ttl_table):
    name = ttl_table(ttl="expires.at")
    past = N(int(time.time()) - 10)
    items = [{"pk": S("top"), "expires.at": past},
             {"pk": S("path"), "expires": {"M": {"at": past}}},
             {"pk": S("list"), "expires.at": {"L": [past]}}]
    for it in items:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    wait_until(lambda: "top" not in present(tapi, name), DEADLINE, what="'top' deleted")
    time.sleep(SETTLE)
    assert present(tapi, name) == {"path", "list"}


def test_composite_key_table(tapi, ttl_table):
    name = ttl_table(hash_key=("pk", "S"), range_key=("sk", "N"))
    past, future = N(int(time.time()) - 10), N(int(time.time()) + 3600)
    rows = [("p", 1, past), ("p", 2, future), ("p", 3, None), ("p", 4, past),
            ("q", 1, past), ("q", 2, future), ("r", 1, past)]
    for pk, sk, exp in rows:
        item = {"pk": S(pk), "sk": N(sk), "v": S(f"{pk}{sk}")}
        if exp is not None:
            item["exp"] = exp
        tapi.ok("PutItem", {"TableName": name, "Item": item})
    expected = sorted((pk, sk) for pk, sk, exp in rows if exp is not past)

    def keys():
        return sorted((it["pk"]["S"], int(it["sk"]["N"])) for it in scan_all(tapi, name))

    wait_until(lambda: keys() == expected, DEADLINE, what="the expired rows deleted")
    out = tapi.ok("Query", {"TableName": name, "KeyConditionExpression": "pk = :p",
                            "ExpressionAttributeValues": {":p": S("p")}})
    assert [int(it["sk"]["N"]) for it in out["Items"]] == [2, 3]
    assert tapi.ok("Query", {"TableName": name, "KeyConditionExpression": "pk = :p",
                             "ExpressionAttributeValues": {":p": S("r")}})["Items"] == []


def test_200_past_and_200_future_items(tapi, ttl_table):
    name = ttl_table()
    now = int(time.time())
    past = [{"pk": S(f"past-{i:03d}"), "exp": N(now - 1 - i), "pad": S("x" * 100)}
            for i in range(200)]
    future = [{"pk": S(f"future-{i:03d}"), "exp": N(now + 600 + i), "pad": S("x" * 100)}
              for i in range(200)]
    mixed = [it for pair in zip(past, future) for it in pair]
    batch_put(tapi, name, mixed)
    written = time.monotonic()
    future_keys = {it["pk"]["S"] for it in future}
    wait_until(lambda: present(tapi, name) == future_keys, 1.5, step=0.05,
               what="all 200 expired items deleted within a few reaper intervals")
    elapsed = time.monotonic() - written
    count = tapi.ok("Scan", {"TableName": name, "Select": "COUNT"})
    assert count["Count"] == 200
    assert tapi.ok("DescribeTable", {"TableName": name})["Table"]["ItemCount"] == 200
    assert elapsed < 1.5


def test_every_write_path_schedules_and_reschedules(tapi, ttl_table):
    name = ttl_table()
    now = time.time()
    soon, past, later = N(f"{due_soon(0.5):.3f}"), N(int(now) - 10), N(int(now) + 3600)

    def put(pk, **attrs):
        tapi.ok("PutItem", {"TableName": name, "Item": dict({"pk": S(pk)}, **attrs)})

    def update(pk, expr, values=None, **extra):
        body = {"TableName": name, "Key": {"pk": S(pk)}, "UpdateExpression": expr, **extra}
        if values:
            body["ExpressionAttributeValues"] = values
        tapi.ok("UpdateItem", body)

    # Items due soon, then saved by a write ("go-soon" is the control).
    for pk in ("keep-later", "keep-removed", "keep-replaced", "keep-string", "keep-transact",
               "keep-batch", "keep-legacy", "keep-recreated", "go-soon"):
        put(pk, exp=soon)
    update("keep-later", "SET exp = :t", {":t": later})
    update("keep-removed", "REMOVE exp")
    put("keep-replaced", v=S("no exp any more"))
    update("keep-string", "SET exp = :t", {":t": S(int(now) - 10)})
    tapi.ok("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": name, "Key": {"pk": S("keep-transact")},
                    "UpdateExpression": "SET exp = :t",
                    "ExpressionAttributeValues": {":t": later}}}]})
    batch_put(tapi, name, [{"pk": S("keep-batch"), "exp": later}])
    tapi.ok("UpdateItem", {"TableName": name, "Key": {"pk": S("keep-legacy")},
                           "AttributeUpdates": {"exp": {"Action": "DELETE"}}})
    tapi.ok("BatchWriteItem", {"RequestItems": {name: [
        {"DeleteRequest": {"Key": {"pk": S("keep-recreated")}}}]}})
    put("keep-recreated", v=S("new item, no exp"))

    # Items that a write makes due now.
    put("go-set", v=S("1"))
    update("go-set", "SET exp = :t", {":t": past})
    put("go-earlier", exp=later)
    update("go-earlier", "SET exp = :t", {":t": past})
    put("go-add", exp=later)
    update("go-add", "ADD exp :d", {":d": N(-7200)})
    update("go-upsert", "SET exp = :t", {":t": past})
    put("go-replace", exp=later)
    put("go-replace", exp=past)
    tapi.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": name, "Item": {"pk": S("go-transact-put"), "exp": past}}},
        {"Update": {"TableName": name, "Key": {"pk": S("go-transact-update")},
                    "UpdateExpression": "SET exp = :t",
                    "ExpressionAttributeValues": {":t": past}}}]})
    batch_put(tapi, name, [{"pk": S("go-batch"), "exp": past}])
    tapi.ok("UpdateItem", {"TableName": name, "Key": {"pk": S("go-legacy")},
                           "AttributeUpdates": {"exp": {"Action": "PUT", "Value": past}}})

    keep = {"keep-later", "keep-removed", "keep-replaced", "keep-string", "keep-transact",
            "keep-batch", "keep-legacy", "keep-recreated"}
    wait_until(lambda: present(tapi, name) == keep, DEADLINE,
               what="every due item deleted, every saved item kept")
    time.sleep(SETTLE)
    assert present(tapi, name) == keep
    assert get(tapi, name, {"pk": S("keep-later")})["exp"] == later
    assert "exp" not in get(tapi, name, {"pk": S("keep-removed")})


def test_conditional_writes_racing_the_reaper(tapi, ttl_table):
    """600 items fall due together while 16 clients save them one by one with a conditional
    update (attribute_exists(pk)) that moves the TTL an hour ahead. Every item is either
    deleted by the reaper (and the update then fails its condition) or saved by the update
    (and the reaper then leaves it alone): no update is lost, nothing half-done remains."""
    name = ttl_table()
    count, workers = 600, 16
    due = due_soon(0.5)
    batch_put(tapi, name, [{"pk": S(f"i{i:03d}"), "exp": N(f"{due:.3f}"), "v": N(0)}
                           for i in range(count)])
    later = N(int(due) + 3600)
    apis = [Api(tapi.port) for _ in range(workers)]
    results = {}

    def save(w):
        for i in range(w, count, workers):
            resp = apis[w]("UpdateItem", {
                "TableName": name, "Key": {"pk": S(f"i{i:03d}")},
                "UpdateExpression": "SET exp = :t, v = :one",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": {":t": later, ":one": N(1)}})
            results[i] = resp

    while time.time() < due - 0.1:
        time.sleep(0.005)
    threads = [threading.Thread(target=save, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    saved = set()
    for i, resp in results.items():
        if resp.status == 200:
            saved.add(f"i{i:03d}")
        else:
            assert_error(resp, 400, CCF, "The conditional request failed")
    wait_until(lambda: present(tapi, name) == saved, DEADLINE,
               what="exactly the saved items left")
    time.sleep(SETTLE)
    items = scan_all(tapi, name)
    assert {it["pk"]["S"] for it in items} == saved
    for it in items:
        assert it["exp"] == later and it["v"] == N(1), it


def test_expired_items_are_readable_and_writable_until_deleted(slow_server):
    api, client = slow_server.api(), slow_server.client()
    name = create_table(api, client, hash_key=("pk", "S"), range_key=("sk", "S"))
    past = N(int(time.time()) - 60)
    items = [{"pk": S("p"), "sk": S(f"s{i}"), "exp": past, "v": N(i)} for i in range(3)]
    for it in items:
        api.ok("PutItem", {"TableName": name, "Item": it})

    key = {"pk": S("p"), "sk": S("s0")}
    assert get(api, name, key) == items[0]
    assert api.ok("GetItem", {"TableName": name, "Key": key})["Item"] == items[0]
    q = api.ok("Query", {"TableName": name, "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")}})
    assert q["Items"] == items
    assert sorted(scan_all(api, name), key=lambda i: i["sk"]["S"]) == items
    bg = api.ok("BatchGetItem", {"RequestItems": {name: {"Keys": [key]}}})
    assert bg["Responses"][name] == [items[0]]
    tg = api.ok("TransactGetItems", {"TransactItems": [{"Get": {"TableName": name,
                                                                "Key": key}}]})
    assert tg["Responses"] == [{"Item": items[0]}]

    # Conditions see the item; updates apply to it.
    out = api.ok("UpdateItem", {"TableName": name, "Key": key, "UpdateExpression": "SET v = :v",
                                "ConditionExpression": "attribute_exists(pk) AND exp = :e",
                                "ExpressionAttributeValues": {":v": N(10), ":e": past},
                                "ReturnValues": "ALL_OLD"})
    assert out["Attributes"] == items[0]
    resp = api("PutItem", {"TableName": name, "Item": items[1],
                           "ConditionExpression": "attribute_not_exists(pk)"})
    assert_error(resp, 400, CCF, "The conditional request failed")
    assert get(api, name, key) == dict(items[0], v=N(10))
    assert describe_ttl(api, name) == ENABLED("exp")


def test_enabling_ttl_schedules_existing_items(tapi, ttl_table):
    name = ttl_table(ttl=None)
    now = int(time.time())
    past = [{"pk": S(f"past-{i:03d}"), "exp": N(now - 10 - i)} for i in range(300)]
    keep = [{"pk": S(f"future-{i}"), "exp": N(now + 3600)} for i in range(5)]
    keep += [{"pk": S("no-exp")}, {"pk": S("other"), "ttl": N(now - 10)}]
    batch_put(tapi, name, past + keep)
    keep_keys = {it["pk"]["S"] for it in keep}

    assert len(present(tapi, name)) == 307

    enable_ttl(tapi, name, "exp")
    wait_until(lambda: present(tapi, name) == keep_keys, DEADLINE,
               what="the existing expired items deleted after enabling TTL")


def test_disabling_ttl_stops_deletion(tapi, ttl_table):
    name, control = ttl_table(), ttl_table()
    now = time.time()
    soon = N(f"{due_soon():.3f}")
    for i in range(5):
        tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S(f"soon-{i}"), "exp": soon}})
    tapi.ok("PutItem", {"TableName": control, "Item": {"pk": S("ctl"), "exp": soon}})
    enable_ttl(tapi, name, "exp", enabled=False)
    assert describe_ttl(tapi, name) == DISABLED
    for i in range(5):
        tapi.ok("PutItem", {"TableName": name,
                            "Item": {"pk": S(f"past-{i}"), "exp": N(int(now) - 10)}})
    wait_until(lambda: not present(tapi, control), DEADLINE, what="the control item deleted")
    time.sleep(SETTLE)
    everything = {f"soon-{i}" for i in range(5)} | {f"past-{i}" for i in range(5)}
    assert present(tapi, name) == everything

    # Enabling again schedules them all.
    enable_ttl(tapi, name, "exp")
    wait_until(lambda: not present(tapi, name), DEADLINE,
               what="the expired items deleted after re-enabling TTL")


def test_reenabling_on_another_attribute(tapi, ttl_table):
    name = ttl_table(ttl="a")
    now = int(time.time())
    soon = N(f"{due_soon():.3f}")
    items = [{"pk": S("by-a"), "a": soon},
             {"pk": S("by-b"), "b": N(now - 10)},
             {"pk": S("both"), "a": soon, "b": N(now + 3600)},
             {"pk": S("control"), "a": soon, "b": soon}]
    for it in items:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    enable_ttl(tapi, name, "a", enabled=False)
    enable_ttl(tapi, name, "b")
    assert describe_ttl(tapi, name) == ENABLED("b")
    wait_until(lambda: not present(tapi, name) & {"by-b", "control"}, DEADLINE,
               what="'by-b' and 'control' deleted")
    time.sleep(SETTLE)
    assert present(tapi, name) == {"by-a", "both"}


def test_recreated_table_ignores_the_old_schedule(tapi, tddb, ttl_table):
    """Two tables with TTL on, items due soon; both are deleted and created again under the
    same names, one with TTL enabled, one without. The old schedule deletes nothing."""
    with_ttl, without_ttl, control = ttl_table(), ttl_table(), ttl_table()
    soon = N(f"{due_soon():.3f}")
    tapi.ok("PutItem", {"TableName": control, "Item": {"pk": S("ctl"), "exp": soon}})
    for name in (with_ttl, without_ttl):
        for pk in ("a", "b"):
            tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S(pk), "exp": soon}})
        tapi.ok("DeleteTable", {"TableName": name})
    create_table(tapi, tddb, name=with_ttl, ttl="exp")
    create_table(tapi, tddb, name=without_ttl, ttl=None)
    assert describe_ttl(tapi, without_ttl) == DISABLED
    later, past = N(int(time.time()) + 3600), N(int(time.time()) - 10)
    # With TTL: the old entries for a and b must not delete the new b.
    tapi.ok("PutItem", {"TableName": with_ttl, "Item": {"pk": S("b"), "exp": later}})
    tapi.ok("PutItem", {"TableName": with_ttl, "Item": {"pk": S("c")}})
    # Without TTL: nothing expires, whatever the old table's schedule said.
    tapi.ok("PutItem", {"TableName": without_ttl, "Item": {"pk": S("a"), "exp": soon}})
    tapi.ok("PutItem", {"TableName": without_ttl, "Item": {"pk": S("old"), "exp": past}})
    wait_until(lambda: not present(tapi, control), DEADLINE, what="the control item deleted")
    time.sleep(SETTLE)
    assert present(tapi, with_ttl) == {"b", "c"}
    assert present(tapi, without_ttl) == {"a", "old"}


def _index_stats(api, name):
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    stats = {"table": (t["ItemCount"], t["TableSizeBytes"])}
    for idx in t.get("LocalSecondaryIndexes", []) + t.get("GlobalSecondaryIndexes", []):
        stats[idx["IndexName"]] = (idx["ItemCount"], idx["IndexSizeBytes"])
    return stats


def test_deletion_removes_index_entries_and_updates_counts(tapi, ttl_table):
    keys = lambda *el: [{"AttributeName": a, "KeyType": t} for a, t in el]  # noqa: E731
    name = ttl_table(
        hash_key=("pk", "S"), range_key=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "lsk", "g")]
        + [{"AttributeName": "exp", "AttributeType": "N"}],
        LocalSecondaryIndexes=[{"IndexName": "byLsk", "KeySchema": keys(("pk", "HASH"),
                                                                        ("lsk", "RANGE")),
                                "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[
            {"IndexName": "byG", "KeySchema": keys(("g", "HASH")),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "byGKeys", "KeySchema": keys(("g", "HASH"), ("sk", "RANGE")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}},
            # The TTL attribute itself as an index key.
            {"IndexName": "byExp", "KeySchema": keys(("exp", "HASH")),
             "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    now = int(time.time())
    permanent = [{"pk": S("p"), "sk": S(f"keep{i}"), "lsk": S(f"l{i}"), "g": S("G"),
                  "exp": N(now + 3600)} for i in range(3)]
    for it in permanent:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    baseline = _index_stats(tapi, name)
    assert baseline["table"][0] == 3 and baseline["byG"][0] == 3

    expiring = [{"pk": S("p"), "sk": S(f"go{i}"), "lsk": S(f"m{i}"), "g": S("G"),
                 "exp": N(now - 10 - i), "pad": S("x" * 50)} for i in range(4)]
    for it in expiring:
        tapi.ok("PutItem", {"TableName": name, "Item": it})
    wait_until(lambda: len(scan_all(tapi, name)) == 3, DEADLINE,
               what="the expired items deleted")

    want = sorted(it["sk"]["S"] for it in permanent)
    gsi = tapi.ok("Query", {"TableName": name, "IndexName": "byG",
                            "KeyConditionExpression": "g = :g",
                            "ExpressionAttributeValues": {":g": S("G")}})["Items"]
    assert sorted(it["sk"]["S"] for it in gsi) == want
    gsi_keys = tapi.ok("Query", {"TableName": name, "IndexName": "byGKeys",
                                 "KeyConditionExpression": "g = :g",
                                 "ExpressionAttributeValues": {":g": S("G")}})["Items"]
    assert [it["sk"]["S"] for it in gsi_keys] == want
    lsi = tapi.ok("Query", {"TableName": name, "IndexName": "byLsk",
                            "KeyConditionExpression": "pk = :p",
                            "ExpressionAttributeValues": {":p": S("p")},
                            "ConsistentRead": True})["Items"]
    assert sorted(it["sk"]["S"] for it in lsi) == want
    by_exp = tapi.ok("Query", {"TableName": name, "IndexName": "byExp",
                               "KeyConditionExpression": "exp = :e",
                               "ExpressionAttributeValues": {":e": N(now - 10)}})["Items"]
    assert by_exp == []
    for index in ("byG", "byGKeys", "byLsk", "byExp"):
        assert sorted(it["sk"]["S"] for it in scan_all(tapi, name, index)) == want, index
    assert _index_stats(tapi, name) == baseline


def test_deletion_frees_item_collection_space(tapi, ttl_table, tddb):
    """The reaper server has --item-collection-limit 4000: four items of ~1 KB fill a
    collection; once they expire the collection has room again."""
    name = ttl_table(
        hash_key=("pk", "S"), range_key=("sk", "S"),
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                              for a in ("pk", "sk", "alt")],
        LocalSecondaryIndexes=[{"IndexName": "byAlt",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "alt", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    soon = N(f"{due_soon():.3f}")

    def put(sk, exp=None):
        item = {"pk": S("p"), "sk": S(sk), "alt": S(sk), "pad": S("x" * 1000)}
        if exp is not None:
            item["exp"] = exp
        return tapi("PutItem", {"TableName": name, "Item": item})

    written = 0
    for i in range(10):
        resp = put(f"old{i}", soon)
        if resp.status != 200:
            assert_error(resp, 400, "com.amazonaws.dynamodb.v20120810#"
                                    "ItemCollectionSizeLimitExceededException",
                         "Collection size exceeded.")
            break
        written += 1
    assert 1 <= written < 10
    wait_until(lambda: not scan_all(tapi, name), DEADLINE, what="the collection emptied")
    for i in range(written):
        resp = put(f"new{i}")
        assert resp.status == 200, resp


VIEW_TYPES = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]


def test_stream_records_of_ttl_deletions(tapi, ttl_table, streams):
    """Per view type: a user put and delete, a live item, then 10 items that expire. The
    stream holds exactly one REMOVE per expired item, with the service identity, and the
    user's REMOVE has no userIdentity."""
    tables = {}
    now = int(time.time())
    for view in VIEW_TYPES:
        name = ttl_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
        tables[view] = name
        tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("user"), "v": S("u")}})
        tapi.ok("DeleteItem", {"TableName": name, "Key": {"pk": S("user")}})
        tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("live"), "exp": N(now + 3600)}})
        for i in range(10):
            tapi.ok("PutItem", {"TableName": name,
                                "Item": {"pk": S(f"t{i}"), "exp": N(now - 10), "v": N(i)}})
    for name in tables.values():
        wait_until(lambda: present(tapi, name) == {"live"}, DEADLINE,
                   what=f"the expired items of {name} deleted")
    time.sleep(0.6)  # further reaper passes must not add records

    for view, name in tables.items():
        arn = tapi.ok("DescribeTable", {"TableName": name})["Table"]["LatestStreamArn"]
        records = stream_records(streams, arn)
        events = [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records]
        assert events[:3] == [("INSERT", "user"), ("REMOVE", "user"), ("INSERT", "live")], view
        # The reaper may delete t0 before t9 is written: only the pairs are ordered.
        rest = events[3:]
        assert sorted(rest) == sorted([(e, f"t{i}") for i in range(10)
                                       for e in ("INSERT", "REMOVE")]), (view, events)
        assert [k for e, k in rest if e == "INSERT"] == [f"t{i}" for i in range(10)], view
        for i in range(10):
            assert rest.index(("INSERT", f"t{i}")) < rest.index(("REMOVE", f"t{i}")), view
        ttl_removes = [r for r in records[3:] if r["eventName"] == "REMOVE"]
        for r in records:
            if r not in ttl_removes:
                assert "userIdentity" not in r, (view, r)
        for r in ttl_removes:
            assert r["userIdentity"] == SERVICE_IDENTITY, (view, r)
            d = r["dynamodb"]
            assert d["StreamViewType"] == view
            assert d["Keys"] == {"pk": {"S": d["Keys"]["pk"]["S"]}}
            assert "NewImage" not in d, (view, r)
            i = int(d["Keys"]["pk"]["S"][1:])
            if view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
                assert d["OldImage"] == {"pk": {"S": f"t{i}"}, "exp": {"N": str(now - 10)},
                                         "v": {"N": str(i)}}, (view, r)
            else:
                assert "OldImage" not in d, (view, r)


def test_ttl_deletion_without_stream_and_with_disabled_stream(tapi, ttl_table):
    name = ttl_table(StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    tapi.ok("UpdateTable", {"TableName": name, "StreamSpecification": {"StreamEnabled": False}})
    past = N(int(time.time()) - 10)
    tapi.ok("PutItem", {"TableName": name, "Item": {"pk": S("a"), "exp": past}})
    wait_until(lambda: not present(tapi, name), DEADLINE, what="the expired item deleted")


# =========================================================================== restart


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_schedule_survives_restart(start_server, tmp_path, stop):
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data), extra_args=["--ttl-interval", "3600"])
    api, client = srv.api(), srv.client()
    written = create_table(api, client, hash_key=("pk", "S"), range_key=("sk", "N"))
    now = time.time()
    due = due_soon(1.5)
    soon = N(f"{due:.3f}")
    items = [{"pk": S("p"), "sk": N(i), "exp": N(int(now) - 10 - i)} for i in range(20)]
    items += [{"pk": S("p"), "sk": N(100), "exp": soon},
              {"pk": S("p"), "sk": N(101)},
              {"pk": S("p"), "sk": N(102), "exp": soon},
              {"pk": S("q"), "sk": N(1), "exp": N(int(now) + 3600)}]
    batch_put(api, written, items)
    # Rescheduled before the stop: its old entry must not delete it after the restart.
    api.ok("UpdateItem", {"TableName": written, "Key": {"pk": S("p"), "sk": N(102)},
                          "UpdateExpression": "SET exp = :t",
                          "ExpressionAttributeValues": {":t": N(int(now) + 3600)}})
    # A table whose TTL is enabled on existing items right before the stop.
    enabled_late = create_table(api, client, ttl=None)
    batch_put(api, enabled_late, [{"pk": S(f"x{i}"), "exp": N(int(now) - 10)}
                                  for i in range(300)] + [{"pk": S("stay")}])
    enable_ttl(api, enabled_late, "exp")
    # A table whose TTL was enabled, then disabled before the stop: nothing expires.
    disabled = create_table(api, client)
    batch_put(api, disabled, [{"pk": S(f"d{i}"), "exp": N(int(now) - 10)} for i in range(5)])
    enable_ttl(api, disabled, "exp", enabled=False)
    if stop == "sigterm":
        assert srv.terminate() == 0, srv.log_tail()
    else:
        srv.kill()

    srv.extra_args = ["--ttl-interval", str(INTERVAL)]
    srv.start()
    api = srv.api()
    assert describe_ttl(api, written) == ENABLED("exp")
    assert describe_ttl(api, enabled_late) == ENABLED("exp")
    assert describe_ttl(api, disabled) == DISABLED

    def keys():
        return {(it["pk"]["S"], int(it["sk"]["N"])) for it in scan_all(api, written)}

    assert time.time() < due, "restart too slow to check the item due soon"
    assert ("p", 100) in keys(), "the item due soon deleted too early"
    wait_until(lambda: keys() == {("p", 100), ("p", 101), ("p", 102), ("q", 1)}, DEADLINE,
               what="the expired items written before the restart deleted")
    wait_until(lambda: present(api, enabled_late) == {"stay"}, DEADLINE,
               what="the items scheduled by enabling TTL before the restart deleted")
    wait_until(lambda: keys() == {("p", 101), ("p", 102), ("q", 1)}, DEADLINE,
               what="the item due soon after the write deleted")
    time.sleep(SETTLE)
    assert keys() == {("p", 101), ("p", 102), ("q", 1)}
    assert present(api, disabled) == {f"d{i}" for i in range(5)}
