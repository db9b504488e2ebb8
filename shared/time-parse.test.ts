import { describe, expect, it } from "vitest";
import { canonicalTime } from "./time.ts";

describe("canonicalTime", () => {
  it("reads ISO strings with any offset and epoch milliseconds as canonical UTC with six fraction digits", () => {
    expect(canonicalTime("2024-05-01T12:00:00Z")).toBe("2024-05-01T12:00:00.000000Z");
    expect(canonicalTime("2024-05-01 14:00:00.1234567+02:00")).toBe("2024-05-01T12:00:00.123456Z");
    expect(canonicalTime(1714564800000.25)).toBe("2024-05-01T12:00:00.000250Z");
    expect(canonicalTime("1714564800000")).toBe("2024-05-01T12:00:00.000000Z");
    expect(canonicalTime("yesterday")).toBeUndefined();
  });

  it("a fraction of a millisecond that rounds up to a whole one carries into the milliseconds", () => {
    // Was `…00.0001000Z`: seven fraction digits, which sorts before `…00.000999Z`.
    expect(canonicalTime(0.9996)).toBe("1970-01-01T00:00:00.001000Z");
    expect(canonicalTime(1714564800999.9995)).toBe("2024-05-01T12:00:01.000000Z");
    expect(canonicalTime("1714564800000.9997")).toBe("2024-05-01T12:00:00.001000Z");
  });
});
