import { InvokeCommand } from "@aws-sdk/client-lambda";
import { lambda } from "./clients.ts";
import { taskArn } from "./tasks.ts";

/** Queues a task function (Lambda asynchronous invocation: retried twice by Lambda on failure). */
export async function invokeTaskAsync(name: string, payload: unknown): Promise<void> {
  await lambda().send(
    new InvokeCommand({
      FunctionName: taskArn(name),
      InvocationType: "Event",
      Payload: Buffer.from(JSON.stringify(payload)),
    }),
  );
}

/** Runs a task function and waits for it; its error (FunctionError) is thrown here. */
export async function invokeTask(name: string, payload: unknown): Promise<unknown> {
  const out = await lambda().send(
    new InvokeCommand({ FunctionName: taskArn(name), Payload: Buffer.from(JSON.stringify(payload)) }),
  );
  const text = Buffer.from(out.Payload ?? []).toString("utf8");
  if (out.FunctionError) throw new Error(`task ${name} failed: ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}
