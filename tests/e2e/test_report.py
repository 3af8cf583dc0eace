"""`kumo report` against a stand-in admin listener serving the /report fixture.

data/report.json is what a server answers on GET /report (data/make_report_fixture.py
writes it); data/report.txt is the text report of it. KUMO_UPDATE_GOLDEN=1 rewrites the
golden file from the binary's output instead of comparing.
"""

import contextlib
import copy
import http.server
import json
import math
import os
import subprocess
import threading
import xml.etree.ElementTree as ET

import pytest

from kumo_testlib import free_port

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FIXTURE = os.path.join(DATA, "report.json")
GOLDEN = os.path.join(DATA, "report.txt")

# The prices of src/cli/prices.h (US East (N. Virginia), Standard, 2026-10-04).
WRITE_UNIT = 0.625 / 1e6
READ_UNIT = 0.125 / 1e6
WCU_HOUR = 0.00065
RCU_HOUR = 0.00013
GB_MONTH = 0.25
MONTH_SECONDS = 730 * 3600


def fixture_bytes():
    with open(FIXTURE, "rb") as f:
        return f.read()


@contextlib.contextmanager
def admin(body, status=200):
    """An admin listener answering every GET with `body`; yields (port, paths seen)."""
    paths = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            paths.append(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], paths
    finally:
        server.shutdown()
        server.server_close()


def kumo_report(kumo_bin, port, *args):
    return subprocess.run([kumo_bin, "report", "--admin", f"127.0.0.1:{port}", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def listener():
    with admin(fixture_bytes()) as (port, paths):
        yield port, paths


@pytest.fixture(scope="module")
def report_text(kumo_bin, listener):
    result = kumo_report(kumo_bin, listener[0])
    assert result.returncode == 0, result.stderr
    return result.stdout


def blocks(text):
    """The report's header and its table blocks, by table name."""
    header, *tables = text.rstrip("\n").split("\n\n")
    return header, {block.split()[0]: block for block in tables}


def test_text_matches_golden(report_text, listener):
    assert listener[1][-1] == "/report"
    if os.environ.get("KUMO_UPDATE_GOLDEN"):
        with open(GOLDEN, "w") as f:
            f.write(report_text)
    with open(GOLDEN) as f:
        assert report_text == f.read()


def test_text_lines(report_text):
    # The lines the design shows, with the fixture's figures.
    _, tables = blocks(report_text)
    orders = tables["orders"]
    assert orders.startswith("orders  PAY_PER_REQUEST  221,840 items  762 MiB  "
                             "window 600 s (manual clock)\n")
    assert ("    7     8000000000000000-bfffffffffffffff     515 MiB          0      0        999"
            "  1,000  hot-key      IndexWriteKeyRangeThroughputExceeded 17,634\n"
            "          hot key status=\"PENDING\": 100% of this partition's writes, cannot split\n"
            in orders)
    assert "amplification 1.00 writes, 1.00 units" in orders
    assert ("  cost/month (US East (N. Virginia), Standard, prices of 2026-10-04; estimate)\n"
            in orders)
    customers = tables["customers"]
    assert "throttles: TableWriteProvisionedThroughputExceeded 20,206" in customers
    assert "      2026-01-01 00:04:30  1 -> 4, 5 at 4000000000000000  throughput\n" in customers
    assert "amplification 0.10 writes, 0.05 units" in customers
    # Ten hottest keys of the twelve the server sent.
    table_section = orders.split("  by_status")[0]
    assert table_section.count("order_id=") == 10


def money(dollars):
    if dollars >= 1000:
        return f"${math.floor(dollars + 0.5):,}"
    return f"${dollars:.2f}"


def expected_costs(table, window_seconds):
    """The month's estimates, computed here from the fixture as the design states them."""
    reads = writes = storage_bytes = 0.0
    rcu = wcu = peak_rcu = peak_wcu = 0
    for r in table["resources"]:
        reads += r["read"]["consumed"] / window_seconds * MONTH_SECONDS * READ_UNIT
        writes += r["write"]["consumed"] / window_seconds * MONTH_SECONDS * WRITE_UNIT
        # Sizes count 100 bytes per item or entry already (TableSizeBytes).
        storage_bytes += (table["size_bytes"] if r["index"] is None
                          else sum(p["bytes"] for p in r["partitions"]))
        rcu += r["read"]["provisioned"] or 0
        wcu += r["write"]["provisioned"] or 0
        peak_rcu += math.ceil(round(r["read"]["peak_second"] / 0.7, 6))
        peak_wcu += math.ceil(round(r["write"]["peak_second"] / 0.7, 6))
    storage = storage_bytes / 2**30 * GB_MONTH
    month = lambda r, w: (r * RCU_HOUR + w * WCU_HOUR) * 730  # noqa: E731
    lines = [f"    on-demand   {money(reads + writes + storage)}  (writes {money(writes)}, "
             f"reads {money(reads)}, storage {money(storage)})"]
    if table["billing_mode"] == "PROVISIONED":
        lines.append(f"    provisioned {money(month(rcu, wcu) + storage)}  (as provisioned: "
                     f"{wcu:,} WCU, {rcu:,} RCU; storage {money(storage)})")
    lines.append(f"    provisioned {money(month(peak_rcu, peak_wcu) + storage)}  (for the peak "
                 f"second at 70 % utilisation: {peak_wcu:,} WCU, {peak_rcu:,} RCU; "
                 f"storage {money(storage)})")
    return lines


def test_cost(report_text):
    report = json.loads(fixture_bytes())
    _, tables = blocks(report_text)
    for table in report["tables"]:
        block = tables[table["name"]].splitlines()
        heading = block.index("  cost/month (US East (N. Virginia), Standard, prices of "
                              "2026-10-04; estimate)")
        lines = expected_costs(table, report["window"]["seconds"])
        assert block[heading + 1:heading + 1 + len(lines)] == lines
        assert block[heading + 1 + len(lines)] == (
            "    not counted: free tier, streams, backups, replication")
    # The on-demand table's figures, worked by hand: 2 x 887,360 write units in 600 s are
    # 2,957.9 WRU/s, x 2,628,000 s x $0.625 per million = $4,858; peak second 1,596 WCU on
    # the table and the GSI: ceil(1,596 / 0.7) = 2,280 each.
    assert "(writes $4,858, reads $16.39, storage $0.37)" in tables["orders"]
    assert "4,560 WCU, 100 RCU" in tables["orders"]


def test_table_filter(kumo_bin, listener, report_text):
    header, tables = blocks(report_text)
    result = kumo_report(kumo_bin, listener[0], "--table", "customers")
    assert result.returncode == 0, result.stderr
    assert result.stdout == header + "\n\n" + tables["customers"] + "\n"
    both = kumo_report(kumo_bin, listener[0], "--table", "customers", "--table", "orders")
    assert both.returncode == 0, both.stderr
    assert both.stdout == "\n\n".join([header, tables["customers"], tables["orders"]]) + "\n"


def test_unknown_table(kumo_bin, listener):
    result = kumo_report(kumo_bin, listener[0], "--table", "orders", "--table", "nope")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "no table nope (tables: orders, customers)" in result.stderr


def test_minutes_reach_the_server(kumo_bin, listener):
    result = kumo_report(kumo_bin, listener[0], "--minutes", "5", "--table", "orders")
    assert result.returncode == 0, result.stderr
    assert listener[1][-1] == "/report?minutes=5"


def test_unreachable(kumo_bin):
    result = kumo_report(kumo_bin, free_port())
    assert result.returncode == 1
    assert result.stdout == ""
    assert "cannot connect to 127.0.0.1:" in result.stderr


@pytest.mark.parametrize("body,status,message", [
    (b'{"error":"capacity is off"}', 409, "GET /report answered 409"),
    (b"<html>", 200, "unusable answer"),
    (b'{"kumo_version":"0.1.0"}', 200, "unusable answer"),
])
def test_unusable_answers(kumo_bin, body, status, message):
    with admin(body, status) as (port, _):
        result = kumo_report(kumo_bin, port)
    assert result.returncode == 1
    assert message in result.stderr


def test_json(kumo_bin, listener, tmp_path):
    out = tmp_path / "report.json"
    result = kumo_report(kumo_bin, listener[0], "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == fixture_bytes()


def check_html(path):
    text = path.read_text()
    root = ET.fromstring(text)  # well-formed XML
    assert "<svg" in text
    assert "<script" not in text
    assert "src=" not in text
    assert 'href="http' not in text
    assert "<link" not in text and "@import" not in text and "url(" not in text
    return text, root


def test_html(kumo_bin, listener, tmp_path):
    out = tmp_path / "report.html"
    result = kumo_report(kumo_bin, listener[0], "--html", str(out))
    assert result.returncode == 0, result.stderr
    text, root = check_html(out)
    assert [h.text for h in root.iter("h2")] == ["orders", "customers"]
    # Per table and GSI a heat map and a chart per direction used.
    assert text.count("<svg") == 11
    # The hot partition's minutes are outlined as refused; every cell has a tooltip.
    assert 'stroke="#111"' in text
    assert "partition 7 (8000000000000000-bfffffffffffffff), minute 00:04" in text
    # The retired partitions keep their rows until the split.
    assert "partition 1 (0000000000000000-7fffffffffffffff), minute 00:04" in text
    assert "partition 1 (0000000000000000-7fffffffffffffff), minute 00:05" not in text
    assert "prices of 2026-10-04; estimate" in text


def test_partial_answers(kumo_bin, tmp_path):
    """A report-mode server on the wall clock, one minute old, sizes not yet counted."""
    report = json.loads(fixture_bytes())
    report["capacity_mode"] = "report"
    report["clock"]["mode"] = "wall"
    table = report["tables"][1]
    table["size_bytes"] = None
    resource = table["resources"][0]
    resource["would_throttle_seconds"] = {"TableWriteProvisionedThroughputExceeded": 12}
    for r in table["resources"]:
        r["history"] = r["history"][-1:]
        for p in r["partitions"]:
            p["bytes"] = None
    report["tables"] = [table, copy.deepcopy(table)]
    report["tables"][1]["name"] = "customers-copy"
    html = tmp_path / "report.html"
    with admin(json.dumps(report).encode()) as (port, _):
        result = kumo_report(kumo_bin, port, "--html", str(html))
    assert result.returncode == 0, result.stderr
    assert "customers  PROVISIONED  250,000 items  -  window 600 s (wall clock)" in result.stdout
    assert "would throttle: TableWriteProvisionedThroughputExceeded 12 s" in result.stdout
    assert "    4     0000000000000000-3fffffffffffffff           -" in result.stdout
    text, _ = check_html(html)
    # With one minute of history the heat map shows the last 60 seconds.
    assert "second 00:09:59" in text


def test_partition_keys_of_a_table_with_a_sort_key(kumo_bin, tmp_path):
    """A resource with a sort key lists its hottest partition keys (each the sum of its
    items) before its hottest items, in the text and in the HTML page."""
    report = json.loads(fixture_bytes())
    resource = report["tables"][0]["resources"][0]
    resource["top_keys"]["accessed_partition_keys"] = [
        {"key": {"order_id": {"S": "o-1"}}, "partition": 3, "units": 5000, "estimate": False},
        {"key": {"order_id": {"S": "o-2"}}, "partition": 1, "units": 12, "estimate": True}]
    resource["top_keys"]["throttled_partition_keys"] = [
        {"key": {"order_id": {"S": "o-1"}}, "partition": 3, "events": 7, "estimate": False}]
    html = tmp_path / "report.html"
    with admin(json.dumps(report).encode()) as (port, _):
        result = kumo_report(kumo_bin, port, "--html", str(html))
    assert result.returncode == 0, result.stderr
    orders = blocks(result.stdout)[1]["orders"]
    lines = orders.splitlines()
    start = lines.index("    hottest partition keys (units in the window)")
    assert lines[start + 1].split() == ['order_id="o-1"', "5,000", "units", "partition", "3"]
    assert lines[start + 2].split() == ['order_id="o-2"', "12", "units", "partition", "1",
                                        "estimate"]
    assert lines[start + 3] == "    most throttled partition keys (events in the window)"
    assert lines[start + 4].split() == ['order_id="o-1"', "7", "events", "partition", "3"]
    assert lines[start + 5] == "    hottest keys (units in the window)"
    text, _ = check_html(html)
    assert text.index("Hottest partition keys") < text.index("Hottest keys")
    assert "Most throttled partition keys (events in the window)" in text
