"""Helpers shared by the secondary-index tests (test_index_definitions.py, test_index_writes.py,
test_index_queries.py, test_index_updates.py): attribute values, key schemas, index and attribute
definitions, and paging through Query and Scan."""

import time

from kumo_testlib import N, S, b64

INVALID = "One or more parameter values were invalid: "




def B(x):
    return {"B": b64(x)}


def ks(*elements):
    """ks("a", "b", "|", "c") → HASH a, HASH b, RANGE c."""
    out, kind = [], "HASH"
    for e in elements:
        if e == "|":
            kind = "RANGE"
            continue
        out.append({"AttributeName": e, "KeyType": kind})
    return out


def projection(ptype="ALL", nka=None):
    p = {"ProjectionType": ptype}
    if nka is not None:
        p["NonKeyAttributes"] = nka
    return p


def index(name, schema, ptype="ALL", nka=None, throughput=None):
    d = {"IndexName": name, "KeySchema": schema, "Projection": projection(ptype, nka)}
    if throughput is not None:
        d["ProvisionedThroughput"] = throughput
    return d


def defs(**types):
    return [{"AttributeName": k, "AttributeType": v} for k, v in types.items()]


def tp(r=5, w=5):
    return {"ReadCapacityUnits": r, "WriteCapacityUnits": w}


def query_pages(api, body, limit=None):
    """Every page of a Query/Scan ("op" in body) → (items, pages)."""
    body = dict(body)
    op = body.pop("op", "Query")
    if limit is not None:
        body["Limit"] = limit
    items, pages = [], []
    start = None
    for _ in range(1000):
        if start is not None:
            body["ExclusiveStartKey"] = start
        page = api.ok(op, body)
        pages.append(page)
        items += page.get("Items", [])
        start = page.get("LastEvaluatedKey")
        if start is None:
            return items, pages
    raise AssertionError("paging did not end")


def wait_gsi(api, table, idx, timeout=10.0):
    """Waits for the table and the index to be ACTIVE; returns the index description."""
    deadline = time.monotonic() + timeout
    while True:
        t = api.ok("DescribeTable", {"TableName": table})["Table"]
        found = [g for g in t.get("GlobalSecondaryIndexes", []) if g["IndexName"] == idx]
        if t["TableStatus"] == "ACTIVE" and found and found[0]["IndexStatus"] == "ACTIVE":
            return found[0]
        assert time.monotonic() < deadline, f"index {idx} not ACTIVE: {t!r}"
        time.sleep(0.05)
