import { describe, expect, it } from "vitest";
import { LAMBDA_UNZIPPED_CODE_BYTES, MAX_REVISION_BYTES, revisionTooLarge } from "./lambda-limits.ts";

describe("a revision beside the runtime layer", () => {
  it("fits when code and layer stay within Lambda's 250 MB", () => {
    expect(revisionTooLarge(100_000_000, 6_000_000)).toBeUndefined();
    expect(revisionTooLarge(MAX_REVISION_BYTES, 6_000_000)).toBeUndefined();
  });

  it("is refused, saying the sizes, when the layer leaves it too little room", () => {
    const layer = 30_000_000;
    const why = revisionTooLarge(LAMBDA_UNZIPPED_CODE_BYTES - layer + 1, layer);
    expect(why).toMatch(/revision's code is 232\.1 MB unzipped.*runtime layer \(30\.0 MB\).*holds 232\.1 MB/);
  });

  it("is never larger than what the platform accepts from a build", () => {
    expect(revisionTooLarge(MAX_REVISION_BYTES + 1, 0)).toBeDefined();
  });
});
