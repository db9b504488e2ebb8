// Lambda's function timeout (its configuration's Timeout, 1 to 900 s), as the local Lambda service enforces it on a
// function created through its API: an invocation still running at the deadline ends with Lambda's error —
// errorType Sandbox.Timedout, "RequestId: <id> Error: Task timed out after N.00 seconds" — whatever its code does
// next (locally one process serves a version's invocations, so it is not reset as Lambda resets the environment).

/** The invocation ran past its function's timeout. */
export class TaskTimedOut extends Error {
  readonly code = "Sandbox.Timedout";
  constructor(requestId: string, seconds: number) {
    super(`RequestId: ${requestId} Error: Task timed out after ${seconds.toFixed(2)} seconds`);
    this.name = "Sandbox.Timedout";
  }
}

/** `work`'s outcome, or TaskTimedOut once `seconds` pass first (no deadline when undefined). */
export async function withinTimeout<T>(
  work: Promise<T>,
  seconds: number | undefined,
  requestId: string,
  onTimeout?: () => void,
): Promise<T> {
  if (seconds === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new TaskTimedOut(requestId, seconds));
    }, seconds * 1000);
  });
  // The work's own failure after the deadline is no one's to handle.
  work.catch(() => {});
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A streamed answer that ends with TaskTimedOut at the deadline (its producer aborted through `onTimeout`). */
export async function* streamWithinTimeout(
  bytes: AsyncIterable<Uint8Array>,
  seconds: number | undefined,
  requestId: string,
  onTimeout: () => void,
): AsyncGenerator<Uint8Array> {
  if (seconds === undefined) return yield* bytes;
  const ends = Date.now() + seconds * 1000;
  const it = bytes[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await withinTimeout(
        it.next(),
        Math.max(0, ends - Date.now()) / 1000,
        requestId,
        onTimeout,
      ).catch((err) => {
        throw err instanceof TaskTimedOut ? new TaskTimedOut(requestId, seconds) : err;
      });
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void it.return?.();
  }
}
