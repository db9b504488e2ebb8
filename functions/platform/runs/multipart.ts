import { ValidationFailed } from "../../../shared/errors.ts";
import { ingestMultipart } from "../../../shared/runs/ingest.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  rawBody: true,
  handle: async ({ raw, headers, tenantId }) => {
    const r = await ingestMultipart(tenantId, raw, headers);
    if (r.errors.length && !r.accepted.length) throw new ValidationFailed(r.errors);
    return reply(202, { accepted: r.accepted.length, errors: r.errors });
  },
});
