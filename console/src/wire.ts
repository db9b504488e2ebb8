import type { z } from "zod";
import type { Assistant as AssistantOut } from "../../shared/agent/assistants/assistants.ts";
import type { GraphSchemas } from "../../shared/agent/assistants/graph-schemas.ts";
import type { Cron as CronOut } from "../../shared/agent/crons/crons.ts";
import type { StoreItemWire } from "../../shared/agent/store/api.ts";
import type { ThreadState as ThreadStateOut } from "../../shared/agent/threads/state.ts";
import type { Thread as ThreadOut } from "../../shared/agent/threads/threads.ts";
import type { DeploymentOut } from "../../shared/control/deployments.ts";
import type { RevisionConfigOut, RevisionLogsOut, RevisionOut } from "../../shared/control/revisions.ts";
import type { DestinationOut } from "../../shared/export/destination-schemas.ts";
import type { ExportRunOut } from "../../shared/export/export-runs.ts";
import type { BulkExportOut } from "../../shared/export/exports.ts";
import type { Project as ProjectOut } from "../../shared/projects/projects.ts";
import type { ExportRunStatus } from "../../shared/records/export.ts";
import type { TraceRunRecord } from "../../shared/records/runs.ts";
import type { Feedback as FeedbackOut } from "../../shared/runs/feedback.ts";
import type { StatRun } from "../../shared/runs/stats.ts";

// The console's one source of the platform's wire shapes: the server's own types and zod schemas, imported as
// types only (esbuild drops `import type`, so nothing server-side lands in the bundle; the console's layering
// test holds every import leaving console/src to that). Why not generated from the served OpenAPI document:
// half the routes the console reads (threads, state, crons, graph, the trace run query) answer without a
// response schema there, so the generated types would be `unknown` where the server's TypeScript types are
// precise. A field renamed on the server breaks `tsc -p console/src`.
// Where the server types a field `unknown` (a graph's state, the LangChain message dicts in it, interrupts),
// the console's reading of it is written here, on top of the server's type, and said so.

// Control plane (shared/control).
export type Deployment = z.output<typeof DeploymentOut>;
export type Revision = RevisionOut;
export type RevisionConfig = z.output<typeof RevisionConfigOut>;
export type RevisionLogs = z.output<typeof RevisionLogsOut>;
export type RevisionStatus = Revision["status"];
/** The control plane's list answer: a page of resources and the offset it started at. */
export interface Page<T> {
  resources: T[];
  offset: number;
}

// Bulk export (shared/export).
export type Destination = z.output<typeof DestinationOut>;
export type BulkExport = z.output<typeof BulkExportOut>;
export type ExportRun = z.output<typeof ExportRunOut>;
export type ExportStatus = ExportRunStatus;

// Traces (shared/runs, shared/projects).
export type Project = ProjectOut;
export type Feedback = FeedbackOut;
/**
 * A trace run as the run query and GET /runs/{id} answer it (shared/runs/wire.ts toWire): the stored record's
 * fields, its figures as the run stats read them, the JSON fields decoded, the llm-only ones optional.
 */
export type Run = Pick<
  TraceRunRecord,
  | "id"
  | "name"
  | "run_type"
  | "trace_id"
  | "session_id"
  | "is_root"
  | "tags"
  | "format_errors"
  | "tokens_estimated"
> &
  StatRun & {
    parent_run_id: string | null;
    dotted_order: string | null;
    inputs: unknown;
    outputs: unknown;
    error: unknown;
    extra?: { metadata?: Record<string, unknown> } | null;
    messages?: { input_messages: unknown[]; output_messages: unknown[] } | null;
    /** Files sent with the run: `attachment.<name>` → a presigned URL and the file's type. */
    s3_urls?: Record<string, { presigned_url: string; mime_type: string }>;
  };
/** A page of the run query (POST /runs/query): the runs and the cursor of the next page. */
export interface RunQueryPage {
  runs: Run[];
  cursors: { next: string | null };
}
/** A page of the thread queries (POST /api/v2/threads/query, GET …/threads/{id}/traces). */
export interface ThreadsPage<T> {
  items: T[];
  next_cursor: string | null;
}
/** A conversation thread of a project (POST /runs/threads; shared/runs/threads.ts answers it untyped). */
export interface TraceThread {
  thread_id: string;
  count: number;
  min_start_time: string;
  max_start_time: string;
  num_errored_turns: number;
  total_tokens: number;
  total_cost: number | null;
  first_inputs: string | null;
  last_trace_id: string;
}
/** One turn of a conversation thread (GET /runs/threads/{id}; shared/runs/threads.ts answers it untyped). */
export interface ThreadTrace {
  trace_id: string;
  turn_number: number;
  name: string;
  start_time: string;
  latency: number | null;
  inputs_preview: string | null;
  outputs_preview: string | null;
  error_preview: string | null;
  total_tokens: number;
}

// The agent server (shared/agent), the LangGraph server API.
export type Assistant = z.output<typeof AssistantOut>;
export type Thread = ThreadOut;
export type Cron = CronOut;
export type Schemas = GraphSchemas;
export type StoreItem = StoreItemWire & { score?: number };

/** A LangChain message dict in a graph's state (`type` "human" | "ai" | "tool" | …): the server passes it on. */
export interface Message {
  id?: string;
  type: string;
  content: unknown;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_chunks?: { id?: string; name?: string; args?: string; index?: number }[];
  tool_call_id?: string;
  status?: string;
}
export interface ToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}
export interface Interrupt {
  id?: string;
  value: unknown;
}
/** A pending task of a checkpoint (the server answers `tasks: unknown[]`, LangGraph's PregelTask). */
export interface Task {
  id: string;
  name: string;
  error?: string | null;
  interrupts?: Interrupt[];
  result?: unknown;
}
/**
 * A thread's state at one checkpoint (GET /threads/{id}/state, POST /threads/{id}/history): the server's
 * ThreadState, with the console's reading of what it leaves `unknown`.
 */
export type ThreadState = Omit<
  ThreadStateOut,
  "values" | "tasks" | "interrupts" | "checkpoint" | "metadata"
> & {
  values: { messages?: Message[]; [key: string]: unknown } | null;
  tasks?: Task[];
  interrupts?: Interrupt[];
  checkpoint: { checkpoint_id: string; checkpoint_ns?: string } | null;
  parent_checkpoint?: { checkpoint_id: string } | null;
  metadata?: {
    step?: number;
    source?: string;
    writes?: Record<string, unknown> | null;
    run_id?: string;
  } | null;
};
/** A frame of a run's stream (server-sent events: the event's name and its JSON data). */
export interface StreamPart {
  event: string;
  data: any;
}
/** The drawable graph (GET /assistants/{id}/graph): LangChain's Graph.toJSON, which the server answers as is. */
export interface ServerGraph {
  nodes: { id: string; type?: string; data?: unknown; metadata?: Record<string, unknown> | null }[];
  edges: { source: string; target: string; conditional?: boolean; data?: unknown }[];
}
