"""Point-in-time recovery's operations on a manual clock with no lag: UpdateContinuousBackups
and DescribeContinuousBackups (every answer and error), the restorable window as the clock
moves and RecoveryPeriodInDays changes, RestoreTableToPointInTime's checks in DynamoDB's
order, and the SYSTEM backup that deleting a table with recovery on leaves."""

import datetime

import pytest

from backup_helpers import (
    BACKUP_NOT_FOUND,
    TABLE_ALREADY_EXISTS,
    TABLE_NOT_FOUND,
    wait_active,
)
from kumo_testlib import (
    N,
    S,
    VALIDATION,
    assert_error,
    create_table_args,
    table_arn,
    unique_name,
    wait_until,
)
from pitr_helpers import (  # noqa: F401
    DAY,
    INVALID_RESTORE_TIME,
    PITR_UNAVAILABLE,
    describe_pitr,
    admin,
    papi,
    pitr_server,
    restore_to,
    spec,
    update_pitr,
    window,
)

COR = "1 validation error detected: "
DISABLED = {"ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": {"PointInTimeRecoveryStatus": "DISABLED"}}


@pytest.fixture
def table(papi):
    made = []

    def make(**extra):
        name = unique_name("pitr")
        papi.ok("CreateTable", create_table_args(name, **extra))
        made.append(name)
        return name

    yield make
    for name in made:
        papi("DeleteTable", {"TableName": name})


def iso(seconds):
    return datetime.datetime.utcfromtimestamp(int(seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def enabled(days, earliest, latest):
    return {"ContinuousBackupsStatus": "ENABLED", "PointInTimeRecoveryDescription": {
        "PointInTimeRecoveryStatus": "ENABLED", "RecoveryPeriodInDays": days,
        "EarliestRestorableDateTime": earliest, "LatestRestorableDateTime": latest}}


def test_enable_describe_and_disable(papi, admin, table):
    t = table()
    assert describe_pitr(papi, t) == DISABLED
    assert describe_pitr(papi, table_arn(t)) == DISABLED
    t0 = admin.now()
    # Synchronous: ENABLED at once, the window one instant wide at the enable time.
    assert update_pitr(papi, t, True) == enabled(35, t0, t0)
    admin.advance(100)
    assert describe_pitr(papi, t) == enabled(35, t0, t0 + 100)
    # Enabling again changes nothing.
    assert update_pitr(papi, t, True) == enabled(35, t0, t0 + 100)
    # The period changes in place.
    assert update_pitr(papi, t, True, 7) == enabled(7, t0, t0 + 100)
    assert update_pitr(papi, table_arn(t), True, 1) == enabled(1, t0, t0 + 100)
    # Disabling forgets the period; disabling twice is fine; re-enabling starts afresh.
    assert update_pitr(papi, t, False) == DISABLED
    assert update_pitr(papi, t, False) == DISABLED
    admin.advance(10)
    t1 = admin.now()
    assert update_pitr(papi, t, True) == enabled(35, t1, t1)


def test_the_window_moves_with_the_clock_and_the_period(papi, admin, table):
    t = table()
    t0 = admin.now()
    update_pitr(papi, t, True, 1)
    admin.advance(DAY / 2)
    assert window(papi, t) == (t0, t0 + DAY / 2)
    admin.advance(DAY)
    now = admin.now()
    # Earliest = now − RecoveryPeriodInDays once the period has passed.
    assert window(papi, t) == (now - DAY, now)
    # A longer period cannot bring back what the shorter one let go.
    update_pitr(papi, t, True, 3)
    admin.advance(DAY)
    assert window(papi, t) == (now - DAY, now + DAY)
    # A shorter one moves the start at once.
    update_pitr(papi, t, True, 1)
    assert window(papi, t) == (now, now + DAY)


def test_update_continuous_backups_errors(papi, table):
    t = table()
    missing = unique_name("pitr")
    for op, body in [("UpdateContinuousBackups", {"TableName": missing,
                                                  "PointInTimeRecoverySpecification": spec(True)}),
                     ("DescribeContinuousBackups", {"TableName": missing})]:
        assert_error(papi(op, body), 400, TABLE_NOT_FOUND, f"Table not found: {missing}")
    for days in (35, 7):
        assert_error(papi("UpdateContinuousBackups", {
            "TableName": t, "PointInTimeRecoverySpecification": spec(False, days)}),
            400, VALIDATION, "Invalid Request: Cannot specify RecoveryPeriodInDays when "
            "disabling point-in-time recovery.")
    assert_error(papi("UpdateContinuousBackups", {
        "TableName": t, "PointInTimeRecoverySpecification": spec(True, 36)}),
        400, VALIDATION, COR + "Value '36' at 'pointInTimeRecoverySpecification."
        "recoveryPeriodInDays' failed to satisfy constraint: Member must have value less than "
        "or equal to 35")
    assert_error(papi("UpdateContinuousBackups", {
        "TableName": t, "PointInTimeRecoverySpecification": spec(True, 0)}),
        400, VALIDATION, COR + "Value '0' at 'pointInTimeRecoverySpecification."
        "recoveryPeriodInDays' failed to satisfy constraint: Member must have value greater "
        "than or equal to 1")
    assert_error(papi("UpdateContinuousBackups", {"TableName": t}), 400, VALIDATION,
                 COR + "Value null at 'pointInTimeRecoverySpecification' failed to satisfy "
                 "constraint: Member must not be null")
    assert_error(papi("UpdateContinuousBackups", {
        "TableName": t, "PointInTimeRecoverySpecification": {}}), 400, VALIDATION,
        COR + "Value null at 'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' "
        "failed to satisfy constraint: Member must not be null")
    # Nothing changed.
    assert describe_pitr(papi, t) == DISABLED


def test_restore_checks_in_order(papi, admin, table):
    src, off = table(), table()
    taken = table()
    t0 = admin.now()
    update_pitr(papi, src, True)
    admin.advance(60)

    def call(**body):
        return papi("RestoreTableToPointInTime", body)

    base = {"SourceTableName": src, "TargetTableName": unique_name("pitr")}
    assert_error(call(**base, UseLatestRestorableTime=True, RestoreDateTime=t0), 400, VALIDATION,
                 message_prefix="Invalid Request: Both RestoreDateTime and "
                 "UseLatestRestorableTime cannot be set for point-in-time restore request. Pleas")
    either = ("Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be "
              "specified, but not both")
    assert_error(call(**base), 400, VALIDATION, either)
    assert_error(call(**base, UseLatestRestorableTime=False), 400, VALIDATION, either)
    assert_error(call(SourceTableName=src, SourceTableArn=table_arn(src),
                      TargetTableName="x" * 3, UseLatestRestorableTime=True), 400, VALIDATION,
                 "Must provide exactly one of: sourceTableArn, sourceTableName")
    assert_error(call(TargetTableName="abc", UseLatestRestorableTime=True), 400, VALIDATION,
                 "The parameter 'TableName' is required")
    assert_error(call(SourceTableArn="not-an-arn", TargetTableName="abc",
                      UseLatestRestorableTime=True), 400, VALIDATION,
                 "sourceTableArn is not a valid ARN")
    assert_error(call(SourceTableArn=f"arn:aws:dynamodb:us-east-1:111122223333:table/{src}",
                      TargetTableName="abc", UseLatestRestorableTime=True), 400, VALIDATION,
                 "This action is only supported by accounts that match the resource owner's "
                 "account")
    assert_error(call(SourceTableName=src, TargetTableName="bad name!",
                      UseLatestRestorableTime=True), 400, VALIDATION,
                 COR + "Value 'bad name!' at 'targetTableName' failed to satisfy constraint: "
                 "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    # WarmThroughput in an index override is refused with the request's shape (DynamoDB
    # documents only "a validation error"; the message is Kumo's).
    assert_error(call(SourceTableName=src, TargetTableName="abc", UseLatestRestorableTime=True,
                      GlobalSecondaryIndexOverride=[{
                          "IndexName": "by_v",
                          "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
                          "Projection": {"ProjectionType": "ALL"},
                          "WarmThroughput": {"ReadUnitsPerSecond": 12000}}]), 400, VALIDATION,
                 "One or more parameter values were invalid: WarmThroughput cannot be specified "
                 "in GlobalSecondaryIndexOverride for index: by_v")
    assert_error(call(SourceTableArn=f"arn:aws:dynamodb:eu-west-1:000000000000:table/{src}",
                      TargetTableName="abc", UseLatestRestorableTime=True), 400, VALIDATION,
                 "Invalid Request: sseSpecificationOverride must be provided for cross-region "
                 "restores")
    missing = unique_name("pitr")
    assert_error(call(SourceTableName=missing, TargetTableName="abc",
                      UseLatestRestorableTime=True), 400, TABLE_NOT_FOUND,
                 f"Table not found: {missing}")
    assert_error(call(SourceTableArn=table_arn(missing), TargetTableName="abc",
                      UseLatestRestorableTime=True), 400, TABLE_NOT_FOUND, "Table not found")
    # Recovery off is checked before the time and the target.
    assert_error(call(SourceTableName=off, TargetTableName=taken, RestoreDateTime=0), 400,
                 PITR_UNAVAILABLE, f"Point in time recovery is not enabled for table '{off}'")
    # A time outside the window, before the target.
    for when in (t0 - 1, t0 + 61, 0):
        assert_error(call(SourceTableName=src, TargetTableName=taken, RestoreDateTime=when),
                     400, INVALID_RESTORE_TIME,
                     f"RestoreDateTime '{iso(when)}' must be within EarliestRestorableDateTime "
                     f"'{iso(t0)}' and LatestRestorableDateTime '{iso(t0 + 60)}'")
    assert_error(call(SourceTableName=src, TargetTableName=taken, RestoreDateTime=t0 + 30), 400,
                 TABLE_ALREADY_EXISTS, f"Table already exists: {taken}")
    assert_error(call(SourceTableName=src, TargetTableName=src, UseLatestRestorableTime=True),
                 400, TABLE_ALREADY_EXISTS, f"Table already exists: {src}")
    # None of them made a table.
    assert "abc" not in papi.ok("ListTables", {})["TableNames"]


def test_a_restored_table_and_its_summary(papi, admin, table):
    src = table()
    papi.ok("PutItem", {"TableName": src, "Item": {"pk": S("a"), "v": N(1)}})
    update_pitr(papi, src, True)
    admin.advance(5)
    target = unique_name("pitr")
    out = restore_to(papi, src, target)
    assert out["TableStatus"] == "CREATING"
    latest = window(papi, src)[1]
    assert out["RestoreSummary"] == {"SourceTableArn": table_arn(src), "RestoreDateTime": latest,
                                     "RestoreInProgress": True}
    # A target being restored is in use.
    resp = papi("RestoreTableToPointInTime", {"SourceTableName": src, "TargetTableName": target,
                                              "UseLatestRestorableTime": True})
    if resp.status == 400 and resp.json["__type"].endswith("TableInUseException"):
        assert resp.message.startswith(f"Table: {target} is already being restored")
    else:
        assert_error(resp, 400, TABLE_ALREADY_EXISTS, f"Table already exists: {target}")
    desc = wait_active(papi, target)
    assert "RestoreSummary" not in desc
    assert papi.ok("GetItem", {"TableName": target, "Key": {"pk": S("a")}})["Item"] == {
        "pk": S("a"), "v": N(1)}
    # Point-in-time recovery is not restored.
    assert describe_pitr(papi, target) == DISABLED
    papi("DeleteTable", {"TableName": target})


def test_deleting_a_table_with_recovery_leaves_a_system_backup(papi, admin, table):
    with_pitr, without = table(), table()
    for t in (with_pitr, without):
        papi.ok("PutItem", {"TableName": t, "Item": {"pk": S("a"), "v": N(1)}})
    update_pitr(papi, with_pitr, True)
    admin.advance(1)
    now = admin.now()
    papi.ok("DeleteTable", {"TableName": with_pitr})
    papi.ok("DeleteTable", {"TableName": without})
    # Hidden from ListBackups unless SYSTEM (or ALL) is asked for.
    assert papi.ok("ListBackups", {"TableName": with_pitr})["BackupSummaries"] == []
    assert papi.ok("ListBackups", {"TableName": without, "BackupType": "ALL"})[
        "BackupSummaries"] == []
    [summary] = papi.ok("ListBackups", {"TableName": with_pitr, "BackupType": "SYSTEM"})[
        "BackupSummaries"]
    assert summary["BackupName"] == f"{with_pitr}$DeletedTableBackup"
    assert summary["BackupType"] == "SYSTEM"
    assert summary["BackupArn"].endswith(f"/backup/{int(round(now * 1000)):014}-00000000")
    assert summary["BackupCreationDateTime"] == now
    assert summary["BackupExpiryDateTime"] == now + 35 * DAY
    assert [b["BackupArn"] for b in papi.ok("ListBackups", {
        "TableName": with_pitr, "BackupType": "ALL"})["BackupSummaries"]] == [
        summary["BackupArn"]]
    desc = papi.ok("DescribeBackup", {"BackupArn": summary["BackupArn"]})["BackupDescription"]
    assert desc["BackupDetails"]["BackupStatus"] == "AVAILABLE"
    assert desc["SourceTableFeatureDetails"] == {}
    resp = papi("DeleteBackup", {"BackupArn": summary["BackupArn"]})
    assert_error(resp, 400, VALIDATION, message_prefix=(
        "Invalid Request: User is not allowed to delete the system backup with arn "
        f"{summary['BackupArn']}. It will automatically expire on "))
    # It restores the table as it was just before the deletion.
    target = unique_name("pitr")
    papi.ok("RestoreTableFromBackup", {"TargetTableName": target,
                                       "BackupArn": summary["BackupArn"]})
    wait_active(papi, target)
    assert papi.ok("GetItem", {"TableName": target, "Key": {"pk": S("a")}})["Item"] == {
        "pk": S("a"), "v": N(1)}
    papi("DeleteTable", {"TableName": target})


def test_tables_deleted_in_one_millisecond_leave_a_backup_each(papi, admin, table):
    names = [table(), table()]
    for t in names:
        update_pitr(papi, t, True)
    admin.advance(1)
    now = admin.now()
    for t in names:
        papi.ok("DeleteTable", {"TableName": t})
    arns = []
    for t in names:
        [summary] = papi.ok("ListBackups", {"TableName": t, "BackupType": "SYSTEM"})[
            "BackupSummaries"]
        arns.append(summary["BackupArn"])
        assert summary["BackupExpiryDateTime"] == summary["BackupCreationDateTime"] + 35 * DAY
    # Both ids end in -00000000: the second takes the next millisecond.
    assert [a.rsplit("/", 1)[1] for a in arns] == [
        f"{int(round(now * 1000)):014}-00000000", f"{int(round(now * 1000)) + 1:014}-00000000"]


def test_a_system_backup_expires_after_35_days(papi, admin, table):
    t = table()
    update_pitr(papi, t, True)
    papi.ok("DeleteTable", {"TableName": t})

    def system_backups():
        return papi.ok("ListBackups", {"TableName": t, "BackupType": "SYSTEM"})[
            "BackupSummaries"]

    [summary] = system_backups()
    admin.advance(35 * DAY - 1)
    assert system_backups() == [summary]
    admin.advance(2)
    wait_until(lambda: system_backups() == [], timeout=10, what="the SYSTEM backup expired")
    assert_error(papi("DescribeBackup", {"BackupArn": summary["BackupArn"]}), 400,
                 BACKUP_NOT_FOUND, f"Backup not found: {summary['BackupArn']}")
