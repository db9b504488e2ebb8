import { z } from "zod";
import { getRevision, RevisionOut, revisionWire } from "../../../shared/control/revisions.ts";
import { defineHandler } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ deployment_id: z.uuid(), revision_id: z.uuid() }),
  response: RevisionOut,
  handle: async ({ tenantId, params }) =>
    revisionWire(await getRevision(tenantId, params.deployment_id, params.revision_id)),
});
