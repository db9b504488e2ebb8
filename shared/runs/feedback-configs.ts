import { z } from "zod";
import { BadRequest, Conflict, NotFound, validationError } from "../errors.ts";
import { uuidv7 } from "../ids.ts";
import {
  type FeedbackConfigRecord,
  feedbackConfigKeys,
  feedbackConfigs,
} from "../records/feedback-configs.ts";
import { canonicalNow } from "../time.ts";

// Feedback configs: the scale of a feedback key (continuous with min/max, categorical with its categories, or
// freeform), one per key of a workspace (`/api/v1/feedback-configs`, the langsmith SDK's createFeedbackConfig …).
// A key's stored config governs every new or changed feedback of that key, as on the hosted platform: a feedback
// that brings its own `feedback_config` must bring the stored one (else 422); a key without one adopts the
// config of its first accepted feedback that brings one. Feedback already given is never re-checked. Enforced
// configs and several configs per key (LangSmith 0.18) are not kept here: the one config of a key rules.

const Category = z.looseObject({ value: z.number().finite(), label: z.string().max(1024).nullish() });

/** A scale as the SDKs send it, on a feedback (`feedback_config`) or to store. */
export const FeedbackConfig = z.looseObject({
  type: z.enum(["continuous", "categorical", "freeform"]),
  min: z.number().finite().nullish(),
  max: z.number().finite().nullish(),
  categories: z.array(Category).max(100).nullish(),
  allows_multiple_categories: z.boolean().nullish(),
});
export type FeedbackConfigIn = z.output<typeof FeedbackConfig>;

/** A scale as the functions below read it (a FeedbackConfigIn, or a stored Scale). */
export interface ScaleLike {
  type: "continuous" | "categorical" | "freeform";
  min?: number | null;
  max?: number | null;
  categories?: { value: number; label?: string | null }[] | null;
  allows_multiple_categories?: boolean | null;
}

/** A scale as stored and answered: every field present. */
export interface Scale {
  type: "continuous" | "categorical" | "freeform";
  min: number | null;
  max: number | null;
  categories: { value: number; label: string | null }[] | null;
  allows_multiple_categories: boolean;
}

export function scaleOf(c: ScaleLike): Scale {
  return {
    type: c.type,
    min: c.min ?? null,
    max: c.max ?? null,
    categories: c.categories?.map((k) => ({ value: k.value, label: k.label ?? null })) ?? null,
    allows_multiple_categories: c.allows_multiple_categories ?? false,
  };
}

export const sameScale = (a: ScaleLike, b: ScaleLike) =>
  JSON.stringify(scaleOf(a)) === JSON.stringify(scaleOf(b));

/** What makes a scale unusable to store: min above max, categories given twice, a categorical one without any. */
export function scaleProblems(c: ScaleLike): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  if (c.min != null && c.max != null && c.min > c.max)
    out.push({ path: ["min"], message: `min ${c.min} is above max ${c.max}` });
  const cats = c.categories ?? [];
  if (c.type === "categorical" && !cats.length)
    out.push({ path: ["categories"], message: "a categorical config needs its categories" });
  const values = new Set<number>();
  const labels = new Set<string>();
  cats.forEach((k, i) => {
    if (values.has(k.value))
      out.push({ path: ["categories", i, "value"], message: `value ${k.value} twice` });
    if (k.label != null && labels.has(k.label))
      out.push({ path: ["categories", i, "label"], message: `label "${k.label}" twice` });
    values.add(k.value);
    if (k.label != null) labels.add(k.label);
  });
  return out;
}

/** A scale to store: as FeedbackConfig, and usable (scaleProblems). */
const StoredConfig = FeedbackConfig.superRefine((c, ctx) => {
  for (const p of scaleProblems(c)) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
});

const FeedbackKey = z.string().min(1).max(180);

export const FeedbackConfigCreate = z.looseObject({
  feedback_key: FeedbackKey,
  feedback_config: StoredConfig,
  is_lower_score_better: z.boolean().nullish(),
  is_enforced: z
    .literal(false, {
      error: "enforced configs are not kept here (a key's one config already rules all its new feedback)",
    })
    .optional(),
});
export type FeedbackConfigCreateIn = z.output<typeof FeedbackConfigCreate>;

export const FeedbackConfigUpdate = z.looseObject({
  feedback_key: FeedbackKey,
  id: z.uuid().optional(),
  feedback_config: StoredConfig.optional(),
  is_lower_score_better: z.boolean().nullish(),
  add_categories: z.array(Category).min(1).max(100).optional(),
  remove_categories: z.array(z.number().finite()).min(1).max(100).optional(),
});
export type FeedbackConfigUpdateIn = z.output<typeof FeedbackConfigUpdate>;

export const FeedbackConfigOut = z.object({
  id: z.string(),
  feedback_key: z.string(),
  feedback_config: z.record(z.string(), z.unknown()),
  tenant_id: z.string(),
  modified_at: z.string(),
  is_lower_score_better: z.boolean().nullable(),
  is_enforced: z.boolean(),
  is_first: z.boolean(),
  is_deleted: z.boolean(),
});
export type FeedbackConfigSchema = z.output<typeof FeedbackConfigOut>;

const toSchema = (r: FeedbackConfigRecord): FeedbackConfigSchema => ({
  id: r.id,
  feedback_key: r.feedback_key,
  feedback_config: JSON.parse(r.config_json),
  tenant_id: r.tenant_id,
  modified_at: r.modified_at,
  is_lower_score_better: r.is_lower_score_better,
  is_enforced: false,
  is_first: true,
  is_deleted: false,
});

const stored = (tenant: string, key: string) => feedbackConfigs.get({ tenant, key });
const scaleIn = (r: FeedbackConfigRecord): Scale => JSON.parse(r.config_json);

function newRecord(tenant: string, key: string, c: ScaleLike, lowerBetter?: boolean | null) {
  const now = canonicalNow();
  return {
    id: uuidv7(),
    tenant_id: tenant,
    feedback_key: key,
    config_json: JSON.stringify(scaleOf(c)),
    is_lower_score_better: lowerBetter ?? false,
    created_at: now,
    modified_at: now,
  } satisfies FeedbackConfigRecord;
}

/** Stores a key's config; the same one again answers the stored one, a different one is refused (400, as hosted). */
export async function createFeedbackConfig(
  tenant: string,
  body: FeedbackConfigCreateIn,
): Promise<FeedbackConfigSchema> {
  const record = newRecord(tenant, body.feedback_key, body.feedback_config, body.is_lower_score_better);
  if (await feedbackConfigs.create(record)) return toSchema(record);
  const current = await stored(tenant, body.feedback_key);
  if (!current) throw new BadRequest("Feedback config was deleted meanwhile: try again");
  const sameDirection =
    body.is_lower_score_better == null || body.is_lower_score_better === current.is_lower_score_better;
  if (sameScale(scaleIn(current), body.feedback_config) && sameDirection) return toSchema(current);
  throw new BadRequest(
    `Feedback config already exists for key "${body.feedback_key}" and differs from this one`,
  );
}

export interface FeedbackConfigQuery {
  keys?: string[];
  nameContains?: string;
  isEnforced?: boolean;
  limit: number;
  offset: number;
}

/** The workspace's configs in key order, filtered by key and by a substring of the key. */
export async function listFeedbackConfigs(tenant: string, q: FeedbackConfigQuery) {
  if (q.isEnforced) return [];
  const all = await feedbackConfigs.list(feedbackConfigKeys.pk(tenant), { consistent: true });
  return all
    .filter(
      (r) =>
        (!q.keys?.length || q.keys.includes(r.feedback_key)) &&
        (!q.nameContains || r.feedback_key.includes(q.nameContains)),
    )
    .slice(q.offset, q.offset + q.limit)
    .map(toSchema);
}

/** A scale with categories added (values and labels new) or removed (at least two left). */
export function recategorized(
  scale: Scale,
  add: FeedbackConfigUpdateIn["add_categories"],
  remove: FeedbackConfigUpdateIn["remove_categories"],
): Scale {
  if (!add && !remove) return scale;
  if (scale.type !== "categorical")
    throw validationError(
      ["body", add ? "add_categories" : "remove_categories"],
      "the config is not categorical",
    );
  let categories = [...(scale.categories ?? [])];
  for (const [i, k] of (add ?? []).entries()) {
    if (categories.some((c) => c.value === k.value || (k.label != null && c.label === k.label)))
      throw validationError(
        ["body", "add_categories", i],
        `category ${k.value} clashes with an existing one`,
      );
    categories.push({ value: k.value, label: k.label ?? null });
  }
  if (remove) {
    categories = categories.filter((c) => !remove.includes(c.value));
    if (categories.length < 2)
      throw validationError(["body", "remove_categories"], "at least two categories must remain");
  }
  return { ...scale, categories };
}

/** Changes a key's config (the whole scale, its direction, or its categories); new feedback follows it. */
export async function updateFeedbackConfig(
  tenant: string,
  body: FeedbackConfigUpdateIn,
): Promise<FeedbackConfigSchema> {
  const current = await stored(tenant, body.feedback_key);
  if (!current || (body.id && body.id.toLowerCase() !== current.id))
    throw new NotFound(`No feedback config for key "${body.feedback_key}"`);
  const base = body.feedback_config ? scaleOf(body.feedback_config) : scaleIn(current);
  const scale = recategorized(base, body.add_categories, body.remove_categories);
  const next: FeedbackConfigRecord = {
    ...current,
    config_json: JSON.stringify(scale),
    is_lower_score_better: body.is_lower_score_better ?? current.is_lower_score_better,
    modified_at: canonicalNow(),
  };
  // Only the config read above is changed: a concurrent change or delete is not overwritten.
  const ok = await feedbackConfigs.update(
    { tenant, key: body.feedback_key },
    {
      set: {
        config_json: next.config_json,
        is_lower_score_better: next.is_lower_score_better,
        modified_at: next.modified_at,
      },
      when: { id: current.id, modified_at: current.modified_at },
    },
  );
  if (!ok)
    throw new Conflict(`The feedback config of key "${body.feedback_key}" changed meanwhile: try again`);
  return toSchema(next);
}

/** Deletes a key's config, named by its key or its id; feedback given under it stays as it is. */
export async function deleteFeedbackConfig(tenant: string, by: { feedback_key?: string; id?: string }) {
  let key = by.feedback_key;
  if (by.id) {
    const all = await feedbackConfigs.list(feedbackConfigKeys.pk(tenant), { consistent: true });
    key = all.find((r) => r.id === by.id?.toLowerCase())?.feedback_key;
  }
  if (!key || !(await stored(tenant, key))) throw new NotFound("Feedback config not found");
  await feedbackConfigs.delete({ tenant, key });
}

/** A score against a scale: inside [min, max] when continuous, one of the categories when categorical. */
export function configProblem(config: ScaleLike | null | undefined, score: unknown): string | undefined {
  if (!config || score === null || score === undefined) return undefined;
  const n = typeof score === "boolean" ? Number(score) : (score as number);
  if (config.type === "continuous") {
    if (config.min != null && n < config.min) return `score ${n} is below the config's min ${config.min}`;
    if (config.max != null && n > config.max) return `score ${n} is above the config's max ${config.max}`;
  }
  if (
    config.type === "categorical" &&
    config.categories?.length &&
    !config.categories.some((c) => c.value === n)
  )
    return `score ${n} is none of the config's categories`;
  return undefined;
}

/**
 * The scale a feedback of `key` is given under, its score checked against it: the key's stored config (a
 * `given` one must equal it), else `given` (then stored as the key's), else `fallback` (a feedback's own).
 */
export async function scaleForFeedback(
  tenant: string,
  key: string,
  given: ScaleLike | null | undefined,
  score: unknown,
  fallback: ScaleLike | null = null,
): Promise<ScaleLike | null> {
  const current = await stored(tenant, key);
  const check = (scale: ScaleLike | null) => {
    const problem = configProblem(scale, score);
    if (problem) throw validationError(["body", "score"], problem);
    return scale;
  };
  if (current) {
    if (given && !sameScale(scaleIn(current), given))
      throw validationError(
        ["body", "feedback_config"],
        `key "${key}" has a stored feedback config and this one differs from it: send the stored one or none`,
      );
    return check(scaleIn(current));
  }
  if (!given) return check(fallback);
  check(given);
  if (!scaleProblems(given).length && !(await feedbackConfigs.create(newRecord(tenant, key, given))))
    return scaleForFeedback(tenant, key, given, score, fallback);
  return given;
}
