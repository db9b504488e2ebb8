import { config } from "../config.ts";

// ARNs of the platform's task functions (fixed names agent-platform-<Name>), for schedule targets.
// TASK_ARN_PREFIX is `arn:aws:lambda:<region>:<account>:function:` (set by the CDK app and the local cloud).
/** Deployed task functions get fixed names, so handlers can build their ARNs. */
export const TASK_FUNCTION_PREFIX = "agent-platform-";

export function taskArn(name: string): string {
  const prefix = config.wiring.taskArnPrefix;
  if (!prefix) throw new Error("TASK_ARN_PREFIX is not set");
  return `${prefix}${TASK_FUNCTION_PREFIX}${name}`;
}

export function stateMachineArn(name: string): string {
  const arn = config.wiring.stateMachineArn(name);
  if (!arn) throw new Error(`state machine ${name} is not configured`);
  return arn;
}
