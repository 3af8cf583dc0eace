"""The HTTP server around the API: health check, response headers, access log, command-line
help, presigned URL lifetimes, the server-wide budget for request bodies and running out
of file descriptors."""

import pytest

from kumo_testlib import (
    TARGET_PREFIX,
    http_request,
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
