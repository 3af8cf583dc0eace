#!/usr/bin/env python3
"""Writes a steady stream of orders into an on-demand table `orders` and shows what a
low-cardinality GSI key does to it.

    orders.py --design status            # GSI by_status: HASH status, RANGE created_at
    orders.py --design customer-status   # GSI by_customer_status: HASH customer_id + status

Every second it sends `--rate` new orders (about 3.5 KB each, 70 % of them PENDING) with
BatchWriteItem, 25 at a time, after resending what the previous second left unprocessed, and
prints how the backlog grows. On a server with the manual clock (`kumo serve --clock manual
--admin-port N`) it moves the clock one second after each second's writes, so two minutes
of load take as long as the requests do; on the wall clock it paces itself. At the end it
sends one PutItem with retries off and prints DynamoDB's answer."""

import argparse
import json
import random
import sys
import time
import urllib.request

import boto3
import botocore.config
from botocore.exceptions import ClientError

TABLE = "orders"
STATUSES = ["PENDING"] * 7 + ["SHIPPED", "DELIVERED", "CANCELLED"]  # 70 % PENDING
ORDER_BYTES = 3584  # 3.5 KB: 4 write units on the table and 4 on a GSI projecting ALL


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--design", choices=["status", "customer-status"], default="status")
    p.add_argument("--rate", type=int, default=400, help="new orders a second (400)")
    p.add_argument("--seconds", type=int, default=120, help="seconds of load (120)")
    p.add_argument("--customers", type=int, default=500, help="distinct customers (500)")
    p.add_argument("--endpoint", default="http://127.0.0.1:8000", help="DynamoDB endpoint")
    p.add_argument("--admin", default="http://127.0.0.1:8001", help="Kumo's admin listener")
    p.add_argument("--seed", type=int, default=25)
    return p.parse_args()


def client(endpoint):
    """A client that never retries: throttles are seen as they happen."""
    return boto3.client(
        "dynamodb", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="example", aws_secret_access_key="example",
        config=botocore.config.Config(retries={"total_max_attempts": 1}))


class Clock:
    """Kumo's engine clock, read and moved through the admin listener."""

    def __init__(self, admin):
        self.admin = admin.rstrip("/")
        with urllib.request.urlopen(self.admin + "/clock") as resp:
            clock = json.load(resp)
        self.manual = clock["mode"] == "manual"
        self.now = clock["now"]

    def next_second(self):
        if self.manual:
            req = urllib.request.Request(self.admin + "/clock/advance?seconds=1", method="POST")
            with urllib.request.urlopen(req) as resp:
                self.now = json.load(resp)["now"]
        else:
            self.now += 1
            time.sleep(max(0.0, self.now - time.time()))


def create_table(ddb, design):
    if design == "status":
        index = {"IndexName": "by_status",
                 "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                               {"AttributeName": "created_at", "KeyType": "RANGE"}]}
    else:
        index = {"IndexName": "by_customer_status",
                 "KeySchema": [{"AttributeName": "customer_id", "KeyType": "HASH"},
                               {"AttributeName": "status", "KeyType": "HASH"},
                               {"AttributeName": "created_at", "KeyType": "RANGE"}]}
    index["Projection"] = {"ProjectionType": "ALL"}
    try:
        ddb.delete_table(TableName=TABLE)
        ddb.get_waiter("table_not_exists").wait(TableName=TABLE,
                                                WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    except ddb.exceptions.ResourceNotFoundException:
        pass
    ddb.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "order_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in
                              ["order_id"] + [k["AttributeName"] for k in index["KeySchema"]]],
        GlobalSecondaryIndexes=[index])
    ddb.get_waiter("table_exists").wait(TableName=TABLE,
                                        WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    return index["IndexName"]


class Orders:
    """Orders of `customers` customers, numbered in order, each padded with line items to
    ORDER_BYTES."""

    def __init__(self, customers, seed):
        self.customers = customers
        self.random = random.Random(seed)
        self.count = 0

    def next(self, now):
        self.count += 1
        order = {
            "order_id": {"S": f"order-{self.count:08d}"},
            "customer_id": {"S": f"customer-{self.random.randrange(self.customers):04d}"},
            "status": {"S": self.random.choice(STATUSES)},
            "created_at": {"S": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
                           + f".{self.count % 1000000:06d}Z"},
        }
        # DynamoDB's item size: names and values; a list adds 3 bytes and 1 per element.
        size = sum(len(k) + len(v["S"]) for k, v in order.items()) + len("lines") + 3 + 1
        order["lines"] = {"L": [{"S": "x" * (ORDER_BYTES - size)}]}
        return order


def write_second(ddb, requests):
    """Sends `requests` 25 at a time; returns (written, unprocessed requests, refused calls)."""
    written, unprocessed, refused = 0, [], 0
    for i in range(0, len(requests), 25):
        chunk = requests[i:i + 25]
        try:
            out = ddb.batch_write_item(RequestItems={TABLE: chunk})
        except ClientError as e:
            if e.response["Error"]["Code"] not in ("ThrottlingException",
                                                   "ProvisionedThroughputExceededException"):
                raise
            refused += 1
            unprocessed += chunk
            continue
        left = out.get("UnprocessedItems", {}).get(TABLE, [])
        written += len(chunk) - len(left)
        unprocessed += left
    return written, unprocessed, refused


def probe(ddb, orders, now):
    """One PutItem of a PENDING order with retries off: DynamoDB's answer."""
    order = orders.next(now)
    order["status"] = {"S": "PENDING"}
    try:
        ddb.put_item(TableName=TABLE, Item=order)
        print("PutItem of one more PENDING order: accepted")
    except ClientError as e:
        err = e.response
        reasons = err.get("throttlingReasons") or err.get("ThrottlingReasons")
        print(f"PutItem of one more PENDING order: {err['Error']['Code']}")
        print(f"  message: {err['Error']['Message']}")
        for r in reasons or []:
            print(f"  reason:  {r['reason']}  {r['resource']}")


def main():
    args = parse_args()
    ddb = client(args.endpoint)
    clock = Clock(args.admin)
    index = create_table(ddb, args.design)
    print(f"table {TABLE}, GSI {index}: {args.rate} orders/s for {args.seconds} s "
          f"({'manual' if clock.manual else 'wall'} clock)")
    orders = Orders(args.customers, args.seed)
    backlog, total_written, total_refused = [], 0, 0
    for second in range(1, args.seconds + 1):
        requests = backlog + [{"PutRequest": {"Item": orders.next(clock.now)}}
                              for _ in range(args.rate)]
        written, backlog, refused = write_second(ddb, requests)
        total_written += written
        total_refused += refused
        if second % 10 == 0 or second == 1:
            print(f"  second {second:4d}: {written:4d} written, {len(backlog):6d} waiting, "
                  f"{refused} batch calls refused whole")
        if second == args.seconds:
            probe(ddb, orders, clock.now)
        clock.next_second()
    print(f"{total_written} orders written, {len(backlog)} still waiting, "
          f"{total_refused} batch calls refused whole")
    return 0


if __name__ == "__main__":
    sys.exit(main())
