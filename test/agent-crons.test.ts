import { InvokeCommand } from "@aws-sdk/client-lambda";
import type { Client, Cron } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient, fireCronTick, runStatusSoon } from "../harness/agents.ts";
import { waitFor } from "../harness/export.ts";
import { gitRepo } from "../harness/repos.ts";
import { tickId } from "../shared/agent/crons/crons.ts";
import { deploymentsHost } from "../shared/agent/hosting/host.ts";
import { createAgentServer, nextSweepAt } from "../shared/agent/ops/index.ts";
import { lambda } from "../shared/aws/clients.ts";
import { threads } from "../shared/records/agent.ts";
import { facts } from "./helpers/cloud.ts";

// Issue 15, item 1: crons of the agent server through the real @langchain/langgraph-sdk Client. Ticks fire in
// the AgentCronTick task; the tests call it (through the local Lambda API) with a cron's next scheduled time, or
// call the platform's agent server's operations in this process with a clock they set (issue 34: no test waits
// for a wall-clock minute).
const GRAPH = `
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
const State = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });
export const echo = new StateGraph(State)
  .addNode("work", async () => ({ items: ["work"] }))
  .addEdge(START, "work").addEdge("work", END).compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { echo: "./src/graph.mjs:echo" }, env: {} }),
  "src/graph.mjs": GRAPH,
});
afterAll(() => repo.remove());

let client: Client;
let deploymentId: string;

beforeAll(async () => {
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "crons"));
});

/** The platform's agent server as the cron tick task builds it, with a clock the test sets. */
const platformAt = (now: number) => createAgentServer({ host: deploymentsHost(), clock: () => now });

const tick = (cron: Pick<Cron, "cron_id">, scheduledAt: string) =>
  fireCronTick(facts, deploymentId, cron.cron_id, scheduledAt);

const YEARLY = "0 0 1 1 *";
const nextNewYear = () => `${new Date().getUTCFullYear() + 1}-01-01T00:00:00.000Z`;

describe("crons", () => {
  it("create on a thread and stateless, search, count, patch, delete", async () => {
    const t = await client.threads.create();
    const onThread = await client.crons.createForThread(t.thread_id, "echo", {
      schedule: YEARLY,
      input: { items: ["cron"] },
      metadata: { owner: "ann" },
    });
    expect(onThread).toMatchObject({
      cron_id: expect.any(String),
      assistant_id: expect.any(String),
      thread_id: t.thread_id,
      schedule: YEARLY,
      next_run_date: nextNewYear(),
      end_time: null,
      enabled: true,
      metadata: { owner: "ann" },
      payload: { input: { items: ["cron"] } },
      user_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const end = new Date(Date.now() + 86_400_000 * 400).toISOString();
    const stateless = await client.crons.create("echo", {
      schedule: "30 12 * * *",
      endTime: end,
      metadata: { owner: "bob" },
    });
    expect(stateless).toMatchObject({ thread_id: null, on_run_completed: "delete", end_time: end });
    expect(stateless.next_run_date).toMatch(/T12:30:00.000Z$/);

    const byThread = await client.crons.search({ threadId: t.thread_id });
    expect(byThread.map((c) => c.cron_id)).toEqual([onThread.cron_id]);
    const byMeta = await client.crons.search({ metadata: { owner: "bob" } });
    expect(byMeta.map((c) => c.cron_id)).toEqual([stateless.cron_id]);
    const all = await client.crons.search({
      assistantId: onThread.assistant_id,
      sortBy: "created_at",
      sortOrder: "asc",
    });
    expect(all.map((c) => c.cron_id)).toEqual(expect.arrayContaining([onThread.cron_id, stateless.cron_id]));
    const picked = await client.crons.search({ threadId: t.thread_id, select: ["cron_id", "schedule"] });
    expect(picked).toEqual([{ cron_id: onThread.cron_id, schedule: YEARLY }]);
    expect(await client.crons.count({ threadId: t.thread_id })).toBe(1);
    expect(await client.crons.count({ metadata: { owner: "ann" } })).toBe(1);

    const disabled = await client.crons.update(stateless.cron_id, { enabled: false });
    expect(disabled).toMatchObject({ enabled: false, next_run_date: null });
    expect((await client.crons.search({ enabled: false, metadata: { owner: "bob" } })).length).toBe(1);
    const moved = await client.crons.update(stateless.cron_id, {
      enabled: true,
      schedule: "15 6 * * *",
      metadata: { tier: "gold" },
    });
    expect(moved).toMatchObject({
      enabled: true,
      schedule: "15 6 * * *",
      metadata: { owner: "bob", tier: "gold" },
    });
    expect(moved.next_run_date).toMatch(/T06:15:00.000Z$/);

    await client.crons.delete(stateless.cron_id);
    expect(await client.crons.count({ metadata: { owner: "bob" } })).toBe(0);
    await expect(client.crons.delete(stateless.cron_id)).rejects.toThrow(/404/);
    await expect(client.crons.update(stateless.cron_id, { enabled: false })).rejects.toThrow(/404/);
    await expect(
      client.crons.createForThread(crypto.randomUUID(), "echo", { schedule: YEARLY }),
    ).rejects.toThrow(/404/);
  });

  it("a bad expression or time zone answers 422 saying why", async () => {
    await expect(client.crons.create("echo", { schedule: "61 * * * *" })).rejects.toThrow(/422/);
    const res = await fetch(`${facts.base_url}/agents/${deploymentId}/runs/crons`, {
      method: "POST",
      headers: {
        "x-api-key": facts.api_key,
        "x-tenant-id": facts.tenant_id,
        "content-type": "application/json",
      },
      body: JSON.stringify({ assistant_id: "echo", schedule: "* * * *" }),
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: unknown[] };
    expect(body.detail[0]).toMatchObject({
      loc: ["body", "schedule"],
      msg: expect.stringMatching(/expected 5 fields/),
    });
    const tz = await fetch(`${facts.base_url}/agents/${deploymentId}/runs/crons`, {
      method: "POST",
      headers: {
        "x-api-key": facts.api_key,
        "x-tenant-id": facts.tenant_id,
        "content-type": "application/json",
      },
      body: JSON.stringify({ assistant_id: "echo", schedule: "0 * * * *", timezone: "Europe/Paris" }),
    });
    expect(tz.status).toBe(422);
    expect(JSON.stringify(await tz.json())).toMatch(/UTC/);
  });

  it("a tick creates a run on the cron's thread; the same tick fired twice creates one run", async () => {
    const t = await client.threads.create();
    const cron = await client.crons.createForThread(t.thread_id, "echo", {
      schedule: YEARLY,
      input: { items: ["tick"] },
    });
    const at = cron.next_run_date!;
    const [a, b] = await Promise.all([tick(cron, at), tick(cron, at)]);
    const fired = [a, b].filter((r) => r.outcome === "fired");
    expect(fired).toHaveLength(1);
    expect([a, b].map((r) => r.outcome).sort()).toEqual(["already-fired", "fired"]);
    expect((await tick(cron, at)).outcome).toBe("already-fired");
    const runId = fired[0].run_id!;
    await runStatusSoon(client, t.thread_id, runId, "success");
    const list = await client.runs.list(t.thread_id);
    expect(list.map((r) => r.run_id)).toEqual([runId]);
    expect((await client.threads.getState(t.thread_id)).values).toEqual({ items: ["tick", "work"] });
    // The cron moved on to the next tick.
    const [after] = await client.crons.search({ threadId: t.thread_id });
    expect(after.next_run_date).toBe(`${Number(at.slice(0, 4)) + 1}-01-01T00:00:00.000Z`);
    // A disabled cron's tick does nothing.
    await client.crons.update(cron.cron_id, { enabled: false });
    expect((await tick(cron, after.next_run_date!)).outcome).toBe("already-fired");
  });

  it("a tick with multitask_strategy interrupt takes the thread from the run waiting there", async () => {
    const t = await client.threads.create();
    // A run that waits its turn for a minute: active (pending) when the tick fires.
    const waiting = await client.runs.create(t.thread_id, "echo", {
      input: { items: ["late"] },
      afterSeconds: 60,
    });
    const cron = await client.crons.createForThread(t.thread_id, "echo", {
      schedule: YEARLY,
      input: { items: ["tick"] },
      multitaskStrategy: "interrupt",
    });
    const fired = await tick(cron, cron.next_run_date!);
    expect(fired.outcome).toBe("fired");
    await runStatusSoon(client, t.thread_id, fired.run_id!, "success");
    expect((await client.runs.get(t.thread_id, waiting.run_id)).status).toBe("interrupted");
    await client.crons.delete(cron.cron_id);
  });

  it("stateless ticks run on a new thread each: deleted after the run by default, or kept", async () => {
    const keep = await client.crons.create("echo", {
      schedule: YEARLY,
      input: { items: ["kept"] },
      onRunCompleted: "keep",
    });
    const r1 = await tick(keep, keep.next_run_date!);
    expect(r1.outcome).toBe("fired");
    await runStatusSoon(client, r1.thread_id!, r1.run_id!, "success");
    expect((await client.threads.getState(r1.thread_id!)).values).toEqual({ items: ["kept", "work"] });

    const del = await client.crons.create("echo", { schedule: YEARLY, input: { items: ["gone"] } });
    const r2 = await tick(del, del.next_run_date!);
    expect(r2.outcome).toBe("fired");
    expect(r2.thread_id).not.toBe(r1.thread_id);
    await waitFor(
      "the tick's thread to be deleted after its run",
      async () =>
        (await client.threads.get(r2.thread_id!).then(
          () => false,
          (e) => /404/.test(String(e)),
        )) || undefined,
      20_000,
    );
    // Firing the deleted thread's tick again creates nothing.
    expect((await tick(del, del.next_run_date!)).outcome).toBe("already-fired");
    await expect(client.threads.get(r2.thread_id!)).rejects.toThrow(/404/);
    await client.crons.delete(keep.cron_id);
    await client.crons.delete(del.cron_id);
  });

  it("deleting a thread deletes its crons", async () => {
    const t = await client.threads.create();
    const cron = await client.crons.createForThread(t.thread_id, "echo", { schedule: YEARLY });
    const other = await client.crons.create("echo", { schedule: YEARLY });
    await client.threads.delete(t.thread_id);
    expect(await client.crons.search({ threadId: t.thread_id })).toEqual([]);
    const left = (await client.crons.search({ limit: 1000 })).map((c) => c.cron_id);
    expect(left).not.toContain(cron.cron_id);
    expect(left).toContain(other.cron_id);
    await client.crons.delete(other.cron_id);
  });

  it("an end_time in the past leaves a cron with no next run", async () => {
    const cron = await client.crons.create("echo", {
      schedule: "* * * * *",
      endTime: new Date(Date.now() - 1000).toISOString(),
    });
    expect(cron.next_run_date).toBeNull();
    await client.crons.delete(cron.cron_id);
  });

  it("a tick of a cron whose deployment is gone removes the cron and creates nothing", async () => {
    const out = await lambda().send(
      new InvokeCommand({
        FunctionName: "AgentCronTick",
        Payload: JSON.stringify({
          tenant_id: facts.tenant_id,
          deployment_id: crypto.randomUUID(),
          cron_id: crypto.randomUUID(),
          scheduled_at: nextNewYear(),
        }),
      }),
    );
    expect(JSON.parse(Buffer.from(out.Payload!).toString())).toEqual({ outcome: "skipped" });
  });

  it("the routes are in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${facts.base_url}/openapi.json`)).json()) as { paths: object };
    const paths = Object.keys(doc.paths);
    for (const p of [
      "/agents/{deployment_id}/threads/{thread_id}/runs/crons",
      "/agents/{deployment_id}/runs/crons",
      "/agents/{deployment_id}/runs/crons/search",
      "/agents/{deployment_id}/runs/crons/count",
      "/agents/{deployment_id}/runs/crons/{cron_id}",
    ])
      expect(paths).toContain(p);
  });

  it("the same tick fired five times at once creates one run, counts its thread once, moves the cron on once", async () => {
    const t = await client.threads.create();
    const cron = await client.crons.createForThread(t.thread_id, "echo", {
      schedule: YEARLY,
      input: { items: ["once"] },
    });
    const at = cron.next_run_date!;
    const server = platformAt(Date.parse(at));
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => server.crons.tick(facts.tenant_id, deploymentId, cron.cron_id, at)),
    );
    expect(outcomes.map((o) => o.outcome).sort()).toEqual([
      "already-fired",
      "already-fired",
      "already-fired",
      "already-fired",
      "fired",
    ]);
    const runId = tickId(cron.cron_id, at, "run");
    expect(outcomes.find((o) => o.outcome === "fired")?.run_id).toBe(runId);
    await runStatusSoon(client, t.thread_id, runId, "success");
    expect((await client.runs.list(t.thread_id)).map((r) => r.run_id)).toEqual([runId]);
    expect((await client.threads.getState(t.thread_id)).values).toEqual({ items: ["once", "work"] });
    // Moved on once: to the next tick after this one, not past it.
    const [after] = await client.crons.search({ threadId: t.thread_id });
    expect(after.next_run_date).toBe(`${Number(at.slice(0, 4)) + 1}-01-01T00:00:00.000Z`);
    // The thread counted one pending run, which its run took off: nothing is left counted.
    const record = await threads.get(
      { scope: `${facts.tenant_id}#${deploymentId}`, thread: t.thread_id },
      true,
    );
    expect(record?.queued ?? 0).toBe(0);
    await client.crons.delete(cron.cron_id);
  });

  it("the minute timer's sweep fires a due cron within seconds of its minute (a set clock, no wait)", async () => {
    const cron = await client.crons.create("echo", {
      schedule: YEARLY,
      input: { items: ["minute"] },
      onRunCompleted: "keep",
      metadata: { test: "every-minute" },
    });
    const scheduled = cron.next_run_date!;
    // The clock at the moment the local minute timer sweeps after the cron's minute has begun.
    const server = platformAt(nextSweepAt(Date.parse(scheduled) - 1));
    const swept = await server.crons.sweep({ tenant: facts.tenant_id, deployment: deploymentId });
    expect(swept.fired).toBeGreaterThanOrEqual(1);
    // The tick's thread and run ids derive from the cron and the tick's time.
    const threadId = tickId(cron.cron_id, scheduled, "thread");
    const runs = await client.runs.list(threadId);
    expect(runs.map((r) => r.run_id)).toEqual([tickId(cron.cron_id, scheduled, "run")]);
    const delay = Date.parse(runs[0].created_at) - Date.parse(scheduled);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(5_000);
    await runStatusSoon(client, threadId, runs[0].run_id, "success");
    await client.crons.delete(cron.cron_id);
  });
});
