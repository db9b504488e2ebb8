import { z } from "zod";
import { ASSISTANT_FIELDS, AssistantConfig, SORT_BY } from "./assistants.ts";

// Wire schemas of the assistants endpoints (request bodies and path/query parameters), as the SDK sends them.
const Json = z.record(z.string(), z.unknown());

export const DeploymentParams = z.object({ deployment_id: z.string().min(1).max(128) });
export const AssistantParams = DeploymentParams.extend({ assistant_id: z.string().min(1).max(256) });

export const AssistantCreateBody = z.object({
  assistant_id: z.uuid().optional(),
  graph_id: z.string().min(1),
  config: AssistantConfig.optional(),
  context: Json.optional(),
  metadata: Json.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});

export const AssistantPatchBody = z.object({
  graph_id: z.string().min(1).optional(),
  config: AssistantConfig.optional(),
  context: Json.optional(),
  metadata: Json.optional(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});

const Filter = {
  metadata: Json.optional(),
  graph_id: z.string().optional(),
  name: z.string().optional(),
};

export const AssistantSearchBody = z.object({
  ...Filter,
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(SORT_BY).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  select: z.array(z.enum(ASSISTANT_FIELDS)).min(1).optional(),
});

export const AssistantCountBody = z.object(Filter);

export const AssistantVersionsBody = z.object({
  metadata: Json.optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
});

export const AssistantLatestBody = z.object({ version: z.number().int().min(1) });

/** `?xray=true|false|<depth>` as the SDK sends it. */
export const XrayQuery = z.object({
  xray: z
    .union([z.enum(["true", "false"]).transform((v) => v === "true"), z.coerce.number().int().min(0)])
    .optional(),
});

export const RecurseQuery = z.object({
  recurse: z
    .enum(["true", "false"])
    .transform((v) => v === "true")
    .optional(),
});
