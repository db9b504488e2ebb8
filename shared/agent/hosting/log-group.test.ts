import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StandIn, standInEndpoint } from "../../../test/helpers/aws-stand-in.ts";
import { ensureRuntimeLogGroup, removeRuntimeLogGroup } from "./log-group.ts";

// Issue 26: runtime log groups never expired. CloudWatch Logs has no local stand-in in the local cloud, so a
// stand-in endpoint records the calls and answers as CloudWatch Logs does (JSON 1.1, typed errors).
let standIn: StandIn;
const calls: { target: string; body: Record<string, unknown> }[] = [];
const failWith = new Map<string, string>();
const savedDays = process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS;

beforeAll(async () => {
  standIn = await standInEndpoint("AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", (req, res) => {
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
});
afterAll(async () => {
  if (savedDays === undefined) delete process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS;
  else process.env.AGENT_RUNTIME_LOG_RETENTION_DAYS = savedDays;
  await standIn.close();
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
