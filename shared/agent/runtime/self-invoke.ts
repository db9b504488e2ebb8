import { InvokeCommand } from "@aws-sdk/client-lambda";
import { lambda } from "../../aws/clients.ts";
import { config } from "../../config.ts";
import { logger } from "../../log.ts";

// The Lambda executor's kick: a runtime in AWS runs a thread's due runs in an asynchronous invocation of its own
// function (this version of it: the revision that created the run). A local runtime started with
// AGENT_RUN_WORKER=lambda plays that invocation in-process: a detached call that shares no broker with the API
// side, so streams, waits and cancels take the same durable paths as in AWS.
export interface DrainEvent {
  kind: "drain";
  tenant_id: string;
  deployment_id: string;
  thread_id: string;
}

let localInvoke: ((e: DrainEvent) => Promise<void>) | undefined;
export function invokeSelfLocally(fn: (e: DrainEvent) => Promise<void>): void {
  localInvoke = fn;
}

export async function invokeSelf(e: DrainEvent): Promise<void> {
  const name = config.lambda.functionName;
  if (!name && localInvoke) {
    const run = localInvoke;
    setImmediate(() => void run(e).catch((err) => logger.error("run drain failed", { error: err })));
    return;
  }
  if (!name) throw new Error("No function to invoke: this runtime is not a Lambda function");
  await lambda().send(
    new InvokeCommand({
      FunctionName: name,
      Qualifier: config.lambda.functionVersion,
      InvocationType: "Event",
      Payload: Buffer.from(JSON.stringify(e)),
    }),
  );
}
