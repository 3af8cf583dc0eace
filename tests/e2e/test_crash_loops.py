"""Crash-consistency loops: a mixed write load against `kumo serve --data-dir`, SIGKILL at a
random moment, restart on the same directory, exact verification, and on to the next loop
with the state carried over (a write is
acknowledged only after its WriteBatch is in the WAL; the default fsync policy loses no
acknowledged write on process kill).

Per loop: WORKERS threads run PutItem, conditional UpdateItem (SET + ADD cnt, condition on
the per-key version), DeleteItem, BatchWriteItem (25 puts/deletes over both tables) and
TransactWriteItems (1-3 writes plus a ConditionCheck) on two tables, one with an LSI, a
multi-attribute GSI and a plain GSI (crash_workload.py describes the model). The server is
killed 0.2-1.0 s after the load starts. After the restart:

* every key no operation was in flight for has exactly its last acknowledged state;
* every key of an in-flight operation has its old or its new state; an in-flight
  transaction is all-or-nothing; an in-flight BatchWriteItem may be applied per item;
* every index (both GSIs, the LSI) holds exactly the entries the base items imply, with
  the projected attributes, and DescribeTable ItemCount equals the Scan count (table and
  index counts);
* both tables' streams, read on from where the last loop stopped, hold every change of
  every key once and in order, ending at the key's state (crash_workload.StreamChecker).

On the RADOS back end (scripts/test-rados.sh) partitions split at 24 keys, so that the first
loops kill the server while partitions split, and the later ones run on a map of many
partitions; after the restarts of the first three loops and of the last, the pool holds one
object per partition of the map, each with only the keys of its range (rados_helpers.check_layout); the summary counts the
splits.

Loops: KUMO_CRASH_LOOPS (default 20). Random choices: KUMO_CRASH_SEED (default random;
printed in the summary and in every failure). Longer runs:

    KUMO_CRASH_LOOPS=500 /usr/bin/python3 -m pytest tests/e2e/test_crash_loops.py -s

(with KUMO_BIN=/path/to/kumo as for the rest of the suite). The one-line summary (loops,
acknowledged writes, key states verified, in-flight writes resolved) is printed with -s and
in pytest's terminal summary.
"""

import os
import random
import threading
import time

from crash_workload import Model, StreamChecker, create_tables, run_load, verify
from kumo_testlib import on_rados
from rados_helpers import check_layout, deployment_prefix

LOOPS = int(os.environ.get("KUMO_CRASH_LOOPS", "20"))
WORKERS = 4
KILL_AFTER = (0.2, 1.0)


class _Summary:
    """Adds lines to pytest's terminal summary (visible without -s)."""

    lines = []

    def pytest_terminal_summary(self, terminalreporter):
        for line in self.lines:
            terminalreporter.write_line(line)


def report(config, line):
    if config.getoption("capture") == "no":
        print("\n" + line)
    if not config.pluginmanager.has_plugin("kumo-crash-summary"):
        config.pluginmanager.register(_Summary(), "kumo-crash-summary")
    _Summary.lines.append(line)


def test_sigkill_loops_lose_no_acknowledged_write(start_server, tmp_path, request):
    seed = int(os.environ.get("KUMO_CRASH_SEED") or random.randrange(1 << 32))
    rng = random.Random(seed)
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data),
                       extra_args=["--rados-partition-keys", "24"] if on_rados() else [])
    logs = []
    create_tables(srv.api())
    model = Model(WORKERS)
    stream = StreamChecker()
    started = time.monotonic()

    for loop in range(LOOPS):
        where = f"loop {loop + 1}/{LOOPS} (KUMO_CRASH_SEED={seed})"
        stop = threading.Event()
        workers, threads = run_load(model, srv.api, srv.port, rng, f"L{loop}", stop)
        time.sleep(rng.uniform(*KILL_AFTER))
        log = srv.log_path
        logs.append(log)
        srv.kill()
        stop.set()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads), f"{where}: load threads hang"
        errors = [e for w in workers for e in w.errors]
        assert not errors, (f"{where}: unexpected answers during the load (log {log}):\n"
                            + "\n".join(errors[:5]))
        model.acknowledged += sum(w.acked_items for w in workers)
        pendings = [w.pending for w in workers if w.pending is not None]

        srv.start()
        if on_rados() and (loop < 3 or loop == LOOPS - 1):
            # Every split the kill interrupted was undone or finished (the partitions
            # split in the first loops; reading the whole pool takes a second).
            check_layout(deployment_prefix(srv))
        problems = verify(srv.api(), model, pendings)
        problems += stream.check(srv.api(), srv.port, model)
        assert not problems, (f"{where}: {len(problems)} problem(s) after SIGKILL and restart "
                              f"(log before the kill {log}, after {srv.log_path}):\n"
                              + "\n".join(problems[:10]))
        model.loops += 1

    elapsed = time.monotonic() - started
    logs.append(srv.log_path)
    splits = 0
    for path in logs:
        with open(path, "rb") as f:
            splits += f.read().count(b" split at token ")
    if on_rados():
        # 40 partition keys per worker, each with an LSI entry and GSI entries: four
        # partitions of 24 keys cannot hold them.
        assert splits >= 8, f"only {splits} partition splits"
    report(request.config,
           f"crash loops: {model.loops} SIGKILL/restart loops in {elapsed:.1f}s, "
           f"{model.acknowledged} acknowledged item writes, {model.verified} key states "
           f"verified, {model.in_flight} in-flight item writes resolved "
           f"({model.in_flight_applied} applied, "
           f"{model.in_flight - model.in_flight_applied} not) from {model.in_flight_ops} "
           f"in-flight operations, {stream.records} stream records checked"
           f"{f', {splits} partition splits' if on_rados() else ''}; "
           f"KUMO_CRASH_SEED={seed}")
    assert model.acknowledged > 0
