import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:net";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newBackendToken } from "../infra/local/backend-token.ts";
import { startDynamoDbOnAPort } from "../infra/local/cloud.ts";
import { DynamoPortInUse, dynamoDbLocalClient, LOOPBACK, startDynamoDb } from "../infra/local/dynamodb.ts";
import { freePort } from "../infra/local/http-util.ts";

// The local cloud picks DynamoDB Local's port by probing for a free one; something may take it before the JVM
// binds (an outgoing connection's ephemeral port). DynamoDB Local's JVM does not exit then — a start used to
// wait out its 60 s and fail the platform. Now the bind failure fails the start at once and another port is tried.
let taken: Server;
let takenPort: number;
beforeAll(async () => {
  taken = createServer((s) => s.destroy());
  await new Promise<void>((r) => taken.listen(0, LOOPBACK, r));
  takenPort = (taken.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => taken.close(() => r())));

/** DynamoDB Local JVMs started for `port` that are still running. */
const jvmsOn = (port: number) =>
  execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes("DynamoDBLocal") && l.includes(`-port ${port} `)).length;

describe("DynamoDB Local's port", () => {
  it("taken: the start fails at once saying so, and its JVM is stopped", async () => {
    const t0 = performance.now();
    await expect(startDynamoDb({ port: takenPort, token: newBackendToken() })).rejects.toBeInstanceOf(
      DynamoPortInUse,
    );
    // Well inside the 60 s a start waits for an answer: the failure was read, not waited out.
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(jvmsOn(takenPort)).toBe(0);
  });

  it("taken when the cloud picked it: the cloud tries another free port", async () => {
    const picks: number[] = [];
    const token = newBackendToken();
    const ddb = await startDynamoDbOnAPort(undefined, undefined, token, async () => {
      const port = picks.length ? await freePort(LOOPBACK) : takenPort;
      picks.push(port);
      return port;
    });
    try {
      expect(picks).toHaveLength(2);
      expect(picks[0]).toBe(takenPort);
      expect(ddb.endpoint).toBe(`http://${LOOPBACK}:${picks[1]}`);
      const client = dynamoDbLocalClient({ endpoint: ddb.endpoint, token });
      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
      client.destroy();
    } finally {
      await ddb.stop();
    }
  });
});
