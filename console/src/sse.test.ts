import { describe, expect, it } from "vitest";
import { serverSentEvents } from "./sse.ts";

/** A body that arrives in the given pieces. */
const body = (...pieces: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });

const read = async (b: ReadableStream<Uint8Array>) => {
  const out = [];
  for await (const part of serverSentEvents(b)) out.push(part);
  return out;
};

describe("server-sent events", () => {
  it("yields each frame's event and JSON data", async () => {
    expect(
      await read(body('event: metadata\ndata: {"run_id":"r1"}\n\nevent: values\ndata: {"n":1}\n\n')),
    ).toEqual([
      { event: "metadata", data: { run_id: "r1" } },
      { event: "values", data: { n: 1 } },
    ]);
  });

  it("joins a frame split across reads, and a character split across bytes", async () => {
    const bytes = new TextEncoder().encode('event: values\ndata: {"text":"é"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1;
    const split = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, cut));
        c.enqueue(bytes.slice(cut));
        c.close();
      },
    });
    expect(await read(split)).toEqual([{ event: "values", data: { text: "é" } }]);
    expect(await read(body("event: val", "ues\ndata: 1", "2\n", "\n"))).toEqual([
      { event: "values", data: 12 },
    ]);
  });

  it("reads CRLF and CR line ends as LF", async () => {
    expect(await read(body("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r"))).toEqual([
      { event: "a", data: 1 },
      { event: "b", data: 2 },
    ]);
  });

  it("joins data lines with a newline; keeps text that is not JSON as text", async () => {
    expect(await read(body("data: line one\ndata: line two\n\n"))).toEqual([
      { event: "message", data: "line one\nline two" },
    ]);
  });

  it("skips frames without data (comments, keep-alives) and an unfinished last frame", async () => {
    expect(await read(body(": heartbeat\n\nevent: end\n\ndata: 1\n\ndata: 2"))).toEqual([
      { event: "message", data: 1 },
    ]);
  });
});
