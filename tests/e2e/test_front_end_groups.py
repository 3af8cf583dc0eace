"""The group of front ends that every KumoServer is with $KUMO_FRONT_ENDS set (kumo_testlib's
KumoGroup): N `kumo serve` processes on one RADOS namespace behind HAProxy, round-robin per
request. Skipped without $KUMO_FRONT_ENDS (> 1).

- Consecutive requests on one keep-alive client connection go to every front end in turn
  (counted in each front end's --log-requests log), and so do requests on fresh ones.
- kill() stops every front end and HAProxy; a restart on the same data directory starts
  them all again on the same namespace and finds the data.
- log_path merges the front ends' logs.
"""

import http.client

import pytest

from kumo_testlib import (TARGET_PREFIX, S, create_table_args, front_end_count, sign_headers,
                          encode_body, wait_table_active)

pytestmark = pytest.mark.skipif(front_end_count() < 2,
                                reason="runs with KUMO_FRONT_ENDS set above 1")


def test_requests_on_one_keep_alive_connection_go_round_robin(start_server):
    srv = start_server(extra_args=["--log-requests"])
    n = front_end_count()
    assert len(srv.members) == n and len({m.port for m in srv.members} | {srv.port}) == n + 1
    api = srv.api()
    api.ok("CreateTable", create_table_args("round-robin"))
    wait_table_active(srv.client(), "round-robin")
    before = srv.request_counts()
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    rounds = 10
    try:
        for i in range(rounds * n):
            body = encode_body({"TableName": "round-robin", "Item": {"pk": S(f"k{i}")}})
            headers = sign_headers(srv.port, body, {
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": TARGET_PREFIX + "PutItem"}, "AKIDKUMOE2E", "kumo-e2e-secret",
                "us-east-1")
            conn.request("POST", "/", body=body, headers=headers)
            r = conn.getresponse()
            r.read()
            assert r.status == 200
            # The client's connection stayed open: each request used the same socket.
            assert not r.will_close
    finally:
        conn.close()
    after = srv.request_counts()
    assert [a - b for a, b in zip(after, before)] == [rounds] * n, (before, after)

    # Fresh connections (the Api opens one per request) are spread the same way.
    before = after
    for i in range(n * 4):
        api.ok("GetItem", {"TableName": "round-robin", "Key": {"pk": S(f"k{i}")}, "ConsistentRead": True})
    after = srv.request_counts()
    assert [a - b for a, b in zip(after, before)] == [4] * n, (before, after)
    # Every front end's access lines are in the merged log.
    with open(srv.log_path, "rb") as f:
        assert sum(1 for line in f if b" latency=" in line) == sum(after)


def test_kill_stops_every_front_end_and_a_restart_finds_the_data(start_server, tmp_path):
    srv = start_server(data_dir=str(tmp_path / "d"))
    api = srv.api()
    api.ok("CreateTable", create_table_args("kept"))
    wait_table_active(srv.client(), "kept")
    for i in range(12):
        api.ok("PutItem", {"TableName": "kept", "Item": {"pk": S(f"k{i}")}})
    namespace, port = srv.namespace, srv.port
    procs = [m.proc for m in srv.members] + [srv.haproxy]
    srv.kill()
    assert not srv.alive() and all(p.poll() is not None for p in procs)
    assert srv.proc.returncode == -9
    srv.start(port=port)
    assert srv.alive() and srv.namespace == namespace and srv.port == port
    assert all(m.proc.pid not in [p.pid for p in procs] for m in srv.members)
    for i in range(12):
        got = srv.api().ok("GetItem", {"TableName": "kept", "Key": {"pk": S(f"k{i}")},
                                       "ConsistentRead": True})
        assert got["Item"] == {"pk": S(f"k{i}")}
    assert srv.terminate() == 0


def test_one_front_end_dead_makes_the_group_dead_and_start_restarts_all(start_server):
    srv = start_server()
    srv.members[1].kill()
    assert not srv.alive()
    assert srv.proc.poll() == -9
    srv.start()
    assert srv.alive() and len(srv.members) == front_end_count()
    srv.api().ok("ListTables")
