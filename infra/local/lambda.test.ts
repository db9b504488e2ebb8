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
