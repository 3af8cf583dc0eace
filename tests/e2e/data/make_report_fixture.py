"""Writes report.json, the /report answer `kumo report`'s tests read (run it to regenerate).

Ten minutes of a simulated load on the manual clock, seeded, so the numbers agree with each
other: per-second units sum to the minutes, the minutes to the window, partition bytes to
the table's size.

- `orders`, on-demand, 3.5 KB orders (4 WCU), GSI `by_status` projecting ALL: 280 new
  orders a second are PENDING and all land in one GSI partition, which serves 1,000 WCU/s
  (250 orders); the rest are refused (IndexWriteKeyRangeThroughputExceeded) and the heat
  split is refused (one key). 50 strongly consistent reads a second.
- `customers`, provisioned 500 RCU / 1,000 WCU against 1,150 WCU/s of 2 KB upserts: writes
  throttle (TableWriteProvisionedThroughputExceeded) until UpdateTable raises WCU to 2,500
  at 270 s, which doubles the table's partitions (2 -> 4). GSI `by_email` (KEYS_ONLY,
  provisioned 100/100): 5 % of upserts change the email (a delete and a put).
"""

import json
import os
import random
import re

START = 1767225600
SECONDS = 600
SPLIT_AT = 270  # the second of the window in which customers' WCU is raised
FULL = "ffffffffffffffff"
rng = random.Random(25)


def hexa(token):
    return f"{token:016x}"


def around(mean, sd):
    return max(0, round(rng.gauss(mean, sd)))


def spread(count, ways):
    """count events spread at random over `ways` partitions."""
    shares = [0] * ways
    for _ in range(count):
        shares[rng.randrange(ways)] += 1
    return shares


class Resource:
    def __init__(self, index, parts):
        self.index = index
        self.parts = parts  # id -> {first, end, born, died}
        self.read = {p: [0.0] * SECONDS for p in parts}
        self.write = {p: [0.0] * SECONDS for p in parts}
        self.throttles = {p: [0] * SECONDS for p in parts}
        self.reasons = {}  # reason -> per second
        self.part_reasons = {p: {} for p in parts}  # id -> reason -> events
        self.bytes = {p: 0 for p in parts}

    def throttle(self, part, second, reason, events):
        self.throttles[part][second] += events
        self.reasons.setdefault(reason, [0] * SECONDS)[second] += events
        by_reason = self.part_reasons[part]
        by_reason[reason] = by_reason.get(reason, 0) + events

    def total(self, series, second):
        return sum(s[second] for s in series.values())


def direction(series, res, rate, binding, provisioned, warm, level):
    per_second = [res.total(series, s) for s in range(SECONDS)]
    return {"rate": rate, "binding": binding, "provisioned": provisioned,
            "max_on_demand": None, "warm": warm, "peak": 0, "level": level,
            "consumed": sum(per_second), "peak_second": max(per_second)}


def history(res, read_limit, write_limit):
    minutes = []
    for m in range(SECONDS // 60):
        span = range(m * 60, m * 60 + 60)
        parts = {}
        for p in res.parts:
            r = sum(res.read[p][s] for s in span)
            w = sum(res.write[p][s] for s in span)
            t = sum(res.throttles[p][s] for s in span)
            born, died = res.parts[p]["born"], res.parts[p]["died"]
            if born < m * 60 + 60 and died > m * 60:
                parts[str(p)] = [r, w, t]
        minutes.append({
            "minute": START + m * 60,
            "read": sum(res.total(res.read, s) for s in span),
            "write": sum(res.total(res.write, s) for s in span),
            "peak_read_second": max(res.total(res.read, s) for s in span),
            "peak_write_second": max(res.total(res.write, s) for s in span),
            "read_limit": read_limit(m), "write_limit": write_limit(m),
            "throttle_events": {k: sum(v[s] for s in span)
                                for k, v in res.reasons.items() if sum(v[s] for s in span)},
            "would_throttle_seconds": {},
            "partitions": parts})
    return minutes


def partitions(res, statuses):
    out = []
    for p, info in sorted(res.parts.items(), key=lambda kv: kv[1]["first"]):
        if info["died"] < SECONDS:
            continue
        status, hot = statuses.get(p, ("ok", None))
        out.append({
            "id": p, "first_token": hexa(info["first"]), "end_token": info["end"],
            "bytes": res.bytes[p], "status": status, "hot_key": hot,
            "read_per_second": res.read[p][-60:], "write_per_second": res.write[p][-60:],
            "throttle_events": res.part_reasons[p]})
    return out


def sampled(units, scale):
    """What a 1-in-64 sample scaled back up reports: a multiple of `scale`."""
    return max(scale, round(units / scale) * scale)


def orders():
    q = 1 << 62
    table = Resource(None, {i + 1: {"first": i * q, "end": hexa((i + 1) * q - 1) if i < 3 else FULL,
                                    "born": 0, "died": SECONDS} for i in range(4)})
    gsi = Resource("by_status", {i + 5: {"first": i * q,
                                         "end": hexa((i + 1) * q - 1) if i < 3 else FULL,
                                         "born": 0, "died": SECONDS} for i in range(4)})
    statuses = {"PENDING": 7, "SHIPPED": 5, "DELIVERED": 8}
    entries = {k: 0 for k in statuses}
    table_items = [0, 0, 0, 0]
    for s in range(SECONDS):
        demand = {"PENDING": around(280, 17), "SHIPPED": around(80, 9),
                  "DELIVERED": around(40, 6)}
        accepted = dict(demand, PENDING=min(250, demand["PENDING"]))
        refused = demand["PENDING"] - accepted["PENDING"]
        if refused:
            gsi.throttle(7, s, "IndexWriteKeyRangeThroughputExceeded", refused)
        for status, n in accepted.items():
            gsi.write[statuses[status]][s] = 4.0 * n
            entries[status] += n
        for i, n in enumerate(spread(sum(accepted.values()), 4)):
            table.write[i + 1][s] = 4.0 * n
            table_items[i] += n
        for i, n in enumerate(spread(around(50, 7), 4)):
            table.read[i + 1][s] = 1.0 * n
    for i, n in enumerate(table_items):
        table.bytes[i + 1] = n * 3600
    for status, part in statuses.items():
        gsi.bytes[part] = entries[status] * 3600
    items = sum(table_items)
    writes = gsi.reasons["IndexWriteKeyRangeThroughputExceeded"]
    on_demand = lambda m: 12000  # noqa: E731
    on_demand_w = lambda m: 4000  # noqa: E731
    keys = [f"o-{rng.randrange(10**7):07d}" for _ in range(12)]
    table_top = sorted(({"key": {"order_id": {"S": k}}, "partition": rng.randrange(4) + 1,
                         "units": 256 + 64 * rng.randrange(3), "estimate": True} for k in keys),
                       key=lambda e: -e["units"])
    pending_units = sum(gsi.write[7])
    gsi_top = [
        {"key": {"status": {"S": "PENDING"}}, "partition": 7, "units": pending_units,
         "estimate": False},
        {"key": {"status": {"S": "SHIPPED"}}, "partition": 5,
         "units": sampled(sum(gsi.write[5]), 256), "estimate": True},
        {"key": {"status": {"S": "DELIVERED"}}, "partition": 8,
         "units": sampled(sum(gsi.write[8]), 256), "estimate": True}]
    return {
        "name": "orders", "billing_mode": "PAY_PER_REQUEST", "item_count": items,
        "size_bytes": items * 3600,
        "resources": [
            {"index": None,
             "read": direction(table.read, table, 12000, "KeyRange", None, 12000, 12000),
             "write": direction(table.write, table, 4000, "KeyRange", None, 4000, 4000),
             "write_events": items, "index_write_events": None,
             "throttle_events": {}, "would_throttle_seconds": {},
             "partitions": partitions(table, {}), "splits": [],
             "history": history(table, on_demand, on_demand_w),
             "top_keys": {"accessed": table_top, "throttled": []}, "insights": None},
            {"index": "by_status",
             "read": direction(gsi.read, gsi, 12000, "KeyRange", None, 12000, 12000),
             "write": direction(gsi.write, gsi, 4000, "KeyRange", None, 4000, 4000),
             "write_events": None, "index_write_events": items,
             "throttle_events": {"IndexWriteKeyRangeThroughputExceeded": sum(writes)},
             "would_throttle_seconds": {},
             "partitions": partitions(gsi, {7: ("hot-key", {
                 "key": {"status": {"S": "PENDING"}}, "dir": "write", "share": 1.0})}),
             "splits": [], "history": history(gsi, on_demand, on_demand_w),
             "top_keys": {"accessed": gsi_top, "throttled": [
                 {"key": {"status": {"S": "PENDING"}}, "partition": 7, "events": sum(writes),
                  "estimate": False}]},
             "insights": None}]}


def customers():
    h = 1 << 63
    q = 1 << 62
    parts = {1: {"first": 0, "end": hexa(h - 1), "born": 0, "died": SPLIT_AT},
             2: {"first": h, "end": FULL, "born": 0, "died": SPLIT_AT}}
    for i, pid in enumerate((4, 5, 6, 7)):
        parts[pid] = {"first": i * q, "end": hexa((i + 1) * q - 1) if i < 3 else FULL,
                      "born": SPLIT_AT, "died": SECONDS}
    table = Resource(None, parts)
    gsi = Resource("by_email", {3: {"first": 0, "end": FULL, "born": 0, "died": SECONDS}})
    base_writes = index_writes = 0
    for s in range(SECONDS):
        demand = around(575, 24)
        limit = 500 if s < SPLIT_AT else 1250  # writes of 2 WCU the provisioned WCU allows
        accepted = min(demand, limit)
        live = [1, 2] if s < SPLIT_AT else [4, 5, 6, 7]
        for pid, n in zip(live, spread(accepted, len(live))):
            table.write[pid][s] = 2.0 * n
        if demand > accepted:
            share = spread(demand - accepted, len(live))
            for pid, n in zip(live, share):
                if n:
                    table.throttle(pid, s, "TableWriteProvisionedThroughputExceeded", n)
        for pid, n in zip(live, spread(around(800, 28), len(live))):
            table.read[pid][s] = 0.5 * n
        moved = sum(1 for _ in range(accepted) if rng.random() < 0.05)
        gsi.write[3][s] = 2.0 * moved
        gsi.read[3][s] = 0.5 * around(20, 4)
        base_writes += accepted
        index_writes += 2 * moved
    for pid in (4, 5, 6, 7):
        table.bytes[pid] = 62500 * 2100 + rng.randrange(-400, 400) * 2100
    gsi.bytes[3] = 250000 * 160
    size = sum(table.bytes[p] for p in (4, 5, 6, 7))
    splits = [{"time": START + SPLIT_AT, "parent": 1, "low": 4, "high": 5, "cause": "throughput",
               "at": hexa(q)},
              {"time": START + SPLIT_AT, "parent": 2, "low": 6, "high": 7, "cause": "throughput",
               "at": hexa(3 * q)}]
    refused = table.reasons["TableWriteProvisionedThroughputExceeded"]
    keys = [f"c-{rng.randrange(10**6):06d}" for _ in range(10)]
    top = sorted(({"key": {"customer_id": {"S": k}}, "partition": rng.choice((4, 5, 6, 7)),
                   "units": 128 * (2 + rng.randrange(4)), "estimate": True} for k in keys),
                 key=lambda e: -e["units"])
    throttled = sorted(({"key": {"customer_id": {"S": k}}, "partition": rng.choice((1, 2)),
                         "events": 1 + rng.randrange(3), "estimate": False} for k in keys[:4]),
                       key=lambda e: -e["events"])
    return {
        "name": "customers", "billing_mode": "PROVISIONED", "item_count": 250000,
        "size_bytes": size,
        "resources": [
            {"index": None,
             "read": direction(table.read, table, 500, "Provisioned", 500, 500, 30512.5),
             "write": direction(table.write, table, 2500, "Provisioned", 2500, 2500, 2500),
             "write_events": base_writes, "index_write_events": None,
             "throttle_events": {"TableWriteProvisionedThroughputExceeded": sum(refused)},
             "would_throttle_seconds": {},
             "partitions": partitions(table, {}), "splits": splits,
             "history": history(table, lambda m: 500,
                                lambda m: 1000 if m * 60 + 60 <= SPLIT_AT else 2500),
             "top_keys": {"accessed": top, "throttled": throttled}, "insights": None},
            {"index": "by_email",
             "read": direction(gsi.read, gsi, 100, "Provisioned", 100, 100, 27000),
             "write": direction(gsi.write, gsi, 100, "Provisioned", 100, 100, 12610),
             "write_events": None, "index_write_events": index_writes,
             "throttle_events": {}, "would_throttle_seconds": {},
             "partitions": partitions(gsi, {}), "splits": [],
             "history": history(gsi, lambda m: 100, lambda m: 100),
             "top_keys": {"accessed": [], "throttled": []}, "insights": None}]}


def main():
    report = {
        "kumo_version": "0.1.0", "capacity_mode": "enforce",
        "clock": {"mode": "manual", "now": float(START + SECONDS)},
        "window": {"start": float(START), "seconds": SECONDS},
        "partition_limits": {"read": 3000, "write": 1000},
        "tables": [orders(), customers()]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.json")
    text = json.dumps(report, indent=1)
    # Lists of numbers on one line each.
    text = re.sub(r"\[[-0-9.,\s]+\]",
                  lambda m: "[" + " ".join(m.group(0)[1:-1].split()) + "]", text)
    with open(path, "w") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
