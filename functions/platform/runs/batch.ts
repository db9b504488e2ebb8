import { z } from "zod";
import { ValidationFailed } from "../../../shared/errors.ts";
import { MAX_BATCH_RUNS } from "../../../shared/platform/list-bounds.ts";
import { ingestBatch } from "../../../shared/runs/ingest.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  body: z.looseObject({
    post: z.array(z.unknown()).max(MAX_BATCH_RUNS).default([]),
    patch: z.array(z.unknown()).max(MAX_BATCH_RUNS).default([]),
  }),
  handle: async ({ body, tenantId }) => {
    const patches = body.patch.map((p) => ({ id: String((p as { id?: unknown })?.id ?? ""), body: p }));
    const r = await ingestBatch(tenantId, body.post, patches);
    if (r.errors.length && !r.accepted.length) throw new ValidationFailed(r.errors);
    return reply(202, { accepted: r.accepted.length, errors: r.errors });
  },
});
