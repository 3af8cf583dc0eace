"""Shared by the secondary-index model tests (test_index_shapes.py, test_index_models.py): a
keep-alive signed API caller and its fixture, a batch loader, and typed attribute values."""

import http.client
from decimal import Decimal

import pytest

from index_helpers import B, N, S
from kumo_testlib import TARGET_PREFIX, signed_request

BACKFILLING = "Cannot read from backfilling global secondary index: "


class KeepAliveApi:
    """Api-compatible caller that reuses one HTTP connection (reconnects when it drops)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def __call__(self, operation, body=None):
        for attempt in range(2):
            if self.conn is None:
                self._connect()
            try:
                return signed_request(self.port, TARGET_PREFIX + operation, body or {},
                                      conn=self.conn)
            except (http.client.HTTPException, ConnectionError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise

    def ok(self, operation, body=None):
        resp = self(operation, body)
        assert resp.status == 200, f"{operation} failed: {resp!r}"
        return resp.json

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@pytest.fixture
def kapi(server):
    a = KeepAliveApi(server.port)
    yield a
    a.close()


def batch_put(api, table, items):
    """BatchWriteItem in chunks of 25, resending UnprocessedItems."""
    for i in range(0, len(items), 25):
        pending = {table: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}
        for _ in range(100):
            out = api.ok("BatchWriteItem", {"RequestItems": pending})
            pending = out.get("UnprocessedItems") or {}
            if not pending:
                break
        assert not pending, f"BatchWriteItem kept returning UnprocessedItems: {pending!r}"


def av(t, v):
    """Raw Python value of type t (N: canonical string, S: str, B: bytes) → AttributeValue."""
    if t == "N":
        return N(v)
    if t == "S":
        return S(v)
    return B(v)


def typed(t, v):
    """Sort key of a raw value as DynamoDB orders it: N numerically, S by UTF-8 bytes, B by
    unsigned bytes."""
    if t == "N":
        return Decimal(v)
    if t == "S":
        return v.encode()
    return v
