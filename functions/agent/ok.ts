import { z } from "zod";
import { localDeploymentState } from "../../shared/agent/local-state.ts";
import { NotFound, ServiceUnavailable } from "../../shared/errors.ts";
import { deploymentById } from "../../shared/records/control.ts";
import { defineHandler } from "../handler.ts";

// The agent server's health check: 200 once a revision of the deployment serves (or, for `npm start -- --graph`,
// once the local graphs are loaded), 503 before.
export const handler = defineHandler({
  params: z.object({ deployment_id: z.string().max(128) }),
  response: z.object({ ok: z.boolean() }),
  handle: async ({ params }) => {
    const local = localDeploymentState(params.deployment_id);
    if (local === "ready") return { ok: true };
    if (local === "loading") throw new ServiceUnavailable("The local graphs are still loading");
    const d = await deploymentById(params.deployment_id);
    if (!d) throw new NotFound("Deployment not found");
    if (!d.active_revision_id) throw new ServiceUnavailable("The deployment has no deployed revision yet");
    return { ok: true };
  },
});
