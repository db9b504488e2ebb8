import { DeploymentParams } from "../../../shared/agent/ops/schemas.ts";
import { defineHandler, reply, z } from "../../handler.ts";
import { platformAgentServer } from "../platform.ts";

// GET /agents/{deployment_id}/ui/{name}/{file}: a file of the live revision's UI bundle (public: the browser
// loads it from a <script src> or <link href>); the platform reads it from the artifact, it runs no user code.
export const handler = defineHandler({
  params: DeploymentParams.extend({ name: z.string().min(1).max(128), file: z.string().min(1).max(128) }),
  handle: async ({ params }) => {
    const asset = await platformAgentServer.system.uiFile(params.deployment_id, params.name, params.file);
    if (!asset) return reply(404, { detail: "File not found" });
    return reply(200, asset.body.toString("utf8"), {
      "content-type": asset.type,
      "cache-control": "public, max-age=60",
    });
  },
});
