"""Contributor Insights: UpdateContributorInsights, DescribeContributorInsights and
ListContributorInsights as DynamoDB answers them — states and texts, rule names and their
suffixes, FAILED beyond the account's rule quota, List's order and pages, the errors, and
the settings kept across a restart.

Raw signed requests throughout: ContributorInsightsMode is newer than the installed boto3.
With the default --insights-delay 0 an ENABLE answers ENABLING and is ENABLED at once; the
tests of the transitions themselves run on the manual clock with --insights-delay 2."""

import time

import pytest

from kumo_testlib import (
    RESOURCE_NOT_FOUND,
    SERIALIZATION,
    assert_error,
    assert_not_found,
    assert_validation,
    create_table_args,
    start_capacity_server,
    table_arn,
    unique_name,
)

ALL = "ACCESSED_AND_THROTTLED_KEYS"
THROTTLED = "THROTTLED_KEYS"
PREFIX = "DynamoDBContributorInsights-"
RULE_LIMIT = {
    "ExceptionName": "LimitExceededException",
    "ExceptionDescription": (
        "Amazon CloudWatch Contributor Insights rule limit reached. Please disable "
        "Contributor Insights for other tables/indexes OR disable other CloudWatch "
        "Contributor Insights rules before retrying."),
}
BACKFILLING = ("Table or Index is not in a valid state to update Key Access Insights: "
               "IndexStatus must be ACTIVE to enable ContributorInsights.")


def gsi(name, hash_key, range_key=None):
    schema = [{"AttributeName": hash_key, "KeyType": "HASH"}]
    if range_key:
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    return {"IndexName": name, "KeySchema": schema, "Projection": {"ProjectionType": "ALL"}}


def create(api, name, range_key=True, gsis=(), lsi=False):
    """A table pk S [+ sk S]; `gsis`: (name, hash, range) over the S attributes g, h; `lsi`
    adds the LSI "lsi" on l."""
    extra = {}
    defs = {a for g in gsis for a in g[1:] if a}
    if gsis:
        extra["GlobalSecondaryIndexes"] = [gsi(*g) for g in gsis]
    if lsi:
        defs.add("l")
        extra["LocalSecondaryIndexes"] = [{
            "IndexName": "lsi", "Projection": {"ProjectionType": "KEYS_ONLY"},
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "l", "KeyType": "RANGE"}]}]
    args = create_table_args(name, ("pk", "S"), ("sk", "S") if range_key or lsi else None,
                             **extra)
    args["AttributeDefinitions"] += [{"AttributeName": a, "AttributeType": "S"}
                                     for a in sorted(defs)]
    api.ok("CreateTable", args)
    return name


def resource(table, index=None):
    body = {"TableName": table}
    if index:
        body["IndexName"] = index
    return body


def update(api, table, action, index=None, mode=None):
    body = dict(resource(table, index), ContributorInsightsAction=action)
    if mode:
        body["ContributorInsightsMode"] = mode
    return api.ok("UpdateContributorInsights", body)


def describe(api, table, index=None):
    return api.ok("DescribeContributorInsights", resource(table, index))


def answer(table, status, mode=ALL, index=None):
    return dict(resource(table, index), ContributorInsightsStatus=status,
                ContributorInsightsMode=mode)


def rules(table, suffix, kinds, index=None):
    part = table if index is None else f"{table}-{index}"
    return [f"{PREFIX}{k}-{part}-{suffix}" for k in kinds]


def suffix_of(desc):
    """The suffix shared by all the rules of a description."""
    suffixes = {r.rsplit("-", 1)[1] for r in desc["ContributorInsightsRuleList"]}
    assert len(suffixes) == 1, desc
    return int(suffixes.pop())


def listed(api, **body):
    return api.ok("ListContributorInsights", body)


def list_all(api, max_results):
    """Every summary of the account, page by page; also the pages' sizes."""
    out, sizes, token = [], [], None
    while True:
        body = {"MaxResults": max_results}
        if token:
            body["NextToken"] = token
        page = listed(api, **body)
        sizes.append(len(page["ContributorInsightsSummaries"]))
        out += page["ContributorInsightsSummaries"]
        token = page.get("NextToken")
        if token is None:
            return out, sizes


@pytest.fixture
def table(api, make_table):
    """A table with a sort key (its name comes from make_table, which deletes it)."""
    return make_table(("pk", "S"), ("sk", "S"))


# =========================================================================== states


def test_never_configured(api, make_table):
    name = make_table(("pk", "S"), ("sk", "S"), AttributeDefinitions=[
        {"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
        GlobalSecondaryIndexes=[gsi("by_g", "g")])
    assert describe(api, name) == {"TableName": name, "ContributorInsightsStatus": "DISABLED"}
    assert describe(api, name, "by_g") == {"TableName": name, "IndexName": "by_g",
                                           "ContributorInsightsStatus": "DISABLED"}
    # DISABLE of a never configured resource changes nothing.
    assert update(api, name, "DISABLE") == answer(name, "DISABLED")
    assert update(api, name, "DISABLE", mode=THROTTLED) == answer(name, "DISABLED")
    assert describe(api, name) == {"TableName": name, "ContributorInsightsStatus": "DISABLED"}


def test_enable_table(api, table):
    before = time.time()
    assert update(api, table, "ENABLE") == answer(table, "ENABLING")
    after = time.time()
    d = describe(api, table)
    suffix = suffix_of(d)
    assert d == {"TableName": table,
                 "ContributorInsightsRuleList": rules(table, suffix, ["PKC", "SKC", "PKT", "SKT"]),
                 "ContributorInsightsStatus": "ENABLED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"],
                 "ContributorInsightsMode": ALL}
    # The suffix is the epoch milliseconds of the enable, LastUpdateDateTime its seconds.
    assert before - 60 <= suffix / 1000 <= after + 60
    assert d["LastUpdateDateTime"] == suffix / 1000
    # ENABLE again in the same mode: ENABLED, nothing changes.
    assert update(api, table, "ENABLE") == answer(table, "ENABLED")
    assert update(api, table, "ENABLE", mode=ALL) == answer(table, "ENABLED")
    assert describe(api, table) == d


def test_mode_change_keeps_the_suffix(api, table):
    update(api, table, "ENABLE")
    suffix = suffix_of(describe(api, table))
    assert update(api, table, "ENABLE", mode=THROTTLED) == answer(table, "ENABLING", THROTTLED)
    d = describe(api, table)
    assert d["ContributorInsightsRuleList"] == rules(table, suffix, ["PKT", "SKT"])
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert d["ContributorInsightsMode"] == THROTTLED
    assert update(api, table, "ENABLE", mode=THROTTLED) == answer(table, "ENABLED", THROTTLED)
    # An ENABLE without a mode is back to ACCESSED_AND_THROTTLED_KEYS.
    assert update(api, table, "ENABLE") == answer(table, "ENABLING")
    d = describe(api, table)
    assert d["ContributorInsightsRuleList"] == rules(table, suffix, ["PKC", "SKC", "PKT", "SKT"])
    assert d["ContributorInsightsMode"] == ALL


def test_disable(api, table):
    update(api, table, "ENABLE", mode=THROTTLED)
    enabled_at = describe(api, table)["LastUpdateDateTime"]
    # DISABLE with a mode is accepted and echoes the current one.
    assert update(api, table, "DISABLE", mode=ALL) == answer(table, "DISABLING", THROTTLED)
    d = describe(api, table)
    assert d == {"TableName": table, "ContributorInsightsStatus": "DISABLED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"],
                 "ContributorInsightsMode": THROTTLED}
    assert d["LastUpdateDateTime"] >= enabled_at
    assert update(api, table, "DISABLE") == answer(table, "DISABLED", THROTTLED)
    assert describe(api, table) == d


def test_enable_after_disable_makes_new_rules(api, table):
    update(api, table, "ENABLE")
    first = describe(api, table)
    update(api, table, "DISABLE")
    assert update(api, table, "ENABLE", mode=THROTTLED) == answer(table, "ENABLING", THROTTLED)
    d = describe(api, table)
    # Named after the new enable (the clock test shows a later suffix).
    assert suffix_of(d) == round(d["LastUpdateDateTime"] * 1000)
    assert d["LastUpdateDateTime"] >= first["LastUpdateDateTime"]
    assert d["ContributorInsightsRuleList"] == rules(table, suffix_of(d), ["PKT", "SKT"])


def test_table_without_sort_key(api, make_table):
    name = make_table(("pk", "S"))
    update(api, name, "ENABLE")
    d = describe(api, name)
    assert d["ContributorInsightsRuleList"] == rules(name, suffix_of(d), ["PKC", "PKT"])
    update(api, name, "ENABLE", mode=THROTTLED)
    assert describe(api, name)["ContributorInsightsRuleList"] == rules(name, suffix_of(d),
                                                                       ["PKT"])


def test_gsis(api, make_table):
    name = make_table(("pk", "S"), AttributeDefinitions=[
        {"AttributeName": a, "AttributeType": "S"} for a in ("pk", "g", "h")],
        GlobalSecondaryIndexes=[gsi("by_g", "g"), gsi("by_g_h", "g", "h")])
    assert update(api, name, "ENABLE", "by_g") == answer(name, "ENABLING", index="by_g")
    d = describe(api, name, "by_g")
    assert d == {"TableName": name, "IndexName": "by_g",
                 "ContributorInsightsRuleList": rules(name, suffix_of(d), ["PKC", "PKT"], "by_g"),
                 "ContributorInsightsStatus": "ENABLED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"], "ContributorInsightsMode": ALL}
    # A GSI's RANGE key gives it the partition + sort key rules.
    assert update(api, name, "ENABLE", "by_g_h", THROTTLED) == answer(
        name, "ENABLING", THROTTLED, "by_g_h")
    d = describe(api, name, "by_g_h")
    assert d["ContributorInsightsRuleList"] == rules(name, suffix_of(d), ["PKT", "SKT"], "by_g_h")
    # The table and each GSI are separate resources.
    assert describe(api, name) == {"TableName": name, "ContributorInsightsStatus": "DISABLED"}
    assert listed(api, TableName=name) == {"ContributorInsightsSummaries": [
        answer(name, "ENABLED", index="by_g"), answer(name, "ENABLED", THROTTLED, "by_g_h")]}
    assert update(api, name, "DISABLE", "by_g") == answer(name, "DISABLING", index="by_g")
    assert describe(api, name, "by_g")["ContributorInsightsStatus"] == "DISABLED"


def test_table_arn(api, table):
    body = {"TableName": table_arn(table), "ContributorInsightsAction": "ENABLE"}
    assert api.ok("UpdateContributorInsights", body) == answer(table, "ENABLING")
    assert api.ok("DescribeContributorInsights",
                  {"TableName": table_arn(table)})["TableName"] == table
    assert listed(api, TableName=table_arn(table)) == {
        "ContributorInsightsSummaries": [answer(table, "ENABLED")]}


def test_boto3_reads_the_answers(ddb, table):
    out = ddb.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    assert out["ContributorInsightsStatus"] == "ENABLING"
    d = ddb.describe_contributor_insights(TableName=table)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert len(d["ContributorInsightsRuleList"]) == 4
    assert abs(d["LastUpdateDateTime"].timestamp() - time.time()) < 60
    # This botocore predates ContributorInsightsMode, which it leaves out.
    summaries = ddb.list_contributor_insights(TableName=table)["ContributorInsightsSummaries"]
    assert summaries == [{"TableName": table, "ContributorInsightsStatus": "ENABLED"}]


# =========================================================================== errors


def test_missing_table(api):
    name = unique_name("missing")
    for op, body in [
            ("UpdateContributorInsights", {"TableName": name, "ContributorInsightsAction": "ENABLE"}),
            ("UpdateContributorInsights", {"TableName": name, "IndexName": "idx",
                                           "ContributorInsightsAction": "DISABLE"}),
            ("DescribeContributorInsights", {"TableName": name}),
            ("ListContributorInsights", {"TableName": name})]:
        assert_not_found(api(op, body), f"Requested resource not found: Table: {name} not found")


def test_unknown_index_and_lsi(api):
    name = create(api, unique_name("ci-idx"), gsis=[("by_g", "g")], lsi=True)
    try:
        for index in ("nope", "lsi"):
            msg = f"Requested resource not found: Index: {index} not found for table: {name}"
            for action in ("ENABLE", "DISABLE"):
                assert_not_found(api("UpdateContributorInsights", {
                    "TableName": name, "IndexName": index, "ContributorInsightsAction": action}),
                    msg)
            assert_not_found(api("DescribeContributorInsights",
                                 {"TableName": name, "IndexName": index}), msg)
    finally:
        api.ok("DeleteTable", {"TableName": name})


def coral(*errors):
    n = len(errors)
    head = f"{n} validation error{'s' if n > 1 else ''} detected: "
    return head + "; ".join(errors)


def null(path):
    return f"Value null at '{path}' failed to satisfy constraint: Member must not be null"


def bad(value, path, constraint):
    return f"Value '{value}' at '{path}' failed to satisfy constraint: {constraint}"


PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
ACTIONS = "Member must satisfy enum value set: [ENABLE, DISABLE]"
MODES = f"Member must satisfy enum value set: [{ALL}, {THROTTLED}]"


@pytest.mark.parametrize("op,body,message", [
    ("UpdateContributorInsights", {},
     coral(null("tableName"), null("contributorInsightsAction"))),
    ("UpdateContributorInsights", {"TableName": "tab1"},
     coral(null("contributorInsightsAction"))),
    ("UpdateContributorInsights", {"TableName": "ab", "ContributorInsightsAction": "ON"},
     coral(bad("ab", "tableName", "Member must have length greater than or equal to 3"),
           bad("ON", "contributorInsightsAction", ACTIONS))),
    ("UpdateContributorInsights", {"TableName": "tab1", "IndexName": "a/b",
                                   "ContributorInsightsAction": "enable",
                                   "ContributorInsightsMode": "ALL"},
     coral(bad("a/b", "indexName", PATTERN), bad("enable", "contributorInsightsAction", ACTIONS),
           bad("ALL", "contributorInsightsMode", MODES))),
    ("UpdateContributorInsights", {"TableName": "t" * 256, "ContributorInsightsAction": "ENABLE"},
     coral(bad("t" * 256, "tableName", "Member must have length less than or equal to 255"))),
    ("UpdateContributorInsights", {"TableName": "arn:" + "x" * 1021,
                                   "ContributorInsightsAction": "ENABLE"},
     coral(bad("arn:" + "x" * 1021, "tableName",
               "Member must have length less than or equal to 1024"))),
    ("DescribeContributorInsights", {}, coral(null("tableName"))),
    ("DescribeContributorInsights", {"TableName": "tab1", "IndexName": "ix"},
     coral(bad("ix", "indexName", "Member must have length greater than or equal to 3"))),
    ("ListContributorInsights", {"TableName": "tab!", "MaxResults": 101},
     coral(bad("tab!", "tableName", PATTERN),
           bad("101", "maxResults", "Member must have value less than or equal to 100"))),
])
def test_validation(api, op, body, message):
    assert_validation(api(op, body), message)


@pytest.mark.parametrize("op,body,message", [
    ("UpdateContributorInsights", {"TableName": "tab1", "ContributorInsightsAction": 5},
     "NUMBER_VALUE cannot be converted to String"),
    ("UpdateContributorInsights", {"TableName": "tab1", "ContributorInsightsAction": "ENABLE",
                                   "ContributorInsightsMode": True},
     "TRUE_VALUE cannot be converted to String"),
    ("DescribeContributorInsights", {"TableName": "tab1", "IndexName": ["a"]},
     "Unrecognized collection type class java.lang.String"),
    ("ListContributorInsights", {"MaxResults": "5"},
     "STRING_VALUE cannot be converted to Integer"),
    ("ListContributorInsights", {"NextToken": {}},
     "Start of structure or map found where not expected"),
])
def test_member_types(api, op, body, message):
    assert_error(api(op, body), 400, SERIALIZATION, message)


def test_invalid_next_token(api):
    for token in ("", "no such token!", "a/b/c", "ab"):
        assert_validation(api("ListContributorInsights", {"NextToken": token}),
                          f"Invalid NextToken provided: {token}")


# =========================================================================== FAILED


def test_rule_quota_fails(start_server):
    """The default quota of 100 rules: 25 tables with a sort key take them all."""
    srv = start_server()
    api = srv.api()
    full = [create(api, f"full-{i:02d}") for i in range(25)]
    for name in full:
        assert update(api, name, "ENABLE") == answer(name, "ENABLING")
    extra = create(api, "extra", range_key=False)
    # Accepted as ENABLING, then FAILED with no rules.
    assert update(api, extra, "ENABLE", mode=THROTTLED) == answer(extra, "ENABLING", THROTTLED)
    d = describe(api, extra)
    assert d == {"TableName": extra, "ContributorInsightsStatus": "FAILED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"], "FailureException": RULE_LIMIT,
                 "ContributorInsightsMode": THROTTLED}
    assert describe(api, extra) == d  # FAILED never recovers by itself
    # An ENABLE retries, and fails again while there is no room.
    assert update(api, extra, "ENABLE", mode=THROTTLED) == answer(extra, "ENABLING", THROTTLED)
    assert describe(api, extra)["ContributorInsightsStatus"] == "FAILED"
    # Narrowing a mode frees rules: in THROTTLED_KEYS full-00 holds 2 of its 4.
    assert update(api, full[0], "ENABLE", mode=THROTTLED) == answer(full[0], "ENABLING",
                                                                    THROTTLED)
    assert update(api, extra, "ENABLE") == answer(extra, "ENABLING")
    d = describe(api, extra)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert d["ContributorInsightsRuleList"] == rules(extra, suffix_of(d), ["PKC", "PKT"])
    # Widening it again needs 2 more rules than there is room for.
    assert update(api, full[0], "ENABLE") == answer(full[0], "ENABLING")
    d = describe(api, full[0])
    assert d == {"TableName": full[0], "ContributorInsightsStatus": "FAILED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"], "FailureException": RULE_LIMIT,
                 "ContributorInsightsMode": ALL}
    # FAILED is listed.
    assert listed(api, TableName=full[0]) == {"ContributorInsightsSummaries": [
        answer(full[0], "FAILED")]}
    # DISABLE clears it (at once with no delay).
    assert update(api, full[0], "DISABLE") == answer(full[0], "DISABLING")
    d = describe(api, full[0])
    assert d == {"TableName": full[0], "ContributorInsightsStatus": "DISABLED",
                 "LastUpdateDateTime": d["LastUpdateDateTime"], "ContributorInsightsMode": ALL}
    # 98 rules in use; deleting a table frees its rules.
    other = create(api, "other")
    update(api, other, "ENABLE")
    assert describe(api, other)["ContributorInsightsStatus"] == "FAILED"
    api.ok("DeleteTable", {"TableName": full[2]})
    update(api, other, "ENABLE")
    d = describe(api, other)
    assert d["ContributorInsightsStatus"] == "ENABLED"
    assert d["ContributorInsightsRuleList"] == rules(other, suffix_of(d),
                                                     ["PKC", "SKC", "PKT", "SKT"])


# =========================================================================== List


def test_list(start_server):
    srv = start_server()
    api = srv.api()
    assert listed(api) == {"ContributorInsightsSummaries": []}
    create(api, "b-table", gsis=[("zeta", "g"), ("alpha", "g", "h"), ("mid", "h")])
    create(api, "a-table")
    create(api, "c-table")
    create(api, "d-table", range_key=False)
    update(api, "b-table", "ENABLE", "zeta")
    update(api, "b-table", "ENABLE", "alpha", THROTTLED)
    update(api, "b-table", "ENABLE")
    update(api, "a-table", "ENABLE")
    update(api, "c-table", "ENABLE")
    update(api, "c-table", "DISABLE")  # DISABLED: not listed
    update(api, "b-table", "DISABLE", "mid")  # never enabled: not listed
    update(api, "d-table", "ENABLE", mode=THROTTLED)
    expected = [answer("a-table", "ENABLED"), answer("b-table", "ENABLED"),
                answer("b-table", "ENABLED", THROTTLED, "alpha"),
                answer("b-table", "ENABLED", index="zeta"),
                answer("d-table", "ENABLED", THROTTLED)]
    # Tables in name order, each before its GSIs in name order.
    assert listed(api) == {"ContributorInsightsSummaries": expected}
    assert listed(api, MaxResults=100) == {"ContributorInsightsSummaries": expected}
    assert listed(api, MaxResults=5) == {"ContributorInsightsSummaries": expected}
    for size in (1, 2, 3, 4):
        out, sizes = list_all(api, size)
        assert out == expected
        # Full pages, never an empty one with a token.
        assert sizes == [size] * (5 // size) + ([5 % size] if 5 % size else []), (size, sizes)
    first = listed(api, MaxResults=2)
    assert first["ContributorInsightsSummaries"] == expected[:2]
    assert listed(api, MaxResults=2, NextToken=first["NextToken"]) == {
        "ContributorInsightsSummaries": expected[2:4],
        "NextToken": listed(api, MaxResults=4)["NextToken"]}
    # A table's resources are one page, whatever MaxResults says.
    assert listed(api, TableName="b-table", MaxResults=1) == {
        "ContributorInsightsSummaries": expected[1:4]}
    assert listed(api, TableName="c-table") == {"ContributorInsightsSummaries": []}
    # A resource that goes away leaves the pages consistent.
    token = listed(api, MaxResults=1)["NextToken"]
    api.ok("DeleteTable", {"TableName": "a-table"})
    assert listed(api, MaxResults=10, NextToken=token) == {
        "ContributorInsightsSummaries": expected[1:]}


def test_list_max_results_bounds(api):
    assert api("ListContributorInsights", {"MaxResults": 100}).status == 200
    assert_validation(api("ListContributorInsights", {"MaxResults": 1000}), coral(
        bad("1000", "maxResults", "Member must have value less than or equal to 100")))
    # Below 1 there is no model bound: the default page.
    for value in (0, -1):
        assert api("ListContributorInsights", {"MaxResults": value}).status == 200


# =========================================================================== restart


def test_settings_survive_a_restart(start_server, tmp_path):
    srv = start_server(data_dir=tmp_path / "data")
    api = srv.api()
    create(api, "kept", gsis=[("by_g", "g", "h"), ("by_h", "h")])
    update(api, "kept", "ENABLE")
    update(api, "kept", "ENABLE", "by_g", THROTTLED)
    update(api, "kept", "ENABLE", "by_h")
    update(api, "kept", "DISABLE", "by_h")
    before = {i: describe(api, "kept", i) for i in (None, "by_g", "by_h")}
    before_list = listed(api)
    assert srv.terminate() == 0
    srv.start()
    api = srv.api()
    assert {i: describe(api, "kept", i) for i in (None, "by_g", "by_h")} == before
    assert listed(api) == before_list
    assert update(api, "kept", "ENABLE") == answer("kept", "ENABLED")


# =========================================================================== the clock


@pytest.fixture(scope="module")
def clocked(kumo_bin, tmp_path_factory):
    """A server on the manual clock where a change takes 2 s and the quota is 6 rules."""
    srv = start_capacity_server(kumo_bin, str(tmp_path_factory.mktemp("kumo-insights")),
                                {"insights-delay": 2, "insights-rule-quota": 6,
                                 "clock-start": 1767225600})
    yield srv
    srv.stop()


def test_transitions_take_the_delay(clocked):
    api, admin = clocked.api(), clocked.admin
    name = create(api, unique_name("ci-clock"))
    start = admin.now()
    assert update(api, name, "ENABLE") == answer(name, "ENABLING")
    d = describe(api, name)
    assert d == {"TableName": name,
                 "ContributorInsightsRuleList": rules(name, int(start * 1000),
                                                      ["PKC", "SKC", "PKT", "SKT"]),
                 "ContributorInsightsStatus": "ENABLING", "LastUpdateDateTime": start,
                 "ContributorInsightsMode": ALL}
    assert listed(api, TableName=name) == {"ContributorInsightsSummaries": [
        answer(name, "ENABLING")]}
    assert update(api, name, "ENABLE") == answer(name, "ENABLING")
    admin.advance(1)
    assert describe(api, name)["ContributorInsightsStatus"] == "ENABLING"
    admin.advance(1)
    assert describe(api, name) == dict(d, ContributorInsightsStatus="ENABLED")
    # A mode change goes back through ENABLING and keeps the suffix.
    assert update(api, name, "ENABLE", mode=THROTTLED) == answer(name, "ENABLING", THROTTLED)
    assert describe(api, name)["ContributorInsightsRuleList"] == rules(
        name, int(start * 1000), ["PKT", "SKT"])
    admin.advance(2)
    assert describe(api, name)["ContributorInsightsStatus"] == "ENABLED"
    assert update(api, name, "DISABLE") == answer(name, "DISABLING", THROTTLED)
    assert update(api, name, "DISABLE") == answer(name, "DISABLING", THROTTLED)
    disabling = describe(api, name)
    assert disabling == {"TableName": name, "ContributorInsightsStatus": "DISABLING",
                         "LastUpdateDateTime": start + 4, "ContributorInsightsMode": THROTTLED}
    assert listed(api, TableName=name) == {"ContributorInsightsSummaries": [
        answer(name, "DISABLING", THROTTLED)]}
    admin.advance(2)
    assert describe(api, name) == dict(disabling, ContributorInsightsStatus="DISABLED")
    assert listed(api, TableName=name) == {"ContributorInsightsSummaries": []}
    # Enabling again creates new rules, named after the new time.
    admin.advance(0.5)
    assert update(api, name, "ENABLE") == answer(name, "ENABLING")
    assert describe(api, name)["ContributorInsightsRuleList"] == rules(
        name, int((start + 6.5) * 1000), ["PKC", "SKC", "PKT", "SKT"])
    api.ok("DeleteTable", {"TableName": name})


def test_failed_under_a_lowered_quota(clocked):
    api, admin = clocked.api(), clocked.admin
    big = create(api, unique_name("ci-big"))           # 4 rules
    small = create(api, unique_name("ci-small"), range_key=False)  # 2 rules
    late = create(api, unique_name("ci-late"), range_key=False)
    update(api, big, "ENABLE")
    update(api, small, "ENABLE")
    start = admin.now()
    assert update(api, late, "ENABLE") == answer(late, "ENABLING")
    # ENABLING while the delay runs (no rules), then FAILED.
    assert describe(api, late) == {"TableName": late, "ContributorInsightsStatus": "ENABLING",
                                   "LastUpdateDateTime": start, "ContributorInsightsMode": ALL}
    admin.advance(2)
    failed = describe(api, late)
    assert failed == {"TableName": late, "ContributorInsightsStatus": "FAILED",
                      "LastUpdateDateTime": start, "FailureException": RULE_LIMIT,
                      "ContributorInsightsMode": ALL}
    admin.advance(3600)
    assert describe(api, late) == failed
    # DISABLE: the failure shows until DISABLED.
    assert update(api, late, "DISABLE") == answer(late, "DISABLING")
    assert describe(api, late) == dict(failed, ContributorInsightsStatus="DISABLING",
                                       LastUpdateDateTime=start + 3602)
    admin.advance(2)
    assert describe(api, late) == {"TableName": late, "ContributorInsightsStatus": "DISABLED",
                                   "LastUpdateDateTime": start + 3602,
                                   "ContributorInsightsMode": ALL}
    # THROTTLED_KEYS needs one rule: it fits.
    update(api, small, "DISABLE")
    now = admin.now()
    update(api, late, "ENABLE", mode=THROTTLED)
    admin.advance(2)
    d = describe(api, late)
    assert d["ContributorInsightsRuleList"] == rules(late, int(now * 1000), ["PKT"])
    assert d["ContributorInsightsStatus"] == "ENABLED"
    for name in (big, small, late):
        api.ok("DeleteTable", {"TableName": name})
