import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mountedRoutes, routes } from "../../functions/routes.ts";
import { compileRoutes, matchRoute } from "./route-match.ts";

// Untrusted input: any method and request path. The contract: never a throw; a match names a route whose
// literal segments are the path's, with a parameter for each of its placeholders.
const table = compileRoutes(mountedRoutes(routes).map((route) => ({ route })));
const segment = fc.oneof(
  fc.constantFrom("agents", "threads", "runs", "v2", "api", "search", "%", "%2F", ""),
  fc.string(),
);

describe("matchRoute", () => {
  it("answers any path with a route whose literal segments it has, 404 or 405", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
        fc.array(segment, { maxLength: 8 }),
        (method, segments) => {
          const path = `/${segments.join("/")}`;
          const m = matchRoute(table, method, path);
          if (typeof m === "number") {
            expect([404, 405]).toContain(m);
            return;
          }
          const literal = m.route.route.mountPath.split("/");
          const given = path.split("/");
          literal.forEach((seg, i) => {
            if (!seg.startsWith("{")) expect(given[i]).toBe(seg);
          });
          expect(Object.keys(m.params).sort()).toEqual([...m.route.names].sort());
        },
      ),
      { numRuns: 1000 },
    );
  });
});
