import {
  CreateLogGroupCommand,
  DeleteLogGroupCommand,
  PutRetentionPolicyCommand,
} from "@aws-sdk/client-cloudwatch-logs";
import { logs } from "../../aws/clients.ts";
import { config } from "../../config.ts";
import { runtimeFunctionName } from "../../containment/runtime-policy.ts";

// A runtime function's log group. Lambda would make it at the first log line with no expiry (kept, and billed,
// forever); the deploy step makes it first and sets its retention on every deploy, so a group an earlier version
// left without one gets it too. A deleted deployment's group goes with its function.

/** The group Lambda writes a deployment's runtime logs to (its default: /aws/lambda/<function>). */
export const runtimeLogGroup = (deploymentId: string) => `/aws/lambda/${runtimeFunctionName(deploymentId)}`;

const named = (err: unknown, name: string) => (err as Error | undefined)?.name === name;

/** Creates the deployment's runtime log group if missing and sets its retention; answers its name. */
export async function ensureRuntimeLogGroup(deploymentId: string): Promise<string> {
  const logGroupName = runtimeLogGroup(deploymentId);
  await logs()
    .send(new CreateLogGroupCommand({ logGroupName }))
    .catch((err) => {
      if (!named(err, "ResourceAlreadyExistsException")) throw err;
    });
  const retentionInDays = config.agent.runtimeLogRetentionDays;
  await logs().send(new PutRetentionPolicyCommand({ logGroupName, retentionInDays }));
  return logGroupName;
}

/** Deletes the deployment's runtime log group (none: nothing to do). */
export async function removeRuntimeLogGroup(deploymentId: string): Promise<void> {
  await logs()
    .send(new DeleteLogGroupCommand({ logGroupName: runtimeLogGroup(deploymentId) }))
    .catch((err) => {
      if (!named(err, "ResourceNotFoundException")) throw err;
    });
}
