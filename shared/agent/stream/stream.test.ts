import { describe, expect, it } from "vitest";
import { withHeartbeat } from "./stream.ts";

async function* slow(parts: [string, number][]) {
  for (const [text, delay] of parts) {
    await new Promise((r) => setTimeout(r, delay));
    yield text;
  }
}

describe("withHeartbeat", () => {
  it("passes the text through in order and adds a comment line after each quiet stretch", async () => {
    const out: string[] = [];
    for await (const t of withHeartbeat(
      slow([
        ["a", 0],
        ["b", 130],
        ["c", 10],
      ]),
      50,
    ))
      out.push(t);
    expect(out.filter((t) => !t.startsWith(":"))).toEqual(["a", "b", "c"]);
    expect(out.filter((t) => t === ": heartbeat\n\n").length).toBeGreaterThanOrEqual(1);
    expect(out.indexOf("b")).toBeGreaterThan(out.indexOf(": heartbeat\n\n"));
  });

  it("adds nothing to a source that never pauses, and ends with it", async () => {
    const out: string[] = [];
    for await (const t of withHeartbeat(
      slow([
        ["a", 0],
        ["b", 0],
      ]),
      1000,
    ))
      out.push(t);
    expect(out).toEqual(["a", "b"]);
  });
});
