import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountedRoutes, routeId, routes } from "../../functions/routes.ts";
import { taskByName } from "../../functions/task-manifest.ts";
import { type FunctionBundle, platformFunctions } from "../build/function-bundles.ts";
import { LocalFunctions } from "./functions.ts";
import { Gateway } from "./gateway.ts";
import { LocalLambda } from "./lambda.ts";

// The local cloud's invocation paths (the gateway's routes, the Lambda API behind tasks, state machines, TTL and
// schedules) run each function's bundle under its configured memory: a bundle that cannot load, or a function that
// outgrows its memory, fails here as in AWS. The bundles are stand-ins written as esbuild leaves them.
const dir = mkdtempSync(join(tmpdir(), "local-fns-"));
const HEALTH = routes.find((r) => r.method === "GET" && r.path === "/ok")!;
const SWEEPER = taskByName("ExportSweeper")!;

/** A platform function as the CDK app configures it (its memory, timeout, environment), its bundle replaced. */
function bundle(id: string, source: string): FunctionBundle {
  const f = platformFunctions().find((x) => x.id === id)!;
  const file = join(dir, `${id}-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  return { ...f, dir, file };
}

const OOM = `export const handler = async () => { const keep = []; for (;;) keep.push(new Array(1e5).fill({ x: Math.random() })); };`;
const BROKEN = `import "./not-bundled.mjs"; export const handler = async () => ({ statusCode: 200, body: "{}" });`;

let functions: LocalFunctions;
let gateway: Gateway;
let base: string;
beforeAll(async () => {
  functions = new LocalFunctions({
    environment: () => ({}),
    bundles: [bundle(routeId(HEALTH), BROKEN), bundle(`Task-${SWEEPER.name}`, OOM)],
  });
  gateway = new Gateway({
    routes: mountedRoutes([HEALTH]),
    loader: async (r) => functions.route(r),
    cors: false,
  });
  await gateway.load();
  base = `http://127.0.0.1:${await gateway.listen(0, "127.0.0.1")}`;
});
afterAll(async () => {
  await gateway?.close();
  await functions?.stopAll();
  rmSync(dir, { recursive: true, force: true });
});

describe("the local cloud runs the functions' bundles", () => {
  it("a route whose bundle cannot load answers as API Gateway does for a failed function", async () => {
    const res = await fetch(`${base}/ok`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: "Internal Server Error" });
  });

  it("a task whose bundle cannot load fails its invocation with the init error", async () => {
    const broken = new LocalFunctions({
      environment: () => ({}),
      bundles: [bundle(`Task-${SWEEPER.name}`, BROKEN)],
    });
    try {
      const lambda = new LocalLambda((name) => (taskByName(name) ? broken.task(SWEEPER) : undefined));
      const out = await lambda.invoke(SWEEPER.name, {}, false);
      expect(out).toMatchObject({
        status: 200,
        error: "Unhandled",
        body: { errorType: "Runtime.ExitError" },
      });
      expect((out.body as { errorMessage: string }).errorMessage).toMatch(/not-bundled/);
    } finally {
      await broken.stopAll();
    }
  });

  it("a task that needs more than its configured memory fails with Runtime.OutOfMemory through the Lambda API", async () => {
    const lambda = new LocalLambda((name) => {
      const t = taskByName(name);
      return t ? functions.task(t) : undefined;
    });
    const out = await lambda.invoke(SWEEPER.name, {}, false);
    expect(out).toMatchObject({
      status: 200,
      error: "Unhandled",
      body: { errorType: "Runtime.OutOfMemory" },
    });
  }, 120_000);

  it("a response-streamed function's status, headers and body reach the client as it writes them", async () => {
    const streamed = new LocalFunctions({
      environment: () => ({}),
      bundles: [
        bundle(
          routeId(HEALTH),
          `export const handler = awslambda.streamifyResponse(async (event, stream) => {
             const out = awslambda.HttpResponseStream.from(stream, { statusCode: 202, headers: { "content-type": "text/event-stream" } });
             out.write("data: 1\\n\\n"); await new Promise((r) => setTimeout(r, 20)); out.write("data: 2\\n\\n"); out.end();
           });`,
        ),
      ],
    });
    const gw = new Gateway({
      routes: mountedRoutes([HEALTH]),
      loader: async (r) => streamed.route(r),
      cors: false,
    });
    try {
      await gw.load();
      const res = await fetch(`http://127.0.0.1:${await gw.listen(0, "127.0.0.1")}/ok`);
      expect(res.status).toBe(202);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      expect(await res.text()).toBe("data: 1\n\ndata: 2\n\n");
    } finally {
      await gw.close();
      await streamed.stopAll();
    }
  });
});
