"""The admin listener (`kumo serve --admin-port`): health, the engine clock, errors, the
capacity switch, and its separation from the DynamoDB port; and the capacity flags' checks."""

import http.client
import subprocess

import pytest

from kumo_testlib import Admin, KumoServer, http_request, unique_name

START = 1767225600  # 2026-01-01T00:00:00Z
ADVANCE_ERROR = ("seconds must be a number greater than 0 and at most 31536000 (one year): "
                 "POST /clock/advance?seconds=S")
OFF_ERROR = "capacity is off (kumo serve --capacity off): nothing is metered"


def _server(kumo_bin, tmp_path_factory, flags):
    srv = KumoServer(kumo_bin, str(tmp_path_factory.mktemp("kumo-admin")), flags=flags,
                     admin_port=0)
    srv.start()
    return srv


@pytest.fixture(scope="module")
def manual(kumo_bin, tmp_path_factory):
    srv = _server(kumo_bin, tmp_path_factory,
                  {"capacity": "enforce", "clock": "manual", "clock-start": START})
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def wall(kumo_bin, tmp_path_factory):
    srv = _server(kumo_bin, tmp_path_factory, {})
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def off(kumo_bin, tmp_path_factory):
    srv = _server(kumo_bin, tmp_path_factory, {"capacity": "off", "clock": "manual"})
    yield srv
    srv.stop()


def _error(admin, method, path, status, message=None):
    resp = admin.request(method, path)
    assert resp.status == status, resp
    assert resp.header("Content-Type") == "application/json"
    body = resp.json
    assert set(body) == {"error"}, body
    if message is not None:
        assert body["error"] == message
    return resp


# --------------------------------------------------------------------------- health, clock


def test_health(manual, wall, off):
    for srv in (manual, wall, off):
        resp = srv.admin.request("GET", "/health")
        assert resp.status == 200
        assert resp.header("Content-Type") == "application/json"
        assert resp.json == {"status": "ok"}


def test_admin_port_is_logged(manual):
    with open(manual.log_path, encoding="utf-8") as f:
        log = f.read()
    assert f"admin listening on 127.0.0.1:{manual.admin_port} (no authentication" in log


def test_manual_clock_starts_at_clock_start(kumo_bin, tmp_path_factory):
    srv = _server(kumo_bin, tmp_path_factory, {"clock": "manual", "clock-start": 1000000000})
    try:
        assert srv.admin.clock() == {"mode": "manual", "now": 1000000000.0}
    finally:
        srv.stop()


def test_manual_clock_without_start_is_a_whole_second(off):
    clock = off.admin.clock()
    assert clock["mode"] == "manual"
    assert clock["now"] == int(clock["now"])


def test_advance_moves_the_manual_clock(manual):
    admin = manual.admin
    before = admin.now()
    assert admin.advance(1) == before + 1
    assert admin.advance(0.5) == before + 1.5
    assert admin.advance("2.25") == before + 3.75
    assert admin.clock() == {"mode": "manual", "now": before + 3.75}


def test_advance_answers_only_now(manual):
    status, body = manual.admin.post("/clock/advance", seconds=1)
    assert status == 200
    assert set(body) == {"now"}


def test_advance_a_year(manual):
    admin = manual.admin
    before = admin.now()
    assert admin.advance(31536000) == before + 31536000


@pytest.mark.parametrize("query", [
    "", "?seconds=", "?seconds=0", "?seconds=0.0", "?seconds=-1", "?seconds=abc",
    "?seconds=31536000.001", "?seconds=31536001", "?seconds=nan", "?seconds=inf",
    "?seconds=1e3", "?seconds=%", "?seconds=1x", "?other=1",
])
def test_advance_refuses_bad_seconds(manual, query):
    admin = manual.admin
    before = admin.now()
    _error(admin, "POST", "/clock/advance" + query, 400, ADVANCE_ERROR)
    assert admin.now() == before


def test_advance_takes_encoded_parameters(manual):
    admin = manual.admin
    before = admin.now()
    resp = admin.request("POST", "/clock/advance?x=1&seconds=%32")
    assert resp.status == 200, resp
    assert resp.json == {"now": before + 2}


def test_wall_clock(wall):
    clock = wall.admin.clock()
    assert clock["mode"] == "wall"
    assert isinstance(clock["now"], float) and clock["now"] > START


def test_wall_clock_cannot_advance(wall):
    admin = wall.admin
    resp = _error(admin, "POST", "/clock/advance?seconds=1", 409)
    assert "wall clock" in resp.json["error"] and "--clock manual" in resp.json["error"]
    # A bad value on the wall clock: still the clock's refusal.
    _error(admin, "POST", "/clock/advance?seconds=0", 409)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("path", ["/", "/nope", "/health/", "/clock/", "/clock/advance/x",
                                  "/tablesx", "/report/x", "/metrics/x", "/HEALTH"])
def test_unknown_path(manual, path):
    _error(manual.admin, "GET", path, 404, "no such path: " + path)


@pytest.mark.parametrize("method,path,allow", [
    ("POST", "/health", "GET"),
    ("PUT", "/clock", "GET"),
    ("GET", "/clock/advance", "POST"),
    ("DELETE", "/tables", "GET"),
    ("POST", "/tables/t", "GET"),
    ("POST", "/report", "GET"),
    ("POST", "/metrics", "GET"),
])
def test_wrong_method(manual, method, path, allow):
    resp = _error(manual.admin, method, path, 405,
                  f"{method} is not allowed on {path}; use {allow}")
    assert resp.header("Allow") == allow


def test_body_over_64_kib(manual):
    admin = manual.admin
    resp = admin.request("POST", "/clock/advance?seconds=1", body=b"x" * (64 * 1024 + 1))
    assert resp.status == 413
    resp = admin.request("POST", "/clock/advance?seconds=1", body=b"x" * (64 * 1024))
    assert resp.status == 200


def test_keep_alive(manual):
    conn = http.client.HTTPConnection("127.0.0.1", manual.admin_port, timeout=10)
    try:
        for _ in range(3):
            conn.request("GET", "/health")
            r = conn.getresponse()
            assert r.status == 200 and r.read() == b'{"status":"ok"}'
        conn.request("GET", "/nope")
        r = conn.getresponse()
        assert r.status == 404
        r.read()
        conn.request("GET", "/clock")
        assert conn.getresponse().status == 200
    finally:
        conn.close()


# --------------------------------------------------------------------------- capacity off


@pytest.mark.parametrize("path", ["/tables", "/tables/t", "/tables/t/partitions", "/report",
                                  "/metrics"])
def test_capacity_off_has_no_meters(off, path):
    _error(off.admin, "GET", path, 409, OFF_ERROR)


def test_capacity_off_keeps_the_clock(off):
    admin = off.admin
    before = admin.now()
    assert admin.advance(5) == before + 5


def test_metrics_content_type(manual):
    resp = manual.admin.request("GET", "/metrics")
    assert resp.status == 200
    assert resp.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8"


# --------------------------------------------------------------------------- the two ports


def test_ports_are_separate(manual):
    assert manual.admin_port != manual.port
    # The DynamoDB port answers as before.
    resp = http_request(manual.port, "GET", "/")
    assert resp.status == 200 and resp.body.startswith(b"healthy: ")
    name = unique_name()
    manual.api().ok("CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})
    assert name in manual.api().ok("ListTables")["TableNames"]
    # The DynamoDB port knows nothing of the admin paths.
    assert http_request(manual.port, "GET", "/health").body != b'{"status":"ok"}'


def test_admin_port_does_not_speak_dynamodb(manual):
    resp = http_request(manual.admin_port, "POST", "/", body=b"{}", headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.ListTables"})
    assert resp.status == 404
    assert resp.json == {"error": "no such path: /"}
    assert Admin(manual.admin_port).health() == {"status": "ok"}


def test_no_admin_listener_without_the_flag(server):
    assert server.admin_port is None
    with open(server.log_path, encoding="utf-8") as f:
        assert "admin listening" not in f.read()


# --------------------------------------------------------------------------- flags


def _serve(kumo_bin, *args):
    return subprocess.run([kumo_bin, "serve", "--in-memory", "--port", "0", *args],
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("args,expected", [
    (["--capacity", "on"], "--capacity"),
    (["--clock", "fake"], "--clock"),
    (["--clock-start", "5"], "--clock-start: needs --clock manual"),
    (["--clock", "manual", "--clock-start", "-1"], "--clock-start"),
    (["--admin-bind", "127.0.0.1"], "--admin-bind requires --admin-port"),
    (["--admin-port", "70000"], "--admin-port"),
    (["--burst-seconds", "-1"], "-1 must be a number from 0 to 86400"),
    (["--burst-seconds", "nan"], "nan must be a number from 0 to 86400"),
    (["--split-heat-fraction", "0"], "0 must be a number from 0.01 to 1"),
    (["--split-heat-fraction", "inf"], "inf must be a number from 0.01 to 1"),
    (["--partition-write-units", "0"], "--partition-write-units"),
    (["--splits", "yes"], "--splits"),
    (["--max-partitions", "0"], "--max-partitions"),
    (["--on-demand-initial", "12000"], "12000 must be READ:WRITE"),
    (["--table-quota", "1:0"], "1:0 must be READ:WRITE, two whole numbers from 1 to 1000000000"),
    (["--account-quota", "a:b"], "a:b must be READ:WRITE"),
    (["--account-limit-exception", "LimitExceededException"], "--account-limit-exception"),
    (["--key-sample", "0"], "--key-sample"),
    (["--history-minutes", "0"], "--history-minutes"),
    (["--insights-delay", "-1"], "-1 must be a number from 0 to 3600"),
    (["--insights-minutes", "x"], "--insights-minutes"),
])
def test_bad_flags_are_refused(kumo_bin, args, expected):
    result = _serve(kumo_bin, *args)
    assert result.returncode != 0
    assert expected in result.stderr + result.stdout, result.stderr


def test_help_lists_the_capacity_flags(kumo_bin):
    result = subprocess.run([kumo_bin, "serve", "--help"], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0
    for flag in ("--capacity off|report|enforce", "--clock wall|manual", "--clock-start EPOCH",
                 "--admin-port N", "--admin-bind ADDRESS", "--burst-seconds S",
                 "--partition-read-units N", "--partition-write-units N",
                 "--partition-size-mb MIB", "--split-heat-fraction F", "--split-heat-seconds S",
                 "--splits on|off", "--max-partitions N", "--on-demand-initial R:W",
                 "--on-demand-peak-window S", "--on-demand-sustain S", "--table-quota R:W",
                 "--account-quota R:W",
                 "--account-limit-exception ThrottlingException|RequestLimitExceeded",
                 "--key-sample N", "--history-minutes N", "--insights-delay S",
                 "--insights-rule-quota N", "--insights-minutes N"):
        assert flag in result.stdout, flag
    assert "(default: 12000:4000)" in result.stdout
    assert "(default: report)" in result.stdout


def test_good_flags_start(kumo_bin, tmp_path_factory):
    srv = _server(kumo_bin, tmp_path_factory, {
        "capacity": "report", "clock": "manual", "burst-seconds": 0,
        "partition-read-units": 6000, "partition-write-units": 2000, "partition-size-mb": 1,
        "split-heat-fraction": 0.5, "split-heat-seconds": 10, "splits": "off",
        "max-partitions": 16, "on-demand-initial": "100:50", "on-demand-peak-window": 60,
        "on-demand-sustain": 5, "table-quota": "1000:1000", "account-quota": "2000:2000",
        "account-limit-exception": "RequestLimitExceeded", "key-sample": 1,
        "history-minutes": 5, "insights-delay": 2, "insights-rule-quota": 2,
        "insights-minutes": 5, "admin-bind": "127.0.0.1"})
    try:
        assert srv.admin.health() == {"status": "ok"}
    finally:
        srv.stop()
