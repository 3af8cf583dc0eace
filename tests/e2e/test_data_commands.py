"""`kumo export` and `kumo import` on a data directory with no server running: an export in
AWS's layout, checked against its manifest and imported into a new table with a GSI."""

import os
import subprocess

import pytest

from data_helpers import create_table, every_type_item, table_items
from kumo_testlib import Api, KumoServer, S

pytestmark = pytest.mark.single_process("the commands open one data directory")


def test_export_then_import_offline(kumo_bin, tmp_path):
    if os.environ.get("KUMO_RADOS_POOL"):
        pytest.skip("the commands work on a data directory")
    data_dir = tmp_path / "db"
    srv = KumoServer(kumo_bin, str(tmp_path), data_dir=str(data_dir))
    srv.start()
    api = Api(srv.port)
    # Without point-in-time recovery: the offline export takes the table as it is.
    create_table(api, "offline", pitr=False)
    for i in range(40):
        api.ok("PutItem", {"TableName": "offline", "Item": {**every_type_item(f"p{i}", i),
                                                            "g": S(f"g{i % 3}")}})
    source = table_items(api, "offline")
    srv.stop()

    out = tmp_path / "exports"
    run = subprocess.run([kumo_bin, "export", "--data-dir", str(data_dir), "--table", "offline",
                          "--to", str(out), "--prefix", "p"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "ItemCount 40" in run.stdout and "\r" not in run.stdout  # no bar off a terminal
    [export_id] = os.listdir(out / "p" / "AWSDynamoDB")
    summary = out / "p" / "AWSDynamoDB" / export_id / "manifest-summary.json"
    assert f"ExportManifest {summary}" in run.stdout
    run = subprocess.run([kumo_bin, "import", "--data-dir", str(data_dir), "--from",
                          str(out / "p" / "AWSDynamoDB" / export_id), "--table", "copied",
                          "--key", "pk:S,sk:N", "--gsi", "by_g:g:S"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "4 data files match manifest-files.json" in run.stdout
    assert "ImportedItemCount 40" in run.stdout and "ErrorCount 0" in run.stdout

    # A data file that no longer matches its manifest is refused.
    data = out / "p" / "AWSDynamoDB" / export_id / "data"
    victim = sorted(data.iterdir())[0]
    victim.write_bytes(victim.read_bytes() + b"\0")
    run = subprocess.run([kumo_bin, "import", "--data-dir", str(data_dir), "--from",
                          str(out / "p" / "AWSDynamoDB" / export_id), "--table", "copied2",
                          "--key", "pk:S,sk:N"], capture_output=True, text=True)
    assert run.returncode == 1 and "MD5 differs" in run.stderr

    srv.start()
    try:
        api = Api(srv.port)
        assert table_items(api, "copied") == source
        count = api.ok("Query", {"TableName": "copied", "IndexName": "by_g",
                                 "KeyConditionExpression": "g = :g", "Select": "COUNT",
                                 "ExpressionAttributeValues": {":g": S("g1")}})["Count"]
        assert count == 13
        assert api("DescribeTable", {"TableName": "copied2"}).status == 400
    finally:
        srv.stop()
