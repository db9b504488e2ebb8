import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClient, fireCronTick } from "../harness/agents.ts";
import { deployRepo, gitRepo } from "../harness/repos.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 15, item 4: custom auth. A deployment whose langgraph.json names an `Auth` (auth.path) is called by an
// app's end users with their own tokens: its `authenticate` runs on every request without a platform API key,
// its `on` handlers scope what each user sees, and graphs get the user in their config. Operators keep their
// platform API key; the handlers see them as the reference's Studio user. The Auth below is written the way
// the reference's custom-auth tutorial writes one.
const AUTH = `
import { Auth, HTTPException, isStudioUser } from "@langchain/langgraph-sdk/auth";

const USERS = { "token-alice": "alice", "token-bob": "bob" };

export const auth = new Auth()
  .authenticate(async (request) => {
    const header = request.headers.get("authorization") ?? "";
    const identity = USERS[header.replace(/^Bearer\\s+/i, "")];
    if (!identity) throw new HTTPException(401, { message: "Invalid token" });
    return { identity, permissions: ["threads:write"], plan: identity === "alice" ? "pro" : "free" };
  })
  .on("threads", ({ user, value }) => {
    if (isStudioUser(user)) return;
    if ("metadata" in value || value.thread_id === undefined) {
      value.metadata ??= {};
      value.metadata.owner = user.identity;
    }
    return { owner: user.identity };
  })
  .on("crons", ({ user, value }) => {
    if (isStudioUser(user)) return;
    return { owner: user.identity };
  })
  .on("assistants:delete", () => false)
  .on("store", ({ user, value }) => {
    if (isStudioUser(user)) return;
    value.namespace = [user.identity, ...(value.namespace ?? [])];
  });
`;

const GRAPH = `
import { Annotation, StateGraph, START, END } from "@langchain/langgraph";
const State = Annotation.Root({ text: Annotation(), user: Annotation(), plan: Annotation() });
export const graph = new StateGraph(State)
  .addNode("who", (s, config) => ({
    text: (s.text ?? "") + ">who",
    user: config.configurable?.langgraph_auth_user_id ?? null,
    plan: config.configurable?.langgraph_auth_user?.plan ?? null,
  }))
  .addEdge(START, "who")
  .addEdge("who", END)
  .compile();
`;

const repo = gitRepo({
  "langgraph.json": JSON.stringify({
    graphs: { agent: "./src/graph.mjs:graph" },
    auth: { path: "./src/auth.mjs:auth" },
  }),
  "src/graph.mjs": GRAPH,
  "src/auth.mjs": AUTH,
});

let deploymentId: string;
let alice: Client;
let bob: Client;
let operator: Client;
const userClient = (token: string) =>
  new Client({
    apiUrl: `${base}/agents/${deploymentId}`,
    apiKey: null,
    defaultHeaders: { Authorization: `Bearer ${token}` },
  });

beforeAll(async () => {
  ({ deploymentId } = await deployRepo(repo.dir, "custom-auth", call, auth));
  alice = userClient("token-alice");
  bob = userClient("token-bob");
  operator = agentClient(facts, deploymentId);
}, 240_000);

afterAll(() => repo.remove());

describe("authenticate", () => {
  it("runs on a request without a platform key: its HTTPException is the answer", async () => {
    const none = await call("POST", `/agents/${deploymentId}/threads/search`, { body: {} });
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ detail: "Invalid token" });
    const wrong = await call("POST", `/agents/${deploymentId}/threads/search`, {
      headers: { Authorization: "Bearer nope" },
      body: {},
    });
    expect(wrong.status).toBe(401);
    // An end user's token lets them in.
    const search = await call("POST", `/agents/${deploymentId}/threads/search`, {
      headers: { Authorization: "Bearer token-alice" },
      body: {},
    });
    expect(search.status).toBe(200);
  });

  it("a platform key of another workspace is not a way in", async () => {
    const r = await call("POST", `/agents/${deploymentId}/threads/search`, {
      headers: { "X-Api-Key": "lsv2_not_a_key_of_anyone" },
      body: {},
    });
    // Not a platform key: the deployment's authenticate decides, and it knows no such token.
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ detail: "Invalid token" });
  });
});

describe("threads are scoped to their owner", () => {
  it("each user sees only their own threads; another's is not found", async () => {
    const mine = await alice.threads.create({ metadata: { topic: "a" } });
    expect(mine.metadata).toMatchObject({ owner: "alice", topic: "a" });
    const theirs = await bob.threads.create();
    expect(theirs.metadata).toMatchObject({ owner: "bob" });

    const aliceSees = (await alice.threads.search({ limit: 100 })).map((t) => t.thread_id);
    expect(aliceSees).toContain(mine.thread_id);
    expect(aliceSees).not.toContain(theirs.thread_id);
    expect(await alice.threads.count({})).toBe(aliceSees.length);

    await expect(bob.threads.get(mine.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.threads.getState(mine.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.threads.update(mine.thread_id, { metadata: { owner: "bob" } })).rejects.toMatchObject({
      status: 404,
    });
    await expect(bob.threads.delete(mine.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.runs.create(mine.thread_id, "agent", { input: { text: "x" } })).rejects.toMatchObject({
      status: 404,
    });
    // Still there, untouched.
    expect((await alice.threads.get(mine.thread_id)).metadata).toMatchObject({ owner: "alice" });
  });

  it("an id another user took is a conflict, not their thread", async () => {
    const taken = await bob.threads.create();
    await expect(
      alice.threads.create({ threadId: taken.thread_id, ifExists: "do_nothing" }),
    ).rejects.toMatchObject({ status: 409 });
  });

  it("the operator (platform API key) sees every user's threads, as the Studio user", async () => {
    const a = await alice.threads.create();
    const b = await bob.threads.create();
    const all = (await operator.threads.search({ limit: 1000 })).map((t) => t.thread_id);
    expect(all).toEqual(expect.arrayContaining([a.thread_id, b.thread_id]));
  });
});

describe("runs", () => {
  it("the graph gets the user in its config (langgraph_auth_user, _id), as on the reference server", async () => {
    const t = await alice.threads.create();
    const values = (await alice.runs.wait(t.thread_id, "agent", { input: { text: "" } })) as Record<
      string,
      unknown
    >;
    expect(values).toMatchObject({ text: ">who", user: "alice", plan: "pro" });
    const runs = await alice.runs.list(t.thread_id);
    expect(runs).toHaveLength(1);
    await expect(bob.runs.list(t.thread_id)).rejects.toMatchObject({ status: 404 });
    await expect(bob.runs.get(t.thread_id, runs[0]!.run_id)).rejects.toMatchObject({ status: 404 });
  });

  it("a stateless run and a run that creates its thread are the user's", async () => {
    const values = (await bob.runs.wait(null, "agent", { input: { text: "" } })) as Record<string, unknown>;
    expect(values.user).toBe("bob");
    const id = crypto.randomUUID();
    await bob.runs.wait(id, "agent", { input: { text: "" }, ifNotExists: "create" });
    expect((await bob.threads.get(id)).metadata).toMatchObject({ owner: "bob" });
    await expect(alice.threads.get(id)).rejects.toMatchObject({ status: 404 });
  });

  it("streams run as the user too", async () => {
    const t = await alice.threads.create();
    const parts = [];
    for await (const p of alice.runs.stream(t.thread_id, "agent", {
      input: { text: "" },
      streamMode: "values",
    }))
      parts.push(p);
    expect(parts.at(-1)?.data).toMatchObject({ user: "alice" });
  });
});

describe("handlers that refuse, and other resources", () => {
  it("a handler returning false is a 403", async () => {
    const [first] = await alice.assistants.search({ graphId: "agent" });
    await expect(alice.assistants.delete(first!.assistant_id)).rejects.toMatchObject({ status: 403 });
    expect((await operator.assistants.get(first!.assistant_id)).assistant_id).toBe(first!.assistant_id);
  });

  it("store: the handler's namespace rewrite gives each user their own part of the store", async () => {
    await alice.store.putItem(["notes"], "k", { v: "alice's" });
    await bob.store.putItem(["notes"], "k", { v: "bob's" });
    expect((await alice.store.getItem(["notes"], "k"))?.value).toEqual({ v: "alice's" });
    expect((await bob.store.getItem(["notes"], "k"))?.value).toEqual({ v: "bob's" });
    // The operator sees where they went.
    expect((await operator.store.getItem(["alice", "notes"], "k"))?.value).toEqual({ v: "alice's" });
    const found = await bob.store.searchItems(["notes"]);
    expect(found.items.map((i) => i.namespace)).toEqual([["bob", "notes"]]);
  });

  it("crons: a user's cron carries their filters and only they find it", async () => {
    const cron = await alice.crons.create("agent", { schedule: "0 0 1 1 *", input: { text: "" } });
    const aliceSees = (await alice.crons.search({})).map((c) => c.cron_id);
    expect(aliceSees).toContain(cron.cron_id);
    expect((await bob.crons.search({})).map((c) => c.cron_id)).not.toContain(cron.cron_id);
    await expect(bob.crons.delete(cron.cron_id)).rejects.toMatchObject({ status: 404 });
    await alice.crons.delete(cron.cron_id);
  });

  it("crons: a tick runs as the user who made the cron (langgraph_auth_user in the run's config)", async () => {
    const thread = await alice.threads.create();
    const cron = await alice.crons.createForThread(thread.thread_id, "agent", {
      schedule: "0 0 1 1 *",
      input: { text: "tick" },
    });
    expect(cron.user_id).toBe("alice");
    expect(JSON.stringify(cron)).not.toContain("langgraph_auth_user");
    // Its tick, as its schedule fires it.
    const fired = await fireCronTick(facts, deploymentId, cron.cron_id, cron.next_run_date);
    expect(fired.outcome).toBe("fired");
    await alice.runs.join(thread.thread_id, fired.run_id!);
    expect((await alice.threads.getState(thread.thread_id)).values).toMatchObject({
      text: "tick>who",
      user: "alice",
    });
    await alice.crons.delete(cron.cron_id);
  });
});
