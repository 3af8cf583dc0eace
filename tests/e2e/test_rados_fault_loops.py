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
  SIGCONT: the others take its work over, and it fails the request it held.

A killed front end is started again. Then, through another front end: every key that no
operation was in flight for has exactly its last acknowledged state; an in-flight
operation's keys have their old or their new state, a transaction all or nothing; every
GSI and the LSI hold exactly the entries the items imply; and DescribeTable's counts equal
the scan's. (Streams are not checked: a stream across front ends is not built yet.)

Loops: KUMO_FAULT_LOOPS (default 40: ten of each fault; scripts/test-rados.sh runs 8).
Random choices: KUMO_FAULT_SEED (printed in every failure and in the summary).
"""

import os
import random
import signal
import threading
import time

import pytest

from crash_workload import Model, create_tables, run_load, verify
from kumo_testlib import KumoProcess, on_rados
from rados_helpers import check_layout, deployment_prefix
from test_crash_loops import report
from test_rados_front_ends import start_with_fault

pytestmark = pytest.mark.skipif(not on_rados(), reason="several front ends share a RADOS pool")

LOOPS = int(os.environ.get("KUMO_FAULT_LOOPS", "40"))
LEASE = 3  # the tests' lease (kumo_testlib)
KINDS = ["split", "transaction", "pause", "kill"]  # splits happen most in the first loops
TRANSACTION_FAULTS = ["prepare", "prepared", "transaction"]
SPLIT_FAULTS = ["intent", "copy", "publish", "cleanup"]


def test_faults_of_one_front_end_of_three_lose_nothing(kumo_bin, tmp_path, request):
    seed = int(os.environ.get("KUMO_FAULT_SEED") or random.randrange(1 << 32))
    rng = random.Random(seed)
    shared = tmp_path / "shared"
    servers = [KumoProcess(kumo_bin, str(tmp_path), data_dir=shared,
                           extra_args=["--rados-partition-keys", "24"]) for _ in range(3)]
    fired = {"transaction": 0, "split": 0}
    longest_pause = 0.0
    started = time.monotonic()
    try:
        for server in servers:
            server.start()
        create_tables(servers[0].api())
        model = Model(6)
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
                                        f"F{loop}", stop, unknown_on_500=(kind == "pause"))
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
            model.acknowledged += sum(w.acked_items for w in workers)
            pendings = [w.pending for w in workers if w.pending is not None]
            # A killed front end starts again. What a paused one held was finished by
            # another once its lease lapsed (the others look every lease length): two lease
            # lengths after the pause began, it has been.
            if not servers[victim].alive():
                servers[victim].start()
            if loop < 3 or loop == LOOPS - 1:
                check_layout(deployment_prefix(servers[0]))
            checker = servers[(victim + 1 + rng.randrange(2)) % 3]
            problems = verify(checker.api(), model, pendings)
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
               f"operations; fault points fired: {fired['transaction']} in a transaction, "
               f"{fired['split']} in a split; {splits} splits; longest pause "
               f"{longest_pause:.1f}s; KUMO_FAULT_SEED={seed}")
        assert model.acknowledged > 0
        if LOOPS >= len(KINDS) * 2:
            # Every worker runs transactions across partitions: the fault fires.
            assert fired["transaction"] >= 1
    finally:
        for server in servers:
            server.stop()
