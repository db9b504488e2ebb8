import { z } from "zod";
import { validationError } from "../../../shared/errors.ts";
import { MAX_QUERY_RUN_IDS, MAX_QUERY_SESSIONS } from "../../../shared/platform/list-bounds.ts";
import { queryRuns } from "../../../shared/runs/query.ts";
import { RUN_FIELDS } from "../../../shared/runs/wire.ts";
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
    error: optional(z.boolean()),
    parent_run: optional(z.string().uuid()),
    reference_example: optional(ids(MAX_QUERY_RUN_IDS)),
    filter: optional(z.string().max(10_000)),
    trace_filter: optional(z.string().max(10_000)),
    tree_filter: optional(z.string().max(10_000)),
    select: optional(
      z
        .array(
          z.enum(RUN_FIELDS, {
            error: (i) =>
              `${JSON.stringify(i.input)} is not a run field here; fields: ${RUN_FIELDS.join(", ")}`,
          }),
        )
        .max(RUN_FIELDS.length * 2),
    ),
    // Refused rather than ignored: each would change which runs are answered.
    query: z.null({ error: 'full-text query is not served; use filter: search("text")' }).optional(),
    execution_order: optional(
      z.literal(1, { error: "only execution_order 1 (root runs; deprecated, use is_root) is served" }),
    ),
    order: optional(z.literal("desc", { error: 'runs are answered newest first: order "desc" only' })),
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
  handle: ({ body: { execution_order, order: _newestFirst, query: _none, ...body }, tenantId }) => {
    if (execution_order === 1 && body.is_root === false)
      throw validationError(
        ["body", "execution_order"],
        "execution_order 1 asks for root runs, is_root false for the others",
      );
    return queryRuns(tenantId, execution_order === 1 ? { ...body, is_root: true } : body);
  },
});
