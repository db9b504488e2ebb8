import { z } from "zod";
import { ValidationFailed } from "../../../shared/errors.ts";
import { ingestPosts } from "../../../shared/runs/store.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  body: z.record(z.string(), z.unknown()),
  handle: async ({ body, tenantId }) => {
    const r = await ingestPosts(tenantId, [body], "run");
    if (r.errors.length) throw new ValidationFailed(r.errors);
    return reply(202, { message: "Run created", id: r.accepted[0] });
  },
});
