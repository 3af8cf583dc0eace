"""Secondary indexes (contract §3.2 steps 4–7, §3.3, §3.4, §4, §6.2–6.5, §7.1, §2.5): LSIs and
GSIs with multi-attribute keys — CreateTable validation, index descriptions, index
maintenance on writes (type checks, empty values, sparseness, moves), Query and Scan on
indexes (key-condition rules, ordering component by component, paging, projections,
Select) and UpdateTable GlobalSecondaryIndexUpdates."""

import random
import re
import time

import pytest

from kumo_testlib import (
    COR_PREFIX,
    NS_DYNAMODB,
    assert_error,
    assert_validation,
    b64,
    create_table_args,
    normalize_item,
    table_arn,
    unique_name,
    wait_table_active,
)

INVALID = "One or more parameter values were invalid: "
LIMIT_EXCEEDED = NS_DYNAMODB + "LimitExceededException"
START_INVALID = "The provided starting key is invalid"
GSI_CONSISTENT = "Consistent reads are not supported on global secondary indexes"
FILTER_KEY = "Filter Expression can only contain non-primary key attributes: Primary key attribute: "
EMPTY_INDEX_S_PUT = ("One or more parameter values are not valid. A value specified for a secondary "
                     "index key is not supported. The AttributeValue for a key attribute cannot "
                     "contain an empty string value. IndexName: {idx}, IndexKey: {attr}")
EMPTY_INDEX_B_PUT = ("One or more parameter values are not valid. A value specified for a secondary "
                     "index key is not supported. The AttributeValue for a key attribute cannot "
                     "contain an empty binary value. IndexName: {idx}, IndexKey: {attr}")
EMPTY_INDEX_S_UPDATE = ("One or more parameter values are not valid. The update expression attempted "
                        "to update a secondary index key to a value that is not supported. The "
                        "AttributeValue for a key attribute cannot contain an empty string value.")
PPR_THROUGHPUT = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}


def S(x):
    return {"S": x}


def N(x):
    return {"N": str(x)}


def B(x):
    return {"B": b64(x)}


def ks(*elements):
    """ks("a", "b", "|", "c") → HASH a, HASH b, RANGE c."""
    out, kind = [], "HASH"
    for e in elements:
        if e == "|":
            kind = "RANGE"
            continue
        out.append({"AttributeName": e, "KeyType": kind})
    return out


def projection(ptype="ALL", nka=None):
    p = {"ProjectionType": ptype}
    if nka is not None:
        p["NonKeyAttributes"] = nka
    return p


def index(name, schema, ptype="ALL", nka=None, throughput=None):
    d = {"IndexName": name, "KeySchema": schema, "Projection": projection(ptype, nka)}
    if throughput is not None:
        d["ProvisionedThroughput"] = throughput
    return d


def defs(**types):
    return [{"AttributeName": k, "AttributeType": v} for k, v in types.items()]


def tp(r=5, w=5):
    return {"ReadCapacityUnits": r, "WriteCapacityUnits": w}


def create_expect_error(api, args):
    resp = api("CreateTable", args)
    if resp.status == 200:
        api("DeleteTable", {"TableName": args["TableName"]})
    return resp


def query_pages(api, body, limit=None):
    """Every page of a Query/Scan ("op" in body) → (items, pages)."""
    body = dict(body)
    op = body.pop("op", "Query")
    if limit is not None:
        body["Limit"] = limit
    items, pages = [], []
    start = None
    for _ in range(1000):
        if start is not None:
            body["ExclusiveStartKey"] = start
        page = api.ok(op, body)
        pages.append(page)
        items += page.get("Items", [])
        start = page.get("LastEvaluatedKey")
        if start is None:
            return items, pages
    raise AssertionError("paging did not end")


def wait_gsi(api, table, idx, timeout=10.0):
    """Waits for the table and the index to be ACTIVE; returns the index description."""
    deadline = time.monotonic() + timeout
    while True:
        t = api.ok("DescribeTable", {"TableName": table})["Table"]
        found = [g for g in t.get("GlobalSecondaryIndexes", []) if g["IndexName"] == idx]
        if t["TableStatus"] == "ACTIVE" and found and found[0]["IndexStatus"] == "ACTIVE":
            return found[0]
        assert time.monotonic() < deadline, f"index {idx} not ACTIVE: {t!r}"
        time.sleep(0.05)


def wait_gsi_gone(api, table, idx, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        t = api.ok("DescribeTable", {"TableName": table})["Table"]
        names = [g["IndexName"] for g in t.get("GlobalSecondaryIndexes", [])]
        if t["TableStatus"] == "ACTIVE" and idx not in names:
            return t
        assert time.monotonic() < deadline, f"index {idx} still present: {t!r}"
        time.sleep(0.05)


# =========================================================================== CreateTable


def base_args(indexes_gsi=None, indexes_lsi=None, range_key=("sk", "S"), attrs=None, **extra):
    name = unique_name("ix-bad")
    args = create_table_args(name, ("pk", "S"), range_key, **extra)
    if attrs is not None:
        args["AttributeDefinitions"] = args["AttributeDefinitions"] + defs(**attrs)
    if indexes_gsi is not None:
        args["GlobalSecondaryIndexes"] = indexes_gsi
    if indexes_lsi is not None:
        args["LocalSecondaryIndexes"] = indexes_lsi
    return args


GSI_SHAPE_CASES = [
    pytest.param(ks("|", "a"), "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                 id="range-only"),
    pytest.param(ks("|", "a", "b"),
                 "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                 id="two-range-only"),
    pytest.param([{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"},
                  {"AttributeName": "c", "KeyType": "HASH"}],
                 INVALID + "All HASH key attributes must precede RANGE key attributes in the KeySchema",
                 id="hash-after-range"),
    pytest.param(ks("a", "b", "c", "d", "e"),
                 INVALID + "The KeySchema exceeds the maximum allowed number of HASH key attributes",
                 id="five-hash"),
    pytest.param(ks("a", "|", "b", "c", "d", "e", "f"),
                 INVALID + "The KeySchema exceeds the maximum allowed number of RANGE key attributes",
                 id="five-range"),
    pytest.param(ks("a", "b", "|", "a"),
                 "The KeySchema contains multiple key attributes with the same name",
                 id="duplicate-multi"),
    pytest.param(ks("a", "|", "b", "c", "b"),
                 "The KeySchema contains multiple key attributes with the same name",
                 id="duplicate-range"),
    pytest.param(ks("a", "|", "a"),
                 "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                 id="duplicate-classic"),
]


@pytest.mark.parametrize("schema, message", GSI_SHAPE_CASES)
def test_create_gsi_key_schema_shape(api, schema, message):
    args = base_args([index("gx1", schema)],
                     attrs=dict(a="S", b="N", c="S", d="B", e="S", f="N"))
    # Only the attributes the schema uses may be defined (unused definitions are an error of
    # their own), so trim the definitions to the table key plus the index's attributes.
    used = {"pk", "sk"} | {e["AttributeName"] for e in schema}
    args["AttributeDefinitions"] = [d for d in args["AttributeDefinitions"]
                                    if d["AttributeName"] in used]
    assert_validation(create_expect_error(api, args), message)


def test_create_gsi_undefined_component(api):
    args = base_args([index("gx1", ks("a", "|", "zz"))], attrs=dict(a="S"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "Some index key attributes are not defined in AttributeDefinitions. "
                      "Keys: [a, zz], AttributeDefinitions: [pk, sk, a]")


def test_create_lsi_undefined_key(api):
    args = base_args(indexes_lsi=[index("lx1", ks("pk", "|", "zz"))])
    assert_validation(create_expect_error(api, args),
                      INVALID + "Some index key attributes are not defined in AttributeDefinitions. "
                      "Keys: [pk, zz], AttributeDefinitions: [pk, sk]")


def test_create_table_key_schema_three_elements_is_coral(api):
    args = create_table_args(unique_name("ix-bad"), ("pk", "S"), ("sk", "S"))
    args["KeySchema"].append({"AttributeName": "extra", "KeyType": "RANGE"})
    args["AttributeDefinitions"].append({"AttributeName": "extra", "AttributeType": "S"})
    assert_validation(create_expect_error(api, args),
                      COR_PREFIX + "Value '[KeySchemaElement(attributeName=pk, keyType=HASH), "
                      "KeySchemaElement(attributeName=sk, keyType=RANGE), "
                      "KeySchemaElement(attributeName=extra, keyType=RANGE)]' at 'keySchema' failed "
                      "to satisfy constraint: Member must have length less than or equal to 2")


def test_create_lsi_key_schema_three_elements_is_coral(api):
    args = base_args(indexes_lsi=[index("lx1", ks("pk", "|", "a", "b"))], attrs=dict(a="S", b="S"))
    assert_validation(create_expect_error(api, args),
                      COR_PREFIX + "Value '[KeySchemaElement(attributeName=pk, keyType=HASH), "
                      "KeySchemaElement(attributeName=a, keyType=RANGE), "
                      "KeySchemaElement(attributeName=b, keyType=RANGE)]' at "
                      "'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: "
                      "Member must have length less than or equal to 2")


def test_create_lsi_without_table_range_key(api):
    args = base_args(indexes_lsi=[index("lx1", ks("pk", "|", "a"))], range_key=None,
                     attrs=dict(a="S"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "Table KeySchema does not have a range key, which is required when "
                      "specifying a LocalSecondaryIndex")


def test_create_lsi_different_hash_key(api):
    args = base_args(indexes_lsi=[index("lx1", ks("a", "|", "b"))], attrs=dict(a="S", b="S"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "Index KeySchema does not have the same leading hash key as table "
                      "KeySchema for index: lx1. index hash key: a, table hash key: pk")


def test_create_lsi_missing_range_key(api):
    args = base_args(indexes_lsi=[index("lx1", ks("pk"))])
    assert_validation(create_expect_error(api, args),
                      INVALID + "Index KeySchema does not have a range key for index: lx1")


@pytest.mark.parametrize("schema, message", [
    pytest.param(ks("|", "a"), "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
                 id="first-not-hash"),
    pytest.param(ks("pk", "a"),
                 "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
                 id="second-not-range"),
    pytest.param(ks("pk", "|", "pk"),
                 "Both the Hash Key and the Range Key element in the KeySchema have the same name",
                 id="same-name"),
])
def test_create_lsi_key_schema_shape(api, schema, message):
    args = base_args(indexes_lsi=[index("lx1", schema)], attrs=dict(a="S"))
    if not any(e["AttributeName"] == "a" for e in schema):
        args["AttributeDefinitions"] = args["AttributeDefinitions"][:2]
    assert_validation(create_expect_error(api, args), message)


PROJECTION_CASES = [
    pytest.param({}, INVALID + "Unknown ProjectionType: null", id="type-missing"),
    pytest.param({"ProjectionType": "INCLUDE"},
                 INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
                 id="include-without-nka"),
    pytest.param({"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["x"]},
                 INVALID + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified",
                 id="keys-only-with-nka"),
    pytest.param({"ProjectionType": "ALL", "NonKeyAttributes": ["x"]},
                 INVALID + "ProjectionType is ALL, but NonKeyAttributes is specified",
                 id="all-with-nka"),
    pytest.param({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y", "x"]},
                 INVALID + "Duplicate element in NonKeyAttributes: x", id="duplicate-nka"),
]


@pytest.mark.parametrize("proj, message", PROJECTION_CASES)
@pytest.mark.parametrize("kind", ["gsi", "lsi"])
def test_create_index_projection_rules(api, kind, proj, message):
    if kind == "gsi":
        args = base_args([{"IndexName": "ix1", "KeySchema": ks("a", "|", "b"), "Projection": proj}],
                         attrs=dict(a="S", b="N"))
    else:
        args = base_args(indexes_lsi=[{"IndexName": "ix1", "KeySchema": ks("pk", "|", "a"),
                                       "Projection": proj}], attrs=dict(a="S"))
    assert_validation(create_expect_error(api, args), message)


def test_create_duplicate_gsi_name(api):
    args = base_args([index("dup", ks("a")), index("dup", ks("b"))], attrs=dict(a="S", b="S"))
    assert_validation(create_expect_error(api, args), INVALID + "Duplicate index name: dup")


def test_create_duplicate_lsi_name(api):
    args = base_args(indexes_lsi=[index("dup", ks("pk", "|", "a")), index("dup", ks("pk", "|", "b"))],
                     attrs=dict(a="S", b="S"))
    assert_validation(create_expect_error(api, args), INVALID + "Duplicate index name: dup")


def test_create_more_than_five_lsis(api):
    names = [f"r{i}" for i in range(6)]
    args = base_args(indexes_lsi=[index(f"lsi{i}", ks("pk", "|", n)) for i, n in enumerate(names)],
                     attrs={n: "S" for n in names})
    assert_validation(create_expect_error(api, args),
                      INVALID + "Number of LocalSecondaryIndexes exceeds per-table limit of 5")


def test_create_more_than_twenty_gsis(api):
    args = base_args([index(f"g{i:02d}", ks("a")) for i in range(21)], attrs=dict(a="S"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "GlobalSecondaryIndex count exceeds the per-table limit of 20")


def test_create_five_lsis_and_twenty_gsis_accepted(api, make_table):
    lsi_names = [f"r{i}" for i in range(5)]
    name = make_table(("pk", "S"), ("sk", "S"),
                      AttributeDefinitions=defs(pk="S", sk="S", a="S", **{n: "N" for n in lsi_names}),
                      LocalSecondaryIndexes=[index(f"lsi{i}", ks("pk", "|", n))
                                             for i, n in enumerate(lsi_names)],
                      GlobalSecondaryIndexes=[index(f"g{i:02d}", ks("a")) for i in range(20)])
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert len(t["LocalSecondaryIndexes"]) == 5
    assert len(t["GlobalSecondaryIndexes"]) == 20


def test_create_unused_attribute_definitions(api):
    args = base_args([index("gx1", ks("a"))], attrs=dict(a="S", unused="N"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "Some AttributeDefinitions are not used. AttributeDefinitions: "
                      "[pk, sk, a, unused], keys used: [pk, sk, a]")


def test_create_pay_per_request_with_index_throughput(api):
    args = base_args([index("gx1", ks("a"), throughput=tp())], attrs=dict(a="S"))
    assert_validation(create_expect_error(api, args),
                      INVALID + "ProvisionedThroughput should not be specified for index: gx1 when "
                      "BillingMode is PAY_PER_REQUEST")


def test_create_provisioned_without_index_throughput(api):
    args = base_args([index("gx1", ks("a"), throughput=tp()), index("gx2", ks("a"))],
                     attrs=dict(a="S"), ProvisionedThroughput=tp())
    assert_validation(create_expect_error(api, args),
                      INVALID + "ProvisionedThroughput is not specified for index: gx2")


def test_create_provisioned_with_index_throughput(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      ProvisionedThroughput=tp(3, 4),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"), throughput=tp(7, 8))])
    g = api.ok("DescribeTable", {"TableName": name})["Table"]["GlobalSecondaryIndexes"][0]
    assert g["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    assert g["ProvisionedThroughput"]["WriteCapacityUnits"] == 8


@pytest.mark.parametrize("member, message", [
    ("LocalSecondaryIndexes", INVALID + "List of LocalSecondaryIndexes is empty"),
    ("GlobalSecondaryIndexes", INVALID + "List of GlobalSecondaryIndexes is empty"),
])
def test_create_empty_index_list(api, member, message):
    args = base_args()
    args[member] = []
    assert_validation(create_expect_error(api, args), message)


def test_create_gsi_four_hash_four_range_accepted(api, make_table):
    schema = ks("h1", "h2", "h3", "h4", "|", "r1", "r2", "r3", "r4")
    name = make_table(("pk", "S"),
                      AttributeDefinitions=defs(pk="S", h1="S", h2="N", h3="B", h4="S",
                                                r1="N", r2="S", r3="B", r4="N"),
                      GlobalSecondaryIndexes=[index("wide", schema)])
    g = api.ok("DescribeTable", {"TableName": name})["Table"]["GlobalSecondaryIndexes"][0]
    assert g["KeySchema"] == schema


def test_create_gsi_may_reuse_table_key_and_swap_roles(api, make_table):
    # One attribute may be HASH in one GSI and RANGE in another; table keys may be components.
    name = make_table(("pk", "S"), ("sk", "N"),
                      AttributeDefinitions=defs(pk="S", sk="N", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a", "sk", "|", "pk")),
                                              index("gx2", ks("sk", "|", "a"))])
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("p"), "sk": N(1), "a": S("x")}})
    r = api.ok("Query", {"TableName": name, "IndexName": "gx1",
                         "KeyConditionExpression": "a = :a AND sk = :s AND pk = :p",
                         "ExpressionAttributeValues": {":a": S("x"), ":s": N(1), ":p": S("p")}})
    assert r["Count"] == 1


# =========================================================================== DescribeTable


def test_describe_index_descriptions(api, make_table):
    gsi_schema = ks("h1", "h2", "|", "r1", "r2")
    name = make_table(
        ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=defs(pk="S", sk="N", lsk="S", h1="S", h2="N", r1="S", r2="N", g="B"),
        LocalSecondaryIndexes=[index("lsi1", ks("pk", "|", "lsk"), "INCLUDE", ["x", "y"])],
        GlobalSecondaryIndexes=[index("gsi1", gsi_schema, "ALL"),
                                index("gsi2", ks("g"), "KEYS_ONLY"),
                                index("gsi3", ks("r2", "|", "h1"), "INCLUDE", ["x"])])
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    arn = table_arn(name)
    assert t["TableArn"] == arn
    lsis = {i["IndexName"]: i for i in t["LocalSecondaryIndexes"]}
    gsis = {i["IndexName"]: i for i in t["GlobalSecondaryIndexes"]}
    assert set(lsis) == {"lsi1"} and set(gsis) == {"gsi1", "gsi2", "gsi3"}

    lsi = lsis["lsi1"]
    assert lsi["KeySchema"] == ks("pk", "|", "lsk")
    assert lsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "y"]}
    assert "IndexStatus" not in lsi
    assert lsi["IndexArn"] == arn + "/index/lsi1"
    assert lsi["ItemCount"] == 0 and lsi["IndexSizeBytes"] == 0

    assert gsis["gsi1"]["KeySchema"] == gsi_schema
    assert gsis["gsi1"]["Projection"] == {"ProjectionType": "ALL"}
    assert gsis["gsi2"]["KeySchema"] == ks("g")
    assert gsis["gsi2"]["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert gsis["gsi3"]["KeySchema"] == ks("r2", "|", "h1")
    assert gsis["gsi3"]["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}
    for idx, g in gsis.items():
        assert g["IndexStatus"] == "ACTIVE"
        assert g["IndexArn"] == arn + "/index/" + idx
        assert g["ItemCount"] == 0 and g["IndexSizeBytes"] == 0
        assert g["ProvisionedThroughput"] == PPR_THROUGHPUT
        assert "Backfilling" not in g

    base = {"pk": S("p"), "x": S("xv"), "y": S("yv"), "z": S("zv")}
    items = [
        dict(base, sk=N(1), lsk=S("a"), h1=S("h"), h2=N(1), r1=S("r"), r2=N(2), g=B(b"\x01")),
        dict(base, sk=N(2), lsk=S("b"), h1=S("h"), h2=N(1), r1=S("r")),  # not in gsi1 (r2 missing)
        dict(base, sk=N(3), h1=S("h"), r2=N(5)),                            # gsi3 only
        dict(base, sk=N(4)),                                               # in no index
    ]
    for it in items:
        api.ok("PutItem", {"TableName": name, "Item": it})
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    counts = {i["IndexName"]: i["ItemCount"]
              for i in t["LocalSecondaryIndexes"] + t["GlobalSecondaryIndexes"]}
    assert counts == {"lsi1": 2, "gsi1": 1, "gsi2": 1, "gsi3": 2}
    assert t["ItemCount"] == 4
    for i in t["LocalSecondaryIndexes"] + t["GlobalSecondaryIndexes"]:
        assert isinstance(i["IndexSizeBytes"], int) and i["IndexSizeBytes"] > 0
    # Definitions are the merged table-wide set.
    assert {d["AttributeName"] for d in t["AttributeDefinitions"]} == {
        "pk", "sk", "lsk", "h1", "h2", "r1", "r2", "g"}

    api.ok("DeleteItem", {"TableName": name, "Key": {"pk": S("p"), "sk": N(1)}})
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    counts = {i["IndexName"]: i["ItemCount"]
              for i in t["LocalSecondaryIndexes"] + t["GlobalSecondaryIndexes"]}
    assert counts == {"lsi1": 1, "gsi1": 0, "gsi2": 0, "gsi3": 1}


def test_create_table_response_lists_indexes(api):
    name = unique_name("ix")
    args = create_table_args(name, ("pk", "S"), ("sk", "S"),
                             AttributeDefinitions=defs(pk="S", sk="S", a="S", b="N"),
                             LocalSecondaryIndexes=[index("lsx", ks("pk", "|", "a"), "KEYS_ONLY")],
                             GlobalSecondaryIndexes=[index("gsx", ks("a", "b"), "KEYS_ONLY")])
    try:
        d = api.ok("CreateTable", args)["TableDescription"]
        assert d["GlobalSecondaryIndexes"][0]["KeySchema"] == ks("a", "b")
        assert d["GlobalSecondaryIndexes"][0]["IndexStatus"] in ("CREATING", "ACTIVE")
        assert d["GlobalSecondaryIndexes"][0]["IndexArn"] == table_arn(name) + "/index/gsx"
        assert d["LocalSecondaryIndexes"][0]["KeySchema"] == ks("pk", "|", "a")
        assert "IndexStatus" not in d["LocalSecondaryIndexes"][0]
    finally:
        api("DeleteTable", {"TableName": name})


# =========================================================================== writes


@pytest.fixture
def wtable(make_table):
    """pk S / sk N; LSI lsi1 (pk | lsk S); GSI gsi1 (h1 S, h2 N | r1 S, r2 N); GSI gbin (bh B)."""
    return make_table(
        ("pk", "S"), ("sk", "N"),
        AttributeDefinitions=defs(pk="S", sk="N", lsk="S", h1="S", h2="N", r1="S", r2="N", bh="B"),
        LocalSecondaryIndexes=[index("lsi1", ks("pk", "|", "lsk"))],
        GlobalSecondaryIndexes=[index("gsi1", ks("h1", "h2", "|", "r1", "r2")),
                                index("gbin", ks("bh"), "KEYS_ONLY")])


def gsi1_entries(api, table):
    items, _ = query_pages(api, {"op": "Scan", "TableName": table, "IndexName": "gsi1"})
    return sorted((i["pk"]["S"], i["sk"]["N"], i["h1"]["S"], i["h2"]["N"], i["r1"]["S"], i["r2"]["N"])
                  for i in items)


def gsi1_query(api, table, h1, h2, r1=None, r2=None):
    kce = "h1 = :h1 AND h2 = :h2"
    vals = {":h1": S(h1), ":h2": N(h2)}
    if r1 is not None:
        kce += " AND r1 = :r1"
        vals[":r1"] = S(r1)
    if r2 is not None:
        kce += " AND r2 = :r2"
        vals[":r2"] = N(r2)
    return api.ok("Query", {"TableName": table, "IndexName": "gsi1", "KeyConditionExpression": kce,
                            "ExpressionAttributeValues": vals})["Items"]


FULL = {"pk": S("p"), "sk": N(1), "h1": S("h"), "h2": N(1), "r1": S("r"), "r2": N(2)}


@pytest.mark.parametrize("attr, value, expected, actual, idx", [
    ("h1", N(1), "S", "N", "gsi1"),
    ("h2", S("1"), "N", "S", "gsi1"),
    ("r1", B(b"r"), "S", "B", "gsi1"),
    ("r2", {"SS": ["a"]}, "N", "SS", "gsi1"),
    ("lsk", N(3), "S", "N", "lsi1"),
    ("bh", S("x"), "B", "S", "gbin"),
])
def test_put_index_key_type_mismatch(api, wtable, attr, value, expected, actual, idx):
    item = dict(FULL, **{attr: value})
    resp = api("PutItem", {"TableName": wtable, "Item": item})
    assert_validation(resp, INVALID + f"Type mismatch for Index Key {attr} Expected: {expected} "
                      f"Actual: {actual} IndexName: {idx}")
    assert "Item" not in api.ok("GetItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})


def test_put_type_mismatch_even_when_other_components_missing(api, wtable):
    # The type check applies to a present component even when the item would be sparse.
    resp = api("PutItem", {"TableName": wtable, "Item": {"pk": S("p"), "sk": N(1), "r2": S("x")}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key r2 Expected: N Actual: S "
                      "IndexName: gsi1")


@pytest.mark.parametrize("attr, value, expected, actual, idx", [
    ("h2", S("x"), "N", "S", "gsi1"),
    ("r1", N(5), "S", "N", "gsi1"),
    ("lsk", B(b"x"), "S", "B", "lsi1"),
])
def test_update_index_key_type_mismatch(api, wtable, attr, value, expected, actual, idx):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    resp = api("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": value}})
    assert_validation(resp, INVALID + f"Type mismatch for Index Key {attr} Expected: {expected} "
                      f"Actual: {actual} IndexName: {idx}")
    got = api.ok("GetItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})["Item"]
    assert normalize_item(got) == normalize_item(FULL)


def test_batch_write_index_key_type_mismatch_rejects_whole_batch(api, wtable):
    good = dict(FULL, sk=N(7))
    bad = dict(FULL, sk=N(8), h2=S("oops"))
    resp = api("BatchWriteItem", {"RequestItems": {wtable: [{"PutRequest": {"Item": good}},
                                                             {"PutRequest": {"Item": bad}}]}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key h2 Expected: N Actual: S "
                      "IndexName: gsi1")
    assert api.ok("Scan", {"TableName": wtable})["Count"] == 0


@pytest.mark.parametrize("attr, value, message", [
    ("r1", S(""), EMPTY_INDEX_S_PUT.format(idx="gsi1", attr="r1")),
    ("h1", S(""), EMPTY_INDEX_S_PUT.format(idx="gsi1", attr="h1")),
    ("lsk", S(""), EMPTY_INDEX_S_PUT.format(idx="lsi1", attr="lsk")),
    ("bh", B(b""), EMPTY_INDEX_B_PUT.format(idx="gbin", attr="bh")),
])
def test_put_empty_index_key(api, wtable, attr, value, message):
    resp = api("PutItem", {"TableName": wtable, "Item": dict(FULL, **{attr: value})})
    assert_validation(resp, message)


@pytest.mark.parametrize("attr", ["r1", "h1", "lsk"])
def test_update_empty_index_key(api, wtable, attr):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    resp = api("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": S("")}})
    assert_validation(resp, EMPTY_INDEX_S_UPDATE)


def test_sparse_items_absent_from_index(api, wtable):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    for i, missing in enumerate(["h1", "h2", "r1", "r2"]):
        item = {k: v for k, v in FULL.items() if k != missing}
        item["sk"] = N(10 + i)
        api.ok("PutItem", {"TableName": wtable, "Item": item})
    assert gsi1_entries(api, wtable) == [("p", "1", "h", "1", "r", "2")]
    assert [i["sk"]["N"] for i in gsi1_query(api, wtable, "h", 1)] == ["1"]
    # Not in the LSI either: no item has lsk.
    r = api.ok("Query", {"TableName": wtable, "IndexName": "lsi1",
                         "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("p")}})
    assert r["Count"] == 0 and r["Items"] == []


@pytest.mark.parametrize("how", ["update", "put"])
@pytest.mark.parametrize("attr, new", [("h1", S("h2")), ("h2", N(-4)), ("r1", S("q")),
                                       ("r2", N("2.5"))])
def test_changing_a_component_moves_the_entry(api, wtable, how, attr, new):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    if how == "update":
        api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                              "UpdateExpression": "SET #a = :v",
                              "ExpressionAttributeNames": {"#a": attr},
                              "ExpressionAttributeValues": {":v": new}})
    else:
        api.ok("PutItem", {"TableName": wtable, "Item": dict(FULL, **{attr: new})})
    moved = {k: v for k, v in dict(FULL, **{attr: new}).items()}
    assert gsi1_query(api, wtable, "h", 1, "r", 2) == []
    got = gsi1_query(api, wtable, moved["h1"]["S"], moved["h2"]["N"], moved["r1"]["S"],
                     moved["r2"]["N"])
    assert [normalize_item(i) for i in got] == [normalize_item(moved)]
    (entry,) = gsi1_entries(api, wtable)
    assert entry == ("p", "1", moved["h1"]["S"], moved["h2"]["N"], moved["r1"]["S"],
                     moved["r2"]["N"])


def test_update_non_key_attribute_updates_projection(api, wtable):
    api.ok("PutItem", {"TableName": wtable, "Item": dict(FULL, lsk=S("l"))})
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "SET extra = :v",
                          "ExpressionAttributeValues": {":v": S("new")}})
    (g,) = gsi1_query(api, wtable, "h", 1)
    assert g["extra"] == S("new")
    (l,) = api.ok("Query", {"TableName": wtable, "IndexName": "lsi1",
                            "KeyConditionExpression": "pk = :p",
                            "ExpressionAttributeValues": {":p": S("p")}})["Items"]
    assert l["extra"] == S("new")


@pytest.mark.parametrize("attr", ["h1", "h2", "r1", "r2"])
def test_removing_a_component_removes_the_entry(api, wtable, attr):
    api.ok("PutItem", {"TableName": wtable, "Item": FULL})
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "REMOVE #a", "ExpressionAttributeNames": {"#a": attr}})
    assert gsi1_entries(api, wtable) == []
    t = api.ok("DescribeTable", {"TableName": wtable})["Table"]
    assert [g["ItemCount"] for g in t["GlobalSecondaryIndexes"] if g["IndexName"] == "gsi1"] == [0]
    # Adding it back re-indexes.
    api.ok("UpdateItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)},
                          "UpdateExpression": "SET #a = :v", "ExpressionAttributeNames": {"#a": attr},
                          "ExpressionAttributeValues": {":v": FULL[attr]}})
    assert gsi1_entries(api, wtable) == [("p", "1", "h", "1", "r", "2")]


def test_deleting_the_item_removes_entries(api, wtable):
    item = dict(FULL, lsk=S("l"), bh=B(b"\x07"))
    api.ok("PutItem", {"TableName": wtable, "Item": item})
    api.ok("PutItem", {"TableName": wtable, "Item": dict(item, sk=N(2))})
    api.ok("DeleteItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(1)}})
    assert gsi1_entries(api, wtable) == [("p", "2", "h", "1", "r", "2")]
    for idx in ("lsi1", "gbin"):
        items, _ = query_pages(api, {"op": "Scan", "TableName": wtable, "IndexName": idx})
        assert [i["sk"] for i in items] == [N(2)], idx
    api.ok("DeleteItem", {"TableName": wtable, "Key": {"pk": S("p"), "sk": N(2)}})
    for idx in ("lsi1", "gbin", "gsi1"):
        assert api.ok("Scan", {"TableName": wtable, "IndexName": idx})["Count"] == 0
    t = api.ok("DescribeTable", {"TableName": wtable})["Table"]
    for i in t["LocalSecondaryIndexes"] + t["GlobalSecondaryIndexes"]:
        assert i["ItemCount"] == 0, i["IndexName"]


def test_transact_write_maintains_index(api, wtable):
    api.ok("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": wtable, "Item": FULL}},
        {"Put": {"TableName": wtable, "Item": dict(FULL, sk=N(2), r2=N(-1))}},
    ]})
    assert [i["sk"]["N"] for i in gsi1_query(api, wtable, "h", 1)] == ["2", "1"]


# =========================================================================== Query (GSI, LSI)

# Table pk S / sk N. GSI "mix": HASH tenant S, rgn N | RANGE cat S, score N (ALL).
# GSI "keyso": same key, KEYS_ONLY. GSI "incg": HASH tenant | RANGE score, INCLUDE [inc].
# GSI "deep": HASH tenant | RANGE ra S, rb N, rc S, rd N (for key-condition rule errors).
# LSI "bylsk": pk | lsk N, INCLUDE [inc].
MIX_KEY = ["tenant", "rgn", "cat", "score"]
TABLE_KEY = ["pk", "sk"]

# The (t1, 1) partition of "mix", in DynamoDB's order: cat by UTF-8 bytes, then score
# numerically, then (tie) by the table key.
P_ROWS = [
    ("i10", 1, "B", "5"),
    ("i01", 1, "a", "-10"),
    ("i02", 1, "a", "-1.5"),
    ("i13", 1, "a", "-1"),
    ("i03", 1, "a", "0"),
    ("i04", 1, "a", "2"),
    ("i05", 1, "a", "10"),
    ("i06", 1, "ab", "-100"),
    ("i07", 1, "b", "-3"),
    ("i08", 1, "b", "7"),
    ("i08", 2, "b", "7"),
    ("i09", 1, "b", "7"),
    ("i14", 1, "b", "70"),
    ("i11", 1, "c", "-0.5"),
    ("i12", 1, "c", "100"),
]


def _mix_items():
    items = []
    for pk, sk, cat, score in P_ROWS:
        items.append({"pk": S(pk), "sk": N(sk), "tenant": S("t1"), "rgn": N(1), "cat": S(cat),
                      "score": N(score), "inc": S("inc-" + pk), "misc": S("o")})
    # Other composite partitions.
    items += [
        {"pk": S("d1"), "sk": N(1), "tenant": S("t1"), "rgn": N(2), "cat": S("a"), "score": N(0)},
        {"pk": S("d2"), "sk": N(1), "tenant": S("t2"), "rgn": N(1), "cat": S("a"), "score": N(0)},
        {"pk": S("d3"), "sk": N(1), "tenant": S("t1"), "rgn": N(-1), "cat": S("a"),
         "score": N(1)},
        {"pk": S("d4"), "sk": N(1), "tenant": S("t"), "rgn": N(11), "cat": S("a"),
         "score": N(1)},
    ]
    # Sparse in the (t1, 1) partition of "mix" (missing cat or score).
    items += [
        {"pk": S("s1"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "cat": S("a")},
        {"pk": S("s2"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "score": N(0)},
    ]
    # LSI partition "L": lsk order with a tie (sk breaks it) and one item without lsk.
    for sk, lsk in [(1, "5"), (2, "-2"), (3, "5"), (4, "0"), (5, "3.5"), (6, None), (7, "-20")]:
        it = {"pk": S("L"), "sk": N(sk), "inc": S(f"inc{sk}"), "misc": S(f"misc{sk}")}
        if lsk is not None:
            it["lsk"] = N(lsk)
        items.append(it)
    return items


MIX_ITEMS = _mix_items()
P_ORDER = [(pk, str(sk)) for pk, sk, _, _ in P_ROWS]


@pytest.fixture(scope="module")
def _qstate(server):
    state = {"generation": None, "name": None}
    yield state
    if state["name"]:
        server.api()("DeleteTable", {"TableName": state["name"]})


@pytest.fixture
def qt(server, api, _qstate):
    """The loaded module-wide query table (rebuilt if the shared server was restarted)."""
    if _qstate["generation"] != server.generation or _qstate["name"] is None:
        name = unique_name("ix-q")
        args = create_table_args(
            name, ("pk", "S"), ("sk", "N"),
            AttributeDefinitions=defs(pk="S", sk="N", tenant="S", rgn="N", cat="S", score="N",
                                      lsk="N", ra="S", rb="N", rc="S", rd="N"),
            LocalSecondaryIndexes=[index("bylsk", ks("pk", "|", "lsk"), "INCLUDE", ["inc"])],
            GlobalSecondaryIndexes=[
                index("mix", ks("tenant", "rgn", "|", "cat", "score")),
                index("keyso", ks("tenant", "rgn", "|", "cat", "score"), "KEYS_ONLY"),
                index("incg", ks("tenant", "|", "score"), "INCLUDE", ["inc"]),
                index("deep", ks("tenant", "|", "ra", "rb", "rc", "rd")),
            ])
        api.ok("CreateTable", args)
        wait_table_active(server.client(), name)
        shuffled = list(MIX_ITEMS)
        random.Random(7).shuffle(shuffled)
        for it in shuffled:
            api.ok("PutItem", {"TableName": name, "Item": it})
        _qstate.update(generation=server.generation, name=name)
    return _qstate["name"]


def item_by_key(pk, sk):
    for it in MIX_ITEMS:
        if it["pk"]["S"] == pk and it["sk"]["N"] == str(sk):
            return it
    raise KeyError((pk, sk))


def keys_of(items):
    return [(i["pk"]["S"], i["sk"]["N"]) for i in items]


def mix_query(api, qt, kce, values=None, names=None, index_name="mix", **extra):
    vals = {":t": S("t1"), ":r": N(1)}
    vals.update(values or {})
    body = {"TableName": qt, "IndexName": index_name, "KeyConditionExpression": kce}
    body.update(extra)
    text = kce + " " + body.get("FilterExpression", "")

    def used(k):
        return re.search(re.escape(k) + r"(?![A-Za-z0-9_])", text) is not None

    body["ExpressionAttributeValues"] = {k: v for k, v in vals.items() if used(k)}
    if names:
        body["ExpressionAttributeNames"] = {k: v for k, v in names.items() if used(k)}
    return body


def P_where(pred):
    return [(pk, str(sk)) for pk, sk, cat, score in P_ROWS if pred(cat, float(score))]


HASH = "tenant = :t AND rgn = :r"


@pytest.mark.parametrize("cond, values, expected", [
    ("", {}, P_where(lambda c, s: True)),
    (" AND cat = :c", {":c": S("b")}, P_where(lambda c, s: c == "b")),
    (" AND cat > :c", {":c": S("a")}, P_where(lambda c, s: c > "a")),
    (" AND cat <= :c", {":c": S("ab")}, P_where(lambda c, s: c <= "ab")),
    (" AND begins_with(cat, :c)", {":c": S("a")}, P_where(lambda c, s: c.startswith("a"))),
    (" AND cat BETWEEN :c1 AND :c2", {":c1": S("ab"), ":c2": S("b")},
     P_where(lambda c, s: "ab" <= c <= "b")),
    (" AND cat = :c AND score = :s", {":c": S("b"), ":s": N(7)},
     P_where(lambda c, s: c == "b" and s == 7)),
    (" AND cat = :c AND score > :s", {":c": S("a"), ":s": N("-1.5")},
     P_where(lambda c, s: c == "a" and s > -1.5)),
    (" AND cat = :c AND score >= :s", {":c": S("a"), ":s": N("-1.5")},
     P_where(lambda c, s: c == "a" and s >= -1.5)),
    (" AND cat = :c AND score < :s", {":c": S("a"), ":s": N(0)},
     P_where(lambda c, s: c == "a" and s < 0)),
    (" AND cat = :c AND score <= :s", {":c": S("a"), ":s": N(-1)},
     P_where(lambda c, s: c == "a" and s <= -1)),
    (" AND cat = :c AND score BETWEEN :s1 AND :s2", {":c": S("a"), ":s1": N(-2), ":s2": N(2)},
     P_where(lambda c, s: c == "a" and -2 <= s <= 2)),
    (" AND cat = :c AND score BETWEEN :s1 AND :s2", {":c": S("b"), ":s1": N(7), ":s2": N(7)},
     P_where(lambda c, s: c == "b" and s == 7)),
])
@pytest.mark.parametrize("forward", [True, False])
def test_gsi_query_conditions_and_order(api, qt, cond, values, expected, forward):
    body = mix_query(api, qt, HASH + cond, values, ScanIndexForward=forward)
    r = api.ok("Query", body)
    want = expected if forward else list(reversed(expected))
    assert keys_of(r["Items"]) == want
    assert r["Count"] == len(want) and r["ScannedCount"] == len(want)
    assert "LastEvaluatedKey" not in r
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, sk)) for pk, sk in want]


@pytest.mark.parametrize("kce", [
    "rgn = :r AND tenant = :t",
    "score > :s AND cat = :c AND rgn = :r AND tenant = :t",
    "cat = :c AND tenant = :t AND score > :s AND rgn = :r",
    "(tenant = :t) AND (rgn = :r) AND (cat = :c) AND (score > :s)",
    "#t = :t AND #r = :r AND #c = :c AND #s > :s",
    ":t = tenant AND :r = rgn AND :c = cat AND :s < score",
])
def test_gsi_query_clause_order_irrelevant(api, qt, kce):
    names = {k: v for k, v in {"#t": "tenant", "#r": "rgn", "#c": "cat", "#s": "score"}.items()
             if k in kce}
    values = {k: v for k, v in {":c": S("a"), ":s": N(-1)}.items() if k in kce}
    r = api.ok("Query", mix_query(api, qt, kce, values, names or None))
    if ":c" in kce:
        assert keys_of(r["Items"]) == P_where(lambda c, s: c == "a" and s > -1)
    else:
        assert keys_of(r["Items"]) == P_ORDER


def test_gsi_query_other_partitions(api, qt):
    for t, reg, want in [("t1", 2, [("d1", "1")]), ("t2", 1, [("d2", "1")]),
                         ("t1", -1, [("d3", "1")]), ("t", 11, [("d4", "1")]), ("t1", 3, [])]:
        r = api.ok("Query", mix_query(api, qt, HASH, {":t": S(t), ":r": N(reg)}))
        assert keys_of(r["Items"]) == want, (t, reg)


def test_gsi_query_number_component_forms_equal(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH + " AND cat = :c AND score = :s",
                                  {":r": N("1.0E0"), ":c": S("a"), ":s": N("-1.50")}))
    assert keys_of(r["Items"]) == [("i02", "1")]


def test_gsi_query_legacy_key_conditions(api, qt):
    conds = {
        "tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]},
        "rgn": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
        "cat": {"ComparisonOperator": "EQ", "AttributeValueList": [S("a")]},
        "score": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [N(-1.5), N(2)]},
    }
    r = api.ok("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    assert keys_of(r["Items"]) == P_where(lambda c, s: c == "a" and -1.5 <= s <= 2)
    conds2 = {k: conds[k] for k in ("tenant", "rgn")}
    conds2["cat"] = {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [S("a")]}
    r = api.ok("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds2,
                         "ScanIndexForward": False})
    assert keys_of(r["Items"]) == list(reversed(P_where(lambda c, s: c.startswith("a"))))


def test_gsi_query_legacy_key_conditions_gap(api, qt):
    conds = {
        "tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]},
        "rgn": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
        "score": {"ComparisonOperator": "EQ", "AttributeValueList": [N(1)]},
    }
    resp = api("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    assert_validation(resp, "RANGE key attributes cat must have equality conditions specified in "
                      "the query because a condition is present on key attribute score")


def test_gsi_query_legacy_missing_hash(api, qt):
    conds = {"tenant": {"ComparisonOperator": "EQ", "AttributeValueList": [S("t1")]}}
    resp = api("Query", {"TableName": qt, "IndexName": "mix", "KeyConditions": conds})
    # [open] exact wording: the text names HASH and equality.
    assert_validation(resp)
    assert "HASH" in resp.message and "equality" in resp.message, resp.message


@pytest.mark.parametrize("kce, values", [
    ("tenant = :t", {}),
    ("rgn = :r", {}),
    ("tenant = :t AND cat = :c", {":c": S("a")}),
    ("tenant = :t AND rgn > :r", {}),
    ("tenant = :t AND rgn BETWEEN :r AND :r2", {":r2": N(5)}),
    ("begins_with(tenant, :t) AND rgn = :r", {}),
    ("tenant < :t AND rgn = :r AND cat = :c", {":c": S("a")}),
])
def test_gsi_query_hash_components_need_equality(api, qt, kce, values):
    resp = api("Query", mix_query(api, qt, kce, values))
    # [open] exact wording: the text names HASH and equality.
    assert_validation(resp)
    assert "HASH" in resp.message and "equality" in resp.message, resp.message


def rng_msg(a, b):
    return (f"RANGE key attributes {a} must have equality conditions specified in the query "
            f"because a condition is present on key attribute {b}")


@pytest.mark.parametrize("index_name, kce, values, message", [
    ("mix", HASH + " AND score = :s", {":s": N(1)}, rng_msg("cat", "score")),
    ("mix", HASH + " AND score > :s", {":s": N(1)}, rng_msg("cat", "score")),
    ("mix", HASH + " AND cat > :c AND score = :s", {":c": S("a"), ":s": N(1)},
     rng_msg("cat", "score")),
    ("mix", HASH + " AND begins_with(cat, :c) AND score = :s", {":c": S("a"), ":s": N(1)},
     rng_msg("cat", "score")),
    ("mix", HASH + " AND cat BETWEEN :c AND :c2 AND score <= :s",
     {":c": S("a"), ":c2": S("b"), ":s": N(1)}, rng_msg("cat", "score")),
    ("deep", "tenant = :t AND ra = :a AND rc = :c", {":a": S("x"), ":c": S("y")},
     rng_msg("rb", "rc")),
    ("deep", "tenant = :t AND ra = :a AND rb > :b AND rc = :c",
     {":a": S("x"), ":b": N(1), ":c": S("y")}, rng_msg("rb", "rc")),
    ("deep", "tenant = :t AND rb = :b", {":b": N(1)}, rng_msg("ra", "rb")),
    ("deep", "tenant = :t AND ra = :a AND rb = :b AND rd = :d",
     {":a": S("x"), ":b": N(1), ":d": N(2)}, rng_msg("rc", "rd")),
])
def test_gsi_query_range_prefix_rules(api, qt, index_name, kce, values, message):
    vals = dict(values)
    if index_name == "deep":
        body = {"TableName": qt, "IndexName": "deep", "KeyConditionExpression": kce,
                "ExpressionAttributeValues": dict({":t": S("t1")}, **vals)}
    else:
        body = mix_query(api, qt, kce, vals)
    assert_validation(api("Query", body), message)


def test_gsi_query_two_range_operators(api, qt):
    resp = api("Query", mix_query(api, qt, HASH + " AND cat > :c AND score > :s",
                                  {":c": S("a"), ":s": N(1)}))
    # [open] exact wording: probably the same sentence naming cat and score.
    assert_validation(resp)
    assert re.search("RANGE.*equality", resp.message), resp.message


def test_gsi_query_deep_prefixes_accepted(api, qt):
    for kce, vals in [
        ("tenant = :t AND ra = :a AND rb = :b AND rc = :c AND rd > :d",
         {":a": S("x"), ":b": N(1), ":c": S("y"), ":d": N(0)}),
        ("tenant = :t AND ra = :a AND rb = :b AND begins_with(rc, :c)",
         {":a": S("x"), ":b": N(1), ":c": S("y")}),
        ("tenant = :t AND ra BETWEEN :a AND :b", {":a": S("x"), ":b": S("y")}),
    ]:
        r = api.ok("Query", {"TableName": qt, "IndexName": "deep", "KeyConditionExpression": kce,
                             "ExpressionAttributeValues": dict({":t": S("t1")}, **vals)})
        assert r["Count"] == 0 and r["Items"] == []


def test_gsi_query_component_value_type_mismatch(api, qt):
    resp = api("Query", mix_query(api, qt, HASH, {":r": S("1")}))
    assert_validation(resp, INVALID + "Condition parameter type does not match schema type")
    resp = api("Query", mix_query(api, qt, HASH + " AND cat = :c", {":c": N(1)}))
    assert_validation(resp, INVALID + "Condition parameter type does not match schema type")


@pytest.mark.parametrize("attr", ["tenant", "rgn", "cat", "score"])
def test_gsi_query_filter_on_index_component(api, qt, attr):
    body = mix_query(api, qt, HASH, {":x": S("zz")}, {"#a": attr},
                     FilterExpression="#a <> :x")
    assert_validation(api("Query", body), FILTER_KEY + attr)


def test_gsi_query_filter_on_table_key_allowed(api, qt):
    body = mix_query(api, qt, HASH, {":p": S("i08")}, FilterExpression="pk = :p")
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == [("i08", "1"), ("i08", "2")]
    assert r["Count"] == 2 and r["ScannedCount"] == len(P_ROWS)


def test_gsi_query_consistent_read(api, qt):
    assert_validation(api("Query", mix_query(api, qt, HASH, ConsistentRead=True)), GSI_CONSISTENT)
    assert api.ok("Query", mix_query(api, qt, HASH, ConsistentRead=False))["Count"] == len(P_ROWS)


def test_gsi_scan_consistent_read(api, qt):
    assert_validation(api("Scan", {"TableName": qt, "IndexName": "mix", "ConsistentRead": True}),
                      GSI_CONSISTENT)


def test_unknown_index(api, qt):
    assert_validation(api("Query", mix_query(api, qt, HASH, index_name="nope")),
                      "The table does not have the specified index: nope")
    assert_validation(api("Scan", {"TableName": qt, "IndexName": "nope"}),
                      "The table does not have the specified index: nope")


@pytest.mark.parametrize("limit", [1, 2, 4, 5, 15, 16])
@pytest.mark.parametrize("forward", [True, False])
def test_gsi_query_paging(api, qt, limit, forward):
    items, pages = query_pages(api, mix_query(api, qt, HASH, ScanIndexForward=forward), limit)
    want = P_ORDER if forward else list(reversed(P_ORDER))
    assert keys_of(items) == want
    for p in pages:
        assert p["Count"] <= limit
        if "LastEvaluatedKey" in p:
            lek = p["LastEvaluatedKey"]
            assert set(lek) == set(MIX_KEY + TABLE_KEY)
            last = p["Items"][-1]
            assert lek == {k: last[k] for k in MIX_KEY + TABLE_KEY}
    # Full pages until the end (no look-ahead: a page that ends exactly on the last entry
    # may still carry a LastEvaluatedKey).
    assert all(p["Count"] == limit for p in pages[:-1])


def test_gsi_query_paging_with_range_condition(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c AND score > :s", {":c": S("a"), ":s": N(-5)})
    items, pages = query_pages(api, body, 2)
    assert keys_of(items) == P_where(lambda c, s: c == "a" and s > -5)
    assert len(pages) >= 2


def test_gsi_query_paging_through_ties(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c AND score = :s", {":c": S("b"), ":s": N(7)})
    items, pages = query_pages(api, body, 1)
    assert keys_of(items) == [("i08", "1"), ("i08", "2"), ("i09", "1")]
    assert pages[0]["LastEvaluatedKey"] == {"pk": S("i08"), "sk": N(1), "tenant": S("t1"),
                                            "rgn": N(1), "cat": S("b"), "score": N(7)}


def test_gsi_query_exclusive_start_key_not_existing(api, qt):
    # Resumes strictly after the position, even if nothing is stored there.
    start = {"pk": S("i00"), "sk": N(0), "tenant": S("t1"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    r = api.ok("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start))
    assert keys_of(r["Items"]) == P_ORDER[P_ORDER.index(("i03", "1")):]


@pytest.mark.parametrize("drop, add", [
    ("score", None), ("cat", None), ("rgn", None), ("tenant", None), ("sk", None),
    ("pk", None), (None, "misc"),
])
def test_gsi_query_bad_exclusive_start_key(api, qt, drop, add):
    start = {"pk": S("i03"), "sk": N(1), "tenant": S("t1"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    if drop:
        del start[drop]
    if add:
        start[add] = S("x")
    resp = api("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start))
    assert_validation(resp, START_INVALID)


def test_gsi_query_exclusive_start_key_outside_partition(api, qt):
    start = {"pk": S("d2"), "sk": N(1), "tenant": S("t2"), "rgn": N(1), "cat": S("a"),
             "score": N(0)}
    assert_validation(api("Query", mix_query(api, qt, HASH, ExclusiveStartKey=start)),
                      "The provided starting key is outside query boundaries based on provided "
                      "conditions")


def test_gsi_query_boto3_paginator(ddb, qt):
    pages = ddb.get_paginator("query").paginate(
        TableName=qt, IndexName="mix", KeyConditionExpression="tenant = :t AND #r = :r",
        ExpressionAttributeNames={"#r": "rgn"},
        ExpressionAttributeValues={":t": {"S": "t1"}, ":r": {"N": "1"}},
        PaginationConfig={"PageSize": 4})
    items = [i for p in pages for i in p["Items"]]
    assert keys_of(items) == P_ORDER


def test_gsi_keys_only_projection(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, index_name="keyso"))
    assert keys_of(r["Items"]) == P_ORDER
    for it in r["Items"]:
        assert set(it) == set(MIX_KEY + TABLE_KEY)
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in MIX_KEY + TABLE_KEY}
    r2 = api.ok("Query", mix_query(api, qt, HASH, index_name="keyso",
                                   Select="ALL_PROJECTED_ATTRIBUTES"))
    assert r2["Items"] == r["Items"]


@pytest.mark.parametrize("index_name", ["keyso", "incg"])
def test_gsi_select_all_attributes_not_all_projection(api, qt, index_name):
    kce = HASH if index_name == "keyso" else "tenant = :t"
    body = mix_query(api, qt, kce, index_name=index_name, Select="ALL_ATTRIBUTES")
    assert_validation(api("Query", body),
                      INVALID + f"Select type ALL_ATTRIBUTES is not supported for global secondary "
                      f"index {index_name} because its projection type is not ALL")
    assert_validation(api("Scan", {"TableName": qt, "IndexName": index_name,
                                   "Select": "ALL_ATTRIBUTES"}),
                      INVALID + f"Select type ALL_ATTRIBUTES is not supported for global secondary "
                      f"index {index_name} because its projection type is not ALL")


def test_gsi_select_all_attributes_on_all_projection(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, Select="ALL_ATTRIBUTES"))
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, sk)) for pk, sk in P_ORDER]


def test_gsi_include_projection(api, qt):
    body = {"TableName": qt, "IndexName": "incg", "KeyConditionExpression": "tenant = :t",
            "ExpressionAttributeValues": {":t": S("t1")}}
    r = api.ok("Query", body)
    # tenant t1 with a score: the P rows, s2 and d1, d3 — ordered by score, then table key.
    rows = [(pk, str(sk), float(score)) for pk, sk, _, score in P_ROWS]
    rows += [("s2", "1", 0.0), ("d1", "1", 0.0), ("d3", "1", 1.0)]
    want = [(pk, sk) for pk, sk, _ in sorted(rows, key=lambda r: (r[2], r[0], int(r[1])))]
    assert keys_of(r["Items"]) == want
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        expected = {k: full[k] for k in ("pk", "sk", "tenant", "score", "inc") if k in full}
        assert it == expected
    # A projection naming unprojected attributes: they are simply absent on a GSI.
    r = api.ok("Query", dict(body, ProjectionExpression="pk, sk, misc, inc"))
    assert keys_of(r["Items"]) == want
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in ("pk", "sk", "inc") if k in full}


def test_gsi_select_count(api, qt):
    r = api.ok("Query", mix_query(api, qt, HASH, Select="COUNT"))
    assert "Items" not in r
    assert r["Count"] == len(P_ROWS) and r["ScannedCount"] == len(P_ROWS)


def test_gsi_query_filter_on_non_key(api, qt):
    body = mix_query(api, qt, HASH + " AND cat = :c", {":c": S("a"), ":i": S("inc-i03")},
                     FilterExpression="inc <> :i")
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == [k for k in P_where(lambda c, s: c == "a") if k != ("i03", "1")]
    assert r["ScannedCount"] == r["Count"] + 1


LSI_ORDER = [("L", "7"), ("L", "2"), ("L", "4"), ("L", "5"), ("L", "1"), ("L", "3")]


@pytest.mark.parametrize("forward", [True, False])
def test_lsi_query_order(api, qt, forward):
    body = {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("L")}, "ScanIndexForward": forward}
    r = api.ok("Query", body)
    want = LSI_ORDER if forward else list(reversed(LSI_ORDER))
    assert keys_of(r["Items"]) == want
    # Default Select on an index: the projection (table key, index key, INCLUDE attributes).
    for it in r["Items"]:
        full = item_by_key(it["pk"]["S"], it["sk"]["N"])
        assert it == {k: full[k] for k in ("pk", "sk", "lsk", "inc")}


def test_lsi_query_range_condition_and_paging(api, qt):
    body = {"TableName": qt, "IndexName": "bylsk",
            "KeyConditionExpression": "pk = :p AND lsk BETWEEN :a AND :b",
            "ExpressionAttributeValues": {":p": S("L"), ":a": N(-2), ":b": N(5)}}
    items, pages = query_pages(api, body, 2)
    assert keys_of(items) == LSI_ORDER[1:]
    lek = pages[0]["LastEvaluatedKey"]
    assert lek == {"pk": S("L"), "sk": N(4), "lsk": N(0)}


def test_lsi_select_all_attributes_fetches_from_table(api, qt):
    body = {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": S("L")}, "Select": "ALL_ATTRIBUTES"}
    r = api.ok("Query", body)
    assert keys_of(r["Items"]) == LSI_ORDER
    assert [normalize_item(i) for i in r["Items"]] == [
        normalize_item(item_by_key(pk, int(sk))) for pk, sk in LSI_ORDER]
    # A projection naming an unprojected attribute fetches it too.
    del body["Select"]
    r = api.ok("Query", dict(body, ProjectionExpression="sk, misc"))
    assert r["Items"] == [{"sk": N(sk), "misc": S(f"misc{sk}")} for _, sk in LSI_ORDER]


def test_lsi_consistent_read_allowed(api, qt):
    r = api.ok("Query", {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
                         "ExpressionAttributeValues": {":p": S("L")}, "ConsistentRead": True})
    assert keys_of(r["Items"]) == LSI_ORDER


def test_lsi_filter_on_index_key(api, qt):
    resp = api("Query", {"TableName": qt, "IndexName": "bylsk", "KeyConditionExpression": "pk = :p",
                         "FilterExpression": "lsk > :z",
                         "ExpressionAttributeValues": {":p": S("L"), ":z": N(0)}})
    assert_validation(resp, FILTER_KEY + "lsk")


# =========================================================================== Scan on indexes

MIX_ALL = P_ORDER + [("d1", "1"), ("d2", "1"), ("d3", "1"), ("d4", "1")]


def test_gsi_scan(api, qt):
    items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "mix"})
    assert sorted(keys_of(items)) == sorted(MIX_ALL)
    # Within one composite partition the entries come in index order.
    p = [k for k, i in zip(keys_of(items), items)
         if i["tenant"] == S("t1") and i["rgn"] == N(1)]
    assert p == P_ORDER


@pytest.mark.parametrize("limit", [1, 3, 7])
def test_gsi_scan_paging(api, qt, limit):
    items, pages = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "keyso"}, limit)
    assert sorted(keys_of(items)) == sorted(MIX_ALL)
    assert len(items) == len(set(keys_of(items)))
    for p in pages:
        if "LastEvaluatedKey" in p:
            assert set(p["LastEvaluatedKey"]) == set(MIX_KEY + TABLE_KEY)


def test_lsi_scan(api, qt):
    items, pages = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "bylsk"}, 4)
    assert keys_of(items) == LSI_ORDER
    assert set(pages[0]["LastEvaluatedKey"]) == {"pk", "sk", "lsk"}


@pytest.mark.parametrize("total", [3, 7])
@pytest.mark.parametrize("index_name", ["mix", "incg", "bylsk"])
def test_index_parallel_scan(api, qt, total, index_name):
    seen = []
    for seg in range(total):
        items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": index_name,
                                     "Segment": seg, "TotalSegments": total}, 3)
        seen += keys_of(items)
    everything, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": index_name})
    assert len(seen) == len(set(seen))
    assert sorted(seen) == sorted(keys_of(everything))
    expected = {"mix": len(MIX_ALL), "incg": len(P_ROWS) + 5, "bylsk": len(LSI_ORDER)}[index_name]
    assert len(seen) == expected


def test_gsi_parallel_scan_keeps_composite_partition_together(api, qt):
    total = 7
    segments_of_p = set()
    for seg in range(total):
        items, _ = query_pages(api, {"op": "Scan", "TableName": qt, "IndexName": "mix",
                                     "Segment": seg, "TotalSegments": total})
        if any(i["tenant"] == S("t1") and i["rgn"] == N(1) for i in items):
            segments_of_p.add(seg)
    assert len(segments_of_p) == 1


# =========================================================================== UpdateTable


def update_table(api, table, updates, attr_defs=None, **extra):
    body = {"TableName": table, "GlobalSecondaryIndexUpdates": updates}
    if attr_defs is not None:
        body["AttributeDefinitions"] = attr_defs
    body.update(extra)
    return api("UpdateTable", body)


def create_action(name, schema, ptype="ALL", nka=None, throughput=None):
    return {"Create": index(name, schema, ptype, nka, throughput)}


@pytest.fixture
def utable(api, make_table):
    name = make_table(("pk", "S"))
    items = [
        {"pk": S("1"), "a": S("x"), "b": N(3), "c": N(1), "v": S("one")},
        {"pk": S("2"), "a": S("x"), "b": N(-1), "c": N(1), "v": S("two")},
        {"pk": S("3"), "a": S("x"), "b": N(2), "v": S("three")},             # no c
        {"pk": S("4"), "a": S("y"), "b": N(0), "c": N(1)},
        {"pk": S("5"), "b": N(7), "c": N(1)},                                 # no a
        {"pk": S("6"), "a": N(5), "b": N(1), "c": N(1)},                     # a of another type
    ]
    for it in items:
        api.ok("PutItem", {"TableName": name, "Item": it})
    return name


def test_update_table_create_gsi_backfills(api, utable):
    resp = update_table(api, utable, [create_action("byab", ks("a", "c", "|", "b"))],
                        defs(a="S", b="N", c="N"))
    assert resp.status == 200, resp
    d = resp.json["TableDescription"]
    (g,) = [g for g in d["GlobalSecondaryIndexes"] if g["IndexName"] == "byab"]
    assert g["KeySchema"] == ks("a", "c", "|", "b")
    assert g["IndexStatus"] in ("CREATING", "ACTIVE")
    # Queryable at once, with the existing items backfilled.
    r = api.ok("Query", {"TableName": utable, "IndexName": "byab",
                         "KeyConditionExpression": "a = :a AND c = :c",
                         "ExpressionAttributeValues": {":a": S("x"), ":c": N(1)}})
    assert [i["pk"]["S"] for i in r["Items"]] == ["2", "1"]
    g = wait_gsi(api, utable, "byab")
    assert g["ItemCount"] == 3
    assert g["IndexArn"] == table_arn(utable) + "/index/byab"
    assert "Backfilling" not in g
    r = api.ok("Query", {"TableName": utable, "IndexName": "byab",
                         "KeyConditionExpression": "a = :a AND c = :c",
                         "ExpressionAttributeValues": {":a": S("x"), ":c": N(1)}})
    assert [i["pk"]["S"] for i in r["Items"]] == ["2", "1"]
    assert r["Items"][0] == {"pk": S("2"), "a": S("x"), "b": N(-1), "c": N(1), "v": S("two")}
    # Later writes are maintained, and the new type constraints apply.
    api.ok("PutItem", {"TableName": utable, "Item": {"pk": S("7"), "a": S("x"), "b": N(0),
                                                     "c": N(1)}})
    r = api.ok("Query", {"TableName": utable, "IndexName": "byab",
                         "KeyConditionExpression": "a = :a AND c = :c",
                         "ExpressionAttributeValues": {":a": S("x"), ":c": N(1)}})
    assert [i["pk"]["S"] for i in r["Items"]] == ["2", "7", "1"]
    resp = api("PutItem", {"TableName": utable, "Item": {"pk": S("8"), "b": S("bad")}})
    assert_validation(resp, INVALID + "Type mismatch for Index Key b Expected: N Actual: S "
                      "IndexName: byab")


def test_update_table_create_gsi_with_mismatched_existing_item(api, make_table):
    # An existing item whose component has another type is left out of the new index.
    name = make_table(("pk", "S"))
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("1"), "a": N(5)}})
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("2"), "a": S("s")}})
    resp = update_table(api, name, [create_action("bya", ks("a"), "KEYS_ONLY")], defs(a="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "bya")
    assert g["ItemCount"] == 1
    r = api.ok("Scan", {"TableName": name, "IndexName": "bya"})
    assert r["Items"] == [{"pk": S("2"), "a": S("s")}]


def test_update_table_create_gsi_missing_definitions(api, utable):
    resp = update_table(api, utable, [create_action("gx1", ks("a", "|", "b"))])
    assert_validation(resp, INVALID + "AttributeDefinitions is not specified for index: gx1")
    resp = update_table(api, utable, [create_action("gx1", ks("a", "|", "b"))], defs(a="S"))
    assert_validation(resp, INVALID + "AttributeDefinitions is not specified for index: gx1")
    t = api.ok("DescribeTable", {"TableName": utable})["Table"]
    assert "GlobalSecondaryIndexes" not in t or t["GlobalSecondaryIndexes"] == []


def test_update_table_create_existing_name(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [create_action("gx1", ks("a"))], defs(a="S"))
    assert_validation(resp, "Attempting to create an index which already exists")


def test_update_table_two_creates(api, utable):
    resp = update_table(api, utable, [create_action("gx1", ks("a")), create_action("gx2", ks("b"))],
                        defs(a="S", b="N"))
    assert_error(resp, 400, LIMIT_EXCEEDED,
                 "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                 "simultaneously per table")


def test_update_table_create_and_delete(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [create_action("gx2", ks("b")),
                                    {"Delete": {"IndexName": "gx1"}}], defs(b="N"))
    assert_error(resp, 400, LIMIT_EXCEEDED,
                 "Subscriber limit exceeded: Only 1 online index can be created or deleted "
                 "simultaneously per table")


def test_update_table_gsi_update_element_without_action(api, utable):
    assert_validation(update_table(api, utable, [{}]),
                      INVALID + "One of GlobalSecondaryIndexUpdate.Update, "
                      "GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must "
                      "not be null")


def test_update_table_gsi_update_element_with_two_actions(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    upd = dict(create_action("gx2", ks("b")), Delete={"IndexName": "gx1"})
    assert_validation(update_table(api, name, [upd], defs(b="N")),
                      INVALID + "Only one global secondary index action is allowed per "
                      "GlobalSecondaryIndexUpdate object")


def test_update_table_same_index_twice(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"), throughput=tp())])
    resp = update_table(api, name, [
        {"Update": {"IndexName": "gx1", "ProvisionedThroughput": tp(6, 6)}},
        {"Update": {"IndexName": "gx1", "ProvisionedThroughput": tp(7, 7)}},
    ])
    assert_validation(resp, INVALID + "Only one global secondary index update per index is "
                      "allowed simultaneously. Index: gx1")


def test_update_table_gsi_throughput(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"), throughput=tp(5, 5))])
    resp = update_table(api, name, [{"Update": {"IndexName": "gx1",
                                                "ProvisionedThroughput": tp(9, 11)}}])
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ProvisionedThroughput"]["ReadCapacityUnits"] == 9
    assert g["ProvisionedThroughput"]["WriteCapacityUnits"] == 11
    resp = update_table(api, name, [{"Update": {"IndexName": "gx1",
                                                "ProvisionedThroughput": tp(9, 11)}}])
    assert_validation(resp, message_prefix="The provisioned throughput for the index gx1 will not "
                      "change.")


def test_update_table_create_gsi_throughput_rules(api, make_table):
    name = make_table(("pk", "S"), ProvisionedThroughput=tp())
    resp = update_table(api, name, [create_action("gx1", ks("a"))], defs(a="S"))
    assert_validation(resp, INVALID + "ProvisionedThroughput must be specified for index: gx1")
    resp = update_table(api, name, [create_action("gx1", ks("a"), throughput=tp(2, 3))], defs(a="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ProvisionedThroughput"]["ReadCapacityUnits"] == 2


def test_update_table_delete_gsi(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S", b="N"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a", "|", "b")),
                                              index("keep", ks("a"), "KEYS_ONLY")])
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("1"), "a": S("x"), "b": N(1)}})
    assert_validation(api("PutItem", {"TableName": name,
                                      "Item": {"pk": S("2"), "a": S("x"), "b": S("text")}}),
                      INVALID + "Type mismatch for Index Key b Expected: N Actual: S IndexName: gx1")
    resp = update_table(api, name, [{"Delete": {"IndexName": "gx1"}}])
    assert resp.status == 200, resp
    t = wait_gsi_gone(api, name, "gx1")
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["keep"]
    assert_validation(api("Query", {"TableName": name, "IndexName": "gx1",
                                    "KeyConditionExpression": "a = :a",
                                    "ExpressionAttributeValues": {":a": S("x")}}),
                      "The table does not have the specified index: gx1")
    assert_validation(api("Scan", {"TableName": name, "IndexName": "gx1"}),
                      "The table does not have the specified index: gx1")
    # The type constraint imposed by the deleted index is gone; the remaining one holds.
    api.ok("PutItem", {"TableName": name, "Item": {"pk": S("2"), "a": S("x"), "b": S("text")}})
    assert_validation(api("PutItem", {"TableName": name, "Item": {"pk": S("3"), "a": N(1)}}),
                      INVALID + "Type mismatch for Index Key a Expected: S Actual: N "
                      "IndexName: keep")
    r = api.ok("Query", {"TableName": name, "IndexName": "keep", "KeyConditionExpression": "a = :a",
                         "ExpressionAttributeValues": {":a": S("x")}})
    assert sorted(i["pk"]["S"] for i in r["Items"]) == ["1", "2"]
    # The name can be used again.
    resp = update_table(api, name, [create_action("gx1", ks("b"))], defs(b="S"))
    assert resp.status == 200, resp
    g = wait_gsi(api, name, "gx1")
    assert g["ItemCount"] == 1


def test_update_table_delete_unknown_index(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index("gx1", ks("a"))])
    resp = update_table(api, name, [{"Delete": {"IndexName": "nope"}}])
    # [open] ValidationException (not-a-GSI text) or ResourceNotFoundException.
    assert resp.status == 400, resp
    assert resp.error_type in ("ValidationException", "ResourceNotFoundException"), resp
    t = api.ok("DescribeTable", {"TableName": name})["Table"]
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["gx1"]


def test_update_table_create_beyond_twenty_gsis(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=defs(pk="S", a="S"),
                      GlobalSecondaryIndexes=[index(f"g{i:02d}", ks("a")) for i in range(20)])
    resp = update_table(api, name, [create_action("g20", ks("a"))], defs(a="S"))
    # [open] text; the type is LimitExceededException.
    assert_error(resp, 400, LIMIT_EXCEEDED)


def test_update_table_delete_lsi(api, make_table):
    name = make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=defs(pk="S", sk="S", a="S"),
                      LocalSecondaryIndexes=[index("lx1", ks("pk", "|", "a"))])
    assert_validation(update_table(api, name, [{"Delete": {"IndexName": "lx1"}}]),
                      "Cannot delete an index that is not a GlobalSecondaryIndex: lx1")


def test_update_table_update_lsi(api, make_table):
    name = make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=defs(pk="S", sk="S", a="S"),
                      ProvisionedThroughput=tp(),
                      LocalSecondaryIndexes=[index("lx1", ks("pk", "|", "a"))])
    assert_validation(update_table(api, name, [{"Update": {"IndexName": "lx1",
                                                           "ProvisionedThroughput": tp(6, 6)}}]),
                      "Cannot update an index that is not a GlobalSecondaryIndex: lx1")


def test_update_table_create_via_boto3(ddb, make_table):
    name = make_table(("pk", "S"))
    ddb.put_item(TableName=name, Item={"pk": {"S": "a"}, "g": {"S": "G"}, "r": {"N": "2"}})
    ddb.update_table(TableName=name,
                     AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"},
                                           {"AttributeName": "r", "AttributeType": "N"}],
                     GlobalSecondaryIndexUpdates=[{"Create": {
                         "IndexName": "gsr", "KeySchema": ks("g", "|", "r"),
                         "Projection": {"ProjectionType": "ALL"}}}])
    deadline = time.monotonic() + 10
    while True:
        t = ddb.describe_table(TableName=name)["Table"]
        if t["TableStatus"] == "ACTIVE" and all(g["IndexStatus"] == "ACTIVE"
                                                for g in t.get("GlobalSecondaryIndexes", [])):
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = ddb.query(TableName=name, IndexName="gsr", KeyConditionExpression="g = :g AND r > :r",
                  ExpressionAttributeValues={":g": {"S": "G"}, ":r": {"N": "1"}})
    assert r["Items"] == [{"pk": {"S": "a"}, "g": {"S": "G"}, "r": {"N": "2"}}]
