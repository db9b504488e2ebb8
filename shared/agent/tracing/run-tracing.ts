import type {
  BaseCallbackHandler,
  HandleLLMNewTokenCallbackFields,
  NewTokenIndices,
} from "@langchain/core/callbacks/base";
import { BaseTracer, type Run } from "@langchain/core/tracers/base";
import { config as platformConfig } from "../../config.ts";
import { logger } from "../../log.ts";
import { isoNow } from "../../time.ts";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { TraceBatch, type TraceBatchOptions } from "./batch.ts";
import { createBody, endBody } from "./format.ts";

// Every agent run is traced to its deployment's tracing project through the platform's own ingestion, as if
// the langsmith SDK had sent it: the graph run is the root chain run (id = the agent run's id, name = the
// graph id), nodes are chain runs under it, chat model calls llm runs in the platform's message format.
// A deployment without a tracing project (the local graph server) is not traced.
export interface TracedRun {
  run_id: string;
  thread_id: string;
  graph_id: string;
  assistant_id?: string;
}

/** What a tracer sets in a graph call's config: its callbacks and the id of its root run. */
export interface TracedCall {
  callbacks?: unknown;
  runId?: unknown;
}

export interface RunTrace {
  callbacks: BaseCallbackHandler[];
  /** Puts the tracer in a graph call's config, with the agent run's id as the root run's id. */
  attach(config: TracedCall): void;
  /** Closes what is still open (a cancelled run) and ingests what is queued. Never throws. */
  end(): Promise<void>;
}

const HIDDEN = "langsmith:hidden";
const UNFINISHED = "The agent run ended before this step finished";

/** Builds run records from LangChain callbacks and queues them; no I/O happens in a callback. */
class PlatformTracer extends BaseTracer {
  name = "agent_platform_tracer";
  private rootSeen = false;
  private readonly parents = new Set<string>();
  private readonly postedInputs = new Map<string, unknown>();

  constructor(
    private readonly batch: TraceBatch,
    private readonly sessionId: string,
    private readonly root: { name: string; metadata: Record<string, unknown> },
  ) {
    // Awaited handlers: the run records are complete when graph.stream returns (they only touch memory).
    super({ _awaitHandler: true });
  }

  protected persistRun(): Promise<void> {
    return Promise.resolve();
  }

  // Only whether a run has children is needed; the base class would keep the whole tree in memory.
  protected override _addChildRun(parentRun: Run): void {
    this.parents.add(parentRun.id);
  }

  // Time to first token needs one `new_token` event; the base class records every token with its chunk.
  override async handleLLMNewToken(
    token: string,
    idx: NewTokenIndices,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    fields?: HandleLLMNewTokenCallbackFields,
  ): Promise<Run> {
    const run = this.getRunById(runId);
    if (run?.run_type !== "llm") return super.handleLLMNewToken(token, idx, runId, parentRunId, tags, fields);
    if (!run.events.some((e) => e.name === "new_token"))
      run.events.push({ name: "new_token", time: isoNow(), kwargs: { token } });
    return run;
  }

  override onRunCreate(run: Run): void {
    if (!run.parent_run_id && !this.rootSeen) {
      this.rootSeen = true;
      run.name = this.root.name;
      run.extra = { ...run.extra, metadata: { ...(run.extra?.metadata ?? {}), ...this.root.metadata } };
    }
    // Framework plumbing (LangGraph's __start__ step) is left out unless something ran inside it.
    if (run.tags?.includes(HIDDEN)) return;
    this.postedInputs.set(run.id, run.inputs);
    this.batch.create({ ...createBody(run, this.sessionId), id: run.id });
  }

  override onRunUpdate(run: Run): void {
    const posted = this.postedInputs.has(run.id);
    const inputsChanged = this.postedInputs.get(run.id) !== run.inputs;
    this.postedInputs.delete(run.id);
    const hasChildren = this.parents.delete(run.id);
    if (!posted) {
      if (!run.tags?.includes(HIDDEN) || hasChildren)
        this.batch.create({ ...createBody(run, this.sessionId), id: run.id });
      return;
    }
    const body = endBody(run);
    if (!inputsChanged) delete body.inputs;
    this.batch.update(run.id, body);
  }

  /** Ends the runs the graph left open (a cancelled or failed agent run). */
  closeOpenRuns(): void {
    for (const run of this.runMap.values()) {
      run.end_time = Date.now();
      run.error ??= UNFINISHED;
      this.onRunUpdate(run);
    }
    this.runMap.clear();
  }
}

// The runs of a workspace share one batch: every flush ingests whatever all of them traced meanwhile, so a
// busy server makes one ingestion call a second instead of several per run.
const tenantBatches = new Map<string, TraceBatch>();
function tenantBatch(tenant: string, ingest: TraceBatchOptions["ingest"]): TraceBatch {
  let b = tenantBatches.get(tenant);
  if (!b) {
    b = new TraceBatch(tenant, { flushMs: platformConfig.agentTraceFlushMs, ingest });
    tenantBatches.set(tenant, b);
  }
  return b;
}

/**
 * Sends what every workspace's shared batch holds now, and waits for it (a process about to exit calls it: the
 * shared timer would otherwise be the last to send a finished run's end). At most `ms`; failures are logged by
 * the batches themselves.
 */
export async function flushRunTraces(ms = 3000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((done) => {
    timer = setTimeout(done, ms);
  });
  await Promise.race([Promise.all([...tenantBatches.values()].map((b) => b.flush())), late]);
  clearTimeout(timer);
}

/**
 * The trace of one agent run, or undefined when the deployment has no tracing project. Given options, the
 * run gets a batch of its own; else it shares its workspace's, and its end leaves the last writes to the
 * shared timer — unless `flushAtEnd` (a worker function, which may be frozen once it returns: its executor
 * settles before returning, runs/executor.ts) has it flush at once.
 */
export function startRunTrace(
  d: Pick<AgentDeployment, "tenant_id" | "tracing_project_id" | "runtime">,
  run: TracedRun,
  opts: Partial<TraceBatchOptions> = {},
  flushAtEnd = false,
): RunTrace | undefined {
  if (!d.tracing_project_id) return undefined;
  const own = Object.keys(opts).length > 0;
  const batch = own
    ? new TraceBatch(d.tenant_id, {
        flushMs: platformConfig.agentTraceFlushMs,
        ingest: d.runtime?.traces,
        ...opts,
      })
    : tenantBatch(d.tenant_id, d.runtime?.traces);
  const metadata: Record<string, unknown> = {
    run_id: run.run_id,
    thread_id: run.thread_id,
    graph_id: run.graph_id,
    ...(run.assistant_id ? { assistant_id: run.assistant_id } : {}),
  };
  const tracer = new PlatformTracer(batch, d.tracing_project_id, { name: run.graph_id, metadata });
  let ended: Promise<void> | undefined;
  return {
    callbacks: [tracer],
    attach(config) {
      config.callbacks = [...(Array.isArray(config.callbacks) ? config.callbacks : []), tracer];
      config.runId ??= run.run_id;
    },
    end() {
      ended ??= (async () => {
        try {
          tracer.closeOpenRuns();
        } catch (err) {
          logger.warn("agent trace: closing open runs failed", { run_id: run.run_id, error: err });
        }
        if (own || flushAtEnd) await batch.flush();
      })();
      return ended;
    },
  };
}

// The worker's two hooks: trace a run's graph call, and finish that trace when the run is over.
const active = new Map<string, RunTrace>();

/**
 * Adds the run's tracer to the graph call's config (no-op without a tracing project). Never throws. `flushAtEnd`:
 * the run's end sends its trace at once (startRunTrace).
 */
export function traceRun(d: AgentDeployment, run: TracedRun, config: TracedCall, flushAtEnd: boolean): void {
  try {
    const { run_id, thread_id, graph_id, assistant_id } = run;
    const trace = startRunTrace(d, { run_id, thread_id, graph_id, assistant_id }, {}, flushAtEnd);
    if (!trace) return;
    trace.attach(config);
    active.set(run.run_id, trace);
  } catch (err) {
    logger.warn("agent trace: could not start", { run_id: run.run_id, error: err });
  }
}

/** Ingests what remains of the run's trace. Never throws. */
export async function endRunTrace(runId: string): Promise<void> {
  const trace = active.get(runId);
  active.delete(runId);
  await trace?.end();
}
