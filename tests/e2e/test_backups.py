"""On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup and
RestoreTableFromBackup, with DynamoDB's answers (status, __type, message, members) for each
status and error, the items and indexes a restore brings back, its overrides, and jobs that
survive a restart or a kill -9.

Jobs in progress are held with KUMO_BACKUP_FAULT=<copy|restore>-hold:<n> (the job waits
after its first page of items until the file KUMO_BACKUP_FAULT_RELEASE names exists) or cut
with <copy|restore>-kill:<n> (the server kills itself there, as kill -9 would)."""

import http.client
import re
import signal

import pytest

from kumo_testlib import (
    ACCOUNT,
    NS_COR_SERVICE,
    NS_DYNAMODB,
    REGION,
    RESOURCE_IN_USE,
    KumoServer,
    N,
    S,
    assert_error,
    assert_not_found,
    assert_validation,
    b64,
    create_table_args,
    normalize_item,
    on_rados,
    scan_all,
    table_arn,
    unique_name,
    wait_until,
)

BACKUP_NOT_FOUND = NS_DYNAMODB + "BackupNotFoundException"
BACKUP_IN_USE = NS_DYNAMODB + "BackupInUseException"
TABLE_NOT_FOUND = NS_DYNAMODB + "TableNotFoundException"
TABLE_ALREADY_EXISTS = NS_DYNAMODB + "TableAlreadyExistsException"
TABLE_IN_USE = NS_DYNAMODB + "TableInUseException"
ACCESS_DENIED = NS_COR_SERVICE + "AccessDeniedException"
COR = "1 validation error detected: "
ARN_RE = re.compile(r"^arn:aws:dynamodb:us-east-1:000000000000:table/(?P<table>[^/]+)/backup/"
                    r"(?P<ms>\d{14})-[0-9a-f]{8}$")
DETAILS_MEMBERS = {"BackupArn", "BackupName", "BackupSizeBytes", "BackupStatus", "BackupType",
                   "BackupCreationDateTime"}
SUMMARY_MEMBERS = DETAILS_MEMBERS | {"TableName", "TableId", "TableArn"}
# Items per page of a copy or restore job: a held job has written this many.
JOB_PAGE = 256


def backup_arn(table, backup_id="01489602797149-73d8d5bc", region=REGION, account=ACCOUNT):
    return f"arn:aws:dynamodb:{region}:{account}:table/{table}/backup/{backup_id}"


def by_id(arns):
    """Backup ARNs in ListBackups' order: by id, which starts with the creation time."""
    return sorted(arns, key=lambda arn: arn.rsplit("/", 1)[1])


def create_backup(api, table, name="nightly"):
    return api.ok("CreateBackup", {"TableName": table, "BackupName": name})["BackupDetails"]


def describe_backup(api, arn):
    return api.ok("DescribeBackup", {"BackupArn": arn})["BackupDescription"]


def wait_backup_available(api, arn, timeout=30):
    return wait_until(
        lambda: describe_backup(api, arn)["BackupDetails"]["BackupStatus"] == "AVAILABLE"
        and describe_backup(api, arn), timeout=timeout, what=f"backup {arn} AVAILABLE")


def describe(api, table):
    return api.ok("DescribeTable", {"TableName": table})["Table"]


def wait_active(api, table, timeout=30):
    return wait_until(lambda: (d := describe(api, table))["TableStatus"] == "ACTIVE" and d,
                      timeout=timeout, what=f"table {table} ACTIVE")


def restore(api, arn, target, **overrides):
    body = {"TargetTableName": target, "BackupArn": arn, **overrides}
    return api.ok("RestoreTableFromBackup", body)["TableDescription"]


def delete_table(api, name):
    api("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
    api("DeleteTable", {"TableName": name})


@pytest.fixture
def backups(api):
    """Remembers backups (ARNs) to delete after the test."""
    made = []
    yield made
    for arn in made:
        api("DeleteBackup", {"BackupArn": arn})


@pytest.fixture
def targets(api):
    """Remembers restore targets to delete after the test (once they are ACTIVE)."""
    made = []
    yield made
    for name in made:
        try:
            wait_active(api, name, timeout=10)
        except Exception:
            pass
        delete_table(api, name)


def backed_up(api, make_table, backups, **table_args):
    """A table with two items and a backup of it: (table, backup details)."""
    table = make_table(**table_args)
    for k in ("a", "b"):
        api.ok("PutItem", {"TableName": table, "Item": {"pk": S(k), "v": N(1)}})
    details = create_backup(api, table)
    backups.append(details["BackupArn"])
    return table, details


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


# --------------------------------------------------------------------------- Restore


def every_type_item(pk, sk, **extra):
    return {
        "pk": S(pk), "sk": N(sk), "s": S("text é ✓"), "n": N("-12.50e3"), "b": {"B": b64(b"\0\x01\xff")},
        "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b64(b"a"), b64(b"b")]},
        "m": {"M": {"inner": {"L": [S("l"), N(1), {"NULL": True}]}, "t": {"BOOL": True}}},
        "l": {"L": [{"M": {"k": S("v")}}, {"BOOL": False}]}, "nul": {"NULL": True},
        "t": {"BOOL": True}, **extra}


INDEXED = dict(
    range_key=("sk", "N"),
    AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                          {"AttributeName": "sk", "AttributeType": "N"},
                          {"AttributeName": "g", "AttributeType": "S"},
                          {"AttributeName": "l", "AttributeType": "S"}],
    LocalSecondaryIndexes=[{
        "IndexName": "by_l",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "l", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}],
    GlobalSecondaryIndexes=[{
        "IndexName": "by_g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["s"]}}])


def index_view(api, table, partitions=("p0", "p1")):
    """What the table's indexes answer: a GSI query per group, an LSI query per partition."""
    view = {}
    for g in ("g0", "g1", "g2"):
        out = api.ok("Query", {"TableName": table, "IndexName": "by_g",
                               "KeyConditionExpression": "g = :g",
                               "ExpressionAttributeValues": {":g": S(g)}})
        view["g", g] = [normalize_item(i) for i in out["Items"]]
    for p in partitions:
        out = api.ok("Query", {"TableName": table, "IndexName": "by_l",
                               "KeyConditionExpression": "pk = :p",
                               "ExpressionAttributeValues": {":p": S(p)},
                               "ScanIndexForward": False})
        view["l", p] = [normalize_item(i) for i in out["Items"]]
    return view


def table_view(api, table):
    return sorted((normalize_item(i) for i in scan_all(api, table)),
                  key=lambda i: (i["pk"], i["sk"]))


def test_restore_brings_back_every_item_and_index_as_at_backup_time(api, make_table, backups,
                                                                    targets):
    table = make_table(**INDEXED)
    for i in range(30):
        api.ok("PutItem", {"TableName": table, "Item": every_type_item(
            f"p{i % 2}", i, g=S(f"g{i % 3}"), l=S(f"l{i:02}"))})
    items, indexes = table_view(api, table), index_view(api, table)
    source = describe(api, table)
    details = create_backup(api, table)
    arn = details["BackupArn"]
    backups.append(arn)
    # Writes after the backup are not in it.
    api.ok("PutItem", {"TableName": table, "Item": every_type_item("p0", 100, g=S("g0"),
                                                                   l=S("zz"))})
    api.ok("UpdateItem", {"TableName": table, "Key": {"pk": S("p1"), "sk": N(1)},
                          "UpdateExpression": "SET g = :g, s = :s",
                          "ExpressionAttributeValues": {":g": S("g2"), ":s": S("changed")}})
    api.ok("DeleteItem", {"TableName": table, "Key": {"pk": S("p0"), "sk": N(0)}})
    assert table_view(api, table) != items

    target = unique_name("restored")
    targets.append(target)
    out = api.ok("RestoreTableFromBackup", {"TargetTableName": target, "BackupArn": arn})
    desc = out["TableDescription"]
    assert desc["TableStatus"] == "CREATING"
    assert desc["TableName"] == target
    assert desc["RestoreSummary"] == {
        "SourceBackupArn": arn, "SourceTableArn": table_arn(table),
        "RestoreDateTime": details["BackupCreationDateTime"], "RestoreInProgress": True}
    assert desc["TableId"] != source["TableId"]
    assert desc["KeySchema"] == source["KeySchema"]
    assert desc["AttributeDefinitions"] == source["AttributeDefinitions"]
    # The GSIs of a table being restored have no status yet.
    assert all("IndexStatus" not in g for g in desc["GlobalSecondaryIndexes"])

    active = wait_active(api, target)
    assert "RestoreSummary" not in active
    assert table_view(api, target) == items
    assert index_view(api, target) == indexes
    assert active["ItemCount"] == source["ItemCount"] == 30
    assert active["TableSizeBytes"] == source["TableSizeBytes"]
    counts = {i["IndexName"]: i["ItemCount"] for i in active["GlobalSecondaryIndexes"]
              + active["LocalSecondaryIndexes"]}
    assert counts == {"by_g": 30, "by_l": 30}
    assert [g["IndexStatus"] for g in active["GlobalSecondaryIndexes"]] == ["ACTIVE"]
    # The restored table is a table like any other.
    api.ok("PutItem", {"TableName": target, "Item": {"pk": S("new"), "sk": N(1)}})
    assert describe(api, target)["ItemCount"] == 31


def test_what_a_restore_brings_back_and_what_it_does_not(api, make_table, backups, targets):
    table = make_table(
        ProvisionedThroughput={"ReadCapacityUnits": 4, "WriteCapacityUnits": 3},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
        SSESpecification={"Enabled": True},
        TableClass="STANDARD_INFREQUENT_ACCESS",
        DeletionProtectionEnabled=True,
        Tags=[{"Key": "team", "Value": "a"}])
    api.ok("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "exp"}})
    details = create_backup(api, table)
    backups.append(details["BackupArn"])
    target = unique_name("restored")
    targets.append(target)
    restore(api, details["BackupArn"], target)
    desc = wait_active(api, target)
    # Billing, throughput and encryption come back.
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 4
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 3
    assert desc["SSEDescription"]["Status"] == "ENABLED"
    # Stream, TTL, tags, table class and deletion protection do not.
    for member in ("StreamSpecification", "LatestStreamArn", "LatestStreamLabel",
                   "TableClassSummary"):
        assert member not in desc, member
    assert desc["DeletionProtectionEnabled"] is False
    assert api.ok("DescribeTimeToLive", {"TableName": target}) == {
        "TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}
    assert api.ok("ListTagsOfResource", {"ResourceArn": table_arn(target)})["Tags"] == []
    assert api.ok("DescribeContinuousBackups", {"TableName": target})[
        "ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"] == {
        "PointInTimeRecoveryStatus": "DISABLED"}


def test_restore_overrides(api, make_table, backups, targets):
    table = make_table(
        range_key=("sk", "N"),
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        AttributeDefinitions=INDEXED["AttributeDefinitions"],
        LocalSecondaryIndexes=INDEXED["LocalSecondaryIndexes"],
        GlobalSecondaryIndexes=[dict(INDEXED["GlobalSecondaryIndexes"][0],
                                     ProvisionedThroughput={"ReadCapacityUnits": 2,
                                                            "WriteCapacityUnits": 3})],
        SSESpecification={"Enabled": True})
    for i in range(4):
        api.ok("PutItem", {"TableName": table, "Item": {
            "pk": S("p"), "sk": N(i), "g": S("g"), "l": S(str(i)), "s": S("x")}})
    arn = create_backup(api, table)["BackupArn"]
    backups.append(arn)

    def restored(**overrides):
        target = unique_name("over")
        targets.append(target)
        restore(api, arn, target, **overrides)
        return wait_active(api, target), target

    gsi = INDEXED["GlobalSecondaryIndexes"][0]
    desc, target = restored(
        BillingModeOverride="PAY_PER_REQUEST",
        GlobalSecondaryIndexOverride=[dict(gsi, IndexName="renamed")],
        LocalSecondaryIndexOverride=[],
        SSESpecificationOverride={"Enabled": False})
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [g["IndexName"] for g in desc["GlobalSecondaryIndexes"]] == ["renamed"]
    assert desc["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert desc["GlobalSecondaryIndexes"][0]["ItemCount"] == 4
    assert "LocalSecondaryIndexes" not in desc
    assert "SSEDescription" not in desc
    assert [a["AttributeName"] for a in desc["AttributeDefinitions"]] == ["pk", "sk", "g"]
    out = api.ok("Query", {"TableName": target, "IndexName": "renamed",
                           "KeyConditionExpression": "g = :g",
                           "ExpressionAttributeValues": {":g": S("g")}})
    assert out["Count"] == 4

    desc, _ = restored(BillingModeOverride="PROVISIONED",
                       ProvisionedThroughputOverride={"ReadCapacityUnits": 9,
                                                      "WriteCapacityUnits": 8},
                       GlobalSecondaryIndexOverride=[])
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 8
    assert "GlobalSecondaryIndexes" not in desc
    assert [i["IndexName"] for i in desc["LocalSecondaryIndexes"]] == ["by_l"]

    # Without overrides the GSI's recorded throughput; an empty OnDemandThroughputOverride
    # is taken as absent.
    desc, _ = restored(OnDemandThroughputOverride={})
    assert desc["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert desc["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["WriteCapacityUnits"] == 3


def test_refused_overrides_create_no_table(api, make_table, backups):
    table = make_table(
        range_key=("sk", "N"),
        AttributeDefinitions=INDEXED["AttributeDefinitions"],
        LocalSecondaryIndexes=INDEXED["LocalSecondaryIndexes"],
        GlobalSecondaryIndexes=INDEXED["GlobalSecondaryIndexes"])
    arn = create_backup(api, table)["BackupArn"]
    backups.append(arn)
    target = unique_name("never")
    gsi = INDEXED["GlobalSecondaryIndexes"][0]
    cases = [
        ({"ProvisionedThroughputOverride": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}},
         "Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED"),
        ({"BillingModeOverride": "PROVISIONED"},
         "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED"),
        ({"OnDemandThroughputOverride": {"MaxReadRequestUnits": 0, "MaxWriteRequestUnits": 0}},
         "Requested MaxReadRequestUnits for OnDemandThroughput is outside of valid range"),
        ({"GlobalSecondaryIndexOverride": [dict(gsi, IndexName="other_g", Projection={
            "ProjectionType": "ALL"})]},
         "Index other_g does not match a secondary index that existed in the source table and "
         "cannot be created during the restore operation"),
        ({"LocalSecondaryIndexOverride": [dict(INDEXED["LocalSecondaryIndexes"][0],
                                               IndexName="other_l", KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "g", "KeyType": "RANGE"}])]},
         "Index other_l does not match a secondary index that existed in the source table and "
         "cannot be created during the restore operation"),
        ({"BillingModeOverride": "ON_DEMAND"},
         COR + "Value 'ON_DEMAND' at 'billingModeOverride' failed to satisfy constraint: Member "
         "must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"),
        ({"BackupArn": arn.replace(":us-east-1:", ":us-west-2:")},
         "Invalid Request: sseSpecificationOverride must be provided for cross-region restores"),
        ({"TargetTableName": None},
         COR + "Value null at 'targetTableName' failed to satisfy constraint: Member must not "
         "be null"),
        ({"BackupArn": None},
         COR + "Value null at 'backupArn' failed to satisfy constraint: Member must not be "
         "null"),
    ]
    for overrides, message in cases:
        body = dict({"TargetTableName": target, "BackupArn": arn}, **overrides)
        assert_validation(api("RestoreTableFromBackup", body), message)
    assert_not_found(api("DescribeTable", {"TableName": target}),
                     f"Requested resource not found: Table: {target} not found")
    assert target not in api.ok("ListTables", {})["TableNames"]


def test_a_cross_region_backup_arn_restores_with_an_encryption_override(api, make_table,
                                                                        backups, targets):
    table, details = backed_up(api, make_table, backups)
    other = details["BackupArn"].replace(":us-east-1:", ":us-west-2:")
    target = unique_name("cross")
    targets.append(target)
    out = restore(api, other, target, SSESpecificationOverride={"Enabled": True})
    assert out["RestoreSummary"]["SourceBackupArn"] == other
    assert wait_active(api, target)["SSEDescription"]["Status"] == "ENABLED"
    assert sorted(i["pk"]["S"] for i in scan_all(api, target)) == ["a", "b"]


@pytest.mark.parametrize("operation", [
    "UpdateContinuousBackups", "RestoreTableToPointInTime", "ExportTableToPointInTime",
    "DescribeExport", "ListExports", "ImportTable", "DescribeImport", "ListImports"])
def test_point_in_time_export_and_import_are_not_there(api, operation):
    resp = api(operation, {})
    assert resp.status == 400
    assert resp.json == {"__type": NS_COR_SERVICE + "UnknownOperationException"}


def test_restore_target_and_backup_must_be_right(api, make_table, backups):
    table, details = backed_up(api, make_table, backups)
    assert_error(api("RestoreTableFromBackup", {"TargetTableName": table,
                                                "BackupArn": details["BackupArn"]}),
                 400, TABLE_ALREADY_EXISTS, f"Table already exists: {table}")
    missing = backup_arn(table, "01489602797149-00000002")
    assert_error(api("RestoreTableFromBackup", {"TargetTableName": unique_name(),
                                                "BackupArn": missing}),
                 400, BACKUP_NOT_FOUND, f"Backup not found: {missing}")
    assert_validation(api("RestoreTableFromBackup", {"TargetTableName": unique_name(),
                                                     "BackupArn": table_arn(table)}),
                      "Invalid Backup ARN")


def test_backups_through_the_sdk(ddb, make_table, backups, targets):
    table = make_table(client=ddb)
    ddb.put_item(TableName=table, Item={"pk": {"S": "a"}})
    created = ddb.create_backup(TableName=table, BackupName="sdk")["BackupDetails"]
    backups.append(created["BackupArn"])
    assert created["BackupStatus"] == "CREATING"
    desc = ddb.describe_backup(BackupArn=created["BackupArn"])["BackupDescription"]
    assert desc["BackupDetails"]["BackupStatus"] == "AVAILABLE"
    assert desc["BackupDetails"]["BackupCreationDateTime"] == created["BackupCreationDateTime"]
    arns = [s["BackupArn"] for s in ddb.list_backups(TableName=table)["BackupSummaries"]]
    assert arns == [created["BackupArn"]]
    target = unique_name("sdk")
    targets.append(target)
    out = ddb.restore_table_from_backup(TargetTableName=target,
                                        BackupArn=created["BackupArn"])["TableDescription"]
    assert out["RestoreSummary"]["RestoreInProgress"] is True
    ddb.get_waiter("table_exists").wait(TableName=target,
                                        WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    assert ddb.get_item(TableName=target, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    with pytest.raises(ddb.exceptions.BackupNotFoundException):
        ddb.describe_backup(BackupArn=backup_arn(table, "01489602797149-00000003"))


# --------------------------------------------------------------------------- jobs in progress


# Partitions of fill()'s items whose LSI queries index_view compares.
FILLED = ("k0001", "k0150", "k0299")


def fill(api, table, count, start=0):
    for i in range(start, start + count):
        api.ok("PutItem", {"TableName": table, "Item": {
            "pk": S(f"k{i:04}"), "sk": N(i), "g": S(f"g{i % 3}"), "l": S(f"l{i}"),
            "v": N(1)}})


@pytest.fixture
def held(kumo_bin, tmp_path, monkeypatch):
    """held(fault, *flags, data_dir=None) → a server whose copy or restore job holds after its
    first page, and a function that lets it go on."""
    release = tmp_path / "release"

    def start(fault, *flags, data_dir=None):
        monkeypatch.setenv("KUMO_BACKUP_FAULT", fault)
        monkeypatch.setenv("KUMO_BACKUP_FAULT_RELEASE", str(release))
        server = KumoServer(kumo_bin, str(tmp_path), data_dir=data_dir, extra_args=list(flags))
        started.append(server)
        server.start()
        monkeypatch.delenv("KUMO_BACKUP_FAULT")
        return server, lambda: release.write_text("go")

    started = []
    yield start
    for server in started:
        server.kill()


pytestmark_single = pytest.mark.single_process(
    "a job held or killed by KUMO_BACKUP_FAULT in one process")


@pytestmark_single
def test_a_restore_in_progress(held):
    server, release = held("restore-hold:1")
    api = server.api()
    api.ok("CreateTable", create_table_args("src", **INDEXED))
    fill(api, "src", 300)
    items = table_view(api, "src")
    arn = create_backup(api, "src")["BackupArn"]
    other_arn = create_backup(api, "src", "other")["BackupArn"]
    restore(api, arn, "dst")
    wait_until(lambda: describe(api, "dst")["ItemCount"] >= JOB_PAGE, timeout=30,
               what="the first page restored")

    desc = describe(api, "dst")
    assert desc["TableStatus"] == "CREATING"
    assert desc["RestoreSummary"]["RestoreInProgress"] is True
    assert all("IndexStatus" not in g for g in desc["GlobalSecondaryIndexes"])
    assert "dst" in api.ok("ListTables", {})["TableNames"]
    # Data-plane calls, as on any CREATING table.
    key = {"pk": S("k0001"), "sk": N(1)}
    for operation, body in [
            ("GetItem", {"TableName": "dst", "Key": key}),
            ("PutItem", {"TableName": "dst", "Item": key}),
            ("Query", {"TableName": "dst", "KeyConditionExpression": "pk = :p",
                       "ExpressionAttributeValues": {":p": S("k0001")}}),
            ("Scan", {"TableName": "dst"}),
            ("BatchGetItem", {"RequestItems": {"dst": {"Keys": [key]}}})]:
        assert_not_found(api(operation, body))
    # Control-plane calls that do not find it yet.
    not_found = "Requested resource not found: Table: dst not found"
    for operation, body in [
            ("UpdateTable", {"TableName": "dst", "DeletionProtectionEnabled": True}),
            ("TagResource", {"ResourceArn": table_arn("dst"),
                             "Tags": [{"Key": "k", "Value": "v"}]}),
            ("ListTagsOfResource", {"ResourceArn": table_arn("dst")}),
            ("DescribeTimeToLive", {"TableName": "dst"}),
            ("UpdateTimeToLive", {"TableName": "dst", "TimeToLiveSpecification": {
                "Enabled": True, "AttributeName": "exp"}}),
            ("DescribeContributorInsights", {"TableName": "dst"})]:
        assert_not_found(api(operation, body), not_found)
    for operation, body in [
            ("DescribeContinuousBackups", {"TableName": "dst"}),
            ("CreateBackup", {"TableName": "dst", "BackupName": "nope"})]:
        assert_error(api(operation, body), 400, TABLE_NOT_FOUND, "Table not found: dst")
    assert_error(api("DeleteTable", {"TableName": "dst"}), 400, RESOURCE_IN_USE,
                 "Attempt to change a resource which is still in use: Table is being created: "
                 "dst")
    assert_error(api("CreateTable", create_table_args("dst")), 400, RESOURCE_IN_USE,
                 "Table is being used: dst")
    # The backup feeds the restore; the target is taken.
    assert_error(api("RestoreTableFromBackup", {"TargetTableName": "dst2", "BackupArn": arn}),
                 400, BACKUP_IN_USE, f"Backup is being used to restore another table: {arn}")
    assert_error(api("RestoreTableFromBackup", {"TargetTableName": "dst",
                                                "BackupArn": other_arn}),
                 400, TABLE_IN_USE, f"Table: dst is already being restored from backup: {arn}")
    assert_error(api("DeleteBackup", {"BackupArn": arn}), 400, BACKUP_IN_USE,
                 f"Backup is being used to restore table: {arn}")
    assert "dst2" not in api.ok("ListTables", {})["TableNames"]

    release()
    desc = wait_active(api, "dst")
    assert "RestoreSummary" not in desc
    assert table_view(api, "dst") == items
    # Done: the backup is free again.
    api.ok("DeleteBackup", {"BackupArn": arn})
    api.ok("DeleteTable", {"TableName": "dst"})


@pytestmark_single
@pytest.mark.skipif(on_rados(), reason="on RADOS a copy reads each item at some moment of the "
                    "copy, within DynamoDB's window (docs/backups.md), not at one instant")
def test_a_backup_copied_in_the_background_is_the_table_as_it_was_when_asked(held):
    server, release = held("copy-hold:1", "--backup-sync-bytes", "0")
    api = server.api()
    api.ok("CreateTable", create_table_args("src", **INDEXED))
    fill(api, "src", 300)
    items, indexes = table_view(api, "src"), index_view(api, "src", FILLED)
    details = create_backup(api, "src")
    arn = details["BackupArn"]
    assert details["BackupStatus"] == "CREATING"
    assert describe_backup(api, arn)["BackupDetails"]["BackupStatus"] == "CREATING"
    assert [(s["BackupArn"], s["BackupStatus"]) for s in api.ok("ListBackups", {})[
        "BackupSummaries"]] == [(arn, "CREATING")]
    # Every item changes while the copy is held after its first page.
    for i in range(300):
        key = {"pk": S(f"k{i:04}"), "sk": N(i)}
        if i % 2:
            api.ok("UpdateItem", {"TableName": "src", "Key": key, "UpdateExpression": "SET v = :v, g = :g",
                                  "ExpressionAttributeValues": {":v": N(2), ":g": S("g0")}})
        else:
            api.ok("DeleteItem", {"TableName": "src", "Key": key})
    fill(api, "src", 10, start=1000)
    # A restore of a backup still being made waits for it.
    restore(api, arn, "dst")
    assert describe(api, "dst")["TableStatus"] == "CREATING"
    release()
    wait_backup_available(api, arn)
    wait_active(api, "dst")
    assert table_view(api, "dst") == items
    assert index_view(api, "dst", FILLED) == indexes


@pytestmark_single
def test_backups_and_restored_tables_survive_a_restart(start_server, tmp_path):
    data = tmp_path / "data"
    server = start_server(data_dir=str(data))
    api = server.api()
    api.ok("CreateTable", create_table_args("src", **INDEXED))
    fill(api, "src", 20)
    items = table_view(api, "src")
    details = create_backup(api, "src")
    arn = details["BackupArn"]
    restore(api, arn, "dst")
    wait_active(api, "dst")
    before = describe_backup(api, arn)
    server.terminate()
    server.start()
    api = server.api()
    assert describe_backup(api, arn) == before
    assert [s["BackupArn"] for s in api.ok("ListBackups", {})["BackupSummaries"]] == [arn]
    assert table_view(api, "dst") == items
    restore(api, arn, "dst2")
    wait_active(api, "dst2")
    assert table_view(api, "dst2") == items


def wait_logged(server, text, timeout=30):
    """Waits until the server's log holds `text` (a held job says where it stopped)."""
    def logged():
        with open(server.log_path, "rb") as f:
            return text.encode() in f.read()

    wait_until(logged, timeout=timeout, what=f"{text!r} in {server.log_path}")


def never_half_active(api, table, expected, timeout=60):
    """Polls the table until it is ACTIVE; whenever it says ACTIVE its items are all there."""
    def check():
        desc = describe(api, table)
        if desc["TableStatus"] != "ACTIVE":
            assert desc["TableStatus"] == "CREATING"
            assert desc["RestoreSummary"]["RestoreInProgress"] is True
            return False
        assert "RestoreSummary" not in desc
        assert table_view(api, table) == expected
        return True

    wait_until(check, timeout=timeout, what=f"{table} restored")


@pytestmark_single
@pytest.mark.parametrize("fault", ["restore-kill:1", "restore-hold:1"])
def test_a_restore_cut_by_kill_9_is_finished_after_the_restart(held, tmp_path, fault):
    data = tmp_path / "data"
    server, _ = held(fault, data_dir=str(data))
    api = server.api()
    api.ok("CreateTable", create_table_args("src", **INDEXED))
    fill(api, "src", 300)
    items, indexes = table_view(api, "src"), index_view(api, "src", FILLED)
    arn = create_backup(api, "src")["BackupArn"]
    restore(api, arn, "dst")
    if fault.startswith("restore-kill"):
        # The server kills itself once the first page is written.
        assert server.proc.wait(timeout=30) == -signal.SIGKILL
    else:
        wait_until(lambda: describe(api, "dst")["ItemCount"] >= JOB_PAGE, timeout=30,
                   what="the first page restored")
        assert describe(api, "dst")["TableStatus"] == "CREATING"
        server.kill()
    server.start()
    api = server.api()
    never_half_active(api, "dst", items)
    assert index_view(api, "dst", FILLED) == indexes
    assert describe(api, "dst")["ItemCount"] == 300
    # The backup is free once its restore is done.
    api.ok("DeleteBackup", {"BackupArn": arn})


def summary_arn(api):
    """The ARN of the server's one backup, named "cut"."""
    summaries = api.ok("ListBackups", {})["BackupSummaries"]
    assert [s["BackupName"] for s in summaries] == ["cut"]
    return summaries[0]["BackupArn"]


@pytestmark_single
@pytest.mark.parametrize("fault", ["copy-kill:1", "copy-hold:1"])
def test_a_backup_cut_by_kill_9_is_made_after_the_restart(held, tmp_path, fault):
    data = tmp_path / "data"
    server, _ = held(fault, "--backup-sync-bytes", "0", data_dir=str(data))
    api = server.api()
    api.ok("CreateTable", create_table_args("src", **INDEXED))
    fill(api, "src", 300)
    items = table_view(api, "src")
    try:
        api("CreateBackup", {"TableName": "src", "BackupName": "cut"})
    except (OSError, http.client.HTTPException):
        pass  # the server may die before it answers
    if fault.startswith("copy-kill"):
        assert server.proc.wait(timeout=30) == -signal.SIGKILL
    else:
        wait_logged(server, f"copy job at {JOB_PAGE} items")
        assert describe_backup(api, summary_arn(api))["BackupDetails"]["BackupStatus"] == \
            "CREATING"
        server.kill()
    server.start()
    api = server.api()
    arn = summary_arn(api)
    wait_backup_available(api, arn)
    restore(api, arn, "dst")
    never_half_active(api, "dst", items)
