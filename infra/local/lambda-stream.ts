import type { ServerResponse } from "node:http";
import { EventStreamCodec } from "@smithy/core/event-streams";
import { errorFields } from "./sfn.ts";

// Lambda's InvokeWithResponseStream answer as the local emulator writes it: an `application/vnd.amazon.eventstream`
// body of PayloadChunk events (the function's bytes as it writes them) and one InvokeComplete at the end, which
// carries the function's error if it failed (https://docs.aws.amazon.com/lambda/latest/api/API_InvokeWithResponseStream.html).

/** A function that answers InvokeWithResponseStream: its bytes, or undefined when no such function exists. */
export type StreamingFunction = (
  name: string,
  qualifier: string | undefined,
  payload: unknown,
  signal: AbortSignal,
) => AsyncIterable<Uint8Array> | undefined;

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString("utf8"),
  (text) => Buffer.from(text, "utf8"),
);

const str = (value: string) => ({ type: "string" as const, value });

function event(type: string, contentType: string, body: Uint8Array): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": str(type),
      ":message-type": str("event"),
      ":content-type": str(contentType),
    },
    body,
  });
}

/** One PayloadChunk event: `Payload` is the event's body (its event payload member). */
export const payloadChunk = (bytes: Uint8Array) => event("PayloadChunk", "application/octet-stream", bytes);

/** The stream's last event; with ErrorCode/ErrorDetails when the function failed after the stream began. */
export const invokeComplete = (error?: { code: string; details: string }) =>
  event(
    "InvokeComplete",
    "application/json",
    Buffer.from(JSON.stringify(error ? { ErrorCode: error.code, ErrorDetails: error.details } : {})),
  );

/**
 * Writes a function's streamed answer: the 200 and headers once its first bytes (or its end) come, each chunk as
 * an event, then InvokeComplete. A caller that leaves aborts `abort`, which ends the function's side.
 */
export async function writeResponseStream(
  res: ServerResponse,
  bytes: AsyncIterable<Uint8Array>,
  version: string,
  abort: AbortController,
): Promise<void> {
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  res.writeHead(200, {
    "content-type": "application/vnd.amazon.eventstream",
    "x-amz-executed-version": version,
  });
  res.flushHeaders();
  try {
    for await (const chunk of bytes) {
      if (res.destroyed) return;
      if (chunk.length) res.write(payloadChunk(chunk));
    }
    res.end(invokeComplete());
  } catch (err) {
    if (res.destroyed) return;
    const e = errorFields(err);
    // A function's own failure is Unhandled; Lambda's ending of it says why (Sandbox.Timedout).
    const code = typeof e.code === "string" && e.code.startsWith("Sandbox.") ? e.code : "Unhandled";
    res.end(invokeComplete({ code, details: String(e.message ?? err) }));
  }
}
