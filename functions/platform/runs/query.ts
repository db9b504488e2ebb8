import { z } from "zod";
import { MAX_QUERY_RUN_IDS, MAX_QUERY_SESSIONS } from "../../../shared/platform/list-bounds.ts";
import { queryRuns } from "../../../shared/runs/query.ts";
import { defineHandler } from "../../handler.ts";

/** One id or a list of at most `max` (a single id is a list of one). */
const ids = (max: number) =>
  z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(z.string().uuid()).max(max));

// The langsmith SDK (Client.listRuns) sends null for every filter it was not given.
const optional = <T extends z.ZodType>(s: T) => s.nullish().transform((v) => v ?? undefined);

export const handler = defineHandler({
  body: z.looseObject({
    session: optional(ids(MAX_QUERY_SESSIONS)),
    id: optional(ids(MAX_QUERY_RUN_IDS)),
    trace: optional(z.string().uuid()),
    is_root: optional(z.boolean()),
    run_type: optional(z.string()),
    filter: optional(z.string().max(10_000)),
    start_time: optional(z.string()),
    end_time: optional(z.string()),
    limit: z
      .number()
      .int()
      .min(1)
      .max(100)
      .nullish()
      .transform((v) => v ?? 100),
    cursor: optional(z.string()),
  }),
  handle: ({ body, tenantId }) => queryRuns(tenantId, body),
});
