import { describe, expect, it } from "vitest";
import { LocalLambda } from "./lambda.ts";

// The local Lambda service's asynchronous invocations: retried twice, as Lambda does, until the cloud stops.
describe("LocalLambda asynchronous invocations", () => {
  it("a failing invocation is tried three times in all", async () => {
    let attempts = 0;
    const fail = new LocalLambda(
      () => async () => {
        attempts++;
        throw new Error("boom");
      },
      1,
    );
    expect((await fail.invoke("f", {}, true)).status).toBe(202);
    await fail.drain();
    expect(attempts).toBe(3);
  });

  it("once stopped, a failing invocation is not retried (the cloud exits at once, nothing restarts for it)", async () => {
    let attempts = 0;
    let stop: () => void = () => {};
    const lambda = new LocalLambda(
      () => async () => {
        attempts++;
        stop();
        throw new Error("the environment stopped under it");
      },
      60_000,
    );
    stop = () => lambda.stop();
    expect((await lambda.invoke("f", {}, true)).status).toBe(202);
    await lambda.drain();
    expect(attempts).toBe(1);
  });

  it("once stopped, a queued invocation does not run", async () => {
    let ran = false;
    const lambda = new LocalLambda(() => async () => {
      ran = true;
    });
    await lambda.invoke("f", {}, true);
    lambda.stop();
    await lambda.drain();
    expect(ran).toBe(false);
  });
});

// Issue 33 (the third review's M1): a runtime may invoke trace ingestion asynchronously as often as it likes, and
// each event (up to 256 KB) was held in the local cloud's memory until it ran. A caller's queued events are bounded
// in bytes; past the bound Invoke is throttled for that caller alone.
describe("LocalLambda asynchronous events held per caller", () => {
  it("past a caller's bound its invocation is throttled; another caller's is not; the bytes free once it ran", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const lambda = new LocalLambda(() => () => gate, 1, undefined, 1000);
    const flood = { caller: "arn:aws:sts::000000000000:assumed-role/runtime-a/s", bytes: 400 };
    expect((await lambda.invoke("f", {}, true, flood)).status).toBe(202);
    expect((await lambda.invoke("f", {}, true, flood)).status).toBe(202);
    await expect(lambda.invoke("f", {}, true, flood)).rejects.toMatchObject({
      code: "TooManyRequestsException",
      status: 429,
      Reason: "CallerRateLimitExceeded",
    });
    const other = { caller: "arn:aws:sts::000000000000:assumed-role/runtime-b/s", bytes: 900 };
    expect((await lambda.invoke("f", {}, true, other)).status).toBe(202);
    open();
    await lambda.drain();
    expect((await lambda.invoke("f", {}, true, flood)).status).toBe(202);
    await lambda.drain();
  });

  it("one caller's flood of one function's events leaves its events for other functions queued (the router's drains)", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const lambda = new LocalLambda(() => () => gate, 1, undefined, 1000);
    const router = { caller: "arn:aws:sts::000000000000:assumed-role/agent-router/s", bytes: 600 };
    expect((await lambda.invoke("agent-rt-hostile", {}, true, router)).status).toBe(202);
    await expect(lambda.invoke("agent-rt-hostile", {}, true, router)).rejects.toMatchObject({ status: 429 });
    expect((await lambda.invoke("agent-rt-victim", {}, true, router)).status).toBe(202);
    open();
    await lambda.drain();
  });
});
