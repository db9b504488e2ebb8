import { type AslState, type AslStates, mapStates } from "../state-machines/asl.ts";

// The worst-case number of history events of a state machine's executions, from its ASL and bounds taken from
// config (a Map's items, a loop's rounds). Counts follow the event types of GetExecutionHistory (Step Functions
// API reference, HistoryEvent): every state logs Entered + Exited, a task adds Scheduled, Started and its outcome.

/** What the ASL alone does not say, keyed by state path ("Map/Inner"), Map ItemsPath and MaxConcurrencyPath. */
export interface WorkflowBounds {
  items?: Record<string, number>;
  maxConcurrency?: Record<string, number>;
  states?: Record<string, { entries?: number; failedAttempts?: number }>;
}

/** One execution's worst case: the machine itself, or a Distributed Map's child executions. */
export interface HistoryBound {
  /** "" for the machine, else the Distributed Map's path. */
  execution: string;
  events: number;
}

const RETRY_DEFAULT_MAX_ATTEMPTS = 3; // ASL: a Retrier's MaxAttempts defaults to 3
const EXECUTION_EVENTS = 2; // ExecutionStarted, then ExecutionSucceeded/Failed/TimedOut/Aborted
const FAILED_ATTEMPT_EVENTS = 3; // TaskScheduled, TaskStarted, TaskFailed/TaskTimedOut

/** Worst-case events of each execution a machine's runs make (the machine, and each Distributed Map's children). */
export function historyBounds(def: AslStates, bounds: WorkflowBounds = {}): HistoryBound[] {
  const out: HistoryBound[] = [{ execution: "", events: EXECUTION_EVENTS + scopeEvents(def, "", bounds) }];
  for (const map of mapStates(def).filter((m) => m.distributed))
    out.push({
      execution: map.path,
      events: EXECUTION_EVENTS + scopeEvents(map.processor, `${map.path}/`, bounds),
    });
  return out;
}

/** Events of one states scope (a machine, a Map processor, a Parallel branch), children of Distributed Maps aside. */
function scopeEvents(scope: AslStates, prefix: string, bounds: WorkflowBounds): number {
  const looping = statesInCycles(scope);
  let total = 0;
  for (const [name, state] of Object.entries(scope.States)) {
    const path = `${prefix}${name}`;
    const given = bounds.states?.[path];
    const entries = given?.entries ?? (looping.has(name) ? Number.POSITIVE_INFINITY : 1);
    const budget = retryBudget(state);
    const failed = given?.failedAttempts ?? (budget === 0 ? 0 : entries * budget);
    total += entries * entryEvents(state, path, bounds) + failed * FAILED_ATTEMPT_EVENTS;
  }
  return total;
}

function retryBudget(state: AslState): number {
  if (!["Task", "Map", "Parallel"].includes(state.Type)) return 0;
  return (state.Retry ?? []).reduce((n, r) => n + Number(r.MaxAttempts ?? RETRY_DEFAULT_MAX_ATTEMPTS), 0);
}

/** Events one entry of a state logs when it succeeds (a failure's events are counted per failed attempt). */
function entryEvents(state: AslState, path: string, bounds: WorkflowBounds): number {
  switch (state.Type) {
    case "Task": {
      const resource = String((state as { Resource?: unknown }).Resource ?? "");
      // Entered, Scheduled, Started, Succeeded, Exited (+ Submitted for .sync and callback integrations).
      return /\.(sync|waitForTaskToken)(:\d+)?$/.test(resource) ? 6 : 5;
    }
    case "Fail":
      return 1; // FailStateEntered (ExecutionFailed is the execution's own)
    case "Map": {
      const processor = state.ItemProcessor ?? state.Iterator;
      if (!processor) return 4;
      // MapStateEntered, MapStateStarted/MapRunStarted, MapStateSucceeded/MapRunSucceeded, MapStateExited.
      if ((processor as { ProcessorConfig?: { Mode?: string } }).ProcessorConfig?.Mode === "DISTRIBUTED")
        return 4;
      const items = state.ItemsPath ? bounds.items?.[state.ItemsPath] : undefined;
      // Each inline iteration: MapIterationStarted, MapIterationSucceeded and its states' events, in this history.
      return 4 + (items ?? Number.POSITIVE_INFINITY) * (2 + scopeEvents(processor, `${path}/`, bounds));
    }
    case "Parallel":
      return 4 + (state.Branches ?? []).reduce((n, b, i) => n + scopeEvents(b, `${path}[${i}]/`, bounds), 0);
    default:
      return 2; // Pass, Choice, Wait, Succeed: Entered, Exited
  }
}

/** The states of a scope that can be entered again (on a cycle of Next, Choice, Default and Catch). */
function statesInCycles(scope: AslStates): Set<string> {
  const next = (s: AslState) =>
    [
      s.Next,
      s.Default,
      ...(s.Choices ?? []).map((c) => c.Next),
      ...(s.Catch ?? []).map((c) => c.Next),
    ].filter((n): n is string => typeof n === "string");
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = next(scope.States[from] ?? ({} as AslState));
    while (stack.length) {
      const n = stack.pop()!;
      if (n === to) return true;
      if (seen.has(n) || !scope.States[n]) continue;
      seen.add(n);
      stack.push(...next(scope.States[n]));
    }
    return false;
  };
  return new Set(Object.keys(scope.States).filter((n) => reaches(n, n)));
}
