import type { SettingMeta } from "./kinds.ts";
import { FAMILIES, SETTINGS } from "./settings.ts";

// The configuration reference (docs/configuration.md), made from the settings schema: `npm run docs:config` writes
// it, shared/config/reference.test.ts checks the committed file is current.

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

function row(name: string, meta: SettingMeta): string {
  const def = meta.default === undefined ? "—" : `\`${meta.default}\``;
  const what = meta.secret ? `${meta.description} (a secret: never shown)` : meta.description;
  return `| \`${name}\` | ${cell(meta.type)} | ${cell(def)} | ${meta.readers.join(", ")} | ${cell(what)} |`;
}

/** The reference as Markdown. */
export function renderReference(): string {
  const settings = Object.entries(SETTINGS).map(([name, schema]) => row(name, schema.setting));
  const families = Object.values(FAMILIES).map((f) => row(f.name, f.item.setting));
  return [
    "# Configuration",
    "",
    "<!-- Generated from shared/config/settings.ts by `npm run docs:config`; edit the schema, not this file. -->",
    "",
    "Every setting is an environment variable, read once when a process starts (a Lambda function's init, `npm start`,",
    "a deployment's runtime, the CDK app, a script) and validated by one schema (`shared/config/settings.ts`). A value",
    "that is not what the table says stops the start with an error naming the variable and what it expected; an",
    "empty variable counts as unset. Booleans take `true`, `false`, `1` or `0`; a choice takes exactly one of the",
    "values listed; a number must be a whole number in its range.",
    "",
    "Read by: **platform** — the platform's Lambda functions (locally, the same bundles in the local cloud);",
    "**runtime** — a deployment's agent runtime; **local cloud** — `npm start` and its parts; **CDK** — the CDK app;",
    "**CLI** — the scripts under `infra/admin`; **build** — the revision build step.",
    "",
    "| Variable | Type | Default | Read by | What it does |",
    "|---|---|---|---|---|",
    ...settings,
    "",
    "## Families",
    "",
    "Variables named by a pattern, one per table, state machine or service.",
    "",
    "| Variable | Type | Default | Read by | What it does |",
    "|---|---|---|---|---|",
    ...families,
    "",
  ].join("\n");
}
