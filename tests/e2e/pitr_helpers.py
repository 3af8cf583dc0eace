"""What the point-in-time recovery tests share (test_pitr.py, test_pitr_restores.py): a server
on a manual clock with no restore lag, and calls of UpdateContinuousBackups,
DescribeContinuousBackups and RestoreTableToPointInTime (sent as raw signed requests:
RecoveryPeriodInDays is newer than the installed botocore model)."""

import time

import pytest

from backup_helpers import TABLE_NOT_FOUND, wait_active  # noqa: F401
from kumo_testlib import NS_DYNAMODB, KumoServer

PITR_UNAVAILABLE = NS_DYNAMODB + "PointInTimeRecoveryUnavailableException"
INVALID_RESTORE_TIME = NS_DYNAMODB + "InvalidRestoreTimeException"
DAY = 86400
PITR_FLAGS = {"clock": "manual", "pitr-lag": "0"}


def pitr_flags():
    """PITR_FLAGS with the clock's start given: the front ends of a group then keep one time."""
    return {**PITR_FLAGS, "clock-start": str(int(time.time()))}


@pytest.fixture(scope="module")
def pitr_server(kumo_bin, tmp_path_factory):
    server = KumoServer(kumo_bin, str(tmp_path_factory.mktemp("pitr")), flags=pitr_flags(),
                        admin_port=0).start()
    yield server
    server.stop()


@pytest.fixture
def papi(pitr_server):
    return pitr_server.api()


@pytest.fixture
def admin(pitr_server):
    return pitr_server.admin


def spec(enabled, days=None):
    s = {"PointInTimeRecoveryEnabled": enabled}
    if days is not None:
        s["RecoveryPeriodInDays"] = days
    return s


def update_pitr(api, table, enabled, days=None):
    return api.ok("UpdateContinuousBackups", {
        "TableName": table, "PointInTimeRecoverySpecification": spec(enabled, days)})[
        "ContinuousBackupsDescription"]


def describe_pitr(api, table):
    return api.ok("DescribeContinuousBackups", {"TableName": table})[
        "ContinuousBackupsDescription"]


def window(api, table):
    d = describe_pitr(api, table)["PointInTimeRecoveryDescription"]
    return d["EarliestRestorableDateTime"], d["LatestRestorableDateTime"]


def restore_to(api, source, target, when=None, **extra):
    body = {"SourceTableName": source, "TargetTableName": target, **extra}
    if when is None:
        body["UseLatestRestorableTime"] = True
    else:
        body["RestoreDateTime"] = when
    return api.ok("RestoreTableToPointInTime", body)["TableDescription"]
