"""ImportTable, DescribeImport and ListImports: DynamoDB's validation and answers, a round
trip through an export, a hand-written export in AWS's layout, CSV, the compressions, the
table CREATING while an import runs, and an import cut by kill -9."""

import gzip
import json
import os
import re
import shutil

import pytest

from data_helpers import (  # noqa: F401
    ACCESS_DENIED,
    BUCKET,
    IMPORT_CONFLICT,
    IMPORT_NOT_FOUND,
    RESOURCE_IN_USE,
    VALIDATION,
    arn_of,
    create_table,
    dapi,
    data_server,
    describe_import,
    every_type_item,
    export,
    fill,
    import_table,
    own_data_server,
    table_items,
    wait_export,
    wait_import,
    zstd_compress,
)
from kumo_testlib import Api, N, S, wait_until  # noqa: F401

pytestmark = pytest.mark.single_process("the local S3 is one process's directory")

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "aws-export")
ITEM_VALIDATION = ("Some of the items failed validation checks and were not imported. Please "
                   "check CloudWatch error logs for more details.")
NOT_FOUND = "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"
TABLE_NOT_FOUND = "com.amazonaws.dynamodb.v20120810#TableNotFoundException"
CONTINUOUS_BACKUPS_UNAVAILABLE = (
    "com.amazonaws.dynamodb.v20120810#ContinuousBackupsUnavailableException")


def error(resp, type_, message):
    assert resp.status == 400, resp
    assert resp.full_type == type_, resp
    assert resp.message == message, resp


def put_object(server, key, data):
    path = os.path.join(server.s3_root, BUCKET, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def error_log(server, import_arn):
    """The events of an import's errors log (log group /aws-dynamodb/imports, stream
    <import id>/error), kept in the export root; None when the import wrote none."""
    path = os.path.join(server.s3_root, ".cloudwatch", "aws-dynamodb", "imports",
                        import_arn.rsplit("/", 1)[1], "error")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [json.loads(line) for line in f]


def log_event(import_arn, key, index, message):
    return {"itemS3Pointer": {"bucket": BUCKET, "key": key, "itemIndex": index},
            "importArn": import_arn, "errorMessages": [message]}


def test_round_trip_through_an_export(dapi, data_server):
    create_table(dapi, "rt_src")
    for i in range(30):
        dapi.ok("PutItem", {"TableName": "rt_src", "Item": every_type_item(f"p{i % 7}", i)})
    source = table_items(dapi, "rt_src")
    for fmt in ("DYNAMODB_JSON", "ION"):
        done = wait_export(dapi, export(dapi, "rt_src", ExportFormat=fmt,
                                        S3Prefix=f"rt-{fmt}")["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED"
        export_id = done["ExportArn"].rsplit("/", 1)[1]
        target = f"rt_dst_{fmt.lower()}"
        started = import_table(dapi, target, prefix=f"rt-{fmt}/AWSDynamoDB/{export_id}/data/",
                               fmt=fmt, compression="GZIP")
        assert started["ImportStatus"] == "IN_PROGRESS"
        finished = wait_import(dapi, started["ImportArn"])
        assert finished["ImportStatus"] == "COMPLETED", finished
        assert finished["ProcessedItemCount"] == finished["ImportedItemCount"] == 30
        assert finished["ErrorCount"] == 0 and finished["ProcessedSizeBytes"] > 0
        assert error_log(data_server, started["ImportArn"]) is None
        assert dapi.ok("DescribeTable", {"TableName": target})["Table"]["TableStatus"] == "ACTIVE"
        assert table_items(dapi, target) == source


def test_the_import_description(dapi, data_server):
    put_object(data_server, "desc/one.json", '{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}\n')
    started = import_table(dapi, "desc_t", prefix="desc/", token="tok-desc")
    m = re.fullmatch(r"arn:aws:dynamodb:us-east-1:000000000000:table/desc_t/import/"
                     r"(\d{14})-[0-9a-f]{8}", started["ImportArn"])
    assert m and int(m[1]) == round(started["StartTime"] * 1000)
    assert set(started) == {"ImportArn", "ImportStatus", "TableArn", "TableId", "ClientToken",
                            "S3BucketSource", "ErrorCount", "CloudWatchLogGroupArn",
                            "InputFormat", "InputCompressionType", "TableCreationParameters",
                            "StartTime", "ProcessedItemCount", "ImportedItemCount"}
    assert started["S3BucketSource"] == {"S3Bucket": BUCKET, "S3BucketOwner": "000000000000",
                                         "S3KeyPrefix": "desc/"}
    assert started["InputCompressionType"] == "NONE"
    assert started["CloudWatchLogGroupArn"] == (
        "arn:aws:logs:us-east-1:000000000000:log-group:/aws-dynamodb/imports:*")
    assert started["TableCreationParameters"]["TableName"] == "desc_t"
    assert started["TableArn"] == arn_of("desc_t")
    done = wait_import(dapi, started["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED"
    assert set(done) == set(started) | {"EndTime", "ProcessedSizeBytes"}
    assert done["TableId"] == started["TableId"]
    assert done["ProcessedSizeBytes"] == len('{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}\n')
    table = dapi.ok("DescribeTable", {"TableName": "desc_t"})["Table"]
    assert table["TableId"] == started["TableId"] and "RestoreSummary" not in table
    # Once the table exists, a replay is refused before the token is consulted.
    error(dapi("ImportTable", {"ClientToken": "tok-desc", "S3BucketSource": {"S3Bucket": BUCKET},
                               "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {
                                   "TableName": "desc_t", "BillingMode": "PAY_PER_REQUEST",
                                   "AttributeDefinitions": [
                                       {"AttributeName": "pk", "AttributeType": "S"}],
                                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}}),
          RESOURCE_IN_USE, "Table already exists: desc_t")
    # Deleted, the replay returns the old import and makes nothing.
    dapi.ok("DeleteTable", {"TableName": "desc_t"})
    again = import_table(dapi, "desc_t", prefix="desc/", token="tok-desc")
    assert again["ImportArn"] == started["ImportArn"]
    error(dapi("DescribeTable", {"TableName": "desc_t"}), NOT_FOUND,
          "Requested resource not found: Table: desc_t not found")
    # The same token for another table conflicts.
    resp = dapi("ImportTable", {"ClientToken": "tok-desc", "S3BucketSource": {"S3Bucket": BUCKET},
                                "InputFormat": "DYNAMODB_JSON", "TableCreationParameters": {
                                    "TableName": "desc_other", "BillingMode": "PAY_PER_REQUEST",
                                    "AttributeDefinitions": [
                                        {"AttributeName": "pk", "AttributeType": "S"}],
                                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}})
    error(resp, IMPORT_CONFLICT,
          "Import conflict: Duplicate request detected with conflicting parameters")


def test_a_hand_written_aws_export(dapi, data_server):
    shutil.copytree(FIXTURE, os.path.join(data_server.s3_root, BUCKET, "aws"))
    done = wait_import(dapi, import_table(
        dapi, "aws_t", prefix="aws/AWSDynamoDB/01700000000000-5d3e2a1b/data/",
        compression="GZIP")["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED", done
    assert done["ImportedItemCount"] == 3
    items = {i["pk"][1]: i for i in table_items(dapi, "aws_t")}
    assert items["user1"]["binaryfoo"] == ("B", "YmFy")
    assert items["user2"]["tags"] == ("SS", frozenset({"a", "b"}))
    assert items["user3"]["nested"] == ("M", {"l": ("L", (("N", "1"), ("NULL", True)))})


def test_csv(dapi, data_server):
    put_object(data_server, "csv/a.csv",
               'pk,sk,name,empty,quote\n'
               'a,1,Alice,,"Women\'s Full ""Length"" Dress"\n'
               'b,2.50,"Bob, Jr.",x,\n')
    done = wait_import(dapi, import_table(dapi, "csv_t", prefix="csv/", fmt="CSV")["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED", done
    assert "InputFormatOptions" not in done
    assert table_items(dapi, "csv_t") == [
        {"pk": ("S", "a"), "sk": ("N", "1"), "name": ("S", "Alice"),
         "quote": ("S", 'Women\'s Full "Length" Dress')},
        {"pk": ("S", "b"), "sk": ("N", "2.5"), "name": ("S", "Bob, Jr."), "empty": ("S", "x")}]
    # A header list and another delimiter: the first line is data.
    put_object(data_server, "csv2/a.csv", "a;1;x\nb;2;y\n")
    options = {"Csv": {"Delimiter": ";", "HeaderList": ["pk", "sk", "v"]}}
    started = import_table(dapi, "csv_h", prefix="csv2/", fmt="CSV", InputFormatOptions=options)
    assert started["InputFormatOptions"] == options
    done = wait_import(dapi, started["ImportArn"])
    assert done["ImportedItemCount"] == 2
    assert [i["v"] for i in table_items(dapi, "csv_h")] == [("S", "x"), ("S", "y")]


def test_compressions(dapi, data_server):
    lines = "".join(f'{{"Item":{{"pk":{{"S":"k{i}"}},"sk":{{"N":"{i}"}}}}}}\n' for i in range(5))
    put_object(data_server, "zstd/a.zst", zstd_compress(lines.encode()))
    put_object(data_server, "none/a", lines)
    put_object(data_server, "gzip/a.gz", gzip.compress(lines.encode()))
    sizes = set()
    for name, prefix, compression in [("z_t", "zstd/", "ZSTD"), ("n_t", "none/", "NONE"),
                                      ("g_t", "gzip/", "GZIP")]:
        done = wait_import(dapi, import_table(dapi, name, prefix=prefix,
                                              compression=compression)["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED", done
        assert done["ImportedItemCount"] == 5 and done["InputCompressionType"] == compression
        sizes.add(done["ProcessedSizeBytes"])
        assert len(table_items(dapi, name)) == 5
    # Uncompressed bytes, whatever the compression.
    assert sizes == {len(lines)}
    # Declared GZIP, plain object: one error for the object.
    done = wait_import(dapi, import_table(dapi, "bad_gz", prefix="none/",
                                          compression="GZIP")["ImportArn"])
    assert (done["ImportStatus"], done["ErrorCount"], done["ImportedItemCount"]) == (
        "FAILED", 1, 0)
    [event] = error_log(data_server, done["ImportArn"])
    assert event["itemS3Pointer"] == {"bucket": BUCKET, "key": "none/a", "itemIndex": 0}
    assert len(event["errorMessages"]) == 1 and event["errorMessages"][0]


def test_bad_lines(dapi, data_server):
    good = [f'{{"Item":{{"pk":{{"S":"k{i}"}},"sk":{{"N":"{i}"}}}}}}' for i in range(10)]
    missing_key = list(good)
    missing_key[3] = '{"Item":{"pk":{"S":"k3"}}}'
    put_object(data_server, "bad1/a.json", "\n".join(missing_key) + "\n\n   \n")
    done = wait_import(dapi, import_table(dapi, "bad1_t", prefix="bad1/")["ImportArn"])
    assert (done["ImportStatus"], done["FailureCode"], done["FailureMessage"]) == (
        "FAILED", "ItemValidationError", ITEM_VALIDATION)
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (10, 9, 1)
    # One event per item refused, in the errors log the failure message points to.
    assert error_log(data_server, done["ImportArn"]) == [log_event(
        done["ImportArn"], "bad1/a.json", 3,
        "One or more parameter values were invalid: Missing the key sk in the item")]
    assert len(table_items(dapi, "bad1_t")) == 9
    assert dapi.ok("DescribeTable", {"TableName": "bad1_t"})["Table"]["TableStatus"] == "ACTIVE"
    # An unparseable line abandons the rest of its object.
    broken = list(good)
    broken[5] = "{not json"
    put_object(data_server, "bad2/a.json", "\n".join(broken) + "\n")
    done = wait_import(dapi, import_table(dapi, "bad2_t", prefix="bad2/")["ImportArn"])
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (6, 5, 1)
    [event] = error_log(data_server, done["ImportArn"])
    assert event["itemS3Pointer"] == {"bucket": BUCKET, "key": "bad2/a.json", "itemIndex": 5}
    assert event["importArn"] == done["ImportArn"] and event["errorMessages"][0]


def test_a_missing_bucket_and_an_empty_prefix(dapi):
    done = wait_import(dapi, import_table(dapi, "nb_t", bucket="no-such-bucket")["ImportArn"])
    assert done["ImportStatus"] == "FAILED" and done["FailureCode"] == "S3NoSuchBucket"
    assert done["FailureMessage"].startswith("The specified bucket does not exist")
    assert done["TableId"]
    error(dapi("DescribeTable", {"TableName": "nb_t"}), NOT_FOUND,
          "Requested resource not found: Table: nb_t not found")
    done = wait_import(dapi, import_table(dapi, "empty_t", prefix="nothing-here/")["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED" and done["ProcessedItemCount"] == 0
    assert table_items(dapi, "empty_t") == []


def base_request(**over):
    body = {"ClientToken": "t", "S3BucketSource": {"S3Bucket": BUCKET},
            "InputFormat": "DYNAMODB_JSON",
            "TableCreationParameters": {
                "TableName": "val_t", "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}}
    body.update(over)
    return body


@pytest.mark.parametrize("over,message", [
    ({"InputFormatOptions": {"Csv": {"Delimiter": ","}}},
     "Invalid Request: Unsupported InputFormatOptions for the given input format: DYNAMODB_JSON."),
    ({"InputCompressionType": "BZIP2"},
     "1 validation error detected: Value 'BZIP2' at 'inputCompressionType' failed to satisfy "
     "constraint: Member must satisfy enum value set: [ZSTD, NONE, GZIP]"),
    ({"TableCreationParameters": {
        "TableName": "val_t",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}},
     "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must "
     "both be specified when BillingMode is PROVISIONED"),
])
def test_import_validation(api, over, message):
    error(api("ImportTable", base_request(**over)), VALIDATION, message)


COR = "1 validation error detected: "
INVALID = "One or more parameter values were invalid: "
PK = [{"AttributeName": "pk", "AttributeType": "S"}]
PK_G = PK + [{"AttributeName": "g", "AttributeType": "S"}]
HASH_PK = [{"AttributeName": "pk", "KeyType": "HASH"}]
THROUGHPUT = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}


def gsi(**extra):
    return {"IndexName": "g_idx", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, **extra}


def parameters(drop=(), **over):
    """TableCreationParameters of base_request with members dropped or replaced."""
    p = dict(base_request()["TableCreationParameters"], **over)
    for member in drop:
        p.pop(member)
    return p


# TableCreationParameters is checked as CreateTable's request, with the model's violations
# reported under 'tableCreationParameters.'.
@pytest.mark.parametrize("params,message", [
    (parameters(drop=["KeySchema"]),
     COR + "Value null at 'tableCreationParameters.keySchema' failed to satisfy constraint: "
     "Member must not be null"),
    (parameters(drop=["AttributeDefinitions"]),
     COR + "Value null at 'tableCreationParameters.attributeDefinitions' failed to satisfy "
     "constraint: Member must not be null"),
    (parameters(drop=["TableName"]),
     COR + "Value null at 'tableCreationParameters.tableName' failed to satisfy constraint: "
     "Member must not be null"),
    (parameters(TableName="bad name!"),
     COR + "Value 'bad name!' at 'tableCreationParameters.tableName' failed to satisfy "
     "constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    (parameters(AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "X"}]),
     COR + "Value 'X' at 'tableCreationParameters.attributeDefinitions.1.member.attributeType' "
     "failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]"),
    (parameters(KeySchema=[{"AttributeName": "pk", "KeyType": "SORT"}]),
     COR + "Value 'SORT' at 'tableCreationParameters.keySchema.1.member.keyType' failed to "
     "satisfy constraint: Member must satisfy enum value set: [HASH, RANGE]"),
    (parameters(BillingMode="FREE"),
     COR + "Value 'FREE' at 'tableCreationParameters.billingMode' failed to satisfy "
     "constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"),
    (parameters(BillingMode="PROVISIONED",
                ProvisionedThroughput={"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}),
     COR + "Value '0' at 'tableCreationParameters.provisionedThroughput.readCapacityUnits' "
     "failed to satisfy constraint: Member must have value greater than or equal to 1"),
    (parameters(AttributeDefinitions=[{"AttributeName": "other", "AttributeType": "S"}]),
     INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [pk], "
     "AttributeDefinitions: [other]"),
    (parameters(AttributeDefinitions=PK_G),
     INVALID + "Number of attributes in KeySchema does not exactly match number of attributes "
     "defined in AttributeDefinitions"),
    (parameters(AttributeDefinitions=PK + PK),
     "Attribute Name is duplicated: pk"),
    (parameters(KeySchema=HASH_PK + HASH_PK, AttributeDefinitions=PK_G),
     "Both the Hash Key and the Range Key element in the KeySchema have the same name"),
    (parameters(ProvisionedThroughput=THROUGHPUT),
     INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
     "BillingMode is PAY_PER_REQUEST"),
    (parameters(BillingMode="PROVISIONED"),
     INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when "
     "BillingMode is PROVISIONED"),
    (parameters(BillingMode="PROVISIONED", ProvisionedThroughput=THROUGHPUT,
                OnDemandThroughput={"MaxWriteRequestUnits": 5}),
     INVALID + "MaxWriteRequestUnits for OnDemandThroughput cannot be specified when table "
     "BillingMode is PROVISIONED."),
    (parameters(GlobalSecondaryIndexes=[]),
     INVALID + "List of GlobalSecondaryIndexes is empty"),
    (parameters(AttributeDefinitions=PK_G,
                GlobalSecondaryIndexes=[gsi(ProvisionedThroughput=THROUGHPUT)]),
     INVALID + "ProvisionedThroughput should not be specified for index: g_idx when "
     "BillingMode is PAY_PER_REQUEST"),
    (parameters(AttributeDefinitions=PK_G, BillingMode="PROVISIONED",
                ProvisionedThroughput=THROUGHPUT, GlobalSecondaryIndexes=[gsi()]),
     INVALID + "ProvisionedThroughput is not specified for index: g_idx"),
    (parameters(AttributeDefinitions=PK_G,
                GlobalSecondaryIndexes=[gsi(Projection={})]),
     INVALID + "Unknown ProjectionType: null"),
    (parameters(AttributeDefinitions=PK_G, GlobalSecondaryIndexes=[gsi(), gsi()]),
     INVALID + "Duplicate index name: g_idx"),
    (parameters(AttributeDefinitions=PK_G + [{"AttributeName": "x", "AttributeType": "S"}],
                GlobalSecondaryIndexes=[gsi()]),
     INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: [pk, g, x], keys "
     "used: [pk, g]"),
])
def test_table_creation_parameters(api, params, message):
    error(api("ImportTable", base_request(TableCreationParameters=params)), VALIDATION, message)


def test_table_creation_parameters_join_the_other_violations(api):
    body = base_request(TableCreationParameters=parameters(drop=["KeySchema"]))
    body.pop("ClientToken")
    resp = api("ImportTable", body)
    assert resp.full_type == VALIDATION
    assert resp.message.startswith("2 validation errors detected: ")
    assert "Value null at 'clientToken' failed to satisfy constraint" in resp.message
    assert "Value null at 'tableCreationParameters.keySchema' failed" in resp.message


def test_members_create_table_has_and_table_creation_parameters_has_not(dapi):
    # Unknown members of TableCreationParameters, ignored whatever they hold.
    params = parameters(TableName="extra_members_t",
                        LocalSecondaryIndexes="not a list",
                        StreamSpecification={"StreamEnabled": True},
                        Tags=[{"Key": "k"}], TableClass="NO_SUCH_CLASS",
                        DeletionProtectionEnabled=True)
    body = base_request(TableCreationParameters=params, ClientToken="extra-members",
                        S3BucketSource={"S3Bucket": BUCKET, "S3KeyPrefix": "nothing-here/"})
    done = wait_import(dapi, dapi.ok("ImportTable", body)["ImportTableDescription"]["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED"
    table = dapi.ok("DescribeTable", {"TableName": "extra_members_t"})["Table"]
    assert "LocalSecondaryIndexes" not in table and "StreamSpecification" not in table
    assert table["DeletionProtectionEnabled"] is False
    assert dapi.ok("ListTagsOfResource", {"ResourceArn": table["TableArn"]})["Tags"] == []
    dapi.ok("DeleteTable", {"TableName": "extra_members_t"})


def test_bad_delimiter(api):
    resp = api("ImportTable", base_request(InputFormat="CSV",
                                           InputFormatOptions={"Csv": {"Delimiter": ";;"}}))
    assert resp.full_type == VALIDATION
    assert resp.message.startswith(
        "2 validation errors detected: Value ';;' at 'inputFormatOptions.csv.delimiter' failed "
        "to satisfy constraint: Member must")


def test_an_existing_table(api, make_table):
    table = make_table()
    body = base_request()
    body["TableCreationParameters"]["TableName"] = table
    error(api("ImportTable", body), RESOURCE_IN_USE, f"Table already exists: {table}")


@pytest.mark.parametrize("arn,type_,message", [
    (arn_of("tbl"), VALIDATION, "Invalid Import ARN"),
    (arn_of("tbl") + "/export/01700000000000-0000abcd", VALIDATION, "Invalid Import ARN"),
    ("arn:aws:dynamodb:us-east-1:000000000000:table/t/import/01700000000000-0000abcd",
     VALIDATION, "Invalid Import ARN"),
    ("arn:aws:dynamodb:us-east-1:123456789012:table/tbl/import/01700000000000-0000abcd",
     ACCESS_DENIED, "Access is denied"),
    (arn_of("tbl") + "/import/01700000000000-0000abcd", IMPORT_NOT_FOUND,
     "Import not found: " + arn_of("tbl") + "/import/01700000000000-0000abcd"),
])
def test_describe_import_errors(api, arn, type_, message):
    error(api("DescribeImport", {"ImportArn": arn}), type_, message)


def test_list_imports(dapi, data_server):
    put_object(data_server, "list/a.json", '{"Item":{"pk":{"S":"a"},"sk":{"N":"1"}}}\n')
    arns = []
    for i in range(3):
        data_server.admin.advance(0.001)  # ids (newest first) start with the time
        arns.append(import_table(dapi, f"list_t{i}", prefix="list/")["ImportArn"])
    for arn in arns:
        wait_import(dapi, arn)
    page = dapi.ok("ListImports", {"TableArn": arn_of("list_t1")})
    assert [s["ImportArn"] for s in page["ImportSummaryList"]] == [arns[1]]
    summary = page["ImportSummaryList"][0]
    assert set(summary) == {"ImportArn", "ImportStatus", "TableArn", "S3BucketSource",
                            "CloudWatchLogGroupArn", "InputFormat", "StartTime", "EndTime"}
    seen, token = [], None
    while True:
        body = {"PageSize": 1}
        if token:
            body["NextToken"] = token
        page = dapi.ok("ListImports", body)
        seen += [s["ImportArn"] for s in page["ImportSummaryList"]]
        token = page.get("NextToken")
        if not token:
            break
    mine = [a for a in seen if a in arns]
    assert mine == sorted(arns, reverse=True)
    # Still listed once the table is deleted.
    dapi.ok("DeleteTable", {"TableName": "list_t1"})
    page = dapi.ok("ListImports", {"TableArn": arn_of("list_t1")})
    assert [s["ImportArn"] for s in page["ImportSummaryList"]] == [arns[1]]
    error(dapi("ListImports", {"PageSize": 26}), VALIDATION,
          "1 validation error detected: Value '26' at 'pageSize' failed to satisfy constraint: "
          "Member must have value less than or equal to 25")
    bogus = "0123456789abcdef" * 7
    error(dapi("ListImports", {"NextToken": bogus}), VALIDATION,
          f"Invalid Request: Provided nextToken is invalid: {bogus}")


def lines_of(count):
    return "".join(f'{{"Item":{{"pk":{{"S":"k{i:04}"}},"sk":{{"N":"{i}"}}}}}}\n'
                   for i in range(count))


def test_a_table_being_imported_is_creating(kumo_bin, tmp_path):
    release = tmp_path / "release"
    env = {"KUMO_BACKUP_FAULT": "import-hold:256", "KUMO_BACKUP_FAULT_RELEASE": str(release)}
    with own_data_server(kumo_bin, tmp_path, env=env) as (srv, api):
        put_object(srv, "held/a.json", lines_of(600))
        started = import_table(api, "held_t", prefix="held/")
        wait_until(lambda: api.ok("DescribeTable", {"TableName": "held_t"})["Table"][
            "ItemCount"] >= 0, timeout=10)
        table = api.ok("DescribeTable", {"TableName": "held_t"})["Table"]
        assert table["TableStatus"] == "CREATING" and "RestoreSummary" not in table
        assert describe_import(api, started["ImportArn"])["ImportStatus"] == "IN_PROGRESS"
        assert describe_import(api, started["ImportArn"])["ProcessedItemCount"] == 0
        error(api("PutItem", {"TableName": "held_t", "Item": {"pk": S("x"), "sk": N(1)}}),
              NOT_FOUND, "Requested resource not found")
        # Changes of the table are refused while it is CREATING; TagResource does not find it.
        in_use = ("Attempt to change a resource which is still in use: Table is being created: "
                  "held_t")
        error(api("DeleteTable", {"TableName": "held_t"}), RESOURCE_IN_USE, in_use)
        error(api("UpdateTable", {"TableName": "held_t", "DeletionProtectionEnabled": True}),
              RESOURCE_IN_USE, in_use)
        error(api("UpdateTimeToLive", {"TableName": "held_t", "TimeToLiveSpecification": {
            "Enabled": True, "AttributeName": "exp"}}), RESOURCE_IN_USE, in_use)
        error(api("TagResource", {"ResourceArn": arn_of("held_t"),
                                  "Tags": [{"Key": "k", "Value": "v"}]}),
              NOT_FOUND, "Requested resource not found: Table: held_t not found")
        # Backups of the table are not there yet: CreateBackup and UpdateContinuousBackups
        # say so (DescribeContinuousBackups does not know the table yet).
        unavailable = "Backups are being enabled for the table: held_t. Please retry later"
        error(api("CreateBackup", {"TableName": "held_t", "BackupName": "held_backup"}),
              CONTINUOUS_BACKUPS_UNAVAILABLE, unavailable)
        for enabled in (True, False):
            error(api("UpdateContinuousBackups", {
                "TableName": "held_t",
                "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": enabled}}),
                CONTINUOUS_BACKUPS_UNAVAILABLE, unavailable)
        error(api("DescribeContinuousBackups", {"TableName": "held_t"}), TABLE_NOT_FOUND,
              "Table not found: held_t")
        release.write_text("go")
        done = wait_import(api, started["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED" and done["ImportedItemCount"] == 600
        assert api.ok("DescribeTable", {"TableName": "held_t"})["Table"]["TableStatus"] == "ACTIVE"
        api.ok("UpdateTable", {"TableName": "held_t", "DeletionProtectionEnabled": False})
        api.ok("UpdateTimeToLive", {"TableName": "held_t", "TimeToLiveSpecification": {
            "Enabled": True, "AttributeName": "exp"}})
        api.ok("CreateBackup", {"TableName": "held_t", "BackupName": "held_backup"})
        api.ok("UpdateContinuousBackups", {
            "TableName": "held_t",
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}})


def test_an_import_losing_the_race_for_its_name_fails(kumo_bin, tmp_path):
    release = tmp_path / "release"
    env = {"KUMO_BACKUP_FAULT": "import-hold:256", "KUMO_BACKUP_FAULT_RELEASE": str(release)}
    with own_data_server(kumo_bin, tmp_path, env=env) as (srv, api):
        put_object(srv, "win/a.json", lines_of(600))
        put_object(srv, "lose/a.json", '{"Item":{"pk":{"S":"lost"},"sk":{"N":"1"}}}\n')
        winner = import_table(api, "race_t", prefix="win/", token="tok-win")
        # The name of a table another import still creates is accepted: the call answers as
        # for any import, and the import ends FAILED at once.
        loser = import_table(api, "race_t", prefix="lose/", token="tok-lose")
        assert loser["ImportStatus"] == "IN_PROGRESS"
        assert loser["ImportArn"] != winner["ImportArn"]
        assert loser["TableArn"] == winner["TableArn"] and loser["TableId"] != winner["TableId"]
        lost = describe_import(api, loser["ImportArn"])
        assert set(lost) == set(loser) | {"EndTime", "FailureCode", "FailureMessage"}
        assert {k: lost[k] for k in ("ImportStatus", "FailureCode", "FailureMessage",
                                     "ProcessedItemCount", "ImportedItemCount", "ErrorCount")} == {
            "ImportStatus": "FAILED", "FailureCode": "TableAlreadyExists",
            "FailureMessage": "Table already exists: race_t", "ProcessedItemCount": 0,
            "ImportedItemCount": 0, "ErrorCount": 0}
        assert {k: lost[k] for k in set(loser) - {"ImportStatus"}} == {
            k: loser[k] for k in set(loser) - {"ImportStatus"}}
        assert lost["EndTime"] == lost["StartTime"]
        assert describe_import(api, winner["ImportArn"])["ImportStatus"] == "IN_PROGRESS"
        # Its token answers the failed import.
        assert import_table(api, "race_t", prefix="lose/", token="tok-lose")["ImportArn"] == (
            loser["ImportArn"])
        release.write_text("go")
        done = wait_import(api, winner["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED" and done["ImportedItemCount"] == 600
        items = table_items(api, "race_t")
        assert len(items) == 600 and all(i["pk"] != ("S", "lost") for i in items)
        assert describe_import(api, loser["ImportArn"]) == lost


def test_an_import_client_token_is_valid_8_hours_after_the_import_ends(kumo_bin, tmp_path):
    with own_data_server(kumo_bin, tmp_path) as (srv, api):
        put_object(srv, "tok/a.json", lines_of(3))
        done = wait_import(api, import_table(api, "tok_t", prefix="tok/", token="tok-8h")[
            "ImportArn"])
        assert done["ImportStatus"] == "COMPLETED"
        # Its table deleted, 7 h 59 min after it ended: the same import, and no table.
        api.ok("DeleteTable", {"TableName": "tok_t"})
        srv.admin.advance(done["EndTime"] + 8 * 3600 - 60 - srv.admin.now())
        assert import_table(api, "tok_t", prefix="tok/", token="tok-8h") == done
        assert "tok_t" not in api.ok("ListTables", {})["TableNames"]
        # Past 8 hours the token is free: a new import makes the table again.
        srv.admin.advance(61)
        fresh = import_table(api, "tok_t", prefix="tok/", token="tok-8h")
        assert fresh["ImportArn"] != done["ImportArn"] and fresh["ImportStatus"] == "IN_PROGRESS"
        fresh = wait_import(api, fresh["ImportArn"])
        assert fresh["ImportStatus"] == "COMPLETED" and fresh["ImportedItemCount"] == 3
        assert len(table_items(api, "tok_t")) == 3
        assert describe_import(api, done["ImportArn"]) == done


def test_an_import_cut_by_kill_completes_after_restart(kumo_bin, tmp_path):
    with own_data_server(kumo_bin, tmp_path, data_dir=str(tmp_path / "db"),
                         env={"KUMO_BACKUP_FAULT": "import-kill:256"}) as (srv, api):
        put_object(srv, "cut/a.json", lines_of(600))
        started = import_table(api, "cut_t", prefix="cut/")
        wait_until(lambda: not srv.alive(), timeout=20, what="the server killed mid-import")
        srv.start()
        api = Api(srv.port)
        done = wait_import(api, started["ImportArn"])
        assert done["ImportStatus"] == "COMPLETED", done
        assert (done["ProcessedItemCount"], done["ImportedItemCount"]) == (600, 600)
        assert len(table_items(api, "cut_t")) == 600


def test_import_records_expire_90_days_after_they_end(kumo_bin, tmp_path):
    with own_data_server(kumo_bin, tmp_path) as (srv, api):
        put_object(srv, "exp/a.json", lines_of(3))
        done = wait_import(api, import_table(api, "exp_t", prefix="exp/")["ImportArn"])
        arn = done["ImportArn"]

        def listed():
            return [s["ImportArn"] for s in api.ok("ListImports", {
                "TableArn": arn_of("exp_t")})["ImportSummaryList"]]

        assert listed() == [arn]
        # Kept 90 days after its end: still there a second before, gone a second after.
        srv.admin.advance(done["EndTime"] + 90 * 86400 - 1 - srv.admin.now())
        assert describe_import(api, arn) == done
        assert listed() == [arn]
        srv.admin.advance(2)
        error(api("DescribeImport", {"ImportArn": arn}), IMPORT_NOT_FOUND,
              "Import not found: " + arn)
        assert listed() == []
        assert api.ok("ListImports", {})["ImportSummaryList"] == []
        # The table it made stays.
        assert len(table_items(api, "exp_t")) == 3
