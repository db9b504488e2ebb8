import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import { unpackArtifact } from "./build-exchange.ts";

// Untrusted input: the artifact object a build step sends. Whatever it holds, unpacking either refuses it with
// a BuildError or returns files whose paths stay inside the artifact folder.
const segment = fc.oneof(
  fc.constantFrom("..", ".", "", "a", "graphs", "\\", "\0", "/"),
  fc.string({ maxLength: 6 }),
);
const path = fc
  .tuple(fc.array(segment, { maxLength: 5 }), fc.constantFrom("/", "\\"))
  .map(([segments, sep]) => segments.join(sep));
const entry = fc.record({
  path: fc.oneof(path, fc.anything()),
  data: fc.oneof(fc.base64String({ maxLength: 16 }), fc.string({ maxLength: 8 }), fc.anything()),
});
const body = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.array(entry, { maxLength: 6 }).map((files) => gzipSync(JSON.stringify({ files }))),
  fc.anything().map((v) => gzipSync(JSON.stringify(v) ?? "")),
);

function inside(p: string): boolean {
  return !p.startsWith("/") && !p.includes("\\") && p.split("/").every((s) => s && s !== "." && s !== "..");
}

describe("unpackArtifact on arbitrary bytes", () => {
  it("refuses with a BuildError or returns only paths inside the artifact", () => {
    fc.assert(
      fc.property(body, (b) => {
        try {
          for (const f of unpackArtifact(b)) expect(inside(f.path)).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(BuildError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
