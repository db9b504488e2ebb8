import { AsyncLocalStorage } from "node:async_hooks";

// Only the platform starts the execution of a deployment's runs: a runtime cannot invoke its own function (its
// role may not, runtime/policy.ts), so its code cannot fan out invocations of itself. With worker functions
// (AGENT_RUN_WORKER=lambda) a run a request stored pending is started by the platform's router, which the
// request's answer asks to: in AWS a line {"drain": thread} before the answer's prelude (lambda-protocol.ts),
// locally a 103 answer carrying DRAIN_HEADER (infra/local/runtimes.ts). The router then kicks the version that
// served the request, at most MAX_DRAINS_PER_ANSWER threads per answer; a drain runs its thread's next due runs
// in its own loop (worker.ts drainThread), and what is left after it is the run sweeper's (sweeper.ts).

/** Threads one answer may ask drains for: a run batch, each run on a thread of its own, is at most this many. */
export const MAX_DRAINS_PER_ANSWER = 100;
/** The header of a local runtime's 103 answer naming a thread to drain (the platform never passes it on). */
export const DRAIN_HEADER = "x-agent-drain";
/** The longest thread id the API takes (run-schemas.ts `id`). */
const MAX_THREAD_ID = 128;

/** Sends a drain ask with the answer: false when it can no longer go (the answer's head went out). */
type Send = (threadId: string) => boolean;
const asks = new AsyncLocalStorage<{ send?: Send }>();

/**
 * Handles a request with `send` carrying the drains its answer asks for. `answered` is called before the
 * answer's status and headers go out: from then on nothing more can be asked with it.
 */
export function askingDrains<T>(send: Send, handle: (answered: () => void) => Promise<T>): Promise<T> {
  const slot: { send?: Send } = { send };
  return asks.run(slot, () =>
    handle(() => {
      slot.send = undefined;
    }),
  );
}

/** Asks the platform, with this request's answer, to drain the thread: false outside a request or once it was answered. */
export function askDrain(threadId: string): boolean {
  const slot = asks.getStore();
  return slot?.send?.(threadId) ?? false;
}

/**
 * The drains a runtime's answer asked for, as the platform takes them (the runtime runs a deployment's code:
 * what it says is untrusted): thread ids of the API's shape, each once, at most MAX_DRAINS_PER_ANSWER.
 */
export class DrainAsks {
  readonly threads = new Set<string>();
  /** Asks refused: malformed, or over the limit. */
  refused = 0;
  /** Takes one ask: the thread to drain, or undefined for a repeat or a refused ask. */
  take(threadId: unknown): string | undefined {
    if (typeof threadId === "string" && this.threads.has(threadId)) return undefined;
    const wellFormed =
      typeof threadId === "string" && threadId.length > 0 && threadId.length <= MAX_THREAD_ID;
    if (!wellFormed || this.threads.size >= MAX_DRAINS_PER_ANSWER) {
      this.refused++;
      return undefined;
    }
    this.threads.add(threadId);
    return threadId;
  }
}

/** DRAIN_HEADER's value for a thread (any id is carried as one header token). */
export const drainHeaderValue = (threadId: string) => encodeURIComponent(threadId);

/** The thread a DRAIN_HEADER value names, or undefined for one that is not a value drainHeaderValue makes. */
export function threadOfDrainHeader(value: string | string[] | undefined): string | undefined {
  if (typeof value !== "string") return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
