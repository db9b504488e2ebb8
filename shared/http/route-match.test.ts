import { describe, expect, it } from "vitest";
import { mountedRoutes, routes } from "../../functions/routes.ts";
import { compileRoutes, matchRoute } from "./route-match.ts";

// The matcher the local gateway and the AWS router share, over the real manifest.
const table = compileRoutes(mountedRoutes(routes).map((route) => ({ route })));
const keyOf = (method: string, path: string) => {
  const m = matchRoute(table, method, path);
  return typeof m === "number" ? m : `${m.route.route.routeKey} ${JSON.stringify(m.params)}`;
};

describe("route matching", () => {
  it("prefers the most literal path: /threads/search over /threads/{thread_id}", () => {
    expect(keyOf("POST", "/agents/d/threads/search")).toBe(
      'POST /agents/{deployment_id}/threads/search {"deployment_id":"d"}',
    );
    expect(keyOf("GET", "/agents/d/threads/t1")).toBe(
      'GET /agents/{deployment_id}/threads/{thread_id} {"deployment_id":"d","thread_id":"t1"}',
    );
  });

  it("sends any other path under a deployment to its custom routes ({proxy+}, any method but OPTIONS)", () => {
    expect(keyOf("PATCH", "/agents/d/custom/a%20b")).toBe(
      'ANY /agents/{deployment_id}/{proxy+} {"deployment_id":"d","proxy":"custom/a b"}',
    );
    expect(keyOf("OPTIONS", "/agents/d/custom/x")).toBe(405);
  });

  it("answers 404 for a path no route has, 405 for a method its path does not take", () => {
    expect(keyOf("GET", "/nowhere")).toBe(404);
    expect(keyOf("DELETE", "/v2/deployments")).toBe(405);
  });

  it("keeps a malformed escape as it came", () => {
    expect(keyOf("GET", "/agents/%E0%A4%A/threads/t")).toContain('"deployment_id":"%E0%A4%A"');
  });
});
