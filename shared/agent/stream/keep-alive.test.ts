import { describe, expect, it, vi } from "vitest";
import { NotFound } from "../../errors.ts";
import { keepAliveJson } from "./keep-alive.ts";

async function collect(body: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of body) out.push(chunk);
  return out;
}
const later = <T>(ms: number, v: T) => new Promise<T>((r) => setTimeout(() => r(v), ms));

describe("a wait's keep-alive body", () => {
  it("sends a newline at once, one per interval while waiting, then the values as JSON", async () => {
    // On the test's own clock: a machine that stops the process for 100 ms must not skip the intervals' ticks.
    vi.useFakeTimers();
    let chunks: string[];
    try {
      const collected = collect(keepAliveJson(later(130, { a: [1] }), 20));
      await vi.advanceTimersByTimeAsync(130);
      chunks = await collected;
    } finally {
      vi.useRealTimers();
    }
    expect(chunks[0]).toBe("\n");
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(chunks.slice(0, -1).every((c) => c === "\n")).toBe(true);
    expect(JSON.parse(chunks.join(""))).toEqual({ a: [1] });
  });

  it("answers null for no values, as the plain answer did", async () => {
    expect(JSON.parse((await collect(keepAliveJson(Promise.resolve(undefined), 20))).join(""))).toBeNull();
  });

  it("ends with an __error__ object when the wait fails after the status was sent", async () => {
    const failed = new Promise((_, reject) =>
      setTimeout(() => reject(new NotFound("Run r was rolled back")), 30),
    );
    expect(JSON.parse((await collect(keepAliveJson(failed, 10))).join(""))).toEqual({
      __error__: { error: "NotFound", message: "Run r was rolled back" },
    });
  });
});
