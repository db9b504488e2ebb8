import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { facts } from "./helpers/cloud.ts";

// The A2A (0.3) endpoints of the agent server through the real @a2a-js/sdk client (its v0.3 compatibility
// layer: the card says protocolVersion 0.3.0), against a deployed messages graph.
const GRAPH = `
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { FakeListChatModel } from "@langchain/core/utils/testing";
export const chat = new StateGraph(MessagesAnnotation)
  .addNode("reply", async (s) => ({ messages: [await new FakeListChatModel({ responses: ["echo: " + s.messages.at(-1).content + " (" + s.messages.length + ")"] }).invoke(s.messages)] }))
  .addEdge(START, "reply").addEdge("reply", END).compile();
`;
const repo = gitRepo({
  "langgraph.json": JSON.stringify({ graphs: { chat: "./src/graph.mjs:chat" }, env: {} }),
  "src/graph.mjs": GRAPH,
});
afterAll(() => repo.remove());

let base: string;
// The platform's API key on every call the SDK makes.
const withKey: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set("x-api-key", facts.api_key);
  headers.set("x-tenant-id", facts.tenant_id);
  return fetch(input, { ...init, headers });
};
const text = (parts: { content?: { $case: string; value: unknown } }[] | undefined) =>
  (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const userMessage = (t: string, contextId = "") => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId: "",
  role: 1,
  parts: [
    { content: { $case: "text" as const, value: t }, metadata: undefined, filename: "", mediaType: "" },
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = (t: string, contextId?: string) => ({
  tenant: "",
  message: userMessage(t, contextId),
  configuration: undefined,
  metadata: undefined,
});
const rpc = async (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/a2a/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": facts.api_key, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

async function client() {
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: withKey, legacyCompat: { enabled: true } })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey, legacyCompat: { enabled: true } }),
  });
  return factory.createFromUrl(`${base}/.well-known/agent-card.json?assistant_id=chat`, "");
}

beforeAll(async () => {
  const { deploymentId } = await deployedClient(facts, repo.dir, "a2a");
  base = `${facts.base_url}/agents/${deploymentId}`;
});

describe("A2A", () => {
  it("serves the agent card of an assistant", async () => {
    const res = await withKey(`${base}/.well-known/agent-card.json?assistant_id=chat`);
    expect(res.status).toBe(200);
    const card = await res.json();
    expect(card).toMatchObject({
      protocolVersion: "0.3.0",
      url: `${base}/a2a/chat`,
      preferredTransport: "JSONRPC",
      capabilities: { streaming: true },
      skills: [expect.objectContaining({ id: "chat-main", tags: ["chat"] })],
    });
    expect((await withKey(`${base}/.well-known/agent-card.json?assistant_id=nope`)).status).toBe(404);
  });

  it("message/send answers a completed task; the same contextId continues the thread; tasks/get answers it", async () => {
    const c = await client();
    const first = (await c.sendMessage(send("hello"))) as any;
    expect(first.status.state).toBe(3); // TASK_STATE_COMPLETED
    expect(text(first.status.message.parts)).toBe("echo: hello (1)");
    expect(text(first.artifacts[0].parts)).toBe("echo: hello (1)");
    expect(first.contextId).toMatch(/^[0-9a-f-]{36}$/);

    const second = (await c.sendMessage(send("again", first.contextId))) as any;
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    // The thread holds the first exchange: the graph saw three messages.
    expect(text(second.artifacts[0].parts)).toBe("echo: again (3)");

    const got = await c.getTask({ tenant: "", id: first.id, historyLength: undefined });
    expect(got.id).toBe(first.id);
    expect(got.contextId).toBe(first.contextId);
    expect(got.status?.state).toBe(3);
    expect(text(got.artifacts[0].parts)).toBe("echo: hello (1)");
    expect(got.history.map((m) => text(m.parts))).toEqual(["hello", "echo: hello (1)"]);
  });

  it("message/stream yields the task, status updates and the reply, ending completed", async () => {
    const c = await client();
    const events: any[] = [];
    for await (const e of c.sendMessageStream(send("streamed"))) events.push(e);
    const kinds = events.map((e) => e.payload?.$case ?? e.kind ?? (e.status ? "status" : "other"));
    expect(kinds.length).toBeGreaterThanOrEqual(3);
    const states = events.flatMap((e) => {
      const v = e.payload?.value ?? e;
      return v?.status?.state !== undefined ? [v.status.state] : [];
    });
    expect(states[0]).toBe(1); // submitted (the task)
    expect(states).toContain(2); // working
    expect(states.at(-1)).toBe(3); // completed
    const last = events.at(-1).payload?.value ?? events.at(-1);
    expect(text(last.status.message.parts)).toBe("echo: streamed (1)");
  });

  it("an unknown task is TaskNotFound; a task that ended is not cancelable", async () => {
    const c = await client();
    await expect(
      c.getTask({ tenant: "", id: crypto.randomUUID(), historyLength: undefined }),
    ).rejects.toThrow(/not found/i);
    const raw = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "tasks/get",
      params: { id: crypto.randomUUID() },
    });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as any).error.code).toBe(-32001);
    const done = (await c.sendMessage(send("x"))) as any;
    const cancel = await rpc({ jsonrpc: "2.0", id: 2, method: "tasks/cancel", params: { id: done.id } });
    expect(((await cancel.json()) as any).error.code).toBe(-32002);
  });

  it("malformed JSON-RPC answers JSON-RPC errors, never a 5xx", async () => {
    const cases: [unknown, number][] = [
      ["{not json", -32700],
      [[1, 2], -32600],
      [{ jsonrpc: "1.0", id: 1, method: "message/send" }, -32600],
      [{ jsonrpc: "2.0", id: 1, method: "nope" }, -32601],
      [{ jsonrpc: "2.0", id: 1, method: "message/send", params: {} }, -32602],
      [{ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { parts: "x" } } }, -32602],
      [{ jsonrpc: "2.0", id: 1, method: "tasks/get", params: "x" }, -32602],
      [{ jsonrpc: "2.0", id: 1, method: "tasks/get", params: {} }, -32602],
    ];
    for (const [body, code] of cases) {
      const res = await rpc(body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      const answer = await res.json();
      expect(answer, JSON.stringify(body)).toMatchObject({ jsonrpc: "2.0", error: { code } });
    }
  });

  it("needs the API key", async () => {
    const res = await fetch(`${base}/a2a/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }),
    });
    expect(res.status).toBe(401);
    expect((await fetch(`${base}/.well-known/agent-card.json?assistant_id=chat`)).status).toBe(401);
  });
});
