import type { StreamPart } from "./wire.ts";

/** Server-sent events: frames split by a blank line, `event:` and `data:` lines (data as JSON when it parses). */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamPart> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n?/g, "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const part = frame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (part) yield part;
    }
  }
}

/** One frame's event name (`message` when unnamed) and data; undefined for a frame without data (a comment). */
function frame(text: string): StreamPart | undefined {
  let event = "message";
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (!data.length) return undefined;
  const joined = data.join("\n");
  try {
    return { event, data: JSON.parse(joined) };
  } catch {
    return { event, data: joined };
  }
}
