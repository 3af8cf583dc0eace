"""HTTP heads, as DynamoDB bounds them: a request line plus headers over 16 KiB gets HTTP 400
before anything else is looked at, a long path included."""

import json
import socket

import pytest

from kumo_testlib import JSON_10, TARGET_PREFIX, sign_headers

HEAD_LIMIT = 16 * 1024


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
