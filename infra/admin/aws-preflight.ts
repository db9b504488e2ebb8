import { loadConfig } from "../../shared/config.ts";
import { formatQuotaTable } from "../quotas/quota-row.ts";
import { allQuotaRows } from "../quotas/synth.ts";

// The script's settings, parsed once: a bad value stops it here, naming the variable.
loadConfig();

// npm run aws:preflight: synthesizes the app without an account, region or credentials, runs every quota check
// (infra/quotas) and prints them as a table; exits 1 when any check is over AWS's limit, before any deploy does.
const rows = await allQuotaRows();
console.log(formatQuotaTable(rows));
const failed = rows.filter((r) => !r.ok);
console.log(
  failed.length
    ? `\n${failed.length} of ${rows.length} checks over AWS's limits:\n${failed.map((r) => `  ${r.check}: ${r.subject} (${r.doc})`).join("\n")}`
    : `\nAll ${rows.length} checks within AWS's limits.`,
);
process.exit(failed.length ? 1 : 0);
