"""scripts/kumo-cluster.sh: three front ends on one RADOS namespace behind HAProxy.

Runs the script against the Ceph cluster of $KUMO_CEPH_CONF (pool $KUMO_RADOS_POOL, a fresh
namespace, free ports), then works through the balancer and through each front end, and
checks that `down` stops every process it started and leaves the Ceph cluster running.
Skipped without $KUMO_CEPH_CONF or without haproxy."""

import os
import random
import shutil
import socket
import subprocess
import uuid

import pytest

from kumo_testlib import REPO_ROOT, free_port, make_client, unique_name, wait_table_active

SCRIPT = os.path.join(REPO_ROOT, "scripts", "kumo-cluster.sh")
FRONT_ENDS = 3
ITEMS = 30


def haproxy():
    return shutil.which("haproxy") or ("/usr/sbin/haproxy"
                                       if os.access("/usr/sbin/haproxy", os.X_OK) else None)


pytestmark = [
    pytest.mark.skipif(not os.environ.get("KUMO_CEPH_CONF"),
                       reason="needs a Ceph cluster ($KUMO_CEPH_CONF)"),
    pytest.mark.skipif(haproxy() is None, reason="needs haproxy (apt-get install haproxy)"),
]


def consecutive_free_ports(n):
    """A first port P such that P .. P+n-1 are all free (below the
    ephemeral range)."""
    for _ in range(200):
        base = random.randrange(20000, 32000)
        socks = []
        try:
            for port in range(base, base + n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def alive(pid):
    """True while `pid` is a process that has not exited (a zombie has no command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return bool(f.read())
    except OSError:
        return False


def run_script(cluster, *args, timeout=300):
    return subprocess.run([SCRIPT, *args], env=cluster["env"], capture_output=True, text=True,
                          timeout=timeout)


def logs(cluster):
    out = []
    log_dir = os.path.join(cluster["dir"], "log")
    for name in sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []:
        with open(os.path.join(log_dir, name), errors="replace") as f:
            out.append(f"--- {name}\n{f.read()[-3000:]}")
    return "\n".join(out)


@pytest.fixture(scope="module")
def cluster(kumo_bin, tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("kumo-cluster"))
    first, lb = consecutive_free_ports(FRONT_ENDS), free_port()
    while first <= lb < first + FRONT_ENDS:
        lb = free_port()
    env = dict(os.environ,
               CEPH_CONF=os.environ["KUMO_CEPH_CONF"],
               KUMO_RADOS_POOL=os.environ.get("KUMO_RADOS_POOL", "kumo"),
               KUMO_RADOS_NAMESPACE="e2e-cluster-" + uuid.uuid4().hex[:16] + "-",
               KUMO_CLUSTER_DIR=directory,
               KUMO_BIN=kumo_bin)
    c = {"dir": directory, "env": env, "lb": lb,
         "ports": list(range(first, first + FRONT_ENDS))}
    up = run_script(c, "up", str(FRONT_ENDS), "--first-port", str(first), "--lb-port", str(lb))
    if up.returncode != 0:
        pytest.fail(f"kumo-cluster.sh up failed ({up.returncode}):\n{up.stdout}\n{up.stderr}\n"
                    f"{logs(c)}", pytrace=False)
    c["up"] = up.stdout
    pid_dir = os.path.join(directory, "pids")
    c["pids"] = {name: int(open(os.path.join(pid_dir, name)).read())
                 for name in os.listdir(pid_dir)}
    yield c
    if os.path.exists(os.path.join(directory, "state")):
        run_script(c, "down")


def test_up_starts_every_front_end_and_the_balancer(cluster):
    assert sorted(cluster["pids"]) == sorted(
        ["haproxy.pid"] + [f"kumo-{p}.pid" for p in cluster["ports"]])
    assert all(alive(pid) for pid in cluster["pids"].values()), cluster["pids"]
    for port in [cluster["lb"]] + cluster["ports"]:
        assert f"http://127.0.0.1:{port}" in cluster["up"], cluster["up"]
    status = run_script(cluster, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.count("running, answers") == FRONT_ENDS + 1, status.stdout
    assert "existing" in status.stdout, status.stdout


def test_a_table_through_the_balancer(cluster):
    ddb = make_client(f"http://127.0.0.1:{cluster['lb']}")
    name = unique_name("cluster")
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    cluster["table"] = name
    # Successive requests go to successive front ends: each must know the table.
    try:
        wait_table_active(ddb, name, timeout=30)
    except ddb.exceptions.ResourceNotFoundException as e:
        pytest.fail(f"DescribeTable through the balancer: a front end does not know the table "
                    f"created through another ({e})", pytrace=False)
    for i in range(ITEMS):
        ddb.put_item(TableName=name, Item={"pk": {"S": f"item-{i}"}, "n": {"N": str(i)}})
    cluster["written"] = True
    for i in range(ITEMS):
        item = ddb.get_item(TableName=name, Key={"pk": {"S": f"item-{i}"}},
                            ConsistentRead=True).get("Item")
        assert item == {"pk": {"S": f"item-{i}"}, "n": {"N": str(i)}}, (i, item)
    assert scan_count(ddb, name) == ITEMS


def scan_count(ddb, name):
    count, args = 0, {"TableName": name, "Select": "COUNT"}
    while True:
        page = ddb.scan(**args)
        count += page["Count"]
        if "LastEvaluatedKey" not in page:
            return count
        args["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_every_front_end_serves_the_table(cluster):
    name = cluster.get("table")
    if name is None:
        pytest.skip("the table was not created")
    clients = {port: make_client(f"http://127.0.0.1:{port}") for port in cluster["ports"]}
    lists = {port: name in ddb.list_tables()["TableNames"] for port, ddb in clients.items()}
    assert all(lists.values()), f"which front ends list the table {name}: {lists}"
    for port, ddb in clients.items():
        assert ddb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE", port
        if cluster.get("written"):
            assert scan_count(ddb, name) == ITEMS, f"port {port}"


def test_down_stops_everything(cluster):
    down = run_script(cluster, "down")
    assert down.returncode == 0, down.stdout + down.stderr
    still = {name: pid for name, pid in cluster["pids"].items() if alive(pid)}
    assert not still, f"still running after down: {still}"
    for port in [cluster["lb"]] + cluster["ports"]:
        assert not listening(port), f"port {port} still accepts connections"
    assert not os.path.exists(os.path.join(cluster["dir"], "state"))
    status = run_script(cluster, "status")
    assert status.returncode == 3, status.stdout + status.stderr
    # The Ceph cluster was given (CEPH_CONF), so down leaves it running.
    if shutil.which("rados"):
        pools = subprocess.run(["rados", "-c", os.environ["KUMO_CEPH_CONF"], "lspools"],
                               capture_output=True, text=True, timeout=60)
        assert pools.returncode == 0 and cluster["env"]["KUMO_RADOS_POOL"] in pools.stdout, \
            pools.stdout + pools.stderr
