import { config } from "../../config.ts";
import { HttpError } from "../../errors.ts";
import { logger } from "../../log.ts";

// A run's wait (runs/wait, join) answers at once and sends a newline every keep-alive interval until the run's
// values, then the values as JSON: whitespace before a JSON value leaves the same value, so the SDK parses what
// it would have, and no proxy in front (CloudFront's 60 s origin timeout) times the silence out. The reference
// server does the same (langgraph-api's waitKeepAlive: a newline a second).

/** The headers of a wait's answer. */
export const WAIT_HEADERS = { "content-type": "application/json" } as const;

/**
 * The body of a wait's answer: a newline at once (it carries the status and headers through every stream on the
 * way), one every `everyMs`, then the JSON of what `wait` resolves to — or, as the status is sent by then, an
 * `__error__` object (as a failed run's values are) when it fails.
 */
export function keepAliveJson(
  wait: Promise<unknown>,
  everyMs = config.agent.waitKeepAliveMs,
): AsyncIterable<string> {
  const settled = wait.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return chunks(settled, everyMs);
}

async function* chunks(
  settled: Promise<{ value: unknown } | { error: unknown }>,
  everyMs: number,
): AsyncGenerator<string> {
  yield "\n";
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), everyMs);
    });
    const r = await Promise.race([settled, tick]);
    clearTimeout(timer);
    if (!r) {
      yield "\n";
      continue;
    }
    yield JSON.stringify("error" in r ? { __error__: errorOf(r.error) } : (r.value ?? null));
    return;
  }
}

function errorOf(err: unknown): { error: string; message: string } {
  if (err instanceof HttpError) return { error: err.name, message: err.message };
  logger.error("run wait failed", { error: err });
  return { error: "InternalServerError", message: "Waiting for the run failed" };
}
