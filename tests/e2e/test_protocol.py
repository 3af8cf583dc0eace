"""Wire protocol: the checks made in order before an operation runs, error bodies and namespaces,
SerializationException texts for JSON type mismatches and response headers."""

import http.client
import json
import select
import socket
import zlib

import pytest

from kumo_testlib import (
    JSON_10,
    SERIALIZATION,
    TARGET_PREFIX,
    UNKNOWN_OPERATION,
    REQUEST_ID_RE,
    assert_serialization,
    http_request,
    signed_request,
    unique_name,
    unsigned_request,
)

HEALTH_BODY = b"healthy: dynamodb.us-east-1.amazonaws.com "
UNKNOWN_OP_404_BODY = b"<UnknownOperationException/>\n"
SERIALIZATION_BODY = b'{"__type":"com.amazon.coral.service#SerializationException"}'
UNKNOWN_OP_BODY = b'{"__type":"com.amazon.coral.service#UnknownOperationException"}'


def crc(body):
    return str(zlib.crc32(body) & 0xFFFFFFFF)


def assert_standard_headers(resp):
    rid = resp.header("x-amzn-RequestId")
    assert rid is not None, f"no x-amzn-RequestId on {resp!r}"
    assert REQUEST_ID_RE.match(rid), f"bad request id {rid!r}"
    if resp.body:
        assert resp.header("x-amz-crc32") == crc(resp.body), resp


# --------------------------------------------------------------------------- pre-dispatch: HTTP
# Checked first, in order: GET health check, other methods or media types (404), CORS
# pre-flight, body over 16 MiB (413).


ENDPOINT_HOST = {"Host": "dynamodb.us-east-1.amazonaws.com"}


@pytest.mark.parametrize("path", ["/", "/?x=1"])
def test_health_check(server, path):
    resp = http_request(server.port, "GET", path, headers=ENDPOINT_HOST)
    assert resp.status == 200
    assert resp.body == HEALTH_BODY
    assert len(resp.body) == 42
    assert resp.header("x-amz-crc32") == "3128867991"


def test_health_check_needs_no_auth_even_with_garbage_headers(server):
    resp = http_request(server.port, "GET", "/", headers={**ENDPOINT_HOST,
                                                          "Authorization": "garbage",
                                                          "X-Amz-Target": "Nope.Nope"})
    assert resp.status == 200
    assert resp.body == HEALTH_BODY


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_are_404_unknown_operation(server, method):
    resp = http_request(server.port, method, "/", body=b"{}",
                        headers={"Content-Type": JSON_10,
                                 "X-Amz-Target": TARGET_PREFIX + "ListTables"})
    assert resp.status == 404
    assert resp.body == UNKNOWN_OP_404_BODY
    assert resp.header("x-amz-crc32") == "3552371480"


@pytest.mark.parametrize("content_type", ["application/x-amz-json-1.1", "text/plain",
                                          "application/xml", "application/x-www-form-urlencoded"])
def test_wrong_content_type_is_404(server, content_type):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", {}, content_type=content_type)
    assert resp.status == 404
    assert resp.body == UNKNOWN_OP_404_BODY


@pytest.mark.parametrize("content_type,echo", [
    (JSON_10, JSON_10),
    ("application/json", "application/json"),
    ("application/x-amz-json-1.0; charset=utf-8", JSON_10),
    ("application/json;charset=UTF-8", "application/json"),
])
def test_accepted_content_types_and_echo(server, content_type, echo):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", {}, content_type=content_type)
    assert resp.status == 200, resp
    assert "TableNames" in resp.json
    assert resp.header("Content-Type").split(";")[0].strip() == echo


def test_cors_preflight(server):
    resp = http_request(server.port, "OPTIONS", "/", headers={
        "Origin": "http://localhost:8001",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-amz-target,authorization,x-amz-date",
    })
    assert resp.status == 200
    assert resp.body == b""
    assert resp.header("Access-Control-Allow-Origin") == "*"
    assert resp.header("Access-Control-Allow-Methods") == "POST"
    assert resp.header("Access-Control-Allow-Headers") == \
        "content-type,x-amz-target,authorization,x-amz-date"
    assert resp.header("Access-Control-Max-Age") == "172800"


def test_any_request_with_origin_gets_allow_origin(server):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", {},
                          headers={"Origin": "http://localhost:8001"})
    assert resp.status == 200
    assert resp.header("Access-Control-Allow-Origin") == "*"
    err = signed_request(server.port, TARGET_PREFIX + "DescribeTable",
                         {"TableName": unique_name()}, headers={"Origin": "http://x.example"})
    assert err.status == 400
    assert err.header("Access-Control-Allow-Origin") == "*"


def _post_raw(port, headers, body_len, chunk=1 << 20):
    """Sends a POST with Content-Length body_len and returns the response status. An answer
    sent right after the headers is read before any body byte is sent; otherwise the body
    is sent, tolerating an early close by the server."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        head = "POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
        for k, v in headers.items():
            head += f"{k}: {v}\r\n"
        head += f"Content-Length: {body_len}\r\n\r\n"
        sock.sendall(head.encode())
        early, _, _ = select.select([sock], [], [], 0.5)
        if not early:
            sock.settimeout(10)
            sent = 0
            piece = b" " * chunk
            try:
                while sent < body_len:
                    n = min(chunk, body_len - sent)
                    sock.sendall(piece[:n])
                    sent += n
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                pass
            sock.settimeout(30)
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        resp.read()
        return resp.status
    finally:
        sock.close()


def test_body_over_16_mib_is_413_and_server_keeps_serving(server):
    limit = 16 * 1024 * 1024
    status = _post_raw(server.port, {"Content-Type": JSON_10,
                                        "X-Amz-Target": TARGET_PREFIX + "ListTables"},
                          limit + 1)
    assert status == 413
    assert http_request(server.port, "GET", "/").status == 200
    assert signed_request(server.port, TARGET_PREFIX + "ListTables", {}).status == 200


def test_body_of_exactly_16_mib_is_not_rejected_for_size(server):
    limit = 16 * 1024 * 1024
    prefix = b'{"Pad":"'
    suffix = b'"}'
    body = prefix + b"a" * (limit - len(prefix) - len(suffix)) + suffix
    assert len(body) == limit
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", body)
    assert resp.status == 200, resp


# --------------------------------------------------------------------------- pre-dispatch: body
# Then, in order: invalid JSON, missing or unknown X-Amz-Target, authentication, empty body.


@pytest.mark.parametrize("body", [b"{", b"not json", b'{"TableName":}', b"[1,2", b"\xff\xfe"])
def test_invalid_json_is_bare_serialization_exception(server, body):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", body)
    assert resp.status == 400
    assert resp.body == SERIALIZATION_BODY
    assert resp.header("x-amz-crc32") == "3948637019"


def test_invalid_json_is_checked_before_target_and_auth(server):
    resp = unsigned_request(server.port, None, b"{oops")
    assert resp.status == 400
    assert resp.body == SERIALIZATION_BODY


@pytest.mark.parametrize("target", [
    None,
    "",
    "DynamoDB_20120810",
    "DynamoDB_20120810.",
    "ListTables",
    "Foo_20120810.ListTables",
    "DynamoDB_20120810.NoSuchOperation",
    "DynamoDB_20120810.CreateGlobalTable",
])
def test_missing_or_unknown_target(server, target):
    resp = signed_request(server.port, target, {})
    assert resp.status == 400
    assert resp.body == UNKNOWN_OP_BODY
    assert resp.json == {"__type": UNKNOWN_OPERATION}


def test_unknown_target_is_checked_before_auth(server):
    resp = unsigned_request(server.port, TARGET_PREFIX + "NoSuchOperation", {})
    assert resp.status == 400
    assert resp.body == UNKNOWN_OP_BODY


def test_empty_body_with_valid_target(server):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables", b"")
    assert resp.status == 400
    assert resp.body == SERIALIZATION_BODY


def test_unknown_members_are_ignored_and_null_is_absent(server):
    resp = signed_request(server.port, TARGET_PREFIX + "ListTables",
                          {"NoSuchMember": {"a": [1, 2]}, "Limit": None,
                           "ExclusiveStartTableName": None})
    assert resp.status == 200, resp
    assert isinstance(resp.json["TableNames"], list)


# --------------------------------------------------------------------------- JSON type mismatches

SER_CASES = [
    ("DescribeTable", {"TableName": 5}, "NUMBER_VALUE cannot be converted to String"),
    ("DescribeTable", {"TableName": 5.5}, "DECIMAL_VALUE cannot be converted to String"),
    ("DescribeTable", {"TableName": True}, "TRUE_VALUE cannot be converted to String"),
    ("DescribeTable", {"TableName": False}, "FALSE_VALUE cannot be converted to String"),
    ("DescribeTable", {"TableName": {"a": "b"}},
     "Start of structure or map found where not expected"),
    ("DescribeTable", {"TableName": ["a"]}, "Unrecognized collection type class java.lang.String"),
    ("ListTables", {"Limit": "5"}, "STRING_VALUE cannot be converted to Integer"),
    ("ListTables", {"Limit": {}}, "Start of structure or map found where not expected"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": 5}}},
     "NUMBER_VALUE cannot be converted to String"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"N": 5}}},
     "NUMBER_VALUE cannot be converted to String"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": "a"}, "n": {"N": 1.5}}},
     "DECIMAL_VALUE cannot be converted to String"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": "a"}, "s": {"SS": "a"}}},
     "Unexpected field type"),
    ("PutItem", {"TableName": "xyz", "Item": "abc"}, "Unexpected field type"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": "abc"}}, "Unexpected value type in payload"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": "a"}, "b": {"BOOL": "maybe"}}},
     "Unexpected token received from parser"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": "a"}, "b": {"B": "abc"}}},
     "Base64 encoded length is expected a multiple of 4 bytes but found: 3"),
    ("PutItem", {"TableName": "xyz", "Item": {"pk": {"S": "a"}, "b": {"B": "AB=="}}},
     "Invalid last non-pad Base64 character dectected"),
    ("GetItem", {"TableName": "xyz", "Key": {"pk": {"S": "a"}}, "ConsistentRead": "maybe"},
     "Unexpected token received from parser"),
    ("CreateTable", {"TableName": "xyz", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                     "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                     "ProvisionedThroughput": {"ReadCapacityUnits": "5",
                                               "WriteCapacityUnits": 5}},
     "STRING_VALUE cannot be converted to Long"),
]


@pytest.mark.parametrize("op,body,message", SER_CASES,
                         ids=[f"{c[0]}-{c[2][:30]}" for c in SER_CASES])
def test_type_mismatch_serialization_messages(api, op, body, message):
    resp = api(op, body)
    assert_serialization(resp, message)


def test_serialization_exception_uses_capital_message_member(api):
    resp = api("DescribeTable", {"TableName": 5})
    assert resp.status == 400
    assert resp.json == {"__type": SERIALIZATION,
                         "Message": "NUMBER_VALUE cannot be converted to String"}


@pytest.mark.parametrize("text", ["true", "TRUE", "1", "yes", "false", "0", "No"])
def test_boolean_strings_are_coerced(api, make_table, text):
    name = make_table()
    resp = api("PutItem", {"TableName": name,
                           "Item": {"pk": {"S": "a"}, "b": {"BOOL": text}}})
    assert resp.status == 200, resp
    expected = text.lower() in ("true", "1", "yes")
    got = api.ok("GetItem", {"TableName": name, "Key": {"pk": {"S": "a"}},
                             "ConsistentRead": "true"})
    assert got["Item"]["b"] == {"BOOL": expected}


# --------------------------------------------------------------------------- error bodies, headers


def test_error_body_is_compact_json_with_namespace(api):
    name = unique_name()
    resp = api("DescribeTable", {"TableName": name})
    assert resp.status == 400
    assert resp.body == (b'{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",'
                         b'"message":"Requested resource not found: Table: ' + name.encode()
                         + b' not found"}')


def test_validation_exception_namespace(api):
    resp = api("ListTables", {"Limit": 0})
    assert resp.status == 400
    assert resp.json["__type"] == "com.amazon.coral.validate#ValidationException"


def test_empty_success_body_and_its_crc(api, make_table):
    name = make_table()
    resp = api("PutItem", {"TableName": name, "Item": {"pk": {"S": "x"}}})
    assert resp.status == 200
    assert resp.body == b"{}"
    assert resp.header("x-amz-crc32") == "2745614147"


def test_request_id_and_crc_on_every_kind_of_response(server, api, make_table):
    name = make_table()
    responses = [
        api("ListTables", {}),
        api("PutItem", {"TableName": name, "Item": {"pk": {"S": "x"}}}),
        api("GetItem", {"TableName": name, "Key": {"pk": {"S": "x"}}}),
        api("DescribeTable", {"TableName": unique_name()}),
        api("ListTables", {"Limit": 0}),
        api("DescribeTable", {"TableName": 5}),
        signed_request(server.port, TARGET_PREFIX + "ListTables", b"{"),
        signed_request(server.port, TARGET_PREFIX + "Nope", {}),
        unsigned_request(server.port, TARGET_PREFIX + "ListTables", {}),
        http_request(server.port, "GET", "/"),
        http_request(server.port, "PUT", "/", body=b"{}"),
    ]
    ids = set()
    for resp in responses:
        assert_standard_headers(resp)
        ids.add(resp.header("x-amzn-RequestId"))
    assert len(ids) == len(responses), "request ids must be unique"


def test_keep_alive_serves_many_requests_on_one_connection(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        first_sock = None
        for i in range(6):
            if i % 3 == 0:
                resp = signed_request(server.port, TARGET_PREFIX + "ListTables", {}, conn=conn)
                assert resp.status == 200
            elif i % 3 == 1:
                resp = signed_request(server.port, TARGET_PREFIX + "ListTables", b"{", conn=conn)
                assert resp.status == 400
            else:
                resp = signed_request(server.port, TARGET_PREFIX + "DescribeTable",
                                      {"TableName": unique_name()}, conn=conn)
                assert resp.status == 400
            assert conn.sock is not None, "server closed the connection"
            if first_sock is None:
                first_sock = conn.sock
            assert conn.sock is first_sock, "a new connection was opened"
        resp = http_request(server.port, "GET", "/", conn=conn)
        assert resp.status == 200
        assert conn.sock is first_sock
    finally:
        conn.close()


def test_boto3_verifies_crc_and_parses_responses(ddb):
    out = ddb.list_tables()
    assert out["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert REQUEST_ID_RE.match(out["ResponseMetadata"]["RequestId"])


def test_large_success_response_crc(api, make_table):
    name = make_table()
    big = "z" * 300000
    assert api("PutItem", {"TableName": name, "Item": {"pk": {"S": "x"}, "v": {"S": big}}}).status == 200
    resp = api("GetItem", {"TableName": name, "Key": {"pk": {"S": "x"}}})
    assert resp.status == 200
    assert resp.header("x-amz-crc32") == crc(resp.body)
    assert json.loads(resp.body)["Item"]["v"]["S"] == big


# --------------------------------------------------------------------------- robustness


def _alive(server):
    assert http_request(server.port, "GET", "/").status == 200
    assert signed_request(server.port, TARGET_PREFIX + "ListTables", {}).status == 200


@pytest.mark.parametrize("body", [
    b"[" * 100000 + b"]" * 100000,
    b'{"a":' * 50000 + b"1" + b"}" * 50000,
    b'{"TableName":"' + b"\\u0000" * 1000 + b'"}',
    b'{"TableName":"\xed\xa0\x80"}',
    b"\x00" * 1000,
    b'{"TableName":"abc"}' * 1000,
], ids=["deep-array", "deep-object", "nul-chars", "lone-surrogate", "nul-bytes",
        "concatenated-objects"])
def test_hostile_bodies_do_not_crash_the_server(server, body):
    resp = signed_request(server.port, TARGET_PREFIX + "DescribeTable", body)
    assert resp.status == 400, resp
    assert resp.json["__type"] in (SERIALIZATION, "com.amazon.coral.validate#ValidationException")
    _alive(server)


def test_deeply_nested_item_does_not_crash_the_server(api, make_table, server):
    name = make_table()
    depth = 5000
    value = b'{"L":[' * depth + b'{"S":"x"}' + b"]}" * depth
    body = (b'{"TableName":"' + name.encode() + b'","Item":{"pk":{"S":"deep"},"v":' + value
            + b"}}")
    resp = api("PutItem", body)
    assert resp.status == 400, resp
    _alive(server)
