"""Restores to a point in time on a manual clock with no lag: items put, updated and deleted at
known times (through PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems,
PartiQL and TTL) restored to several seconds of the window, compared item by item and through
their GSI and LSI; UseLatestRestorableTime; the window's start after the log is trimmed;
disabling and enabling again; and a restore cut by kill -9 that completes after restart."""

import signal
import time

import pytest

from backup_helpers import (
    FILLED,
    INDEXED,
    fill,
    index_view,
    table_view,
    wait_active,
)
from kumo_testlib import (
    KumoServer,
    N,
    S,
    create_table_args,
    scan_all,
    unique_name,
    wait_until,
)
from pitr_helpers import (  # noqa: F401
    DAY,
    pitr_flags,
    describe_pitr,
    admin,
    papi,
    pitr_server,
    restore_to,
    update_pitr,
    window,
)


@pytest.fixture
def tables(papi):
    made = []
    yield made
    for name in made:
        papi("DeleteTable", {"TableName": name})


def restored(api, source, when, tables):
    target = unique_name("pitr")
    tables.append(target)
    restore_to(api, source, target, when)
    wait_active(api, target)
    return target


def views(api, table):
    return table_view(api, table), index_view(api, table, partitions=("p0", "p1"))


def item(pk, sk, g, v, l="l"):
    return {"pk": S(pk), "sk": N(sk), "g": S(g), "l": S(l), "v": N(v)}


def test_restores_to_several_times_of_the_window(papi, admin, tables):
    src = unique_name("pitr")
    tables.append(src)
    papi.ok("CreateTable", create_table_args(src, **INDEXED))
    put = lambda i: papi.ok("PutItem", {"TableName": src, "Item": i})  # noqa: E731
    put(item("p0", 1, "g0", 1))
    put(item("p0", 2, "g1", 1))
    put(item("p1", 3, "g2", 1))
    update_pitr(papi, src, True)
    seen = {}
    seen[admin.now()] = views(papi, src)  # the enable time: the items already there

    admin.advance(10)
    put(item("p1", 4, "g0", 2, "m"))
    papi.ok("UpdateItem", {"TableName": src, "Key": {"pk": S("p0"), "sk": N(1)},
                           "UpdateExpression": "SET v = :v, g = :g",
                           "ExpressionAttributeValues": {":v": N(5), ":g": S("g2")}})
    seen[admin.now()] = views(papi, src)

    admin.advance(10)
    papi.ok("DeleteItem", {"TableName": src, "Key": {"pk": S("p0"), "sk": N(2)}})
    papi.ok("BatchWriteItem", {"RequestItems": {src: [
        {"PutRequest": {"Item": item("p0", 5, "g1", 3, "z")}},
        {"DeleteRequest": {"Key": {"pk": S("p1"), "sk": N(3)}}}]}})
    seen[admin.now()] = views(papi, src)

    admin.advance(10)
    papi.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": src, "Item": item("p1", 6, "g0", 4)}},
        {"Update": {"TableName": src, "Key": {"pk": S("p1"), "sk": N(4)},
                    "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": N(9)}}}]})
    papi.ok("ExecuteStatement", {"Statement": f"UPDATE \"{src}\" SET v = 7 WHERE pk = 'p0' "
                                              "AND sk = 5"})
    seen[admin.now()] = views(papi, src)

    admin.advance(10)
    # Later changes are in no restore below.
    papi.ok("DeleteItem", {"TableName": src, "Key": {"pk": S("p0"), "sk": N(1)}})
    admin.advance(5)

    for when, expected in seen.items():
        # A time within each second after the changes restores them too.
        for at in (when, when + 0.5):
            target = restored(papi, src, at, tables)
            assert views(papi, target) == expected, at
    # The latest restorable time: the table as it is now.
    target = unique_name("pitr")
    tables.append(target)
    restore_to(papi, src, target)
    wait_active(papi, target)
    assert views(papi, target) == views(papi, src)


def test_ttl_deletions_are_in_the_log(papi, admin, tables):
    src = unique_name("pitr")
    tables.append(src)
    papi.ok("CreateTable", create_table_args(src))
    papi.ok("UpdateTimeToLive", {"TableName": src, "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "exp"}})
    update_pitr(papi, src, True)
    now = admin.now()
    papi.ok("PutItem", {"TableName": src, "Item": {"pk": S("a"), "exp": N(int(now) + 10)}})
    admin.advance(20)
    wait_until(lambda: scan_all(papi, src) == [], timeout=10, what="a expired")
    admin.advance(1)
    assert scan_all(papi, restored(papi, src, now + 5, tables)) == [
        {"pk": S("a"), "exp": N(int(now) + 10)}]
    assert scan_all(papi, restored(papi, src, None, tables)) == []


def test_the_window_start_after_the_log_is_trimmed(papi, admin, tables):
    src = unique_name("pitr")
    tables.append(src)
    papi.ok("CreateTable", create_table_args(src))
    update_pitr(papi, src, True, 1)
    put = lambda k, v: papi.ok("PutItem", {"TableName": src, "Item": {  # noqa: E731
        "pk": S(k), "v": N(v)}})
    put("a", 1)
    put("b", 1)
    admin.advance(3600)
    put("a", 2)
    papi.ok("DeleteItem", {"TableName": src, "Key": {"pk": S("b")}})
    admin.advance(3600)
    put("c", 1)
    mid = admin.now()
    admin.advance(DAY)  # the first two changes fall out of the window; the log is trimmed
    earliest, latest = window(papi, src)
    assert earliest == latest - DAY == mid
    put("a", 3)
    admin.advance(1)
    earliest = window(papi, src)[0]
    assert earliest == mid + 1
    expected = sorted([{"pk": S("a"), "v": N(2)}, {"pk": S("c"), "v": N(1)}],
                      key=lambda i: i["pk"]["S"])
    for at in (earliest, earliest + 100):
        got = sorted(scan_all(papi, restored(papi, src, at, tables)), key=lambda i: i["pk"]["S"])
        assert got == expected
    restore_resp = papi("RestoreTableToPointInTime", {
        "SourceTableName": src, "TargetTableName": unique_name("pitr"),
        "RestoreDateTime": earliest - 1})
    assert restore_resp.status == 400
    assert restore_resp.json["__type"].endswith("InvalidRestoreTimeException")


def test_disable_and_enable_again_start_afresh(papi, admin, tables):
    src = unique_name("pitr")
    tables.append(src)
    papi.ok("CreateTable", create_table_args(src))
    update_pitr(papi, src, True)
    papi.ok("PutItem", {"TableName": src, "Item": {"pk": S("gone")}})
    admin.advance(5)
    update_pitr(papi, src, False)
    papi.ok("DeleteItem", {"TableName": src, "Key": {"pk": S("gone")}})
    papi.ok("PutItem", {"TableName": src, "Item": {"pk": S("kept")}})
    admin.advance(5)
    t1 = admin.now()
    update_pitr(papi, src, True)
    assert window(papi, src) == (t1, t1)
    admin.advance(1)
    papi.ok("PutItem", {"TableName": src, "Item": {"pk": S("later")}})
    admin.advance(5)
    assert scan_all(papi, restored(papi, src, t1, tables)) == [{"pk": S("kept")}]


@pytest.mark.single_process("a restore killed by KUMO_BACKUP_FAULT in one process")
def test_a_restore_cut_by_kill_completes_after_restart(kumo_bin, tmp_path, monkeypatch):
    data = tmp_path / "data"
    monkeypatch.setenv("KUMO_BACKUP_FAULT", "restore-kill:256")
    server = KumoServer(kumo_bin, str(tmp_path), data_dir=data, flags=pitr_flags(), admin_port=0)
    server.start()
    try:
        api = server.api()
        api.ok("CreateTable", create_table_args("src", **INDEXED))
        fill(api, "src", 200)
        update_pitr(api, "src", True)
        for i in range(0, 200, 2):
            api.ok("DeleteItem", {"TableName": "src", "Key": {"pk": S(f"k{i:04}"), "sk": N(i)}})
        server.admin.advance(10)
        when = server.admin.now()
        server.admin.advance(1)
        # Later changes: 200 more items (the log then holds more than a page of items) and
        # the remaining ones deleted.
        fill(api, "src", 200, start=200)
        for i in range(1, 200, 2):
            api.ok("DeleteItem", {"TableName": "src", "Key": {"pk": S(f"k{i:04}"), "sk": N(i)}})
        server.admin.advance(10)
        expected = [i for i in range(200) if i % 2]
        api.ok("RestoreTableToPointInTime", {"SourceTableName": "src", "TargetTableName": "dst",
                                             "RestoreDateTime": when})
        # The job kills the server after its first page.
        server.proc.wait(timeout=30)
        assert server.proc.returncode == -signal.SIGKILL
        monkeypatch.delenv("KUMO_BACKUP_FAULT")
        server.start()
        api = server.api()
        desc = wait_active(api, "dst")
        assert "RestoreSummary" not in desc
        assert sorted(int(i["sk"]["N"]) for i in scan_all(api, "dst")) == expected
        assert desc["ItemCount"] == len(expected)
        view = index_view(api, "dst", partitions=FILLED)
        assert sum(len(v) for k, v in view.items() if k[0] == "g") == len(expected)
        assert describe_pitr(api, "src")["PointInTimeRecoveryDescription"][
            "PointInTimeRecoveryStatus"] == "ENABLED"
    finally:
        server.kill()


def _pitr_held_server(kumo_bin, tmp_path, monkeypatch, data):
    """A server whose job logging the items present when recovery is enabled holds after its
    first page (256 items) until `release` exists."""
    release = tmp_path / "release"
    monkeypatch.setenv("KUMO_BACKUP_FAULT", "pitr-hold:256")
    monkeypatch.setenv("KUMO_BACKUP_FAULT_RELEASE", str(release))
    server = KumoServer(kumo_bin, str(tmp_path), data_dir=data, flags=pitr_flags(), admin_port=0)
    server.start()
    monkeypatch.delenv("KUMO_BACKUP_FAULT")
    return server, release


def _changes_while_pending(api):
    """Changes made while the base is being logged: one item updated, two deleted, one new
    (on both sides of the job's first page)."""
    api.ok("UpdateItem", {"TableName": "src", "Key": {"pk": S("k0001"), "sk": N(1)},
                          "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {
                              ":v": N(7)}})
    api.ok("UpdateItem", {"TableName": "src", "Key": {"pk": S("k0500"), "sk": N(500)},
                          "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {
                              ":v": N(7)}})
    for i in (2, 501):
        api.ok("DeleteItem", {"TableName": "src", "Key": {"pk": S(f"k{i:04}"), "sk": N(i)}})
    fill(api, "src", 1, start=900)


def _values(api, table):
    return {int(i["sk"]["N"]): int(i["v"]["N"]) for i in scan_all(api, table)}


AT_ENABLE = {i: 1 for i in range(600)}
AFTER_CHANGES = {**{i: 1 for i in range(600) if i not in (2, 501)}, 1: 7, 500: 7, 900: 1}


@pytest.mark.single_process("a job held by KUMO_BACKUP_FAULT in one process")
def test_enabling_answers_before_the_items_are_logged(kumo_bin, tmp_path, monkeypatch):
    server, release = _pitr_held_server(kumo_bin, tmp_path, monkeypatch, tmp_path / "data")
    try:
        api = server.api()
        api.ok("CreateTable", create_table_args("src", **INDEXED))
        fill(api, "src", 600)
        now = server.admin.now()
        # The answer does not wait for the 600 items (the job holds after 256): ENABLED at
        # once, the window's two ends at the enable time.
        answer = update_pitr(api, "src", True)
        assert answer == describe_pitr(api, "src")
        desc = answer["PointInTimeRecoveryDescription"]
        assert answer["ContinuousBackupsStatus"] == "ENABLED"
        assert desc["PointInTimeRecoveryStatus"] == "ENABLED"
        assert desc["RecoveryPeriodInDays"] == 35
        assert desc["EarliestRestorableDateTime"] == desc["LatestRestorableDateTime"]
        assert abs(desc["EarliestRestorableDateTime"] - now) < 1
        t0 = desc["EarliestRestorableDateTime"]
        assert api.ok("DescribeTable", {"TableName": "src"})["Table"]["TableStatus"] == "ACTIVE"
        server.admin.advance(5)
        _changes_while_pending(api)
        server.admin.advance(5)
        t1 = server.admin.now()
        server.admin.advance(1)
        # A restore waits for the base: its table stays CREATING meanwhile.
        restore_to(api, "src", "at_enable", t0)
        restore_to(api, "src", "latest")
        time_limit = time.time() + 1
        while time.time() < time_limit:
            for target in ("at_enable", "latest"):
                assert api.ok("DescribeTable", {"TableName": target})["Table"][
                    "TableStatus"] == "CREATING"
        release.write_text("go")
        wait_active(api, "at_enable")
        wait_active(api, "latest")
        assert _values(api, "at_enable") == AT_ENABLE
        assert _values(api, "latest") == AFTER_CHANGES
        restore_to(api, "src", "at_t1", t1)
        wait_active(api, "at_t1")
        assert _values(api, "at_t1") == AFTER_CHANGES
    finally:
        server.kill()


@pytest.mark.single_process("a job held by KUMO_BACKUP_FAULT in one process")
def test_a_base_cut_by_kill_is_finished_after_restart(kumo_bin, tmp_path, monkeypatch):
    data = tmp_path / "data"
    server, _ = _pitr_held_server(kumo_bin, tmp_path, monkeypatch, data)
    try:
        api = server.api()
        api.ok("CreateTable", create_table_args("src", **INDEXED))
        fill(api, "src", 600)
        t0 = update_pitr(api, "src", True)["PointInTimeRecoveryDescription"][
            "EarliestRestorableDateTime"]
        server.admin.advance(5)
        _changes_while_pending(api)
        server.admin.advance(5)
        t1 = server.admin.now()
        # kill -9 while the job holds after its first page.
        server.kill()
        server.start()
        api = server.api()
        desc = describe_pitr(api, "src")["PointInTimeRecoveryDescription"]
        assert desc["PointInTimeRecoveryStatus"] == "ENABLED"
        assert desc["EarliestRestorableDateTime"] == t0
        # (The manual clock starts again at its start: it is moved past t1.)
        server.admin.advance(max(0, t1 - server.admin.now()) + 1)
        restore_to(api, "src", "at_enable", t0)
        restore_to(api, "src", "at_t1", t1)
        wait_active(api, "at_enable")
        wait_active(api, "at_t1")
        assert _values(api, "at_enable") == AT_ENABLE
        assert _values(api, "at_t1") == AFTER_CHANGES
        assert api.ok("DescribeTable", {"TableName": "at_enable"})["Table"]["ItemCount"] == 600
        view = index_view(api, "at_t1", partitions=FILLED)
        assert sum(len(v) for k, v in view.items() if k[0] == "g") == len(AFTER_CHANGES)
    finally:
        server.kill()
