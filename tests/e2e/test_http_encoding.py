"""HTTP content codings and head limits, as DynamoDB applies them.

Requests: a body sent with `Content-Encoding: gzip` (one member or several) or `deflate`
(the zlib format) is decoded and executed; the SigV4 payload hash covers the bytes as sent.
An unknown coding, a body that does not decode to the end, and an empty body with a coding
get HTTP 500 InternalServerError and write nothing; a body that would decode past 16 MiB
gets 413 and is never inflated whole.

Responses: with `Accept-Encoding` naming gzip or deflate (q-values, `*`, case-insensitive
tokens; only the first Accept-Encoding line counts), answers of 4,096 bytes and more are
sent compressed, smaller ones as they are; x-amz-crc32 covers the bytes sent.

Heads: a request line plus headers over 16 KiB gets HTTP 400 before anything else is looked
at, a long path included."""

import http.client
import json
import socket
import time
import zlib

import pytest

from kumo_testlib import (
    JSON_10,
    NS_DYNAMODB,
    TARGET_PREFIX,
    create_table_args,
    encode_body,
    http_request,
    sign_headers,
    unique_name,
    wait_table_active,
)

INTERNAL_ERROR = {"__type": NS_DYNAMODB + "InternalServerError",
                  "message": "Internal server error"}
THRESHOLD = 4096
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


# --------------------------------------------------------------------------- responses


def _get(api, table, key, accept, conn=None):
    """GetItem with Accept-Encoding `accept` (a list: one header line each); returns
    (status, headers, raw body)."""
    data = encode_body({"TableName": table, "Key": {"pk": {"S": key}}})
    hdrs = {"Content-Type": JSON_10, "X-Amz-Target": TARGET_PREFIX + "GetItem"}
    if accept:
        hdrs["Accept-Encoding"] = accept[0]
    hdrs = sign_headers(api.port, data, hdrs, "AKIDKUMOE2E", "kumo-e2e-secret", "us-east-1")
    conn = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
    try:
        conn.putrequest("POST", "/", skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        for extra in accept[1:]:
            conn.putheader("Accept-Encoding", extra)
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        r = conn.getresponse()
        body = r.read()
        return r.status, r.headers, body
    finally:
        conn.close()


def _decoded(headers, body):
    encoding = headers.get("Content-Encoding")
    if encoding == "gzip":
        return zlib.decompress(body, 16 + 15)
    if encoding == "deflate":
        return zlib.decompress(body)
    assert encoding is None, encoding
    return body


@pytest.fixture(scope="module")
def sized_items(api, ddb):
    """A table with items whose GetItem answers are exactly 4,095 and 4,096 bytes."""
    table = unique_name()
    api.ok("CreateTable", create_table_args(table, ("pk", "S"), None))
    wait_table_active(ddb, table)

    def put(key, n):
        api.ok("PutItem", {"TableName": table,
                           "Item": {"pk": {"S": key}, "v": {"S": "x" * n}}})

    put("small", 100)
    _, _, body = _get(api, table, "small", [])
    overhead = len(body) - 100
    for key, size in (("small", THRESHOLD - 1), ("large", THRESHOLD)):
        put(key, size - overhead)
    yield table
    api("DeleteTable", {"TableName": table})


def test_answers_of_4096_bytes_and_more_are_compressed(api, sized_items):
    for accept, encoding in (("gzip", "gzip"), ("deflate", "deflate")):
        status, headers, body = _get(api, sized_items, "large", [accept])
        assert status == 200
        assert headers.get("Content-Encoding") == encoding
        assert headers.get("x-amz-crc32") == str(zlib.crc32(body) & 0xFFFFFFFF)
        assert int(headers.get("Content-Length")) == len(body)
        plain = _decoded(headers, body)
        assert len(plain) == THRESHOLD
        assert len(body) < len(plain)
        assert json.loads(plain)["Item"]["pk"] == {"S": "large"}
        # One byte less is sent as it is.
        status, headers, body = _get(api, sized_items, "small", [accept])
        assert status == 200
        assert headers.get("Content-Encoding") is None
        assert len(body) == THRESHOLD - 1
        assert json.loads(body)["Item"]["pk"] == {"S": "small"}


NEGOTIATION = [
    (["gzip"], "gzip"),
    (["GZip"], "gzip"),
    (["deflate"], "deflate"),
    (["DEFLATE"], "deflate"),
    (["gzip, deflate"], "gzip"),
    (["deflate, gzip"], "deflate"),
    (["gzip;q=0.5, deflate"], "deflate"),
    (["deflate;q=0.5, gzip;q=0.8"], "gzip"),
    (["gzip ; q=0.9, deflate ; q=0.95"], "deflate"),
    (["gzip;q=0"], None),
    (["gzip;q=0.0, deflate;q=0"], None),
    (["*"], "gzip"),
    (["*;q=0"], None),
    (["gzip;q=0, *"], None),
    (["deflate;q=0.4, *;q=0.5"], "gzip"),
    (["*, deflate"], "deflate"),
    (["identity"], None),
    (["identity, gzip;q=0.5"], None),
    (["br"], None),
    (["zstd"], None),
    (["br, zstd, foo"], None),
    (["br, deflate;q=0.1"], "deflate"),
    ([""], None),
    (["identity", "gzip"], None),
    (["deflate", "gzip"], "deflate"),
]


def test_accept_encoding_is_negotiated(api, sized_items):
    wrong = []
    for accept, encoding in NEGOTIATION:
        status, headers, body = _get(api, sized_items, "large", accept)
        assert status == 200
        assert headers.get("x-amz-crc32") == str(zlib.crc32(body) & 0xFFFFFFFF)
        assert len(_decoded(headers, body)) == THRESHOLD
        if headers.get("Content-Encoding") != encoding:
            wrong.append((accept, headers.get("Content-Encoding"), encoding))
    assert not wrong, "Accept-Encoding lines → Content-Encoding sent, expected: %r" % wrong


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


@pytest.mark.single_process("Kumo's listener's limit on a head: HAProxy in front refuses it "
                            "first, with its own page")
def test_head_over_16_kib_is_400(server):
    status, body = _raw(server.port, _with_head_size(server.port, HEAD_LIMIT + 1))
    assert status == 400
    assert body == b"Bad Request\n"
    # 16 KiB, blank line included, is still served.
    status, body = _raw(server.port, _with_head_size(server.port, HEAD_LIMIT))
    assert status == 200
    assert "TableNames" in json.loads(body)


@pytest.mark.single_process("Kumo's listener's limit on a head: HAProxy in front refuses it "
                            "first, with its own page")
@pytest.mark.parametrize("method", ["POST", "GET"])
def test_path_over_16_kib_is_400_before_the_signature(auth_server, method):
    path = "/" + "p" * HEAD_LIMIT
    data = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {JSON_10}\r\n"
            f"X-Amz-Target: {TARGET_PREFIX}ListTables\r\nContent-Length: 2\r\n"
            "Connection: close\r\n\r\n{}").encode()
    status, body = _raw(auth_server.port, data)
    assert status == 400
    assert body == b"Bad Request\n"  # not MissingAuthenticationToken: no signature was looked at
