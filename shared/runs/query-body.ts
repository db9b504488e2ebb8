import { z } from "zod";
import { validationError } from "../errors.ts";
import { MAX_QUERY_RUN_IDS, MAX_QUERY_SESSIONS } from "../platform/list-bounds.ts";
import { RunId } from "./schema.ts";

// The run filters POST /runs/query and POST /runs/stats take (the langsmith SDK's listRuns and getRunStats send
// the same set). The SDK sends null for every filter it was not given.

/** One id or a list of at most `max` (a single id is a list of one). */
const ids = (max: number, id: z.ZodType<string> = z.string().uuid()) =>
  z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(id).max(max));

export const optional = <T extends z.ZodType>(s: T) => s.nullish().transform((v) => v ?? undefined);

export const RunFilterFields = {
  session: optional(ids(MAX_QUERY_SESSIONS)),
  id: optional(ids(MAX_QUERY_RUN_IDS, RunId)),
  trace: optional(RunId),
  is_root: optional(z.boolean()),
  run_type: optional(z.string()),
  error: optional(z.boolean()),
  parent_run: optional(RunId),
  reference_example: optional(ids(MAX_QUERY_RUN_IDS)),
  filter: optional(z.string().max(10_000)),
  trace_filter: optional(z.string().max(10_000)),
  tree_filter: optional(z.string().max(10_000)),
  start_time: optional(z.string()),
  end_time: optional(z.string()),
  // Refused rather than ignored: each would change which runs are counted.
  query: z.null({ error: 'full-text query is not served; use filter: search("text")' }).optional(),
  execution_order: optional(
    z.literal(1, { error: "only execution_order 1 (root runs; deprecated, use is_root) is served" }),
  ),
};

/** The filters as the query reads them: `execution_order: 1` is `is_root: true`; the refused fields gone. */
export function runFilters<T extends { execution_order?: 1; query?: null; is_root?: boolean }>(body: T): T {
  const out = { ...body };
  delete out.execution_order;
  delete out.query;
  if (body.execution_order !== 1) return out;
  if (body.is_root === false)
    throw validationError(
      ["body", "execution_order"],
      "execution_order 1 asks for root runs, is_root false for the others",
    );
  return { ...out, is_root: true };
}
