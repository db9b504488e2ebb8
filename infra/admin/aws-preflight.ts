import { GetAccountSettingsCommand } from "@aws-sdk/client-lambda";
import { lambda } from "../../shared/aws/clients.ts";
import { loadConfig } from "../../shared/config.ts";
import { formatQuotaTable } from "../quotas/quota-row.ts";
import { accountConcurrencyRow, allQuotaRows } from "../quotas/synth.ts";
import { apiGatewayAccountRole } from "../stacks/agent-origin.ts";
import { ACCOUNT_CONCURRENCY_CONTEXT, describeCapacity } from "../stacks/concurrency.ts";
import { synthesizedApp } from "../stacks/synthesized-app.ts";
import { apiGatewayCloudWatchRole, apiGatewayRoleRow } from "./api-gateway-account.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run aws:preflight: synthesizes the app without an account, region or credentials, runs every quota check
// (infra/quotas) and prints them as a table, then the Lambda concurrency arithmetic; exits 1 when any check is over
// AWS's limit, before any deploy does. `-- -c name=value …` gives cdk context as `cdk deploy -c` does. With
// credentials, the reservations are also checked against the account's own concurrency quota (a new account's is
// 10 or 50, not the 1000 lambdaConcurrencyQuota assumes when unset), which is what fails the deploy otherwise, and
// the account's API Gateway CloudWatch role, without which the REST API stages fail to create.
const args = process.argv.slice(2);
const context: Record<string, string> = {};
for (let i = 0; i < args.length; i++) {
  const pair = args[i] === "-c" || args[i] === "--context" ? args[++i] : undefined;
  const at = pair?.indexOf("=") ?? -1;
  if (!pair || at < 1) {
    console.error(`usage: npm run aws:preflight [-- -c name=value …] (not "${args[i] ?? ""}")`);
    process.exit(2);
  }
  context[pair.slice(0, at)] = pair.slice(at + 1);
}
// The App reads CDK_CONTEXT_JSON over cdk.json's context, as under the CDK CLI.
if (args.length) process.env.CDK_CONTEXT_JSON = JSON.stringify(context);
/** The account's regional concurrency quota, or why it could not be read (no credentials: the checks stay offline). */
async function accountQuota(): Promise<number | string> {
  try {
    const out = await lambda().send(new GetAccountSettingsCommand({}));
    return out.AccountLimit?.ConcurrentExecutions ?? "the answer named no ConcurrentExecutions";
  } catch (err) {
    return (err as Error).message;
  }
}

const { app, stacks } = await synthesizedApp();
const capacity = stacks.capacity;
const quota = await accountQuota();
/** The account's API Gateway CloudWatch role ("" when none), or why it could not be read. */
const logRole = await apiGatewayCloudWatchRole().then(
  (arn) => ({ arn }),
  (err: Error) => ({ error: err.message }),
);
const rows = [
  ...(await allQuotaRows()),
  ...(typeof quota === "number" ? [accountConcurrencyRow(capacity, quota)] : []),
  ...("arn" in logRole ? [apiGatewayRoleRow(logRole.arn, apiGatewayAccountRole(app.node))] : []),
];
console.log(formatQuotaTable(rows));
console.log(`\n${describeCapacity(capacity)}`);
if (typeof quota !== "number")
  console.log(`The account's own Lambda concurrency quota was not read (${quota}): checked offline only.`);
else if (quota !== capacity.account)
  console.log(
    `The account's Lambda concurrency quota is ${quota}, not the ${capacity.account} assumed: give -c ${ACCOUNT_CONCURRENCY_CONTEXT}=${quota} ` +
      "(and the reservations it holds, docs/aws.md step 2) to synth and deploy.",
  );
if ("error" in logRole)
  console.log(
    `The account's API Gateway CloudWatch role was not read (${logRole.error}): see docs/aws.md step 3.`,
  );
const failed = rows.filter((r) => !r.ok);
console.log(
  failed.length
    ? `\n${failed.length} of ${rows.length} checks over AWS's limits:\n${failed.map((r) => `  ${r.check}: ${r.subject} (${r.doc})`).join("\n")}`
    : `\nAll ${rows.length} checks within AWS's limits.`,
);
process.exit(failed.length ? 1 : 0);
