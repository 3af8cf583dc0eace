"""HTTP content codings and head limits, as DynamoDB applies them.

Requests: a body sent with `Content-Encoding: gzip` (one member or several) or `deflate`
(the zlib format) is decoded and executed; the SigV4 payload hash covers the bytes as sent.
An unknown coding, a body that does not decode to the end, and an empty body with a coding
get HTTP 500 InternalServerError and write nothing; a body that would decode past 16 MiB
gets 413 and is never inflated whole.

Heads: a request line plus headers over 16 KiB gets HTTP 400 before anything else is looked
at, a long path included."""

import json
import socket
import time
import zlib

import pytest

from kumo_testlib import (
    JSON_10,
    NS_DYNAMODB,
    TARGET_PREFIX,
    encode_body,
    http_request,
    sign_headers,
)

INTERNAL_ERROR = {"__type": NS_DYNAMODB + "InternalServerError",
                  "message": "Internal server error"}
HEAD_LIMIT = 16 * 1024


def gzip_bytes(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + 15)
    return c.compress(data) + c.flush()


def zlib_bytes(data):
    return zlib.compress(data)


def encoded_request(port, operation, sent, encoding, access_key="AKIDKUMOE2E",
                    secret="kumo-e2e-secret"):
    """POST of `sent` (a compressed body) with Content-Encoding `encoding`, signed over the
    bytes sent."""
    hdrs = {"Content-Type": JSON_10, "X-Amz-Target": TARGET_PREFIX + operation,
            "Content-Encoding": encoding}
    hdrs = sign_headers(port, sent, hdrs, access_key, secret, "us-east-1")
    return http_request(port, "POST", "/", body=sent, headers=hdrs)


def put_encoded(api, table, key, sent, encoding):
    body = {"TableName": table, "Item": {"pk": {"S": key}, "v": {"S": "x"}}}
    return encoded_request(api.port, "PutItem", sent(encode_body(body)), encoding)


def stored(api, table, key):
    return api.ok("GetItem", {"TableName": table, "Key": {"pk": {"S": key}},
                              "ConsistentRead": True}).get("Item")


# --------------------------------------------------------------------------- requests


@pytest.mark.parametrize("encoding,compress", [
    ("gzip", gzip_bytes),
    ("GZIP", gzip_bytes),
    ("deflate", zlib_bytes),
])
def test_compressed_request_is_decoded_and_executed(api, make_table, encoding, compress):
    table = make_table()
    resp = put_encoded(api, table, "k", compress, encoding)
    assert resp.status == 200, resp
    assert resp.json == {}
    assert stored(api, table, "k") == {"pk": {"S": "k"}, "v": {"S": "x"}}


def test_gzip_request_of_several_members(api, make_table):
    table = make_table()
    data = encode_body({"TableName": table, "Item": {"pk": {"S": "m"}, "n": {"N": "7"}}})
    members = b"".join(gzip_bytes(data[i:i + 10]) for i in range(0, len(data), 10))
    resp = encoded_request(api.port, "PutItem", members, "gzip")
    assert resp.status == 200, resp
    assert stored(api, table, "m") == {"pk": {"S": "m"}, "n": {"N": "7"}}


def test_signature_covers_the_compressed_bytes(auth_server):
    port = auth_server.port
    data = b"{}"
    sent = gzip_bytes(data)
    ok = encoded_request(port, "ListTables", sent, "gzip",
                         access_key="AKIDVERIFYONE", secret="secret-one-abc")
    assert ok.status == 200, ok
    assert "TableNames" in ok.json
    # Signed over the decoded body, sent compressed: the hash no longer matches.
    hdrs = sign_headers(port, data, {"Content-Type": JSON_10, "Content-Encoding": "gzip",
                                     "X-Amz-Target": TARGET_PREFIX + "ListTables"},
                        "AKIDVERIFYONE", "secret-one-abc", "us-east-1")
    bad = http_request(port, "POST", "/", body=sent, headers=hdrs)
    assert bad.status == 400, bad
    assert bad.error_type == "InvalidSignatureException"


def _truncated(data):
    z = gzip_bytes(data)
    return z[:len(z) // 2]


def _corrupt(data):
    z = bytearray(gzip_bytes(data))
    z[-6] ^= 0x55  # the CRC-32 of the member
    return bytes(z)


BAD_BODIES = [
    ("unknown-coding", "br", lambda d: d),
    ("unknown-coding-compress", "compress", gzip_bytes),
    ("unknown-coding-in-list", "gzip, zstd", gzip_bytes),
    ("not-compressed", "gzip", lambda d: d),
    ("truncated", "gzip", _truncated),
    ("bad-crc", "gzip", _corrupt),
    ("trailing-garbage", "gzip", lambda d: gzip_bytes(d) + b"garbage"),
    ("empty-gzip", "gzip", lambda d: b""),
    ("empty-deflate", "deflate", lambda d: b""),
    ("gzip-sent-as-deflate", "deflate", gzip_bytes),
    ("zlib-truncated", "deflate", lambda d: zlib_bytes(d)[:-3]),
]


@pytest.mark.parametrize("encoding,sent", [b[1:] for b in BAD_BODIES],
                         ids=[b[0] for b in BAD_BODIES])
def test_undecodable_body_is_500_and_writes_nothing(api, make_table, encoding, sent):
    table = make_table()
    resp = put_encoded(api, table, "bad", sent, encoding)
    assert resp.status == 500, resp
    assert resp.json == INTERNAL_ERROR
    assert stored(api, table, "bad") is None


def _gzip_of_zeros(total):
    """`total` bytes of zeros as gzip members of 8 MiB each (quick to make)."""
    member = 8 << 20
    c = zlib.compressobj(1, zlib.DEFLATED, 16 + 15)
    return (c.compress(b"\0" * member) + c.flush()) * (total // member)


def _peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_body_decoding_past_16_mib_is_refused_without_inflating_it(start_server):
    srv = start_server()
    bomb = _gzip_of_zeros(512 << 20)  # 512 MiB of zeros, about 2 MiB compressed
    before = _peak_rss_kib(srv.proc.pid)
    started = time.monotonic()
    resp = encoded_request(srv.port, "ListTables", bomb, "gzip")
    assert resp.status == 413, resp
    assert time.monotonic() - started < 10
    # At most the 16 MiB limit was decoded, never the whole body.
    assert _peak_rss_kib(srv.proc.pid) - before < 64 * 1024
    ok = encoded_request(srv.port, "ListTables", gzip_bytes(b"{}"), "gzip")
    assert ok.status == 200, ok


# --------------------------------------------------------------------------- heads


def _raw(port, data):
    """Sends `data` and returns (status, body) of the answer, reading until close."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        out = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def _signed_head(port, extra_headers):
    data = b"{}"
    hdrs = {"Content-Type": JSON_10, "X-Amz-Target": TARGET_PREFIX + "ListTables"}
    hdrs.update(extra_headers)
    hdrs = sign_headers(port, data, hdrs, "AKIDKUMOE2E", "kumo-e2e-secret", "us-east-1")
    head = "POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
    head += "".join(f"{k}: {v}\r\n" for k, v in hdrs.items())
    head += "Content-Length: 2\r\nConnection: close\r\n\r\n"
    return head.encode(), data


def _with_head_size(port, size):
    head, data = _signed_head(port, {"X-Filler": ""})
    pad = size - len(head)
    head, data = _signed_head(port, {"X-Filler": "f" * pad})
    assert len(head) == size
    return head + data


def test_head_over_16_kib_is_400(server):
    status, body = _raw(server.port, _with_head_size(server.port, HEAD_LIMIT + 1))
    assert status == 400
    assert body == b"Bad Request\n"
    # 16 KiB, blank line included, is still served.
    status, body = _raw(server.port, _with_head_size(server.port, HEAD_LIMIT))
    assert status == 200
    assert "TableNames" in json.loads(body)


@pytest.mark.parametrize("method", ["POST", "GET"])
def test_path_over_16_kib_is_400_before_the_signature(auth_server, method):
    path = "/" + "p" * HEAD_LIMIT
    data = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {JSON_10}\r\n"
            f"X-Amz-Target: {TARGET_PREFIX}ListTables\r\nContent-Length: 2\r\n"
            "Connection: close\r\n\r\n{}").encode()
    status, body = _raw(auth_server.port, data)
    assert status == 400
    assert body == b"Bad Request\n"  # not MissingAuthenticationToken: no signature was looked at
