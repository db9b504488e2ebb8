import type { ThreadState } from "../../wire.ts";

// A thread's checkpoints (POST /threads/{id}/history: every branch, newest first) as a timeline: branches side
// by side. A checkpoint with several children is a fork; its oldest child continues the branch, each later one
// starts a new branch beside it.

/** A checkpoint of the thread, as the history answers it. */
export type Checkpoint = ThreadState;

export interface Branch {
  /** 1 for the thread's first branch. */
  number: number;
  /** The checkpoint this branch forked from (absent for branch 1). */
  forkedFrom?: { id: string; step?: number; branch: number };
  /** Oldest first. */
  checkpoints: Checkpoint[];
}

export const idOf = (c: Checkpoint) => c.checkpoint?.checkpoint_id ?? "";
const parentOf = (c: Checkpoint) => c.parent_checkpoint?.checkpoint_id;

// Checkpoint ids are time-ordered (uuid6), so they break ties between equal creation times.
const older = (a: Checkpoint, b: Checkpoint) =>
  (a.created_at ?? "").localeCompare(b.created_at ?? "") || idOf(a).localeCompare(idOf(b));

export function branchesOf(history: Checkpoint[]): Branch[] {
  const byId = new Map(history.map((c) => [idOf(c), c]));
  const children = new Map<string, Checkpoint[]>();
  const roots: Checkpoint[] = [];
  for (const c of history) {
    const parent = parentOf(c);
    if (parent && byId.has(parent)) children.set(parent, [...(children.get(parent) ?? []), c]);
    else roots.push(c);
  }
  const branches: Branch[] = [];
  const branchOf = new Map<string, number>();
  // Iterative walk: a long thread must not exhaust the stack.
  const pending: { start: Checkpoint; forkedFrom?: Branch["forkedFrom"] }[] = roots
    .sort(older)
    .map((start) => ({ start }));
  while (pending.length) {
    const { start, forkedFrom } = pending.shift()!;
    const branch: Branch = { number: branches.length + 1, forkedFrom, checkpoints: [] };
    branches.push(branch);
    for (let c: Checkpoint | undefined = start; c; ) {
      branch.checkpoints.push(c);
      branchOf.set(idOf(c), branch.number);
      const kids = [...(children.get(idOf(c)) ?? [])].sort(older);
      const at = { id: idOf(c), step: c.metadata?.step, branch: branch.number };
      for (const kid of kids.slice(1)) pending.push({ start: kid, forkedFrom: at });
      c = kids[0];
    }
    pending.sort((a, b) => older(a.start, b.start));
  }
  return branches;
}

/** What a checkpoint's step wrote: the results of its parent's tasks (or the metadata's `writes`, where kept). */
export function writesOf(c: Checkpoint, history: Checkpoint[]): Record<string, unknown> | undefined {
  if (c.metadata?.writes) return c.metadata.writes;
  const parent = history.find((h) => idOf(h) === parentOf(c));
  const done = (parent?.tasks ?? []).filter((t) => t.result !== undefined && t.result !== null);
  if (done.length) return Object.fromEntries(done.map((t) => [t.name, t.result]));
  return c.metadata?.source === "input" ? { __start__: c.values } : undefined;
}

/** The checkpoint `n` steps before the newest of `branch`. */
export const stepsBack = (branch: Branch, n: number) => branch.checkpoints[branch.checkpoints.length - 1 - n];

/** The interrupts waiting at a checkpoint: its tasks' (where the server puts them) or its own. */
export function interruptsAt(c: Checkpoint | undefined): { id?: string; value: unknown }[] {
  if (!c) return [];
  const fromTasks = (c.tasks ?? []).flatMap((t) => t.interrupts ?? []);
  return fromTasks.length ? fromTasks : (c.interrupts ?? []);
}
