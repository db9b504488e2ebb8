import { ACCOUNT_CONCURRENCY_CONTEXT, type Capacity, concurrencyNeeded } from "../stacks/concurrency.ts";
import { synthesizedApp } from "../stacks/synthesized-app.ts";
import { stateMachineName } from "../stacks/workflows-stack.ts";
import { bundleQuotaRows } from "./bundle-quotas.ts";
import { loadTemplates } from "./cfn-render.ts";
import { type QuotaRow, quotaRow } from "./quota-row.ts";
import { templateQuotaRows } from "./template-checks.ts";
import { workflowBounds } from "./workflow-bounds.ts";

/** The app synthesized as `cdk synth` does it, account-less (infra/stacks/synthesized-app.ts): its assembly folder. */
export async function synthAccountless(): Promise<string> {
  return (await synthesizedApp()).dir;
}

/** The template quota rows of a synthesized assembly directory. */
export function assemblyQuotaRows(dir: string): QuotaRow[] {
  const prefix = stateMachineName("");
  return templateQuotaRows(loadTemplates(dir), {
    workflows: workflowBounds(),
    aslName: (name) => (name.startsWith(prefix) ? name.slice(prefix.length) : name),
  });
}

/** Every quota check of the app: what `npm run aws:preflight` prints. */
export async function allQuotaRows(): Promise<QuotaRow[]> {
  const { dir, stacks } = await synthesizedApp();
  return [...assemblyQuotaRows(dir), ...bundleQuotaRows(), concurrencyRow(stacks.capacity)];
}

const CONCURRENCY_CHECK = "Lambda concurrency reserved (platform + one runtime + 100 unreserved; none: 0)";
const CONCURRENCY_DOC = "https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html";

/** The reservations with one deployment's runtime and the 100 Lambda keeps unreserved, against the quota assumed. */
export const concurrencyRow = (c: Capacity): QuotaRow =>
  quotaRow(
    CONCURRENCY_CHECK,
    `account quota (${ACCOUNT_CONCURRENCY_CONTEXT})`,
    concurrencyNeeded(c),
    c.account,
    CONCURRENCY_DOC,
  );

/**
 * The same against the quota of the account the credentials point at (`aws lambda get-account-settings`): what
 * CloudFormation will hold the reservations to, whatever lambdaConcurrencyQuota says.
 */
export const accountConcurrencyRow = (c: Capacity, accountQuota: number): QuotaRow =>
  quotaRow(
    CONCURRENCY_CHECK,
    "the account's own quota (GetAccountSettings ConcurrentExecutions)",
    concurrencyNeeded(c),
    accountQuota,
    CONCURRENCY_DOC,
  );
