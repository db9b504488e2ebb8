import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type FunctionSpec, type Invocation, LocalFunction, splitStreamMetadata } from "./function-host.ts";

// Bundles as esbuild leaves them (plain ESM exporting `handler`), each run as the local Lambda runs a function.
const dir = mkdtempSync(join(tmpdir(), "fn-host-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const started: LocalFunction[] = [];
afterAll(() => Promise.all(started.map((f) => f.stop())));

function fn(source: string, spec: Partial<FunctionSpec> = {}): LocalFunction {
  const entry = join(dir, `${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(entry, source);
  const f = new LocalFunction({
    name: "test-fn",
    entry,
    memoryMb: 128,
    timeoutSeconds: 5,
    environment: {},
    ...spec,
  });
  started.push(f);
  return f;
}

async function text(outcome: Invocation): Promise<string> {
  if (outcome.kind !== "stream") throw new Error(`not a stream: ${JSON.stringify(outcome)}`);
  const parts: Buffer[] = [];
  for await (const b of outcome.bytes) parts.push(b);
  return Buffer.concat(parts).toString("utf8");
}

describe("local Lambda execution environments", () => {
  it("starts at most twice the cores' count of environments at once across functions; the rest wait their turn", async () => {
    // Each bundle takes 300 ms to load and says when its load began; more functions than slots are invoked at once.
    const slots = Math.max(2, availableParallelism() * 2);
    const fns = Array.from({ length: slots + 3 }, () =>
      fn(
        `const began = Date.now(); await new Promise((r) => setTimeout(r, 300)); const ended = Date.now();
         export const handler = async () => ({ began, ended });`,
      ),
    );
    const out = await Promise.all(fns.map((f) => f.invoke({})));
    const times = out.map((o) =>
      o.kind === "result" ? (o.value as { began: number; ended: number }) : null,
    );
    expect(times.every(Boolean)).toBe(true);
    const loads = times.map((t) => t as { began: number; ended: number });
    // At no load's start were more than `slots` loads under way (its own included).
    for (const l of loads)
      expect(loads.filter((o) => o.began <= l.began && o.ended > l.began).length).toBeLessThanOrEqual(slots);
    // The first ones answer without waiting for the last to load.
    const firstEnd = Math.min(...loads.map((l) => l.ended));
    expect(firstEnd).toBeLessThanOrEqual(Math.max(...loads.map((l) => l.began)));
  });

  it("provisioned environments are loaded before any invocation and outlive the idle time; others do not", async () => {
    const f = fn(`let calls = 0; export const handler = async () => ++calls;`, { idleMs: 50 });
    await f.provision(2);
    expect(f.size).toBe(2);
    // Both warm: two invocations at once meet no new environment, each its first call.
    const both = await Promise.all([f.invoke({}), f.invoke({})]);
    expect(both.map((o) => (o.kind === "result" ? o.value : o))).toEqual([1, 1]);
    // A third at once needs an environment of its own, which is reclaimed once idle; the provisioned stay.
    await Promise.all([f.invoke({}), f.invoke({}), f.invoke({})]);
    expect(f.size).toBe(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(f.size).toBe(2);
  });

  it("answers with the handler's JSON result, seeing its own environment and Lambda's context", async () => {
    const f = fn(
      `export const handler = async (event, ctx) => ({ got: event, env: process.env.ONLY_MINE, other: process.env.HOME ?? null,
        name: ctx.functionName, mem: ctx.memoryLimitInMB, left: ctx.getRemainingTimeInMillis() > 0, date: new Date(0) });`,
      { environment: { ONLY_MINE: "yes" } },
    );
    const out = await f.invoke({ a: 1 });
    expect(out).toEqual({
      kind: "result",
      // As Lambda returns it: JSON (the Date as its string), nothing of the host's environment.
      value: {
        got: { a: 1 },
        env: "yes",
        other: null,
        name: "test-fn",
        mem: "128",
        left: true,
        date: "1970-01-01T00:00:00.000Z",
      },
    });
  });

  it("reports a thrown error as Lambda does and keeps the environment", async () => {
    const f = fn(
      `let n = 0; export const handler = async () => { n++; if (n === 1) throw new TypeError("bad " + n); return n; };`,
    );
    expect(await f.invoke({})).toEqual({ kind: "error", errorType: "TypeError", errorMessage: "bad 1" });
    expect(await f.invoke({})).toEqual({ kind: "result", value: 2 });
    expect(f.size).toBe(1);
  });

  it("runs one invocation per environment: concurrent calls get environments of their own", async () => {
    const f = fn(
      `const me = Math.random(); export const handler = async (e) => { await new Promise(r => setTimeout(r, 100)); return me; };`,
    );
    const outs = await Promise.all([f.invoke({}), f.invoke({}), f.invoke({})]);
    const ids = new Set(outs.map((o) => (o.kind === "result" ? o.value : o)));
    expect(ids.size).toBe(3);
    // Warm ones are reused afterwards.
    await f.invoke({});
    expect(f.size).toBe(3);
  });

  it("queues invocations beyond the function's concurrency", async () => {
    const f = fn(
      `export const handler = async () => { await new Promise(r => setTimeout(r, 50)); return 1; };`,
      {
        maxConcurrency: 1,
      },
    );
    const outs = await Promise.all([f.invoke({}), f.invoke({}), f.invoke({})]);
    expect(outs.every((o) => o.kind === "result")).toBe(true);
    expect(f.size).toBe(1);
  });

  it("ends an invocation at its timeout with Lambda's error, and starts a fresh environment next", async () => {
    const f = fn(`export const handler = async (e) => { if (e.spin) for (;;) {} return "ok"; };`, {
      timeoutSeconds: 1,
    });
    expect(await f.invoke({ spin: true })).toEqual({
      kind: "error",
      errorType: "Sandbox.Timedout",
      errorMessage: "Task timed out after 1.00 seconds",
    });
    expect(await f.invoke({})).toEqual({ kind: "result", value: "ok" });
  });

  it("a function that needs more memory than it has fails with Runtime.OutOfMemory", async () => {
    const f = fn(
      `export const handler = async () => { const keep = []; for (;;) keep.push(new Array(1e5).fill({ x: Math.random() })); };`,
      { memoryMb: 128, timeoutSeconds: 30 },
    );
    const out = await f.invoke({});
    expect(out).toMatchObject({ kind: "error", errorType: "Runtime.OutOfMemory" });
  }, 60_000);

  it("a bundle that cannot load fails the invocation with the init error", async () => {
    const f = fn(`import "./does-not-exist.mjs"; export const handler = async () => 1;`);
    const out = await f.invoke({});
    expect(out).toMatchObject({ kind: "error", errorType: "Runtime.ExitError" });
    expect(out.kind === "error" && out.errorMessage).toMatch(/does-not-exist/);
  });

  it("streams a streamified handler's response: the prelude, then each chunk as written", async () => {
    const f = fn(
      `export const handler = awslambda.streamifyResponse(async (event, stream) => {
         const out = awslambda.HttpResponseStream.from(stream, { statusCode: 201, headers: { "x-a": "b" } });
         out.write("one;"); await new Promise(r => setTimeout(r, 20)); out.write("two"); out.end();
       });`,
    );
    const out = await f.invoke({});
    if (out.kind !== "stream") throw new Error(JSON.stringify(out));
    const { prelude, body } = await splitStreamMetadata(out.bytes);
    expect(prelude).toEqual({ statusCode: 201, headers: { "x-a": "b" } });
    const parts: string[] = [];
    for await (const b of body) parts.push(b.toString());
    expect(parts.join("")).toBe("one;two");
  });

  it("a stream whose handler throws half-way ends", async () => {
    const f = fn(
      `export const handler = awslambda.streamifyResponse(async (event, stream) => { stream.write("part"); throw new Error("late"); });`,
    );
    expect(await text(await f.invoke({}))).toBe("part");
    expect(await f.invoke({})).toMatchObject({ kind: "stream" });
  });

  it("hands the bundle's request counts to the host after each invocation, kept when its environment goes", async () => {
    const f = fn(
      `globalThis[Symbol.for("agent-platform.request-stats")] = { dynamodb: { requests: 0 }, s3: { requests: 0 } };
       export const handler = async (e) => { globalThis[Symbol.for("agent-platform.request-stats")].dynamodb.requests++; if (e.spin) for (;;) {} };`,
      { timeoutSeconds: 1 },
    );
    await f.invoke({});
    await f.invoke({});
    expect(f.requestStats()).toEqual([{ dynamodb: { requests: 2 }, s3: { requests: 0 } }]);
    // A timed-out environment is gone: what it counted before stays counted.
    await f.invoke({ spin: true });
    await f.invoke({});
    expect(f.requestStats()).toEqual([
      { dynamodb: { requests: 2 }, s3: { requests: 0 } },
      { dynamodb: { requests: 1 }, s3: { requests: 0 } },
    ]);
  });
});

// Issue 36 (3): on a laptop's two cores, an environment per concurrent request (as Lambda scales) left sixteen
// environments of one function each serving a few requests in V8's cold tiers. Beyond `queueBeyond` busy
// environments a buffered invocation waits for a free one, in order; streams, long-polls and invocations made by
// a running one never wait.
describe("local Lambda: buffered invocations queued beyond the machine's parallelism", () => {
  const sleepy = `let served = 0; const me = Math.random();
    export const handler = async (e) => { const n = served++; await new Promise(r => setTimeout(r, e.ms ?? 50)); return { i: e.i, n, me }; };`;
  const servedBy = (o: Invocation) => {
    if (o.kind !== "result") throw new Error(JSON.stringify(o));
    return o.value as { i: number; n: number; me: number };
  };

  it("a function that computes keeps queueBeyond environments busy: the rest share the ones up", async () => {
    const f = fn(
      `const me = Math.random();
       export const handler = async (e) => { const end = Date.now() + 30; while (Date.now() < end); return { i: e.i, n: 0, me }; };`,
      { queueBeyond: 2 },
    );
    // Two waves: the second arrives once the first has shown the function computes all its time.
    for (const wave of [0, 1]) {
      const outs = (
        await Promise.all(Array.from({ length: 8 }, (_, i) => f.invoke({ i: wave * 8 + i })))
      ).map(servedBy);
      expect(outs.map((o) => o.i)).toEqual(Array.from({ length: 8 }, (_, i) => wave * 8 + i));
    }
    expect(f.size).toBe(2);
  });

  it("a function whose invocations mostly wait gets more environments, at most four times queueBeyond", async () => {
    const f = fn(sleepy, { queueBeyond: 1 });
    servedBy(await f.invoke({ i: 0 }));
    // Its first invocation waited nearly all its time: eight at once now find four environments, no more.
    const outs = (await Promise.all(Array.from({ length: 8 }, (_, i) => f.invoke({ i })))).map(servedBy);
    expect(outs.map((o) => o.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(outs.map((o) => o.me)).size).toBe(4);
    expect(f.size).toBe(4);
  });

  it("an environment started while others wait goes to the longest waiting, not to the newcomer", async () => {
    const f = fn(sleepy, { queueBeyond: 1 });
    const order: number[] = [];
    const first = f.invoke({ i: 0, ms: 50 });
    const long = f.invoke({ i: 1, ms: 1500 });
    const waiting = f.invoke({ i: 2, ms: 10 }).then((o) => order.push(servedBy(o).i));
    // The first has shown the function waits (more environments allowed); the long one holds the only one.
    servedBy(await first);
    const newcomer = f.invoke({ i: 3, ms: 10 }).then((o) => order.push(servedBy(o).i));
    await Promise.all([long, waiting, newcomer]);
    expect(order).toEqual([2, 3]);
  });

  it("serves queued invocations in order of arrival, each once", async () => {
    const f = fn(sleepy, { queueBeyond: 1 });
    const outs = (await Promise.all(Array.from({ length: 6 }, (_, i) => f.invoke({ i, ms: 20 })))).map(
      servedBy,
    );
    // One environment: the n-th invocation it served is the n-th that arrived.
    expect(outs.map((o) => [o.i, o.n])).toEqual(outs.map((_, i) => [i, i]));
  });

  it("never queues a held-open function's invocations (a response stream would block the next)", async () => {
    const f = fn(
      `const me = String(Math.random());
       export const handler = awslambda.streamifyResponse(async (event, stream) => {
         stream.write(me); await new Promise(r => setTimeout(r, 300)); stream.end(); });`,
      { queueBeyond: 1, heldOpen: true },
    );
    const ids = await Promise.all([f.invoke({}), f.invoke({}), f.invoke({})].map(async (o) => text(await o)));
    expect(new Set(ids).size).toBe(3);
  });

  it("a queued invocation's timeout counts from its start, not its arrival", async () => {
    const f = fn(
      `export const handler = async (e) => { if (e.spin) for (;;) {} await new Promise(r => setTimeout(r, 600)); return e.i; };`,
      { queueBeyond: 1, timeoutSeconds: 1 },
    );
    // The third waits 1.2 s, past the 1 s timeout, then runs its 0.6 s.
    const three = await Promise.all([0, 1, 2].map((i) => f.invoke({ i })));
    expect(three).toEqual([0, 1, 2].map((i) => ({ kind: "result", value: i })));
    // One that runs past its time behind another is ended at its start + 1 s; the one behind it still runs.
    const g = fn(
      `export const handler = async (e) => { if (e.spin) for (;;) {} await new Promise(r => setTimeout(r, 600)); return e.i; };`,
      { queueBeyond: 1, timeoutSeconds: 1 },
    );
    const [first, spun, after] = await Promise.all([
      g.invoke({ i: 3 }),
      g.invoke({ spin: true }),
      g.invoke({ i: 4 }),
    ]);
    expect(first).toEqual({ kind: "result", value: 3 });
    expect(spun).toEqual({
      kind: "error",
      errorType: "Sandbox.Timedout",
      errorMessage: "Task timed out after 1.00 seconds",
    });
    expect(after).toEqual({ kind: "result", value: 4 });
  });

  it("an invocation made by a running one is not queued: a function invoking itself does not deadlock", async () => {
    const f = fn(
      `export const handler = async (e) => e.callBack ? "outer:" + await (await fetch(e.callBack)).text() : "inner";`,
      { queueBeyond: 1 },
    );
    // The outer invocation holds the one environment while its call comes back as a nested invocation.
    const server = createServer(async (_req, res) => {
      const inner = await f.invoke({}, { nested: true });
      res.end(inner.kind === "result" ? String(inner.value) : JSON.stringify(inner));
    });
    const port = await new Promise<number>((r) =>
      server.listen(0, "127.0.0.1", () => r((server.address() as AddressInfo).port)),
    );
    try {
      expect(await f.invoke({ callBack: `http://127.0.0.1:${port}/` })).toEqual({
        kind: "result",
        value: "outer:inner",
      });
    } finally {
      server.close();
    }
  }, 15_000);

  it("gives each invocation a trace header of its own, as Lambda's _X_AMZN_TRACE_ID", async () => {
    const f = fn(`export const handler = async () => process.env._X_AMZN_TRACE_ID ?? null;`);
    const [a, b] = [await f.invoke({}), await f.invoke({})].map((o) => (o.kind === "result" ? o.value : o));
    const format = /^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$/;
    expect(a).toMatch(format);
    expect(b).toMatch(format);
    expect(a).not.toBe(b);
  });

  it("a queued invocation is answered, not lost, when the function stops before its turn", async () => {
    const f = fn(sleepy, { queueBeyond: 1 });
    const first = f.invoke({ i: 0, ms: 2000 });
    const queued = f.invoke({ i: 1 });
    await new Promise((r) => setTimeout(r, 300));
    await f.stop();
    expect(await queued).toEqual({
      kind: "error",
      errorType: "ServiceException",
      errorMessage: "The function is stopped",
    });
    expect(await first).toMatchObject({ kind: "error" });
  });
});
