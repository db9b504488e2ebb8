import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetFunctionCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { lambdaControl, resetClients } from "./clients.ts";

// Issue 26: a push fan-out of deploys meets Lambda's control-plane rate limit. Throttling cannot be caused
// locally, so a stand-in for Lambda's endpoint answers what Lambda answers when throttling (429,
// TooManyRequestsException) the first `throttles` times, then the function.
let server: Server;
let requests = 0;
let throttles = 0;
const saved = {
  endpoint: process.env.AWS_ENDPOINT_URL_LAMBDA,
  key: process.env.AWS_ACCESS_KEY_ID,
  secret: process.env.AWS_SECRET_ACCESS_KEY,
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
    req.resume();
    requests++;
    if (requests <= throttles) {
      res.writeHead(429, {
        "content-type": "application/json",
        "x-amzn-errortype": "TooManyRequestsException",
      });
      res.end(JSON.stringify({ Type: "User", message: "Rate exceeded", Reason: "CallerRateLimitExceeded" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ Configuration: { FunctionName: "agent-rt-x" } }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  process.env.AWS_ENDPOINT_URL_LAMBDA = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID ??= "test";
  process.env.AWS_SECRET_ACCESS_KEY ??= "test";
  resetClients();
});
afterAll(() => {
  server.close();
  for (const [k, v] of [
    ["AWS_ENDPOINT_URL_LAMBDA", saved.endpoint],
    ["AWS_ACCESS_KEY_ID", saved.key],
    ["AWS_SECRET_ACCESS_KEY", saved.secret],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  resetClients();
});

const getFunction = (client: LambdaClient) =>
  client.send(new GetFunctionCommand({ FunctionName: "agent-rt-x" }));

describe("the deploys' Lambda control-plane client", () => {
  it("rides out throttling that the SDK's default three attempts give up on, backing off between attempts", async () => {
    requests = 0;
    throttles = 3;
    const plain = new LambdaClient({ endpoint: process.env.AWS_ENDPOINT_URL_LAMBDA, region: "us-east-1" });
    await expect(getFunction(plain)).rejects.toMatchObject({ name: "TooManyRequestsException" });
    expect(requests).toBe(3);

    requests = 0;
    throttles = 5;
    const started = Date.now();
    const out = await getFunction(lambdaControl());
    expect(out.Configuration?.FunctionName).toBe("agent-rt-x");
    expect(requests).toBe(6);
    // Backed off, not hammered: five retries after throttles wait (randomly) some time in all.
    expect(Date.now() - started).toBeGreaterThan(100);
  }, 120_000);
});
