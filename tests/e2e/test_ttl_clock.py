"""Time to Live and stream retention run on the engine's clock (kumo serve --clock manual):
an item expires when the engine's time passes its TTL, its REMOVE record carries the
engine's time, and a record is trimmed when the engine's time passes its 24 hours. The
reaper's passes are --ttl-interval of real time apart; what is due is decided on the clock."""

import time

import pytest

from kumo_testlib import KumoServer, N, S, scan_all, wait_until
from stream_helpers import create_stream_table, read_stream, streams_api_for

DAY = 86400


@pytest.fixture
def srv(kumo_bin, tmp_path):
    server = KumoServer(kumo_bin, str(tmp_path), flags={"clock": "manual", "ttl-interval": "0.05"},
                        admin_port=0).start()
    yield server
    server.stop()


def present(api, table):
    return {i["pk"]["S"] for i in scan_all(api, table)}


def test_items_expire_when_the_engine_clock_passes_their_ttl(srv):
    api, admin = srv.api(), srv.admin
    table, arn = create_stream_table(api, srv.client(), "NEW_AND_OLD_IMAGES")
    api.ok("UpdateTimeToLive", {"TableName": table, "TimeToLiveSpecification": {
        "Enabled": True, "AttributeName": "exp"}})
    now = int(admin.now())
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("a"), "exp": N(now + 100)}})
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("b"), "exp": N(now + 200)}})
    # Many passes go by in real time; the engine's time stands still: nothing is due.
    time.sleep(0.5)
    assert present(api, table) == {"a", "b"}

    # An item is due once the clock's whole second is past its TTL.
    admin.advance(now + 150.5 - admin.now())
    wait_until(lambda: present(api, table) == {"b"}, timeout=10, what="a expired")
    removed = [r for r in read_stream(streams_api_for(srv), arn) if r["eventName"] == "REMOVE"]
    assert len(removed) == 1
    assert removed[0]["userIdentity"] == {"Type": "Service",
                                          "PrincipalId": "dynamodb.amazonaws.com"}
    assert int(removed[0]["dynamodb"]["ApproximateCreationDateTime"]) == now + 150

    admin.advance(100)
    wait_until(lambda: present(api, table) == set(), timeout=10, what="b expired")


def test_stream_records_are_trimmed_after_24_hours_of_the_engine_clock(srv):
    api, admin = srv.api(), srv.admin
    # Two items of one partition key: their records are in one shard, in order.
    table, arn = create_stream_table(api, srv.client(), "KEYS_ONLY", range_key=("sk", "S"))
    streams = streams_api_for(srv)
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("p"), "sk": S("old")}})
    admin.advance(DAY - 60)
    api.ok("PutItem", {"TableName": table, "Item": {"pk": S("p"), "sk": S("new")}})
    time.sleep(0.5)
    assert [r["dynamodb"]["Keys"]["sk"]["S"] for r in read_stream(streams, arn)] == ["old", "new"]

    admin.advance(120)
    wait_until(lambda: [r["dynamodb"]["Keys"]["sk"]["S"] for r in read_stream(streams, arn)]
               == ["new"], timeout=10, what="the day-old record trimmed")
