"""Authentication (AWS Signature Version 4): the default mode, which accepts any well-formed
signature, and verify mode (--credentials FILE)."""

import datetime
import re

import botocore.exceptions
import pytest

from kumo_testlib import (
    JSON_10,
    NS_COR_SERVICE,
    TARGET_PREFIX,
    assert_error,
    client_error,
    create_table_args,
    http_request,
    make_client,
    sign_headers,
    signed_request,
    table_arn,
    unique_name,
    unsigned_request,
    wait_table_active,
)

MISSING_TOKEN = NS_COR_SERVICE + "MissingAuthenticationTokenException"
INCOMPLETE = NS_COR_SERVICE + "IncompleteSignatureException"
INVALID_SIG = NS_COR_SERVICE + "InvalidSignatureException"
UNRECOGNIZED = NS_COR_SERVICE + "UnrecognizedClientException"

SIG_MISMATCH_PREFIX = ("The request signature we calculated does not match the signature you "
                       "provided.")

REQ_CREDENTIAL = "Authorization header requires 'Credential' parameter. "
REQ_SIGNATURE = "Authorization header requires 'Signature' parameter. "
REQ_SIGNED_HEADERS = "Authorization header requires 'SignedHeaders' parameter. "
REQ_DATE = "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "

LIST_TABLES = TARGET_PREFIX + "ListTables"
AMZ_DATE = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")


# --------------------------------------------------------------------------- default mode


def test_no_authorization_header(server):
    resp = unsigned_request(server.port, LIST_TABLES, {})
    assert_error(resp, 400, MISSING_TOKEN, "Request is missing Authentication Token")


@pytest.mark.parametrize("auth", ["Basic dXNlcjpwYXNz", "Bearer abc", "AWS AKID:sig", ""])
def test_non_aws4_authorization_is_missing_token(server, auth):
    resp = unsigned_request(server.port, LIST_TABLES, {},
                            headers={"Authorization": auth, "X-Amz-Date": AMZ_DATE})
    assert_error(resp, 400, MISSING_TOKEN, "Request is missing Authentication Token")


def test_missing_token_on_data_operation(server):
    resp = unsigned_request(server.port, TARGET_PREFIX + "GetItem",
                            {"TableName": "whatever", "Key": {"pk": {"S": "a"}}})
    assert_error(resp, 400, MISSING_TOKEN, "Request is missing Authentication Token")


INCOMPLETE_CASES = [
    ("AWS4-HMAC-SHA256 Foo=bar", True,
     REQ_CREDENTIAL + REQ_SIGNATURE + REQ_SIGNED_HEADERS),
    ("AWS4-HMAC-SHA256 Credential=AKIDX/20240101/us-east-1/dynamodb/aws4_request, "
     "SignedHeaders=host;x-amz-date", False,
     REQ_SIGNATURE + REQ_DATE),
    ("AWS4-HMAC-SHA256 Credential=AKIDX/20240101/us-east-1/dynamodb/aws4_request, "
     "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64, False,
     REQ_DATE),
    ("AWS4-HMAC-SHA256 Signature=abc", True,
     REQ_CREDENTIAL + REQ_SIGNED_HEADERS),
]


@pytest.mark.parametrize("auth,with_date,sentences", INCOMPLETE_CASES,
                         ids=["no-pairs", "no-signature-no-date", "no-date", "signature-only"])
def test_incomplete_signature_messages(server, auth, with_date, sentences):
    headers = {"Authorization": auth}
    if with_date:
        headers["X-Amz-Date"] = AMZ_DATE
    resp = unsigned_request(server.port, LIST_TABLES, {}, headers=headers)
    assert_error(resp, 400, INCOMPLETE, sentences + "Authorization=" + auth)


def test_unsupported_algorithm(server):
    auth = ("AWS4-HMAC-SHA512 Credential=AKIDX/20240101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)
    resp = unsigned_request(server.port, LIST_TABLES, {},
                            headers={"Authorization": auth, "X-Amz-Date": AMZ_DATE})
    assert_error(resp, 400, INCOMPLETE,
                 "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512' (only AWS4-HMAC-SHA256 for now). ")


def test_credential_must_have_five_parts(server):
    auth = ("AWS4-HMAC-SHA256 Credential=AKIDX/20240101/us-east-1, "
            "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)
    resp = unsigned_request(server.port, LIST_TABLES, {},
                            headers={"Authorization": auth, "X-Amz-Date": AMZ_DATE})
    assert_error(resp, 400, INCOMPLETE,
                 "Credential must have exactly 5 slash-delimited elements, e.g. "
                 "keyid/date/region/service/term, got 'AKIDX/20240101/us-east-1'")


@pytest.mark.parametrize("access_key,secret", [
    ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("x", "y"),
    ("local-dev_key.1", "anything at all"),
])
def test_default_mode_accepts_any_credentials(server, access_key, secret):
    c = make_client(server.endpoint, access_key=access_key, secret=secret)
    assert isinstance(c.list_tables()["TableNames"], list)


def test_default_mode_accepts_a_wrong_signature(server):
    hdrs = sign_headers(server.port, b"{}", {"Content-Type": JSON_10, "X-Amz-Target": LIST_TABLES},
                        "AKIDANY", "secret", "us-east-1")
    hdrs["Authorization"] = re.sub(r"Signature=[0-9a-f]+", "Signature=" + "ab" * 32,
                                   hdrs["Authorization"])
    resp = http_request(server.port, "POST", "/", body=b"{}", headers=hdrs)
    assert resp.status == 200, resp


def test_tables_are_shared_across_access_keys_and_regions(server, make_table):
    c1 = make_client(server.endpoint, access_key="AKIDFIRSTKEY", secret="one",
                     region="us-east-1")
    c2 = make_client(server.endpoint, access_key="AKIDSECONDKEY", secret="two",
                     region="eu-west-1")
    name = make_table(client=c1)
    desc = c2.describe_table(TableName=name)["Table"]
    assert desc["TableName"] == name
    assert desc["TableArn"] == table_arn(name)
    names = []
    kwargs = {}
    while True:
        page = c2.list_tables(**kwargs)
        names += page["TableNames"]
        if "LastEvaluatedTableName" not in page:
            break
        kwargs = {"ExclusiveStartTableName": page["LastEvaluatedTableName"]}
    assert name in names
    c2.put_item(TableName=name, Item={"pk": {"S": "shared"}, "v": {"N": "7"}})
    got = c1.get_item(TableName=name, Key={"pk": {"S": "shared"}}, ConsistentRead=True)
    assert got["Item"] == {"pk": {"S": "shared"}, "v": {"N": "7"}}


# --------------------------------------------------------------------------- verify mode

KEY1, SECRET1 = "AKIDVERIFYONE", "secret-one-abc"
KEY2, SECRET2 = "AKIDVERIFYTWO", "secret/two+xyz"


def test_verify_mode_correct_signature(auth_server):
    c = make_client(auth_server.endpoint, access_key=KEY1, secret=SECRET1)
    name = unique_name()
    c.create_table(**create_table_args(name))
    wait_table_active(c, name)
    c.put_item(TableName=name, Item={"pk": {"S": "a"}, "v": {"S": "1"}})
    assert c.get_item(TableName=name, Key={"pk": {"S": "a"}})["Item"]["v"] == {"S": "1"}
    c2 = make_client(auth_server.endpoint, access_key=KEY2, secret=SECRET2)
    assert name in c2.list_tables()["TableNames"]
    c2.delete_table(TableName=name)


def test_verify_mode_health_needs_no_auth(auth_server):
    resp = http_request(auth_server.port, "GET", "/")
    assert resp.status == 200
    assert resp.body == f"healthy: 127.0.0.1:{auth_server.port} ".encode()


def test_verify_mode_missing_token(auth_server):
    resp = unsigned_request(auth_server.port, LIST_TABLES, {})
    assert_error(resp, 400, MISSING_TOKEN, "Request is missing Authentication Token")


def test_verify_mode_wrong_secret(auth_server):
    c = make_client(auth_server.endpoint, access_key=KEY1, secret="not-the-secret")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.list_tables()
    client_error(e, "InvalidSignatureException", message_prefix=SIG_MISMATCH_PREFIX)
    resp = signed_request(auth_server.port, LIST_TABLES, {}, access_key=KEY1, secret="nope")
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


def test_verify_mode_other_keys_secret(auth_server):
    resp = signed_request(auth_server.port, LIST_TABLES, {}, access_key=KEY1, secret=SECRET2)
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


def test_verify_mode_unknown_access_key(auth_server):
    c = make_client(auth_server.endpoint, access_key="AKIDUNKNOWN", secret=SECRET1)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.list_tables()
    client_error(e, "UnrecognizedClientException",
                 "The security token included in the request is invalid.")
    resp = signed_request(auth_server.port, LIST_TABLES, {}, access_key="AKIDUNKNOWN",
                          secret=SECRET1)
    assert_error(resp, 400, UNRECOGNIZED, "The security token included in the request is invalid.")


def test_verify_mode_tampered_body(auth_server):
    resp = signed_request(auth_server.port, LIST_TABLES, {"Limit": 5}, access_key=KEY1,
                          secret=SECRET1, send_body=b'{"Limit":6}')
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


def test_verify_mode_tampered_target(auth_server):
    hdrs = sign_headers(auth_server.port, b"{}", {"Content-Type": JSON_10,
                                                  "X-Amz-Target": LIST_TABLES},
                        KEY1, SECRET1, "us-east-1")
    hdrs["X-Amz-Target"] = TARGET_PREFIX + "DescribeLimits"
    resp = http_request(auth_server.port, "POST", "/", body=b"{}", headers=hdrs)
    assert_error(resp, 400, INVALID_SIG, message_prefix=SIG_MISMATCH_PREFIX)


def test_verify_mode_date_20_minutes_old_is_expired(auth_server):
    when = datetime.datetime.utcnow() - datetime.timedelta(minutes=20)
    sent = when.strftime("%Y%m%dT%H%M%SZ")
    resp = signed_request(auth_server.port, LIST_TABLES, {}, access_key=KEY1, secret=SECRET1,
                          when=when)
    assert_error(resp, 400, INVALID_SIG, message_prefix="Signature expired:")
    m = re.match(r"^Signature expired: (\d{8}T\d{6}Z) is now earlier than (\d{8}T\d{6}Z) "
                 r"\((\d{8}T\d{6}Z) - 15 min\.\)$", resp.message)
    assert m, resp.message
    assert m.group(1) == sent
    earliest = datetime.datetime.strptime(m.group(2), "%Y%m%dT%H%M%SZ")
    now = datetime.datetime.strptime(m.group(3), "%Y%m%dT%H%M%SZ")
    assert now - earliest == datetime.timedelta(minutes=15)
    assert abs((now - datetime.datetime.utcnow()).total_seconds()) < 120


def test_verify_mode_date_10_minutes_old_is_accepted(auth_server):
    when = datetime.datetime.utcnow() - datetime.timedelta(minutes=10)
    resp = signed_request(auth_server.port, LIST_TABLES, {}, access_key=KEY1, secret=SECRET1,
                          when=when)
    assert resp.status == 200, resp


def test_verify_mode_bad_date_format(auth_server):
    hdrs = sign_headers(auth_server.port, b"{}", {"Content-Type": JSON_10,
                                                  "X-Amz-Target": LIST_TABLES},
                        KEY1, SECRET1, "us-east-1")
    hdrs["X-Amz-Date"] = "2024-01-01 00:00:00"
    resp = http_request(auth_server.port, "POST", "/", body=b"{}", headers=hdrs)
    assert_error(resp, 400, INCOMPLETE,
                 "Date must be in ISO-8601 'basic format'. Got '2024-01-01 00:00:00'. "
                 "See http://en.wikipedia.org/wiki/ISO_8601")


def test_verify_mode_data_ops_are_also_checked(auth_server):
    resp = signed_request(auth_server.port, TARGET_PREFIX + "GetItem",
                          {"TableName": "nope", "Key": {"pk": {"S": "a"}}},
                          access_key="AKIDUNKNOWN", secret="x")
    assert_error(resp, 400, UNRECOGNIZED, "The security token included in the request is invalid.")
