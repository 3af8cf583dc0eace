"""Multi-attribute GSI shapes end to end (1+1, 2+2, 4+4, 4+0, 1+3 with S, N and B
components): every left-to-right RANGE prefix in order, other partitions, clause order,
paging, and sparse add/remove/re-add."""

import base64
import http.client
import itertools
import random
import threading
import time
import warnings
from decimal import Decimal

import pytest

from index_helpers import (
    B,
    N,
    S,
    defs,
    index,
    ks,
    query_pages,
)
from index_model_helpers import BACKFILLING, KeepAliveApi, av, batch_put, kapi, typed  # noqa: F401
from kumo_testlib import (
    TARGET_PREFIX,
    assert_validation,
    create_table_args,
    normalize_item,
    signed_request,
    table_arn,
    unique_name,
    wait_table_active,
)


# =========================================================================== (1) GSI shapes

# Domains ordered so that the first few values already disagree between numeric and string
# order (N: "-2" < "10" < "9" as strings) and between signed and unsigned bytes (B: 0x80).
N_DOM = ["9", "10", "-2", "-1.5", "100", "0", "1000", "-100", "0.5", "11", "99", "-1"]
S_DOM = ["a", "B", "ab", "é", "Z9", "b", "aa", "abc", "~", "A", "ba", "z"]
B_DOM = [b"\x80", b"\x01", b"\x7f", b"\x00\x01", b"\xff", b"\x00", b"\x0a", b"\x80\x00", b"\xfe"]
DOMAINS = {"N": N_DOM, "S": S_DOM, "B": B_DOM}
# Operands that are not stored values (between and outside the stored ones).
EXTRA_OPERANDS = {"N": ["-3", "-1.75", "5", "9.5", "99.9", "2000"],
                  "S": ["0", "C", "aa0", "c", "ê"],
                  "B": [b"\x00\x00", b"\x7f\xff", b"\x81", b"\x00\x01\x00"]}
# A value outside every domain, used for entries added while testing sparseness.
ODD_VALUE = {"N": "55", "S": "m", "B": b"\x50"}
# Values per RANGE component, by the number of RANGE components (about 100 entries per
# partition).
DOMAIN_SIZE = {1: 12, 2: 10, 3: 5, 4: 3}
# Composite partition values: P0 (queried), P1 (every component different), P2 (only the last
# HASH component different).
HASH_P0 = {"S": "cust", "N": "7", "B": b"\x01\x02"}
HASH_P1 = {"S": "other", "N": "70", "B": b"\x01\x03"}
HASH_LAST_ALT = {"S": "cust2", "N": "7.5", "B": b"\x01\x02\x00"}

SHAPES = {
    "1+1": ([("h", "S")], [("r1", "N")]),
    "2+2": ([("h", "S"), ("hn", "N")], [("r1", "S"), ("r2", "N")]),
    "4+4": ([("h", "S"), ("hn", "N"), ("hb", "B"), ("h4", "S")],
            [("r1", "N"), ("r2", "S"), ("r3", "B"), ("r4", "N")]),
    "4+0": ([("h", "S"), ("hn", "N"), ("hb", "B"), ("h4", "N")], []),
    "1+3": ([("h", "B")], [("r1", "B"), ("r2", "N"), ("r3", "S")]),
}


class ShapeModel:
    """A table with GSI "gsi" of one shape, the items written to it and the expected index."""

    def __init__(self, shape, table):
        self.shape = shape
        self.table = table
        self.hash, self.range = SHAPES[shape]
        self.items = {}          # pk → item (AttributeValue JSON)
        self.rng = random.Random(shape)

    # ---- data

    def hash_values(self, part):
        vals = []
        for j, (_, t) in enumerate(self.hash):
            if part == 0:
                vals.append(HASH_P0[t])
            elif part == 1:
                vals.append(HASH_P1[t])
            else:
                vals.append(HASH_LAST_ALT[t] if j == len(self.hash) - 1 else HASH_P0[t])
        return tuple(vals)

    def range_tuples(self):
        if not self.range:
            return [()] * 30
        size = DOMAIN_SIZE[len(self.range)]
        return list(itertools.product(*[DOMAINS[t][:size] for _, t in self.range]))

    def make_item(self, pk, hvals, rvals, skip=None):
        it = {"pk": S(pk), "v": N(len(self.items))}
        for (name, t), v in zip(self.hash + self.range, hvals + rvals):
            if name != skip:
                it[name] = av(t, v)
        return it

    def build(self):
        tuples = self.range_tuples()
        p0 = list(tuples)
        self.rng.shuffle(p0)
        for i, rv in enumerate(p0):
            self.add(self.make_item(f"{self.shape}-p0-{i:03d}", self.hash_values(0), rv))
        for part, count in ((1, 15), (2, 10)):
            for i, rv in enumerate(self.rng.sample(tuples, min(count, len(tuples)))):
                self.add(self.make_item(f"{self.shape}-p{part}-{i:03d}", self.hash_values(part),
                                        rv))
        # Sparse: a full P0 key except for one component each.
        odd = tuple(ODD_VALUE[t] for _, t in self.range)
        for name, _ in self.hash + self.range:
            self.add(self.make_item(f"{self.shape}-sparse-{name}", self.hash_values(0), odd,
                                    skip=name))
        return list(self.items.values())

    def add(self, item):
        self.items[item["pk"]["S"]] = item

    # ---- expectations

    def raw(self, item, name, t):
        v = item.get(name)
        if v is None or t not in v:
            return None
        if t == "B":
            return base64.b64decode(v["B"])
        return v[t]

    def entry(self, item):
        """(hash tuple, range tuple) of the item's index entry, or None when sparse."""
        hv = tuple(self.raw(item, n, t) for n, t in self.hash)
        rv = tuple(self.raw(item, n, t) for n, t in self.range)
        if any(x is None for x in hv + rv):
            return None
        return hv, rv

    def hash_key(self, hv):
        return tuple(typed(t, v) for (_, t), v in zip(self.hash, hv))

    def partition(self, hv):
        """pks of partition hv in index order (RANGE tuples are unique per partition)."""
        want = self.hash_key(hv)
        rows = []
        for pk, it in self.items.items():
            e = self.entry(it)
            if e and self.hash_key(e[0]) == want:
                rows.append((tuple(typed(t, v) for (_, t), v in zip(self.range, e[1])), pk, e[1]))
        rows.sort(key=lambda r: (r[0], r[1]))
        return rows

    def indexed_pks(self):
        return {pk for pk, it in self.items.items() if self.entry(it)}

    # ---- queries

    def query_body(self, hv, conds, forward=True):
        """conds: [(component position, op, operands)] on RANGE components. The clause order
        is shuffled and names are aliased at random."""
        names, values, clauses = {}, {}, []

        def ref(name):
            if self.rng.random() < 0.5:
                names["#" + name] = name
                return "#" + name
            return name

        for j, ((name, t), v) in enumerate(zip(self.hash, hv)):
            values[f":h{j}"] = av(t, v)
            clauses.append(f"{ref(name)} = :h{j}")
        for pos, op, operands in conds:
            name, t = self.range[pos]
            phs = []
            for k, v in enumerate(operands):
                values[f":r{pos}_{k}"] = av(t, v)
                phs.append(f":r{pos}_{k}")
            n = ref(name)
            if op == "BETWEEN":
                clauses.append(f"{n} BETWEEN {phs[0]} AND {phs[1]}")
            elif op == "begins_with":
                clauses.append(f"begins_with({n}, {phs[0]})")
            else:
                clauses.append(f"{n} {op} {phs[0]}")
        self.rng.shuffle(clauses)
        body = {"TableName": self.table, "IndexName": "gsi",
                "KeyConditionExpression": " AND ".join(clauses),
                "ExpressionAttributeValues": values, "ScanIndexForward": forward}
        if names:
            body["ExpressionAttributeNames"] = names
        return body

    def expected(self, hv, conds):
        out = []
        for key, pk, rv in self.partition(hv):
            good = True
            for pos, op, operands in conds:
                t = self.range[pos][1]
                x = key[pos]
                ops = [typed(t, o) for o in operands]
                if op == "=":
                    good = x == ops[0]
                elif op == "<":
                    good = x < ops[0]
                elif op == "<=":
                    good = x <= ops[0]
                elif op == ">":
                    good = x > ops[0]
                elif op == ">=":
                    good = x >= ops[0]
                elif op == "BETWEEN":
                    good = ops[0] <= x <= ops[1]
                elif op == "begins_with":
                    good = rv[pos].startswith(operands[0])
                if not good:
                    break
            if good:
                out.append(pk)
        return out

    def prefix_queries(self):
        """Every left-to-right RANGE prefix: equality on the first k components, then either
        nothing or one range operator on component k+1."""
        hv = self.hash_values(0)
        tuples = [rv for _, _, rv in self.partition(hv)]
        cases = [[]]
        for k in range(len(self.range) + 1):
            prefixes = {tuple(rv[:k]) for rv in tuples}
            for prefix in self.rng.sample(sorted(prefixes, key=repr), min(2, len(prefixes))):
                eq = [(j, "=", [prefix[j]]) for j in range(k)]
                if k:
                    cases.append(eq)
                if k == len(self.range):
                    continue
                t = self.range[k][1]
                stored = sorted({rv[k] for rv in tuples}, key=lambda v: typed(t, v))
                pool = stored + EXTRA_OPERANDS[t]
                for op in ("=", "<", "<=", ">", ">="):
                    for operand in self.rng.sample(pool, min(4, len(pool))):
                        cases.append(eq + [(k, op, [operand])])
                for _ in range(4):
                    lo, hi = sorted(self.rng.sample(pool, 2), key=lambda v: typed(t, v))
                    cases.append(eq + [(k, "BETWEEN", [lo, hi])])
                cases.append(eq + [(k, "BETWEEN", [stored[0], stored[0]])])
                if t != "N":
                    starts = {v[:1] for v in stored} | {stored[-1]}
                    for operand in sorted(starts, key=lambda v: typed(t, v)):
                        cases.append(eq + [(k, "begins_with", [operand])])
        return hv, cases


@pytest.fixture(params=list(SHAPES))
def shape_model(request, kapi, make_table):
    shape = request.param
    hash_attrs, range_attrs = SHAPES[shape]
    table = make_table(("pk", "S"),
                       AttributeDefinitions=defs(pk="S", **dict(hash_attrs + range_attrs)),
                       GlobalSecondaryIndexes=[index("gsi", ks(*[n for n, _ in hash_attrs], "|",
                                                              *[n for n, _ in range_attrs]))])
    model = ShapeModel(shape, table)
    items = model.build()
    random.Random(1).shuffle(items)
    batch_put(kapi, table, items)
    return model


def query_pks(api, body):
    items, pages = query_pages(api, body)
    for p in pages:
        assert p["Count"] == len(p.get("Items", [])) and p["ScannedCount"] == p["Count"], p
    return [i["pk"]["S"] for i in items], items


def test_gsi_shape_describe(kapi, shape_model):
    m = shape_model
    d = kapi.ok("DescribeTable", {"TableName": m.table})["Table"]
    (g,) = d["GlobalSecondaryIndexes"]
    assert g["KeySchema"] == ks(*[n for n, _ in m.hash], "|", *[n for n, _ in m.range])
    assert g["IndexStatus"] == "ACTIVE"
    assert g["ItemCount"] == len(m.indexed_pks())


def test_gsi_shape_range_prefixes_in_order(kapi, shape_model):
    m = shape_model
    hv, cases = m.prefix_queries()
    failures = []
    for conds in cases:
        want = m.expected(hv, conds)
        for forward in (True, False):
            body = m.query_body(hv, conds, forward)
            got, _ = query_pks(kapi, body)
            exp = want if forward else list(reversed(want))
            if not m.range:
                # 4+0: every entry of the partition has the same (empty) RANGE key; their
                # order is not defined by DynamoDB [open], so compare as sets.
                got, exp = sorted(got), sorted(exp)
            if got != exp:
                failures.append(f"{body['KeyConditionExpression']} forward={forward}: "
                                f"expected {exp}, got {got}")
    assert not failures, f"{len(failures)} of {2 * len(cases)} queries differ:\n" + "\n".join(
        failures[:15])
    assert len(cases) >= 1 + 2 * len(m.range)


def test_gsi_shape_full_partition_items_and_other_partitions(kapi, shape_model):
    m = shape_model
    for part in (0, 1, 2):
        hv = m.hash_values(part)
        want = [pk for _, pk, _ in m.partition(hv)]
        got, items = query_pks(kapi, m.query_body(hv, []))
        if not m.range:
            got, want = sorted(got), sorted(want)
            items = sorted(items, key=lambda i: i["pk"]["S"])
        assert got == want, (part, got, want)
        assert [normalize_item(i) for i in items] == [normalize_item(m.items[pk]) for pk in want]
    assert len([pk for _, pk, _ in m.partition(m.hash_values(0))]) >= 12 or not m.range
    # Every component of the partition key takes part: changing only the last one is
    # another partition, and a value that was never written is an empty one.
    assert not set(query_pks(kapi, m.query_body(m.hash_values(2), []))[0]) & set(
        query_pks(kapi, m.query_body(m.hash_values(0), []))[0])
    empty = tuple(ODD_VALUE[t] for _, t in m.hash)
    assert query_pks(kapi, m.query_body(empty, []))[0] == []


def test_gsi_shape_clause_order_permutations(kapi, shape_model):
    m = shape_model
    hv = m.hash_values(0)
    rows = m.partition(hv)
    rv = rows[len(rows) // 2][2]
    if m.range:
        conds = [(j, "=", [rv[j]]) for j in range(len(m.range) - 1)]
        conds.append((len(m.range) - 1, ">=", [rv[-1]]))
    else:
        conds = []
    want = m.expected(hv, conds)
    assert want
    seen = set()
    for _ in range(12):
        body = m.query_body(hv, conds)
        seen.add(body["KeyConditionExpression"])
        got, _ = query_pks(kapi, body)
        if not m.range:
            got, want = sorted(got), sorted(want)
        assert got == want, body["KeyConditionExpression"]
    assert len(seen) > 1 or len(m.hash) + len(m.range) == 1


def test_gsi_shape_paging(kapi, shape_model):
    m = shape_model
    hv = m.hash_values(0)
    want = [pk for _, pk, _ in m.partition(hv)]
    key_attrs = {"pk"} | {n for n, _ in m.hash + m.range}
    for forward in (True, False):
        items, pages = query_pages(kapi, m.query_body(hv, [], forward), limit=7)
        got = [i["pk"]["S"] for i in items]
        exp = want if forward else list(reversed(want))
        if not m.range:
            assert sorted(got) == sorted(exp) and len(set(got)) == len(got)
        else:
            assert got == exp
        for p in pages[:-1]:
            lek = p["LastEvaluatedKey"]
            assert set(lek) == key_attrs
            last = p["Items"][-1]
            assert lek == {k: last[k] for k in key_attrs}


def test_gsi_shape_sparse_remove_and_readd(kapi, shape_model):
    m = shape_model
    t = m.table
    hv = m.hash_values(0)

    def check():
        got, _ = query_pks(kapi, m.query_body(hv, []))
        want = [pk for _, pk, _ in m.partition(hv)]
        if not m.range:
            got, want = sorted(got), sorted(want)
        assert got == want
        scanned, _ = query_pages(kapi, {"op": "Scan", "TableName": t, "IndexName": "gsi"})
        assert {i["pk"]["S"] for i in scanned} == m.indexed_pks()

    def update(pk, expr, names, values=None):
        body = {"TableName": t, "Key": {"pk": S(pk)}, "UpdateExpression": expr,
                "ExpressionAttributeNames": names, "ReturnValues": "ALL_NEW"}
        if values:
            body["ExpressionAttributeValues"] = values
        m.add(kapi.ok("UpdateItem", body)["Attributes"])

    # The sparse items are not indexed.
    check()
    for name, _ in m.hash + m.range:
        assert f"{m.shape}-sparse-{name}" not in m.indexed_pks()

    rows = m.partition(hv)
    victim = rows[len(rows) // 3][1]
    original = dict(m.items[victim])
    for name, t_ in m.hash + m.range:
        # Remove one component: the entry disappears.
        update(victim, "REMOVE #c", {"#c": name})
        assert victim not in m.indexed_pks()
        check()
        # Re-add it with another value: the entry comes back at its new position (for a
        # HASH component: in another partition).
        update(victim, "SET #c = :v", {"#c": name}, {":v": av(t_, ODD_VALUE[t_])})
        assert victim in m.indexed_pks()
        check()
        other = m.entry(m.items[victim])[0]
        if other != hv:
            got, _ = query_pks(kapi, m.query_body(other, []))
            assert victim in got
        # And back to the original value.
        update(victim, "SET #c = :v", {"#c": name}, {":v": original[name]})
        check()
    assert normalize_item(m.items[victim]) == normalize_item(original)

    # A sparse item gains its missing component (enters the index), loses it again, and gains
    # it once more.
    for name, t_ in m.hash + m.range:
        pk = f"{m.shape}-sparse-{name}"
        value = av(t_, HASH_P0[t_]) if (name, t_) in m.hash else av(t_, ODD_VALUE[t_])
        update(pk, "SET #c = :v", {"#c": name}, {":v": value})
        assert pk in m.indexed_pks()
        check()
        update(pk, "REMOVE #c", {"#c": name})
        assert pk not in m.indexed_pks()
        check()
        kapi.ok("PutItem", {"TableName": t, "Item": dict(m.items[pk], **{name: value})})
        m.add(dict(m.items[pk], **{name: value}))
        check()
        kapi.ok("DeleteItem", {"TableName": t, "Key": {"pk": S(pk)}})
        del m.items[pk]
        check()
