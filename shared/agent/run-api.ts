import { z } from "zod";

// Request schemas of the agent server's threads and runs endpoints (validation, types and OpenAPI).
const id = z.string().min(1).max(128);
const obj = z.record(z.string(), z.unknown());
export const deploymentParams = z.object({ deployment_id: id });
export const threadParams = z.object({ deployment_id: id, thread_id: id });
export const runParams = z.object({ deployment_id: id, thread_id: id, run_id: id });
export const checkpointParams = z.object({ deployment_id: id, thread_id: id, checkpoint_id: id });

const threadStatus = z.enum(["idle", "busy", "interrupted", "error"]);
const bool = z.preprocess(
  (v) => (v === "1" || v === "true" ? true : v === "0" || v === "false" ? false : v),
  z.boolean(),
);

export const threadCreate = z.object({
  thread_id: z.string().uuid().optional(),
  metadata: obj.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
});
export const threadPatch = z.object({ metadata: obj.optional() });
export const threadSearch = z.object({
  ids: z.array(id).optional(),
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
export const stateQuery = z.object({ subgraphs: bool.optional() });
export const stateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().optional(),
  checkpoint: obj.optional(),
  checkpoint_id: z.string().optional(),
});
export const historyBody = z.object({
  limit: z.number().int().min(1).max(1000).default(10),
  before: z.union([z.string(), obj]).optional(),
  metadata: obj.optional(),
  checkpoint: obj.optional(),
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
const nodes = z.union([z.literal("*"), z.array(z.string())]);
export const runCreate = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: z
    .object({ resume: z.unknown().optional(), update: z.unknown().optional(), goto: z.unknown().optional() })
    .nullish(),
  config: obj.nullish().transform((v) => v ?? undefined),
  context: obj.nullish().transform((v) => v ?? undefined),
  metadata: obj.nullish().transform((v) => v ?? undefined),
  stream_mode: z.union([streamMode, z.array(streamMode)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  interrupt_before: nodes.optional(),
  interrupt_after: nodes.optional(),
  multitask_strategy: z.enum(["reject", "rollback", "interrupt", "enqueue"]).optional(),
  if_not_exists: z.enum(["create", "reject"]).optional(),
  on_completion: z.enum(["delete", "keep"]).optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  after_seconds: z.number().min(0).optional(),
  checkpoint_id: z.string().optional(),
  checkpoint: obj.optional(),
  webhook: z.string().optional(),
  feedback_keys: z.array(z.string()).optional(),
  checkpoint_during: z.boolean().optional(),
  durability: z.string().optional(),
});
export const runList = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "error", "success", "timeout", "interrupted"]).optional(),
});
export const cancelQuery = z.object({
  wait: bool.default(false),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});
export const joinStreamQuery = z.object({
  stream_mode: z.union([z.string(), z.array(z.string())]).optional(),
  cancel_on_disconnect: bool.optional(),
});
