import { ListFunctionsCommand } from "@aws-sdk/client-lambda";
import { lambdaControl } from "../../aws/clients.ts";
import { runtimeFunctionName } from "../../containment/runtime-policy.ts";

// A platform upgrade publishes a new version of the runtime layer; a deployment's function keeps the version it
// was deployed with until it is deployed again. This finds those still on another layer version.

const PREFIX = runtimeFunctionName("");

/** The deployments whose runtime function lacks `layerArn` (the platform's current runtime layer version). */
export async function staleRuntimes(layerArn: string): Promise<string[]> {
  const stale: string[] = [];
  let Marker: string | undefined;
  do {
    const page = await lambdaControl().send(new ListFunctionsCommand({ Marker }));
    for (const f of page.Functions ?? [])
      if (f.FunctionName?.startsWith(PREFIX) && !(f.Layers ?? []).some((l) => l.Arn === layerArn))
        stale.push(f.FunctionName.slice(PREFIX.length));
    Marker = page.NextMarker;
  } while (Marker);
  return stale;
}
