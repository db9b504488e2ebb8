import { clip } from "../errors.ts";
import type { Part } from "./multipart.ts";

// LangSmith multipart ingestion names every part: post.<run_id>[.<field>], patch.<run_id>[.<field>],
// feedback.<id>, attachment.<run_id>.<name>. Big run fields travel as parts of their own.

/** Run fields the SDKs split out of the run JSON into `<kind>.<run_id>.<field>` parts. */
const RUN_FIELD_PARTS = ["inputs", "outputs", "events", "extra", "error", "serialized"] as const;

export interface Attachment {
  runId: string;
  name: string;
  contentType: string;
  data: Buffer;
}

export interface PartError {
  /** The part's name as sent. */
  part: string;
  message: string;
}

export interface GroupedParts {
  /** Run id (lower-case) → run object with its field parts merged in and `id` set. */
  posts: Map<string, Record<string, unknown>>;
  patches: Map<string, Record<string, unknown>>;
  feedback: Record<string, unknown>[];
  attachments: Attachment[];
  errors: PartError[];
}

type RunKind = "post" | "patch";
interface RunParts {
  main?: Record<string, unknown>;
  fields: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FIELDS = new Set<string>(RUN_FIELD_PARTS);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Thrown only inside this module; each one becomes an entry in `errors`. */
class PartProblem extends Error {}

function parseJson(data: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw new PartProblem("data is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new PartProblem(`data is not valid JSON: ${(err as Error).message}`);
  }
}

function parseObject(data: Uint8Array): Record<string, unknown> {
  const value = parseJson(data);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new PartProblem("data must be a JSON object");
  }
  return value as Record<string, unknown>;
}

function uuidOf(id: string, what: string): string {
  if (!UUID.test(id)) throw new PartProblem(`${what} "${clip(id)}" is not a UUID`);
  return id.toLowerCase();
}

/** The data's own `id`, unless unset or null, must match the part name's; the name's id is then set. */
function withId(obj: Record<string, unknown>, id: string): Record<string, unknown> {
  if (obj.id != null && (typeof obj.id !== "string" || obj.id.toLowerCase() !== id)) {
    throw new PartProblem(
      `id ${clip(JSON.stringify(obj.id) ?? "")} in the data differs from the id in the part name`,
    );
  }
  return { ...obj, id };
}

interface State {
  runs: Record<RunKind, Map<string, RunParts>>;
  feedbackIds: Set<string>;
  attachmentKeys: Set<string>;
  out: GroupedParts;
}

/** Splits `<id>[.<rest>]`: ids are UUIDs, so the first dot ends the id. */
function splitId(rest: string): [string, string | undefined] {
  const sep = rest.indexOf(".");
  return sep < 0 ? [rest, undefined] : [rest.slice(0, sep), rest.slice(sep + 1)];
}

function addRunPart(st: State, kind: RunKind, rest: string, part: Part): void {
  const [rawId, field] = splitId(rest);
  const runId = uuidOf(rawId, "run id");
  if (field !== undefined && !FIELDS.has(field)) {
    throw new PartProblem(
      `unknown run field "${clip(field)}" (expected one of ${RUN_FIELD_PARTS.join(", ")})`,
    );
  }
  const run = st.runs[kind].get(runId) ?? { fields: {} };
  if (field === undefined) {
    if (run.main) throw new PartProblem("duplicate part: the run was already given");
    run.main = withId(parseObject(part.data), runId);
  } else {
    if (Object.hasOwn(run.fields, field)) throw new PartProblem(`duplicate part: ${field} was already given`);
    run.fields[field] = parseJson(part.data);
  }
  st.runs[kind].set(runId, run);
}

function addFeedback(st: State, rest: string, part: Part): void {
  const id = uuidOf(rest, "feedback id");
  if (st.feedbackIds.has(id)) throw new PartProblem("duplicate part: the feedback was already given");
  st.out.feedback.push(withId(parseObject(part.data), id));
  st.feedbackIds.add(id);
}

function addAttachment(st: State, rest: string, part: Part): void {
  const [rawId, name] = splitId(rest);
  const runId = uuidOf(rawId, "run id");
  if (!name) throw new PartProblem("attachment part has no name after the run id");
  const key = `${runId}.${name}`;
  if (st.attachmentKeys.has(key)) throw new PartProblem("duplicate part: the attachment was already given");
  st.attachmentKeys.add(key);
  st.out.attachments.push({ runId, name, contentType: part.contentType, data: part.data });
}

function addPart(st: State, name: string, part: Part): void {
  const dot = name.indexOf(".");
  const kind = dot < 0 ? name : name.slice(0, dot);
  const rest = dot < 0 ? "" : name.slice(dot + 1);
  if (kind === "post" || kind === "patch") addRunPart(st, kind, rest, part);
  else if (kind === "feedback") addFeedback(st, rest, part);
  else if (kind === "attachment") addAttachment(st, rest, part);
  else
    throw new PartProblem(
      "unknown part name: expected post.<id>, patch.<id>, feedback.<id> or attachment.<id>.<name>",
    );
}

/**
 * Sorts parsed parts into runs, feedback and attachments. Never throws: a part that cannot be used is
 * reported in `errors` and skipped, so one bad part does not lose the rest of the request.
 */
export function groupRunParts(parts: Part[]): GroupedParts {
  const out: GroupedParts = {
    posts: new Map(),
    patches: new Map(),
    feedback: [],
    attachments: [],
    errors: [],
  };
  const st: State = {
    runs: { post: new Map(), patch: new Map() },
    feedbackIds: new Set(),
    attachmentKeys: new Set(),
    out,
  };
  for (const part of parts) {
    const name = String(part?.name);
    try {
      addPart(st, name, part);
    } catch (err) {
      // Anything unexpected is still this part's problem alone.
      const message = err instanceof PartProblem ? err.message : `part could not be read: ${String(err)}`;
      out.errors.push({ part: name, message });
    }
  }
  // Field parts override the same keys in the run JSON, whichever came first; a run may have only fields.
  for (const [id, run] of st.runs.post) out.posts.set(id, { ...run.main, ...run.fields, id });
  for (const [id, run] of st.runs.patch) out.patches.set(id, { ...run.main, ...run.fields, id });
  return out;
}
