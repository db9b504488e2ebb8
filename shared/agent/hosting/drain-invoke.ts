import { InvokeCommand } from "@aws-sdk/client-lambda";
import { lambda } from "../../aws/clients.ts";
import { runtimeFunctionName } from "../../containment/runtime-policy.ts";
import type { RuntimeEvent } from "../runtime/lambda-protocol.ts";

/**
 * Starts a drain of a thread's runs in AWS: an asynchronous invocation of the deployment's runtime function
 * version. Platform code only (the router, the run sweeper, crons): a runtime's role may not invoke its function.
 */
export async function invokeDrain(
  tenantId: string,
  deploymentId: string,
  version: string,
  threadId: string,
): Promise<void> {
  const event: RuntimeEvent = {
    kind: "drain",
    tenant_id: tenantId,
    deployment_id: deploymentId,
    thread_id: threadId,
  };
  await lambda().send(
    new InvokeCommand({
      FunctionName: runtimeFunctionName(deploymentId),
      Qualifier: version,
      InvocationType: "Event",
      Payload: Buffer.from(JSON.stringify(event)),
    }),
  );
}
