import { Client, RunTree } from "langsmith";
import { getCurrentRunTree, traceable } from "langsmith/traceable";
import { describe, expect, it } from "vitest";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// The real langsmith SDK, pointed at the platform, unchanged.
const client = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key, autoBatchTracing: true });
const getRun = async (id: string) => (await call("GET", `/api/v1/runs/${id}`, { headers: auth })).json;

async function traceChat(project: string, outputs: (msgs: unknown) => unknown, usage = true) {
  const ids: Record<string, string> = {};
  const llm = traceable(
    async (messages: { role: string; content: string }[]) => {
      const rt = getCurrentRunTree();
      ids.llm = rt.id;
      rt.events = [
        ...(rt.events ?? []),
        { name: "new_token", time: new Date(Date.now() + 5).toISOString(), kwargs: { token: "Hi" } },
      ];
      await new Promise((r) => setTimeout(r, 10));
      rt.events.push({
        name: "new_token",
        time: new Date(Date.now() + 50).toISOString(),
        kwargs: { token: "!" },
      });
      return usage ? outputs(messages) : outputs(messages);
    },
    {
      name: "ChatModel",
      run_type: "llm",
      client,
      tracingEnabled: true,
      project_name: project,
      metadata: { ls_model_name: "gpt-4o-mini", ls_provider: "openai" },
    },
  );
  const chain = traceable(
    async (q: string) => {
      ids.chain = getCurrentRunTree().id;
      return llm([{ role: "user", content: q }]);
    },
    { name: "Chain", run_type: "chain", client, tracingEnabled: true, project_name: project },
  );
  await chain("Say hi to the trace store, please");
  await client.awaitPendingTraceBatches();
  return ids;
}

describe("trace ingestion with the langsmith SDK", () => {
  it("traceable() nested llm run in OpenAI format: lineage, tokens, costs from the price map, first token time, messages", async () => {
    const ids = await traceChat("sdk-openai", () => ({
      choices: [{ message: { role: "assistant", content: "Hi!" } }],
      usage: {
        prompt_tokens: 20,
        completion_tokens: 10,
        total_tokens: 30,
        prompt_tokens_details: { cached_tokens: 5 },
      },
      model: "gpt-4o-mini",
    }));
    await expect.poll(async () => (await getRun(ids.llm))?.status).toBe("success");
    const llm = await getRun(ids.llm);
    const chain = await getRun(ids.chain);
    expect(chain.is_root).toBe(true);
    expect(llm.trace_id).toBe(ids.chain);
    expect(llm.parent_run_id).toBe(ids.chain);
    expect(llm.parent_run_ids).toEqual([ids.chain]);
    expect(llm.is_root).toBe(false);
    expect(llm.dotted_order.split(".")).toHaveLength(2);
    expect(llm.prompt_tokens).toBe(20);
    expect(llm.completion_tokens).toBe(10);
    expect(llm.total_tokens).toBe(30);
    expect(llm.total_cost).toBeGreaterThan(0);
    expect(llm.prompt_cost + llm.completion_cost).toBeCloseTo(llm.total_cost, 12);
    expect(llm.first_token_time).toEqual(expect.any(String));
    expect(Date.parse(llm.first_token_time)).toBeLessThan(Date.parse(llm.end_time));
    expect(llm.messages.input_messages[0]).toMatchObject({ role: "user", content: [{ type: "text" }] });
    expect(llm.messages.output_messages[0]).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Hi!" }],
    });
    expect(llm.format_errors).toEqual([]);
  });

  it("Anthropic-shaped outputs are normalized and their usage counted", async () => {
    const ids = await traceChat("sdk-anthropic", () => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Hello from Claude" }],
      model: "claude-3-5-sonnet-20241022",
      usage: { input_tokens: 12, output_tokens: 4 },
    }));
    await expect.poll(async () => (await getRun(ids.llm))?.status).toBe("success");
    const llm = await getRun(ids.llm);
    expect(llm.prompt_tokens).toBe(12);
    expect(llm.completion_tokens).toBe(4);
    expect(llm.messages.output_messages[0].content[0].text).toBe("Hello from Claude");
  });

  it("without usage, tokens are estimated with the tokenizer", async () => {
    const ids = await traceChat(
      "sdk-estimate",
      () => ({ role: "assistant", content: "An answer of several words here" }),
      false,
    );
    await expect.poll(async () => (await getRun(ids.llm))?.status).toBe("success");
    const llm = await getRun(ids.llm);
    expect(llm.prompt_tokens).toBeGreaterThan(3);
    expect(llm.completion_tokens).toBeGreaterThan(3);
    expect(llm.tokens_estimated).toBe(true);
  });

  it("RunTree post/patch and Client.createRun/updateRun work unchanged", async () => {
    const rt = new RunTree({
      name: "manual",
      run_type: "chain",
      inputs: { q: 1 },
      client,
      project_name: "sdk-runtree",
    });
    await rt.postRun();
    await rt.end({ answer: 2 });
    await rt.patchRun();
    const id = crypto.randomUUID();
    await client.createRun({
      id,
      name: "direct",
      run_type: "tool",
      inputs: { x: 1 },
      project_name: "sdk-runtree",
      start_time: Date.now(),
    } as never);
    await client.updateRun(id, { outputs: { y: 2 }, end_time: Date.now() });
    await client.awaitPendingTraceBatches();
    await expect.poll(async () => (await getRun(rt.id))?.outputs).toEqual({ answer: 2 });
    await expect.poll(async () => (await getRun(id))?.outputs).toEqual({ y: 2 });
    expect((await getRun(id)).status).toBe("success");
  });
});

describe("ingestion semantics", () => {
  const run = (over: Record<string, unknown> = {}) => ({
    id: crypto.randomUUID(),
    name: "r",
    run_type: "chain",
    start_time: new Date().toISOString(),
    inputs: { a: 1 },
    session_name: "semantics",
    ...over,
  });

  it("a re-sent batch creates nothing twice", async () => {
    const runs = [run(), run()];
    for (let i = 0; i < 2; i++)
      expect((await call("POST", "/api/v1/runs/batch", { headers: auth, body: { post: runs } })).status).toBe(
        202,
      );
    const projects = (await call("GET", "/api/v1/sessions?name=semantics", { headers: auth })).json;
    const q = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { session: [projects[0].id], filter: `in(id, ["${runs[0].id}", "${runs[1].id}"])` },
    });
    expect(q.status).toBe(200);
    expect(q.json.runs).toHaveLength(2);
  });

  it("a patch that arrives before its post is kept and merged", async () => {
    const r = run();
    expect(
      (
        await call("PATCH", `/api/v1/runs/${r.id}`, {
          headers: auth,
          body: { outputs: { done: true }, end_time: Date.now() },
        })
      ).status,
    ).toBe(202);
    expect((await call("POST", "/api/v1/runs", { headers: auth, body: r })).status).toBe(202);
    const got = await getRun(r.id);
    expect(got.outputs).toEqual({ done: true });
    expect(got.inputs).toEqual({ a: 1 });
    expect(got.status).toBe("success");
  });

  it("a re-sent post after its patch loses nothing", async () => {
    const r = run();
    await call("POST", "/api/v1/runs", { headers: auth, body: r });
    await call("PATCH", `/api/v1/runs/${r.id}`, {
      headers: auth,
      body: { outputs: { v: 1 }, end_time: new Date().toISOString() },
    });
    await call("POST", "/api/v1/runs", { headers: auth, body: r });
    expect((await getRun(r.id)).outputs).toEqual({ v: 1 });
  });

  it("times as epoch milliseconds are accepted", async () => {
    const r = run({ start_time: 1_700_000_000_000, end_time: 1_700_000_001_500 });
    await call("POST", "/api/v1/runs", { headers: auth, body: r });
    const got = await getRun(r.id);
    expect(got.start_time).toBe("2023-11-14T22:13:20.000000Z");
    expect(got.end_time).toBe("2023-11-14T22:13:21.500000Z");
  });

  it("an invalid run is rejected naming the field; valid runs of the same batch are stored", async () => {
    const good = run();
    const bad = run({ run_type: "banana" });
    const r = await call("POST", "/api/v1/runs/batch", { headers: auth, body: { post: [good, bad] } });
    expect(r.status).toBe(202);
    expect(r.json.errors[0].loc).toEqual(["body", "post", 1, "run_type"]);
    expect((await getRun(good.id)).id).toBe(good.id);
    expect((await call("GET", `/api/v1/runs/${bad.id}`, { headers: auth })).status).toBe(404);
  });

  it("payloads over the item budget go to S3 and come back transparently", async () => {
    const big = "x".repeat(300_000);
    const r = run({ inputs: { big } });
    await call("POST", "/api/v1/runs", { headers: auth, body: r });
    expect((await getRun(r.id)).inputs.big).toHaveLength(300_000);
  });

  it("a bad filter is a 422 whose message points at the character", async () => {
    const r = await call("POST", "/api/v1/runs/query", {
      headers: auth,
      body: { trace: crypto.randomUUID(), filter: "eq(name, " },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(["body", "filter"]);
    expect(r.json.detail[0].msg).toMatch(/position \d+/);
  });

  it("another workspace's run is a 404", async () => {
    const { ensureTenant, newApiKey, storeApiKey } = await import("../shared/auth/api-keys.ts");
    const r = run();
    await call("POST", "/api/v1/runs", { headers: auth, body: r });
    const other = crypto.randomUUID();
    const key = newApiKey();
    await ensureTenant(other, "other");
    await storeApiKey(key, [other]);
    expect((await call("GET", `/api/v1/runs/${r.id}`, { headers: { "X-Api-Key": key } })).status).toBe(404);
  });
});
