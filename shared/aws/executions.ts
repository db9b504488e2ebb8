import { DescribeExecutionCommand, StartExecutionCommand, StopExecutionCommand } from "@aws-sdk/client-sfn";
import { sfn } from "./clients.ts";
import { stateMachineArn } from "./tasks.ts";

// Step Functions executions as the platform uses them: named by the record they drive (so a repeated start
// is the same execution), described by the sweepers, stopped on cancel or supersession.
const missing = (err: unknown) => {
  const e = err as { name?: unknown; code?: unknown } | null | undefined;
  return e?.name === "ExecutionDoesNotExist" || e?.code === "ExecutionDoesNotExist";
};

export async function startNamedExecution(machine: string, name: string, input: unknown): Promise<string> {
  const out = await sfn().send(
    new StartExecutionCommand({
      stateMachineArn: stateMachineArn(machine),
      name,
      input: JSON.stringify(input),
    }),
  );
  return out.executionArn!;
}

/** RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, or MISSING when the engine no longer knows it. */
export async function executionStatus(arn: string): Promise<{ status: string; cause?: string }> {
  try {
    const out = await sfn().send(new DescribeExecutionCommand({ executionArn: arn }));
    return { status: out.status ?? "MISSING", cause: out.cause };
  } catch (err) {
    if (missing(err)) return { status: "MISSING" };
    throw err;
  }
}

/** Stops an execution if it still runs; one that is gone or already ended is fine. */
export async function stopExecution(arn: string, cause: string): Promise<void> {
  try {
    await sfn().send(new StopExecutionCommand({ executionArn: arn, cause }));
  } catch (err) {
    if (!missing(err)) throw err;
  }
}
