"""ExportTableToPointInTime, DescribeExport and ListExports: DynamoDB's validation and
answers, the files of an export in AWS's layout, and an export cut by kill -9."""

import gzip
import json
import os
import re
import time

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
    own_data_server,
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


# ---- exports written, on a server with a manual clock; its tables have point-in-time recovery ----

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
    started = export(dapi, "nobucket", S3Bucket="no-such-bucket", S3BucketOwner="000000000000",
                     ClientToken="tok-nobucket")
    assert started["ExportStatus"] == "IN_PROGRESS" and started["S3BucketOwner"] == "000000000000"
    done = wait_export(dapi, started["ExportArn"])
    assert done["ExportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket"
    assert done["FailureMessage"].startswith("The specified bucket does not exist")
    assert "ExportManifest" not in done and "EndTime" in done
    # Its ClientToken replayed after FAILED answers the same export, as it ended.
    again = export(dapi, "nobucket", S3Bucket="no-such-bucket", S3BucketOwner="000000000000",
                   ClientToken="tok-nobucket")
    assert again == done


def test_an_unwritable_directory_fails_the_export(dapi, data_server):
    # A file where the export's directory must be: the export cannot write below it. (The
    # tests may run as root, where a read-only directory stops no write.)
    with open(os.path.join(data_server.s3_root, BUCKET, "blocked"), "w") as f:
        f.write("a file, not a directory")
    create_table(dapi, "blocked")
    started = export(dapi, "blocked", S3Prefix="blocked/")
    assert started["ExportStatus"] == "IN_PROGRESS"
    done = wait_export(dapi, started["ExportArn"])
    assert done["ExportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3AccessDenied"
    assert done["FailureMessage"].startswith(
        "Access Denied (Service: Amazon S3; Status Code: 403; Error Code: AccessDenied; "), done
    assert "ExportManifest" not in done and "EndTime" in done
    assert "ItemCount" not in done


def test_a_client_token_replayed_while_the_export_runs(kumo_bin, tmp_path):
    release = tmp_path / "release"
    env = {"KUMO_BACKUP_FAULT": "export-hold:1", "KUMO_BACKUP_FAULT_RELEASE": str(release)}
    with own_data_server(kumo_bin, tmp_path, env=env) as (srv, api):
        create_table(api, "held")
        fill(api, "held", 3)
        started = export(api, "held", ClientToken="tok-held")
        # Held after its first item: a replay answers the same export, IN_PROGRESS.
        again = export(api, "held", ClientToken="tok-held")
        assert again == started and again["ExportStatus"] == "IN_PROGRESS"
        assert describe_export(api, started["ExportArn"])["ExportStatus"] == "IN_PROGRESS"
        error(export_error(api, "held", ClientToken="tok-held", ExportFormat="ION"),
              EXPORT_CONFLICT,
              "Export conflict: Duplicate request detected with conflicting parameters")
        release.write_text("go")
        done = wait_export(api, started["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED" and done["ItemCount"] == 3
        assert export(api, "held", ClientToken="tok-held") == done


def test_an_export_client_token_is_valid_8_hours_after_the_export_ends(kumo_bin, tmp_path):
    with own_data_server(kumo_bin, tmp_path) as (srv, api):
        create_table(api, "tok")
        fill(api, "tok", 2)
        done = wait_export(api, export(api, "tok", ClientToken="tok-8h")["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED"
        # 7 h 59 min after it ended: the same export.
        srv.admin.advance(done["EndTime"] + 8 * 3600 - 60 - srv.admin.now())
        assert export(api, "tok", ClientToken="tok-8h") == done
        # Past 8 hours the token is free: a new export, which the token then names.
        srv.admin.advance(61)
        fresh = export(api, "tok", ClientToken="tok-8h")
        assert fresh["ExportArn"] != done["ExportArn"] and fresh["ExportStatus"] == "IN_PROGRESS"
        fresh = wait_export(api, fresh["ExportArn"])
        assert fresh["ExportStatus"] == "COMPLETED" and fresh["ItemCount"] == 2
        assert export(api, "tok", ClientToken="tok-8h")["ExportArn"] == fresh["ExportArn"]
        assert len(api.ok("ListExports", {"TableArn": arn_of("tok")})["ExportSummaries"]) == 2


def iso_s(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def iso_ms(seconds):
    ms = round(seconds * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03}Z"


def export_error(api, table, **members):
    return api("ExportTableToPointInTime", {"TableArn": arn_of(table), "S3Bucket": BUCKET,
                                            **members})


def test_export_times(dapi, data_server):
    admin = data_server.admin
    create_table(dapi, "times")
    enabled = admin.now()
    admin.advance(100)
    now = admin.now()
    # In the future, or before point-in-time recovery was enabled.
    for when in (now + 1, 4102444800, enabled - 0.001, 1000000000):
        error(export_error(dapi, "times", ExportTime=when),
              INVALID_EXPORT_TIME, "Export Time is invalid")
    # The window's ends are in it.
    for when in (enabled, now):
        started = export(dapi, "times", ExportTime=when)
        assert started["ExportTime"] == when
        assert wait_export(dapi, started["ExportArn"])["ExportStatus"] == "COMPLETED"
    # Recovery off again: refused, whatever the time.
    dapi.ok("UpdateContinuousBackups", {"TableName": "times", "PointInTimeRecoverySpecification":
                                        {"PointInTimeRecoveryEnabled": False}})
    error(export_error(dapi, "times"), PITR_UNAVAILABLE,
          "Point in time recovery is not enabled for table 'times'")


def test_an_export_time_after_the_latest_restorable_time(kumo_bin, tmp_path):
    srv = start_data_server(kumo_bin, str(tmp_path), pitr_lag=300)
    try:
        api = Api(srv.port)
        create_table(api, "lagging")
        srv.admin.advance(600)
        now = srv.admin.now()
        error(export_error(api, "lagging", ExportTime=now - 1), INVALID_EXPORT_TIME,
              "Point in Time Recovery is not available for specified export time")
        # The latest restorable time is in the window; the request's time (the default) too.
        assert export(api, "lagging", ExportTime=now - 300)["ExportTime"] == now - 300
        started = export(api, "lagging")
        assert started["ExportTime"] == started["StartTime"] == now
    finally:
        srv.stop()


def item(pk, v):
    return {"pk": S(pk), "sk": N(0), "v": N(v)}


def exported_items(root, done):
    _, _, lines = read_export_lines(root, done["ExportManifest"])
    return sorted((normalize_item(json.loads(line)["Item"]) for line in lines),
                  key=lambda i: (i["pk"], i["sk"]))


def test_a_full_export_at_a_past_time(dapi, data_server):
    admin = data_server.admin
    create_table(dapi, "past")
    admin.advance(10)
    for pk in ("a", "b", "c"):
        dapi.ok("PutItem", {"TableName": "past", "Item": item(pk, 1)})
    then = admin.advance(10) - 5
    dapi.ok("PutItem", {"TableName": "past", "Item": item("a", 2)})
    dapi.ok("DeleteItem", {"TableName": "past", "Key": {"pk": S("b"), "sk": N(0)}})
    dapi.ok("PutItem", {"TableName": "past", "Item": item("d", 1)})
    admin.advance(10)

    old = wait_export(dapi, export(dapi, "past", ExportTime=then)["ExportArn"])
    assert old["ExportStatus"] == "COMPLETED" and old["ExportTime"] == then
    assert old["ItemCount"] == 3
    assert exported_items(data_server.s3_root, old) == [
        normalize_item(item("a", 1)), normalize_item(item("b", 1)), normalize_item(item("c", 1))]
    summary, entries, _ = read_export_lines(data_server.s3_root, old["ExportManifest"])
    assert summary["exportTime"] == iso_ms(then) and summary["version"] == "2020-06-30"
    assert len(entries) == 4

    present = wait_export(dapi, export(dapi, "past")["ExportArn"])
    assert exported_items(data_server.s3_root, present) == table_items(dapi, "past") == [
        normalize_item(item("a", 2)), normalize_item(item("c", 1)), normalize_item(item("d", 1))]


def incremental(api, table, view=None, to=None, export_time=None, ExportFormat=None,
                S3Prefix=None, **spec):
    body = {"ExportType": "INCREMENTAL_EXPORT", "IncrementalExportSpecification": spec}
    if ExportFormat:
        body["ExportFormat"] = ExportFormat
    if S3Prefix:
        body["S3Prefix"] = S3Prefix
    if export_time is not None:
        body["ExportTime"] = export_time
    if view:
        spec["ExportViewType"] = view
    if to is not None:
        spec["ExportToTime"] = to
    return export_error(api, table, **body)


def test_incremental_exports(dapi, data_server):
    admin = data_server.admin
    root = data_server.s3_root
    create_table(dapi, "inc")
    admin.advance(60)
    for pk in ("keep", "upd", "del"):
        dapi.ok("PutItem", {"TableName": "inc", "Item": item(pk, 1)})
    start = admin.advance(60)
    # At the period's first instant (inclusive).
    dapi.ok("PutItem", {"TableName": "inc", "Item": item("upd", 2)})
    changed = admin.advance(10)
    dapi.ok("PutItem", {"TableName": "inc", "Item": item("upd", 3)})
    dapi.ok("DeleteItem", {"TableName": "inc", "Key": {"pk": S("del"), "sk": N(0)}})
    dapi.ok("PutItem", {"TableName": "inc", "Item": item("new", 1)})
    dapi.ok("PutItem", {"TableName": "inc", "Item": item("tmp", 1)})
    dapi.ok("DeleteItem", {"TableName": "inc", "Key": {"pk": S("tmp"), "sk": N(0)}})
    end = admin.advance(16 * 60 - 10)
    # At the period's end (exclusive), and after it.
    dapi.ok("PutItem", {"TableName": "inc", "Item": item("keep", 2)})
    admin.advance(60)

    micros = {"N": str(round(changed * 1e6))}
    key = lambda pk: {"pk": S(pk), "sk": N(0)}  # noqa: E731
    expected = {
        "NEW_AND_OLD_IMAGES": [
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("del"),
             "OldImage": item("del", 1)},
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("new"),
             "NewImage": item("new", 1)},
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("upd"),
             "NewImage": item("upd", 3), "OldImage": item("upd", 1)}],
        "NEW_IMAGE": [
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("del")},
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("new"),
             "NewImage": item("new", 1)},
            {"Metadata": {"WriteTimestampMicros": micros}, "Keys": key("upd"),
             "NewImage": item("upd", 3)}],
    }
    for view in ("NEW_AND_OLD_IMAGES", "NEW_IMAGE"):
        resp = incremental(dapi, "inc", view=view, to=end, ExportFromTime=start)
        assert resp.status == 200, resp
        started = resp.json["ExportDescription"]
        assert "ExportTime" not in started and started["ExportType"] == "INCREMENTAL_EXPORT"
        assert started["IncrementalExportSpecification"] == {
            "ExportFromTime": start, "ExportToTime": end, "ExportViewType": view}
        done = wait_export(dapi, started["ExportArn"])
        assert done["ExportStatus"] == "COMPLETED", done
        assert done["ItemCount"] == 3 and done["BilledSizeBytes"] == 10000000
        export_id = done["ExportArn"].rsplit("/", 1)[1]
        assert sorted(os.listdir(export_dir(root, done))) == [
            "_started", "manifest-files.json", "manifest-files.md5", "manifest-summary.json",
            "manifest-summary.md5"]
        summary, entries, lines = read_export_lines(root, done["ExportManifest"])
        assert list(summary) == [
            "version", "exportArn", "startTime", "endTime", "tableArn", "tableId",
            "exportFromTime", "exportToTime", "s3Bucket", "s3Prefix", "s3SseAlgorithm",
            "s3SseKmsKeyId", "manifestFilesS3Key", "billedSizeBytes", "itemCount",
            "outputFormat", "outputView", "exportType"]
        assert summary["version"] == "2023-08-01" and summary["outputView"] == view
        assert summary["exportType"] == "INCREMENTAL_EXPORT" and summary["itemCount"] == 3
        assert summary["exportFromTime"] == iso_ms(start)
        assert summary["exportToTime"] == iso_ms(end)
        assert summary["manifestFilesS3Key"] == f"AWSDynamoDB/{export_id}/manifest-files.json"
        # The data files are in the folder all incremental exports share.
        assert len(entries) == 4
        assert all(re.fullmatch(r"AWSDynamoDB/data/[a-z2-7]{26}\.json\.gz", e["dataFileS3Key"])
                   for e in entries)
        rows = [json.loads(line) for line in lines]
        assert all(list(r)[:2] == ["Metadata", "Keys"] for r in rows)
        assert sorted(rows, key=lambda r: r["Keys"]["pk"]["S"]) == expected[view]

    # ION, under a prefix: the shared data folder is the prefix's.
    resp = incremental(dapi, "inc", view="NEW_IMAGE", to=end, ExportFromTime=start,
                       ExportFormat="ION", S3Prefix="inc/")
    done = wait_export(dapi, resp.json["ExportDescription"]["ExportArn"])
    _, entries, lines = read_export_lines(root, done["ExportManifest"])
    assert all(re.fullmatch(r"inc/AWSDynamoDB/data/[a-z2-7]{26}\.ion\.gz", e["dataFileS3Key"])
               for e in entries)
    assert sorted(lines) == sorted([
        f'$ion_1_0 {{Metadata:{{WriteTimestampMicros:{micros["N"]}.}},Keys:{{pk:"{pk}",sk:0.}}'
        + (f',NewImage:{{pk:"{pk}",sk:0.,v:{v}.}}}}' if v else "}")
        for pk, v in (("del", None), ("new", 1), ("upd", 3))])

    # ExportToTime defaults to the latest restorable time (now, without lag): the later
    # write of "keep" is in; ExportViewType defaults to NEW_AND_OLD_IMAGES.
    resp = incremental(dapi, "inc", ExportFromTime=start)
    assert resp.status == 200, resp
    spec = resp.json["ExportDescription"]["IncrementalExportSpecification"]
    assert spec == {"ExportFromTime": start, "ExportToTime": admin.now(),
                    "ExportViewType": "NEW_AND_OLD_IMAGES"}
    done = wait_export(dapi, resp.json["ExportDescription"]["ExportArn"])
    _, _, lines = read_export_lines(root, done["ExportManifest"])
    rows = {json.loads(line)["Keys"]["pk"]["S"]: json.loads(line) for line in lines}
    assert sorted(rows) == ["del", "keep", "new", "upd"]
    assert rows["keep"]["NewImage"] == item("keep", 2)
    assert rows["keep"]["OldImage"] == item("keep", 1)


def test_incremental_export_validation(dapi, data_server):
    admin = data_server.admin
    create_table(dapi, "incv")
    enabled = admin.now()
    too_early = ("Incremental export period from time cannot be less than the table creation "
                 f"time : {iso_s(enabled)}")
    too_short = ("Difference between export period from time and export period to time is "
                 "less than 15 minutes")
    # Freshly enabled: no period is long enough yet (the default ExportToTime is the latest
    # restorable time, now on this server).
    admin.advance(899)
    error(incremental(dapi, "incv", ExportFromTime=enabled), INVALID_EXPORT_TIME, too_short)
    admin.advance(1)
    now = admin.now()
    assert incremental(dapi, "incv", ExportFromTime=enabled).status == 200
    # The from-time check comes first.
    error(incremental(dapi, "incv", ExportFromTime=enabled - 1, to=enabled + 60),
          INVALID_EXPORT_TIME, too_early)
    # Also given an ExportTime, or a period that ends before it starts.
    error(incremental(dapi, "incv", ExportFromTime=enabled, to=now, export_time=now),
          INVALID_EXPORT_TIME, too_early)
    error(incremental(dapi, "incv", ExportFromTime=enabled + 100, to=enabled + 50),
          INVALID_EXPORT_TIME, too_early)
    error(incremental(dapi, "incv", ExportFromTime=enabled, to=now + 1), INVALID_EXPORT_TIME,
          f"Incremental export period to time cannot be greater than the current time : "
          f"{iso_s(now)}")
    error(incremental(dapi, "incv", ExportFromTime=enabled, to=enabled + 15 * 60 - 0.001),
          INVALID_EXPORT_TIME, too_short)
    assert incremental(dapi, "incv", ExportFromTime=enabled, to=enabled + 15 * 60).status == 200
    admin.advance(24 * 3600)
    error(incremental(dapi, "incv", ExportFromTime=enabled, to=enabled + 24 * 3600 + 0.001),
          INVALID_EXPORT_TIME, "Difference between export period from time and export period to "
          "time is greater than 24 hours")
    assert incremental(dapi, "incv", ExportFromTime=enabled, to=enabled + 24 * 3600).status == 200
    # Without point-in-time recovery, the bound is the table's creation time.
    create_table(dapi, "incv_off", pitr=False)
    created = dapi.ok("DescribeTable", {"TableName": "incv_off"})["Table"]["CreationDateTime"]
    error(incremental(dapi, "incv_off", ExportFromTime=created), INVALID_EXPORT_TIME,
          "Incremental export period from time cannot be less than the table creation time : "
          + iso_s(created))


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
    with own_data_server(kumo_bin, tmp_path, data_dir=str(data_dir),
                         env={"KUMO_BACKUP_FAULT": "export-kill:256"}) as (srv, api):
        create_table(api, "cut")
        fill(api, "cut", 600)
        started = export(api, "cut")
        wait_until(lambda: not srv.alive(), timeout=20, what="the server killed mid-export")
        srv.start()
        api = Api(srv.port)
        # Ended at the start; on a storage shared by several front ends once the stopped
        # process's lease lapsed and its job was claimed.
        done = wait_export(api, started["ExportArn"])
        assert done["ExportStatus"] == "FAILED"
        assert done["FailureCode"] == "UNKNOWN" and done["FailureMessage"]
        assert "EndTime" in done and "ExportManifest" not in done
        d = export_dir(srv.s3_root, done)
        assert not os.path.exists(os.path.join(d, "manifest-summary.json"))
        # The server goes on exporting.
        again = wait_export(api, export(api, "cut")["ExportArn"])
        assert again["ExportStatus"] == "COMPLETED" and again["ItemCount"] == 600


def test_export_records_expire_90_days_after_they_end(kumo_bin, tmp_path):
    with own_data_server(kumo_bin, tmp_path) as (srv, api):
        create_table(api, "exp_t")
        fill(api, "exp_t", 3)
        first = wait_export(api, export(api, "exp_t")["ExportArn"])
        srv.admin.advance(86400)
        second = wait_export(api, export(api, "exp_t")["ExportArn"])

        def listed():
            return [s["ExportArn"] for s in api.ok("ListExports", {
                "TableArn": arn_of("exp_t")})["ExportSummaries"]]

        assert listed() == [second["ExportArn"], first["ExportArn"]]
        # Kept 90 days after its end: still there a second before, gone a second after.
        srv.admin.advance(first["EndTime"] + 90 * 86400 - 1 - srv.admin.now())
        assert describe_export(api, first["ExportArn"]) == first
        assert listed() == [second["ExportArn"], first["ExportArn"]]
        srv.admin.advance(2)
        error(api("DescribeExport", {"ExportArn": first["ExportArn"]}), EXPORT_NOT_FOUND,
              "Export not found: Export not found: " + first["ExportArn"])
        assert listed() == [second["ExportArn"]]
        assert [s["ExportArn"] for s in api.ok("ListExports", {})["ExportSummaries"]] == [
            second["ExportArn"]]
        assert describe_export(api, second["ExportArn"]) == second
        srv.admin.advance(86400)
        error(api("DescribeExport", {"ExportArn": second["ExportArn"]}), EXPORT_NOT_FOUND,
              "Export not found: Export not found: " + second["ExportArn"])
        assert api.ok("ListExports", {})["ExportSummaries"] == []
