import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadHandler } from "../../functions/modules/routes.ts";
import { routes } from "../../functions/routes.ts";
import { config } from "../../shared/config.ts";
import { openApiDocument } from "../../shared/http/openapi.ts";

// The platform API's OpenAPI document, made from the route manifest and every handler's schemas when the
// functions are bundled (function-bundles.ts runs this file): the function that serves it reads the document
// beside its bundle instead of bundling every handler (6 MB) to make it at its first request.

export async function platformOpenApiDocument(): Promise<unknown> {
  const list = await Promise.all(routes.map(async (r) => ({ ...r, handler: await loadHandler(r) })));
  return openApiDocument("Agent platform", config.version, list);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) throw new Error("usage: openapi-document.ts <file>");
  writeFileSync(out, `${JSON.stringify(await platformOpenApiDocument())}\n`);
}
