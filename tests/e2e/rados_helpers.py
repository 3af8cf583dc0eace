"""What a Kumo deployment keeps in a RADOS pool, read with the `rados` tool, for the tests
that check the layout itself (docs/scale-out.md, "As built")."""

import os
import re
import subprocess

from kumo_testlib import rados_args


def rados(*args):
    return subprocess.run(["rados", "-c", os.environ["KUMO_CEPH_CONF"],
                           "-p", os.environ["KUMO_RADOS_POOL"], *args],
                          capture_output=True, timeout=60, check=True).stdout


def omap(namespace, oid):
    """{key bytes: value bytes} of an object, parsed from `rados listomapvals`: a printable
    key on a line of its own, any other as "key (N bytes):" and a hex dump; each value as
    "value (N bytes) :" and a hex dump (where "*" repeats the line before up to the next
    offset)."""
    out, key, value, field, last = {}, None, None, None, b""

    def flush():
        if key is not None:
            out[bytes(key)] = bytes(value)

    def fill(offset):
        target = key if field == "key" else value
        while last and len(target) < offset:
            target.extend(last)

    for line in rados("-N", namespace, "listomapvals", oid).decode().splitlines():
        if line.startswith("key ("):
            flush()
            key, value, field = bytearray(), bytearray(), "key"
        elif line.startswith("value ("):
            field, last = "value", b""
        elif re.match(r"^[0-9a-f]{8}", line):
            fill(int(line[:8], 16))
            last = bytes(int(h, 16) for h in line[10:59].split())
            (key if field == "key" else value).extend(last)
        elif line == "*":
            continue
        elif line:
            flush()
            key, value, field, last = bytearray(line.encode()), bytearray(), None, b""
    flush()
    return out


def number_end(key, at):
    """Where the key encoding of a number that starts at `at` ends: a zero is one byte; any
    other is a sign marker, an exponent byte and digit bytes ended by 0x00 (0xFF for a
    negative, whose bytes are complemented)."""
    if key[at] == 2:
        return at + 1
    end = 0xFF if key[at] == 1 else 0x00
    at += 2
    while key[at] != end:
        at += 1
    return at + 1


def token_of(key):
    """The token a key of a table's items ([T][1][token]), index entries
    ([T][2][index][token]) or TTL schedule ([T][4][enc(expiry)][item key]) is placed by."""
    if key[4] == 4:
        return token_of(key[number_end(key, 5):])
    if key[4] == 3:
        return int.from_bytes(key[13:21], "big") if len(key) >= 21 else 0
    at = 9 if key[4] == 2 else 5
    return int.from_bytes(key[at:at + 8], "big")


def expiry_of(entry):
    """The whole seconds of a TTL schedule entry's expiry (a non-negative integer)."""
    end = number_end(entry, 5)
    if entry[5] == 2:
        return 0
    assert entry[5] == 3, entry.hex()
    exponent = entry[6] - 129
    digits = "".join(str(b - 0x10) for b in entry[7:end - 1])
    return int(digits.ljust(exponent, "0")[:exponent] or "0")


def schedule_entries(prefix):
    """The expiry of every TTL schedule entry kept in the deployment's table partitions."""
    out = []
    for line in rados("--all", "ls").decode().splitlines():
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t") and oid.startswith("p"):
            out += [expiry_of(k) for k in omap(ns, oid) if len(k) > 4 and k[4] == 4]
    return out


def check_layout(prefix, max_keys=None):
    """Checks every table namespace of a deployment; returns the number of partitions.

    The partition objects are exactly those of the catalog's maps; each holds only keys of
    its range (a finished split removed what it moved) and that range in its range key; no
    split key is left; with
    `max_keys`, no partition holds more than that many keys. A stream object `s<start>`
    is named by a start of its table's map and holds stream records only, of items whose
    token was in its partition when they were written (at or above its start). No table
    keeps its stream or TTL schedule in one object any more."""
    listing = rados("--all", "ls").decode().splitlines()
    objects, streams = {}, {}
    for line in listing:
        ns, _, oid = line.partition("\t")
        if ns.startswith(prefix + "t") and oid.startswith("p"):
            objects.setdefault(ns, set()).add(oid)
        if ns.startswith(prefix + "t") and oid.startswith("s"):
            streams.setdefault(ns, set()).add(oid)
        if ns.startswith(prefix + "t"):
            assert oid not in ("stream", "ttl"), f"{ns}/{oid}"
    catalog = omap(prefix, "kumo.catalog")
    partitions = 0
    for key, value in catalog.items():
        if not key.startswith(b"\xffmap"):
            continue
        table = int.from_bytes(key[4:8], "big")
        ns = f"{prefix}t{table}"
        starts = [int.from_bytes(value[i:i + 8], "big") for i in range(0, len(value), 8)]
        assert starts == sorted(starts) and starts[0] == 0, starts
        names = {f"p{s:016x}" for s in starts}
        assert objects.get(ns, set()) <= names, \
            f"objects outside the map of table {table}: {sorted(objects[ns] - names)}"
        for oid in streams.get(ns, set()):
            start = int(oid[1:], 16)
            assert start in starts, f"{ns}/{oid} is not named by a start of the map"
            keys = [k for k in omap(ns, oid) if not k.startswith(b"\xff")]
            stray = [k.hex() for k in keys if k[4] != 3 or token_of(k) < start]
            assert not stray, f"{ns}/{oid} holds keys of other spaces or partitions: {stray[:3]}"
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else 1 << 64
            oid = f"p{start:016x}"
            if oid not in objects.get(ns, set()):
                continue
            keys = omap(ns, oid)
            assert b"\xffs" not in keys, f"{ns}/{oid}: a split left half done"
            # Its range, as every write and read to it compares: [start][1][end], or
            # [start][0][zeros] for the last partition.
            last = i + 1 == len(starts)
            expected = start.to_bytes(8, "big") + (b"\x00" + bytes(8) if last
                                                   else b"\x01" + end.to_bytes(8, "big"))
            found = keys.get(b"\xffr")
            assert found == expected, f"{ns}/{oid}: range {found}, not {expected}"
            own = [k for k in keys if not k.startswith(b"\xff")]
            stray = [k.hex() for k in own if not start <= token_of(k) < end]
            assert not stray, f"{ns}/{oid} holds keys outside its range: {stray[:3]}"
            if max_keys is not None:
                # (An item's version, [T][5], goes with its item and is not counted.)
                counted = [k for k in own if k[4] != 5]
                assert len(counted) <= max_keys, f"{ns}/{oid} holds {len(counted)} keys"
        partitions += len(starts)
    return partitions


def deployment_prefix(srv):
    args = rados_args(os.environ["KUMO_RADOS_POOL"], srv.data_dir)
    return args[args.index("--rados-namespace") + 1]
