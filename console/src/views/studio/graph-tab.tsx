import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import type { AgentServer, RunBody } from "../../agent-api.ts";
import { GraphCanvas } from "../../components/graph-canvas.tsx";
import { layoutGraph, runnableNodes } from "../../components/graph-layout.ts";
import type { Assistant, Schemas, ServerGraph } from "../../wire.ts";
import { CheckpointPanel } from "./checkpoint-panel.tsx";
import { type Command, InterruptAnswer, PausedAt } from "./interrupt-answer.tsx";
import { NodePanel } from "./node-panel.tsx";
import { RunForm, type RunRequest } from "./run-form.tsx";
import { idleProgress, progressReducer } from "./run-progress.ts";
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
  const [graph, setGraph] = useState<ServerGraph>();
  const [schemas, setSchemas] = useState<Schemas>();
  const [error, setError] = useState<string>();
  const [progress, dispatch] = useReducer(progressReducer, idleProgress);
  const [selectedNode, setSelectedNode] = useState<string>();
  const [before, setBefore] = useState<string[]>([]);
  const [after, setAfter] = useState<string[]>([]);
  const [history, setHistory] = useState<Checkpoint[]>([]);
  const [selectedCheckpoint, setSelectedCheckpoint] = useState<string>();
  const lastModes = useRef<string[]>(LAST_MODES_KEY);
  const stop = useRef<AbortController | undefined>(undefined);

  useEffect(() => {
    setError(undefined);
    server.graph(assistant.assistant_id, xray).then(setGraph, (e) => setError(e.message));
  }, [server, assistant.assistant_id, xray]);
  useEffect(() => {
    server.schemas(assistant.assistant_id).then(setSchemas, (e) => setError(e.message));
    return () => stop.current?.abort();
  }, [server, assistant.assistant_id]);

  // Only the latest read is shown: one started when a run made its thread may answer after the run's last one.
  const reads = useRef(0);
  const loadHistory = useCallback(
    async (tid: string | undefined) => {
      const n = ++reads.current;
      if (!tid) return setHistory([]);
      try {
        const h = await server.history(tid, 200);
        if (n === reads.current) setHistory(h);
      } catch (e) {
        if (n === reads.current) setError((e as Error).message);
      }
    },
    [server],
  );
  useEffect(() => {
    setSelectedCheckpoint(undefined);
    void loadHistory(threadId);
  }, [threadId, loadHistory]);

  const layout = useMemo(() => (graph ? layoutGraph(graph) : undefined), [graph]);
  const nodes = useMemo(() => runnableNodes(graph), [graph]);
  const branches = useMemo(() => branchesOf(history), [history]);
  const head = history[0];
  const checkpoint = history.find((c) => idOf(c) === selectedCheckpoint);

  /** Streams one run on the thread (made first when there is none) and reloads its checkpoints after. */
  async function run(body: RunBody) {
    if (progress.running) return;
    setError(undefined);
    let tid = threadId;
    if (!tid) {
      try {
        tid = (
          await server.createThread({ graph_id: assistant.graph_id, assistant_id: assistant.assistant_id })
        ).thread_id;
        onThread(tid);
      } catch (e) {
        return setError((e as Error).message);
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
          ...(before.length ? { interrupt_before: before } : {}),
          ...(after.length ? { interrupt_after: after } : {}),
          ...(xray ? { stream_subgraphs: true } : {}),
          ...body,
        },
        ctl.signal,
      );
      for await (const part of frames) dispatch({ type: "part", part });
    } catch (e) {
      if (!ctl.signal.aborted) failed = (e as Error).message;
    }
    // The thread's checkpoints are read before the run is said to have ended, so "ended" means shown.
    setSelectedCheckpoint(undefined);
    await loadHistory(tid);
    dispatch({ type: "end", error: failed });
  }

  const runFromForm = (r: RunRequest) => {
    lastModes.current = r.stream_mode.length ? r.stream_mode : LAST_MODES_KEY;
    const { stream_mode: _, ...rest } = r;
    void run(rest);
  };

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

  const toggle = (when: "before" | "after") => {
    if (!selectedNode) return;
    const set = when === "before" ? setBefore : setAfter;
    set((list) =>
      list.includes(selectedNode) ? list.filter((n) => n !== selectedNode) : [...list, selectedNode],
    );
  };

  const waiting = !progress.running && head ? interruptsAt(head) : [];
  const paused = !progress.running && head && head.next.length > 0 && waiting.length === 0;
  // The run just streamed, or the one that wrote the thread's latest checkpoint (a thread opened later).
  const lastRun = progress.runId ?? head?.metadata?.run_id;
  const trace = lastRun ? traceLink(lastRun) : undefined;

  return (
    <div className="studio-graph">
      <div className="sg-canvas">
        <div className="sg-bar">
          <label className="check">
            <input type="checkbox" checked={xray} onChange={(e) => setXray(e.target.checked)} />
            Show subgraphs
          </label>
          <span role="status" className="muted sg-status">
            {progress.running ? "Running… " : progress.runId ? "Run ended. " : ""}
            {progress.order.length ? `Ran: ${progress.order.join(" → ")}` : ""}
          </span>
          {trace && !progress.running && <a href={trace}>Trace of this run</a>}
        </div>
        {error && <p role="alert">{error}</p>}
        {progress.error && <p role="alert">Run failed: {progress.error}</p>}
        {layout ? (
          <GraphCanvas
            // A new drawing (subgraphs shown or hidden) is fitted to the view again.
            key={layout.nodes.map((n) => n.id).join()}
            graph={layout}
            statuses={progress.statuses}
            before={before}
            after={after}
            selected={selectedNode}
            onSelect={setSelectedNode}
            label={`Graph of ${assistant.name ?? assistant.graph_id}`}
          />
        ) : (
          <p className="muted">Loading the graph…</p>
        )}
        <p className="muted sg-legend">
          Dashed edges are conditional. Choose a node to see its last update or pause at it.
        </p>
        {selectedNode && (
          <NodePanel
            id={selectedNode}
            status={progress.statuses[selectedNode]}
            update={progress.updates[selectedNode]}
            hasUpdate={selectedNode in progress.updates}
            before={before.includes(selectedNode)}
            after={after.includes(selectedNode)}
            canPause={nodes.includes(selectedNode)}
            onToggle={toggle}
          />
        )}
      </div>
      <div className="sg-side">
        <section aria-label="Run" className="card">
          <div className="sg-head">
            <h2>Run</h2>
            <span className="muted">
              {threadId ? `Thread ${threadId.slice(0, 8)}` : "A new thread"}
              {threadId && (
                <button
                  type="button"
                  className="link"
                  onClick={() => onThread(undefined)}
                  disabled={progress.running}
                >
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
              busy={progress.running}
              onAnswer={(command: Command) => void run({ input: null, command })}
            />
          )}
          {paused && (
            <PausedAt
              next={head!.next}
              busy={progress.running}
              onContinue={() => void run({ input: null })}
            />
          )}
          <RunForm
            key={assistant.assistant_id}
            schemas={schemas}
            busy={progress.running}
            onRun={runFromForm}
          />
        </section>
        {threadId && (
          <section aria-label="Timeline" className="card">
            <h2>Timeline</h2>
            <TimelineView
              branches={branches}
              selected={selectedCheckpoint}
              onSelect={(c) => setSelectedCheckpoint(idOf(c) === selectedCheckpoint ? undefined : idOf(c))}
            />
            {checkpoint && (
              <CheckpointPanel
                key={idOf(checkpoint)}
                checkpoint={checkpoint}
                history={history}
                stateSchema={schemas?.state_schema}
                nodes={nodes}
                busy={progress.running}
                onFork={(values, asNode, andRun) => void fork(values, asNode, andRun)}
                onReplay={() => void run({ input: null, checkpoint_id: idOf(checkpoint) })}
              />
            )}
          </section>
        )}
      </div>
    </div>
  );
}
