"""The key statistics of the admin listener (GET /tables/{t}/top-keys) and Contributor
Insights count what Query and Scan read, by partition key, as well as single-item reads and
writes. A private server logs every access (--key-sample 1) on the manual clock."""

import pytest

from capacity_helpers import capacity_server


@pytest.fixture(scope="module")
def srv(kumo_bin, tmp_path_factory):
    with capacity_server(kumo_bin, tmp_path_factory, {"key-sample": 1}) as cs:
        yield cs


def music(srv):
    """A table keyed pk + sk with five small items of "band" and one of "solo"."""
    name = srv.create(range_key=("sk", "N"))
    for sk in range(1, 6):  # numbers of one digit, so that every item has the same size
        srv.put(name, {"pk": {"S": "band"}, "sk": {"N": str(sk)}})
    srv.put(name, {"pk": {"S": "solo"}, "sk": {"N": "1"}})
    return name


def by_partition_key(srv, name, **extra):
    keys = srv.admin.top_keys(name, by="partition-key", **extra)["keys"]
    return {k["key"]["pk"]["S"]: k["units"] for k in keys}


def query(srv, name, pk, consistent=False):
    return srv.api.ok("Query", {"TableName": name, "KeyConditionExpression": "pk = :p",
                                "ExpressionAttributeValues": {":p": {"S": pk}},
                                "ConsistentRead": consistent,
                                "ReturnConsumedCapacity": "TOTAL"})


def test_query_reads_count_against_their_partition_key(srv):
    name = music(srv)
    out = query(srv, name, "band", consistent=True)
    assert out["Count"] == 5
    assert out["ConsumedCapacity"]["CapacityUnits"] == 1.0
    srv.advance(1)
    # Five writes of one unit and a strongly consistent read of one unit.
    assert by_partition_key(srv, name) == {"band": 6, "solo": 1}
    items = srv.admin.top_keys(name)["keys"]
    assert len(items) == 6
    # The page's unit is logged against the first item the page read.
    assert items[0]["key"] == {"pk": {"S": "band"}, "sk": {"N": "1"}}
    assert items[0]["units"] == 2


def test_scan_reads_count_against_every_partition_key_read(srv):
    name = music(srv)
    out = srv.api.ok("Scan", {"TableName": name, "ConsistentRead": True,
                              "ReturnConsumedCapacity": "TOTAL"})
    assert out["Count"] == 6
    assert out["ConsumedCapacity"]["CapacityUnits"] == 1.0
    srv.advance(1)
    # One unit spread over the keys by the bytes read: 5/6 to "band", the rest to "solo"
    # (in thousandths, rounded down but for the last key read).
    units = by_partition_key(srv, name)
    assert units["band"] + units["solo"] == 7
    assert units["band"] == pytest.approx(5 + 5 / 6, abs=0.001)


def test_contributor_insights_count_query_reads(srv):
    name = music(srv)
    srv.api.ok("UpdateContributorInsights", {"TableName": name,
                                             "ContributorInsightsAction": "ENABLE"})
    query(srv, name, "solo", consistent=True)
    query(srv, name, "solo", consistent=True)
    srv.advance(61)  # the minute closes with the first second of the next
    minutes = srv.admin.insights(name)["minutes"]
    assert len(minutes) == 1
    assert minutes[0]["PKC"] == [{"key": {"pk": {"S": "solo"}}, "value": 2}]
