"""Security (verify mode, --credentials): what SigV4 covers and what it does not, signing
dates on both sides of the clock-skew window, the Streams API under the same checks, no
secret in the server's log, and the default bind address."""

import datetime
import socket
import subprocess
import time

import botocore.exceptions
import pytest

from kumo_testlib import (
    JSON_10,
    NS_COR_SERVICE,
    TARGET_PREFIX,
    KumoServer,
    assert_error,
    client_error,
    free_port,
    http_request,
    kumo_binary,
    make_client,
    sign_headers,
    signed_request,
    unsigned_request,
)

INVALID_SIG = NS_COR_SERVICE + "InvalidSignatureException"
MISSING_TOKEN = NS_COR_SERVICE + "MissingAuthenticationTokenException"
SIG_MISMATCH_PREFIX = ("The request signature we calculated does not match the signature you "
                       "provided.")
LIST_TABLES = TARGET_PREFIX + "ListTables"
LIST_STREAMS = "DynamoDBStreams_20120810.ListStreams"

KEY, SECRET = "AKIDSECURITY", "s3cr3t-Value/with+chars"


@pytest.fixture(scope="module")
def secure_server(kumo_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("kumo-security")
    creds = d / "credentials"
    creds.write_text(f"# one key\n{KEY} {SECRET}\n")
    srv = KumoServer(kumo_bin, str(d), credentials=str(creds))
    srv.start()
    yield srv
    srv.stop()


def signed_headers_for(port, target, body=b"{}", extra=None):
    hdrs = {"Content-Type": JSON_10, "X-Amz-Target": target}
    hdrs.update(extra or {})
    return sign_headers(port, body, hdrs, KEY, SECRET, "us-east-1")


def test_sdk_signed_requests_pass(secure_server):
    c = make_client(secure_server.endpoint, access_key=KEY, secret=SECRET)
    assert "TableNames" in c.list_tables()
    streams = make_client(secure_server.endpoint, access_key=KEY, secret=SECRET,
                          service="dynamodbstreams")
    assert streams.list_streams()["Streams"] == []


def test_streams_api_is_checked_like_the_rest(secure_server):
    resp = unsigned_request(secure_server.port, LIST_STREAMS, {})
    assert_error(resp, 400, MISSING_TOKEN, "Request is missing Authentication Token")
    streams = make_client(secure_server.endpoint, access_key=KEY, secret="wrong",
                          service="dynamodbstreams")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        streams.list_streams()
    client_error(e, "InvalidSignatureException", message_prefix=SIG_MISMATCH_PREFIX)


def test_a_header_outside_signed_headers_may_change(secure_server):
    hdrs = signed_headers_for(secure_server.port, LIST_TABLES)
    hdrs["User-Agent"] = "changed-after-signing"
    hdrs["X-Unsigned-Extra"] = "added-after-signing"
    resp = http_request(secure_server.port, "POST", "/", body=b"{}", headers=hdrs)
    assert resp.status == 200, resp.body


def test_a_signed_header_may_not_change(secure_server):
    hdrs = signed_headers_for(secure_server.port, LIST_TABLES, extra={"X-Amz-Meta": "one"})
    assert "x-amz-meta" in hdrs["Authorization"].lower()
    hdrs["X-Amz-Meta"] = "two"
    resp = http_request(secure_server.port, "POST", "/", body=b"{}", headers=hdrs)
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


def test_a_signed_header_may_not_be_removed(secure_server):
    hdrs = signed_headers_for(secure_server.port, LIST_TABLES, extra={"X-Amz-Meta": "one"})
    del hdrs["X-Amz-Meta"]
    resp = http_request(secure_server.port, "POST", "/", body=b"{}", headers=hdrs)
    # The canonical request then has an empty value for the header: the signature differs.
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


@pytest.mark.parametrize("minutes, accepted", [(-20, False), (-14, True), (14, True),
                                               (20, False)])
def test_signing_date_window(secure_server, minutes, accepted):
    when = datetime.datetime.utcnow() + datetime.timedelta(minutes=minutes)
    resp = signed_request(secure_server.port, LIST_TABLES, {}, access_key=KEY, secret=SECRET,
                          when=when)
    if accepted:
        assert resp.status == 200, resp.body
    elif minutes < 0:
        assert_error(resp, 400, INVALID_SIG, message_prefix="Signature expired: ")
    else:
        assert_error(resp, 400, INVALID_SIG, message_prefix="Signature not yet current: ")


def test_a_replayed_request_within_the_window_is_accepted_and_beyond_it_refused(secure_server):
    # SigV4 does not prevent replay inside the clock-skew window (neither does DynamoDB);
    # a captured request stops working once its date leaves the window.
    hdrs = signed_headers_for(secure_server.port, LIST_TABLES)
    for _ in range(3):
        assert http_request(secure_server.port, "POST", "/", body=b"{}",
                            headers=hdrs).status == 200
    old = datetime.datetime.utcnow() - datetime.timedelta(minutes=16)
    resp = signed_request(secure_server.port, LIST_TABLES, {}, access_key=KEY, secret=SECRET,
                          when=old)
    assert_error(resp, 400, INVALID_SIG, message_prefix="Signature expired: ")


def test_no_secret_in_the_log(secure_server):
    # Successes and failures of every kind, then the log is searched for the secret.
    make_client(secure_server.endpoint, access_key=KEY, secret=SECRET).list_tables()
    signed_request(secure_server.port, LIST_TABLES, {}, access_key=KEY, secret=SECRET + "x")
    signed_request(secure_server.port, LIST_TABLES, {}, access_key="AKIDOTHER", secret=SECRET)
    unsigned_request(secure_server.port, LIST_TABLES, {})
    log = open(secure_server.log_path, encoding="utf-8", errors="replace").read()
    assert "verifying signatures against 1 access key(s)" in log
    assert SECRET not in log
    assert SECRET + "x" not in log


def test_default_bind_is_loopback_and_says_so(tmp_path):
    port = free_port()
    log_path = tmp_path / "kumo.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([kumo_binary(), "serve", "--in-memory", "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 10
        while time.time() < deadline:
            if "listening on" in log_path.read_text():
                break
            time.sleep(0.02)
        text = log_path.read_text()
        assert f"listening on 127.0.0.1:{port}" in text, text
        assert "reachable only from this machine; --bind 0.0.0.0 accepts other machines" in text
        assert http_request(port, "GET", "/").status == 200
        # Another address of this machine, if it has one, is not served.
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent
            own_address = probe.getsockname()[0]
        except OSError:
            own_address = None
        finally:
            probe.close()
        if own_address and not own_address.startswith("127."):
            with pytest.raises(OSError):
                socket.create_connection((own_address, port), timeout=2).close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
