import { z } from "zod";
import { ValidationFailed } from "../../../shared/errors.ts";
import { RunId } from "../../../shared/runs/schema.ts";
import { ingestPatches } from "../../../shared/runs/store.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  params: z.object({ run_id: RunId }),
  body: z.record(z.string(), z.unknown()),
  handle: async ({ params, body, tenantId }) => {
    const r = await ingestPatches(tenantId, [{ id: params.run_id, body }], "run");
    if (r.errors.length) throw new ValidationFailed(r.errors);
    return reply(202, { message: "Run updated", id: params.run_id });
  },
});
