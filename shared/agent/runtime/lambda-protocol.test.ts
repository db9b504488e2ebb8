import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { drainLine, preludeOf, splitHead, splitPrelude } from "./lambda-protocol.ts";

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

describe("drain asks before the prelude", () => {
  it("reads each ask, then the prelude; the health check's reader refuses an ask", () => {
    const bytes = Buffer.from(`${drainLine("th-1")}${preludeOf({ statusCode: 202, headers: {} })}body`);
    const first = splitHead(bytes);
    expect(first?.head).toEqual({ drain: "th-1" });
    const second = splitHead(first!.rest);
    expect(second?.head).toEqual({ prelude: { statusCode: 202, headers: {} } });
    expect(second?.rest.toString()).toBe("body");
    expect(() => splitPrelude(bytes)).toThrow(/malformed/);
  });

  it("a line with more than the drain field is not an ask", () => {
    expect(() => splitHead(Buffer.from('{"drain":"th-1","statusCode":200}\n'))).toThrow(/malformed/);
  });

  it("fuzz: any bytes give an ask, a prelude, undefined, or an Error — and an ask of any id round-trips", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.string(), (bytes, id) => {
        expect(splitHead(Buffer.from(drainLine(id)))?.head).toEqual({ drain: id });
        try {
          const out = splitHead(Buffer.from(bytes));
          if (out?.head.prelude) expect(Number.isInteger(out.head.prelude.statusCode)).toBe(true);
          else if (out) expect(Object.keys(out.head)).toEqual(["drain"]);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
