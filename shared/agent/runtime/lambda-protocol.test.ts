import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { preludeOf, splitPrelude } from "./lambda-protocol.ts";

// The router reads what a runtime (a deployment's own code runs there) answers: status and headers first.
describe("runtime answer prelude", () => {
  it("round-trips status and headers, and keeps the body bytes after it", () => {
    const text = preludeOf({
      statusCode: 201,
      headers: { "content-type": "text/event-stream", "x-n": 1 as never },
    });
    const split = splitPrelude(Buffer.concat([Buffer.from(text), Buffer.from("event: values\n\n")]));
    expect(split?.prelude).toEqual({
      statusCode: 201,
      headers: { "content-type": "text/event-stream", "x-n": "1" },
    });
    expect(split?.rest.toString()).toBe("event: values\n\n");
  });

  it("waits for the whole line, and refuses a prelude that is not one", () => {
    expect(splitPrelude(Buffer.from('{"statusCode":200'))).toBeUndefined();
    expect(() => splitPrelude(Buffer.from('{"statusCode":"x","headers":{}}\n'))).toThrow(/malformed/);
    expect(() => splitPrelude(Buffer.from("not json\n"))).toThrow();
    expect(() => splitPrelude(Buffer.alloc(70 * 1024, 0x61))).toThrow(/no prelude/);
  });

  it("fuzz: any bytes a runtime sends give a prelude, undefined, or an Error — never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        try {
          const out = splitPrelude(Buffer.from(bytes));
          if (out) {
            expect(Number.isInteger(out.prelude.statusCode)).toBe(true);
            expect(typeof out.prelude.headers).toBe("object");
          }
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
