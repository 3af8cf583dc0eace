"""The Time to Live reaper: which values expire and which are ignored,
that expired items stay readable and writable until deleted, that every write path schedules
and reschedules items (also racing the reaper with conditional updates), that enabling,
disabling and re-enabling TTL take effect on existing items, that a re-created table ignores
the old schedule, the schedule surviving a restart (SIGTERM and SIGKILL), and the reaper's
thread, which a server starts only once a table has TTL or a stream. What a TTL
deletion does besides removing the item is in test_ttl_deletion.py.

Reaper tests run on a private server started with `--ttl-interval 0.2` (ttl_helpers.py) and
poll with a deadline. A "not deleted" check first waits for a control item, due at the same
time or earlier, to be deleted, then SETTLE (three more reaper passes), once per test."""

import os
import threading
import time

import pytest

from kumo_testlib import Api, assert_error, b64, on_rados
from ttl_helpers import (  # noqa: F401
    DAY,
    DEADLINE,
    DISABLED,
    ENABLED,
    FIVE_YEARS,
    INTERVAL,
    SETTLE,
    N,
    S,
    _ttl_server_guard,
    batch_put,
    create_table,
    describe_ttl,
    due_soon,
    enable_ttl,
    get,
    present,
    scan_all,
    tapi,
    tddb,
    ttl_server,
    ttl_table,
    wait_until,
)

CCF = "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"


@pytest.fixture
def slow_server(start_server):
    """A server whose reaper never gets to run during a test (first pass after an hour)."""
    return start_server(extra_args=["--ttl-interval", "3600"])


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


# =========================================================================== restart


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_schedule_survives_restart(start_server, tmp_path, stop):
    # Both runs on the manual clock from the same start: the item due soon is due only when
    # the test moves the clock, however long the restart takes.
    now = int(time.time())
    clock = ["--clock", "manual", "--clock-start", str(now)]
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data), extra_args=["--ttl-interval", "3600"] + clock,
                       start=False)
    srv.requested_admin_port = 0
    srv.start()
    api, client = srv.api(), srv.client()
    written = create_table(api, client, hash_key=("pk", "S"), range_key=("sk", "N"))
    soon = N(now + 100)
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

    srv.extra_args = ["--ttl-interval", str(INTERVAL)] + clock
    srv.start()
    api = srv.api()
    assert describe_ttl(api, written) == ENABLED("exp")
    assert describe_ttl(api, enabled_late) == ENABLED("exp")
    assert describe_ttl(api, disabled) == DISABLED

    def keys():
        return {(it["pk"]["S"], int(it["sk"]["N"])) for it in scan_all(api, written)}

    wait_until(lambda: keys() == {("p", 100), ("p", 101), ("p", 102), ("q", 1)}, DEADLINE,
               what="the expired items written before the restart deleted")
    wait_until(lambda: present(api, enabled_late) == {"stay"}, DEADLINE,
               what="the items scheduled by enabling TTL before the restart deleted")
    time.sleep(SETTLE)
    assert ("p", 100) in keys(), "the item due soon deleted too early"
    srv.admin.advance(101)
    wait_until(lambda: keys() == {("p", 101), ("p", 102), ("q", 1)}, DEADLINE,
               what="the item due soon deleted once due")
    time.sleep(SETTLE)
    assert keys() == {("p", 101), ("p", 102), ("q", 1)}
    assert present(api, disabled) == {f"d{i}" for i in range(5)}


# =========================================================================== the thread


RADOS_THREADS = {"kumo-watch", "kumo-lease", "kumo-takeover", "kumo-tick"}


def thread_names(server):
    tasks = f"/proc/{server.proc.pid}/task"
    names = []
    for tid in os.listdir(tasks):
        try:
            with open(f"{tasks}/{tid}/comm") as f:
                name = f.read().strip()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        # librados runs threads of its own (msgr-worker-0, ceph_timer, ...); Kumo's threads,
        # and any unnamed one it starts, are named kumo*. The RADOS back end's own (the
        # catalog watch, the lease, its takeovers and its ticks) run whatever the tables.
        if on_rados() and name in RADOS_THREADS:
            continue
        if not on_rados() or name.startswith("kumo"):
            names.append(name)
    return sorted(names)


@pytest.mark.parametrize("via", ["ttl", "stream"])
def test_the_maintenance_thread_starts_with_the_first_table_that_needs_it(start_server, via):
    # Capacity off: its per-second thread (kumo-capacity) is not what this test is about.
    srv = start_server(extra_args=["--threads", "1", "--ttl-interval", "0.2", "--capacity", "off"])
    api, client = srv.api(), srv.client()
    # Nothing to reap or trim: the server runs one thread, the main one serving.
    plain = create_table(api, client, ttl=None)
    # On shared storage (RADOS) the maintenance thread runs from the start whatever the
    # tables: it sweeps the shared ClientRequestTokens, finishes what front ends that
    # died left (backfills, drops) and splits stream shards of partition splits.
    assert thread_names(srv) == (["kumo", "kumo-maintain"] if on_rados() else ["kumo"])
    if via == "ttl":
        enable_ttl(api, plain)
    else:
        create_table(api, client, ttl=None,
                     StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    # Enabling TTL also schedules the table's existing items, on a thread of its own
    # ("kumo-ttl-scan") that ends once it has walked them.
    wait_until(lambda: thread_names(srv) == ["kumo", "kumo-maintain"],
               what="the maintenance thread, and only it, besides the main one")
    if via == "ttl":
        item = {"pk": S("gone"), "exp": N(int(time.time()) - 10)}
        api.ok("PutItem", {"TableName": plain, "Item": item})
        wait_until(lambda: get(api, plain, {"pk": S("gone")}) is None,
                   what="the expired item's deletion")
