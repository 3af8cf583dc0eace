"""Secondary-index definitions: CreateTable validation of LSIs and GSIs with multi-attribute keys
(key schemas, projections, limits, throughput) and the index descriptions of DescribeTable and
CreateTable. With the other test_index_*.py modules this covers secondary indexes."""

import pytest

from index_helpers import (
    B,
    INVALID,
    N,
    S,
    defs,
    index,
    ks,
    tp,
)
from kumo_testlib import (
    COR_PREFIX,
    assert_validation,
    create_table_args,
    table_arn,
    unique_name,
)

PPR_THROUGHPUT = {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0, "WriteCapacityUnits": 0}


def create_expect_error(api, args):
    resp = api("CreateTable", args)
    if resp.status == 200:
        api("DeleteTable", {"TableName": args["TableName"]})
    return resp


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
