"""The HTTP server around the API: health check, response headers, access log, command-line
help, presigned URL lifetimes, the server-wide budget for request bodies and running out
of file descriptors."""

import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import resource
import socket
import subprocess
import time
from urllib.parse import quote

import pytest

from kumo_testlib import (
    JSON_10,
    NS_COR_SERVICE,
    NS_DYNAMODB,
    REGION,
    REPO_ROOT,
    TARGET_PREFIX,
    S,
    assert_error,
    create_table_args,
    encode_body,
    http_request,
    sign_headers,
    table_arn,
    unique_name,
    unsigned_request,
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


# --------------------------------------------------------------------------- response headers

EXPOSED = ("x-amzn-RequestId,x-amzn-ErrorType,x-amz-request-id,x-amz-id-2,"
           "x-amzn-ErrorMessage,Date")


@pytest.mark.single_process("a request with both Transfer-Encoding and Content-Length is "
                            "refused by HAProxy in front, with its own page")
def test_every_response_names_the_server(server, api):
    answers = [
        http_request(server.port, "GET", "/"),
        http_request(server.port, "GET", "/nowhere"),
        http_request(server.port, "PUT", "/", body=b"{}"),
        api("ListTables"),
        api("DescribeTable", {"TableName": unique_name()}),
        unsigned_request(server.port, TARGET_PREFIX + "ListTables", {}),
        http_request(server.port, "OPTIONS", "/", headers={"Origin": "http://localhost:3000"}),
        http_request(server.port, "POST", "/", body=b"x",
                     headers={"Transfer-Encoding": "chunked", "Content-Length": "1"}),
    ]
    for resp in answers:
        assert resp.header("Server") == "Server", resp
    assert [r.status for r in answers] == [200, 404, 404, 200, 400, 400, 200, 400]


def test_cors_preflight_exposes_headers(server):
    resp = http_request(server.port, "OPTIONS", "/", headers={
        "Origin": "http://localhost:3000",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-amz-target",
    })
    assert resp.status == 200 and resp.body == b""
    assert resp.header("Access-Control-Allow-Origin") == "*"
    assert resp.header("Access-Control-Max-Age") == "172800"
    assert resp.header("Access-Control-Expose-Headers") == EXPOSED


def test_tag_and_untag_answer_an_empty_body(api, ddb, make_table):
    arn = table_arn(make_table())
    resp = api("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "team", "Value": "a"}]})
    assert resp.status == 200 and resp.body == b"", resp
    assert resp.header("Content-Length") == "0"
    assert resp.header("x-amz-crc32") is None
    resp = api("UntagResource", {"ResourceArn": arn, "TagKeys": ["team"]})
    assert resp.status == 200 and resp.body == b"", resp
    # The SDKs read an empty body as an empty answer.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}])
    ddb.untag_resource(ResourceArn=arn, TagKeys=["k"])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []


# --------------------------------------------------------------------------- access log

ACCESS_LINE = re.compile(r" (\S+) (\S+) table=(\S+) status=(\d+) error=(\S+) "
                         r"latency=\d+\.\d{3}ms id=([0-9A-Z]{52})$")


def access_log(srv):
    with open(srv.log_path, encoding="utf-8", errors="replace") as f:
        return [m.groups() for m in map(ACCESS_LINE.search, f.read().splitlines()) if m]


def test_access_log_one_line_per_request(start_server):
    srv = start_server(extra_args=["--log-requests"])
    api = srv.api()
    t, u = unique_name(), unique_name()
    sent = [
        api("CreateTable", create_table_args(t)),
        api("PutItem", {"TableName": t, "Item": {"pk": S("a")}}),
        api("GetItem", {"TableName": u, "Key": {"pk": S("a")}}),
        api("BatchGetItem", {"RequestItems": {t: {"Keys": [{"pk": S("a")}]},
                                              u: {"Keys": [{"pk": S("a")}]}}}),
        api("TransactWriteItems", {"TransactItems": [
            {"Put": {"TableName": t, "Item": {"pk": S("b")}}},
            {"ConditionCheck": {"TableName": t, "Key": {"pk": S("a")},
                                "ConditionExpression": "attribute_not_exists(pk)"}}]}),
        api("ListTables"),
        http_request(srv.port, "GET", "/"),
        http_request(srv.port, "GET", "/elsewhere"),
    ]
    expected = [
        ("POST", "CreateTable", t, "200", "-"),
        ("POST", "PutItem", t, "200", "-"),
        ("POST", "GetItem", u, "400", "ResourceNotFoundException"),
        ("POST", "BatchGetItem", f"{t},{u}", "400", "ResourceNotFoundException"),
        ("POST", "TransactWriteItems", t, "400", "TransactionCanceledException"),
        ("POST", "ListTables", "-", "200", "-"),
        ("GET", "-", "-", "200", "-"),
        ("GET", "-", "-", "404", "UnknownOperationException"),
    ]
    assert [r.status for r in sent] == [int(e[3]) for e in expected], sent
    lines = access_log(srv)
    # Before them: the health checks that waited for the server to start.
    start_probes, lines = lines[:-len(expected)], lines[-len(expected):]
    assert {line[:5] for line in start_probes} <= {("GET", "-", "-", "200", "-")}
    assert [line[:5] for line in lines] == expected
    assert [line[5] for line in lines] == [r.header("x-amzn-RequestId") for r in sent]

    # Off by default.
    quiet = start_server()
    quiet.api().ok("ListTables")
    assert http_request(quiet.port, "GET", "/").status == 200
    assert access_log(quiet) == []


# --------------------------------------------------------------------------- command line


def test_serve_help_is_readable(kumo_bin):
    out = subprocess.run([kumo_bin, "serve", "--help"], capture_output=True, text=True,
                         timeout=10)
    assert out.returncode == 0, out
    lines = out.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    rows = {line.split()[0]: line for line in lines if line.startswith("  --")}
    # An option, its value name and the start of its description; the default and the
    # options it excludes come after the description, not run into the option.
    assert rows["--data-dir"].split() == ["--data-dir", "DIR", "Directory", "of", "the",
                                          "on-disk", "database"]
    assert rows["--in-memory"].split()[:2] == ["--in-memory", "Keep"]
    assert rows["--port"].split()[:3] == ["--port", "N", "TCP"]
    text = out.stdout
    assert "(default: ./kumo-data; not with --in-memory or\n" in text
    assert "(not with --data-dir or --rados)" in text
    assert "(default: 8000)" in text
    assert "Excludes" not in text


def test_readme_javascript_snippet_says_it_needs_a_module():
    with open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    before, snippet = readme.split("```js\n", 1)
    assert "await " in snippet.split("```", 1)[0]
    intro = before.rstrip().rsplit("\n\n", 1)[-1]
    assert ".mjs" in intro and "top-level `await`" in intro


# --------------------------------------------------------------------------- presigned URLs

AUTH_KEY, AUTH_SECRET = "AKIDVERIFYONE", "secret-one-abc"  # known to auth_server
WEEK = 604800
TOO_LONG = "X-Amz-Expires must be less than a week (in seconds) that is 604800"


def presigned(port, operation, body, age, expires, access_key=AUTH_KEY, secret=AUTH_SECRET):
    """Sends `operation` as a presigned request (query-string SigV4, only `host` signed) dated
    `age` seconds ago, with X-Amz-Expires `expires`."""
    when = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=age)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    scope = f"{amz_date[:8]}/{REGION}/dynamodb/aws4_request"
    params = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{access_key}/{scope}",
              "X-Amz-Date": amz_date, "X-Amz-Expires": str(expires),
              "X-Amz-SignedHeaders": "host"}
    query = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}"
                     for k, v in sorted(params.items()))
    data = encode_body(body)
    canonical = "\n".join(["POST", "/", query, f"host:127.0.0.1:{port}\n", "host",
                           hashlib.sha256(data).hexdigest()])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = f"AWS4{secret}".encode()
    for part in (amz_date[:8], REGION, "dynamodb", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return http_request(port, "POST", f"/?{query}&X-Amz-Signature={signature}", body=data,
                        headers={"Content-Type": JSON_10,
                                 "X-Amz-Target": TARGET_PREFIX + operation})


def test_presigned_expires_is_at_most_a_week(auth_server, server):
    resp = presigned(auth_server.port, "ListTables", {}, age=60, expires=WEEK)
    assert resp.status == 200 and "TableNames" in resp.json, resp
    for port in (auth_server.port, server.port):
        for expires in (WEEK + 1, 30 * 86400, 10**12):
            resp = presigned(port, "ListTables", {}, age=60, expires=expires)
            assert_error(resp, 400, NS_COR_SERVICE + "IncompleteSignatureException", TOO_LONG)
    # Dated 30 days ago: no X-Amz-Expires reaches that far.
    resp = presigned(auth_server.port, "ListTables", {}, age=30 * 86400, expires=WEEK)
    assert_error(resp, 400, NS_COR_SERVICE + "InvalidSignatureException",
                 message_prefix="Signature expired: ")


def test_presigned_is_valid_for_expires_seconds_from_its_date(auth_server):
    # Both sides of the end of a week-long URL, and of a five-minute one.
    resp = presigned(auth_server.port, "ListTables", {}, age=WEEK - 120, expires=WEEK)
    assert resp.status == 200, resp
    resp = presigned(auth_server.port, "ListTables", {}, age=WEEK + 120, expires=WEEK)
    assert_error(resp, 400, NS_COR_SERVICE + "InvalidSignatureException",
                 message_prefix="Signature expired: ")
    resp = presigned(auth_server.port, "ListTables", {}, age=120, expires=300)
    assert resp.status == 200, resp
    # Shorter than the 15 minutes a signed header gets: the URL's own lifetime counts.
    resp = presigned(auth_server.port, "ListTables", {}, age=600, expires=300)
    assert_error(resp, 400, NS_COR_SERVICE + "InvalidSignatureException",
                 message_prefix="Signature expired: ")


# --------------------------------------------------------------------------- body budget

THROTTLED = NS_DYNAMODB + "ThrottlingException"


def padded(body, size):
    """`body` as JSON text padded with spaces to `size` bytes."""
    data = encode_body(body)
    return data + b" " * (size - len(data))


def start_put(port, table, key, size):
    """Sends the head of a PutItem whose body is `size` bytes, with Expect: 100-continue;
    returns (socket, body) once the server has said 100 Continue (it has then taken the
    body's share of the budget)."""
    body = padded({"TableName": table, "Item": {"pk": S(key), "v": S("x" * 1000)}}, size)
    headers = sign_headers(port, body, {"Content-Type": JSON_10,
                                        "X-Amz-Target": TARGET_PREFIX + "PutItem"},
                           "AKIDKUMOE2E", "kumo-e2e-secret", REGION)
    head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall((head + "Expect: 100-continue\r\n\r\n").encode())
    assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
    return sock, body


def finish_put(sock, body):
    sock.sendall(body)
    resp = http.client.HTTPResponse(sock)
    resp.begin()
    data = resp.read()
    sock.close()
    return resp.status, data


@pytest.mark.single_process("the body budget is one process's; requests spread over the "
                            "front ends")
def test_body_budget_refuses_new_bodies_and_keeps_accepted_ones(start_server):
    srv = start_server(extra_args=["--body-budget-mb", "1"])
    api = srv.api()
    t = unique_name()
    api.ok("CreateTable", create_table_args(t))
    # Two slow clients hold 700 KB and 300 KB of the 1 MiB budget, half sent.
    first, first_body = start_put(srv.port, t, "first", 700_000)
    first.sendall(first_body[:350_000])
    second, second_body = start_put(srv.port, t, "second", 300_000)
    # A new request whose body does not fit is refused as DynamoDB sheds load...
    resp = api("PutItem", padded({"TableName": t, "Item": {"pk": S("new")}}, 100_000))
    assert_error(resp, 400, THROTTLED, "Rate of requests exceeds the allowed throughput.")
    # ... while a small one that still fits runs.
    assert api("GetItem", {"TableName": t, "Key": {"pk": S("new")}}).json == {}
    # Nothing already accepted is lost.
    assert finish_put(first, first_body[350_000:]) == (200, b"{}")
    resp = api("PutItem", padded({"TableName": t, "Item": {"pk": S("new")}}, 100_000))
    assert resp.status == 200, resp
    assert finish_put(second, second_body) == (200, b"{}")
    got = api.ok("Scan", {"TableName": t, "ProjectionExpression": "pk"})["Items"]
    assert sorted(i["pk"]["S"] for i in got) == ["first", "new", "second"]
    # A chunked body is counted as it arrives.
    big = padded({"TableName": t, "Item": {"pk": S("chunked")}}, 1_200_000)
    hdrs = sign_headers(srv.port, big, {"Content-Type": JSON_10,
                                        "X-Amz-Target": TARGET_PREFIX + "PutItem"},
                        "AKIDKUMOE2E", "kumo-e2e-secret", REGION)
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.request("POST", "/", body=iter([big[i:i + 65536] for i in range(0, len(big), 65536)]),
                 headers=hdrs, encode_chunked=True)
    r = conn.getresponse()
    assert (r.status, json.loads(r.read())["__type"]) == (400, THROTTLED)
    conn.close()
    assert "Item" not in api.ok("GetItem", {"TableName": t, "Key": {"pk": S("chunked")}})


# --------------------------------------------------------------------------- out of descriptors


@pytest.mark.single_process("limits one process's descriptors, whose connections come from "
                            "HAProxy")
def test_accept_out_of_descriptors_backs_off_and_logs_a_count(start_server):
    srv = start_server(extra_args=["--threads", "1"])
    pid = srv.proc.pid
    limits = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    # Room for two more descriptors: the third connection cannot be accepted.
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (len(os.listdir(f"/proc/{pid}/fd")) + 2,
                                                   limits[1]))

    def failures():
        with open(srv.log_path, encoding="utf-8", errors="replace") as f:
            return [line for line in f.read().splitlines() if "accept failed" in line]

    clients = [socket.create_connection(("127.0.0.1", srv.port), timeout=5) for _ in range(6)]
    try:
        deadline = time.monotonic() + 10
        while not failures():
            assert time.monotonic() < deadline, srv.log_tail()
            time.sleep(0.05)
        # Over a second and a half the server retries with a growing delay; a loop
        # retrying every 50 ms logged about 30 lines in that time.
        time.sleep(1.5)
        logged = failures()
        assert 1 <= len(logged) <= 3, logged
        assert "Too many open files" in logged[0]
    finally:
        for c in clients:
            c.close()
        resource.prlimit(pid, resource.RLIMIT_NOFILE, limits)
    # Descriptors back: it accepts again.
    assert http_request(srv.port, "GET", "/", timeout=10).status == 200
    assert srv.alive()
