import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  LAMBDA_UNZIPPED_CODE_BYTES,
  MAX_REVISION_BYTES,
  RUNTIME_LAYER_BUDGET_BYTES,
} from "../../shared/aws/lambda-limits.ts";
import { dirBytes, ensureBundles, type FunctionKind, platformFunctions } from "../build/function-bundles.ts";
import { type QuotaRow, quotaRow } from "./quota-row.ts";

// The bundles' quotas, checked at synth (infra/stacks/bundle-quotas.test.ts) and printed by `npm run aws:preflight`:
// Lambda's limit on code size, and the platform's own budget on what a bundle may carry.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const LIMITS_DOC = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html";
const OWN_BUDGET = "own budget (issue 26): a bundle carries only its handler's import graph";

/** The platform's budget per bundle: a few MB of code parses in well under the 300 ms cold-start goal. */
export const BUNDLE_BUDGET_BYTES = 5 * 1024 * 1024;

/**
 * Bundles allowed over the budget, each capped where it stands: none today (the platform's OpenAPI document, which
 * imported every handler for its schemas, is made when the functions are bundled: infra/build/openapi-document.ts).
 */
export const OVER_BUDGET: Readonly<Record<string, number>> = {};

/** What the checks read of one bundle: its function, its folder and the files esbuild put in it. */
export interface BundleFacts {
  id: string;
  kind: FunctionKind;
  handler: string;
  dir: string;
  inputs: string[];
}

/** A project file that is a test or test support (tests never ship). */
const isTestFile = (input: string) =>
  !input.includes("node_modules/") && (/\.test\.[cm]?[jt]sx?$/.test(input) || input.startsWith("test/"));

/** The lockfile's packages that only development needs (npm marks them `dev`: vitest, chai, biome...). */
function devOnlyPackages(): Set<string> {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return new Set(
    Object.entries(lock.packages)
      .filter(([, p]) => p.dev)
      .map(([k]) => k),
  );
}

/** The package folder an input comes from (`node_modules/a/node_modules/@b/c`), or undefined for a source. */
const packageOf = (input: string) =>
  /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(
    input.slice(Math.max(0, input.indexOf("node_modules/"))),
  )?.[1];

/** Every platform function's bundle as the CDK app deploys it. */
export function platformBundles(): BundleFacts[] {
  const { bundles } = ensureBundles();
  return platformFunctions().map((f) => {
    const b = bundles.get(f.handler)!;
    return { id: f.id, kind: f.kind, handler: f.handler, dir: b.dir, inputs: b.inputs };
  });
}

/** One row per check and bundle; `ok` false where a quota or the budget is exceeded. */
export function bundleQuotaRows(bundles: BundleFacts[] = platformBundles()): QuotaRow[] {
  const dev = devOnlyPackages();
  const rows: QuotaRow[] = [];
  for (const b of bundles) {
    const bytes = dirBytes(b.dir);
    const subject = `${b.id} (functions/${b.handler}.ts)`;
    // A function's code and layers unzipped: 250 MB (Lambda quotas).
    if (b.kind !== "runtime")
      rows.push(quotaRow("unzipped code bytes", subject, bytes, LAMBDA_UNZIPPED_CODE_BYTES, LIMITS_DOC));
    rows.push(
      quotaRow("bundle bytes", subject, bytes, OVER_BUDGET[b.handler] ?? BUNDLE_BUDGET_BYTES, OWN_BUDGET),
    );
    rows.push(quotaRow("test files bundled", subject, b.inputs.filter(isTestFile).length, 0, OWN_BUDGET));
    const devInputs = new Set(b.inputs.map(packageOf).filter((p): p is string => !!p && dev.has(p)));
    rows.push(quotaRow("dev-only packages bundled", subject, devInputs.size, 0, OWN_BUDGET));
    if (b.kind === "runtime") {
      rows.push(quotaRow("runtime layer bytes", subject, bytes, RUNTIME_LAYER_BUDGET_BYTES, OWN_BUDGET));
      // A deployment's function holds the layer and its revision's code: 250 MB in all (Lambda quotas).
      rows.push(
        quotaRow(
          "runtime layer + largest accepted revision bytes",
          subject,
          bytes + MAX_REVISION_BYTES,
          LAMBDA_UNZIPPED_CODE_BYTES,
          LIMITS_DOC,
        ),
      );
    }
  }
  return rows;
}

/** What went in that should not have: the test files and dev-only packages of a bundle (for failure messages). */
export function unwantedInputs(b: Pick<BundleFacts, "inputs">): string[] {
  const dev = devOnlyPackages();
  return [
    ...b.inputs.filter(isTestFile),
    ...new Set(b.inputs.map(packageOf).filter((p): p is string => !!p && dev.has(p))),
  ];
}
