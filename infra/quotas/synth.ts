import { synthesizedApp } from "../stacks/synthesized-app.ts";
import { stateMachineName } from "../stacks/workflows-stack.ts";
import { bundleQuotaRows } from "./bundle-quotas.ts";
import { loadTemplates } from "./cfn-render.ts";
import type { QuotaRow } from "./quota-row.ts";
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
  const dir = await synthAccountless();
  return [...assemblyQuotaRows(dir), ...bundleQuotaRows()];
}
