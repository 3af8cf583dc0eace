// Smoke test of a running Kumo server with the AWS SDK for JavaScript v3.
// Usage: node smoke.mjs http://127.0.0.1:PORT
// Creates a table, writes, reads and deletes an item, deletes the table, and checks every
// response. Exits non-zero on the first mismatch.
import assert from "node:assert/strict";
import {
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node smoke.mjs ENDPOINT_URL");
  process.exit(2);
}

const client = new DynamoDBClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "smokeAccessKey", secretAccessKey: "smokeSecretKey" },
  maxAttempts: 1,
});

const table = "kumo_smoke_js";
const key = { pk: { S: "user#1" }, sk: { N: "42" } };
const blob = new Uint8Array([0, 1, 2, 127, 128, 254, 255]);
const item = {
  ...key,
  name: { S: "Ada 雲 ☁" },
  score: { N: "-3.14" },
  big: { N: "12345678901234567890123456789012345678" },
  blob: { B: blob },
  active: { BOOL: true },
  nothing: { NULL: true },
  tags: { SS: ["b", "a"] },
  nums: { NS: ["1", "2.5"] },
  nested: { M: { list: { L: [{ N: "1" }, { S: "x" }, { BOOL: false }] } } },
};

// Binary values come back as Uint8Array and set members in any order: make both plain.
function normalize(value) {
  if (value instanceof Uint8Array) return { bytes: Array.from(value) };
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = ["SS", "NS"].includes(k) ? [...v].sort() : normalize(v);
    }
    return out;
  }
  return value;
}

async function step(description, fn) {
  await fn();
  console.log(`ok: ${description}`);
}

async function main() {
  await step("CreateTable returns the table description", async () => {
    const r = await client.send(
      new CreateTableCommand({
        TableName: table,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "N" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    assert.equal(r.TableDescription.TableName, table);
    assert.ok(["CREATING", "ACTIVE"].includes(r.TableDescription.TableStatus));
  });

  await step("DescribeTable shows the table ACTIVE", async () => {
    const r = await client.send(new DescribeTableCommand({ TableName: table }));
    assert.equal(r.Table.TableName, table);
    assert.equal(r.Table.TableStatus, "ACTIVE");
  });

  await step("ListTables lists the table", async () => {
    const r = await client.send(new ListTablesCommand({}));
    assert.ok(r.TableNames.includes(table), `TableNames: ${r.TableNames}`);
  });

  await step("PutItem returns no attributes", async () => {
    const r = await client.send(new PutItemCommand({ TableName: table, Item: item }));
    assert.equal(r.Attributes, undefined);
  });

  await step("GetItem returns the item exactly", async () => {
    const r = await client.send(
      new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }),
    );
    assert.ok(r.Item, "no Item in the GetItem response");
    assert.ok(r.Item.blob.B instanceof Uint8Array, "binary attribute is not a Uint8Array");
    assert.deepEqual(Array.from(r.Item.blob.B), Array.from(blob));
    assert.equal(r.Item.sk.N, "42");
    assert.equal(r.Item.score.N, "-3.14");
    assert.equal(r.Item.big.N, "12345678901234567890123456789012345678");
    assert.deepEqual(normalize(r.Item), normalize(item));
  });

  await step("DeleteItem returns no attributes", async () => {
    const r = await client.send(new DeleteItemCommand({ TableName: table, Key: key }));
    assert.equal(r.Attributes, undefined);
  });

  await step("GetItem after DeleteItem returns no Item", async () => {
    const r = await client.send(
      new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }),
    );
    assert.equal(r.Item, undefined);
  });

  await step("DeleteTable returns the table description", async () => {
    const r = await client.send(new DeleteTableCommand({ TableName: table }));
    assert.equal(r.TableDescription.TableName, table);
  });

  await step("DescribeTable of a deleted table throws ResourceNotFoundException", async () => {
    await assert.rejects(client.send(new DescribeTableCommand({ TableName: table })), {
      name: "ResourceNotFoundException",
    });
  });
}

try {
  await main();
  console.log("js smoke: all checks passed");
} catch (err) {
  console.error("js smoke: FAIL:", err);
  process.exitCode = 1;
} finally {
  client.destroy();
}
