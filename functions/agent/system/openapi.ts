import { readFile } from "node:fs/promises";
import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler } from "../../handler.ts";

// The agent server's document is the same for every deployment (the routes are the same) but its server URL. It
// is made when the functions are bundled (infra/build/openapi-document.ts) and lies beside this function's
// bundle, so its init loads no handler of the agent server.
const DOCUMENT = new URL("./openapi.json", import.meta.url);
let doc: Promise<Record<string, unknown>> | undefined;

export const handler = defineHandler({
  params: DeploymentParams,
  handle: async ({ params }) => {
    doc ??= readFile(DOCUMENT, "utf8").then((text) => JSON.parse(text) as Record<string, unknown>);
    return { ...(await doc), servers: [{ url: `/agents/${encodeURIComponent(params.deployment_id)}` }] };
  },
});
