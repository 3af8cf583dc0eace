#!/usr/bin/env python3
"""Prints run-peers.sh's table from the JSON lines kumo-bench wrote.

Usage: peers_table.py RESULTS.jsonl
"""
import json
import sys

PEERS = [
    ("kumo", "Kumo"),
    ("dynalite", "dynalite (Node, memory)"),
    ("ddblocal", "DynamoDB Local (Java)"),
    ("nginx", "nginx, fixed 200"),
]
# Targets from issue 9: server on one core, load generator on the other, 64 connections.
RATIO_TARGETS = {"getitem": 0.60, "putitem": 0.40}


def load(path):
    runs, startups, loaded = {}, {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            kind = r.get("kind")
            if kind == "run":
                runs[(r["label"], r["workload"])] = r
            elif kind == "startup":
                startups[r["label"]] = r
            elif kind == "loaded":
                loaded[r["label"]] = r
    return runs, startups, loaded


def fmt_ops(r):
    return f"{r['ops_per_s']:,.0f}" if r else "-"


def fmt_ms(value):
    return f"{value:.2f}" if value < 10 else f"{value:.1f}"


def fmt_p99(r):
    return fmt_ms(r["latency_ms"]["p99"]) if r else "-"


def fmt_cpu(r):
    return f"{r['server_cpu_us_per_op']:.1f}" if r and "server_cpu_us_per_op" in r else "-"


def fmt_others(*runs):
    values = [r["others_cpu_pct"] for r in runs if r and "others_cpu_pct" in r]
    return f"{max(values):.0f}%" if values else "-"


def fmt_ratio(ratio, as_share):
    return f"{ratio:.0%}" if as_share else f"{ratio:.1f}x"


def fmt_startup(s):
    if not s:
        return "-"
    ms = s["startup_ms"]
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def fmt_rss(kib):
    return f"{kib / 1024:.1f} MiB"


def table(rows, header):
    widths = [max(len(str(row[i])) for row in [header] + rows) for i in range(len(header))]
    line = lambda row: "  ".join(
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))
    )
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


def main():
    runs, startups, loaded = load(sys.argv[1])
    rows = []
    client_bound = []
    disturbed = []
    errors = []
    for label, name in PEERS:
        get, put = runs.get((label, "getitem")), runs.get((label, "putitem"))
        if not (get or put or label in startups):
            continue
        rows.append([
            name,
            fmt_startup(startups.get(label)),
            fmt_rss(startups[label]["idle_rss_kib"]) if label in startups else "-",
            fmt_ops(get), fmt_p99(get), fmt_cpu(get),
            fmt_ops(put), fmt_p99(put), fmt_cpu(put),
            fmt_others(get, put),
        ])
    for (label, workload), r in runs.items():
        # An open loop spins on purpose; only a closed loop can be held back by the client.
        if r["mode"] == "closed" and r["client_cpu_pct"] > 90 * r["threads"]:
            client_bound.append(f"{label} {workload} ({r['client_cpu_pct']:.0f}%)")
        # Other processes matter when they took CPU the run needed: a closed loop's server
        # should have its whole core, and an open loop is timed by the client's.
        starved = r["mode"] == "open" or r.get("server_cpu_pct", 100) < 95
        if r.get("others_cpu_pct", 0) > 10 and starved:
            disturbed.append(f"{label} {workload} (others used {r['others_cpu_pct']:.0f}% of a "
                             f"core; the server had {r.get('server_cpu_pct', 0):.0f}%)")
        if r["errors"] or r["unfinished"] or r.get("gave_up"):
            errors.append(f"{label} {workload}: {r['errors']} errors {r['error_kinds']}, "
                          f"{r['unfinished']} unanswered")
    print()
    table(rows, ["server", "start-up", "idle RSS", "GetItem/s", "p99 ms", "us/op",
                 "PutItem/s", "p99 ms", "us/op", "others"])
    print("(us/op: server CPU time per answer; p99 of a closed loop, from send to answer;\n"
          " others: the most CPU, in % of a core, that other processes used during these runs)")

    kumo = {w: runs.get(("kumo", w)) for w in ("getitem", "putitem")}
    ratio_rows = []
    for label, name in PEERS[1:]:
        cells = []
        as_share = label == "nginx"
        for workload in ("getitem", "putitem"):
            peer, mine = runs.get((label, workload)), kumo[workload]
            ok = mine and peer and peer["ops_per_s"] > 0
            cells.append(fmt_ratio(mine["ops_per_s"] / peer["ops_per_s"], as_share) if ok else "-")
        for workload in ("getitem", "putitem"):
            peer, mine = runs.get((label, workload)), kumo[workload]
            ok = mine and peer and mine.get("server_cpu_us_per_op") and peer.get(
                "server_cpu_us_per_op")
            cells.append(fmt_ratio(peer["server_cpu_us_per_op"] / mine["server_cpu_us_per_op"],
                                   as_share) if ok else "-")
        if any(c != "-" for c in cells):
            ratio_rows.append([f"Kumo / {name}"] + cells)
    if ratio_rows:
        print()
        table(ratio_rows, ["ratio", "GetItem", "PutItem", "GetItem/CPU", "PutItem/CPU"])
        print("(ops/s over ops/s; /CPU: the peer's CPU time per answer over Kumo's, i.e. the\n"
              " ratio if each had a whole core: it holds when other processes disturbed a run)")

    others = [(w, runs.get(("kumo", w))) for w in ("mixed", "health")]
    others.append(("getitem, open loop", runs.get(("kumo-open", "getitem"))))
    others.append(("nginx health (GET /)", runs.get(("nginx", "health"))))
    other_rows = [
        [w, fmt_ops(r), fmt_ms(r["latency_ms"]["p50"]), fmt_ms(r["latency_ms"]["p99"]),
         fmt_ms(r["latency_ms"]["p999"]), fmt_cpu(r), fmt_others(r)]
        for w, r in others if r
    ]
    if other_rows:
        print()
        table(other_rows, ["Kumo, more", "ops/s", "p50 ms", "p99 ms", "p99.9 ms", "us/op",
                           "others"])

    if loaded:
        print()
        load_rows = []
        for label, r in loaded.items():
            seconds = r.get("seconds")
            rate = f"{r['items'] / seconds:,.0f}/s" if seconds else "-"
            load_rows.append([label, f"{r['items']:,}", fmt_rss(r["server_rss_kib"]), rate])
        table(load_rows, ["on disk", "items", "RSS", "load rate"])

    print()
    print("Targets (issue 9):")
    if not (kumo["getitem"] or kumo["putitem"] or "kumo" in startups):
        print("  not checked: Kumo did not run")
    nginx = {w: runs.get(("nginx", w)) for w in ("getitem", "putitem")}
    for workload, target in RATIO_TARGETS.items():
        mine, ceiling = kumo[workload], nginx[workload]
        if mine and ceiling:
            ratio = mine["ops_per_s"] / ceiling["ops_per_s"]
            verdict = "met" if ratio >= target else "NOT met"
            line = f"  {workload} >= {target:.0%} of nginx: {ratio:.0%}, {verdict}"
            if mine.get("server_cpu_us_per_op") and ceiling.get("server_cpu_us_per_op"):
                per_cpu = ceiling["server_cpu_us_per_op"] / mine["server_cpu_us_per_op"]
                line += (f" (by CPU per answer: {per_cpu:.0%}, "
                         f"{'met' if per_cpu >= target else 'NOT met'})")
            print(line)
    open_loop = runs.get(("kumo-open", "getitem"))
    if open_loop:
        p99 = open_loop["latency_ms"]["p99"]
        verdict = "met" if p99 <= 1.0 else "NOT met"
        print(f"  open loop at {open_loop['rate']:,.0f}/s (half the peak): p99 {p99:.2f} ms "
              f"<= 1 ms, {verdict}")
    if "kumo" in startups:
        s = startups["kumo"]
        print(f"  start-up {s['startup_ms']:.2f} ms <= 2 ms: "
              f"{'met' if s['startup_ms'] <= 2 else 'NOT met'}")
        mb = s["idle_rss_kib"] * 1024 / 1e6
        print(f"  idle RSS {mb:.1f} MB <= 6 MB: {'met' if mb <= 6 else 'NOT met'}")
    if client_bound:
        print("\nLimited by the load generator (client CPU near a full core), so these figures"
              " are a floor:\n  " + "\n  ".join(client_bound))
    if disturbed:
        print("\nDisturbed: other processes used this much CPU during these runs, so their"
              " figures are low and not comparable:\n  " + "\n  ".join(disturbed))
    if errors:
        print("\nErrors:\n  " + "\n  ".join(errors))


if __name__ == "__main__":
    main()
