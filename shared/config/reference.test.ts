import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderReference } from "./reference.ts";
import { FAMILIES, SETTINGS } from "./settings.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");

describe("the configuration reference", () => {
  it("docs/configuration.md is the one made from the schema (run npm run docs:config)", () => {
    expect(readFileSync(join(ROOT, "docs", "configuration.md"), "utf8")).toBe(renderReference());
  });

  it("names every setting and family, with its type, readers and description", () => {
    const doc = renderReference();
    for (const [name, schema] of Object.entries(SETTINGS)) {
      expect(doc).toContain(`| \`${name}\` |`);
      expect(schema.setting.description.length).toBeGreaterThan(10);
      expect(schema.setting.readers.length).toBeGreaterThan(0);
    }
    for (const f of Object.values(FAMILIES)) expect(doc).toContain(`| \`${f.name}\` |`);
  });
});
