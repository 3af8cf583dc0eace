// Throttling seen by the AWS SDK for JavaScript v3, against a Kumo server started with
// `--capacity enforce --clock manual --admin-port N`.
// Usage: node throttle_retry.mjs ENDPOINT_URL ADMIN_URL
// An on-demand table capped at one write unit a second takes one PutItem. A client with the
// default retry policy and a middleware that moves Kumo's clock one second before every
// retry gets the next PutItem through on its second attempt, after backing off; without the
// middleware the SDK gives up after its 3 attempts with ThrottlingException and the reason
// TableWriteMaxOnDemandThroughputExceeded; a provisioned table answers
// ProvisionedThroughputExceededException. Nothing depends on how long the SDK sleeps.
import assert from "node:assert/strict";
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";

const [endpoint, admin] = process.argv.slice(2);
if (!endpoint || !admin) {
  console.error("usage: node throttle_retry.mjs ENDPOINT_URL ADMIN_URL");
  process.exit(2);
}

const clientOptions = {
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "smokeAccessKey", secretAccessKey: "smokeSecretKey" },
};

async function advanceClock(seconds) {
  const resp = await fetch(`${admin}/clock/advance?seconds=${seconds}`, { method: "POST" });
  assert.equal(resp.status, 200, `clock/advance answered ${resp.status}`);
}

// A client whose retries (not its first attempts) each first move the clock by one second.
// The middleware runs inside the retry loop, where `amz-sdk-request` numbers the attempt.
function clockDrivingClient() {
  const client = new DynamoDBClient(clientOptions);
  client.middlewareStack.addRelativeTo(
    (next) => async (args) => {
      const header = args.request?.headers?.["amz-sdk-request"] ?? "";
      const attempt = Number(/attempt=(\d+)/.exec(header)?.[1] ?? 1);
      if (attempt > 1) await advanceClock(1);
      return next(args);
    },
    { relation: "after", toMiddleware: "retryMiddleware", name: "kumoAdvanceClock" },
  );
  return client;
}

const keySchema = {
  KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
  AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
};

function put(table, pk) {
  return new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } });
}

async function rejects(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail("the request succeeded");
}

async function step(description, fn) {
  await fn();
  console.log(`ok: ${description}`);
}

async function main() {
  const plain = new DynamoDBClient(clientOptions);
  const onDemand = "kumo_throttle_js";
  const provisioned = "kumo_throttle_js_provisioned";

  await step("a provisioned table answers ProvisionedThroughputExceededException", async () => {
    await plain.send(new CreateTableCommand({
      TableName: provisioned, ...keySchema,
      ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 },
    }));
    await plain.send(put(provisioned, "first"));
    const err = await rejects(plain.send(put(provisioned, "second")));
    assert.equal(err.name, "ProvisionedThroughputExceededException");
    assert.equal(err.$metadata.attempts, 3);
    assert.deepEqual(err.ThrottlingReasons, [{
      reason: "TableWriteProvisionedThroughputExceeded",
      resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${provisioned}`,
    }]);
    const out = await clockDrivingClient().send(put(provisioned, "second"));
    assert.equal(out.$metadata.attempts, 2);
  });

  await step("create an on-demand table capped at 1 write unit a second", async () => {
    await plain.send(new CreateTableCommand({
      TableName: onDemand, BillingMode: "PAY_PER_REQUEST", ...keySchema,
      OnDemandThroughput: { MaxWriteRequestUnits: 1 },
    }));
    await plain.send(put(onDemand, "first"));
  });

  await step("a retry after the clock moved succeeds on the second attempt", async () => {
    const out = await clockDrivingClient().send(put(onDemand, "second"));
    assert.equal(out.$metadata.httpStatusCode, 200);
    assert.equal(out.$metadata.attempts, 2);
    assert.ok(out.$metadata.totalRetryDelay > 0, "the SDK did not back off");
  });

  await step("without the clock moving, 3 attempts end in ThrottlingException", async () => {
    const err = await rejects(plain.send(put(onDemand, "third")));
    assert.equal(err.name, "ThrottlingException");
    assert.equal(err.$metadata.httpStatusCode, 400);
    assert.equal(err.$metadata.attempts, 3);
    assert.equal(err.message,
      "Throughput exceeds the maximum OnDemandThroughput configured on table or index");
    assert.deepEqual(err.throttlingReasons, [{
      reason: "TableWriteMaxOnDemandThroughputExceeded",
      resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${onDemand}`,
    }]);
  });

  await step("delete the tables", async () => {
    await plain.send(new DeleteTableCommand({ TableName: onDemand }));
    await plain.send(new DeleteTableCommand({ TableName: provisioned }));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
