import { InvokeCommand } from "@aws-sdk/client-lambda";
import { describe, expect, it } from "vitest";
import { emulatorLambda } from "../../test/helpers/signed-emulator.ts";
import { platformFunctions } from "../build/function-bundles.ts";
import type { EmulatedServices } from "./aws-emulator.ts";
import type { InvokeOptions } from "./function-host.ts";
import { LocalLambda } from "./lambda.ts";

// Issue 36 (3): the local Lambda queues a function's buffered invocations beyond the machine's parallelism, but an
// invocation made by a running one must not wait (it could wait for the environment its caller holds). The AWS
// SDK in a function's environment sends the invocation's _X_AMZN_TRACE_ID as X-Amzn-Trace-Id (its recursion
// detection): the emulator reads a synchronous Invoke carrying it as nested. Read here with the SDK's own client.
const seen: InvokeOptions[] = [];
const lambda = emulatorLambda({
  lambda: new LocalLambda(() => async (_event, how) => {
    seen.push(how ?? {});
    return "ok";
  }),
} as Partial<EmulatedServices>);

/** Runs `work` with the variables Lambda sets in a function's environment during an invocation. */
async function asInvocation<T>(work: () => Promise<T>): Promise<T> {
  process.env.AWS_LAMBDA_FUNCTION_NAME = "caller";
  process.env._X_AMZN_TRACE_ID = "Root=1-6789abcd-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=0";
  try {
    return await work();
  } finally {
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    delete process.env._X_AMZN_TRACE_ID;
  }
}

describe("the local Lambda: an invocation made by a running one", () => {
  it("a synchronous Invoke from a function's environment reaches the function as nested; one from elsewhere does not", async () => {
    seen.length = 0;
    await lambda().send(new InvokeCommand({ FunctionName: "f", Payload: Buffer.from("{}") }));
    await asInvocation(() =>
      lambda().send(new InvokeCommand({ FunctionName: "f", Payload: Buffer.from("{}") })),
    );
    expect(seen).toEqual([{}, { nested: true }]);
  });

  it("the functions whose invocations are held open (never queued): streams, the router, long-polls", () => {
    const held = platformFunctions()
      .filter((f) => f.heldOpen)
      .map((f) => f.id);
    expect(held).toContain("AgentRouter");
    expect(held).toContain("ControlOauthWait");
    // Every streamed route's function, and no buffered one but the long-poll.
    for (const f of platformFunctions().filter((x) => x.kind === "route"))
      expect(f.heldOpen ?? false).toBe(
        f.environment.LAMBDA_RESPONSE_STREAMING === "1" || f.id === "ControlOauthWait",
      );
  });
});
