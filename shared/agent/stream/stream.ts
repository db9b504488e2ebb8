import type { Frame } from "./broker.ts";
import { storesEvents } from "./event-log.ts";

// A run's frames as SSE: their ids, where a join resumes, the stream-mode filter, heartbeats and the headers
// (runs/join.ts follows a run's frames from the broker or the event log).

/**
 * A frame's SSE id. The ids a client sees count a run's frames from 0, as the reference server's do (frames are
 * numbered from 1 inside, so "after frame 0" means from the start).
 */
export const eventId = (seq: number): number => seq - 1;

/**
 * The frame number after which a stream resumes, from the Last-Event-ID a client sends: after the event it
 * names; `-1` (what the SDK sends to replay from the start), none or an unreadable one replay every frame.
 */
export function resumeAfter(lastEventId: string | undefined): number {
  const n = Number(lastEventId);
  return lastEventId && Number.isSafeInteger(n) && n >= 0 ? n + 1 : 0;
}

export function sseFrame(f: Frame, id: number | string = eventId(f.seq)): string {
  return `event: ${f.event}\ndata: ${JSON.stringify(f.data ?? null)}\nid: ${id}\n\n`;
}

/** Does a frame pass a join's stream_mode filter (metadata, error and end always do)? */
export function wanted(event: string, modes?: string[]): boolean {
  if (!modes?.length || ["metadata", "error", "end"].includes(event)) return true;
  // "messages/partial|ns" belongs to mode messages; a "messages" tuple frame to messages-tuple.
  const base = event.split("|")[0];
  if (base === "messages") return modes.includes("messages-tuple") || modes.includes("messages");
  return modes.includes(base.split("/")[0]);
}

/** Where a join starts: after Last-Event-ID's event; a non-resumable run's join gets its frames from now on. */
export function joinPoint(
  run: { kwargs?: { stream_resumable?: boolean } },
  lastEventId: string | undefined,
): JoinPoint {
  return storesEvents(run) ? { lastSeq: resumeAfter(lastEventId) } : { live: true };
}

/** After which frame a stream starts: `lastSeq`, or (`live`) the run's latest frame when it is joined. */
export interface JoinPoint {
  lastSeq?: number;
  live?: boolean;
}

const HEARTBEAT_MS = 15_000;

/**
 * The text of `source`, with an SSE comment line after every `ms` without any: a run that thinks for a minute
 * (a slow model call) is not cut by a proxy's idle timeout (CloudFront's origin read timeout is 60 s).
 */
export async function* withHeartbeat(
  source: AsyncIterable<string>,
  ms = HEARTBEAT_MS,
): AsyncGenerator<string> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<"tick">((r) => {
        timer = setTimeout(() => r("tick"), ms);
      });
      const got = await Promise.race([next, tick]);
      clearTimeout(timer);
      if (got === "tick") {
        yield ": heartbeat\n\n";
        continue;
      }
      if (got.done) return;
      yield got.value;
      next = it.next();
    }
  } finally {
    // Not awaited: a source waiting for its next frame ends when the stream's signal aborts.
    void it.return?.(undefined);
  }
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
} as const;

/** The response headers of a run stream: where the SDK reads the run id and reconnects. */
export function streamHeaders(threadId: string | null, runId: string): Record<string, string> {
  const location = threadId ? `/threads/${threadId}/runs/${runId}` : `/runs/${runId}`;
  return {
    ...SSE_HEADERS,
    "content-location": location,
    ...(threadId ? { location: `${location}/stream` } : {}),
  };
}
