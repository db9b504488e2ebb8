import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resetClients } from "../../aws/clients.ts";
import { ensureRuntimeLogGroup, removeRuntimeLogGroup } from "./log-group.ts";

// Issue 26: runtime log groups never expired. CloudWatch Logs has no local stand-in in the local cloud, so a
// stand-in endpoint records the calls and answers as CloudWatch Logs does (JSON 1.1, typed errors).
let server: Server;
const calls: { target: string; body: Record<string, unknown> }[] = [];
const failWith = new Map<string, string>();
const saved = {
  endpoint: process.env.AWS_ENDPOINT_URL_CLOUDWATCH_LOGS,
  days: process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS,
};

// In Lambda AWS_REGION is always set; the platform's clients take the region from the SDK's own resolution.
beforeAll(() => {
  vi.stubEnv("AWS_REGION", "us-east-1");
});
afterAll(() => {
  vi.unstubAllEnvs();
});
beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const target = String(req.headers["x-amz-target"]).replace(/^Logs_20140328\./, "");
      calls.push({ target, body: JSON.parse(text || "{}") });
      const error = failWith.get(target);
      res.writeHead(error ? 400 : 200, { "content-type": "application/x-amz-json-1.1" });
      res.end(JSON.stringify(error ? { __type: error, message: error } : {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  process.env.AWS_ENDPOINT_URL_CLOUDWATCH_LOGS = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID ??= "test";
  process.env.AWS_SECRET_ACCESS_KEY ??= "test";
  resetClients();
});
afterAll(() => {
  server.close();
  for (const [k, v] of [
    ["AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", saved.endpoint],
    ["AGENT_RUNTIME_LOG_RETENTION_DAYS", saved.days],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  resetClients();
});

describe("a runtime's log group", () => {
  it("is made by the deploy with a retention (30 days by default), and a group that exists gets it too", async () => {
    calls.length = 0;
    failWith.clear();
    expect(await ensureRuntimeLogGroup("d-1")).toBe("/aws/lambda/agent-rt-d-1");
    failWith.set("CreateLogGroup", "ResourceAlreadyExistsException");
    process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS = "90";
    await ensureRuntimeLogGroup("d-1");
    expect(calls).toEqual([
      { target: "CreateLogGroup", body: { logGroupName: "/aws/lambda/agent-rt-d-1" } },
      {
        target: "PutRetentionPolicy",
        body: { logGroupName: "/aws/lambda/agent-rt-d-1", retentionInDays: 30 },
      },
      { target: "CreateLogGroup", body: { logGroupName: "/aws/lambda/agent-rt-d-1" } },
      {
        target: "PutRetentionPolicy",
        body: { logGroupName: "/aws/lambda/agent-rt-d-1", retentionInDays: 90 },
      },
    ]);
  });

  it("refuses a retention CloudWatch Logs does not accept, naming those it does", async () => {
    calls.length = 0;
    process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS = "10";
    failWith.clear();
    await expect(ensureRuntimeLogGroup("d-1")).rejects.toThrow(
      /AGENT_RUNTIME_LOG_RETENTION_DAYS must be one of/,
    );
    expect(calls.filter((c) => c.target === "PutRetentionPolicy")).toEqual([]);
    process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS = "30";
  });

  it("goes with its deployment; one already gone is no error", async () => {
    calls.length = 0;
    failWith.clear();
    await removeRuntimeLogGroup("d-2");
    failWith.set("DeleteLogGroup", "ResourceNotFoundException");
    await removeRuntimeLogGroup("d-2");
    expect(calls.map((c) => c.target)).toEqual(["DeleteLogGroup", "DeleteLogGroup"]);
  });
});
