import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import { dynamo } from "../../shared/aws/clients.ts";
import { fromItem, toItem } from "../../shared/aws/ddb.ts";
import { logger } from "../../shared/log.ts";
import { tableName } from "../../shared/tables.ts";
import { awsError } from "./sfn.ts";

// EventBridge Scheduler, locally: schedules persist in the main table (so they survive a restart) and a
// timer loop fires the due ones. Supports at(...) and rate(...) expressions.
const PK = "LOCAL#SCHEDULES";
/**
 * The longest a scheduler goes without reading its schedules. It knows when the next one is due (it wrote them all),
 * so it reads only then; this bounds what a schedule written past it (another process on the same table) waits.
 */
const MAX_IDLE_MS = 60_000;

/** A schedule's target: the members fired here, beside whatever else the SDK sent (RoleArn, ...). */
export interface ScheduleTarget {
  Arn: string;
  Input?: string;
  [member: string]: unknown;
}
export type FireTarget = (target: ScheduleTarget) => Promise<void>;

/** The body of CreateSchedule and UpdateSchedule as the SDK sends it: the members emulated. */
export interface ScheduleInput {
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  GroupName?: string;
  Target: ScheduleTarget;
  ActionAfterCompletion?: string;
  State?: string;
}

/** A schedule as the main table holds it. */
interface ScheduleRecord {
  PK: string;
  SK: string;
  name: string;
  group: string;
  expression: string;
  target: ScheduleTarget;
  /** NONE or DELETE (ActionAfterCompletion). */
  after: string;
  /** ENABLED or DISABLED. */
  state: string;
  /** Epoch ms of the next firing. */
  fire_at: number;
}

function nextFireTime(expression: string, tz: string | undefined, from: number): number {
  const at = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/.exec(expression);
  if (at) {
    if (tz && tz !== "UTC")
      throw awsError("ValidationException", "Only UTC schedule time zones are emulated locally");
    return Date.parse(`${at[1]}Z`);
  }
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (rate) {
    const unit = rate[2].startsWith("minute") ? 60_000 : rate[2].startsWith("hour") ? 3_600_000 : 86_400_000;
    return from + Number(rate[1]) * unit;
  }
  throw awsError("ValidationException", `Unsupported schedule expression locally: ${expression}`);
}

export class LocalScheduler {
  private timer?: NodeJS.Timeout;
  private ticking = false;
  /** When the earliest enabled schedule is due (epoch ms): the ticks before it read nothing (0: read at the next). */
  private nextRead = 0;
  /** Counts creates and updates, so a tick under way when one lands reads again at the next. */
  private writes = 0;
  constructor(
    private readonly fire: FireTarget,
    private readonly intervalMs = 1000,
    /** The partition schedules live in; separate local schedulers sharing a table keep apart. */
    private readonly pk = PK,
  ) {}

  private key(group: string | undefined, name: string) {
    return toItem({ PK: this.pk, SK: `${group ?? "default"}#${name}` });
  }

  async create(name: string, input: ScheduleInput, update = false) {
    const fireAt = nextFireTime(input.ScheduleExpression, input.ScheduleExpressionTimezone, Date.now());
    const item: ScheduleRecord = {
      PK: this.pk,
      SK: `${input.GroupName ?? "default"}#${name}`,
      name,
      group: input.GroupName ?? "default",
      expression: input.ScheduleExpression,
      target: input.Target,
      after: input.ActionAfterCompletion ?? "NONE",
      state: input.State ?? "ENABLED",
      fire_at: fireAt,
    };
    await dynamo()
      .send(
        new PutItemCommand({
          TableName: tableName("main"),
          Item: toItem(item),
          ConditionExpression: update ? "attribute_exists(PK)" : "attribute_not_exists(PK)",
        }),
      )
      .catch((err) => {
        if (err?.name !== "ConditionalCheckFailedException") throw err;
        throw update
          ? awsError("ResourceNotFoundException", `Schedule ${name} does not exist`, 404)
          : awsError("ConflictException", `Schedule ${name} already exists`, 409);
      });
    this.writes++;
    this.nextRead = Math.min(this.nextRead, fireAt);
    return { ScheduleArn: `arn:aws:scheduler:us-east-1:000000000000:schedule/${item.group}/${name}` };
  }

  async get(name: string, group?: string) {
    const out = await dynamo().send(
      new GetItemCommand({ TableName: tableName("main"), Key: this.key(group, name) }),
    );
    if (!out.Item) throw awsError("ResourceNotFoundException", `Schedule ${name} does not exist`, 404);
    const s = fromItem<ScheduleRecord>(out.Item);
    return {
      Name: s.name,
      GroupName: s.group,
      ScheduleExpression: s.expression,
      Target: s.target,
      State: s.state,
    };
  }

  async delete(name: string, group?: string) {
    await dynamo().send(new DeleteItemCommand({ TableName: tableName("main"), Key: this.key(group, name) }));
    return {};
  }

  start() {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop() {
    clearInterval(this.timer);
  }

  /** Fires every due schedule once, oldest first; reads the schedules only when one may be due. */
  async tick(): Promise<number> {
    if (this.ticking || Date.now() < this.nextRead) return 0;
    this.ticking = true;
    let fired = 0;
    const writes = this.writes;
    let next = Date.now() + MAX_IDLE_MS;
    try {
      const out = await dynamo().send(
        new QueryCommand({
          TableName: tableName("main"),
          KeyConditionExpression: "PK = :pk",
          ExpressionAttributeValues: toItem({ ":pk": this.pk }),
        }),
      );
      const now = Date.now();
      const enabled = (out.Items ?? [])
        .map((i) => fromItem<ScheduleRecord>(i))
        .filter((s) => s.state === "ENABLED");
      const due = enabled.filter((s) => s.fire_at <= now).sort((a, b) => a.fire_at - b.fire_at);
      for (const s of enabled) if (s.fire_at > now) next = Math.min(next, s.fire_at);
      for (const s of due) {
        try {
          await this.fire(s.target);
          fired++;
        } catch (err) {
          logger.error("schedule target failed", { schedule: s.name, error: err });
        }
        const again = s.expression.startsWith("rate(")
          ? nextFireTime(s.expression, undefined, Date.now())
          : undefined;
        if (again) {
          await dynamo().send(
            new PutItemCommand({ TableName: tableName("main"), Item: toItem({ ...s, fire_at: again }) }),
          );
          next = Math.min(next, again);
        } else if (s.after === "DELETE") await this.delete(s.name, s.group);
        else
          await dynamo().send(
            new PutItemCommand({ TableName: tableName("main"), Item: toItem({ ...s, state: "DISABLED" }) }),
          );
      }
      // A create or update during this read may not be in what it read: the next tick reads again.
      this.nextRead = this.writes === writes ? next : 0;
    } finally {
      this.ticking = false;
    }
    return fired;
  }
}
