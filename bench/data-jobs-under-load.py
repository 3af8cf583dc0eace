#!/usr/bin/env python3
"""What a data job costs the requests that run meanwhile, measured in one run.

  bench/data-jobs-under-load.py import [--build build] [--items 1000000] ...
  bench/data-jobs-under-load.py backup [--build build] [--gib 1] ...

Each mode starts one Kumo server on a fresh RocksDB data directory (under --workdir), loads
a table `bench` for the request load with kumo-bench, and runs the same open-loop
kumo-bench load twice: alone (the baseline), then while the job runs. It prints both
reports' latencies side by side, and what the job did.

import: writes --items items of about --item-bytes bytes (DynamoDB JSON, in files of 50,000
  lines) into the local S3, then ImportTable while a GetItem load runs on `bench`; reports
  the import's items/s (ImportedItemCount over EndTime - StartTime). With --export, then
  also runs ExportTableToPointInTime of the imported table while the GetItem load runs.
backup: imports a table of about --gib GiB (items of about 1,000 random bytes, which do not
  compress), then CreateBackup of it while a PutItem load runs on `bench`; reports the
  backup's time to AVAILABLE, the longest PutItem latency and its p99, against the same
  load without a backup, and the data directory's size.

Needs boto3 (the control-plane calls) and a build with kumo and kumo-bench.
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import boto3
from botocore.config import Config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "bench-bucket"
LINES_PER_FILE = 50_000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, build, workdir, extra):
        self.port = free_port()
        self.data = os.path.join(workdir, "data")
        self.s3 = os.path.join(workdir, "s3")
        os.makedirs(self.s3, exist_ok=True)
        self.log = open(os.path.join(workdir, "kumo.log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(build, "kumo"), "serve", "--port", str(self.port), "--data-dir",
             self.data, "--export-root", self.s3, *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(400):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise SystemExit("kumo did not start; see " + self.log.name)
        self.client = boto3.client(
            "dynamodb", endpoint_url=f"http://127.0.0.1:{self.port}", region_name="us-east-1",
            aws_access_key_id="AKIDBENCH", aws_secret_access_key="bench",
            config=Config(retries={"max_attempts": 1}, read_timeout=120))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_cmd(args, server, workload, extra=()):
    return [os.path.join(args.build, "bench", "kumo-bench"), "--endpoint",
            f"127.0.0.1:{server.port}", "--workload", workload, "--items", str(args.load_items),
            "--connections", str(args.connections), "--server-pid", str(server.proc.pid),
            "--json", *extra]


def preload(args, server):
    subprocess.run(bench_cmd(args, server, "getitem",
                             ["--duration", "0", "--preload-batch", "25"]),
                   check=True, stdout=subprocess.DEVNULL)


def run_load(args, server, workload, label):
    """The open-loop load, measured for --duration after --warmup; returns its report."""
    cmd = bench_cmd(args, server, workload,
                    ["--no-preload", "--rate", str(args.rate), "--duration", f"{args.duration}s",
                     "--warmup", f"{args.warmup}s", "--label", label])
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"kumo-bench failed ({out.returncode}): {out.stdout}")


def write_source(s3, prefix, items, item_bytes, random_pad):
    """DynamoDB JSON lines of items pk = i<n>, pad of about item_bytes - 20 bytes."""
    folder = os.path.join(s3, BUCKET, prefix)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    pad_len = max(8, item_bytes - 20)
    fixed = "x" * pad_len
    for start in range(0, items, LINES_PER_FILE):
        lines = []
        for i in range(start, min(items, start + LINES_PER_FILE)):
            pad = base64.b64encode(os.urandom(pad_len * 3 // 4 + 1)).decode()[:pad_len] \
                if random_pad else fixed
            lines.append(f'{{"Item":{{"pk":{{"S":"i{i:09d}"}},"pad":{{"S":"{pad}"}}}}}}\n')
        with open(os.path.join(folder, f"part-{start // LINES_PER_FILE:05d}.json"), "w") as f:
            f.writelines(lines)


def start_import(server, table, prefix):
    return server.client.import_table(
        ClientToken=f"bench-{table}-{time.time()}",
        S3BucketSource={"S3Bucket": BUCKET, "S3KeyPrefix": prefix},
        InputFormat="DYNAMODB_JSON",
        TableCreationParameters={
            "TableName": table, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]},
    )["ImportTableDescription"]["ImportArn"]


def wait_import(server, arn):
    while True:
        d = server.client.describe_import(ImportArn=arn)["ImportTableDescription"]
        if d["ImportStatus"] != "IN_PROGRESS":
            return d
        time.sleep(0.2)


def import_rate(d):
    seconds = (d["EndTime"] - d["StartTime"]).total_seconds()
    return d["ImportedItemCount"] / seconds, seconds


def latency(report):
    lat = report["latency_ms"]
    return (f"ok {report['ok']:>7} err {report['errors']:>3} p50 {lat['p50']:8.2f} "
            f"p99 {lat['p99']:8.2f} p99.9 {lat['p999']:8.2f} max {lat['max']:8.2f} ms "
            f"(server {report.get('server_cpu_pct', 0):5.1f}% cpu, others "
            f"{report.get('others_cpu_pct', 0):5.1f}%)")


def during(args, server, workload, label, job):
    """The load, with `job` started --lead seconds into its warm-up; returns both."""
    result = {}

    def load():
        result["report"] = run_load(args, server, workload, label)

    t = threading.Thread(target=load)
    t.start()
    time.sleep(args.lead)
    result["job"] = job()
    t.join()
    return result["report"], result["job"]


def du(path):
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def mode_import(args, server):
    write_source(server.s3, "src", args.items, args.item_bytes, False)
    print(f"source: {args.items} items of about {args.item_bytes} bytes", flush=True)
    base = run_load(args, server, "getitem", "baseline")
    print("getitem, no import    ", latency(base), flush=True)
    arn = {}

    def job():
        arn["arn"] = start_import(server, "imported", "src")

    load, _ = during(args, server, "getitem", "import", job)
    done = wait_import(server, arn["arn"])
    print("getitem, during import", latency(load), flush=True)
    rate, seconds = import_rate(done)
    print(f"import: {done['ImportStatus']} {done['ImportedItemCount']} items in {seconds:.1f} s: "
          f"{rate:.0f} items/s", flush=True)
    if not args.export:
        return
    server.client.update_continuous_backups(
        TableName="imported", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    base = run_load(args, server, "getitem", "baseline")
    print("getitem, no export    ", latency(base), flush=True)
    exp = {}
    table_arn = server.client.describe_table(TableName="imported")["Table"]["TableArn"]

    def export_job_arn():
        exp["arn"] = server.client.export_table_to_point_in_time(
            TableArn=table_arn, S3Bucket=BUCKET, S3Prefix="out",
            ExportFormat="DYNAMODB_JSON")["ExportDescription"]["ExportArn"]

    load, _ = during(args, server, "getitem", "export", export_job_arn)
    while True:
        d = server.client.describe_export(ExportArn=exp["arn"])["ExportDescription"]
        if d["ExportStatus"] != "IN_PROGRESS":
            break
        time.sleep(0.2)
    print("getitem, during export", latency(load), flush=True)
    seconds = (d["EndTime"] - d["StartTime"]).total_seconds()
    print(f"export: {d['ExportStatus']} {d.get('ItemCount', 0)} items in {seconds:.1f} s",
          flush=True)


def mode_backup(args, server):
    items = int(args.gib * (1 << 30) / 1000)
    write_source(server.s3, "big", items, 1000, True)
    done = wait_import(server, start_import(server, "big", "big"))
    rate, seconds = import_rate(done)
    print(f"loaded: {done['ImportedItemCount']} items of about 1,000 bytes in {seconds:.1f} s",
          flush=True)
    shutil.rmtree(os.path.join(server.s3, BUCKET, "big"), ignore_errors=True)
    # The load's memtables and compactions settle first.
    time.sleep(args.settle)
    print(f"data directory: {du(server.data) / (1 << 30):.2f} GiB", flush=True)
    base = run_load(args, server, "putitem", "baseline")
    print("putitem, no backup    ", latency(base), flush=True)
    info = {}

    def job():
        t0 = time.time()
        arn = server.client.create_backup(TableName="big", BackupName="bench")[
            "BackupDetails"]["BackupArn"]
        info["answer_s"] = time.time() - t0
        info["arn"] = arn
        info["t0"] = t0

    load, _ = during(args, server, "putitem", "backup", job)
    while True:
        d = server.client.describe_backup(BackupArn=info["arn"])["BackupDescription"]
        status = d["BackupDetails"]["BackupStatus"]
        if status != "CREATING":
            break
        time.sleep(0.2)
    took = time.time() - info["t0"]
    print("putitem, during backup", latency(load), flush=True)
    print(f"backup: {status} (answer in {info['answer_s'] * 1000:.0f} ms, AVAILABLE within "
          f"{took:.1f} s; the load ran {args.duration} s from {args.lead - args.warmup:+.1f} s)",
          flush=True)
    print(f"data directory after: {du(server.data) / (1 << 30):.2f} GiB", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["import", "backup"])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--workdir", default="/tmp/kumo-data-jobs-bench")
    p.add_argument("--items", type=int, default=1_000_000, help="items imported (import)")
    p.add_argument("--item-bytes", type=int, default=200)
    p.add_argument("--gib", type=float, default=1.0, help="size of the backed-up table (backup)")
    p.add_argument("--export", action="store_true", help="then an export too (import)")
    p.add_argument("--load-items", type=int, default=100_000, help="items of table bench")
    p.add_argument("--rate", type=int, default=2000, help="requests/s of the open loop")
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--warmup", type=float, default=2)
    p.add_argument("--lead", type=float, default=2, help="job starts this long into the load")
    p.add_argument("--settle", type=float, default=10)
    p.add_argument("--keep", action="store_true", help="keep --workdir afterwards")
    p.add_argument("--server-flag", action="append", default=[],
                   help="extra flag for kumo serve (repeatable)")
    args = p.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    server = Server(args.build, args.workdir, args.server_flag)
    try:
        print(f"kumo pid {server.proc.pid}, load: {args.rate}/s open loop, {args.connections} "
              f"connections, {args.duration} s after {args.warmup} s warm-up; "
              f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}", flush=True)
        preload(args, server)
        if args.mode == "import":
            mode_import(args, server)
        else:
            mode_backup(args, server)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
