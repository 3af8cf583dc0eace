"""Fault loops over three Kumo front ends sharing one RADOS pool (docs/scale-out.md,
"Several front ends"), under the crash loops' mixed write load (crash_workload.py): six
workers, two on each front end, run PutItem, conditional UpdateItem, DeleteItem,
BatchWriteItem and TransactWriteItems on two tables with an LSI and two GSIs, whose
partitions split at 24 keys.

Each loop injects one fault into one front end, chosen at random, while the others serve:

* `kill`: kill -9 after 0.2 to 1.0 s of load;
* `transaction`: the front end is started with a fault point that kills it inside its first
  transaction across partitions: before its locks (`prepare`), with its items locked
  (`prepared`), or once committed (`transaction`);
* `split`: likewise inside its first partition split (`intent`, `copy`, `publish`,
  `cleanup`); once partitions stop splitting, the fault never fires and the front end is
  killed as in `kill`;
* `pause`: SIGSTOP for two lease lengths and a second (the tests' lease is 3 s), then
  SIGCONT: the others take its work over, and it fails the request it held;
* `osd` (when scripts/test-rados.sh started the cluster and names it in KUMO_CEPH_DIR): one
  of the three OSDs is killed (kill -9) instead, and started again once the monitor has
  marked it down (8 s here): every front end's requests to its placement groups wait
  meanwhile, longer than the tests' lease, so leases lapse and are taken over while the
  OSD is down. A request failed with InternalServerError is in flight (applied or not).

A killed front end is started again. After a pause or an OSD loop, each front end writes
a table outside the model until it can: one whose lease lapsed fails its writes with
InternalServerError until it goes on under a new client, and that belongs to the loop of
the fault. Then, through another front end: every key that no
operation was in flight for has exactly its last acknowledged state; an in-flight
operation's keys have their old or their new state, a transaction all or nothing; every
GSI and the LSI hold exactly the entries the items imply; DescribeTable's counts equal the
scan's; and both tables' streams, read on from where the last loop's reading stopped (each
loop through another front end), hold every change of every key once and in order, ending
at the key's state (crash_workload.StreamChecker). The summary gives the longest time a
client waited for an answer.

Loops: KUMO_FAULT_LOOPS (default 50: ten of each fault; scripts/test-rados.sh runs 5, one
of each); KUMO_FAULT_KINDS=osd,kill runs those faults only.
Random choices: KUMO_FAULT_SEED (printed in every failure and in the summary).
"""

import json
import os
import random
import signal
import subprocess
import threading
import time

import pytest

from crash_workload import Model, StreamChecker, create_tables, run_load, verify
from kumo_testlib import KumoProcess, on_rados
from rados_helpers import check_layout, deployment_prefix
from test_crash_loops import report
from test_rados_faults import CLUSTER, ceph, osd_up, wait_until
from front_end_helpers import create, retried, start_with_fault

pytestmark = pytest.mark.skipif(not on_rados(), reason="several front ends share a RADOS pool")

LOOPS = int(os.environ.get("KUMO_FAULT_LOOPS", "50"))
LEASE = 3  # the tests' lease (kumo_testlib)
# Splits happen most in the first loops. KUMO_FAULT_KINDS (a comma-separated list) keeps
# some of them only.
KINDS = [k for k in ["split", "transaction", "pause", "kill"]
         + (["osd"] if os.environ.get("KUMO_CEPH_DIR") else [])
         if k in os.environ.get("KUMO_FAULT_KINDS", k).split(",")]
TRANSACTION_FAULTS = ["prepare", "prepared", "transaction"]
SPLIT_FAULTS = ["intent", "copy", "publish", "cleanup"]
# A table outside the model, which each front end writes after a loop in which leases
# lapsed, until it can.
PROBE = "fault-probe"


def all_pgs_clean():
    states = json.loads(ceph("pg", "ls", "-f", "json"))
    states = states.get("pg_stats", states) if isinstance(states, dict) else states
    return bool(states) and all(p["state"] == "active+clean" for p in states)


def write_until_it_can(server, where):
    """A front end whose lease lapsed (the paused one; any of them while an OSD was down)
    answers writes with InternalServerError until it goes on under a new client, with its
    catalog loaded again on it. That belongs to the loop of the fault, not to the next one:
    the next loop starts once every front end writes again."""
    client = server.client()
    retried(lambda: client.put_item(TableName=PROBE, Item={"pk": {"S": "probe"}}),
            f"{where}: a write through front end {server.port}")


def test_faults_of_one_front_end_of_three_lose_nothing(kumo_bin, tmp_path, request):
    seed = int(os.environ.get("KUMO_FAULT_SEED") or random.randrange(1 << 32))
    rng = random.Random(seed)
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared,
                           extra_args=["--rados-partition-keys", "24"]) for _ in range(3)]
    fired = {"transaction": 0, "split": 0}
    longest_pause = 0.0
    longest_wait = {}  # fault → the longest a client waited for an answer in its loops
    osd_kills = 0
    started = time.monotonic()
    try:
        for server in servers:
            server.start()
        create_tables(servers[0].api())
        create(servers[0].client(), PROBE)
        model = Model(6)
        stream = StreamChecker()
        for loop in range(LOOPS):
            kind = KINDS[loop % len(KINDS)]
            victim = rng.randrange(3)
            where = f"loop {loop + 1}/{LOOPS}, {kind} of front end {victim} (KUMO_FAULT_SEED={seed})"
            if kind in ("transaction", "split"):
                fault = rng.choice(TRANSACTION_FAULTS if kind == "transaction" else SPLIT_FAULTS)
                where += f" at {fault}"
                servers[victim].kill()
                start_with_fault(servers[victim], fault)
            stop = threading.Event()
            ports = [s.port for s in servers]
            workers, threads = run_load(model, servers[(victim + 1) % 3].api, ports, rng,
                                        f"F{loop}", stop,
                                        unknown_on_500=(kind in ("pause", "osd")))
            if kind == "pause":
                time.sleep(rng.uniform(0.2, 0.6))
                paused_at = time.monotonic()
                servers[victim].proc.send_signal(signal.SIGSTOP)
                time.sleep(2 * LEASE + 1)
                servers[victim].proc.send_signal(signal.SIGCONT)
                longest_pause = max(longest_pause, time.monotonic() - paused_at)
            elif kind == "kill":
                time.sleep(rng.uniform(0.2, 1.0))
                servers[victim].kill()
            elif kind == "osd":
                osd = rng.randrange(3)
                where += f" (osd.{osd} instead)"
                cluster = os.environ["KUMO_CEPH_DIR"]
                time.sleep(rng.uniform(0.2, 1.0))
                subprocess.run([CLUSTER, "kill-osd", cluster, str(osd)], check=True)
                wait_until(lambda: not osd_up(osd), 60, f"{where}: osd.{osd} marked down")
                time.sleep(1)  # writes go on against two replicas
                subprocess.run([CLUSTER, "start-osd", cluster, str(osd)], check=True)
                wait_until(lambda: osd_up(osd), 120, f"{where}: osd.{osd} up again")
                osd_kills += 1
            else:
                # The fault point kills the front end when its step comes.
                deadline = time.monotonic() + 4
                while servers[victim].alive() and time.monotonic() < deadline:
                    time.sleep(0.05)
                if not servers[victim].alive():
                    fired[kind] += 1
                servers[victim].kill()
            stop.set()
            for t in threads:
                t.join(timeout=60)
            assert not any(t.is_alive() for t in threads), f"{where}: load threads hang"
            errors = [e for w in workers for e in w.errors]
            assert not errors, f"{where}: unexpected answers:\n" + "\n".join(errors[:5])
            longest_wait[kind] = max([longest_wait.get(kind, 0.0)] + [w.longest for w in workers])
            model.acknowledged += sum(w.acked_items for w in workers)
            pendings = [w.pending for w in workers if w.pending is not None]
            # A killed front end starts again. What a paused one held was finished by
            # another once its lease lapsed (the others look every lease length): two lease
            # lengths after the pause began, it has been.
            if not servers[victim].alive():
                servers[victim].start()
            if kind == "osd":
                # The OSD's store is in memory: it came back empty, and is whole again once
                # every placement group is clean. (A second OSD killed before then could
                # take the last copy of what was written meanwhile: two faults, which a pool
                # of three copies does not survive.)
                wait_until(all_pgs_clean, 300, f"{where}: every placement group clean")
            if kind in ("pause", "osd"):
                for server in servers:
                    write_until_it_can(server, where)
            if loop < 3 or loop == LOOPS - 1:
                check_layout(deployment_prefix(servers[0]))
            checker = servers[(victim + 1 + rng.randrange(2)) % 3]
            problems = verify(checker.api(), model, pendings)
            problems += stream.check(checker.api(), checker.port, model)
            assert not problems, (f"{where}: {len(problems)} problem(s):\n"
                                  + "\n".join(problems[:10]))
            model.loops += 1
        elapsed = time.monotonic() - started
        splits = 0
        for path in os.listdir(tmp_path):  # every front end's logs, of every start
            if path.endswith(".log"):
                with open(tmp_path / path, "rb") as f:
                    splits += f.read().count(b" split at token ")
        report(request.config,
               f"fault loops over 3 front ends: {model.loops} loops in {elapsed:.1f}s, "
               f"{model.acknowledged} acknowledged item writes, {model.verified} key states "
               f"verified, {model.in_flight} in-flight item writes resolved "
               f"({model.in_flight_applied} applied) from {model.in_flight_ops} in-flight "
               f"operations; {stream.records} stream records checked; fault points fired: {fired['transaction']} in a transaction, "
               f"{fired['split']} in a split; {splits} splits; {osd_kills} OSD kills; longest "
               f"pause {longest_pause:.1f}s; longest wait for an answer: "
               f"{', '.join(f'{k} {v:.1f}s' for k, v in longest_wait.items())}; "
               f"KUMO_FAULT_SEED={seed}")
        assert model.acknowledged > 0
        if LOOPS >= len(KINDS) * 2 and "transaction" in KINDS:
            # Every worker runs transactions across partitions: the fault fires.
            assert fired["transaction"] >= 1
    finally:
        for server in servers:
            server.stop()
