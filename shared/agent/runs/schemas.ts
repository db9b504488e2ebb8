import { z } from "zod";
import { urlShapeProblem } from "../../containment/ssrf.ts";
import { dict } from "../../dict.ts";
import { qFlag } from "../../http/query.ts";
import { RUN_DURABILITY } from "../../records/agent.ts";
import { MAX_DRAINS_PER_ANSWER } from "../runtime/drain-asks.ts";
import { MAX_AFTER_SECONDS } from "./settings.ts";

// Request schemas of the agent server's threads and runs endpoints (validation, types and OpenAPI).
const id = z.string().min(1).max(128);
const obj = z.record(z.string(), z.unknown());
export const deploymentParams = z.object({ deployment_id: id });
/**
 * A thread id is a UUID, as the LangGraph API validates it in every thread path (and threads.create takes one):
 * a run with if_not_exists "create" cannot make a thread whose id breaks a key (`#` separates key parts).
 */
const threadId = z.string().uuid("thread_id must be a UUID, as on the LangGraph API");
export const threadParams = z.object({ deployment_id: id, thread_id: threadId });
export const runParams = z.object({ deployment_id: id, thread_id: threadId, run_id: id });
export const checkpointParams = z.object({ deployment_id: id, thread_id: threadId, checkpoint_id: id });

const threadStatus = z.enum(["idle", "busy", "interrupted", "error"]);

/**
 * A thread's TTL as the SDK sends it (minutes, or {ttl, strategy}); `delete` is the only strategy, as on the
 * reference server. Answers the minutes.
 */
const threadTtl = z
  .union([
    z.number().positive().max(5_256_000),
    z.object({ ttl: z.number().positive().max(5_256_000), strategy: z.literal("delete").default("delete") }),
  ])
  .nullish()
  .transform((v) => (v == null ? undefined : typeof v === "number" ? v : v.ttl));

/** One update of a superstep: what `updateState` takes (`command` is not applied this way and is refused). */
const superstepUpdate = z.object({
  values: z.unknown().optional(),
  command: z.null().optional(),
  as_node: z.string().min(1).max(256),
});
export const threadCreate = z
  .object({
    thread_id: threadId.optional(),
    metadata: obj.optional(),
    if_exists: z.enum(["raise", "do_nothing"]).optional(),
    /** Applied to a new thread in order, each superstep's updates as one step of the graph (bulkUpdateState). */
    supersteps: z
      .array(z.object({ updates: z.array(superstepUpdate).min(1).max(100) }))
      .max(100)
      .optional(),
    ttl: threadTtl,
  })
  .superRefine((b, ctx) => {
    if (b.supersteps?.length && typeof b.metadata?.graph_id !== "string")
      ctx.addIssue({
        code: "custom",
        path: ["supersteps"],
        message: "supersteps need the thread's graph: pass graph_id (metadata.graph_id)",
      });
  });
export const threadPatch = z.object({ metadata: obj.optional(), ttl: threadTtl });
export const threadSearch = z.object({
  ids: z.array(id).max(1000).optional(),
  metadata: obj.optional(),
  values: obj.optional(),
  status: threadStatus.optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
});
export const threadCount = z.object({
  metadata: obj.optional(),
  values: obj.optional(),
  status: threadStatus.optional(),
});
export const stateQuery = z.object({ subgraphs: qFlag.optional() });
export const stateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().optional(),
  checkpoint: obj.optional(),
  checkpoint_id: z.string().optional(),
});
/** PATCH /threads/{id}/state (the SDK's `threads.patchState`): metadata merged into the latest checkpoint's. */
export const statePatch = z.object({ metadata: obj });
export const historyBody = z.object({
  limit: z.number().int().min(1).max(1000).default(10),
  before: z.union([z.string(), obj]).optional(),
  metadata: obj.optional(),
  checkpoint: obj.optional(),
});
export const threadPrune = z.object({
  thread_ids: z.array(id).max(1000),
  strategy: z.enum(["delete", "keep_latest"]).default("delete"),
});
/** The checkpoint to read a state at; unset fields (the SDK sends nulls) fall back to the latest / root namespace. */
export const stateAtCheckpoint = z.object({
  checkpoint: z
    .object({
      checkpoint_id: z.string().min(1).nullish(),
      checkpoint_ns: z.string().nullish(),
      checkpoint_map: obj.nullish(),
      thread_id: z.string().nullish(),
    })
    .transform(({ thread_id: _, ...c }) =>
      Object.fromEntries(Object.entries(c).filter(([, v]) => v !== null && v !== undefined)),
    ),
  subgraphs: z.boolean().optional(),
});
export const historyQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  before: z.string().optional(),
});

const STREAM_MODES = [
  "values",
  "messages",
  "messages-tuple",
  "updates",
  "events",
  "debug",
  "custom",
  "tasks",
  "checkpoints",
] as const;
const streamMode = z.enum(STREAM_MODES);
/**
 * A webhook is a caller's URL the platform will call: an http(s) URL without credentials. Where it leads is checked
 * when it is called (shared/agent/runs/webhook.ts), after DNS: an address that is fine now may not be then.
 */
const webhookUrl = z
  .string()
  .max(2048)
  .superRefine((url, ctx) => {
    const problem = urlShapeProblem(url, "webhook");
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
const nodes = z.union([z.literal("*"), z.array(z.string()).max(1000)]);
export const runCreate = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: z
    .object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() })
    .nullish(),
  config: obj.nullish().transform((v) => v ?? undefined),
  context: obj.nullish().transform((v) => v ?? undefined),
  metadata: obj.nullish().transform((v) => v ?? undefined),
  stream_mode: z.union([streamMode, z.array(streamMode).max(20)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  /** A resume that answers no waiting interrupt fails the run (UnknownInterruptError) instead of being ignored. */
  strict_resume: z.boolean().optional(),
  interrupt_before: nodes.optional(),
  interrupt_after: nodes.optional(),
  multitask_strategy: z.enum(["reject", "rollback", "interrupt", "enqueue"]).optional(),
  if_not_exists: z.enum(["create", "reject"]).optional(),
  on_completion: z.enum(["delete", "keep"]).optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  after_seconds: z
    .number()
    .min(0)
    .max(MAX_AFTER_SECONDS, `after_seconds is at most ${MAX_AFTER_SECONDS} (one year)`)
    .optional(),
  checkpoint_id: z.string().optional(),
  checkpoint: obj.optional(),
  webhook: webhookUrl.optional(),
  // Signed feedback URLs for LangSmith (the reference's feedback_keys) are not made here: refused, not ignored.
  feedback_keys: z
    .array(z.string())
    .max(100)
    .refine(
      (keys) => keys.length === 0,
      "feedback_keys (signed feedback URLs for the run) are not served here: add feedback to the run's trace with the langsmith SDK's createFeedback",
    )
    .optional(),
  /** Deprecated in LangGraph for durability: false is "exit", true "async". */
  checkpoint_during: z.boolean().optional(),
  durability: z.enum(RUN_DURABILITY).nullish(),
});
export const runList = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "error", "success", "timeout", "interrupted"]).optional(),
});
export const cancelQuery = z.object({
  wait: qFlag.default(false),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});
export const joinStreamQuery = z.object({
  stream_mode: z.union([z.string(), z.array(z.string()).max(20)]).optional(),
  cancel_on_disconnect: qFlag.optional(),
});

/** The SDK's `runs.createBatch` sends each payload's camelCase keys as they are: read them as the snake_case fields. */
function snakeKeys(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  const out = dict<unknown>();
  for (const [k, val] of Object.entries(v)) {
    const snake = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snake === k || !Object.hasOwn(v, snake)) out[snake] = val;
  }
  return out;
}
/**
 * Runs one batch may create (each on a thread of its own): no more than one answer may ask drains for, so every
 * run of a batch is started at once (runtime/drain-asks.ts).
 */
export const MAX_RUN_BATCH = MAX_DRAINS_PER_ANSWER;
export const runBatch = z.array(z.preprocess(snakeKeys, runCreate)).max(MAX_RUN_BATCH);
export const runsCancel = z
  .object({
    thread_id: id.nullish(),
    run_ids: z.array(id).max(1000).nullish(),
    status: z.enum(["pending", "running", "all"]).nullish(),
  })
  .refine((b) => b.thread_id || b.run_ids || b.status, "Give thread_id, run_ids or status");
const THREAD_STREAM_MODES = ["run_modes", "lifecycle", "state_update"] as const;
export type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];
const threadStreamModes = z.preprocess(
  (v) => (typeof v === "string" ? v.split(",").filter(Boolean) : v),
  z.array(z.enum(THREAD_STREAM_MODES)),
);
/** The SDK sends `stream_mode`, the reference documents `stream_modes`: either (or both) select the events. */
export const threadStreamQuery = z
  .object({ stream_mode: threadStreamModes.optional(), stream_modes: threadStreamModes.optional() })
  .transform((q) => {
    const modes = [...(q.stream_mode ?? []), ...(q.stream_modes ?? [])];
    return { modes: modes.length ? modes : (["run_modes"] as typeof modes) };
  });
