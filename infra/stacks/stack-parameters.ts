import { CfnOutput, Stack } from "aws-cdk-lib";
import { StringParameter } from "aws-cdk-lib/aws-ssm";
import type { Construct } from "constructs";

// Values one stack hands another that may change when the producer changes (a table's stream, a role, an API):
// an export in use can never change, so they go through SSM parameters, read by each consumer when it deploys.
// (The CDK CLI always deploys a stack with SSM parameters, so `cdk deploy --all` carries a new value over.)

/** The SSM parameter holding `name` of `producer`. */
export function parameterName(producer: Stack, name: string): string {
  return `/agent-platform/${producer.stackName}/${name}`;
}

/** Publishes `value` as `producer`'s parameter `name` (and an output without export, for the operator). */
export function publishParameter(producer: Stack, name: string, value: string): void {
  new StringParameter(producer, `Param-${name}`, {
    parameterName: parameterName(producer, name),
    stringValue: value,
  });
  new CfnOutput(producer, name, { value });
}

/**
 * `producer`'s parameter `name` as seen from `scope`: read by its top-level stack when that deploys (a nested
 * stack gets it as a parameter of its own from there).
 */
export function readParameter(scope: Construct, producer: Stack, name: string): string {
  let stack = Stack.of(scope);
  while (stack.nestedStackParent) stack = stack.nestedStackParent;
  return StringParameter.valueForStringParameter(stack, parameterName(producer, name));
}
