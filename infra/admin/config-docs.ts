import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { renderReference } from "../../shared/config/reference.ts";

// `npm run docs:config`: writes docs/configuration.md from the settings schema.
const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
writeFileSync(join(ROOT, "docs", "configuration.md"), renderReference());
console.log("docs/configuration.md written");
