import { describe, expect, it } from "vitest";
import { ValidationFailed } from "../errors.ts";
import { decodeKeyset, encodeKeyset } from "./keyset.ts";

describe("keyset cursor", () => {
  it("reads back what it wrote", () => {
    const k = { t: "2026-11-27T10:00:00.000000Z", id: "thread-1" };
    expect(decodeKeyset(encodeKeyset(k), "body")).toEqual(k);
  });
  it("no cursor is the start", () => expect(decodeKeyset(undefined, "query")).toBeUndefined());
  it("anything else is a 422 on the cursor", () => {
    for (const bad of ["bm9wZQ", "x", Buffer.from('{"t":"a","id":"b","x":1}').toString("base64url")])
      expect(() => decodeKeyset(bad, "body")).toThrow(ValidationFailed);
  });
});
