"""What the export and import tests share (test_exports.py, test_imports.py): a server with
a local S3 (--export-root) on a manual clock with no point-in-time recovery lag, tables made
with point-in-time recovery on (DynamoDB exports no other), calls of the operations, and
readers of the files an export writes."""

import base64
import contextlib
import gzip
import hashlib
import json
import os
import subprocess
import time

import pytest

from kumo_testlib import (  # noqa: F401
    ACCOUNT,
    Api,
    KumoServer,
    N,
    NS_COR_SERVICE,
    NS_DYNAMODB,
    REGION,
    S,
    b64,
    normalize_item,
    scan_all,
    wait_until,
)

VALIDATION = "com.amazon.coral.validate#ValidationException"
TABLE_NOT_FOUND = NS_DYNAMODB + "TableNotFoundException"
PITR_UNAVAILABLE = NS_DYNAMODB + "PointInTimeRecoveryUnavailableException"
INVALID_EXPORT_TIME = NS_DYNAMODB + "InvalidExportTimeException"
EXPORT_CONFLICT = NS_DYNAMODB + "ExportConflictException"
EXPORT_NOT_FOUND = NS_DYNAMODB + "ExportNotFoundException"
IMPORT_CONFLICT = NS_DYNAMODB + "ImportConflictException"
IMPORT_NOT_FOUND = NS_DYNAMODB + "ImportNotFoundException"
RESOURCE_IN_USE = NS_DYNAMODB + "ResourceInUseException"
ACCESS_DENIED = NS_COR_SERVICE + "AccessDeniedException"
BUCKET = "bucket"


def arn_of(table, region=REGION, account=ACCOUNT):
    return f"arn:aws:dynamodb:{region}:{account}:table/{table}"


def start_data_server(kumo_bin, workdir, data_dir=None, flags=(), env=None, pitr_lag=0):
    """A server whose local S3 is <workdir>/s3, with the bucket BUCKET made, on a manual clock
    (its `admin` moves it) with `pitr_lag` seconds of point-in-time recovery lag."""
    root = os.path.join(workdir, "s3")
    os.makedirs(os.path.join(root, BUCKET), exist_ok=True)
    old = {}
    for k, v in (env or {}).items():
        old[k] = os.environ.get(k)
        os.environ[k] = v
    try:
        srv = KumoServer(kumo_bin, workdir, data_dir=data_dir,
                         extra_args=["--export-root", root, *flags], admin_port=0,
                         flags={"clock": "manual", "pitr-lag": str(pitr_lag),
                                "clock-start": str(int(time.time()))})
        srv.start()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    srv.s3_root = root
    return srv


@contextlib.contextmanager
def own_data_server(kumo_bin, tmp_path, **kwargs):
    """start_data_server's server in `tmp_path`, for one test, and an Api on it; killed at
    the end."""
    srv = start_data_server(kumo_bin, str(tmp_path), **kwargs)
    try:
        yield srv, Api(srv.port)
    finally:
        srv.kill()


@pytest.fixture(scope="module")
def data_server(kumo_bin, tmp_path_factory):
    srv = start_data_server(kumo_bin, str(tmp_path_factory.mktemp("kumo-data")))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def dapi(data_server):
    return Api(data_server.port)


def create_table(api, name, pitr=True, **extra):
    """A table keyed pk (S), sk (N); with point-in-time recovery on unless `pitr` is false."""
    body = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "N"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}], **extra}
    api.ok("CreateTable", body)
    if pitr:
        api.ok("UpdateContinuousBackups", {
            "TableName": name,
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True}})


def every_type_item(pk, sk):
    return {
        "pk": S(pk), "sk": N(sk), "s": S("text é ✓ \"q\"\n"), "n": N("-12.50e3"),
        "big": N("123456789012345678901234567890.125"), "small": N("0.00012"),
        "b": {"B": b64(b"\0\x01\xff")},
        "ss": {"SS": ["x", "y"]}, "ns": {"NS": ["1", "2.5"]}, "bs": {"BS": [b64(b"a"), b64(b"b")]},
        "m": {"M": {"inner": {"L": [S("l"), N(1), {"NULL": True}]}, "t": {"BOOL": True},
                    "odd name": S("v"), "$x": S("dollar")}},
        "l": {"L": [{"M": {"k": S("v")}}, {"BOOL": False}, {"L": []}, {"M": {}}]},
        "nul": {"NULL": True}, "t": {"BOOL": True}, "f": {"BOOL": False}, "e": S("")}


def fill(api, table, count, item=lambda i: {"pk": S(f"k{i:04}"), "sk": N(i), "v": N(i)}):
    for i in range(count):
        api.ok("PutItem", {"TableName": table, "Item": item(i)})


def table_items(api, table):
    return sorted((normalize_item(i) for i in scan_all(api, table)),
                  key=lambda i: (i["pk"], i["sk"]))


def export(api, table, **members):
    body = {"TableArn": arn_of(table), "S3Bucket": BUCKET, **members}
    return api.ok("ExportTableToPointInTime", body)["ExportDescription"]


def describe_export(api, arn):
    return api.ok("DescribeExport", {"ExportArn": arn})["ExportDescription"]


def wait_export(api, arn, timeout=30):
    return wait_until(lambda: (d := describe_export(api, arn))["ExportStatus"] != "IN_PROGRESS"
                      and d, timeout=timeout, step=0.02, what=f"export {arn} ended")


def import_table(api, table, prefix=None, fmt="DYNAMODB_JSON", compression=None, bucket=BUCKET,
                 token=None, **extra):
    source = {"S3Bucket": bucket}
    if prefix is not None:
        source["S3KeyPrefix"] = prefix
    body = {"ClientToken": token or f"token-{table}-{os.urandom(4).hex()}",
            "S3BucketSource": source, "InputFormat": fmt,
            "TableCreationParameters": {
                "TableName": table, "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "sk", "AttributeType": "N"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "sk", "KeyType": "RANGE"}]}, **extra}
    if compression:
        body["InputCompressionType"] = compression
    return api.ok("ImportTable", body)["ImportTableDescription"]


def describe_import(api, arn):
    return api.ok("DescribeImport", {"ImportArn": arn})["ImportTableDescription"]


def wait_import(api, arn, timeout=30):
    return wait_until(lambda: (d := describe_import(api, arn))["ImportStatus"] != "IN_PROGRESS"
                      and d, timeout=timeout, step=0.02, what=f"import {arn} ended")


def export_dir(root, description, prefix=""):
    export_id = description["ExportArn"].rsplit("/", 1)[1]
    base = f"{prefix.rstrip('/')}/" if prefix.rstrip("/") else ""
    return os.path.join(root, BUCKET, f"{base}AWSDynamoDB", export_id)


def md5_b64(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def read_export_lines(root, summary_key):
    """(manifest-summary, [manifest-files entries], [data lines]) of an export."""
    bucket = os.path.join(root, BUCKET)
    with open(os.path.join(bucket, summary_key), "rb") as f:
        summary = json.loads(f.read())
    with open(os.path.join(bucket, summary["manifestFilesS3Key"]), "rb") as f:
        entries = [json.loads(line) for line in f.read().splitlines()]
    lines = []
    for entry in entries:
        with open(os.path.join(bucket, entry["dataFileS3Key"]), "rb") as f:
            lines += gzip.decompress(f.read()).decode().splitlines()
    return summary, entries, lines


def zstd_compress(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, check=True,
                          capture_output=True).stdout
