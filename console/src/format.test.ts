import { describe, expect, it } from "vitest";
import { percentile as shared } from "../../shared/percentile.ts";
import { ApiError } from "./api.ts";
import {
  assistantLabel,
  errorText,
  fmtCost,
  fmtDuration,
  fmtNumber,
  fmtTime,
  latencyMs,
  ms,
  percentile,
  pretty,
  shortId,
} from "./format.ts";

describe("console formatters", () => {
  it("reads canonical times (microseconds, no zone) as UTC", () => {
    expect(ms("2026-04-01T00:00:01.500000")).toBe(Date.UTC(2026, 3, 1, 0, 0, 1, 500));
    expect(ms("2026-04-01T00:00:01Z")).toBe(Date.UTC(2026, 3, 1, 0, 0, 1));
    expect(ms(null)).toBeNaN();
  });

  it("a run's latency, none while it runs", () => {
    expect(latencyMs({ start_time: "2026-04-01T00:00:00", end_time: "2026-04-01T00:00:02.25" })).toBe(2250);
    expect(latencyMs({ start_time: "2026-04-01T00:00:00", end_time: null })).toBeUndefined();
  });

  it("durations in ms, s or min; a dash for none", () => {
    expect(fmtDuration(12.4)).toBe("12 ms");
    expect(fmtDuration(1500)).toBe("1.50 s");
    expect(fmtDuration(90_000)).toBe("1.5 min");
    expect(fmtDuration(undefined)).toBe("—");
    expect(fmtDuration(Number.NaN)).toBe("—");
  });

  it("costs in dollars: three significant figures under a cent", () => {
    expect(fmtCost(0)).toBe("$0");
    expect(fmtCost(0.000123456)).toBe("$0.000123");
    expect(fmtCost(1.5)).toBe("$1.5000");
    expect(fmtCost(null)).toBe("—");
  });

  it("numbers with thousands separators; times as UTC to the second", () => {
    expect(fmtNumber(1234567)).toBe("1,234,567");
    expect(fmtTime("2026-04-01T12:34:56.789")).toBe("2026-04-01 12:34:56");
    expect(fmtTime(undefined)).toBe("—");
  });

  it("a 422's messages as one line with their places (the body's own place left out)", () => {
    const e = new ApiError(422, [
      { loc: ["body", "filter"], msg: "Unexpected token at 4" },
      { loc: ["body", "limit"], msg: "Too big" },
    ]);
    expect(errorText(e)).toBe("filter: Unexpected token at 4; limit: Too big");
    expect(errorText(new ApiError(404, "Not found"))).toBe("Not found");
    expect(errorText("plain")).toBe("plain");
  });

  it("pretty JSON, shortened past its limit with the count left out", () => {
    expect(pretty({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(pretty("text")).toBe("text");
    expect(pretty("x".repeat(1500), 1000)).toBe(`${"x".repeat(1000)}\n… (500 more characters)`);
  });

  it("short ids and assistant labels", () => {
    expect(shortId("0123456789abcdef")).toBe("01234567");
    expect(assistantLabel({ name: "agent", graph_id: "agent" })).toBe("agent");
    expect(assistantLabel({ name: "Support", graph_id: "agent" })).toBe("Support (agent)");
    expect(assistantLabel({ graph_id: "agent" })).toBe("agent");
  });

  it("the charts' percentile is the platform's one", () => {
    expect(percentile).toBe(shared);
  });
});
