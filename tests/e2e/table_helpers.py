"""Request helpers shared by the control-plane tests in test_tables_create.py and
test_tables_manage.py."""

from kumo_testlib import (
    assert_not_found,
    unique_name,
)

INVALID = "One or more parameter values were invalid: "


def hash_ks(name="pk"):
    return [{"AttributeName": name, "KeyType": "HASH"}]


def attr(name, t="S"):
    return {"AttributeName": name, "AttributeType": t}


def create_body(name=None, **overrides):
    body = {
        "TableName": name or unique_name(),
        "KeySchema": hash_ks(),
        "AttributeDefinitions": [attr("pk")],
        "BillingMode": "PAY_PER_REQUEST",
    }
    for k, v in overrides.items():
        if v is None:
            body.pop(k, None)
        else:
            body[k] = v
    return body


def assert_table_absent(api, name):
    assert_not_found(api("DescribeTable", {"TableName": name}),
                     f"Requested resource not found: Table: {name} not found")
