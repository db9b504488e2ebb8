import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadHandler } from "../../functions/modules/routes.ts";
import { routes } from "../../functions/routes.ts";
import { agentOpenApiDocument } from "../../shared/agent/ops/openapi.ts";
import { config } from "../../shared/config.ts";
import { openApiDocument } from "../../shared/http/openapi.ts";

// The OpenAPI documents of the platform API and of the agent server, made from the route manifest and every
// handler's schemas when the functions are bundled (function-bundles.ts runs this file): the functions that
// serve them read the document beside their bundle instead of bundling every handler to make it at init.

const documented = () => Promise.all(routes.map(async (r) => ({ ...r, handler: await loadHandler(r) })));

export async function platformOpenApiDocument(): Promise<unknown> {
  return openApiDocument("Agent platform", config.version, await documented());
}

/** The agent server's document, the same for every deployment but its server URL (set when it is served). */
export async function agentServerOpenApiDocument(): Promise<unknown> {
  return agentOpenApiDocument(config.version, "{deployment_id}", await documented());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [platformOut, agentOut] = process.argv.slice(2);
  if (!platformOut && !agentOut) throw new Error("usage: openapi-document.ts <platform file|-> [agent file]");
  if (platformOut && platformOut !== "-")
    writeFileSync(platformOut, `${JSON.stringify(await platformOpenApiDocument())}\n`);
  if (agentOut) writeFileSync(agentOut, `${JSON.stringify(await agentServerOpenApiDocument())}\n`);
}
