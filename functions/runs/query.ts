import { z } from "zod";
import { defineHandler } from "../../shared/http/handler.ts";
import { queryRuns } from "../../shared/runs/query.ts";

const ids = z.union([
  z
    .string()
    .uuid()
    .transform((s) => [s]),
  z.array(z.string().uuid()),
]);

export const handler = defineHandler({
  body: z.looseObject({
    session: ids.optional(),
    id: ids.optional(),
    trace: z.string().uuid().optional(),
    is_root: z.boolean().optional(),
    run_type: z.string().optional(),
    filter: z.string().max(10_000).optional(),
    start_time: z.string().optional(),
    end_time: z.string().optional(),
    limit: z.number().int().min(1).max(100).default(100),
    cursor: z.string().optional(),
  }),
  handle: ({ body, tenantId }) => queryRuns(tenantId, body),
});
