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
