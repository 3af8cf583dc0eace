"""Bad input at the HTTP level (HTTP/1.1 message framing, RFC 9112): malformed framing
(bad, conflicting or oversized Content-Length, bad chunk sizes, Transfer-Encoding without
chunked or together with Content-Length) gets one answer and a close; chunked bodies are
counted against the 16 MiB limit as they arrive; truncated and reset bodies get no answer;
slow clients and 500 idle connections do not keep anyone else from being served. After every
case the server must still serve a normal GetItem. The JSON-level matrix is in
test_bad_input_matrix.py."""

import http.client
import json
import resource
import select
import socket
import struct
import time

import pytest

from bad_input_cases import (  # noqa: F401
    MAIN,
    SEEDED_ITEM,
    SEEDED_KEY,
    assert_serves_get,
    dumps,
    head,
    raw_exchange,
    target,
)
from kumo_testlib import JSON_10, TARGET_PREFIX, http_request, sign_headers, signed_request

BODY_LIMIT = 16 * 1024 * 1024


def responses_in(data):
    return data.count(b"HTTP/1.1 ")


def assert_serving(port):
    assert http_request(port, "GET", "/", timeout=5).status == 200
    assert_serves_get(port)


CHUNKED = b"Transfer-Encoding: chunked\r\n"
FRAMING = [
    # id, extra head lines, body bytes, status
    ("cl-not-a-number", b"Content-Length: abc\r\n", b"{}", 400),
    ("cl-negative", b"Content-Length: -1\r\n", b"{}", 400),
    ("cl-overflow", b"Content-Length: 99999999999999999999999\r\n", b"{}", 400),
    ("cl-two-numbers", b"Content-Length: 1 2\r\n", b"{}", 400),
    ("cl-conflicting", b"Content-Length: 2\r\nContent-Length: 3\r\n", b"{}", 400),
    ("cl-and-chunked", b"Content-Length: 2\r\n" + CHUNKED, b"2\r\n{}\r\n0\r\n\r\n", 400),
    ("cl-2^64-1", b"Content-Length: 18446744073709551615\r\n", b"{}", 413),
    ("cl-16MiB+1", b"Content-Length: %d\r\n" % (BODY_LIMIT + 1), b"{}", 413),
    ("chunk-size-overflow", CHUNKED, b"ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n", 400),
    ("chunk-size-not-hex", CHUNKED, b"zz\r\n{}\r\n0\r\n\r\n", 400),
    ("chunk-of-16MiB+1", CHUNKED, b"%x\r\n{}" % (BODY_LIMIT + 1), 413),
]


# A body over the limit is refused by Kumo's own listener (413); behind HAProxy
# (KUMO_FRONT_ENDS) the client gets no answer at all.
OVER_LIMIT = pytest.mark.single_process("Kumo's listener's 413 for a body over its limit; "
                                        "behind HAProxy the client gets no answer")


@pytest.mark.parametrize("extra,body,status", [
    pytest.param(*f[1:], id=f[0], marks=[OVER_LIMIT] if f[3] == 413 else []) for f in FRAMING])
def test_malformed_framing_gets_one_answer_and_close(target, extra, body, status):
    """Framing the server cannot trust: one answer (413 for a declared size over 16 MiB;
    otherwise 400 — DynamoDB's text for these is not known) and the connection closes; the
    body is never parsed."""
    out, closed = raw_exchange(target.port, head(extra) + body)
    assert out.startswith(b"HTTP/1.1 %d " % status), out[:200]
    assert responses_in(out) == 1, out
    assert closed
    assert_serving(target.port)


def test_transfer_encoding_without_chunked_is_rejected(target):
    """A request whose Transfer-Encoding does not end in chunked has no reliable length
    (RFC 9112): 400 and a close, so that the body cannot be read as a second, smuggled
    request."""
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
    out, closed = raw_exchange(target.port, head(b"Transfer-Encoding: gzip\r\n") + smuggled)
    assert_serving(target.port)
    assert responses_in(out) == 1, f"{responses_in(out)} responses: {out!r}"
    assert out.startswith(b"HTTP/1.1 400 "), out[:200]
    assert closed


def test_transfer_encoding_with_content_length_is_rejected(target):
    """Transfer-Encoding and Content-Length together (RFC 9112): both framings at once is an
    attack vector; 400 and close."""
    out, closed = raw_exchange(
        target.port,
        head(b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n") + b"0\r\n\r\n")
    assert_serving(target.port)
    assert responses_in(out) == 1, f"{responses_in(out)} responses: {out!r}"
    assert out.startswith(b"HTTP/1.1 400 "), out[:200]
    assert closed


def test_chunked_body_growing_past_16_mib_is_413(target):
    """A chunked body has no Content-Length to refuse up front: the server counts as it
    reads and answers 413 once the body passes 16 MiB."""
    sock = socket.create_connection(("127.0.0.1", target.port), timeout=30)
    try:
        sock.sendall(head(b"Transfer-Encoding: chunked\r\n"))
        piece = b"100000\r\n" + b" " * 0x100000 + b"\r\n"  # 1 MiB chunks
        try:
            for _ in range(17):
                sock.sendall(piece)
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        resp.read()
        assert resp.status == 413
    finally:
        sock.close()
    assert_serving(target.port)


def test_chunked_body_under_the_limit_is_served(target):
    body = dumps({"TableName": MAIN, "Key": SEEDED_KEY, "ConsistentRead": True})
    hdrs = {"Content-Type": JSON_10, "X-Amz-Target": TARGET_PREFIX + "GetItem"}
    signed = sign_headers(target.port, body, hdrs, "AKIDKUMOE2E", "kumo-e2e-secret",
                          "us-east-1")
    conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=10)
    try:
        conn.putrequest("POST", "/", skip_accept_encoding=True)
        for k, v in signed.items():
            conn.putheader(k, v)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for i in range(0, len(body), 7):
            part = body[i:i + 7]
            conn.send(b"%x\r\n%s\r\n" % (len(part), part))
        conn.send(b"0\r\n\r\n")
        resp = conn.getresponse()
        assert resp.status == 200
        assert json.loads(resp.read()) == {"Item": SEEDED_ITEM}
    finally:
        conn.close()


@pytest.mark.parametrize("sent", [0, 1, 50, 99], ids=["nothing", "1-byte", "half", "all-but-one"])
def test_truncated_body_then_close_gets_no_answer(target, sent):
    """Content-Length 100, fewer bytes, then the client half-closes: the server closes too,
    without a response (there is no request to answer) and keeps serving."""
    body = (b'{"TableName":"' + b"x" * 200)[:sent]
    out, closed = raw_exchange(target.port, head(b"Content-Length: 100\r\n") + body)
    assert out == b""
    assert closed
    assert_serving(target.port)


def test_truncated_chunked_body_then_close_gets_no_answer(target):
    out, closed = raw_exchange(target.port, head(b"Transfer-Encoding: chunked\r\n")
                               + b"64\r\n" + b"{" * 30)
    assert out == b""
    assert closed
    assert_serving(target.port)


def test_abrupt_reset_mid_body(target):
    for _ in range(20):
        sock = socket.create_connection(("127.0.0.1", target.port), timeout=5)
        sock.sendall(head(b"Content-Length: 1000\r\n") + b'{"TableName":')
        # SO_LINGER 0: close() sends RST instead of FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    assert_serving(target.port)


def test_slow_bodies_do_not_block_other_clients(target):
    """Clients that announce a body and never send it (or stop mid-head) hold only their
    own connection. Kumo closes them after its body/idle timeout (60 s,
    HttpServerOptions::body_timeout / idle_timeout in src/net/http_server.h); that is longer
    than this suite waits, so the test checks that everyone else is served meanwhile and that
    the stalled clients have had no answer."""
    stalled = []
    try:
        for i in range(40):
            sock = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            if i % 3 == 0:
                sock.sendall(head(b"Content-Length: 100\r\n"))          # no body at all
            elif i % 3 == 1:
                sock.sendall(head(b"Content-Length: 100\r\n") + b'{"T')  # part of it
            else:
                sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Ta")  # part of head
            stalled.append(sock)
        started = time.monotonic()
        for _ in range(30):
            t = time.monotonic()
            assert_serves_get(target.port)
            # Generous for a loaded machine; waiting behind a stalled client would take 60 s.
            assert time.monotonic() - t < 5.0, "a request waited behind stalled clients"
        assert time.monotonic() - started < 30
        readable, _, _ = select.select(stalled, [], [], 0.2)
        assert not readable, "a stalled client got an answer or a close before its timeout"
    finally:
        for sock in stalled:
            sock.close()
    assert_serving(target.port)


def test_500_idle_connections(target):
    """500 connections that send nothing: a normal request on a new connection is still
    served, also after they all close."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 700:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    idle = []
    try:
        for _ in range(500):
            idle.append(socket.create_connection(("127.0.0.1", target.port), timeout=5))
        assert_serving(target.port)
        conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=10)
        try:
            for _ in range(5):  # keep-alive on top of the idle crowd
                resp = signed_request(target.port, TARGET_PREFIX + "GetItem",
                                      {"TableName": MAIN, "Key": SEEDED_KEY}, conn=conn)
                assert resp.status == 200 and resp.json["Item"] == SEEDED_ITEM
        finally:
            conn.close()
        readable, _, _ = select.select(idle[:100], [], [], 0.1)
        assert not readable, "idle connections were answered or closed early"
    finally:
        for sock in idle:
            sock.close()
    assert_serving(target.port)
