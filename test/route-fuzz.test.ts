import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenRule, fuzzRoutes, fuzzSummary } from "../harness/route-fuzz.ts";
import { type FuzzFixtures, fuzzFixtures } from "../harness/route-fuzz-fixtures.ts";
import { auth, call, facts } from "./helpers/cloud.ts";

// Issue 16, item 1: every route of the manifest, fuzzed from its zod schemas, against real ids. A small fixed
// sweep here (FUZZ_RUNS requests per route, FUZZ_SEED); `npm run bench -- reliability` runs it big.
const RUNS = Number(process.env.FUZZ_RUNS ?? 2);
const SEED = Number(process.env.FUZZ_SEED ?? 16);

let fixtures: FuzzFixtures;
beforeAll(async () => {
  fixtures = await fuzzFixtures(facts);
}, 240_000);
afterAll(() => fixtures?.close());

const agent = (p: string) => `/agents/${fixtures.ids.deployment_id}${p}`;
const nestedValue = (depth: number): unknown => (depth === 0 ? "bottom" : { a: nestedValue(depth - 1) });
const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
/** A 4xx of the HTTPValidationError shape (or any JSON 4xx when `status` is not 422). */
function refused(r: { status: number; text: string }, status = 422) {
  expect(r.status, r.text).toBe(status);
  expect(brokenRule(r.status, r.text)).toBeUndefined();
}

// What the fuzz found, each a rule of its own. They run before the sweep, which ends by deleting the fixtures.
describe("found by the route fuzz", () => {
  it("thread metadata keys are keys: a dot is part of the key, an empty key is a 422", async () => {
    const thread = agent(`/threads/${fixtures.ids.thread_id}`);
    const r = await call("PATCH", thread, {
      headers: auth,
      body: { metadata: { "a.b": 1, "x.y.z": { "c.d": 2 } } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.metadata).toMatchObject({ "a.b": 1, "x.y.z": { "c.d": 2 } });
    refused(await call("PATCH", thread, { headers: auth, body: { metadata: { "": 1 } } }));
    refused(await call("POST", agent("/threads"), { headers: auth, body: { metadata: { "": { "": 1 } } } }));
    expect((await call("GET", thread, { headers: auth })).json.metadata).toMatchObject({ "a.b": 1 });
  });

  it("values nested deeper than the store's 32 levels are a 422; bodies past 128 are refused before parsing", async () => {
    const ok = await call("POST", agent("/threads"), {
      headers: auth,
      body: { metadata: { deep: nestedValue(20) } },
    });
    expect(ok.status, ok.text).toBe(200);
    refused(
      await call("POST", agent("/threads"), { headers: auth, body: { metadata: { deep: nestedValue(40) } } }),
    );
    const deep = `{"metadata":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}`;
    const r = await call("POST", agent("/threads"), {
      headers: { ...auth, "content-type": "application/json" },
      raw: deep,
    });
    refused(r);
    expect(r.json.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
  });

  it("a trace's inputs nested 100 deep are kept (trace payloads are stored as JSON text, not maps)", async () => {
    const id = crypto.randomUUID();
    const inputs = { deep: nestedValue(100) };
    const body = { id, name: "deep", run_type: "chain", start_time: new Date().toISOString(), inputs };
    const r = await call("POST", "/api/v1/runs", {
      headers: auth,
      body: { ...body, session_id: fixtures.ids.session_id },
    });
    expect(r.status, r.text).toBe(202);
    const read = await call("GET", `/api/v1/runs/${id}`, { headers: auth });
    expect(read.status, read.text).toBe(200);
    expect(read.json.inputs).toEqual(inputs);
  });

  it("numbers past 2^53 are stored and read back; those out of the store's range are a 422", async () => {
    const thread = agent(`/threads/${fixtures.ids.thread_id}`);
    const r = await call("PATCH", thread, {
      headers: auth,
      body: { metadata: { big: 2 ** 60, tiny: 1.5e-100 } },
    });
    expect(r.status, r.text).toBe(200);
    expect((await call("GET", thread, { headers: auth })).json.metadata).toMatchObject({
      big: 2 ** 60,
      tiny: 1.5e-100,
    });
    refused(await call("PATCH", thread, { headers: auth, body: { metadata: { huge: 1e200 } } }));
    refused(await call("PATCH", thread, { headers: auth, body: { metadata: { small: -1e-200 } } }));
  });

  it("a run input that would make an item over 400 KB is a 413, and the thread serves the next run", async () => {
    const runs = agent(`/threads/${fixtures.ids.thread_id}/runs/wait`);
    const big = { assistant_id: fixtures.ids.assistant_id, input: { text: "x".repeat(450_000) } };
    refused(await call("POST", runs, { headers: auth, body: big }), 413);
    const small = await call("POST", runs, {
      headers: auth,
      body: { assistant_id: fixtures.ids.assistant_id, input: { text: "hi" } },
    });
    expect(small.status, small.text).toBe(200);
  });

  it("a trace cursor that is not one this server wrote is a 422", async () => {
    const trace = fixtures.ids.trace_run_id;
    const session = fixtures.ids.session_id;
    for (const body of [
      { trace, cursor: "!!not base64!!" },
      { trace, cursor: cursorOf(5) },
      { trace, cursor: cursorOf({ PK: "x" }) },
      { trace, cursor: cursorOf({ PK: "a", SK: "b", GSI2PK: "another#trace", GSI2SK: "c" }) },
      { session: [session], cursor: cursorOf({ s: -1, day: "2026-01-01", before: "~" }) },
      { session: [session], cursor: cursorOf({ s: 0, day: "not a day", before: "~" }) },
      { session: [session], cursor: cursorOf({ s: 0, day: "2026-01-01", before: 7 }) },
    ]) {
      const r = await call("POST", "/api/v1/runs/query", { headers: auth, body });
      refused(r);
      expect(r.json.detail[0].loc, JSON.stringify(body)).toEqual(["body", "cursor"]);
    }
  });

  it("thread search answers a filter nested far deeper than any stored value", async () => {
    for (const filter of [{ metadata: nestedValue(120) }, { values: { v: nestedValue(120) } }]) {
      const r = await call("POST", agent("/threads/search"), { headers: auth, body: filter });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual([]);
    }
  });

  it("a price given as a decimal string too large for a number is a 422, as is one past the store's range", async () => {
    const entry = (prompt_cost: unknown) => ({
      name: "fuzz-model",
      match_pattern: "^fuzz-model$",
      prompt_cost,
      completion_cost: 0.000002,
    });
    for (const cost of ["1e400", 1e200]) {
      refused(await call("POST", "/api/v1/model-price-map", { headers: auth, body: entry(cost) }));
      refused(
        await call("PUT", `/api/v1/model-price-map/${fixtures.ids.id}`, { headers: auth, body: entry(cost) }),
      );
    }
  });

  it("as_node naming what every object inherits (valueOf, constructor) is an unknown node: a 400", async () => {
    for (const as_node of ["valueOf", "constructor", "toString"]) {
      const r = await call("POST", agent(`/threads/${fixtures.ids.thread_id}/state`), {
        headers: auth,
        body: { values: { text: "x" }, as_node },
      });
      refused(r, 400);
      const created = await call("POST", agent("/threads"), {
        headers: auth,
        body: {
          metadata: { graph_id: "agent" },
          supersteps: [{ updates: [{ values: { text: "x" }, as_node }] }],
        },
      });
      refused(created, 400);
    }
  });

  it("an id longer than any key is a 404, not a refusal of the store", async () => {
    const r = await call("GET", `/agents/${"z".repeat(3000)}/threads/${fixtures.ids.thread_id}`, {
      headers: auth,
    });
    refused(r, 404);
  });
});

describe("route fuzz", () => {
  it("every route: never a 5xx, every 4xx a JSON body, every 422 the HTTPValidationError shape", async () => {
    expect(fixtures.missing, "every fixture was made").toEqual([]);
    const result = await fuzzRoutes({
      base: facts.base_url,
      auth,
      ids: fixtures.ids,
      runs: RUNS,
      seed: SEED,
    });
    console.log(fuzzSummary(result));
    for (const f of result.failures.slice(0, 20))
      console.log(`${f.rule}: ${f.route}\n  ${f.request}\n  → ${f.status} ${f.answer}`);
    expect(result.requests).toBeGreaterThan(0);
    expect(result.failures.map((f) => `${f.status} ${f.route}: ${f.rule}`)).toEqual([]);
  }, 600_000);
});
