"""Fixtures for the end-to-end suite.

The binary is taken from $KUMO_BIN, else <repo>/build/kumo. A missing binary is a test
failure with a clear message, never a silent skip.
"""

import os

import pytest

# Shared helper modules whose asserts should report their operands; registered here, before
# any test module imports them.
pytest.register_assert_rewrite("partiql_helpers", "partiql_write_helpers")

from kumo_testlib import (  # noqa: E402
    Api,
    KumoServer,
    create_table_args,
    front_end_count,
    kumo_binary,
    make_client,
    unique_name,
    wait_table_active,
)

_server_logs = []
_shared = []

# The group's own tests are collected only when the servers are groups (KUMO_FRONT_ENDS).
collect_ignore = [] if front_end_count() > 1 else ["test_front_end_groups.py"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "single_process(reason): depends on one kumo process by nature; skipped "
        "when $KUMO_FRONT_ENDS makes every server a group of front ends")


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("single_process")
    if marker is not None and front_end_count() > 1:
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
        pytest.skip(f"KUMO_FRONT_ENDS={front_end_count()}: one process by nature: {reason}")


@pytest.fixture(scope="session")
def kumo_bin():
    path = kumo_binary()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(
            f"kumo binary not found or not executable at {path}. Build it with "
            "`cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && "
            "cmake --build build --target kumo`, or point KUMO_BIN at it.",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def server_workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("kumo-servers"))


@pytest.fixture(scope="session")
def server(kumo_bin, server_workdir):
    """The shared in-memory server used by most tests."""
    srv = KumoServer(kumo_bin, server_workdir)
    try:
        srv.start()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    _server_logs.append(srv.log_path)
    _shared.append(srv)
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _shared_server_guard():
    """Fails the test during which the shared server died, and restarts it on the same
    port (in-memory state is lost) so that later tests still report on their own."""
    yield
    for srv in _shared:
        if srv.proc is not None and not srv.alive():
            status = srv.proc.returncode
            log, tail = srv.log_path, srv.log_tail()
            srv.start(port=srv.port)
            _server_logs.append(srv.log_path)
            pytest.fail(f"kumo died during this test (exit status {status}); it was restarted "
                        f"with an empty in-memory state. Log {log}:\n{tail}", pytrace=False)


@pytest.fixture
def start_server(kumo_bin, tmp_path):
    """Factory for extra servers: start_server(data_dir=None, credentials=None,
    extra_args=()) → started KumoServer; every one is stopped at teardown."""
    started = []

    def _start(data_dir=None, credentials=None, extra_args=(), start=True):
        srv = KumoServer(kumo_bin, str(tmp_path), data_dir=data_dir, credentials=credentials,
                         extra_args=extra_args)
        started.append(srv)
        if start:
            srv.start()
            _server_logs.append(srv.log_path)
        return srv

    yield _start
    for srv in started:
        if srv.proc is not None:
            srv.kill()


@pytest.fixture(scope="module")
def module_server(kumo_bin, tmp_path_factory):
    """A private in-memory server for a module that needs full control of the table set."""
    srv = KumoServer(kumo_bin, str(tmp_path_factory.mktemp("kumo-module")))
    srv.start()
    _server_logs.append(srv.log_path)
    _shared.append(srv)
    yield srv
    _shared.remove(srv)
    srv.stop()


@pytest.fixture(scope="module")
def auth_server(kumo_bin, tmp_path_factory):
    """A server in verify mode (--credentials) with two known key pairs."""
    d = tmp_path_factory.mktemp("kumo-auth")
    creds = d / "credentials"
    creds.write_text("AKIDVERIFYONE secret-one-abc\nAKIDVERIFYTWO secret/two+xyz\n")
    srv = KumoServer(kumo_bin, str(d), credentials=str(creds))
    srv.start()
    _server_logs.append(srv.log_path)
    _shared.append(srv)
    yield srv
    _shared.remove(srv)
    srv.stop()


@pytest.fixture(scope="session")
def client_factory(server):
    """client_factory(endpoint=None, access_key=..., secret=..., region=...) → boto3 client."""

    def _make(endpoint=None, **kwargs):
        return make_client(endpoint or server.endpoint, **kwargs)

    return _make


@pytest.fixture(scope="session")
def ddb(server):
    return make_client(server.endpoint)


@pytest.fixture(scope="session")
def api(server):
    """Raw signed JSON calls: api("PutItem", {...}) → Response."""
    return Api(server.port)


@pytest.fixture
def make_table(api, ddb):
    """make_table(hash_key=("pk","S"), range_key=None, name=None, client=None, **CreateTable
    args) → table name. Created with a raw call (so members newer than the installed botocore
    model, such as DeletionProtectionEnabled, pass), or through the boto3 `client` if given.
    Tables are PAY_PER_REQUEST unless billing is given, and are deleted after the test
    (deletion protection is switched off first)."""
    created = []

    def _make(hash_key=("pk", "S"), range_key=None, name=None, client=None, **extra):
        name = name or unique_name()
        args = create_table_args(name, hash_key, range_key, **extra)
        if client is None:
            resp = api("CreateTable", args)
            assert resp.status == 200, f"CreateTable {name} failed: {resp!r}"
        else:
            client.create_table(**args)
        created.append(name)
        wait_table_active(client or ddb, name)
        return name

    yield _make
    for name in created:
        try:
            api("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
            api("DeleteTable", {"TableName": name})
        except Exception:
            pass


def pytest_terminal_summary(terminalreporter):
    if _server_logs:
        dirs = sorted({os.path.dirname(p) for p in _server_logs})
        terminalreporter.write_line("kumo server logs (kumo-<port>-<start>.log) in: "
                                    + ", ".join(dirs))
    if front_end_count() > 1:
        terminalreporter.write_line(
            f"KUMO_FRONT_ENDS={front_end_count()}: each server was {front_end_count()} front "
            "ends behind HAProxy (logs kumo-<port>-<start>.fe<i>.log, merged in "
            "kumo-<port>-<start>.log)")
