#!/usr/bin/env python3
"""Prints run-peers.sh's report, in Markdown, from the JSON lines of a run.

Usage: peers_table.py RESULTS.jsonl

The lines are kumo-bench's ("run", "startup", "loaded") and run-peers.sh's own: "config"
(the run's settings; several lines are merged), "failed" (a run that could not be set up,
with kumo-bench's reason; workload "start": a server that was not measured at all) and
"note" (a caveat on a run). A figure is printed only if it was
measured; anything missing shows as "-", with the reason when one is known.
"""
import json
import re
import statistics
import sys

SERVERS = [
    ("kumo", "Kumo"),
    ("dynalite", "dynalite"),
    ("ddblocal", "DynamoDB Local"),
    ("nginx", "nginx (fixed 200)"),
]
SERVER_DESCRIPTIONS = {
    "kumo": "Kumo",
    "dynalite": "dynalite (Node.js, in memory)",
    "ddblocal": "DynamoDB Local (Java, in memory)",
    "nginx": "nginx, 1 worker answering `{}`: the loopback HTTP ceiling",
}
# kumo-bench-floor, started between Kumo's starts: what the machine takes to start a process
# and carry one request, under every server's start-up (run-peers.sh floor_start).
FLOOR_DESCRIPTION = "floor: a static server that only answers, started between Kumo's starts"
# The DynamoDB workloads, in the report's order (health is among Kumo's extras).
WORKLOADS = [
    ("getitem", "GetItem"),
    ("putitem", "PutItem"),
    ("updateitem", "UpdateItem, conditional"),
    ("batch-write", "BatchWriteItem of 25"),
    ("mixed", "50% GetItem / 50% UpdateItem"),
    ("query", "Query, 10 items"),
    ("gsi-query", "Query of a 2+2 GSI, 10 items"),
]
# What each server is meant to run; nginx gives the ceiling for the targets' ratios.
NGINX_WORKLOADS = {"getitem", "putitem", "query", "gsi-query"}
STATUS_ONLY = {"getitem", "query", "gsi-query"}  # nginx's "{}" cannot pass the body check

# Issue 9's targets, server on one core and load generator on the other, 64 connections.
CEILING_TARGETS = {"getitem": 0.60, "putitem": 0.40, "query": 0.30, "gsi-query": 0.25}
OPEN_LOOP_P99_MS = 1.0
# Kumo's open loops (run-peers.sh open_loops): label, and how the report names the run.
OPEN_LOOPS = (("kumo-open", ""), ("kumo-open-rt", ", the server at real-time priority"))
STARTUP_MS = 2.0
IDLE_RSS_MB = 6.0
DISK_ITEMS = 1_000_000
DISK_STARTUP_MS = 50.0
# Kumo's RocksDB memory budget, fixed in src/storage (storage.h: block_cache_bytes;
# rocksdb_storage.cpp: write_buffer_size x max_write_buffer_number).
BLOCK_CACHE_MIB = 128
WRITE_BUFFERS_MIB = 2 * 32
ITEM_BYTES = 200  # kumo-bench's --item-bytes default


class Results:
    def __init__(self, path):
        self.runs, self.startups, self.loaded = {}, {}, {}
        self.startup_samples = {}
        self.failures, self.notes, self.config = {}, {}, {}
        self.skipped = {}  # label: why the server was not measured at all
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                kind = r.get("kind")
                if kind == "run":
                    self.runs[(r["label"], r["workload"])] = r
                elif kind == "startup":
                    # Several starts of one server: the last stayed up (its RSS counts);
                    # the start-up time is the median of all.
                    samples = self.startup_samples.setdefault(r["label"], [])
                    samples.append(r["startup_ms"])
                    self.startups[r["label"]] = dict(r, startup_ms=statistics.median(samples),
                                                     startup_samples=list(samples))
                elif kind == "loaded":
                    self.loaded[r["label"]] = r
                elif kind == "failed" and r["workload"] == "start":
                    self.skipped[r["label"]] = r["reason"]
                elif kind == "failed":
                    self.failures[(r["label"], r["workload"])] = r["reason"]
                elif kind == "note":
                    self.notes.setdefault((r["label"], r["workload"]), []).append(r["text"])
                elif kind == "config":
                    self.config.update({k: v for k, v in r.items() if k != "kind"})

    def run(self, label, workload):
        return self.runs.get((label, workload))

    def ran(self, label):
        """Whether the server was started or anything was recorded for it."""
        return label in self.startups or any(key[0] == label for key in
                                             list(self.runs) + list(self.failures))

    def failure(self, label, workload):
        """Why a run is missing; None when it is there."""
        if self.run(label, workload):
            return None
        return self.failures.get((label, workload), "not run")


# Formatting.

def fmt_ops(r):
    return f"{r['ops_per_s']:,.0f}" if r else "-"


def fmt_ms(value):
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def fmt_latency(r, which):
    return fmt_ms(r["latency_ms"][which]) if r else "-"


def fmt_us(r):
    return f"{r['server_cpu_us_per_op']:.1f}" if r and "server_cpu_us_per_op" in r else "-"


def fmt_wait(r):
    return f"{r['server_wait_ms']:.1f}" if r and "server_wait_ms" in r else "-"


def fmt_pct(r, key):
    return f"{r[key]:.0f}%" if r and key in r else "-"


def fmt_factor(value):
    return f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def fmt_share(value):
    return f"{value:.0%}"


def fmt_duration_ms(ms):
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def fmt_startup(s):
    if not s:
        return "-"
    samples = s.get("startup_samples", [])
    if len(samples) < 2:
        return fmt_duration_ms(s["startup_ms"])
    return (f"{fmt_duration_ms(s['startup_ms'])} (median of {len(samples)}: "
            f"{fmt_duration_ms(min(samples))} – {fmt_duration_ms(max(samples))})")


def fmt_mib(kib):
    return f"{kib / 1024:.1f} MiB"


def mb(kib):
    return kib * 1024 / 1e6


def verdict(ok):
    return "met" if ok else "**NOT met**"


def short_reason(reason, limit=300):
    """kumo-bench's error text, shortened: a JSON error body reduced to its type and
    message, and long values quoted in a validation message elided."""
    brace = reason.find("{")
    if brace >= 0:
        try:
            body, end = json.JSONDecoder().raw_decode(reason[brace:])
            kind = body.get("__type", "").split("#")[-1]
            message = body.get("message") or body.get("Message") or ""
            if kind or message:
                short = ": ".join(p for p in (kind, message) if p)
                reason = reason[:brace] + short + reason[brace + end:]
        except (ValueError, AttributeError):
            pass
    reason = re.sub(r"Value '[^']{40,}' at", "Value '…' at", " ".join(reason.split()))
    return reason if len(reason) <= limit else reason[:limit - 1] + "…"


def cell(text):
    return str(text).replace("|", "\\|")


def table(header, rows, text_columns=(0,)):
    """A GitHub pipe table: figures right-aligned, the `text_columns` left-aligned."""
    print("| " + " | ".join(cell(h) for h in header) + " |")
    print("|" + "|".join(" --- " if i in text_columns else " ---: "
                         for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(cell(c) for c in row) + " |")
    print()


class Footnotes:
    """Numbered notes under a table, each text once."""

    def __init__(self):
        self.texts = []

    def ref(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"

    def print(self):
        for i, text in enumerate(self.texts, 1):
            print(f"{i}. {text}")
        if self.texts:
            print()


def servers(res):
    return [(label, name) for label, name in SERVERS if res.ran(label)]


def expected(label, workload):
    return workload in NGINX_WORKLOADS if label == "nginx" else True


def workload_name(res, workload, name):
    if workload == "query" or workload == "gsi-query":
        count = res.config.get("partition_items")
        if count:
            return f"{name} of a {count:,}-item partition"
    return name


def has_errors(r):
    return r["errors"] or r["unfinished"] or r.get("gave_up")


# The report's sections.

def print_header(res):
    c = res.config
    print("# Kumo and its peers")
    print()
    if c:
        storage = "on a data directory" if c.get("kumo_storage") == "data-dir" else "--in-memory"
        print(f"Run of {c.get('date', '?')} on {c.get('cores', '?')} cores: each server alone, "
              f"pinned to core {c.get('server_cpu', '?')}, kumo-bench pinned to core "
              f"{c.get('client_cpu', '?')}; {c.get('connections', '?')} keep-alive connections, "
              f"closed loop, {c.get('warmup', '?')} warm-up then {c.get('duration', '?')} "
              f"measured per workload ({c.get('open_duration', c.get('duration', '?'))} for "
              f"Kumo's open loops); {c.get('items', 0):,} items for the item workloads. "
              f"Kumo {storage}, {c.get('kumo_threads', '?')} I/O thread(s). Load average "
              f"{c.get('loadavg_start', '?')} at the start, {c.get('loadavg_end', '?')} at the "
              f"end; the run took {c.get('elapsed_s', '?')} s.")
        print()


def print_startup(res):
    rows = []
    for label, _ in servers(res):
        s = res.startups.get(label)
        rows.append([SERVER_DESCRIPTIONS[label], fmt_startup(s),
                     fmt_mib(s["idle_rss_kib"]) if s else "-", s["processes"] if s else "-"])
    floor = res.startups.get("floor")
    if floor:
        rows.append([FLOOR_DESCRIPTION, fmt_startup(floor), fmt_mib(floor["idle_rss_kib"]),
                     floor["processes"]])
    if not rows and not res.skipped:
        return
    print("## Start-up and idle memory")
    print()
    if rows:
        table(["server", "start-up", "idle RSS", "processes"], rows)
        print("Start-up: from starting the process to its first right answer (a signed "
              "ListTables; `GET /` for nginx), the median of its starts (run-peers.sh "
              "--startups). Idle RSS: all its processes, 1 s after the last start.")
        print()
    for label, why in res.skipped.items():
        print(f"- {label}: not run: {short_reason(why)}")
    if res.skipped:
        print()


def print_throughput(res):
    notes = Footnotes()
    rows = []
    for workload, name in WORKLOADS:
        first = True
        for label, server in servers(res):
            if not expected(label, workload):
                continue
            r = res.run(label, workload)
            refs = []
            why = res.failure(label, workload)
            if why:
                refs.append(notes.ref(f"{server}, {workload}: {short_reason(why)}"))
            for text in res.notes.get((label, workload), []):
                refs.append(notes.ref(f"{server}, {workload}: {short_reason(text)}"))
            if label == "nginx" and workload in STATUS_ONLY:
                refs.append(notes.ref("nginx answers every request with `{}`: only the status "
                                      "is checked."))
            if r and has_errors(r):
                refs.append(notes.ref(f"{server}, {workload}: {r['errors']} errors, "
                                      f"{r['unfinished']} unanswered (see Errors)."))
            rows.append([workload_name(res, workload, name) if first else "", server,
                         fmt_ops(r), fmt_latency(r, "p99"), fmt_us(r),
                         fmt_pct(r, "server_cpu_pct"), fmt_pct(r, "others_cpu_pct"),
                         " ".join(refs)])
            first = False
    if not rows:
        return
    print("## Throughput")
    print()
    table(["workload", "server", "ops/s", "p99 ms", "server µs/op", "server CPU", "others",
           "notes"], rows, text_columns=(0, 1, 7))
    notes.print()
    print("ops/s: right answers per second. p99: from send to answer. server µs/op: the "
          "server's CPU time per answer; server CPU: its share of a core. others: CPU that "
          "other processes used meanwhile (above a few % the row is disturbed).")
    print()


def kumo_over(mine, peer):
    """(ops/s ratio, CPU-per-answer ratio) of Kumo over a peer, None where not measured."""
    if not (mine and peer):
        return None, None
    ops = mine["ops_per_s"] / peer["ops_per_s"] if peer["ops_per_s"] > 0 else None
    cpu = None
    if mine.get("server_cpu_us_per_op") and peer.get("server_cpu_us_per_op"):
        cpu = peer["server_cpu_us_per_op"] / mine["server_cpu_us_per_op"]
    return ops, cpu


def print_ratios(res):
    peers = [(label, name) for label, name in servers(res) if label != "kumo"]
    if not res.ran("kumo") or not peers:
        return
    header = ["workload"]
    for label, name in peers:
        if label == "nginx":
            header += ["share of nginx: ops/s", "share of nginx: CPU/op"]
        else:
            header += [f"vs {name}: ops/s", f"vs {name}: CPU/op"]
    rows = []
    for workload, name in WORKLOADS:
        row = [workload_name(res, workload, name)]
        for label, _ in peers:
            ops, cpu = kumo_over(res.run("kumo", workload), res.run(label, workload))
            fmt = fmt_share if label == "nginx" else fmt_factor
            row += [fmt(ops) if ops else "-", fmt(cpu) if cpu else "-"]
        if any(c != "-" for c in row[1:]):
            rows.append(row)
    if not rows:
        return
    print("## Kumo against each peer")
    print()
    table(header, rows)
    print("ops/s: Kumo's over the peer's. CPU/op: the peer's CPU time per answer over Kumo's, "
          "the ratio if each had a whole core to itself (it holds when other processes took "
          "some of it). Against nginx both are Kumo's share of the ceiling.")
    print()


def print_kumo_extras(res):
    rows = []
    for label, how in OPEN_LOOPS:
        open_loop = res.run(label, "getitem")
        if open_loop:
            what = f"GetItem, open loop at {open_loop['rate']:,.0f}/s (half the peak){how}"
            if open_loop.get("unsent"):
                what += f"; {open_loop['unsent']:,} requests never sent (behind)"
            rows.append([what, open_loop])
    for label, what in (("kumo", "Kumo, `GET /`"), ("nginx", "nginx, `GET /`")):
        r = res.run(label, "health")
        if r:
            rows.append([what, r])
    scaling = [(w, name, res.run("kumo", w), res.run("kumo-2core", w))
               for w, name in WORKLOADS if res.run("kumo-2core", w)]
    if not rows and not scaling and "kumo-2core" not in res.failures:
        return
    print("## Kumo: latency, HTTP path, two cores")
    print()
    if rows:
        table(["run", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "server µs/op", "others",
               "core taken ms"],
              [[what, fmt_ops(r), fmt_latency(r, "p50"), fmt_latency(r, "p99"),
                fmt_latency(r, "p999"), fmt_us(r), fmt_pct(r, "others_cpu_pct"), fmt_wait(r)]
               for what, r in rows])
        print("The open loop's latency counts from when each request fell due, so queueing "
              "behind a slow answer counts. core taken: how long in all the server was ready "
              "to run but waited while something else (a kernel thread, another process) held "
              "its core; each such wait delays every request that arrives meanwhile. At "
              "real-time priority (SCHED_FIFO) the server has its core whenever it has work, "
              "and what else runs there waits for the server's idle time.")
        print()
        why = res.failures.get((OPEN_LOOPS[1][0], "getitem"))
        if why:
            print(f"- Open loop at real-time priority: not measured: {short_reason(why)}")
            print()
    if scaling:
        scaling_rows = []
        for workload, name, one, two in scaling:
            factor = two["ops_per_s"] / one["ops_per_s"] if one and one["ops_per_s"] else None
            kept = per_core_kept(one, two)
            scaling_rows.append([name, fmt_ops(one), fmt_pct(one, "server_cpu_pct"), fmt_ops(two),
                                 fmt_pct(two, "server_cpu_pct"), fmt_pct(two, "client_cpu_pct"),
                                 fmt_factor(factor) if factor else "-",
                                 f"{kept:.0%}" if kept else "-"])
        table(["workload", "1 core: ops/s", "server CPU", "2 cores: ops/s", "server CPU",
               "kumo-bench CPU", "scaling", "per core"], scaling_rows)
        print("1 core: `--threads 1`, pinned to one core, kumo-bench on the other. 2 cores: "
              "`--threads 2`, free to run on both cores, with kumo-bench (2 threads) on the same "
              "two. With only two cores the load generator takes part of the server's second "
              "core, so the 2-core figure and the scaling are a lower bound. per core: the "
              "2-thread server's ops/s per core of CPU it used, over the 1-thread server's: "
              "what a second thread costs in efficiency (locks, cache lines shared, and here "
              "the load generator's threads sharing its cores), whatever the cores it gets.")
        print()
    for (label, workload), why in res.failures.items():
        if label == "kumo-2core" and not res.run(label, workload):
            print(f"- 2 cores, {workload}: not measured: {short_reason(why)}")
            print()


def per_core_kept(one, two):
    """The 2-thread server's ops/s per core of CPU it used over the 1-thread server's;
    None when a figure is missing."""
    if not (one and two and one.get("server_cpu_pct") and two.get("server_cpu_pct")
            and one["ops_per_s"]):
        return None
    return (two["ops_per_s"] / two["server_cpu_pct"]) / (one["ops_per_s"] / one["server_cpu_pct"])


def peak_rss_kib(r):
    """The server's highest RSS sampled during a run (its RSS at the end, from a kumo-bench
    that does not sample); 0 when unknown."""
    if not r:
        return 0
    return max(r.get("server_rss_max_kib", 0), r.get("server_rss_kib", 0))


def disk_labels(res):
    return [(label, name) for label, name in SERVERS
            if f"{label}-disk" in res.loaded or f"{label}-disk-restart" in res.startups
            or f"{label}-disk" in res.startups]


def print_disk(res):
    labels = disk_labels(res)
    if not labels:
        return
    rows = []
    notes = Footnotes()
    for label, name in labels:
        loaded = res.loaded.get(f"{label}-disk")
        restart = res.startups.get(f"{label}-disk-restart")
        reads = res.run(f"{label}-disk-restart", "getitem")
        why = res.failures.get((f"{label}-disk", "getitem"))
        rate = (f"{loaded['items'] / loaded['seconds']:,.0f}/s"
                if loaded and loaded.get("seconds") else "-")
        rows.append([name + (" " + notes.ref(f"{name}: {short_reason(why)}") if why else ""),
                     f"{loaded['items']:,}" if loaded else "-", rate,
                     fmt_mib(loaded["server_rss_kib"]) if loaded else "-",
                     fmt_startup(restart), fmt_mib(restart["idle_rss_kib"]) if restart else "-",
                     fmt_ops(reads), fmt_latency(reads, "p99"),
                     fmt_mib(peak_rss_kib(reads)) if peak_rss_kib(reads) else "-"])
    print("## On disk")
    print()
    table(["server", "items", "load rate", "RSS loaded", "restart: start-up", "idle RSS",
           "GetItem/s", "p99 ms", "RSS during GetItem"], rows)
    notes.print()
    print("Each server on a data directory: loaded with PutItem (all connections), stopped, "
          "started again on that data (start-up and idle RSS), then GetItem of random keys "
          "over all the items.")
    print()


def print_targets(res):
    print("## Targets (issue 9)")
    print()
    if not res.ran("kumo"):
        print("Not checked: Kumo did not run.")
        print()
        return
    lines = []
    for workload, target in CEILING_TARGETS.items():
        name = dict(WORKLOADS)[workload]
        mine, ceiling = res.run("kumo", workload), res.run("nginx", workload)
        if not (mine and ceiling):
            missing = [who for who, r in (("Kumo", mine), ("nginx", ceiling)) if not r]
            lines.append(f"{name} ≥ {target:.0%} of nginx: not checked ({' and '.join(missing)} "
                         f"not measured)")
            continue
        ops, cpu = kumo_over(mine, ceiling)
        line = f"{name} ≥ {target:.0%} of nginx: {ops:.0%}, {verdict(ops >= target)}"
        if cpu:
            line += f" (by CPU per answer: {cpu:.0%}, {verdict(cpu >= target)})"
        lines.append(line)

    lines.append(open_loop_target(res))

    s = res.startups.get("kumo")
    if s and res.config.get("kumo_storage", "in-memory") != "in-memory":
        lines.append("start-up and idle RSS with --in-memory: not checked (Kumo ran on a data "
                     "directory)")
    elif s:
        line = (f"start-up with --in-memory {s['startup_ms']:.2f} ms ≤ {STARTUP_MS:g} ms, "
                f"{verdict(s['startup_ms'] <= STARTUP_MS)}")
        floor = res.startups.get("floor")
        if floor:
            line += (f" (the machine's floor, a static server that only answers: "
                     f"{floor['startup_ms']:.2f} ms; Kumo's own part: "
                     f"{s['startup_ms'] - floor['startup_ms']:.2f} ms)")
        lines.append(line)
        rss = mb(s["idle_rss_kib"])
        lines.append(f"idle RSS with --in-memory {rss:.1f} MB ≤ {IDLE_RSS_MB:g} MB, "
                     f"{verdict(rss <= IDLE_RSS_MB)}")

    lines += disk_targets(res)

    measured, projected = [], []
    for workload, name in (("getitem", "GetItem"), ("putitem", "PutItem")):
        one, two = res.run("kumo", workload), res.run("kumo-2core", workload)
        if not (one and two and one["ops_per_s"]):
            continue
        measured.append(f"{name} {fmt_factor(two['ops_per_s'] / one['ops_per_s'])}")
        kept = per_core_kept(one, two)
        if kept:
            projected.append((name, kept))
    if measured:
        text = (f"two cores (reported, no threshold): {', '.join(measured)} the one-core rate "
                "(a lower bound: kumo-bench shares the cores)")
        if projected:
            text += ("; per core of CPU it used, the 2-thread server answered "
                     + ", ".join(f"{name} at {kept:.0%}" for name, kept in projected)
                     + " of the 1-thread rate: with two cores of its own, about "
                     + ", ".join(f"{fmt_factor(2 * kept)}" for _, kept in projected)
                     + " (projected, not measured)")
        lines.append(text)

    for line in lines:
        print(f"- {line}")
    print()


def disk_targets(res):
    loaded = res.loaded.get("kumo-disk")
    restart = res.startups.get("kumo-disk-restart")
    if not (loaded or restart):
        return []
    lines = []
    count = loaded["items"] if loaded else 0
    scale = (f"with {count:,} items" + (f"; the target is for {DISK_ITEMS:,}"
                                        if count < DISK_ITEMS else "")) if loaded else ""
    if restart:
        ms = restart["startup_ms"]
        lines.append(f"start-up on a data directory ({scale}) {ms:.1f} ms ≤ {DISK_STARTUP_MS:g} "
                     f"ms, {verdict(ms <= DISK_STARTUP_MS)}")
        reads = res.run("kumo-disk-restart", "getitem")
        rss_kib = max(restart["idle_rss_kib"], peak_rss_kib(reads))
        base = res.startups.get("kumo")
        base_mib = base["idle_rss_kib"] / 1024 if base else IDLE_RSS_MB * 1e6 / 2**20
        bound = base_mib + BLOCK_CACHE_MIB + WRITE_BUFFERS_MIB
        line = (f"peak RSS on a data directory ({scale}), after the restart and during "
                f"GetItem over all the items: {rss_kib / 1024:.1f} MiB ≤ {bound:.0f} MiB "
                f"(idle {base_mib:.1f} + block cache {BLOCK_CACHE_MIB} + memtables "
                f"{WRITE_BUFFERS_MIB}), {verdict(rss_kib / 1024 <= bound)}")
        data_mib = count * ITEM_BYTES / 2**20
        if count and data_mib < BLOCK_CACHE_MIB:
            line += (f"; the data (~{data_mib:.0f} MiB) fits in the cache, so this does not "
                     f"test the bound")
        lines.append(line)
    else:
        lines.append(f"on a data directory ({scale}): not checked (Kumo did not restart)")
    return lines


def open_loop_circumstances(r):
    """What else held the server's core, and the load generator's own lateness, during an
    open loop: what its p99 may owe to the machine rather than to the server."""
    parts = []
    if "server_wait_ms" in r:
        part = (f"the server's core was taken from it for {r['server_wait_ms']:.1f} ms of the "
                f"{r['window_s']:.0f} s")
        busiest = [t for t in r.get("others_busiest", []) if t["cpu_ms"] >= 1][:3]
        if busiest:
            part += "; other threads that ran: " + ", ".join(
                f"{t['name']} {t['cpu_ms']:.1f} ms" for t in busiest)
        parts.append(part)
    late = r.get("client_late_max_ms")
    if late is not None and late >= OPEN_LOOP_P99_MS:
        parts.append(f"kumo-bench itself sent requests up to {late:.1f} ms late with a "
                     "connection free (it lost its own core), which counts as latency")
    return "; ".join(parts)


def open_loop_target(res):
    """The open-loop target's line. The verdict is the run at real-time priority when there
    is one, since the target is for a server that has its core; the run at normal priority
    is quoted beside it."""
    (normal_label, _), (shielded_label, shielded_how) = OPEN_LOOPS
    normal, shielded = res.run(normal_label, "getitem"), res.run(shielded_label, "getitem")
    judged = shielded or normal
    if not judged:
        return "open-loop p99 ≤ 1 ms: not checked (no open-loop run)"
    p99 = judged["latency_ms"]["p99"]
    how = shielded_how if shielded else ""
    line = (f"GetItem open loop at {judged['rate']:,.0f}/s (half the peak){how}: p99 "
            f"{p99:.2f} ms ≤ {OPEN_LOOP_P99_MS:g} ms, {verdict(p99 <= OPEN_LOOP_P99_MS)}")
    circumstances = open_loop_circumstances(judged)
    if circumstances:
        line += f" ({circumstances})"
    if shielded and normal:
        line += f". At normal priority: p99 {normal['latency_ms']['p99']:.2f} ms"
        circumstances = open_loop_circumstances(normal)
        if circumstances:
            line += f" ({circumstances})"
    elif normal:
        why = res.failures.get((shielded_label, "getitem"), "not run")
        line += f"; at real-time priority: not measured ({short_reason(why)})"
    return line


def print_warnings(res):
    client_bound, disturbed, errors = [], [], []
    for (label, workload), r in res.runs.items():
        # An open loop spins on purpose; only a closed loop can be held back by the client.
        if r["mode"] == "closed" and r["client_cpu_pct"] > 90 * r["threads"]:
            client_bound.append(f"{label} {workload} ({r['client_cpu_pct']:.0f}%)")
        # Other processes matter when they took CPU the run needed: a closed loop's server
        # should have its whole core, an open loop is timed by the client's, and a run on
        # shared cores (the 2-core run, kumo-bench with 2 threads) needs all of them.
        starved = (r["mode"] == "open" or r["threads"] > 1
                   or r.get("server_cpu_pct", 100) < 95)
        if r.get("others_cpu_pct", 0) > 10 and starved:
            disturbed.append(f"{label} {workload} (others used {r['others_cpu_pct']:.0f}% of a "
                             f"core; the server had {r.get('server_cpu_pct', 0):.0f}%)")
        if has_errors(r):
            samples = "; ".join(short_reason(s, 150) for s in r.get("error_samples", [])[:2])
            errors.append(f"{label} {workload}: {r['errors']} errors {r['error_kinds']}, "
                          f"{r['unfinished']} unanswered" + (f" (e.g. {samples})" if samples
                                                             else ""))
    sections = [
        ("Limited by the load generator", "The client used nearly a full core, so these "
         "figures are a floor set by the client:", client_bound),
        ("Disturbed", "Other processes used this much CPU during these runs, so their figures "
         "are low and not comparable:", disturbed),
        ("Errors", "Runs with wrong or missing answers (counted as errors, not as ops/s):",
         errors),
    ]
    for title, intro, items in sections:
        if items:
            print(f"## {title}")
            print()
            print(intro)
            print()
            for item in items:
                print(f"- {item}")
            print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    res = Results(sys.argv[1])
    print_header(res)
    print_startup(res)
    print_throughput(res)
    print_ratios(res)
    print_kumo_extras(res)
    print_disk(res)
    print_targets(res)
    print_warnings(res)


if __name__ == "__main__":
    main()
