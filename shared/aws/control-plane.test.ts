import { GetFunctionCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type StandIn, standInEndpoint } from "../../test/helpers/aws-stand-in.ts";
import { lambdaControl } from "./clients.ts";

// Issue 26: a push fan-out of deploys meets Lambda's control-plane rate limit. Throttling cannot be caused
// locally, so a stand-in for Lambda's endpoint answers what Lambda answers when throttling (429,
// TooManyRequestsException) the first `throttles` times, then the function.
let standIn: StandIn;
let requests = 0;
let throttles = 0;

beforeAll(async () => {
  standIn = await standInEndpoint("AWS_ENDPOINT_URL_LAMBDA", (req, res) => {
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
});
afterAll(() => standIn.close());
afterEach(() => vi.useRealTimers());

/** The SDK's backoff waits (seconds each) pass on a fake clock; the stand-in's answers are real I/O. */
async function onFakeClock<T>(work: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  tracked.catch(() => {}); // handled by the caller, after the loop
  while (!settled) await vi.advanceTimersByTimeAsync(250);
  return tracked;
}

const getFunction = (client: LambdaClient) =>
  client.send(new GetFunctionCommand({ FunctionName: "agent-rt-x" }));

describe("the deploys' Lambda control-plane client", () => {
  it("rides out throttling that the SDK's default three attempts give up on, backing off between attempts", async () => {
    requests = 0;
    throttles = 3;
    const plain = new LambdaClient({ endpoint: process.env.AWS_ENDPOINT_URL_LAMBDA, region: "us-east-1" });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    await expect(onFakeClock(getFunction(plain))).rejects.toMatchObject({ name: "TooManyRequestsException" });
    expect(requests).toBe(3);

    requests = 0;
    throttles = 5;
    const started = Date.now();
    const out = await onFakeClock(getFunction(lambdaControl()));
    expect(out.Configuration?.FunctionName).toBe("agent-rt-x");
    expect(requests).toBe(6);
    // Backed off, not hammered: five retries after throttles wait (randomly) some time in all.
    expect(Date.now() - started).toBeGreaterThan(100);
  }, 120_000);
});
