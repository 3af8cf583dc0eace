"""What the on-demand backup tests share (test_backups.py, test_backup_restores.py,
test_backup_jobs.py): DynamoDB's error types and members, calls of the backup operations,
the fixtures that clean backups and restored tables up, the indexed tables a restore is
compared on, and the `held` server whose copy or restore job is held or cut.

Jobs in progress are held with KUMO_BACKUP_FAULT=<copy|restore>-hold:<n> (the job waits
after its first page of items until the file KUMO_BACKUP_FAULT_RELEASE names exists) or cut
with <copy|restore>-kill:<n> (the server kills itself there, as kill -9 would)."""

import re

import pytest

from kumo_testlib import (  # noqa: F401
    ACCOUNT,
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
