import type { NodeStatus } from "../../components/graph-layout.ts";
// A studio run's progress from its stream: which node runs now, which finished (or failed, or stopped at an
// interrupt), each node's last update. `debug` events say when a task starts and ends; `updates` events carry a
// node's update when `debug` is not streamed. Events of a subgraph arrive as `<mode>|<name>:<task id>|…`; their
// nodes are `<name>:<node>` as the graph's `xray` drawing names them.

export interface RunProgress {
  running: boolean;
  runId?: string;
  statuses: Record<string, NodeStatus>;
  /** Node ids in the order they started. */
  order: string[];
  /** Each node's last update (its writes). */
  updates: Record<string, unknown>;
  values?: unknown;
  interrupts: unknown[];
  error?: string;
  events: number;
}

export const idleProgress: RunProgress = {
  running: false,
  statuses: {},
  order: [],
  updates: {},
  interrupts: [],
  events: 0,
};

export type ProgressAction =
  | { type: "start" }
  | { type: "part"; part: { event: string; data: any } }
  | { type: "end"; error?: string };

/** `updates|outer:1234|inner:5678` → mode "updates", prefix "outer:inner". */
export function splitEvent(event: string): { mode: string; prefix: string } {
  const [mode = "", ...ns] = event.split("|");
  return { mode, prefix: ns.map((part) => part.split(":")[0]).join(":") };
}

const nodeId = (prefix: string, name: string) => (prefix ? `${prefix}:${name}` : name);

function mark(p: RunProgress, id: string, status: NodeStatus, update?: { value: unknown }): RunProgress {
  const statuses = { ...p.statuses, [id]: status };
  const order = p.order.includes(id) && status !== "running" ? p.order : [...p.order, id];
  const updates = update ? { ...p.updates, [id]: update.value } : p.updates;
  return { ...p, statuses, order, updates };
}

function onDebug(p: RunProgress, prefix: string, data: any): RunProgress {
  const payload = data?.payload;
  if (!payload?.name) return p;
  const id = nodeId(prefix, payload.name);
  if (data.type === "task") return mark(p, id, "running");
  if (data.type !== "task_result") return p;
  const status: NodeStatus = payload.error ? "error" : payload.interrupts?.length ? "interrupted" : "done";
  const next = mark(p, id, status, payload.error ? undefined : { value: payload.result });
  return payload.interrupts?.length
    ? { ...next, interrupts: [...next.interrupts, ...payload.interrupts] }
    : next;
}

function onUpdates(p: RunProgress, prefix: string, data: any): RunProgress {
  if (!data || typeof data !== "object") return p;
  let next = p;
  for (const [name, value] of Object.entries(data)) {
    if (name === "__interrupt__") {
      next = { ...next, interrupts: [...next.interrupts, ...(Array.isArray(value) ? value : [value])] };
      continue;
    }
    const id = nodeId(prefix, name);
    // An update arrives once the node finished: a node `debug` already marked keeps its status.
    const status = next.statuses[id] === "running" || !next.statuses[id] ? "done" : next.statuses[id]!;
    next = mark(next, id, status, { value });
  }
  return next;
}

export function progressReducer(p: RunProgress, action: ProgressAction): RunProgress {
  if (action.type === "start") return { ...idleProgress, running: true };
  if (action.type === "end") {
    // A node still marked running when the stream ended did not finish.
    const statuses = Object.fromEntries(
      Object.entries(p.statuses).map(([id, s]) => [id, s === "running" && action.error ? "error" : s]),
    ) as Record<string, NodeStatus>;
    return { ...p, running: false, statuses, error: action.error ?? p.error };
  }
  const { event, data } = action.part;
  const { mode, prefix } = splitEvent(event);
  const p1 = { ...p, events: p.events + 1 };
  if (mode === "metadata" && data?.run_id) return { ...p1, runId: data.run_id };
  if (mode === "debug") return onDebug(p1, prefix, data);
  if (mode === "updates") return onUpdates(p1, prefix, data);
  if (mode === "values" && !prefix) return { ...p1, values: data };
  if (mode === "error") return { ...p1, error: data?.message ?? data?.error ?? JSON.stringify(data) };
  return p1;
}
