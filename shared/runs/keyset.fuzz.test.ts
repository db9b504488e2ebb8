import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ValidationFailed } from "../errors.ts";
import { decodeKeyset, encodeKeyset } from "./keyset.ts";

// Untrusted input: a cursor a client sends back. Any text decodes to a well-formed keyset or a 422, never
// another error; every keyset round-trips.
describe("keyset cursor (fuzz)", () => {
  it("arbitrary text: a keyset or a ValidationFailed", () => {
    const text = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "").toString("base64url")),
      fc
        .record({ t: fc.string(), id: fc.string() }, { requiredKeys: [] })
        .map((v) => Buffer.from(JSON.stringify(v)).toString("base64url")),
    );
    fc.assert(
      fc.property(text, (cursor) => {
        try {
          const k = decodeKeyset(cursor, "body");
          if (k) expect(typeof k.t === "string" && typeof k.id === "string").toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(ValidationFailed);
        }
      }),
      { numRuns: 1000 },
    );
  });
  it("every keyset round-trips", () => {
    fc.assert(
      fc.property(
        fc.record({
          t: fc.string({ minLength: 1, maxLength: 64 }),
          id: fc.string({ minLength: 1, maxLength: 1024 }),
        }),
        (k) => {
          expect(decodeKeyset(encodeKeyset(k), "query")).toEqual(k);
        },
      ),
      { numRuns: 500 },
    );
  });
});
