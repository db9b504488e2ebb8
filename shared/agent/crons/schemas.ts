import { z } from "zod";
import { runCreate } from "../runs/schemas.ts";
import { scheduleProblem } from "./schedule.ts";

// Request schemas of the agent server's cron endpoints. A cron's payload is a run-create body (runCreate).
const id = z.string().min(1).max(128);
const obj = z.record(z.string(), z.unknown());
export const cronParams = z.object({ deployment_id: id, cron_id: id });

const schedule = z
  .string()
  .max(256)
  .superRefine((s, ctx) => {
    const problem = scheduleProblem(s);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
/** Schedules are evaluated in UTC: another time zone is refused rather than silently shifted. */
const timezone = z
  .string()
  .nullish()
  .superRefine((tz, ctx) => {
    if (tz && !["UTC", "Etc/UTC", "GMT", "Etc/GMT"].includes(tz))
      ctx.addIssue({
        code: "custom",
        message: `Cron schedules are evaluated in UTC; time zone ${tz} is not served`,
      });
  })
  .transform((tz) => tz ?? undefined);
const endTime = z.string().datetime({ offset: true }).nullish();
const onRunCompleted = z.enum(["delete", "keep"]).nullish();

export const cronCreate = runCreate.extend({
  schedule,
  timezone,
  end_time: endTime,
  enabled: z.boolean().nullish(),
  on_run_completed: onRunCompleted,
});
export type CronCreate = z.output<typeof cronCreate>;

export const cronPatch = z.object({
  schedule: schedule.optional(),
  timezone,
  end_time: endTime,
  enabled: z.boolean().nullish(),
  on_run_completed: onRunCompleted,
  metadata: obj.nullish(),
  input: z.unknown().optional(),
  config: obj.nullish(),
  context: obj.nullish(),
  webhook: runCreate.shape.webhook,
  interrupt_before: runCreate.shape.interrupt_before,
  interrupt_after: runCreate.shape.interrupt_after,
  stream_mode: runCreate.shape.stream_mode,
  stream_subgraphs: z.boolean().nullish(),
  stream_resumable: z.boolean().nullish(),
  durability: runCreate.shape.durability,
});
export type CronPatch = z.output<typeof cronPatch>;

const SORT = ["cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date"] as const;
const SELECT = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "end_time",
  "schedule",
  "created_at",
  "updated_at",
  "user_id",
  "payload",
  "next_run_date",
  "metadata",
  "now",
  "timezone",
  "enabled",
  "on_run_completed",
] as const;
export const cronSearch = z.object({
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  enabled: z.boolean().nullish(),
  metadata: obj.nullish(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(SORT).nullish(),
  sort_order: z.enum(["asc", "desc"]).nullish(),
  select: z.array(z.enum(SELECT)).nullish(),
});
export type CronSearch = z.output<typeof cronSearch>;
export const cronCount = z.object({
  assistant_id: z.string().nullish(),
  thread_id: z.string().nullish(),
  metadata: obj.nullish(),
});
