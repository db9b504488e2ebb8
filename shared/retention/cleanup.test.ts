import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetClients } from "../aws/clients.ts";
import { setEnvironment } from "../config.ts";
import { cleanUpExpiredRuns } from "./cleanup.ts";
import { TTL_IDENTITY } from "./ttl-stream.ts";

// A failed cleanup is never dropped: the batch names its earliest failed record, so the stream retries from there.
const expired = (runId: string, seq: string) => ({
  eventName: "REMOVE",
  userIdentity: { ...TTL_IDENTITY },
  dynamodb: { Keys: { PK: { S: `t1#${runId}` }, SK: { S: "run" } }, SequenceNumber: seq },
});

describe("expired runs' cleanup", () => {
  let restore = () => {};
  beforeAll(() => {
    // Nothing listens on the discard port: every S3 call fails.
    restore = setEnvironment({
      AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "x",
      AWS_SECRET_ACCESS_KEY: "x",
      AWS_MAX_ATTEMPTS: "1",
    });
    resetClients();
  });
  afterAll(() => {
    restore();
    resetClients();
  });

  it("reports the earliest failed record of the batch as the one to retry from", async () => {
    const event = {
      Records: [
        { eventName: "INSERT", dynamodb: { SequenceNumber: "1" } },
        expired("r2", "2"),
        expired("r3", "3"),
      ],
    };
    expect(await cleanUpExpiredRuns(event)).toEqual({
      batchItemFailures: [{ itemIdentifier: "2" }],
      runs: 0,
      attachments: 0,
    });
  });

  it("fails the whole invocation when the failed record has no sequence number", async () => {
    const { dynamodb, ...rest } = expired("r1", "1");
    const record = { ...rest, dynamodb: { Keys: dynamodb.Keys } };
    await expect(cleanUpExpiredRuns({ Records: [record] })).rejects.toThrow(/could not be cleaned up/);
  });
});
