import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { httpEvent, okIsPublic } from "../../test/helpers/http-events.ts";
import { defineHandler } from "./handler.ts";

const h = defineHandler(
  {
    params: z.object({ id: z.string().max(10) }).partial(),
    query: z.object({ n: z.coerce.number().int().optional(), flag: z.enum(["a", "b"]).optional() }),
    body: z.object({ name: z.string(), nested: z.object({ v: z.array(z.number()) }).optional() }),
    handle: ({ body }) => ({ ok: body.name.length }),
  },
  okIsPublic,
);

describe("handler toolkit fuzz", () => {
  it("arbitrary query, path, headers and body never give a 5xx and always give a JSON body", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }),
        fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
        fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 4 }), fc.constant(undefined)),
        fc.boolean(),
        fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
        async (query, params, body, base64, headers) => {
          const raw = base64 && body !== undefined ? Buffer.from(body).toString("base64") : body;
          const r = await h(httpEvent({ query, params, body: raw, base64, headers }));
          expect(r.statusCode).toBeLessThan(500);
          expect(() => JSON.parse(r.body!)).not.toThrow();
        },
      ),
      { numRuns: 500 },
    );
  });
});
