import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isUiName, uiGlobal } from "./ui-names.ts";

// Any langgraph.json ui name: one it serves stays one folder of the artifact and one URL segment; its global is
// always an identifier.
describe("ui names", () => {
  it("a served name is one folder below ui/ and survives a URL segment's encoding; every global is an identifier", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: "binary" }),
          fc.constantFrom(".", "..", "a/b", "a\\b", "", "\uD800x"),
        ),
        (name) => {
          expect(uiGlobal(name)).toMatch(/^__LGUI_[A-Za-z0-9_$]*$/);
          if (!isUiName(name)) return;
          const folder = path.join("/out", "ui", name);
          expect(path.dirname(folder)).toBe("/out/ui");
          expect(path.basename(folder)).toBe(name);
          expect(decodeURIComponent(encodeURIComponent(name))).toBe(name);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
