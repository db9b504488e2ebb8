import { spawnSync } from "node:child_process";
import { ListRolesCommand } from "@aws-sdk/client-iam";
import { ListFunctionsCommand } from "@aws-sdk/client-lambda";
import { removeRuntime } from "../../shared/agent/hosting/lambda-host.ts";
import { iam, lambdaControl } from "../../shared/aws/clients.ts";
import { RUNTIME_ROLE_PATH } from "../../shared/containment/runtime-policy.ts";
import { loadTemplates } from "../quotas/cfn-render.ts";
import { synthAccountless } from "../quotas/synth.ts";
import { formatPlan, teardownPlan } from "./teardown-plan.ts";

// npm run aws:teardown [-- --dry-run]: removes the platform from the account the credentials point at, in the
// order infra/admin/teardown-plan.ts works out — every deployment's runtime (the deploy step's own removal,
// lambda-host.ts), then the stacks (cdk destroy, one at a time), then lists what CloudFormation kept.
const dryRun = process.argv.includes("--dry-run");

async function functionNames(): Promise<string[]> {
  const names: string[] = [];
  let Marker: string | undefined;
  do {
    const page = await lambdaControl().send(new ListFunctionsCommand({ Marker }));
    names.push(...(page.Functions ?? []).map((f) => f.FunctionName!));
    Marker = page.NextMarker;
  } while (Marker);
  return names;
}

/** The roles under the runtimes' path: a first deploy that failed before CreateFunction leaves one without a function. */
async function runtimeRoleNames(): Promise<string[]> {
  const names: string[] = [];
  let Marker: string | undefined;
  do {
    const page = await iam().send(new ListRolesCommand({ PathPrefix: RUNTIME_ROLE_PATH, Marker }));
    names.push(...(page.Roles ?? []).map((r) => r.RoleName!));
    Marker = page.IsTruncated ? page.Marker : undefined;
  } while (Marker);
  return names;
}

const dir = await synthAccountless();
// A dry run without credentials still shows the stacks' order and what is kept.
const listed = async (what: string, list: () => Promise<string[]>) =>
  list().catch((err: Error) => {
    if (!dryRun) throw err;
    console.warn(`The ${what} could not be listed (${err.message}): none shown under 1.`);
    return [] as string[];
  });
const plan = teardownPlan(
  dir,
  loadTemplates(dir),
  await listed("runtime functions", functionNames),
  await listed("runtime roles", runtimeRoleNames),
);
console.log(formatPlan(plan));
if (dryRun) process.exit(0);

for (const id of plan.runtimes) {
  console.log(`Removing the runtime of deployment ${id}`);
  await removeRuntime(id);
}
for (const stack of plan.stacks) {
  console.log(`Destroying ${stack}`);
  const cdk = spawnSync("npx", ["cdk", "destroy", "--force", "--exclusively", stack], { stdio: "inherit" });
  if (cdk.status !== 0) {
    console.error(`cdk destroy ${stack} failed: the stacks after it are left; run the teardown again`);
    process.exit(1);
  }
}
console.log(
  "Done. CloudFormation kept the resources under 3. above: delete them once their data is not needed.",
);
