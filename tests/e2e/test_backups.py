"""On-demand backups: CreateBackup, DescribeBackup, ListBackups and DeleteBackup, with
DynamoDB's answers (status, __type, message, members) for each status and error, and
backups that outlive their table. (Restores: test_backup_restores.py; jobs in progress,
restarts and kill -9: test_backup_jobs.py.)"""

import pytest

from backup_helpers import (  # noqa: F401
    ACCESS_DENIED,
    ARN_RE,
    BACKUP_NOT_FOUND,
    COR,
    DETAILS_MEMBERS,
    SUMMARY_MEMBERS,
    TABLE_NOT_FOUND,
    backed_up,
    backup_arn,
    backups,
    by_id,
    create_backup,
    describe,
    describe_backup,
    restore,
    targets,
    wait_active,
)
from kumo_testlib import (  # noqa: F401
    KumoServer,
    N,
    S,
    assert_error,
    assert_validation,
    create_table_args,
    scan_all,
    table_arn,
    unique_name,
)


# --------------------------------------------------------------------------- CreateBackup


def test_create_backup_answers_its_details_creating_then_it_is_available(api, make_table,
                                                                         backups):
    table = make_table()
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("a")}})
    out = api.ok("CreateBackup", {"TableName": table, "BackupName": "nightly-1.x_Y"})
    assert set(out) == {"BackupDetails"}
    details = out["BackupDetails"]
    backups.append(details["BackupArn"])
    assert set(details) == DETAILS_MEMBERS
    assert details["BackupStatus"] == "CREATING"
    assert details["BackupType"] == "USER"
    assert details["BackupName"] == "nightly-1.x_Y"
    assert details["BackupSizeBytes"] == describe(api, table)["TableSizeBytes"]
    m = ARN_RE.match(details["BackupArn"])
    assert m and m["table"] == table, details["BackupArn"]
    # The id starts with the creation time in milliseconds, 14 digits.
    assert int(m["ms"]) == round(details["BackupCreationDateTime"] * 1000)

    desc = describe_backup(api, details["BackupArn"])
    assert desc["BackupDetails"] == dict(details, BackupStatus="AVAILABLE")
    listed = api.ok("ListBackups", {"TableName": table})["BackupSummaries"]
    assert [s["BackupCreationDateTime"] for s in listed] == [details["BackupCreationDateTime"]]


def test_backup_names_are_not_unique(api, make_table, backups):
    table = make_table()
    arns = [create_backup(api, table, "same")["BackupArn"] for _ in range(3)]
    backups.extend(arns)
    assert len(set(arns)) == 3
    listed = api.ok("ListBackups", {"TableName": table})["BackupSummaries"]
    assert sorted(s["BackupArn"] for s in listed) == sorted(arns)
    assert {s["BackupName"] for s in listed} == {"same"}


def test_create_backup_takes_a_table_arn(api, make_table, backups):
    table = make_table()
    details = create_backup(api, table_arn(table))
    backups.append(details["BackupArn"])
    assert ARN_RE.match(details["BackupArn"])["table"] == table


def test_create_backup_of_a_missing_table_is_table_not_found(api):
    name = unique_name()
    for sent in (name, table_arn(name)):
        resp = api("CreateBackup", {"TableName": sent, "BackupName": "nightly"})
        assert_error(resp, 400, TABLE_NOT_FOUND, f"Table not found: {name}")


@pytest.mark.parametrize("body,message", [
    ({"BackupName": "nightly"},
     COR + "Value null at 'tableName' failed to satisfy constraint: Member must not be null"),
    ({"TableName": "tab"},
     COR + "Value null at 'backupName' failed to satisfy constraint: Member must not be null"),
    ({"TableName": "tab", "BackupName": "ab"},
     COR + "Value 'ab' at 'backupName' failed to satisfy constraint: Member must have length "
     "greater than or equal to 3"),
    ({"TableName": "tab", "BackupName": "bad name"},
     COR + "Value 'bad name' at 'backupName' failed to satisfy constraint: Member must satisfy "
     "regular expression pattern: [a-zA-Z0-9_.-]+"),
])
def test_create_backup_validation(api, body, message):
    assert_validation(api("CreateBackup", body), message)


# --------------------------------------------------------------------------- DescribeBackup


def test_describe_backup_records_the_source_table_and_its_features(api, make_table, backups):
    table = make_table(
        range_key=("sk", "S"),
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        GlobalSecondaryIndexes=[{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]},
            "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        SSESpecification={"Enabled": True})
    api.ok("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "exp"}})
    for i in range(3):
        api.ok("PutItem", {"TableName": table, "Item": {
            "pk": S("p"), "sk": S(str(i)), "l": N(i), "g": S("g")}})
    table_desc = describe(api, table)
    details = create_backup(api, table)
    backups.append(details["BackupArn"])
    # The GSI's throughput as it was at backup time, whatever it becomes.
    api.ok("UpdateTable", {"TableName": table, "GlobalSecondaryIndexUpdates": [{"Update": {
        "IndexName": "by_g",
        "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}}]})

    desc = api.ok("DescribeBackup", {"BackupArn": details["BackupArn"]})
    assert set(desc) == {"BackupDescription"}
    desc = desc["BackupDescription"]
    assert set(desc) == {"BackupDetails", "SourceTableDetails", "SourceTableFeatureDetails"}
    assert desc["SourceTableDetails"] == {
        "TableName": table,
        "TableId": table_desc["TableId"],
        "TableArn": table_arn(table),
        "TableSizeBytes": table_desc["TableSizeBytes"],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "TableCreationDateTime": table_desc["CreationDateTime"],
        "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6},
        "ItemCount": 3,
        "BillingMode": "PROVISIONED",
    }
    assert desc["SourceTableFeatureDetails"] == {
        "LocalSecondaryIndexes": [{
            "IndexName": "by_l",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        "GlobalSecondaryIndexes": [{
            "IndexName": "by_g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]},
            "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}],
        "StreamDescription": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
        "TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"},
        "SSEDescription": table_desc["SSEDescription"],
    }
    assert details["BackupSizeBytes"] == table_desc["TableSizeBytes"]


def test_a_plain_on_demand_table_records_zero_throughput_and_no_features(api, make_table,
                                                                          backups):
    table, details = backed_up(api, make_table, backups)
    desc = describe_backup(api, details["BackupArn"])
    assert desc["SourceTableFeatureDetails"] == {}
    source = desc["SourceTableDetails"]
    assert source["ProvisionedThroughput"] == {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0}
    assert source["BillingMode"] == "PAY_PER_REQUEST"
    assert "OnDemandThroughput" not in source
    assert source["ItemCount"] == 2

    capped = make_table(OnDemandThroughput={"MaxReadRequestUnits": 100,
                                            "MaxWriteRequestUnits": 50})
    details = create_backup(api, capped)
    backups.append(details["BackupArn"])
    assert describe_backup(api, details["BackupArn"])["SourceTableDetails"][
        "OnDemandThroughput"] == {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 50}


def test_describe_backup_of_an_unknown_backup_is_backup_not_found(api, make_table):
    table = make_table()
    for arn in (backup_arn(table), backup_arn(unique_name()),
                backup_arn(table, "01489602797149-00000001")):
        assert_error(api("DescribeBackup", {"BackupArn": arn}), 400, BACKUP_NOT_FOUND,
                     f"Backup not found: {arn}")


def test_a_backup_arn_of_another_region_finds_the_backup_and_is_echoed(api, make_table,
                                                                       backups):
    table, details = backed_up(api, make_table, backups)
    other = details["BackupArn"].replace(":us-east-1:", ":eu-west-1:")
    desc = describe_backup(api, other)
    assert desc["BackupDetails"]["BackupArn"] == other
    assert desc["SourceTableDetails"]["TableArn"] == table_arn(table)


@pytest.mark.parametrize("operation", ["DescribeBackup", "DeleteBackup"])
def test_backup_arns_are_checked(api, operation):
    table = unique_name()
    assert_validation(api(operation, {"BackupArn": table_arn(table)}), "Invalid Backup ARN")
    assert_validation(api(operation, {"BackupArn": "x" * 40}), "Invalid Backup ARN")
    assert_validation(api(operation, {"BackupArn": backup_arn(table, region="moon-1")}),
                      "BackupArn is not valid")
    assert_validation(
        api(operation, {"BackupArn": backup_arn(table).replace("arn:aws:dynamodb",
                                                               "arn:aws:s3")}),
        "BackupArn is not valid")
    assert_error(api(operation, {"BackupArn": backup_arn(table, account="111122223333")}), 400,
                 ACCESS_DENIED, "Access is denied")
    assert_validation(api(operation, {"BackupArn": "arn:aws:dynamodb:::"}),
                      COR + "Value 'arn:aws:dynamodb:::' at 'backupArn' failed to satisfy "
                      "constraint: Member must have length greater than or equal to 37")
    assert_validation(api(operation, {}), COR + "Value null at 'backupArn' failed to satisfy "
                      "constraint: Member must not be null")


# --------------------------------------------------------------------------- DeleteBackup


def test_delete_backup_answers_deleted_then_the_backup_is_gone(api, make_table, backups):
    table, details = backed_up(api, make_table, backups)
    arn = details["BackupArn"]
    before = describe_backup(api, arn)
    out = api.ok("DeleteBackup", {"BackupArn": arn})
    assert out == {"BackupDescription": dict(
        before, BackupDetails=dict(before["BackupDetails"], BackupStatus="DELETED"))}
    for operation in ("DescribeBackup", "DeleteBackup"):
        assert_error(api(operation, {"BackupArn": arn}), 400, BACKUP_NOT_FOUND,
                     f"Backup not found: {arn}")
    assert api.ok("ListBackups", {"TableName": table})["BackupSummaries"] == []


# --------------------------------------------------------------------------- ListBackups


def test_list_backups_summaries_by_table_in_creation_order(api, make_table, backups):
    table = make_table()
    other = make_table()
    arns = by_id(create_backup(api, table, f"b{i}x")["BackupArn"] for i in range(3))
    backups.extend(arns)
    backups.append(create_backup(api, other)["BackupArn"])
    for sent in (table, table_arn(table)):
        listed = api.ok("ListBackups", {"TableName": sent})
        assert set(listed) == {"BackupSummaries"}
        summaries = listed["BackupSummaries"]
        assert [s["BackupArn"] for s in summaries] == arns
        times = [s["BackupCreationDateTime"] for s in summaries]
        assert times == sorted(times)
    summary = summaries[0]
    assert set(summary) == SUMMARY_MEMBERS
    desc = describe_backup(api, arns[0])
    assert summary == dict(desc["BackupDetails"], TableName=table,
                           TableId=describe(api, table)["TableId"], TableArn=table_arn(table))
    assert api.ok("ListBackups", {"TableName": unique_name()}) == {"BackupSummaries": []}


def test_list_backups_pages(api, make_table, backups):
    table = make_table()
    arns = by_id(create_backup(api, table, f"page{i}")["BackupArn"] for i in range(5))
    backups.extend(arns)
    seen, body = [], {"TableName": table, "Limit": 2}
    pages = 0
    while True:
        out = api.ok("ListBackups", body)
        pages += 1
        seen += [s["BackupArn"] for s in out["BackupSummaries"]]
        if "LastEvaluatedBackupArn" not in out:
            break
        assert out["LastEvaluatedBackupArn"] == seen[-1]
        body["ExclusiveStartBackupArn"] = out["LastEvaluatedBackupArn"]
    assert seen == arns
    assert pages == 3
    # Exactly Limit matches: no LastEvaluatedBackupArn.
    assert "LastEvaluatedBackupArn" not in api.ok("ListBackups",
                                                  {"TableName": table, "Limit": 5})
    # A position is a position: a deleted backup's ARN, or one never issued.
    api.ok("DeleteBackup", {"BackupArn": arns[1]})
    out = api.ok("ListBackups", {"TableName": table, "ExclusiveStartBackupArn": arns[1]})
    assert [s["BackupArn"] for s in out["BackupSummaries"]] == arns[2:]
    assert api.ok("ListBackups", {"TableName": table, "ExclusiveStartBackupArn":
                                  backup_arn(table, "00000000000000-00000000")})[
        "BackupSummaries"][0]["BackupArn"] == arns[0]
    assert api.ok("ListBackups", {"TableName": table, "ExclusiveStartBackupArn":
                                  backup_arn(table, "99999999999999-ffffffff")}) == {
        "BackupSummaries": []}
    resp = api("ListBackups", {"ExclusiveStartBackupArn": arns[0].replace(":us-east-1:",
                                                                          ":eu-west-1:")})
    assert_validation(resp)
    assert "does not match the region" in resp.message


@pytest.mark.parametrize("body,message", [
    ({"Limit": 0}, COR + "Value '0' at 'limit' failed to satisfy constraint: Member must have "
     "value greater than or equal to 1"),
    ({"Limit": 101}, COR + "Value '101' at 'limit' failed to satisfy constraint: Member must "
     "have value less than or equal to 100"),
    ({"BackupType": "BOGUS"}, COR + "Value 'BOGUS' at 'backupType' failed to satisfy "
     "constraint: Member must satisfy enum value set: [USER, SYSTEM, AWS_BACKUP, ALL]"),
    ({"BackupType": "user"}, COR + "Value 'user' at 'backupType' failed to satisfy "
     "constraint: Member must satisfy enum value set: [USER, SYSTEM, AWS_BACKUP, ALL]"),
    ({"TimeRangeLowerBound": 20, "TimeRangeUpperBound": 10},
     "Time range lower bound must be less than or equal to upper bound"),
])
def test_list_backups_validation(api, body, message):
    assert_validation(api("ListBackups", body), message)


def test_list_backups_types(api, make_table, backups):
    table, details = backed_up(api, make_table, backups)

    def listed(**body):
        out = api.ok("ListBackups", dict(body, TableName=table))
        return [s["BackupArn"] for s in out["BackupSummaries"]]

    assert listed() == [details["BackupArn"]]
    assert listed(BackupType="USER") == [details["BackupArn"]]
    assert listed(BackupType="ALL") == [details["BackupArn"]]
    assert listed(BackupType="SYSTEM") == []
    assert listed(BackupType="AWS_BACKUP") == []


@pytest.fixture
def clocked(kumo_bin, tmp_path):
    """A server on the manual clock, with its admin listener."""
    server = KumoServer(kumo_bin, str(tmp_path), flags={"clock": "manual"}, admin_port=0).start()
    yield server
    server.stop()


@pytest.mark.single_process("each front end has a manual clock of its own")
def test_backup_times_come_from_the_engine_clock_and_bound_listings(clocked):
    api, admin = clocked.api(), clocked.admin
    api.ok("CreateTable", create_table_args("timed"))
    made = []
    for _ in range(3):
        now = admin.now()
        details = create_backup(api, "timed")
        assert details["BackupCreationDateTime"] == pytest.approx(now, abs=0.0005)
        made.append(details)
        admin.advance(10)
    times = [d["BackupCreationDateTime"] for d in made]
    arns = [d["BackupArn"] for d in made]

    def listed(**bounds):
        out = api.ok("ListBackups", bounds)
        return [s["BackupArn"] for s in out["BackupSummaries"]]

    # Lower bound inclusive, upper exclusive, at the millisecond.
    assert listed(TimeRangeLowerBound=times[1]) == arns[1:]
    assert listed(TimeRangeUpperBound=times[1]) == arns[:1]
    assert listed(TimeRangeLowerBound=times[1], TimeRangeUpperBound=times[1]) == []
    assert listed(TimeRangeLowerBound=times[0], TimeRangeUpperBound=times[2]) == arns[:2]
    assert listed(TimeRangeLowerBound=0, TimeRangeUpperBound=times[2] + 10**6) == arns
    # Without a TableName every table's backups are listed.
    assert listed() == arns
    # A restore's RestoreDateTime is the backup's time; its table's creation time now.
    admin.advance(5)
    out = restore(api, arns[0], "timed-copy")
    assert out["RestoreSummary"]["RestoreDateTime"] == times[0]
    assert out["CreationDateTime"] == pytest.approx(admin.now(), abs=0.0005)


# --------------------------------------------------------------------------- DeleteTable


def test_backups_survive_delete_table(api, make_table, backups, targets):
    table, details = backed_up(api, make_table, backups)
    table_id = describe(api, table)["TableId"]
    before = describe_backup(api, details["BackupArn"])
    api.ok("DeleteTable", {"TableName": table})
    assert describe_backup(api, details["BackupArn"]) == dict(
        before, BackupDetails=dict(before["BackupDetails"], BackupStatus="AVAILABLE"))
    assert [s["BackupArn"] for s in api.ok("ListBackups", {"TableName": table})[
        "BackupSummaries"]] == [details["BackupArn"]]
    # A new table of that name: its backups share the TableArn, not the TableId.
    api.ok("CreateTable", create_table_args(table))
    again = create_backup(api, table)
    backups.append(again["BackupArn"])
    source = describe_backup(api, again["BackupArn"])["SourceTableDetails"]
    assert source["TableArn"] == before["SourceTableDetails"]["TableArn"]
    assert source["TableId"] != table_id
    api.ok("DeleteTable", {"TableName": table})
    target = unique_name("restored")
    targets.append(target)
    restore(api, details["BackupArn"], target)
    wait_active(api, target)
    assert sorted(i["pk"]["S"] for i in scan_all(api, target)) == ["a", "b"]
