import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callbackUrl, formatState, newSecret, parseState } from "./protocol.ts";

// The callback's state arrives from a browser, the Host header from anyone: a verdict, never a throw.
const authId = fc.uuid({ version: 4 });
const tenant = fc
  .string({ minLength: 1, maxLength: 256, unit: "grapheme" })
  .filter((t) => [...t].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f));

describe("parseState (fuzz)", () => {
  it("never throws on arbitrary input", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 3000 }), fc.anything()), (raw) => {
        const out = parseState(raw);
        expect(out === undefined || typeof out.tenantId === "string").toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips every state we issue", () => {
    fc.assert(
      fc.property(tenant, authId, (tenantId, id) => {
        if (tenantId.length > 256) return;
        const s = { tenantId, authId: id, secret: newSecret() };
        expect(parseState(formatState(s))).toEqual(s);
      }),
      { numRuns: 500 },
    );
  });

  it("rejects a state with any one character changed to one outside its alphabet", () => {
    fc.assert(
      fc.property(tenant, authId, fc.nat(), fc.constantFrom(..."!~ .%/+="), (tenantId, id, at, c) => {
        const good = formatState({ tenantId, authId: id, secret: newSecret() });
        const i = at % good.length;
        if (good[i] === c) return;
        expect(parseState(good.slice(0, i) + c + good.slice(i + 1))).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });
});

describe("callbackUrl (fuzz)", () => {
  it("always answers an http(s) URL ending in the callback path", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom("host", "x-forwarded-proto", "x-other"), fc.string({ maxLength: 400 })),
        fc.option(fc.string({ maxLength: 400 }), { nil: undefined }),
        fc.string({ maxLength: 100 }),
        fc.boolean(),
        (headers, domainName, rawPath, local) => {
          const out = new URL(callbackUrl({ headers, domainName, rawPath }, "gh", { local }));
          expect(["http:", "https:"]).toContain(out.protocol);
          expect(out.pathname.endsWith("/v2/auth/callback/gh")).toBe(true);
          expect(out.search).toBe("");
          expect(out.username + out.password).toBe("");
        },
      ),
      { numRuns: 2000 },
    );
  });
});
