"""Data sets, table builders and request helpers shared by the Query and Scan tests (test_query.py,
test_read_options.py, test_pagination.py, test_scan.py). Their `tables` fixture is in
query_fixtures.py."""

import http.client
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

from kumo_testlib import (
    N,
    S,
    TARGET_PREFIX,
    b64,
    item_size,
    signed_request,
)

START_INVALID = "The provided starting key is invalid"
START_SCHEMA = START_INVALID + ": The provided key element does not match the schema"
START_OUTSIDE = "The provided starting key is outside query boundaries based on provided conditions"
START_PREDICATE = "The provided starting key does not match the range key predicate"




def B(x):
    return {"B": b64(x)}


def BOOL(x):
    return {"BOOL": x}


# --------------------------------------------------------------------------- data sets

# Sort keys listed in DynamoDB's order. N: numeric (canonical forms as returned).
NUMS = ["-100", "-1.5", "-1", "-0.001", "0", "0.001", "1", "1.5", "2", "10",
        "100000000000000000000"]
# How some of them are written when stored (any equivalent form must land in the same place).
NUM_WRITTEN = {"100000000000000000000": "1E20", "-0.001": "-1e-3", "1.5": "1.50",
               "10": "+10"}
# S: by UTF-8 bytes. U+FB01 (EF AC 81) sorts before U+1F600 (F0 9F 98 80) by bytes but after
# it by UTF-16 code units; uppercase sorts before lowercase.
STRS = ["A", "Z", "a", "aa!", "ab", "abc", "b", "z", "é", "中", "中文", "\ufb01", "😀"]
# B: by unsigned bytes.
BINS = [b"\x00", b"\x00\x00", b"\x01", b"\x7f", b"\x80", b"\x80\x00", b"\xff", b"\xff\xff"]

SORT_TYPES = {
    "N": (NUMS, Decimal, lambda v: N(NUM_WRITTEN.get(v, v)), N),
    "S": (STRS, lambda v: v.encode("utf-8"), S, S),
    "B": (BINS, bytes, B, B),
}


def sorted_item(kind, pk, index):
    values, _, written, _ = SORT_TYPES[kind]
    return {"pk": S(pk), "sk": written(values[index]), "v": N(index)}


def returned_sorted_item(kind, pk, index):
    values, _, _, canonical = SORT_TYPES[kind]
    return {"pk": S(pk), "sk": canonical(values[index]), "v": N(index)}


FILT_SIZE = 20


def filt_item(i):
    return {
        "pk": S("filt"), "sk": N(i), "num": N(i), "odd": BOOL(i % 2 == 1),
        "tag": S(f"t{i % 4}"), "m": {"M": {"x": N(i), "y": S("why")}},
        "l": {"L": [N(i), S("l1"), S("l2")]}, "ss": {"SS": [f"s{i}", "common"]},
    }


CAP_ITEMS = 10


def cap_item(i):
    """An item of exactly 1 KB (attribute name bytes plus value bytes)."""
    item = {"pk": S("cap"), "sk": N(i), "fill": S("")}
    item["fill"] = S("x" * (1024 - item_size(item)))
    assert item_size(item) == 1024
    return item


FAT_COUNT = 25
FAT_PAD = 100 * 1024


def fat_item(pk, i):
    return {"pk": S(pk), "sk": N(i), "fill": S(chr(ord("a") + i % 26) * FAT_PAD)}


BIG_COUNT = 3000
MANY_PARTITIONS = 200
MANY_PER_PARTITION = 5


def many_item(p, i):
    return {"pk": S(f"m{p:03d}"), "sk": N(i), "p": N(p)}


def put_all(port, table, items, threads=8):
    """PutItem every item from several threads over keep-alive connections."""
    local = threading.local()
    conns = []
    lock = threading.Lock()

    def one(item):
        body = {"TableName": table, "Item": item}
        for attempt in range(2):
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                with lock:
                    conns.append(conn)
            try:
                resp = signed_request(port, TARGET_PREFIX + "PutItem", body, conn=conn)
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                local.conn = None
                if attempt:
                    raise
        assert resp.status == 200, f"PutItem into {table} failed: {resp!r}"

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, items))
    for conn in conns:
        conn.close()


TABLE_BUILDERS = {}


def builder(name, hash_key, range_key):
    def wrap(fn):
        TABLE_BUILDERS[name] = (hash_key, range_key, fn)
        return fn
    return wrap


@builder("N", ("pk", "S"), ("sk", "N"))
def _build_n(port, t):
    items = [sorted_item("N", "p", i) for i in range(len(NUMS))]
    items += [{"pk": S("q"), "sk": N(i), "v": N(100 + i)} for i in range(3)]
    put_all(port, t, items[::-1])


@builder("S", ("pk", "S"), ("sk", "S"))
def _build_s(port, t):
    items = [sorted_item("S", "p", i) for i in range(len(STRS))]
    items += [{"pk": S("q"), "sk": S(x), "v": N(100)} for x in ("a", "b")]
    put_all(port, t, items[::-1])


@builder("B", ("pk", "S"), ("sk", "B"))
def _build_b(port, t):
    items = [sorted_item("B", "p", i) for i in range(len(BINS))]
    items += [{"pk": S("q"), "sk": B(b"\x10"), "v": N(100)}]
    put_all(port, t, items[::-1])


@builder("hash", ("pk", "S"), None)
def _build_hash(port, t):
    put_all(port, t, [{"pk": S(f"h{i}"), "v": N(i)} for i in range(5)])


@builder("misc", ("pk", "S"), ("sk", "N"))
def _build_misc(port, t):
    items = [{"pk": S("five"), "sk": N(i)} for i in range(1, 6)]
    items += [filt_item(i) for i in range(FILT_SIZE)]
    put_all(port, t, items)


@builder("cap", ("pk", "S"), ("sk", "N"))
def _build_cap(port, t):
    put_all(port, t, [cap_item(i) for i in range(CAP_ITEMS)])


@builder("big", ("pk", "S"), ("sk", "N"))
def _build_big(port, t):
    put_all(port, t, [{"pk": S("big"), "sk": N(i)} for i in range(BIG_COUNT)])


@builder("fat", ("pk", "S"), ("sk", "N"))
def _build_fat(port, t):
    items = [fat_item("fat", i) for i in range(FAT_COUNT)]
    items += [fat_item(f"fat{j}", i) for j in range(3) for i in range(4)]
    put_all(port, t, items, threads=4)


@builder("many", ("pk", "S"), ("sk", "N"))
def _build_many(port, t):
    put_all(port, t, [many_item(p, i) for p in range(MANY_PARTITIONS)
                      for i in range(MANY_PER_PARTITION)])


# --------------------------------------------------------------------------- helpers


def query(api, table, kce=None, values=None, names=None, **extra):
    body = {"TableName": table}
    if kce is not None:
        body["KeyConditionExpression"] = kce
    if values is not None:
        body["ExpressionAttributeValues"] = values
    if names is not None:
        body["ExpressionAttributeNames"] = names
    body.update(extra)
    return api("Query", body)


def scan(api, table, **extra):
    return api("Scan", dict({"TableName": table}, **extra))


def ok(resp):
    assert resp.status == 200, resp
    return resp.json


def pk_eq(pk):
    return {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [S(pk)]}}


def query_pages(api, body, op="Query", max_pages=10000):
    """Follows LastEvaluatedKey to the end; returns the list of page bodies."""
    pages = []
    body = dict(body)
    while True:
        page = api.ok(op, body)
        pages.append(page)
        assert len(pages) <= max_pages, "pagination does not end"
        if "LastEvaluatedKey" not in page:
            return pages
        body["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def all_items(pages):
    return [item for page in pages for item in page["Items"]]


def key_of(item, names=("pk", "sk")):
    return {k: item[k] for k in names if k in item}


def key_tuple(item):
    return (item["pk"]["S"], Decimal(item["sk"]["N"]))


def legacy_key(**conds):
    return {name: {"ComparisonOperator": op, "AttributeValueList": vals}
            for name, (op, vals) in conds.items()}


def full_scan(api, table, limit=None, **extra):
    body = dict({"TableName": table}, **extra)
    if limit:
        body["Limit"] = limit
    return all_items(query_pages(api, body, op="Scan"))
