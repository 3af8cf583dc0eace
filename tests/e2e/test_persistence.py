"""Durability with --data-dir: every acknowledged write and table setting survives SIGKILL
and a clean SIGTERM restart (a write, with its index entries, stream records and TTL entries,
is committed as one atomic batch)."""

import concurrent.futures
import os
import shutil
import subprocess

import pytest

from kumo_testlib import (
    on_rados,
    KumoServer,
    create_table_args,
    free_port,
    normalize_item,
    table_arn,
    unique_name,
    wait_table_active,
    wait_table_gone,
)

SETTING_KEYS = ["TableName", "TableId", "TableArn", "KeySchema", "CreationDateTime",
                "DeletionProtectionEnabled", "TableClassSummary", "StreamSpecification",
                "LatestStreamArn", "LatestStreamLabel"]


def comparable_settings(desc):
    out = {k: desc.get(k) for k in SETTING_KEYS}
    out["AttributeDefinitions"] = sorted(desc["AttributeDefinitions"],
                                         key=lambda a: a["AttributeName"])
    pt = desc["ProvisionedThroughput"]
    out["Throughput"] = (pt["ReadCapacityUnits"], pt["WriteCapacityUnits"])
    out["BillingMode"] = desc.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    return out


def tags_of(client, name):
    out = client.list_tags_of_resource(ResourceArn=table_arn(name))
    return {t["Key"]: t["Value"] for t in out.get("Tags", [])}


def items_for(i):
    return {
        "pk": {"S": f"user#{i}"},
        "sk": {"N": str(i * 7)},
        "name": {"S": f"name-{i} ✓"},
        "score": {"N": f"{i}.25"},
        "blob": {"B": bytes([0, i % 256, 0])},
        "tags": {"SS": [f"t{i}", "common"]},
        "nums": {"NS": [str(i), "1e3"]},
        "doc": {"M": {"l": {"L": [{"BOOL": True}, {"NULL": True}, {"S": ""}]}}},
    }


def describe(srv, name):
    return srv.api().ok("DescribeTable", {"TableName": name})["Table"]


def populate(srv):
    """Creates tables and items; returns what must be found after a restart."""
    client = srv.client()
    main = unique_name("persist")
    srv.api().ok("CreateTable", create_table_args(
        main, ("pk", "S"), ("sk", "N"), BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
        Tags=[{"Key": "env", "Value": "durable"}, {"Key": "owner", "Value": "e2e"}],
        DeletionProtectionEnabled=True, TableClass="STANDARD_INFREQUENT_ACCESS",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}))
    ppr = unique_name("persist-ppr")
    client.create_table(**create_table_args(ppr, ("id", "B")))
    dropped = unique_name("persist-dropped")
    client.create_table(**create_table_args(dropped))
    for t in (main, ppr, dropped):
        wait_table_active(client, t)

    client.tag_resource(ResourceArn=table_arn(main), Tags=[{"Key": "added", "Value": "later"}])
    client.untag_resource(ResourceArn=table_arn(main), TagKeys=["owner"])
    client.update_table(TableName=ppr, BillingMode="PROVISIONED",
                        ProvisionedThroughput={"ReadCapacityUnits": 9, "WriteCapacityUnits": 8})
    wait_table_active(client, ppr)
    client.put_item(TableName=dropped, Item={"pk": {"S": "gone"}})
    client.delete_table(TableName=dropped)
    wait_table_gone(client, dropped)

    items = {}
    for i in range(40):
        it = items_for(i)
        client.put_item(TableName=main, Item=it)
        items[(it["pk"]["S"], it["sk"]["N"])] = it
    overwritten = dict(items_for(3), name={"S": "overwritten"})
    client.put_item(TableName=main, Item=overwritten)
    items[("user#3", "21")] = overwritten
    client.delete_item(TableName=main, Key={"pk": {"S": "user#5"}, "sk": {"N": "35"}})
    del items[("user#5", "35")]
    client.put_item(TableName=ppr, Item={"id": {"B": b"\x00key"}, "v": {"N": "1"}})

    return {
        "main": main, "ppr": ppr, "dropped": dropped, "items": items,
        "main_desc": comparable_settings(describe(srv, main)),
        "ppr_desc": comparable_settings(describe(srv, ppr)),
    }


def verify(srv, state):
    client = srv.client()
    main, ppr = state["main"], state["ppr"]
    desc = describe(srv, main)
    assert desc["TableStatus"] == "ACTIVE"
    assert comparable_settings(desc) == state["main_desc"]
    assert desc["ItemCount"] == len(state["items"])
    assert comparable_settings(describe(srv, ppr)) == state["ppr_desc"]
    assert state["main_desc"]["Throughput"] == (3, 4)
    assert state["ppr_desc"]["Throughput"] == (9, 8)
    assert state["main_desc"]["DeletionProtectionEnabled"] is True
    assert state["main_desc"]["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert state["main_desc"]["StreamSpecification"] == {
        "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert state["main_desc"]["LatestStreamArn"].startswith(table_arn(main) + "/stream/")
    assert tags_of(client, main) == {"env": "durable", "added": "later"}
    with pytest.raises(client.exceptions.ResourceNotFoundException):
        client.describe_table(TableName=state["dropped"])
    listed = client.list_tables()["TableNames"]
    assert main in listed and ppr in listed and state["dropped"] not in listed

    for (pk, sk), it in state["items"].items():
        got = client.get_item(TableName=main, Key={"pk": {"S": pk}, "sk": {"N": sk}},
                              ConsistentRead=True).get("Item")
        assert got is not None, f"item {pk}/{sk} lost"
        expected = dict(it, score={"N": it["score"]["N"]}, nums={"NS": [
            x if x != "1e3" else "1000" for x in it["nums"]["NS"]]})
        assert normalize_item(got) == normalize_item(expected)
    assert "Item" not in client.get_item(TableName=main, Key={"pk": {"S": "user#5"},
                                                              "sk": {"N": "35"}},
                                         ConsistentRead=True)
    got = client.get_item(TableName=ppr, Key={"id": {"B": b"\x00key"}}, ConsistentRead=True)
    assert got["Item"]["v"] == {"N": "1"}

    # The restarted server keeps working on the recovered state.
    client.put_item(TableName=main, Item={"pk": {"S": "after"}, "sk": {"N": "1"}})
    assert client.get_item(TableName=main, Key={"pk": {"S": "after"}, "sk": {"N": "1"}},
                           ConsistentRead=True)["Item"]["pk"] == {"S": "after"}
    client.delete_item(TableName=main, Key={"pk": {"S": "after"}, "sk": {"N": "1"}})


def test_sigkill_after_acknowledged_writes(start_server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data))
    state = populate(srv)
    srv.kill()
    srv.start()
    verify(srv, state)


def test_sigterm_clean_shutdown_and_restart(start_server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data))
    state = populate(srv)
    status = srv.terminate()
    assert status == 0, f"kumo exited with {status} on SIGTERM; log:\n{srv.log_tail()}"
    srv.start()
    verify(srv, state)
    # A second cycle on the same directory, this time with SIGKILL.
    srv.kill()
    srv.start()
    verify(srv, state)


def test_concurrent_burst_then_sigkill(start_server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data_dir=str(data))
    client = srv.client()
    name = unique_name("burst")
    client.create_table(**create_table_args(name, ("pk", "S"), ("sk", "N")))
    wait_table_active(client, name)

    threads, per_thread = 8, 40

    def writer(t):
        c = srv.client()
        acked = []
        for i in range(per_thread):
            key = {"pk": {"S": f"w{t}"}, "sk": {"N": str(i)}}
            c.put_item(TableName=name, Item=dict(key, payload={"S": f"{t}-{i}-" + "x" * 200}))
            acked.append((t, i))
        return acked

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        acked = [k for f in [pool.submit(writer, t) for t in range(threads)] for k in f.result()]
    srv.kill()
    assert len(acked) == threads * per_thread

    srv.start()
    client = srv.client()
    assert client.describe_table(TableName=name)["Table"]["ItemCount"] == len(acked)

    def check(key):
        t, i = key
        c = clients[t]
        got = c.get_item(TableName=name, Key={"pk": {"S": f"w{t}"}, "sk": {"N": str(i)}},
                         ConsistentRead=True).get("Item")
        return key, got

    clients = {t: srv.client() for t in range(threads)}
    missing = []
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        for (t, i), got in pool.map(check, acked):
            if got is None or got["payload"]["S"] != f"{t}-{i}-" + "x" * 200:
                missing.append((t, i))
    assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"


@pytest.mark.skipif(on_rados(), reason="about the RocksDB back end's module and files")
def test_rocksdb_back_end_is_a_module_beside_the_binary(kumo_bin, tmp_path):
    """The RocksDB back end is kumo-rocksdb.so, loaded from beside the executable when a data
    directory is opened: without it a server in memory still runs, and one on a data
    directory refuses to start with a message that says what is missing."""
    lone = tmp_path / "lone"
    lone.mkdir()
    binary = lone / "kumo"
    shutil.copy2(kumo_bin, binary)

    srv = KumoServer(str(binary), str(tmp_path))
    srv.start()
    try:
        assert srv.client().list_tables()["TableNames"] == []
    finally:
        srv.kill()

    data = tmp_path / "data"
    done = subprocess.run([str(binary), "serve", "--port", str(free_port()), "--data-dir",
                           str(data)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert (f"cannot open data directory {data}: cannot load the RocksDB back end "
            "(kumo-rocksdb.so, built with kumo, belongs beside it): "
            f"{lone / 'kumo-rocksdb.so'}: cannot open shared object file") in done.stderr

    # Beside it, the module serves the same data directory.
    shutil.copy2(os.path.join(os.path.dirname(kumo_bin), "kumo-rocksdb.so"), lone)
    srv = KumoServer(str(binary), str(tmp_path), data_dir=data)
    srv.start()
    try:
        srv.client().create_table(**create_table_args("kept"))
        wait_table_active(srv.client(), "kept")
    finally:
        srv.kill()
    srv.start()
    try:
        assert srv.client().list_tables()["TableNames"] == ["kept"]
    finally:
        srv.kill()


@pytest.mark.skipif(on_rados(), reason="RocksDB's lock on a data directory; several front "
                    "ends may share a RADOS pool")
def test_a_data_directory_in_use_refuses_a_second_server(start_server, kumo_bin, tmp_path):
    """RocksDB locks its directory: a second server on it exits with RocksDB's own reason,
    reported by the back end module, and the first keeps serving its data."""
    data = tmp_path / "data"
    first = start_server(data_dir=data)
    first.client().create_table(**create_table_args("held"))
    wait_table_active(first.client(), "held")

    done = subprocess.run([kumo_bin, "serve", "--port", str(free_port()), "--data-dir",
                           str(data)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert (f"cannot open data directory {data}: IO error: While lock file: {data}/LOCK: "
            "Resource temporarily unavailable") in done.stderr
    assert first.client().list_tables()["TableNames"] == ["held"]
