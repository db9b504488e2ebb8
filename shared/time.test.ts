import { describe, expect, it } from "vitest";
import { canonicalFromMs, canonicalNow, canonicalTime, isoNow } from "./time.ts";

describe("clock", () => {
  it("answers now in the two forms: Date's ISO (ms) and the canonical run time (µs)", () => {
    const before = Date.now();
    const iso = isoNow();
    const canonical = canonicalNow();
    expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(canonical).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Date.parse(iso)).toBeGreaterThanOrEqual(before);
    expect(canonicalTime(canonical)).toBe(canonical);
  });

  it("writes an instant canonically, microseconds included", () => {
    expect(canonicalFromMs(Date.UTC(2025, 0, 2, 3, 4, 5, 678))).toBe("2025-01-02T03:04:05.678000Z");
    expect(canonicalFromMs(Date.UTC(2025, 0, 2, 3, 4, 5, 678), 9)).toBe("2025-01-02T03:04:05.678009Z");
    expect(canonicalFromMs(-1)).toBeUndefined();
  });
});
