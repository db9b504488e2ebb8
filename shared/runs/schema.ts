import { z } from "zod";
import { MAX_RUN_TAGS } from "../platform/list-bounds.ts";

// What the langsmith SDKs send for a run. Extra fields (child_runs, serialized, …) are accepted as they are.
/**
 * A run, trace or parent id: UUID-shaped, of any version. Runs sent over OpenTelemetry have ids made from span
 * ids (`00000000-0000-0000-…`, langsmith's convention) and trace ids, which are not RFC 4122 UUIDs.
 */
export const RunId = z.guid();
const RUN_TYPES = ["tool", "chain", "llm", "retriever", "embedding", "prompt", "parser"] as const;
const time = z.union([z.string(), z.number()]);
const json = z.unknown();

const common = {
  end_time: time.nullish(),
  inputs: json.optional(),
  outputs: json.optional(),
  error: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  extra: z.record(z.string(), z.unknown()).nullish(),
  events: z.array(z.unknown()).nullish(),
  tags: z.array(z.string()).max(MAX_RUN_TAGS).nullish(),
  trace_id: RunId.nullish(),
  dotted_order: z.string().max(20_000).nullish(),
  parent_run_id: RunId.nullish(),
  reference_example_id: z.string().uuid().nullish(),
  session_id: z.string().uuid().nullish(),
  session_name: z.string().min(1).max(512).nullish(),
  status: z.string().nullish(),
};

export const RunCreate = z.looseObject({
  id: RunId.optional(),
  name: z.string().min(1).max(2048),
  run_type: z.enum(RUN_TYPES),
  start_time: time.optional(),
  serialized: json.optional(),
  ...common,
});

export const RunPatch = z.looseObject({ id: RunId.optional(), ...common });

export type RunCreateIn = z.output<typeof RunCreate>;
export type RunPatchIn = z.output<typeof RunPatch>;
