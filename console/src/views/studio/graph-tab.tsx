import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import type { AgentServer, RunBody } from "../../agent-api.ts";
import { GraphCanvas } from "../../components/graph-canvas.tsx";
import { layoutGraph, runnableNodes } from "../../components/graph-layout.ts";
import type { Assistant, Schemas, ServerGraph } from "../../wire.ts";
import { CheckpointPanel } from "./checkpoint-panel.tsx";
import { type Command, InterruptAnswer, PausedAt } from "./interrupt-answer.tsx";
import { NodePanel } from "./node-panel.tsx";
import { RunForm, type RunRequest } from "./run-form.tsx";
import { idleProgress, progressReducer, type RunProgress } from "./run-progress.ts";
import { branchesOf, type Checkpoint, idOf, interruptsAt } from "./timeline.ts";
import { TimelineView } from "./timeline-view.tsx";

// The graph mode of the studio: the assistant's graph drawn and moving while a run streams, the run form, the
// thread's timeline with time travel (edit, fork, replay), breakpoints and interrupts.

const LAST_MODES_KEY = ["values", "updates", "debug"];

export function GraphTab({
  server,
  assistant,
  threadId,
  onThread,
  traceLink,
}: {
  server: AgentServer;
  assistant: Assistant;
  threadId?: string;
  onThread: (id: string | undefined) => void;
  traceLink: (runId: string) => string | undefined;
}) {
  const [xray, setXray] = useState(false);
  const [error, setError] = useState<string>();
  const [selectedNode, setSelectedNode] = useState<string>();
  const breakpoints = useBreakpoints();
  const { before, after } = breakpoints;
  const [selectedCheckpoint, setSelectedCheckpoint] = useState<string>();

  const graph = useGraph(server, assistant.assistant_id, xray, setError);
  const schemas = useSchemas(server, assistant.assistant_id, setError);
  const { history, loadHistory } = useHistory(server, setError);
  const { progress, run, runFromForm } = useRunner({
    server,
    assistant,
    threadId,
    onThread,
    breakpoints,
    xray,
    onError: setError,
    // The thread's checkpoints are read before the run is said to have ended, so "ended" means shown.
    afterRun: async (tid) => {
      setSelectedCheckpoint(undefined);
      await loadHistory(tid);
    },
  });
  useEffect(() => {
    setSelectedCheckpoint(undefined);
    void loadHistory(threadId);
  }, [threadId, loadHistory]);

  const layout = useMemo(() => (graph ? layoutGraph(graph) : undefined), [graph]);
  const nodes = useMemo(() => runnableNodes(graph), [graph]);
  const branches = useMemo(() => branchesOf(history), [history]);
  const head = history[0];
  const checkpoint = history.find((c) => idOf(c) === selectedCheckpoint);

  async function fork(values: unknown, asNode: string | undefined, andRun: boolean) {
    if (!threadId || !checkpoint) return;
    try {
      const made = await server.updateState(threadId, {
        values,
        checkpoint_id: idOf(checkpoint),
        ...(asNode ? { as_node: asNode } : {}),
      });
      if (andRun) await run({ input: null, checkpoint_id: made.checkpoint.checkpoint_id });
      else await loadHistory(threadId);
    } catch (e) {
      setError((e as Error).message);
    }
  }

  // The run just streamed, or the one that wrote the thread's latest checkpoint (a thread opened later).
  const lastRun = progress.runId ?? head?.metadata?.run_id;
  const trace = lastRun ? traceLink(lastRun) : undefined;

  return (
    <div className="studio-graph">
      <div className="sg-canvas">
        <GraphBar xray={xray} onXray={setXray} progress={progress} trace={trace} />
        {error && <p role="alert">{error}</p>}
        {progress.error && <p role="alert">Run failed: {progress.error}</p>}
        <GraphPane
          layout={layout}
          progress={progress}
          breakpoints={breakpoints}
          selected={selectedNode}
          onSelect={setSelectedNode}
          nodes={nodes}
          label={`Graph of ${assistant.name ?? assistant.graph_id}`}
        />
      </div>
      <div className="sg-side">
        <RunCard
          assistantId={assistant.assistant_id}
          threadId={threadId}
          onThread={onThread}
          running={progress.running}
          before={before}
          after={after}
          head={head}
          nodes={nodes}
          schemas={schemas}
          run={(body) => void run(body)}
          onRun={runFromForm}
        />
        {threadId && (
          <TimelineCard
            history={history}
            branches={branches}
            selected={selectedCheckpoint}
            onSelect={setSelectedCheckpoint}
            stateSchema={schemas?.state_schema}
            nodes={nodes}
            busy={progress.running}
            onFork={(values, asNode, andRun) => void fork(values, asNode, andRun)}
            onReplay={(id) => void run({ input: null, checkpoint_id: id })}
          />
        )}
      </div>
    </div>
  );
}

/** The assistant's graph, drawn with its subgraphs when `xray` is on. */
function useGraph(
  server: AgentServer,
  assistantId: string,
  xray: boolean,
  onError: (e: string | undefined) => void,
) {
  const [graph, setGraph] = useState<ServerGraph>();
  useEffect(() => {
    onError(undefined);
    server.graph(assistantId, xray).then(setGraph, (e) => onError(e.message));
  }, [server, assistantId, xray, onError]);
  return graph;
}

function useSchemas(server: AgentServer, assistantId: string, onError: (e: string) => void) {
  const [schemas, setSchemas] = useState<Schemas>();
  useEffect(() => {
    server.schemas(assistantId).then(setSchemas, (e) => onError(e.message));
  }, [server, assistantId, onError]);
  return schemas;
}

/** A thread's checkpoints; only the latest read is shown (one started when a run made its thread may answer
 * after the run's last one). */
function useHistory(server: AgentServer, onError: (e: string) => void) {
  const [history, setHistory] = useState<Checkpoint[]>([]);
  const reads = useRef(0);
  const loadHistory = useCallback(
    async (tid: string | undefined) => {
      const n = ++reads.current;
      if (!tid) return setHistory([]);
      try {
        const h = await server.history(tid, 200);
        if (n === reads.current) setHistory(h);
      } catch (e) {
        if (n === reads.current) onError((e as Error).message);
      }
    },
    [server, onError],
  );
  return { history, loadHistory };
}

/** The run card: the thread it runs on, the breakpoints set, an interrupt or a pause to answer, the run form. */
function RunCard({
  assistantId,
  threadId,
  onThread,
  running,
  before,
  after,
  head,
  nodes,
  schemas,
  run,
  onRun,
}: {
  assistantId: string;
  threadId?: string;
  onThread: (id: string | undefined) => void;
  running: boolean;
  before: string[];
  after: string[];
  head: Checkpoint | undefined;
  nodes: string[];
  schemas: Schemas | undefined;
  run: (body: RunBody) => void;
  onRun: (r: RunRequest) => void;
}) {
  const waiting = !running && head ? interruptsAt(head) : [];
  const paused = !running && head && head.next.length > 0 && waiting.length === 0;
  return (
    <section aria-label="Run" className="card">
      <div className="sg-head">
        <h2>Run</h2>
        <span className="muted">
          {threadId ? `Thread ${threadId.slice(0, 8)}` : "A new thread"}
          {threadId && (
            <button type="button" className="link" onClick={() => onThread(undefined)} disabled={running}>
              New thread
            </button>
          )}
        </span>
      </div>
      {(before.length > 0 || after.length > 0) && (
        <p className="muted">
          Breakpoints:{" "}
          {before
            .map((n) => `before ${n}`)
            .concat(after.map((n) => `after ${n}`))
            .join(", ")}
        </p>
      )}
      {waiting.length > 0 && (
        <InterruptAnswer
          key={idOf(head!)}
          interrupts={waiting}
          nodes={nodes}
          busy={running}
          onAnswer={(command: Command) => run({ input: null, command })}
        />
      )}
      {paused && <PausedAt next={head!.next} busy={running} onContinue={() => run({ input: null })} />}
      <RunForm key={assistantId} schemas={schemas} busy={running} onRun={onRun} />
    </section>
  );
}

/** Above the drawing: subgraphs on or off, where the run is, and the last run's trace. */
function GraphBar({
  xray,
  onXray,
  progress,
  trace,
}: {
  xray: boolean;
  onXray: (on: boolean) => void;
  progress: RunProgress;
  trace: string | undefined;
}) {
  return (
    <div className="sg-bar">
      <label className="check">
        <input type="checkbox" checked={xray} onChange={(e) => onXray(e.target.checked)} />
        Show subgraphs
      </label>
      <span role="status" className="muted sg-status">
        {progress.running ? "Running… " : progress.runId ? "Run ended. " : ""}
        {progress.order.length ? `Ran: ${progress.order.join(" → ")}` : ""}
      </span>
      {trace && !progress.running && <a href={trace}>Trace of this run</a>}
    </div>
  );
}

/** The thread's checkpoints as branches; the chosen one opened to edit and fork, or replay. */
function TimelineCard({
  history,
  branches,
  selected,
  onSelect,
  stateSchema,
  nodes,
  busy,
  onFork,
  onReplay,
}: {
  history: Checkpoint[];
  branches: ReturnType<typeof branchesOf>;
  selected: string | undefined;
  onSelect: (id: string | undefined) => void;
  stateSchema: Schemas["state_schema"] | undefined;
  nodes: string[];
  busy: boolean;
  onFork: (values: unknown, asNode: string | undefined, andRun: boolean) => void;
  onReplay: (checkpointId: string) => void;
}) {
  const checkpoint = history.find((c) => idOf(c) === selected);
  return (
    <section aria-label="Timeline" className="card">
      <h2>Timeline</h2>
      <TimelineView
        branches={branches}
        selected={selected}
        onSelect={(c) => onSelect(idOf(c) === selected ? undefined : idOf(c))}
      />
      {checkpoint && (
        <CheckpointPanel
          key={idOf(checkpoint)}
          checkpoint={checkpoint}
          history={history}
          stateSchema={stateSchema}
          nodes={nodes}
          busy={busy}
          onFork={onFork}
          onReplay={() => onReplay(idOf(checkpoint))}
        />
      )}
    </section>
  );
}

type Breakpoints = ReturnType<typeof useBreakpoints>;

/** The nodes the next run pauses before or after. */
function useBreakpoints() {
  const [before, setBefore] = useState<string[]>([]);
  const [after, setAfter] = useState<string[]>([]);
  const toggle = (node: string, when: "before" | "after") =>
    (when === "before" ? setBefore : setAfter)((list) =>
      list.includes(node) ? list.filter((n) => n !== node) : [...list, node],
    );
  return { before, after, toggle };
}

/** The drawing, moving with the run, and the chosen node's last update and breakpoints. */
function GraphPane({
  layout,
  progress,
  breakpoints,
  selected,
  onSelect,
  nodes,
  label,
}: {
  layout: ReturnType<typeof layoutGraph> | undefined;
  progress: RunProgress;
  breakpoints: Breakpoints;
  selected: string | undefined;
  onSelect: (id: string | undefined) => void;
  nodes: string[];
  label: string;
}) {
  const { before, after, toggle } = breakpoints;
  return (
    <>
      {layout ? (
        <GraphCanvas
          // A new drawing (subgraphs shown or hidden) is fitted to the view again.
          key={layout.nodes.map((n) => n.id).join()}
          graph={layout}
          statuses={progress.statuses}
          before={before}
          after={after}
          selected={selected}
          onSelect={onSelect}
          label={label}
        />
      ) : (
        <p className="muted">Loading the graph…</p>
      )}
      <p className="muted sg-legend">
        Dashed edges are conditional. Choose a node to see its last update or pause at it.
      </p>
      {selected && (
        <NodePanel
          id={selected}
          status={progress.statuses[selected]}
          update={progress.updates[selected]}
          hasUpdate={selected in progress.updates}
          before={before.includes(selected)}
          after={after.includes(selected)}
          canPause={nodes.includes(selected)}
          onToggle={(when) => toggle(selected, when)}
        />
      )}
    </>
  );
}

/** The studio's runs: one streamed at a time, its progress from the stream's events, stopped with the view. */
function useRunner({
  server,
  assistant,
  threadId,
  onThread,
  breakpoints,
  xray,
  onError,
  afterRun,
}: {
  server: AgentServer;
  assistant: Assistant;
  threadId: string | undefined;
  onThread: (id: string | undefined) => void;
  breakpoints: Breakpoints;
  xray: boolean;
  onError: (e: string | undefined) => void;
  afterRun: (threadId: string) => Promise<void>;
}) {
  const [progress, dispatch] = useReducer(progressReducer, idleProgress);
  const lastModes = useRef<string[]>(LAST_MODES_KEY);
  const stop = useRef<AbortController | undefined>(undefined);
  // A run streaming for another assistant is stopped.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the assistant is what ends the stream
  useEffect(() => () => stop.current?.abort(), [server, assistant.assistant_id]);

  /** Streams one run on the thread (made first when there is none) and reloads its checkpoints after. */
  async function run(body: RunBody) {
    if (progress.running) return;
    onError(undefined);
    let tid = threadId;
    if (!tid) {
      try {
        tid = (
          await server.createThread({ graph_id: assistant.graph_id, assistant_id: assistant.assistant_id })
        ).thread_id;
        onThread(tid);
      } catch (e) {
        return onError((e as Error).message);
      }
    }
    const ctl = new AbortController();
    stop.current = ctl;
    dispatch({ type: "start" });
    let failed: string | undefined;
    try {
      const frames = server.stream(
        tid,
        {
          assistant_id: assistant.assistant_id,
          stream_mode: lastModes.current,
          ...(breakpoints.before.length ? { interrupt_before: breakpoints.before } : {}),
          ...(breakpoints.after.length ? { interrupt_after: breakpoints.after } : {}),
          ...(xray ? { stream_subgraphs: true } : {}),
          ...body,
        },
        ctl.signal,
      );
      for await (const part of frames) dispatch({ type: "part", part });
    } catch (e) {
      if (!ctl.signal.aborted) failed = (e as Error).message;
    }
    await afterRun(tid);
    dispatch({ type: "end", error: failed });
  }

  const runFromForm = (r: RunRequest) => {
    lastModes.current = r.stream_mode.length ? r.stream_mode : LAST_MODES_KEY;
    const { stream_mode: _, ...rest } = r;
    void run(rest);
  };

  return { progress, run, runFromForm };
}
