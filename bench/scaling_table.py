#!/usr/bin/env python3
"""Prints run-scaling.sh's report, in Markdown, from the JSON lines of a run.

Usage: scaling_table.py RESULTS.jsonl

The lines are kumo-bench's ("run", "startup", "loaded") and run-scaling.sh's own "config"
(the run's settings; several lines are merged) and "failed" (a run that could not be made,
and why). Labels are MODE@SIZE: "disk-empty" (the first start, on an empty data
directory), "disk" (the load), "disk-cold" (a restart on the loaded data, and the runs
right after it), "disk-warm" (the same server, each workload again), "disk-open" (GetItem
in an open loop at half the warm peak) and "memory" (start, load and runs in memory).
A figure is printed only if it was measured; anything missing shows as "-".
"""
import json
import statistics
import sys

# The workloads, in the report's order.
WORKLOADS = [
    ("group-get", "GetItem"),
    ("group-query", "Query, 10 items"),
    ("group-scan", "Scan, 10 items"),
    ("group-put", "PutItem"),
]
ROW_MODES = [("disk-cold", "disk, cold"), ("disk-warm", "disk, warm"), ("memory", "memory")]

# The targets: on disk, GetItem and Query at 1M items keep 70% of their rate at 10k items,
# and at 10M items 50%; GetItem at 10M items in an open loop at half the peak has a p99 of
# at most 2 ms; Kumo starts on 10M items within 50 ms; on disk its RSS stays within its
# idle RSS plus the configured RocksDB caches.
BASE_SIZE = 10_000
SHARE_TARGETS = [(1_000_000, 0.70), (10_000_000, 0.50)]
TARGETED = ("group-get", "group-query")
OPEN_P99_MS = 2.0
OPEN_SIZE = 10_000_000
STARTUP_MS = 50.0
# Kumo's RocksDB memory budget by default (src/storage/storage.h: the block cache and two
# memtables); the run's --server-args may set other sizes.
BLOCK_CACHE_MIB = 128
WRITE_BUFFER_MIB = 32
WRITE_BUFFERS = 2


def split_label(label):
    mode, _, size = label.partition("@")
    return mode, int(size) if size.isdigit() else None


class Results:
    def __init__(self, path):
        self.runs, self.loaded, self.failures, self.config = {}, {}, {}, {}
        self.startups = {}  # (mode, size): every start, in order
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                kind = r.get("kind")
                if kind == "config":
                    self.config.update({k: v for k, v in r.items() if k != "kind"})
                    continue
                mode, size = split_label(r.get("label", ""))
                if kind == "run":
                    self.runs[(mode, size, r["workload"])] = r
                elif kind == "startup":
                    self.startups.setdefault((mode, size), []).append(r)
                elif kind == "loaded":
                    self.loaded[(mode, size)] = r
                elif kind == "failed":
                    self.failures[(mode, size, r["workload"])] = r["reason"]

    def sizes(self):
        found = {key[1] for key in list(self.runs) + list(self.loaded) + list(self.startups)}
        return sorted(s for s in found if s is not None)

    def run(self, mode, size, workload):
        return self.runs.get((mode, size, workload))


def fmt_int(value):
    return f"{value:,.0f}"


def fmt_ops(r):
    return fmt_int(r["ops_per_s"]) if r else "-"


def fmt_ms(value):
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def fmt_latency(r, which):
    return fmt_ms(r["latency_ms"][which]) if r else "-"


def fmt_us(r):
    return f"{r['server_cpu_us_per_op']:.1f}" if r and "server_cpu_us_per_op" in r else "-"


def fmt_pct(r, key):
    return f"{r[key]:.0f}%" if r and key in r else "-"


def fmt_mib(kib):
    return f"{kib / 1024:.1f} MiB" if kib else "-"


def fmt_duration_ms(ms):
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def fmt_startup(starts):
    """The median start-up of several starts, with their range; a single one as is."""
    if not starts:
        return "-"
    times = [s["startup_ms"] for s in starts]
    if len(times) == 1:
        return fmt_duration_ms(times[0])
    return (f"{fmt_duration_ms(statistics.median(times))} (median of {len(times)}, "
            f"{fmt_duration_ms(min(times))} – {fmt_duration_ms(max(times))})")


def verdict(ok):
    return "met" if ok else "**NOT met**"


def cell(text):
    return str(text).replace("|", "\\|")


def table(header, rows, text_columns=(0, 1)):
    """A GitHub pipe table: figures right-aligned, the `text_columns` left-aligned."""
    print("| " + " | ".join(cell(h) for h in header) + " |")
    print("|" + "|".join(" --- " if i in text_columns else " ---: "
                         for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(cell(c) for c in row) + " |")
    print()


def row_rss_kib(res, mode, size):
    """The highest RSS after a run of the row (each run's RSS at its end)."""
    values = [r.get("server_rss_kib", 0) for w, _ in WORKLOADS
              if (r := res.run(mode, size, w))]
    return max(values, default=0)


def main_table(res):
    print("## Throughput and latency by table size\n")
    print("Closed loop, 64 connections; ops/s are right answers per second, p99 in ms from "
          "send to answer. *RSS* is the highest of the server's RSS after each run of the "
          "row; *start-up* is from the process start to its first right ListTables, and "
          "*idle RSS* the RSS one second later: on disk of the restarts on the loaded data "
          "(one before each cold run; the RSS of the first), in memory of the empty "
          "server.\n")
    header = ["items", "mode"]
    for _, name in WORKLOADS:
        header += [f"{name} ops/s", "p99"]
    header += ["RSS", "start-up", "idle RSS"]
    rows = []
    for size in res.sizes():
        for mode, name in ROW_MODES:
            runs = [res.run(mode, size, w) for w, _ in WORKLOADS]
            starts = res.startups.get((mode, size), [])
            if not any(runs) and not starts:
                continue
            row = [fmt_int(size), name]
            for r in runs:
                row += [fmt_ops(r), fmt_latency(r, "p99")]
            start, idle = "-", "-"
            if starts:
                start, idle = fmt_startup(starts), fmt_mib(starts[0]["idle_rss_kib"])
            elif mode == "disk-warm":
                start = "(the last cold server)"
            row += [fmt_mib(row_rss_kib(res, mode, size)), start, idle]
            rows.append(row)
    table(header, rows)


def detail_table(res):
    print("## Every run\n")
    print("*server µs/op*: the server's CPU time per right answer (all its threads, RocksDB's "
          "included); *others*: CPU used meanwhile by processes other than the server and "
          "kumo-bench (above a few percent the row was disturbed).\n")
    header = ["items", "mode", "workload", "ops/s", "p50 ms", "p99 ms", "server µs/op",
              "server CPU", "RSS after", "others", "errors"]
    rows = []
    for size in res.sizes():
        for mode, name in ROW_MODES + [("disk-open", "disk, warm, open loop")]:
            for workload, wname in WORKLOADS:
                r = res.run(mode, size, workload)
                if not r:
                    why = res.failures.get((mode, size, workload))
                    if why:
                        rows.append([fmt_int(size), name, wname, "-", "-", "-", "-", "-", "-",
                                     "-", f"not run: {why[:200]}"])
                    continue
                if r.get("mode") == "open":
                    wname = f"{wname} at {fmt_int(r['rate'])}/s"
                errors = r["errors"] + r["errors_outside_window"] + r["unfinished"]
                rows.append([fmt_int(size), name, wname, fmt_ops(r), fmt_latency(r, "p50"),
                             fmt_latency(r, "p99"), fmt_us(r), fmt_pct(r, "server_cpu_pct"),
                             fmt_mib(r.get("server_rss_kib", 0)), fmt_pct(r, "others_cpu_pct"),
                             errors or ""])
    table(header, rows, text_columns=(0, 1, 2, 10))


def load_table(res):
    rows = []
    for size in res.sizes():
        for mode, name in (("disk", "disk"), ("memory", "memory")):
            r = res.loaded.get((mode, size))
            if r:
                rows.append([fmt_int(size), name, f"{r['seconds']:.1f} s",
                             fmt_int(r["items_per_s"]), r.get("preload_batch", 1),
                             fmt_mib(r["server_rss_kib"])])
            elif (mode, size, "load") in res.failures:
                rows.append([fmt_int(size), name, "-", "-", "-",
                             f"failed: {res.failures[(mode, size, 'load')][:200]}"])
    if rows:
        print("## Loads\n")
        table(["items", "mode", "time", "items/s", "items per request", "RSS loaded"], rows)


def configured_caches(server_args):
    """The block cache and the memtables, in MiB, that `kumo serve` had with these
    arguments."""
    words = server_args.replace("=", " ").split()
    values = {}
    for flag, value in zip(words, words[1:]):
        if flag in ("--block-cache-mb", "--write-buffer-mb") and value.isdigit():
            values[flag] = int(value)
    return (values.get("--block-cache-mb", BLOCK_CACHE_MIB),
            WRITE_BUFFERS * values.get("--write-buffer-mb", WRITE_BUFFER_MIB))


def share_target(size):
    """The share of the 10k-item rate a size must keep: 70% up to 1M items, 50% beyond."""
    for limit, share in SHARE_TARGETS:
        if size <= limit:
            return share
    return SHARE_TARGETS[-1][1]


def targets(res):
    print("## Targets\n")
    sizes = res.sizes()
    lines = []
    base = BASE_SIZE if BASE_SIZE in sizes else (sizes[0] if sizes else None)
    if base is not None and base != BASE_SIZE:
        lines.append(f"The shares below are of the figures at {fmt_int(base)} items (the "
                     f"targets' base is {fmt_int(BASE_SIZE)}).")
    for size in sizes:
        if base is None or size <= base:
            continue
        target = share_target(size)
        for workload, name in WORKLOADS:
            if workload not in TARGETED:
                continue
            parts = []
            warm_ok = None
            for mode, mode_name in (("disk-warm", "warm"), ("disk-cold", "cold")):
                at, of = res.run(mode, size, workload), res.run(mode, base, workload)
                if not at or not of or not of["ops_per_s"]:
                    parts.append(f"{mode_name}: not measured")
                    continue
                share = at["ops_per_s"] / of["ops_per_s"]
                part = f"{mode_name} {fmt_ops(at)} / {fmt_ops(of)} ops/s = {share:.0%}"
                # The same share by the server's CPU per answer, which holds when other
                # work took part of the server's core.
                if at.get("server_cpu_us_per_op") and of.get("server_cpu_us_per_op"):
                    part += (f" (by CPU per answer: {fmt_us(of)} / {fmt_us(at)} µs = "
                             f"{of['server_cpu_us_per_op'] / at['server_cpu_us_per_op']:.0%})")
                parts.append(part)
                if mode == "disk-warm":
                    warm_ok = share >= target
            judged = "not judged" if warm_ok is None else verdict(warm_ok)
            lines.append(f"On disk, {name} at {fmt_int(size)} items as a share of "
                         f"{fmt_int(base)} (target ≥ {target:.0%}, judged warm): "
                         f"{judged}; {'; '.join(parts)}.")

    largest = sizes[-1] if sizes else None
    open_run = res.run("disk-open", largest, "group-get") if largest else None
    if open_run:
        scope = "" if largest == OPEN_SIZE else f" (the target is for {fmt_int(OPEN_SIZE)} items)"
        ok = open_run["latency_ms"]["p99"] <= OPEN_P99_MS and not open_run.get("unsent")
        behind = (f", {fmt_int(open_run['unsent'])} requests never sent (behind)"
                  if open_run.get("unsent") else "")
        lines.append(f"GetItem in an open loop at {fmt_int(open_run['rate'])}/s (half the warm "
                     f"peak) on {fmt_int(largest)} items on disk{scope}: p99 "
                     f"{fmt_ms(open_run['latency_ms']['p99'])} ms (target ≤ {OPEN_P99_MS:g} "
                     f"ms): {verdict(ok)}; p50 {fmt_ms(open_run['latency_ms']['p50'])} ms, "
                     f"p99.9 {fmt_ms(open_run['latency_ms']['p999'])} ms, kumo-bench late by up "
                     f"to {open_run.get('client_late_max_ms', 0):.2f} ms{behind}.")
    elif largest and ("disk-open", largest, "group-get") in res.failures:
        lines.append(f"GetItem open loop on {fmt_int(largest)} items: not run: "
                     f"{res.failures[('disk-open', largest, 'group-get')]}.")

    for size in sizes:
        starts = res.startups.get(("disk-cold", size), [])
        if not starts:
            continue
        median = statistics.median(s["startup_ms"] for s in starts)
        scope = "" if size == OPEN_SIZE else " (the target is for 10,000,000 items)"
        lines.append(f"Start-up on {fmt_int(size)} items on disk{scope}: {fmt_startup(starts)} "
                     f"(target ≤ {STARTUP_MS:g} ms): {verdict(median <= STARTUP_MS)}.")

    for size in sizes:
        empty = res.startups.get(("disk-empty", size), [])
        seen = []
        for mode in ("disk-cold", "disk-warm", "disk-open"):
            for workload, _ in WORKLOADS:
                r = res.run(mode, size, workload)
                if r:
                    seen.append((r.get("server_rss_max_kib", r.get("server_rss_kib", 0)),
                                 f"{mode} {workload}"))
        loaded = res.loaded.get(("disk", size))
        if loaded:
            seen.append((loaded["server_rss_kib"], "after the load"))
        for s in res.startups.get(("disk-cold", size), []):
            seen.append((s["idle_rss_kib"], "idle after a restart"))
        if not empty or not seen:
            continue
        idle = empty[0]["idle_rss_kib"]
        cache_mib, buffers_mib = configured_caches(res.config.get("server_args", ""))
        budget = idle + (cache_mib + buffers_mib) * 1024
        highest, where = max(seen)
        lines.append(f"RSS on disk at {fmt_int(size)} items: at most {fmt_mib(highest)} "
                     f"({where}), against {fmt_mib(budget)} = idle RSS on an empty data "
                     f"directory {fmt_mib(idle)} + {cache_mib} MiB block cache + "
                     f"{buffers_mib} MiB of memtables: {verdict(highest <= budget)}.")
    for size in sizes:
        loaded = res.loaded.get(("memory", size))
        if loaded:
            lines.append(f"RSS in memory at {fmt_int(size)} items: {fmt_mib(loaded['server_rss_kib'])} "
                         f"after the load, "
                         f"{loaded['server_rss_kib'] * 1024 / loaded['items']:.0f} bytes an item "
                         f"(no target: the data is the memory).")
    for line in lines:
        print(f"- {line}")
    print()


def warnings(res):
    lines, disturbed = [], []
    for (mode, size, workload), r in sorted(res.runs.items(), key=lambda kv: str(kv[0])):
        where = f"{workload} {mode}@{size}"
        errors = r["errors"] + r["errors_outside_window"] + r["unfinished"]
        if errors:
            sample = (r.get("error_samples") or [""])[0][:200]
            lines.append(f"{where}: {errors} failed or unanswered requests ({sample})")
        if r.get("mode") != "open" and r.get("client_cpu_pct", 0) > 90:
            lines.append(f"{where}: kumo-bench used {r['client_cpu_pct']:.0f}% of its core: "
                         f"the figure is the client's floor, not the server's")
        if r.get("others_cpu_pct", 0) > 10:
            disturbed.append(f"{where} {r['others_cpu_pct']:.0f}%")
    if disturbed:
        lines.append(f"{len(disturbed)} of {len(res.runs)} runs were disturbed: other "
                     f"processes used more than 10% of a core meanwhile (share of a core): "
                     f"{', '.join(disturbed)}")
    for (mode, size, workload), why in sorted(res.failures.items(), key=str):
        lines.append(f"{workload} {mode}@{size}: not run: {why[:300]}")
    if lines:
        print("## Warnings\n")
        for line in lines:
            print(f"- {line}")
        print()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    res = Results(sys.argv[1])
    c = res.config
    print("# Kumo: cost by table size\n")
    print(f"{c.get('date', '?')}, {c.get('cores', '?')} cores, load average "
          f"{c.get('loadavg_start', '?')} at the start, {c.get('loadavg_end', '?')} at the end; "
          f"Kumo `{c.get('kumo', '?')}` with `--threads 1"
          + (f" {c['server_args']}" if c.get("server_args") else "")
          + f"` on core {c.get('server_cpu', '?')}, "
          f"kumo-bench on core {c.get('client_cpu', '?')}; runs of {c.get('duration', '?')} "
          f"after {c.get('warmup', '?')} of warm-up ({c.get('cold_warmup', '?')} for cold "
          f"runs); items of ~{c.get('item_bytes', '?')} bytes in partitions of ten, loaded "
          f"{c.get('preload_batch', '?')} per BatchWriteItem"
          + (f"; {c['elapsed_s']} s in all" if "elapsed_s" in c else "") + ".\n")
    main_table(res)
    targets(res)
    load_table(res)
    detail_table(res)
    warnings(res)


if __name__ == "__main__":
    main()
