"""RestoreTableFromBackup: the items and indexes a restore brings back, what it does not,
its overrides and their refusals, and its errors, with DynamoDB's answers."""

import pytest

from backup_helpers import (  # noqa: F401
    BACKUP_NOT_FOUND,
    COR,
    INDEXED,
    TABLE_ALREADY_EXISTS,
    backed_up,
    backup_arn,
    backups,
    create_backup,
    describe,
    describe_backup,
    every_type_item,
    index_view,
    restore,
    table_view,
    targets,
    wait_active,
)
from kumo_testlib import (  # noqa: F401
    N,
    S,
    assert_error,
    assert_not_found,
    assert_validation,
    scan_all,
    table_arn,
    unique_name,
)


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
        # A restored index starts with a new index's warm throughput. (DynamoDB documents
        # only "a validation error"; the message is Kumo's.)
        ({"GlobalSecondaryIndexOverride": [dict(gsi, WarmThroughput={
            "ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000})]},
         "One or more parameter values were invalid: WarmThroughput cannot be specified in "
         "GlobalSecondaryIndexOverride for index: by_g"),
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
