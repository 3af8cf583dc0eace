"""The bad-input matrix, part two: the type group (every member of the main operations,
nested structures included, given a value of the wrong JSON type: SerializationException with
DynamoDB's type-mismatch text), generated from the MEMBERS table (member path → model type),
and the order group (a type mismatch next to a later-stage error: the type mismatch wins, as
JSON types are checked before model constraints and semantic validation). The shared
definitions are in bad_input_cases.py."""

import copy
import json

from bad_input_cases import MAIN, Case, S, ser
from kumo_testlib import SERIALIZATION

# --------------------------------------------------------------------------- type

STR, INT, LONG, BOOL, LIST, MAP, STRUCT, AV, AVMAP, BLOB, TIME = (
    "String", "Integer", "Long", "Boolean", "List", "Map", "Structure", "AttributeValue",
    "AttributeMap", "Blob", "Timestamp")
START_STRUCT = "Start of structure or map found where not expected"
START_LIST = "Start of list found where not expected"
FIELD = "Unexpected field type"
VALUE = "Unexpected value type in payload"
TOKEN = "Unexpected token received from parser"
ANY = None  # DynamoDB's text not known: status and __type only


def wrong_values(kind, first):
    """(value, expected Message) for a member of model type `kind`. `first`: the first
    member of that type in a scenario also gets the rarer tokens (decimal, false)."""
    if kind in (STR, BLOB):
        t = "String"
        core = [(5, f"NUMBER_VALUE cannot be converted to {t}"),
                (True, f"TRUE_VALUE cannot be converted to {t}"),
                ({"a": "b"}, START_STRUCT),
                (["a"], f"Unrecognized collection type class java.lang.{t}")]
        extra = [(5.5, f"DECIMAL_VALUE cannot be converted to {t}"),
                 (False, f"FALSE_VALUE cannot be converted to {t}")]
        if kind == BLOB:  # for B only the base64 texts are known
            core = [(v, START_STRUCT if isinstance(v, dict) else ANY) for v, _ in core]
            extra = [(v, ANY) for v, _ in extra]
    elif kind in (INT, LONG):
        core = [("5", f"STRING_VALUE cannot be converted to {kind}"),
                (True, f"TRUE_VALUE cannot be converted to {kind}"),
                ({}, START_STRUCT),
                ([1], f"Unrecognized collection type class java.lang.{kind}")]
        extra = [(False, f"FALSE_VALUE cannot be converted to {kind}")]
    elif kind == BOOL:
        core = [("maybe", TOKEN), ({}, START_STRUCT), (5, ANY), ([True], ANY)]
        extra = [("", TOKEN)]
    elif kind == LIST:
        core = [("x", FIELD), (5, FIELD), ({}, START_STRUCT)]
        extra = [(True, FIELD)]
    elif kind in (MAP, STRUCT, AVMAP):
        core = [("x", FIELD), (5, FIELD), ([], START_LIST)]
        extra = [(False, FIELD)]
    elif kind == AV:
        core = [("x", VALUE), (5, VALUE), ([], START_LIST)]
        extra = [(True, VALUE)]
    elif kind == TIME:  # epoch seconds; DynamoDB's texts for the others are not known
        core = [({}, START_STRUCT), ("not a time", ANY), (True, ANY), ([1], ANY)]
        extra = []
    else:
        raise ValueError(kind)
    return core + (extra if first else [])


KEY = {"pk": S("typed")}
NO_BACKUP = f"arn:aws:dynamodb:us-east-1:000000000000:table/{MAIN}/backup/01489602797149-0000abcd"
NO_TABLE_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/bad-input-no-such-table"
NO_EXPORT = NO_TABLE_ARN + "/export/01700000000000-0000abcd"
NO_IMPORT = NO_TABLE_ARN + "/import/01700000000000-0000abcd"
LEGACY_COND = {"ComparisonOperator": "EQ", "AttributeValueList": [S("x")]}

# (operation, valid base request, [(member path, model type)]). A path is dotted; list
# elements are indices; missing parent objects are created. Each scenario's base has no
# member that would conflict with the ones tried (legacy and expression members are in
# separate scenarios), so the only error is the type mismatch.
MEMBERS = [
    ("PutItem", {"TableName": MAIN, "Item": {"pk": S("typed"), "a": S("x")}}, [
        ("TableName", STR), ("Item", AVMAP), ("Item.a", AV), ("Expected", MAP),
        ("Expected.a", STRUCT), ("Expected.a.Exists", BOOL), ("Expected.a.Value", AV),
        ("Expected.a.ComparisonOperator", STR), ("Expected.a.AttributeValueList", LIST),
        ("ReturnValues", STR), ("ReturnConsumedCapacity", STR),
        ("ReturnItemCollectionMetrics", STR), ("ConditionalOperator", STR),
        ("ConditionExpression", STR), ("ExpressionAttributeNames", MAP),
        ("ExpressionAttributeNames.#n", STR), ("ExpressionAttributeValues", AVMAP),
        ("ExpressionAttributeValues.:v", AV), ("ReturnValuesOnConditionCheckFailure", STR),
    ]),
    ("PutItem", {"TableName": MAIN, "Item": {"pk": S("typed"), "a": S("x")}}, [
        ("Item.a.S", STR), ("Item.a.N", STR), ("Item.a.B", BLOB), ("Item.a.BOOL", BOOL),
        ("Item.a.NULL", BOOL), ("Item.a.SS", LIST), ("Item.a.NS", LIST), ("Item.a.BS", LIST),
        ("Item.a.L", LIST), ("Item.a.M", AVMAP), ("Item.a.M.k", AV),
    ]),
    ("PutItem", {"TableName": MAIN, "Item": {"pk": S("typed"), "a": {"SS": ["x"]},
                                             "b": {"NS": ["1"]}, "c": {"BS": ["AA=="]},
                                             "d": {"L": [S("x")]}}}, [
        ("Item.a.SS.0", STR), ("Item.b.NS.0", STR), ("Item.c.BS.0", BLOB), ("Item.d.L.0", AV),
    ]),
    ("GetItem", {"TableName": MAIN, "Key": KEY}, [
        ("TableName", STR), ("Key", AVMAP), ("Key.pk", AV), ("AttributesToGet", LIST),
        ("ConsistentRead", BOOL), ("ReturnConsumedCapacity", STR),
        ("ProjectionExpression", STR), ("ExpressionAttributeNames", MAP),
        ("ExpressionAttributeNames.#n", STR),
    ]),
    ("GetItem", {"TableName": MAIN, "Key": KEY, "AttributesToGet": ["a"]}, [
        ("AttributesToGet.0", STR),
    ]),
    ("UpdateItem", {"TableName": MAIN, "Key": KEY, "UpdateExpression": "SET a = :v",
                    "ExpressionAttributeValues": {":v": S("x")}}, [
        ("TableName", STR), ("Key", AVMAP), ("Key.pk", AV), ("ReturnValues", STR),
        ("ReturnConsumedCapacity", STR), ("ReturnItemCollectionMetrics", STR),
        ("UpdateExpression", STR), ("ConditionExpression", STR),
        ("ExpressionAttributeNames", MAP), ("ExpressionAttributeNames.#n", STR),
        ("ExpressionAttributeValues", AVMAP), ("ExpressionAttributeValues.:v", AV),
        ("ReturnValuesOnConditionCheckFailure", STR),
    ]),
    ("UpdateItem", {"TableName": MAIN, "Key": KEY,
                    "AttributeUpdates": {"a": {"Action": "PUT", "Value": S("x")}}}, [
        ("AttributeUpdates", MAP), ("AttributeUpdates.a", STRUCT),
        ("AttributeUpdates.a.Value", AV), ("AttributeUpdates.a.Action", STR),
        ("Expected", MAP), ("Expected.a", STRUCT), ("ConditionalOperator", STR),
    ]),
    ("DeleteItem", {"TableName": MAIN, "Key": KEY}, [
        ("TableName", STR), ("Key", AVMAP), ("Key.pk", AV), ("Expected", MAP),
        ("Expected.a", STRUCT), ("ConditionalOperator", STR), ("ReturnValues", STR),
        ("ReturnConsumedCapacity", STR), ("ReturnItemCollectionMetrics", STR),
        ("ConditionExpression", STR), ("ExpressionAttributeNames", MAP),
        ("ExpressionAttributeValues", AVMAP), ("ReturnValuesOnConditionCheckFailure", STR),
    ]),
    ("Query", {"TableName": MAIN, "KeyConditionExpression": "pk = :p",
               "ExpressionAttributeValues": {":p": S("typed")}}, [
        ("TableName", STR), ("IndexName", STR), ("Select", STR), ("AttributesToGet", LIST),
        ("Limit", INT), ("ConsistentRead", BOOL), ("ScanIndexForward", BOOL),
        ("ExclusiveStartKey", AVMAP), ("ExclusiveStartKey.pk", AV),
        ("ReturnConsumedCapacity", STR), ("ProjectionExpression", STR),
        ("FilterExpression", STR), ("KeyConditionExpression", STR),
        ("ExpressionAttributeNames", MAP), ("ExpressionAttributeValues", AVMAP),
        ("ExpressionAttributeValues.:p", AV),
    ]),
    ("Query", {"TableName": MAIN, "KeyConditions": {"pk": {"ComparisonOperator": "EQ",
                                                         "AttributeValueList": [S("typed")]}}}, [
        ("KeyConditions", MAP), ("KeyConditions.pk", STRUCT),
        ("KeyConditions.pk.ComparisonOperator", STR),
        ("KeyConditions.pk.AttributeValueList", LIST),
        ("KeyConditions.pk.AttributeValueList.0", AV), ("QueryFilter", MAP),
        ("QueryFilter.a", STRUCT), ("ConditionalOperator", STR),
    ]),
    ("Scan", {"TableName": MAIN}, [
        ("TableName", STR), ("IndexName", STR), ("AttributesToGet", LIST), ("Limit", INT),
        ("Select", STR), ("ExclusiveStartKey", AVMAP), ("ReturnConsumedCapacity", STR),
        ("TotalSegments", INT), ("Segment", INT), ("ProjectionExpression", STR),
        ("FilterExpression", STR), ("ExpressionAttributeNames", MAP),
        ("ExpressionAttributeValues", AVMAP), ("ConsistentRead", BOOL),
    ]),
    ("Scan", {"TableName": MAIN, "ScanFilter": {"a": dict(LEGACY_COND)}}, [
        ("ScanFilter", MAP), ("ScanFilter.a", STRUCT), ("ScanFilter.a.ComparisonOperator", STR),
        ("ScanFilter.a.AttributeValueList", LIST), ("ScanFilter.a.AttributeValueList.0", AV),
        ("ConditionalOperator", STR),
    ]),
    ("BatchWriteItem", {"RequestItems": {MAIN: [
        {"PutRequest": {"Item": {"pk": S("typed-b1")}}},
        {"DeleteRequest": {"Key": {"pk": S("typed-b2")}}}]}}, [
        ("RequestItems", MAP), (f"RequestItems.{MAIN}", LIST), (f"RequestItems.{MAIN}.0", STRUCT),
        (f"RequestItems.{MAIN}.0.PutRequest", STRUCT),
        (f"RequestItems.{MAIN}.0.PutRequest.Item", AVMAP),
        (f"RequestItems.{MAIN}.0.PutRequest.Item.pk", AV),
        (f"RequestItems.{MAIN}.1.DeleteRequest", STRUCT),
        (f"RequestItems.{MAIN}.1.DeleteRequest.Key", AVMAP),
        (f"RequestItems.{MAIN}.1.DeleteRequest.Key.pk", AV),
        ("ReturnConsumedCapacity", STR), ("ReturnItemCollectionMetrics", STR),
    ]),
    ("BatchGetItem", {"RequestItems": {MAIN: {"Keys": [KEY]}}}, [
        ("RequestItems", MAP), (f"RequestItems.{MAIN}", STRUCT),
        (f"RequestItems.{MAIN}.Keys", LIST), (f"RequestItems.{MAIN}.Keys.0", AVMAP),
        (f"RequestItems.{MAIN}.Keys.0.pk", AV), (f"RequestItems.{MAIN}.AttributesToGet", LIST),
        (f"RequestItems.{MAIN}.ConsistentRead", BOOL),
        (f"RequestItems.{MAIN}.ProjectionExpression", STR),
        (f"RequestItems.{MAIN}.ExpressionAttributeNames", MAP), ("ReturnConsumedCapacity", STR),
    ]),
    ("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": MAIN, "Item": {"pk": S("typed-t1"), "a": S("x")}}},
        {"Update": {"TableName": MAIN, "Key": {"pk": S("typed-t2")},
                    "UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": S("y")}}},
        {"Delete": {"TableName": MAIN, "Key": {"pk": S("typed-t3")}}},
        {"ConditionCheck": {"TableName": MAIN, "Key": {"pk": S("typed-t4")},
                            "ConditionExpression": "attribute_not_exists(zz)"}}]}, [
        ("TransactItems", LIST), ("TransactItems.0", STRUCT), ("TransactItems.0.Put", STRUCT),
        ("TransactItems.0.Put.TableName", STR), ("TransactItems.0.Put.Item", AVMAP),
        ("TransactItems.0.Put.Item.a", AV), ("TransactItems.0.Put.ConditionExpression", STR),
        ("TransactItems.0.Put.ExpressionAttributeNames", MAP),
        ("TransactItems.0.Put.ExpressionAttributeValues", AVMAP),
        ("TransactItems.0.Put.ReturnValuesOnConditionCheckFailure", STR),
        ("TransactItems.1.Update", STRUCT), ("TransactItems.1.Update.Key", AVMAP),
        ("TransactItems.1.Update.UpdateExpression", STR),
        ("TransactItems.1.Update.ExpressionAttributeValues.:v", AV),
        ("TransactItems.2.Delete", STRUCT), ("TransactItems.2.Delete.TableName", STR),
        ("TransactItems.2.Delete.Key.pk", AV), ("TransactItems.3.ConditionCheck", STRUCT),
        ("TransactItems.3.ConditionCheck.ConditionExpression", STR),
        ("TransactItems.3.ConditionCheck.Key", AVMAP),
        ("ReturnConsumedCapacity", STR), ("ReturnItemCollectionMetrics", STR),
        ("ClientRequestToken", STR),
    ]),
    # The base names an existing table: a type mismatch that goes unnoticed shows up as
    # ResourceInUseException instead of creating a table.
    ("CreateTable", {"TableName": MAIN, "BillingMode": "PAY_PER_REQUEST",
                     "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                     "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                     "Tags": [{"Key": "k", "Value": "v"}]}, [
        ("TableName", STR), ("AttributeDefinitions", LIST), ("AttributeDefinitions.0", STRUCT),
        ("AttributeDefinitions.0.AttributeName", STR),
        ("AttributeDefinitions.0.AttributeType", STR), ("KeySchema", LIST),
        ("KeySchema.0", STRUCT), ("KeySchema.0.AttributeName", STR), ("KeySchema.0.KeyType", STR),
        ("LocalSecondaryIndexes", LIST), ("GlobalSecondaryIndexes", LIST), ("BillingMode", STR),
        ("ProvisionedThroughput", STRUCT), ("ProvisionedThroughput.ReadCapacityUnits", LONG),
        ("ProvisionedThroughput.WriteCapacityUnits", LONG), ("StreamSpecification", STRUCT),
        ("StreamSpecification.StreamEnabled", BOOL), ("StreamSpecification.StreamViewType", STR),
        ("SSESpecification", STRUCT), ("SSESpecification.Enabled", BOOL),
        ("SSESpecification.SSEType", STR), ("Tags", LIST), ("Tags.0", STRUCT),
        ("Tags.0.Key", STR), ("Tags.0.Value", STR), ("TableClass", STR),
        ("DeletionProtectionEnabled", BOOL), ("ResourcePolicy", STR),
        ("OnDemandThroughput", STRUCT), ("OnDemandThroughput.MaxReadRequestUnits", LONG),
        ("WarmThroughput", STRUCT),
    ]),
    # Backups: each base names a backup or table that does not exist, so a type mismatch
    # that goes unnoticed shows up as BackupNotFoundException or TableNotFoundException.
    ("CreateBackup", {"TableName": "bad-input-no-such-table", "BackupName": "typed"}, [
        ("TableName", STR), ("BackupName", STR),
    ]),
    ("DescribeBackup", {"BackupArn": NO_BACKUP}, [("BackupArn", STR)]),
    ("DeleteBackup", {"BackupArn": NO_BACKUP}, [("BackupArn", STR)]),
    ("ListBackups", {"TableName": MAIN, "Limit": 5}, [
        ("TableName", STR), ("Limit", INT), ("TimeRangeLowerBound", TIME),
        ("TimeRangeUpperBound", TIME), ("ExclusiveStartBackupArn", STR), ("BackupType", STR),
    ]),
    ("RestoreTableFromBackup", {"TargetTableName": "bad-input-restored",
                                "BackupArn": NO_BACKUP}, [
        ("TargetTableName", STR), ("BackupArn", STR), ("BillingModeOverride", STR),
        ("GlobalSecondaryIndexOverride", LIST),
        ("LocalSecondaryIndexOverride", LIST), ("ProvisionedThroughputOverride", STRUCT),
        ("ProvisionedThroughputOverride.ReadCapacityUnits", LONG),
        ("SSESpecificationOverride", STRUCT), ("SSESpecificationOverride.Enabled", BOOL),
        ("SSESpecificationOverride.KMSMasterKeyId", STR), ("OnDemandThroughputOverride", STRUCT),
        ("OnDemandThroughputOverride.MaxWriteRequestUnits", LONG),
    ]),
    # Point-in-time recovery: the base names a table that does not exist
    # (TableNotFoundException when the mismatch goes unnoticed).
    ("UpdateContinuousBackups", {"TableName": "bad-input-no-such-table",
                                 "PointInTimeRecoverySpecification": {
                                     "PointInTimeRecoveryEnabled": True}}, [
        ("TableName", STR), ("PointInTimeRecoverySpecification", STRUCT),
        ("PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled", BOOL),
        ("PointInTimeRecoverySpecification.RecoveryPeriodInDays", INT),
    ]),
    ("DescribeContinuousBackups", {"TableName": "bad-input-no-such-table"}, [("TableName", STR)]),
    ("RestoreTableToPointInTime", {"SourceTableName": "bad-input-no-such-table",
                                   "TargetTableName": "bad-input-restored",
                                   "UseLatestRestorableTime": True}, [
        ("SourceTableName", STR), ("SourceTableArn", STR), ("TargetTableName", STR),
        ("UseLatestRestorableTime", BOOL), ("RestoreDateTime", TIME),
        ("BillingModeOverride", STR), ("GlobalSecondaryIndexOverride", LIST),
        ("LocalSecondaryIndexOverride", LIST), ("ProvisionedThroughputOverride", STRUCT),
        ("ProvisionedThroughputOverride.ReadCapacityUnits", LONG),
        ("SSESpecificationOverride", STRUCT), ("SSESpecificationOverride.Enabled", BOOL),
        ("OnDemandThroughputOverride", STRUCT),
        ("OnDemandThroughputOverride.MaxWriteRequestUnits", LONG),
    ]),
    # Exports and imports: each base names an export, import or table that does not exist
    # (or, for ImportTable, a table that does), so nothing is made.
    ("ExportTableToPointInTime", {"TableArn": NO_TABLE_ARN, "S3Bucket": "bucket"}, [
        ("TableArn", STR), ("S3Bucket", STR), ("S3BucketOwner", STR), ("S3Prefix", STR),
        ("ExportTime", TIME), ("ClientToken", STR), ("S3SseAlgorithm", STR),
        ("S3SseKmsKeyId", STR), ("ExportFormat", STR), ("ExportType", STR),
        ("IncrementalExportSpecification", STRUCT),
        ("IncrementalExportSpecification.ExportFromTime", TIME),
        ("IncrementalExportSpecification.ExportViewType", STR),
    ]),
    ("DescribeExport", {"ExportArn": NO_EXPORT}, [("ExportArn", STR)]),
    ("ListExports", {"MaxResults": 5}, [
        ("TableArn", STR), ("MaxResults", INT), ("NextToken", STR),
    ]),
    ("ImportTable", {"ClientToken": "typed", "S3BucketSource": {"S3Bucket": "bucket"},
                     "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {
                         "TableName": MAIN, "BillingMode": "PAY_PER_REQUEST",
                         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                         "AttributeDefinitions": [{"AttributeName": "pk",
                                                   "AttributeType": "S"}]}}, [
        ("ClientToken", STR), ("S3BucketSource", STRUCT), ("S3BucketSource.S3Bucket", STR),
        ("S3BucketSource.S3KeyPrefix", STR), ("S3BucketSource.S3BucketOwner", STR),
        ("InputFormat", STR), ("InputCompressionType", STR), ("InputFormatOptions", STRUCT),
        ("TableCreationParameters", STRUCT), ("TableCreationParameters.TableName", STR),
        ("TableCreationParameters.KeySchema", LIST),
    ]),
    ("DescribeImport", {"ImportArn": NO_IMPORT}, [("ImportArn", STR)]),
    ("ListImports", {"PageSize": 5}, [
        ("TableArn", STR), ("PageSize", INT), ("NextToken", STR),
    ]),
    ("UpdateContributorInsights", {"TableName": MAIN, "ContributorInsightsAction": "DISABLE"}, [
        ("TableName", STR), ("IndexName", STR), ("ContributorInsightsAction", STR),
        ("ContributorInsightsMode", STR),
    ]),
    ("DescribeContributorInsights", {"TableName": MAIN}, [
        ("TableName", STR), ("IndexName", STR),
    ]),
    ("ListContributorInsights", {"TableName": MAIN, "MaxResults": 5}, [
        ("TableName", STR), ("NextToken", STR), ("MaxResults", INT),
    ]),
]

def set_path(body, path, value):
    parts = path.split(".")
    node = body
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def type_cases():
    out = []
    for op, base, members in MEMBERS:
        seen = set()
        for path, kind in members:
            first = kind not in seen
            seen.add(kind)
            for value, message in wrong_values(kind, first):
                body = copy.deepcopy(base)
                set_path(body, path, value)
                expect = ("type", 400, SERIALIZATION) if message is ANY else ser(message)
                out.append(Case(f"{op}.{path}={json.dumps(value)}", op, body, expect,
                                bug=None))
    return out


# --------------------------------------------------------------------------- order

ITEM = {"pk": S("order")}
KEY_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]
DEFS = [{"AttributeName": "pk", "AttributeType": "S"}]


def order_cases():
    """A type mismatch next to an error of a later stage: the type mismatch is reported."""
    q = {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": S("x")}}
    upd = {"UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": S("x")}}
    cases = [
        # name, op, body, message, bug
        ("coral-table-name", "PutItem", {"TableName": "ab", "Item": ITEM,
                                         "ReturnConsumedCapacity": 5},
         "NUMBER_VALUE cannot be converted to String", None),
        ("missing-table", "PutItem", {"TableName": "no-such-table", "Item": ITEM,
                                      "ReturnValuesOnConditionCheckFailure": 5},
         "NUMBER_VALUE cannot be converted to String", None),
        ("invalid-attribute-value", "PutItem", {"TableName": MAIN, "Item": {"pk": {"SS": []}},
                                                "ReturnItemCollectionMetrics": 5},
         "NUMBER_VALUE cannot be converted to String", None),
        ("expression-syntax", "PutItem", {"TableName": MAIN, "Item": ITEM,
                                          "ConditionExpression": "a = = b",
                                          "ExpressionAttributeNames": 5}, FIELD, None),
        ("projection-syntax", "GetItem", {"TableName": MAIN, "Key": ITEM,
                                          "ProjectionExpression": "a,,b",
                                          "ReturnConsumedCapacity": True},
         "TRUE_VALUE cannot be converted to String", None),
        ("query-missing-table", "Query", dict(q, TableName="no-such-table", Limit="5"),
         "STRING_VALUE cannot be converted to Integer", None),
        ("query-coral-limit", "Query", dict(q, TableName=MAIN, Limit=0, Select=5),
         "NUMBER_VALUE cannot be converted to String", None),
        ("scan-segments", "Scan", {"TableName": MAIN, "Segment": 5, "TotalSegments": "x"},
         "STRING_VALUE cannot be converted to Integer", None),
        ("batch-missing-table", "BatchWriteItem", {
            "RequestItems": {"no-such-table": [{"PutRequest": {"Item": ITEM}}]},
            "ReturnConsumedCapacity": 5}, "NUMBER_VALUE cannot be converted to String", None),
        ("transact-duplicate-item", "TransactWriteItems", {
            "TransactItems": [{"Put": {"TableName": MAIN, "Item": ITEM}}] * 2,
            "ClientRequestToken": 5}, "NUMBER_VALUE cannot be converted to String", None),
        ("create-existing-table", "CreateTable", {
            "TableName": MAIN, "KeySchema": KEY_SCHEMA, "AttributeDefinitions": DEFS,
            "BillingMode": "PAY_PER_REQUEST", "Tags": 5}, FIELD, None),
        ("update-unused-value", "UpdateItem", dict(
            upd, TableName=MAIN, Key=ITEM, ReturnValues=5,
            ExpressionAttributeValues={":v": S("x"), ":unused": S("y")}),
         "NUMBER_VALUE cannot be converted to String", None),
        # Legacy and expression members together (a semantic error) plus a type mismatch.
        ("get-projection-and-attributes-to-get", "GetItem", {
            "TableName": MAIN, "Key": KEY, "AttributesToGet": ["a"], "ProjectionExpression": 5},
         "NUMBER_VALUE cannot be converted to String", None),
        ("update-expression-and-attribute-updates", "UpdateItem", dict(
            upd, TableName=MAIN, Key=KEY, AttributeUpdates="x"), FIELD, None),
        ("update-expression-and-expected", "UpdateItem", dict(
            upd, TableName=MAIN, Key=KEY, Expected={"a": []}), START_LIST, None),
        ("update-expression-and-conditional-operator", "UpdateItem", dict(
            upd, TableName=MAIN, Key=KEY, ConditionalOperator=True),
         "TRUE_VALUE cannot be converted to String", None),
        ("query-expression-and-query-filter", "Query", dict(q, TableName=MAIN, QueryFilter=5),
         FIELD, None),
        ("query-expression-and-key-conditions", "Query", dict(
            q, TableName=MAIN, KeyConditions={"pk": "x"}), FIELD, None),
        ("scan-filter-and-filter-expression", "Scan", {
            "TableName": MAIN, "ScanFilter": {"a": LEGACY_COND}, "FilterExpression": ["a"]},
         "Unrecognized collection type class java.lang.String", None),
        ("insights-coral-and-missing-table", "UpdateContributorInsights", {
            "TableName": "no-such-table", "IndexName": "ix", "ContributorInsightsAction": "ON",
            "ContributorInsightsMode": 5}, "NUMBER_VALUE cannot be converted to String", None),
        ("insights-list-bounds", "ListContributorInsights", {
            "MaxResults": 1000, "NextToken": True}, "TRUE_VALUE cannot be converted to String",
         None),
    ]
    return [Case(name, op, body, ser(msg), bug=bug) for name, op, body, msg, bug in cases]

