import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { buildConsole } from "../console/build.mjs";
import { buildApp } from "../stacks/index.ts";
import { ROOT } from "../stacks/node-function.ts";
import { stateMachineName } from "../stacks/workflows-stack.ts";
import { bundleQuotaRows } from "./bundle-quotas.ts";
import { loadTemplates } from "./cfn-render.ts";
import type { QuotaRow } from "./quota-row.ts";
import { templateQuotaRows } from "./template-checks.ts";
import { workflowBounds } from "./workflow-bounds.ts";

// The app synthesized as `cdk synth` does it but with no account, region or credentials (stacks are env-agnostic)
// and with the functions' bundles as they are deployed (built once into .cache/bundles), as infra/stacks/stacks.test.ts does.
export async function synthAccountless(): Promise<string> {
  const app = await accountlessApp();
  app.synth();
  return app.outdir;
}

/** The app built (not yet synthesized) as synthAccountless synthesizes it, into a fresh folder. */
export async function accountlessApp(): Promise<App> {
  await buildConsole(); // the console stack deploys console/dist
  const context = {
    ...JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context,
  };
  const outdir = mkdtempSync(join(tmpdir(), "cdk-quotas-"));
  const app = new App({ context, outdir });
  buildApp(app);
  return app;
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
