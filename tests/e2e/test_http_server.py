"""The HTTP server around the API: health check, response headers, access log, command-line
help, presigned URL lifetimes, the server-wide budget for request bodies and running out
of file descriptors."""

import pytest

from kumo_testlib import (
    http_request,
)

UNKNOWN_OP_404_BODY = b"<UnknownOperationException/>\n"


# --------------------------------------------------------------------------- health check


def test_health_check_names_the_host_asked_for(server):
    resp = http_request(server.port, "GET", "/", headers={"Host": "kumo.example:8000"})
    assert resp.status == 200
    assert resp.body == b"healthy: kumo.example:8000 "
    resp = http_request(server.port, "GET", "/")
    assert resp.body == f"healthy: 127.0.0.1:{server.port} ".encode()
    # On AWS the host is the endpoint's own name.
    resp = http_request(server.port, "GET", "/?probe=1",
                        headers={"Host": "dynamodb.eu-west-1.amazonaws.com"})
    assert resp.body == b"healthy: dynamodb.eu-west-1.amazonaws.com "


@pytest.mark.parametrize("path", ["/health", "/some/other/path", "//", "/index.html?x=1"])
def test_health_check_is_get_of_the_root_only(server, path):
    resp = http_request(server.port, "GET", path)
    assert resp.status == 404
    assert resp.body == UNKNOWN_OP_404_BODY
