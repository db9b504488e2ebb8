import { z } from "zod";
import { queryPage, toItem } from "../aws/ddb.ts";
import { config } from "../config.ts";
import { FilterParseError, validationError } from "../errors.ts";
import type { FilterableRun } from "../filter/ast.ts";
import { compileFilter } from "../filter/index.ts";
import { getProject } from "../projects/projects.ts";
import {
  isExpired,
  isRunOf,
  JSON_FIELDS,
  type JsonField,
  type TraceRunItem,
  type TraceRunRecord,
  traceRunKeys,
} from "../records/runs.ts";
import { canonicalTime, dayOf } from "../time.ts";
import { threadIdOf } from "./derive.ts";
import { type IndexEntry, itemsOf, presentItems } from "./index-read.ts";
import { loadFields } from "./payloads.ts";
import { getRunItem } from "./store.ts";
import { type RunField, toWire } from "./wire.ts";

// Reading runs: by trace (in dotted order) or by project, newest first, filtered with the filter language.
// The cursor is opaque: which project, which UTC day, and the sort key to continue below.
export interface RunQuery {
  session?: string[];
  id?: string[];
  trace?: string;
  /** A thread's runs in one project (the thread index), oldest first, within start_time/end_time. */
  thread?: { session: string; id: string };
  is_root?: boolean;
  run_type?: string;
  /** true: runs that failed; false: runs that did not. */
  error?: boolean;
  /** Only the children of this run. */
  parent_run?: string;
  /** Only runs made from one of these dataset examples. */
  reference_example?: string[];
  filter?: string;
  /** The filter language on the root run of each run's trace. */
  trace_filter?: string;
  /** The filter language on every run of each run's trace: kept when any of them matches. */
  tree_filter?: string;
  start_time?: string;
  end_time?: string;
  /** Oldest first ("asc") or newest first (the default); a trace's runs are always in dotted order. */
  order?: "asc" | "desc";
  /** The run fields to answer (`id` always); all when absent. */
  select?: readonly RunField[];
  limit: number;
  cursor?: string;
}

// A cursor comes back from the client: it is decoded to the shape this module wrote, or it is a 422 (a
// well-formed but foreign one would otherwise reach DynamoDB as a bad key).
const ProjectCursor = z.object({
  s: z.number().int().min(0),
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  at: z.string().min(1).max(1024),
});
type Cursor = z.infer<typeof ProjectCursor>;
/** The last key of a trace's GSI2 query: the table's key and the index's, all strings. */
const TraceCursor = z
  .object({ PK: z.string(), SK: z.string(), GSI2PK: z.string(), GSI2SK: z.string() })
  .strict()
  .refine((k) => Object.values(k).every((v) => v.length > 0 && v.length <= 1024));

const encode = (c: Cursor | Record<string, unknown>) => Buffer.from(JSON.stringify(c)).toString("base64url");
function decode<T>(cursor: string | undefined, shape: z.ZodType<T>): T | undefined {
  if (!cursor) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw validationError(["body", "cursor"], "Invalid cursor");
  }
  const parsed = shape.safeParse(value);
  if (!parsed.success) throw validationError(["body", "cursor"], "Invalid cursor");
  return parsed.data;
}

function compile(filter: string | undefined, field: string) {
  try {
    return filter ? compileFilter(filter) : undefined;
  } catch (err) {
    if (err instanceof FilterParseError) throw validationError(["body", field], err.message, "filter_syntax");
    throw err;
  }
}

type Candidate = TraceRunItem | TraceRunRecord;

/**
 * Whether a stored run is answered: the plain conditions on the item first, then the filter language on the
 * run with its JSON fields, then the trace's conditions (each trace judged once per query). `reads()` tells how
 * many stored runs the trace conditions read since it was last asked (they count against the read's budget).
 */
function matcher(tenant: string, q: RunQuery) {
  const filter = compile(q.filter, "filter");
  const traceFilter = compile(q.trace_filter, "trace_filter");
  const treeFilter = compile(q.tree_filter, "tree_filter");
  const traces = new Map<string, Promise<boolean>>();
  const examples = q.reference_example && new Set(q.reference_example.map((id) => id.toLowerCase()));
  let read = 0;
  const traceMatches = async (trace: string) => {
    if (traceFilter) {
      const root = await getRunItem(tenant, trace);
      read++;
      if (!root || !traceFilter(await filterable(root))) return false;
    }
    if (!treeFilter) return true;
    let lastKey: Record<string, unknown> | undefined;
    do {
      const page = await traceRunsPage(tenant, trace, lastKey);
      read += page.items.length;
      for (const item of page.items) if (!isExpired(item) && treeFilter(await filterable(item))) return true;
      lastKey = page.lastKey;
    } while (lastKey);
    return false;
  };
  const match = async (item: Candidate) => {
    if (q.is_root !== undefined && item.is_root !== q.is_root) return false;
    if (q.run_type && item.run_type !== q.run_type) return false;
    if (q.error !== undefined && (item.status === "error") !== q.error) return false;
    if (q.parent_run && item.parent_run_id?.toLowerCase() !== q.parent_run.toLowerCase()) return false;
    if (q.reference_example && !examples?.has(item.reference_example_id?.toLowerCase() ?? "")) return false;
    if (filter && !filter(await filterable(item))) return false;
    if (!traceFilter && !treeFilter) return true;
    if (!traces.has(item.trace_id)) traces.set(item.trace_id, traceMatches(item.trace_id));
    return traces.get(item.trace_id)!;
  };
  const reads = () => {
    const n = read;
    read = 0;
    return n;
  };
  return { match, reads };
}

/** One page of a trace's runs, in dotted order. */
async function traceRunsPage(
  tenant: string,
  trace: string,
  lastKey?: Record<string, unknown>,
  limit?: number,
) {
  const page = await queryPage<IndexEntry & { id?: string }>("runs", {
    IndexName: "GSI2",
    KeyConditionExpression: "GSI2PK = :pk",
    values: { ":pk": traceRunKeys.trace(tenant, trace) },
    ExclusiveStartKey: lastKey ? toItem(lastKey) : undefined,
    ...(limit ? { Limit: limit } : {}),
  });
  // The index holds keys and ids: the runs themselves are read from the table.
  const items = await presentItems<TraceRunItem>(page.items.filter(isRunOf(tenant)));
  return { ...page, items: items.filter(isRunOf(tenant)) };
}

/**
 * A stored run as the filter evaluator reads it, with its JSON fields loaded. Their values are whatever the
 * client sent, hence the cast: the evaluator checks the shape of what it reads (anything unexpected is no match).
 */
export const asFilterable = (item: Partial<TraceRunRecord>, fields: Record<JsonField, unknown>) =>
  ({ ...item, ...fields, thread_id: item.thread_id ?? threadIdOf(fields.extra) }) as FilterableRun;

async function filterable(item: Partial<TraceRunRecord>) {
  return asFilterable(item, await loadFields(item));
}

const days = (from: string, to: string) => {
  const out: string[] = [];
  for (let d = Date.parse(`${to}T00:00:00Z`); d >= Date.parse(`${from}T00:00:00Z`); d -= 86_400_000)
    out.push(new Date(d).toISOString().slice(0, 10));
  return out;
};

export async function queryRuns(tenant: string, q: RunQuery) {
  const { match, reads } = matcher(tenant, q);
  const answer = answerer(q.select);
  if (q.id?.length) {
    const items = (await Promise.all(q.id.map((id) => getRunItem(tenant, id)))).filter((i) => !!i);
    const kept = [];
    for (const i of items) if (await match(i)) kept.push(await answer(i));
    return { runs: kept, cursors: { next: null } };
  }
  if (q.trace) return queryTrace(tenant, q.trace, q, match, reads, answer);
  if (q.thread) return queryThread(tenant, q.thread, q, match, reads, answer);
  if (!q.session?.length)
    throw validationError(["body", "session"], "Give session (project ids), trace or id");
  const lower = q.start_time ? canonicalTime(q.start_time) : undefined;
  const upper = q.end_time ? canonicalTime(q.end_time) : undefined;
  const asc = q.order === "asc";
  // Sort keys are `<start>#<id>`: "!" sorts below every time, "~" above; `<upper>#` is below any run at `upper`.
  const bounds = { lo: lower ?? "!", hi: upper ? `${upper}#` : "~" };
  if (bounds.lo >= bounds.hi) return { runs: [], cursors: { next: null } };
  const cursor = decode(q.cursor, ProjectCursor);
  const runs: Record<string, unknown>[] = [];
  // The read's budget: runs read plus ten per page fetched. When it is spent, what was found so far is answered
  // with a cursor at the place the next read starts (the SDKs follow it, empty pages included).
  const budget = config.runs.queryScanBudget;
  let spent = 0;
  for (let s = cursor?.s ?? 0; s < q.session.length; s++) {
    const project = await getProject(tenant, q.session[s]);
    const [firstRun, lastRun] = [project.first_run_start_time, project.last_run_start_time];
    if (!firstRun || !lastRun) continue;
    const first = dayOf(lower && lower > firstRun ? lower : firstRun);
    const last = dayOf(upper && upper < lastRun ? upper : lastRun);
    const span = days(first, last);
    for (const day of asc ? span.reverse() : span) {
      if (cursor && s === cursor.s && (asc ? day < cursor.day : day > cursor.day)) continue;
      // The place after which (before which, newest first) the day's reading goes on: exclusive.
      let at = cursor && s === cursor.s && day === cursor.day ? cursor.at : asc ? bounds.lo : bounds.hi;
      for (;;) {
        if (spent >= budget) return { runs, cursors: { next: encode({ s, day, at }) } };
        const page = await mergedPage(tenant, q.session[s], day, at, bounds, q.limit, asc);
        spent += 10;
        for (const [i, entry] of page.entries.entries()) {
          if (spent++ >= budget) return { runs, cursors: { next: encode({ s, day, at }) } };
          at = entry.GSI1SK;
          const item = page.items[i];
          const kept = !!item && isRunOf(tenant)(item) && !isExpired(item) && (await match(item));
          // What the trace conditions read counts, whether or not the run was kept.
          spent += reads();
          if (!kept) continue;
          runs.push(await answer(item));
          if (runs.length >= q.limit) return { runs, cursors: { next: encode({ s, day, at }) } };
        }
        if (page.done) break;
      }
    }
  }
  return { runs, cursors: { next: null } };
}

/**
 * Items of one day across all shards past `at` in the reading's direction (newest first unless `asc`): only
 * those no unread shard item could come before. `entries` are what the index holds (the place of each), `items`
 * the runs read from the table (undefined for one gone meanwhile).
 */
async function mergedPage(
  tenant: string,
  session: string,
  day: string,
  at: string,
  bounds: { lo: string; hi: string },
  limit: number,
  asc: boolean,
) {
  const pages = await Promise.all(
    Array.from({ length: config.runs.shards }, (_, shard) =>
      queryPage<IndexEntry & { id?: string; GSI1SK: string }>("runs", {
        IndexName: "GSI1",
        KeyConditionExpression: "GSI1PK = :pk AND GSI1SK BETWEEN :lo AND :hi",
        values: {
          ":pk": traceRunKeys.partition(tenant, session, day, shard),
          ":lo": asc ? at : bounds.lo,
          ":hi": asc ? bounds.hi : at,
        },
        ScanIndexForward: asc,
        Limit: Math.max(limit, 25),
      }),
    ),
  );
  const open = pages.filter((p) => p.lastKey);
  const lastKeys = open.map((p) => p.items[p.items.length - 1].GSI1SK).sort();
  // The furthest place every open shard has been read to: items beyond it could interleave with unread ones.
  const boundary = asc ? lastKeys[0] : lastKeys.pop();
  const entries = pages
    .flatMap((p) => p.items)
    .filter(
      (i) =>
        (asc ? i.GSI1SK > at : i.GSI1SK < at) &&
        (boundary === undefined || (asc ? i.GSI1SK <= boundary : i.GSI1SK >= boundary)) &&
        isRunOf(tenant)(i),
    )
    .sort((a, b) => (a.GSI1SK < b.GSI1SK ? -1 : 1) * (asc ? 1 : -1));
  return { entries, items: await itemsOf<TraceRunItem>(entries), done: open.length === 0 };
}

async function queryTrace(
  tenant: string,
  trace: string,
  q: RunQuery,
  match: (item: Candidate) => Promise<boolean>,
  reads: () => number,
  answer: (item: TraceRunRecord) => Promise<Record<string, unknown>>,
) {
  let lastKey: Record<string, unknown> | undefined = decode(q.cursor, TraceCursor);
  // Another trace's (or workspace's) key is not a place in this trace.
  if (lastKey && lastKey.GSI2PK !== traceRunKeys.trace(tenant, trace))
    throw validationError(["body", "cursor"], "Invalid cursor");
  const runs: Record<string, unknown>[] = [];
  const budget = config.runs.queryScanBudget;
  let spent = 0;
  do {
    const page = await traceRunsPage(tenant, trace, lastKey, q.limit - runs.length);
    for (const item of page.items) if (!isExpired(item) && (await match(item))) runs.push(await answer(item));
    lastKey = page.lastKey;
    spent += page.items.length + 10 + reads();
  } while (lastKey && runs.length < q.limit && spent < budget);
  return { runs, cursors: { next: lastKey ? encode(lastKey) : null } };
}

const ThreadCursor = z.object({ PK: z.string(), SK: z.string(), GSI3PK: z.string(), GSI3SK: z.string() });

/** A thread's runs through the thread index, oldest first: what it reads is the thread's runs, not the project's. */
async function queryThread(
  tenant: string,
  thread: { session: string; id: string },
  q: RunQuery,
  match: (item: Candidate) => Promise<boolean>,
  reads: () => number,
  answer: (item: TraceRunRecord) => Promise<Record<string, unknown>>,
) {
  const pk = traceRunKeys.threadRuns(tenant, thread.session, thread.id, "", "").GSI3PK;
  let lastKey: Record<string, unknown> | undefined = decode(q.cursor, ThreadCursor);
  if (lastKey && lastKey.GSI3PK !== pk) throw validationError(["body", "cursor"], "Invalid cursor");
  const lower = q.start_time ? canonicalTime(q.start_time) : undefined;
  const upper = q.end_time ? canonicalTime(q.end_time) : undefined;
  const runs: Record<string, unknown>[] = [];
  const budget = config.runs.queryScanBudget;
  let spent = 0;
  do {
    const page = await queryPage<IndexEntry & { id?: string; thread_id?: string }>("runs", {
      IndexName: "GSI3",
      KeyConditionExpression: "GSI3PK = :pk AND GSI3SK BETWEEN :lo AND :hi",
      values: { ":pk": pk, ":lo": lower ?? "!", ":hi": upper ? `${upper}#` : "~" },
      ExclusiveStartKey: lastKey ? toItem(lastKey) : undefined,
      Limit: Math.max(q.limit - runs.length, 25),
    });
    // A long thread id is a digest in the key: the run's own thread id says whose it is.
    const ofThread = (i: { PK?: string; SK?: string; id?: string; thread_id?: string | null }) =>
      isRunOf(tenant)(i) && i.thread_id === thread.id;
    // The index holds keys, ids and thread ids: the runs themselves are read from the table.
    const items = (await presentItems<TraceRunItem>(page.items.filter(ofThread))).filter(ofThread);
    for (const item of items) if (!isExpired(item) && (await match(item))) runs.push(await answer(item));
    lastKey = page.lastKey;
    spent += page.items.length + 10 + reads();
  } while (lastKey && runs.length < q.limit && spent < budget);
  return { runs, cursors: { next: lastKey ? encode(lastKey) : null } };
}

/** A run as answered: whole, or only the selected fields (and its id), each present (null when it has none). */
function answerer(select: readonly RunField[] | undefined) {
  if (!select) return (item: TraceRunRecord) => toWire(item);
  const fields = [...new Set<RunField>(["id", ...select])];
  // The JSON fields live in the item or in S3, the attachments in the run's partition: read only when selected.
  const content = fields.some((f) => (JSON_FIELDS as readonly string[]).includes(f) || f === "messages");
  const attachments = fields.includes("s3_urls");
  return async (item: TraceRunRecord) => {
    const run = await toWire(item, { fields: content, attachments });
    return Object.fromEntries(fields.map((f) => [f, run[f] ?? null]));
  };
}

// — one project-day, shard after shard (the bulk export's read) —

/** Where a read of one project-day goes on: the shard, and DynamoDB's last key in it (none at its start). */
export interface DayCursor {
  shard: number;
  key?: Record<string, unknown>;
}

/** The runs of one project-day that started in [lower, upper) (canonical times). */
export interface DayRead {
  tenant: string;
  session: string;
  day: string;
  lower: string;
  upper: string;
  /** The stored attributes to read (all when absent). */
  attributes?: readonly string[];
  /** Items per page at the most (DynamoDB's page size when absent). */
  limit?: number;
}

/** True when a read from `cursor` has nothing left: every shard has been read. */
export const dayReadDone = (cursor: DayCursor): boolean => cursor.shard >= config.runs.shards;

/**
 * One page of a project-day's runs from `cursor`: the shards in turn, each in start order. `next` is where
 * the following page starts (a checkpoint to store), `done` says the day has been read to its end. Items hold
 * only the `attributes` read when given (hence Partial).
 */
export async function readDayPage(
  read: DayRead,
  cursor: DayCursor,
): Promise<{ items: Partial<TraceRunItem>[]; next: DayCursor; done: boolean }> {
  const page = await queryPage<IndexEntry & { id?: string }>("runs", {
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk AND GSI1SK BETWEEN :lo AND :hi",
    values: {
      ":pk": traceRunKeys.partition(read.tenant, read.session, read.day, cursor.shard),
      ":lo": read.lower,
      // Sort keys are `<start>#<id>`: a run starting exactly at `upper` sorts after `<upper>`.
      ":hi": read.upper,
    },
    ExclusiveStartKey: cursor.key ? toItem(cursor.key) : undefined,
    ...(read.limit ? { Limit: read.limit } : {}),
  });
  // The index holds keys and ids: the attributes read come from the table (the id too: an item is trusted by
  // its primary key).
  const attributes = read.attributes && [...read.attributes, "id"];
  const items = await presentItems<Partial<TraceRunItem>>(
    page.items.filter(isRunOf(read.tenant)),
    attributes,
  );
  const next: DayCursor = page.lastKey
    ? { shard: cursor.shard, key: page.lastKey }
    : { shard: cursor.shard + 1 };
  return { items: items.filter(isRunOf(read.tenant)), next, done: dayReadDone(next) };
}
