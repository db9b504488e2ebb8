import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { threadIdOf } from "./derive.ts";
import { RunsQueryBody, ThreadsQueryBody, TracesQueryBody } from "./v2-schema.ts";
import { project, RUN_SELECTS } from "./v2-select.ts";

// Untrusted input: the bodies of the v2 reads and the metadata runs carry. Any JSON parses or fails validation
// (never a throw), a body that parses names only served selects, and projecting any run never throws.
const NUM_RUNS = 1000;
const names = [...Object.keys(RUN_SELECTS), "SHARE_URL", "NOPE", "id"];
const bodyish = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      project_ids: fc.oneof(fc.constant(["6f1d7c4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f"]), fc.jsonValue()),
      project_id: fc.oneof(fc.constant("6f1d7c4e-2a3b-4c5d-8e9f-0a1b2c3d4e5f"), fc.jsonValue()),
      selects: fc.oneof(fc.array(fc.constantFrom(...names)), fc.jsonValue()),
      page_size: fc.oneof(fc.integer(), fc.jsonValue()),
      min_start_time: fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.string(),
      ),
      cursor: fc.string(),
      filter: fc.string(),
    },
    { requiredKeys: [] },
  ),
);

describe("v2 request shapes (fuzz)", () => {
  it("any body parses or is refused, and a parsed one names only served selects", () => {
    fc.assert(
      fc.property(bodyish, (body) => {
        for (const schema of [RunsQueryBody, TracesQueryBody, ThreadsQueryBody]) {
          const r = schema.safeParse(body);
          const selects = r.success ? ((r.data as { selects?: string[] }).selects ?? []) : [];
          for (const s of selects) expect(Object.hasOwn(RUN_SELECTS, s)).toBe(true);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
  it("projecting any run and reading any metadata never throws", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue(), (run, extra) => {
        project(RUN_SELECTS, run, Object.keys(RUN_SELECTS));
        const t = threadIdOf(extra);
        expect(t === null || typeof t === "string").toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
