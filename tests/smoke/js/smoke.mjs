// Smoke test of a running Kumo server with the AWS SDK for JavaScript v3.
// Usage: node smoke.mjs http://127.0.0.1:PORT
// Creates a table, writes, reads and deletes an item, turns on Time to Live, reads the
// table's stream, runs PartiQL statements (one by one, in a batch and in transactions),
// deletes the table, and checks every response. Exits non-zero on the first mismatch.
import assert from "node:assert/strict";
import {
  BatchExecuteStatementCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ExecuteStatementCommand,
  ExecuteTransactionCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from "@aws-sdk/client-dynamodb";
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from "@aws-sdk/client-dynamodb-streams";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node smoke.mjs ENDPOINT_URL");
  process.exit(2);
}

const clientOptions = {
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "smokeAccessKey", secretAccessKey: "smokeSecretKey" },
  maxAttempts: 1,
};
const client = new DynamoDBClient(clientOptions);
const streams = new DynamoDBStreamsClient(clientOptions);

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
        StreamSpecification: { StreamEnabled: true, StreamViewType: "NEW_AND_OLD_IMAGES" },
      }),
    );
    assert.equal(r.TableDescription.TableName, table);
    assert.ok(["CREATING", "ACTIVE"].includes(r.TableDescription.TableStatus));
    assert.match(r.TableDescription.LatestStreamArn, new RegExp(`:table/${table}/stream/`));
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

  await step("UpdateTimeToLive and DescribeTimeToLive", async () => {
    const r = await client.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { Enabled: true, AttributeName: "expires" },
      }),
    );
    assert.deepEqual(r.TimeToLiveSpecification, { Enabled: true, AttributeName: "expires" });
    const d = await client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    assert.deepEqual(d.TimeToLiveDescription, {
      TimeToLiveStatus: "ENABLED",
      AttributeName: "expires",
    });
  });

  await step("the stream holds the INSERT and REMOVE records, in order", async () => {
    const list = await streams.send(new ListStreamsCommand({ TableName: table }));
    assert.equal(list.Streams.length, 1);
    const arn = list.Streams[0].StreamArn;
    const d = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
    assert.equal(d.StreamDescription.StreamStatus, "ENABLED");
    assert.equal(d.StreamDescription.StreamViewType, "NEW_AND_OLD_IMAGES");
    const shard = d.StreamDescription.Shards[0].ShardId;
    const it = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: arn,
        ShardId: shard,
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    const r = await streams.send(new GetRecordsCommand({ ShardIterator: it.ShardIterator }));
    assert.deepEqual(
      r.Records.map((rec) => rec.eventName),
      ["INSERT", "REMOVE"],
    );
    assert.deepEqual(normalize(r.Records[0].dynamodb.NewImage), normalize(item));
    assert.deepEqual(normalize(r.Records[1].dynamodb.OldImage), normalize(item));
    assert.deepEqual(r.Records[1].dynamodb.Keys, key);
    assert.ok(BigInt(r.Records[0].dynamodb.SequenceNumber) < BigInt(r.Records[1].dynamodb.SequenceNumber));
    assert.ok(r.NextShardIterator, "an open shard always has a next iterator");
  });

  await partiqlSteps();

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

// PartiQL on the same table; `pk` values "pq#..." keep clear of the item above.
async function partiqlSteps() {
  const quoted = `"${table}"`;
  const pq1 = { pk: { S: "pq#1" }, sk: { N: "1" } };
  const statement = (Statement, ...Parameters) =>
    Parameters.length ? { Statement, Parameters } : { Statement };
  const run = (text, ...params) =>
    client.send(new ExecuteStatementCommand(statement(text, ...params)));

  await step("ExecuteStatement INSERT with parameters returns no items", async () => {
    const r = await run(`INSERT INTO ${quoted} VALUE {'pk': ?, 'sk': ?, 'label': ?, 'n': 1}`,
      pq1.pk, pq1.sk, { S: "Ada" });
    assert.deepEqual(r.Items, []);
  });

  await step("ExecuteStatement SELECT returns the inserted item", async () => {
    const r = await run(`SELECT * FROM ${quoted} WHERE pk = ? AND sk = ?`, pq1.pk, pq1.sk);
    assert.deepEqual(r.Items, [{ ...pq1, label: { S: "Ada" }, n: { N: "1" } }]);
  });

  await step("ExecuteStatement INSERT of an existing key is a DuplicateItemException", async () => {
    await assert.rejects(run(`INSERT INTO ${quoted} VALUE {'pk': ?, 'sk': ?}`, pq1.pk, pq1.sk), {
      name: "DuplicateItemException",
      message: "Duplicate primary key exists in table",
    });
  });

  await step("ExecuteStatement UPDATE ... RETURNING ALL NEW * returns the new item", async () => {
    const r = await run(
      `UPDATE ${quoted} SET n = n + 1 WHERE pk = ? AND sk = ? RETURNING ALL NEW *`,
      pq1.pk, pq1.sk);
    assert.deepEqual(r.Items, [{ ...pq1, label: { S: "Ada" }, n: { N: "2" } }]);
  });

  await step("BatchExecuteStatement runs each write and reports each member", async () => {
    const r = await client.send(
      new BatchExecuteStatementCommand({
        Statements: [
          statement(`INSERT INTO ${quoted} VALUE {'pk': 'pq#2', 'sk': 2}`),
          statement(`INSERT INTO ${quoted} VALUE {'pk': 'pq#3', 'sk': 3}`),
          statement(`INSERT INTO ${quoted} VALUE {'pk': ?, 'sk': ?}`, pq1.pk, pq1.sk),
        ],
      }),
    );
    assert.deepEqual(r.Responses, [
      { TableName: table },
      { TableName: table },
      {
        TableName: table,
        Error: { Code: "DuplicateItem", Message: "Duplicate primary key exists in table" },
      },
    ]);
  });

  await step("BatchExecuteStatement reads items by key, in order", async () => {
    const r = await client.send(
      new BatchExecuteStatementCommand({
        Statements: [
          statement(`SELECT * FROM ${quoted} WHERE pk = 'pq#2' AND sk = 2`),
          statement(`SELECT label FROM ${quoted} WHERE pk = ? AND sk = ?`, pq1.pk, pq1.sk),
          statement(`SELECT * FROM ${quoted} WHERE pk = 'pq#9' AND sk = 9`),
        ],
      }),
    );
    assert.deepEqual(r.Responses, [
      { TableName: table, Item: { pk: { S: "pq#2" }, sk: { N: "2" } } },
      { TableName: table, Item: { label: { S: "Ada" } } },
      { TableName: table },
    ]);
  });

  await step("ExecuteTransaction applies writes and answers empty Responses", async () => {
    const r = await client.send(
      new ExecuteTransactionCommand({
        TransactStatements: [
          statement(`UPDATE ${quoted} SET label = ? WHERE pk = 'pq#2' AND sk = 2`, { S: "two" }),
          statement(`DELETE FROM ${quoted} WHERE pk = 'pq#3' AND sk = 3`),
          statement(`EXISTS(SELECT * FROM ${quoted} WHERE pk = ? AND sk = ? AND n = 2)`,
            pq1.pk, pq1.sk),
        ],
      }),
    );
    assert.deepEqual(r.Responses, []);
  });

  await step("ExecuteTransaction reads answer Item or nothing per statement", async () => {
    const r = await client.send(
      new ExecuteTransactionCommand({
        TransactStatements: [
          statement(`SELECT * FROM ${quoted} WHERE pk = 'pq#2' AND sk = 2`),
          statement(`SELECT * FROM ${quoted} WHERE pk = 'pq#3' AND sk = 3`),
        ],
      }),
    );
    assert.deepEqual(r.Responses, [
      { Item: { pk: { S: "pq#2" }, sk: { N: "2" }, label: { S: "two" } } },
      {},
    ]);
  });

  await step("ExecuteTransaction throws TransactionCanceledException with reasons", async () => {
    await assert.rejects(
      client.send(
        new ExecuteTransactionCommand({
          TransactStatements: [
            statement(`INSERT INTO ${quoted} VALUE {'pk': 'pq#4', 'sk': 4}`),
            statement(`UPDATE ${quoted} SET n = 0 WHERE pk = ? AND sk = ? AND n = 5`,
              pq1.pk, pq1.sk),
          ],
        }),
      ),
      (err) => {
        assert.equal(err.name, "TransactionCanceledException");
        assert.deepEqual(err.CancellationReasons, [
          { Code: "None" },
          { Code: "ConditionalCheckFailed", Message: "The conditional request failed" },
        ]);
        return true;
      },
    );
    const r = await run(`SELECT * FROM ${quoted} WHERE pk = 'pq#4' AND sk = 4`);
    assert.deepEqual(r.Items, []);
  });

  await step("ExecuteStatement DELETE removes the item", async () => {
    const r = await run(`DELETE FROM ${quoted} WHERE pk = ? AND sk = ?`, pq1.pk, pq1.sk);
    assert.deepEqual(r.Items, []);
    const after = await run(`SELECT * FROM ${quoted} WHERE pk = ? AND sk = ?`, pq1.pk, pq1.sk);
    assert.deepEqual(after.Items, []);
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
  streams.destroy();
}
