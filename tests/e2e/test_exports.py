"""ExportTableToPointInTime, DescribeExport and ListExports: DynamoDB's validation and
answers, the files of an export in AWS's layout, and an export cut by kill -9."""

import gzip
import json
import os
import re

import pytest

from data_helpers import (  # noqa: F401
    ACCESS_DENIED,
    BUCKET,
    EXPORT_CONFLICT,
    EXPORT_NOT_FOUND,
    INVALID_EXPORT_TIME,
    PITR_UNAVAILABLE,
    TABLE_NOT_FOUND,
    VALIDATION,
    arn_of,
    create_table,
    dapi,
    data_server,
    describe_export,
    every_type_item,
    export,
    export_dir,
    fill,
    md5_b64,
    read_export_lines,
    start_data_server,
    table_items,
    wait_export,
)
from kumo_testlib import Api, N, S, normalize_item, wait_until  # noqa: F401

pytestmark = pytest.mark.single_process("the local S3 is one process's directory")

EXPORT_ARN = re.compile(r"^arn:aws:dynamodb:us-east-1:000000000000:table/(?P<t>[^/]+)/export/"
                        r"(?P<id>(?P<ms>\d{14})-[0-9a-f]{8})$")


def error(resp, type_, message):
    assert resp.status == 400, resp
    assert resp.full_type == type_, resp
    assert resp.message == message, resp


# ---- validation, on the shared server (point-in-time recovery off, as DynamoDB's default) ----

def test_a_table_without_point_in_time_recovery_is_refused(api, make_table):
    table = make_table()
    # Checked before the bucket: a bogus bucket gives the same answer.
    resp = api("ExportTableToPointInTime", {"TableArn": arn_of(table), "S3Bucket": "no-such"})
    error(resp, PITR_UNAVAILABLE, f"Point in time recovery is not enabled for table '{table}'")


@pytest.mark.parametrize("members,type_,message", [
    ({"TableArn": "plain"}, VALIDATION,
     "One or more parameter values were invalid: tableArn is not a valid ARN"),
    ({"TableArn": arn_of("t1") + "/index/i"}, VALIDATION, "Invalid Request: Table ARN is invalid."),
    ({"TableArn": "arn:aws:dynamodb:us-east-1:123456789012:table/t1"}, ACCESS_DENIED,
     "Access is denied"),
    ({"TableArn": "arn:aws:dynamodb:eu-west-9:000000000000:table/missing"}, TABLE_NOT_FOUND,
     "Table not found: arn:aws:dynamodb:eu-west-9:000000000000:table/missing"),
    ({"S3SseKmsKeyId": "k"}, VALIDATION,
     "Invalid Request: KMS Key Id is not supported for this encryption type"),
    ({"S3SseKmsKeyId": "k", "S3SseAlgorithm": "AES256"}, VALIDATION,
     "Invalid Request: KMS Key Id is not supported for this encryption type"),
    ({"IncrementalExportSpecification": {"ExportFromTime": 1}}, VALIDATION,
     "Invalid Request: Export Type expected to be Incremental Export when incremental export "
     "specification is provided"),
    ({"ExportType": "FULL_EXPORT", "IncrementalExportSpecification": {"ExportFromTime": 1}},
     VALIDATION, "Invalid Request: When Export Type is Full Export , Incremental Export "
     "Specification should not be provided"),
    ({"ExportType": "INCREMENTAL_EXPORT"}, VALIDATION,
     "Invalid Request: Incremental Export Specification expected when export type is set as "
     "Incremental Export"),
    ({"ExportType": "INCREMENTAL_EXPORT",
      "IncrementalExportSpecification": {"ExportViewType": "NEW_IMAGE"}}, VALIDATION,
     "Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification"),
    ({"ExportFormat": "CSV"}, VALIDATION,
     "1 validation error detected: Value 'CSV' at 'exportFormat' failed to satisfy constraint: "
     "Member must satisfy enum value set: [DYNAMODB_JSON, ION]"),
    ({"ExportType": "PARTIAL_EXPORT"}, VALIDATION,
     "1 validation error detected: Value 'PARTIAL_EXPORT' at 'exportType' failed to satisfy "
     "constraint: Member must satisfy enum value set: [FULL_EXPORT, INCREMENTAL_EXPORT]"),
    ({"S3SseAlgorithm": "aws:kms"}, VALIDATION,
     "1 validation error detected: Value 'aws:kms' at 's3SseAlgorithm' failed to satisfy "
     "constraint: Member must satisfy enum value set: [AES256, KMS]"),
    ({"ExportType": "INCREMENTAL_EXPORT",
      "IncrementalExportSpecification": {"ExportFromTime": 1, "ExportViewType": "NEW_IMAGES"}},
     VALIDATION,
     "1 validation error detected: Value 'NEW_IMAGES' at "
     "'incrementalExportSpecification.exportViewType' failed to satisfy constraint: Member must "
     "satisfy enum value set: [NEW_IMAGE, NEW_AND_OLD_IMAGES]"),
    ({"S3BucketOwner": "12345"}, VALIDATION,
     "1 validation error detected: Value '12345' at 's3BucketOwner' failed to satisfy "
     "constraint: Member must satisfy regular expression pattern: [0-9]{12}"),
    ({"S3Bucket": "arn:aws:s3:::b"}, VALIDATION,
     "1 validation error detected: Value 'arn:aws:s3:::b' at 's3Bucket' failed to satisfy "
     "constraint: Member must satisfy regular expression pattern: "
     "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$"),
    ({"ClientToken": "a$b"}, VALIDATION,
     "1 validation error detected: Value 'a$b' at 'clientToken' failed to satisfy constraint: "
     "Member must satisfy regular expression pattern: ^[^\\$]+$"),
])
def test_validation(api, make_table, members, type_, message):
    table = make_table()
    body = {"TableArn": arn_of(table), "S3Bucket": BUCKET, **members}
    error(api("ExportTableToPointInTime", body), type_, message)


def test_an_incremental_export_without_a_log(api, make_table):
    table = make_table()
    resp = api("ExportTableToPointInTime", {
        "TableArn": arn_of(table), "S3Bucket": BUCKET, "ExportType": "INCREMENTAL_EXPORT",
        "IncrementalExportSpecification": {"ExportFromTime": 1}})
    assert resp.full_type == INVALID_EXPORT_TIME, resp
    assert resp.message.startswith(
        "Incremental export period from time cannot be less than the table creation time : ")
    assert re.fullmatch(r".* : \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", resp.message)


@pytest.mark.parametrize("arn,type_,message", [
    (arn_of("tbl"), VALIDATION, "Invalid Export ARN"),
    (arn_of("tbl") + "/import/01700000000000-0000abcd", VALIDATION, "Invalid Export ARN"),
    ("arn:aws:dynamodb:us-east-1:123456789012:table/tbl/export/01700000000000-0000abcd",
     ACCESS_DENIED, "Access is denied"),
    ("arn:aws:dynamodb:eu-west-1:000000000000:table/tbl/export/01700000000000-0000abcd",
     EXPORT_NOT_FOUND, "Export not found: Invalid export arn"),
    (arn_of("tbl") + "/export/01700000000000-0000abcd", EXPORT_NOT_FOUND,
     "Export not found: Export not found: " + arn_of("tbl") + "/export/01700000000000-0000abcd"),
])
def test_describe_export_errors(api, arn, type_, message):
    error(api("DescribeExport", {"ExportArn": arn}), type_, message)


def test_list_exports_errors(api):
    error(api("ListExports", {"MaxResults": 26}), VALIDATION,
          "1 validation error detected: Value '26' at 'maxResults' failed to satisfy constraint: "
          "Member must have value less than or equal to 25")
    bogus = "ab" * 60
    error(api("ListExports", {"NextToken": bogus}), VALIDATION,
          f"Invalid Request: Provided nextToken is invalid: {bogus}")


# ---- exports written, on a server that exports without point-in-time recovery ----

def test_a_full_export_in_aws_layout(dapi, data_server):
    create_table(dapi, "full")
    items = [every_type_item(f"p{i}", i) for i in range(20)]
    for item in items:
        dapi.ok("PutItem", {"TableName": "full", "Item": item})
    started = export(dapi, "full", ClientToken="tok-full")
    m = EXPORT_ARN.match(started["ExportArn"])
    assert m and m["t"] == "full"
    assert set(started) == {"ExportArn", "ExportStatus", "StartTime", "TableArn", "TableId",
                            "ExportTime", "ClientToken", "S3Bucket", "S3SseAlgorithm",
                            "ExportFormat"}
    assert started["ExportStatus"] == "IN_PROGRESS"
    assert started["ExportTime"] == started["StartTime"]
    assert int(m["ms"]) == round(started["StartTime"] * 1000)
    assert started["S3SseAlgorithm"] == "AES256" and started["ExportFormat"] == "DYNAMODB_JSON"
    assert started["ClientToken"] == "tok-full" and started["TableArn"] == arn_of("full")
    # Writes after the request are not in it.
    dapi.ok("PutItem", {"TableName": "full", "Item": {"pk": S("late"), "sk": N(0)}})

    done = wait_export(dapi, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    assert set(done) == set(started) | {"EndTime", "ExportManifest", "ItemCount",
                                        "BilledSizeBytes"}
    assert done["ItemCount"] == 20
    export_id = m["id"]
    assert done["ExportManifest"] == f"AWSDynamoDB/{export_id}/manifest-summary.json"

    root = data_server.s3_root
    d = export_dir(root, done)
    names = sorted(os.listdir(d))
    assert names == ["_started", "data", "manifest-files.json", "manifest-files.md5",
                     "manifest-summary.json", "manifest-summary.md5"]
    assert os.path.getsize(os.path.join(d, "_started")) == 0
    data_files = os.listdir(os.path.join(d, "data"))
    assert len(data_files) == 4
    assert all(re.fullmatch(r"[a-z2-7]{26}\.json\.gz", f) for f in data_files)
    for name in ("manifest-files", "manifest-summary"):
        with open(os.path.join(d, name + ".json"), "rb") as f:
            body = f.read()
        with open(os.path.join(d, name + ".md5"), "rb") as f:
            assert f.read().decode() == md5_b64(body)

    summary, entries, lines = read_export_lines(root, done["ExportManifest"])
    assert list(summary) == ["version", "exportArn", "startTime", "endTime", "tableArn",
                             "tableId", "exportTime", "s3Bucket", "s3Prefix", "s3SseAlgorithm",
                             "s3SseKmsKeyId", "manifestFilesS3Key", "billedSizeBytes",
                             "itemCount", "outputFormat"]
    assert summary["version"] == "2020-06-30"
    assert summary["exportArn"] == done["ExportArn"] and summary["itemCount"] == 20
    assert summary["s3Prefix"] is None and summary["s3SseKmsKeyId"] is None
    assert summary["outputFormat"] == "DYNAMODB_JSON"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", summary["startTime"])
    assert summary["manifestFilesS3Key"] == f"AWSDynamoDB/{export_id}/manifest-files.json"
    assert len(entries) == 4 and sum(e["itemCount"] for e in entries) == 20
    for e in entries:
        assert list(e) == ["itemCount", "md5Checksum", "etag", "dataFileS3Key"]
        with open(os.path.join(root, BUCKET, e["dataFileS3Key"]), "rb") as f:
            raw = f.read()
        assert e["md5Checksum"] == md5_b64(raw)
        import hashlib
        assert e["etag"] == hashlib.md5(raw).hexdigest()
        assert len(gzip.decompress(raw).splitlines()) == e["itemCount"]
    exported = sorted((normalize_item(json.loads(line)["Item"]) for line in lines),
                      key=lambda i: (i["pk"], i["sk"]))
    source = [i for i in table_items(dapi, "full") if i["pk"] != ("S", "late")]
    assert exported == source

    # An identical replay answers the same export; a changed one conflicts.
    again = export(dapi, "full", ClientToken="tok-full")
    assert again["ExportArn"] == done["ExportArn"] and again["ExportStatus"] == "COMPLETED"
    error(dapi("ExportTableToPointInTime", {"TableArn": arn_of("full"), "S3Bucket": BUCKET,
                                            "ClientToken": "tok-full", "S3Prefix": "p"}),
          EXPORT_CONFLICT, "Export conflict: Duplicate request detected with conflicting parameters")


def test_an_ion_export_with_a_prefix(dapi, data_server):
    create_table(dapi, "ion")
    dapi.ok("PutItem", {"TableName": "ion", "Item": {
        "pk": S("a"), "sk": N(103), "ss": {"SS": ["x"]}, "n": N(600), "f": N("1.5"),
        "b": {"B": "YmFy"}, "t": {"BOOL": False}, "z": {"NULL": True}}})
    started = export(dapi, "ion", ExportFormat="ION", S3Prefix="dira/dirb/")
    assert started["S3Prefix"] == "dira/dirb/" and started["ExportFormat"] == "ION"
    done = wait_export(dapi, started["ExportArn"])
    export_id = done["ExportArn"].rsplit("/", 1)[1]
    assert done["ExportManifest"] == f"dira/dirb/AWSDynamoDB/{export_id}/manifest-summary.json"
    summary, entries, lines = read_export_lines(data_server.s3_root, done["ExportManifest"])
    assert summary["s3Prefix"] == "dira/dirb/" and summary["outputFormat"] == "ION"
    assert all(e["dataFileS3Key"].startswith(f"dira/dirb/AWSDynamoDB/{export_id}/data/")
               and e["dataFileS3Key"].endswith(".ion.gz") for e in entries)
    assert lines == ['$ion_1_0 {Item:{b:{{YmFy}},f:1.5,n:6d2,pk:"a",sk:103.,'
                     'ss:$dynamodb_SS::["x"],t:false,z:null}}']


def test_a_missing_bucket_fails_the_export(dapi):
    create_table(dapi, "nobucket")
    started = export(dapi, "nobucket", S3Bucket="no-such-bucket", S3BucketOwner="000000000000")
    assert started["ExportStatus"] == "IN_PROGRESS" and started["S3BucketOwner"] == "000000000000"
    done = wait_export(dapi, started["ExportArn"])
    assert done["ExportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket"
    assert done["FailureMessage"].startswith("The specified bucket does not exist")
    assert "ExportManifest" not in done and "EndTime" in done


def test_export_times(dapi):
    create_table(dapi, "times")
    error(dapi("ExportTableToPointInTime", {"TableArn": arn_of("times"), "S3Bucket": BUCKET,
                                            "ExportTime": 4102444800}),
          INVALID_EXPORT_TIME, "Export Time is invalid")
    error(dapi("ExportTableToPointInTime", {"TableArn": arn_of("times"), "S3Bucket": BUCKET,
                                            "ExportTime": 1000000000}),
          INVALID_EXPORT_TIME, "Point in Time Recovery is not available for specified export time")


def test_list_exports(dapi):
    create_table(dapi, "listed")
    create_table(dapi, "other")
    arns = [export(dapi, "listed")["ExportArn"] for _ in range(3)]
    other = export(dapi, "other")["ExportArn"]
    for arn in arns + [other]:
        wait_export(dapi, arn)
    page = dapi.ok("ListExports", {"TableArn": arn_of("listed")})
    assert [s["ExportArn"] for s in page["ExportSummaries"]] == sorted(arns, reverse=True)
    assert all(s == {"ExportArn": s["ExportArn"], "ExportStatus": "COMPLETED",
                     "ExportType": "FULL_EXPORT"} for s in page["ExportSummaries"])
    assert "NextToken" not in page
    seen, token = [], None
    while True:
        body = {"TableArn": arn_of("listed"), "MaxResults": 1}
        if token:
            body["NextToken"] = token
        page = dapi.ok("ListExports", body)
        seen += [s["ExportArn"] for s in page["ExportSummaries"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == sorted(arns, reverse=True)
    everything = [s["ExportArn"] for s in dapi.ok("ListExports", {"MaxResults": 25})[
        "ExportSummaries"]]
    assert other in everything and set(arns) <= set(everything)
    # Bound to the table: once it is deleted, nothing is listed, but Describe still answers.
    dapi.ok("DeleteTable", {"TableName": "other"})
    assert dapi.ok("ListExports", {"TableArn": arn_of("other")})["ExportSummaries"] == []
    assert describe_export(dapi, other)["ExportStatus"] == "COMPLETED"


def test_an_export_cut_by_kill_ends_failed(kumo_bin, tmp_path):
    data_dir = tmp_path / "db"
    srv = start_data_server(kumo_bin, str(tmp_path), data_dir=str(data_dir),
                            env={"KUMO_BACKUP_FAULT": "export-kill:256"})
    try:
        api = Api(srv.port)
        create_table(api, "cut")
        fill(api, "cut", 600)
        started = export(api, "cut")
        wait_until(lambda: not srv.alive(), timeout=20, what="the server killed mid-export")
        srv.start()
        api = Api(srv.port)
        done = describe_export(api, started["ExportArn"])
        assert done["ExportStatus"] == "FAILED"
        assert done["FailureCode"] == "UNKNOWN" and done["FailureMessage"]
        assert "EndTime" in done and "ExportManifest" not in done
        d = export_dir(srv.s3_root, done)
        assert not os.path.exists(os.path.join(d, "manifest-summary.json"))
        # The server goes on exporting.
        again = wait_export(api, export(api, "cut")["ExportArn"])
        assert again["ExportStatus"] == "COMPLETED" and again["ItemCount"] == 600
    finally:
        srv.kill()
