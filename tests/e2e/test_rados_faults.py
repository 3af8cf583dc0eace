"""Faults of the Ceph cluster under Kumo's RADOS back end (run by scripts/test-rados.sh,
which starts the cluster and names its directory in $KUMO_CEPH_DIR).

One OSD of three is killed (kill -9) while clients write and read, and started again:
requests to the placement groups it led pause until the monitor marks it down (the
cluster's heartbeat grace, 8 s here) and then go on, on the two replicas left (pool size
3, min_size 2). No client sees an error, nothing acknowledged is lost, and the GSI ends
equal to the table.
"""

import json
import os
import subprocess
import threading
import time

import pytest

from kumo_testlib import KumoServer, on_rados

pytestmark = pytest.mark.skipif(
    not (on_rados() and os.environ.get("KUMO_CEPH_DIR")),
    reason="needs the loopback Ceph cluster of scripts/test-rados.sh",
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "scripts", "ceph-cluster.sh")


def ceph(*args):
    conf = os.path.join(os.environ["KUMO_CEPH_DIR"], "ceph.conf")
    return subprocess.run(["ceph", "-c", conf, *args], capture_output=True, text=True,
                          timeout=60, check=True).stdout


def osd_up(osd):
    dump = json.loads(ceph("osd", "dump", "-f", "json"))
    return [o["up"] for o in dump["osds"] if o["osd"] == osd][0] == 1


def all_pgs_active():
    summary = json.loads(ceph("pg", "stat", "-f", "json"))
    summary = summary.get("pg_summary", summary)
    states = summary.get("num_pg_by_state", [])
    total = summary.get("num_pgs", 0)
    active = sum(s["num"] for s in states if "active" in s["name"].split("+"))
    return total > 0 and active == total


def wait_until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} not within {seconds} s"
        time.sleep(0.5)


@pytest.fixture
def long_lease_server(kumo_bin, tmp_path):
    # Its lease (30 s, as by default) outlasts the time the cluster takes to mark the OSD
    # down (8 s here): a renewal waiting on that OSD's placement groups never lets it lapse.
    srv = KumoServer(kumo_bin, str(tmp_path), extra_args=["--rados-lease-seconds", "30"])
    srv.start()
    yield srv
    srv.stop()


def test_an_osd_killed_under_load_loses_nothing(long_lease_server):
    client_factory = long_lease_server.client
    client = client_factory()
    table = "osd-fault-" + str(int(time.time() * 1000))
    client.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    acknowledged = {}
    errors = []
    longest = [0.0]
    stop = threading.Event()
    lock = threading.Lock()

    def writer(w):
        c = client_factory()
        n = 0
        while not stop.is_set():
            key = f"w{w}-{n:06d}"
            started = time.monotonic()
            try:
                c.put_item(TableName=table,
                           Item={"pk": {"S": key}, "g": {"S": f"g{n % 7}"}, "n": {"N": str(n)}})
                got = c.get_item(TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True)
                assert got["Item"]["n"]["N"] == str(n)
            except Exception as e:  # noqa: BLE001 - every client error is a failure here
                errors.append(repr(e))
                return
            with lock:
                acknowledged[key] = n
                longest[0] = max(longest[0], time.monotonic() - started)
            n += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    cluster = os.environ["KUMO_CEPH_DIR"]
    try:
        time.sleep(2)
        subprocess.run([CLUSTER, "kill-osd", cluster, "1"], check=True)
        wait_until(lambda: not osd_up(1), 60, "osd.1 marked down")
        time.sleep(4)  # writes go on against two replicas
        before_restart = len(acknowledged)
        subprocess.run([CLUSTER, "start-osd", cluster, "1"], check=True)
        wait_until(lambda: osd_up(1), 120, "osd.1 up again")
        time.sleep(2)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
    # Every placement group serving again (recovery of osd.1's copies may still run).
    wait_until(all_pgs_active, 180, "every placement group active")
    assert not errors, errors[:3]
    assert len(acknowledged) > before_restart > 0
    print(f"\nosd fault: {len(acknowledged)} acknowledged writes, longest request pair "
          f"{longest[0]:.1f} s")

    items = {}
    kwargs = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        for item in page["Items"]:
            items[item["pk"]["S"]] = int(item["n"]["N"])
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    missing = [k for k, n in acknowledged.items() if items.get(k) != n]
    assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
    in_index = 0
    for g in range(7):
        kwargs = {"TableName": table, "IndexName": "by_g", "Select": "COUNT",
                  "KeyConditionExpression": "g = :g",
                  "ExpressionAttributeValues": {":g": {"S": f"g{g}"}}}
        while True:
            page = client.query(**kwargs)
            in_index += page["Count"]
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    assert in_index == len(items)
