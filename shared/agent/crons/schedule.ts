// Cron schedules of the agent server: standard 5-field expressions (minute hour day-of-month month day-of-week),
// evaluated in UTC. Fields take `*`, values, ranges `a-b`, steps `*/n` `a-b/n` `a/n` and lists; months and days
// of the week also by name (JAN-DEC, SUN-SAT; 0 and 7 are Sunday). As in cron, when both day-of-month and
// day-of-week are restricted a day matching either fires. The @yearly/@monthly/@weekly/@daily/@hourly
// shorthands are accepted.

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
}
const FIELDS: Field[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
  },
  { name: "day-of-week", min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
];
const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** A parsed schedule: the allowed values of each field. */
export interface CronSchedule {
  minutes: number[];
  hours: number[];
  days: Set<number>;
  months: Set<number>;
  weekdays: Set<number>;
  /** Was day-of-month / day-of-week given as `*` (unrestricted)? */
  anyDay: boolean;
  anyWeekday: boolean;
}

export class CronSyntaxError extends Error {}

function value(f: Field, s: string): number {
  const upper = s.toUpperCase();
  const named = f.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (f.name === "month" ? 1 : 0);
  if (!/^\d+$/.test(s)) throw new CronSyntaxError(`${f.name} field: "${s}" is not a number`);
  const n = Number(s);
  if (n < f.min || n > f.max)
    throw new CronSyntaxError(`${f.name} field: ${n} is out of range ${f.min}-${f.max}`);
  return n;
}

function parseField(f: Field, text: string): { values: Set<number>; any: boolean } {
  const values = new Set<number>();
  for (const part of text.split(",")) {
    if (part === "") throw new CronSyntaxError(`${f.name} field: empty list item in "${text}"`);
    const [range, stepText, extra] = part.split("/");
    if (extra !== undefined) throw new CronSyntaxError(`${f.name} field: "${part}" has more than one step`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1)
        throw new CronSyntaxError(`${f.name} field: step "${stepText}" must be a positive whole number`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === "*") {
      lo = f.min;
      hi = f.name === "day-of-week" ? 6 : f.max;
    } else if (range.includes("-")) {
      const [a, b, more] = range.split("-");
      if (more !== undefined) throw new CronSyntaxError(`${f.name} field: "${range}" is not a range`);
      lo = value(f, a);
      hi = value(f, b);
      if (lo > hi) throw new CronSyntaxError(`${f.name} field: range ${range} runs backwards`);
    } else {
      lo = value(f, range);
      hi = stepText !== undefined ? (f.name === "day-of-week" ? 6 : f.max) : lo;
    }
    for (let v = lo; v <= hi; v += step) values.add(f.name === "day-of-week" && v === 7 ? 0 : v);
  }
  return { values, any: text === "*" };
}

/** Parses a 5-field expression; throws CronSyntaxError saying what is wrong. */
export function parseSchedule(expression: string): CronSchedule {
  const text = MACROS[expression.trim().toLowerCase()] ?? expression.trim();
  const parts = text.split(/\s+/).filter(Boolean);
  if (parts.length !== 5)
    throw new CronSyntaxError(
      `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`,
    );
  const [mi, h, dom, mon, dow] = parts.map((p, i) => parseField(FIELDS[i], p));
  const s: CronSchedule = {
    minutes: [...mi.values].sort((a, b) => a - b),
    hours: [...h.values].sort((a, b) => a - b),
    days: dom.values,
    months: mon.values,
    weekdays: dow.values,
    anyDay: dom.any,
    anyWeekday: dow.any,
  };
  if (nextRun(s, Date.UTC(2000, 0, 1)) === undefined)
    throw new CronSyntaxError("the schedule never fires (no such day)");
  return s;
}

function dayMatches(s: CronSchedule, day: Date): boolean {
  const dom = s.days.has(day.getUTCDate());
  const dow = s.weekdays.has(day.getUTCDay());
  if (s.anyDay && s.anyWeekday) return true;
  if (s.anyDay) return dow;
  if (s.anyWeekday) return dom;
  return dom || dow;
}

/** The first time the schedule fires strictly after `after` (ms epoch), to the minute; undefined if none in 8 years. */
export function nextRun(s: CronSchedule, after: number): number | undefined {
  const start = Math.floor(after / 60_000) * 60_000 + 60_000;
  const first = new Date(start);
  const base = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate());
  const startMinute = first.getUTCHours() * 60 + first.getUTCMinutes();
  for (let i = 0; i < 366 * 8; i++) {
    const day = new Date(base + i * 86_400_000);
    if (!s.months.has(day.getUTCMonth() + 1) || !dayMatches(s, day)) continue;
    for (const h of s.hours)
      for (const m of s.minutes)
        if (i > 0 || h * 60 + m >= startMinute) return day.getTime() + (h * 60 + m) * 60_000;
  }
  return undefined;
}

/** Why an expression is not a valid schedule, or undefined when it is. */
export function scheduleProblem(expression: string): string | undefined {
  try {
    parseSchedule(expression);
    return undefined;
  } catch (err) {
    if (err instanceof CronSyntaxError) return `Invalid cron schedule "${expression}": ${err.message}`;
    throw err;
  }
}

/** The next firing after `after` (ms) as ISO, bounded by `endTime` (ISO): undefined when there is none. */
export function nextRunDate(expression: string, after: number, endTime?: string | null): string | undefined {
  const next = nextRun(parseSchedule(expression), after);
  if (next === undefined) return undefined;
  if (endTime && next > Date.parse(endTime)) return undefined;
  return new Date(next).toISOString();
}

/** How long after a minute starts the local minute timer sweeps, so every tick of that minute is due. */
export const TICK_LAG_MS = 250;

/** When the minute timer next sweeps after `now` (ms): just after the next minute starts. */
export const nextSweepAt = (now: number): number => Math.floor(now / 60_000) * 60_000 + 60_000 + TICK_LAG_MS;
