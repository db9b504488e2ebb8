import type { Client as SdkClient } from "@langchain/langgraph-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { auth, facts } from "./helpers/cloud.ts";

// Issue 15, item 3 (MCP): the real @modelcontextprotocol/sdk Client over Streamable HTTP against a deployed
// graph repository's POST /agents/{deployment_id}/mcp — one tool per assistant, tools/call runs it statelessly.
const FILES = {
  "langgraph.json": JSON.stringify({
    graphs: { typed: "./src/graph.mjs:typed", plain: "./src/graph.mjs:plain", boom: "./src/graph.mjs:boom" },
    env: {},
  }),
  "src/graph.mjs": [
    `import { z } from "zod";`,
    `import { Annotation, END, START, StateGraph } from "@langchain/langgraph";`,
    `const Typed = z.object({ text: z.string(), count: z.number().optional() });`,
    `export const typed = new StateGraph(Typed)`,
    `  .addNode("step", (s) => ({ text: s.text.repeat(s.count ?? 1) + "!" }))`,
    `  .addEdge(START, "step").addEdge("step", END).compile();`,
    `const Plain = Annotation.Root({ items: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }) });`,
    `export const plain = new StateGraph(Plain).addNode("add", () => ({ items: ["added"] }))`,
    `  .addEdge(START, "add").addEdge("add", END).compile();`,
    `export const boom = new StateGraph(Plain).addNode("fail", () => { throw new Error("kaboom"); })`,
    `  .addEdge(START, "fail").addEdge("fail", END).compile();`,
    "",
  ].join("\n"),
};

let repo: { dir: string; remove: () => void };
let deploymentId: string;
let sdk: SdkClient;
let mcp: Client;
const url = () => new URL(`${facts.base_url}/agents/${deploymentId}/mcp`);

async function connect(headers: Record<string, string> = auth): Promise<Client> {
  const client = new Client({ name: "agent-mcp-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url(), { requestInit: { headers } }));
  return client;
}

beforeAll(async () => {
  repo = gitRepo(FILES);
  ({ deploymentId, client: sdk } = await deployedClient(facts, repo.dir, "mcp"));
  await sdk.assistants.create({
    graphId: "typed",
    name: "shouter",
    description: "Repeats the text and shouts it",
  });
  mcp = await connect();
}, 150_000);

afterAll(async () => {
  await mcp?.close();
  repo?.remove();
});

describe("MCP endpoint", () => {
  it("initializes over Streamable HTTP with the tools capability", () => {
    expect(mcp.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(mcp.getServerVersion()).toMatchObject({ name: expect.any(String) });
  });

  it("lists one tool per assistant, with its description and the graph's input schema", async () => {
    const { tools } = await mcp.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["boom", "plain", "shouter", "typed"]);
    expect(byName.shouter.description).toBe("Repeats the text and shouts it");
    expect(byName.shouter.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" }, count: { type: "number" } },
    });
    expect(byName.typed.inputSchema).toEqual(byName.shouter.inputSchema);
    expect(byName.plain.inputSchema).toMatchObject({ type: "object", properties: { items: {} } });
    // The same schema as GET /assistants/{id}/schemas answers.
    const [typed] = await sdk.assistants.search({ graphId: "typed", metadata: { created_by: "system" } });
    const schemas = await sdk.assistants.getSchemas(typed.assistant_id);
    expect(byName.typed.inputSchema).toEqual(schemas.input_schema);
  });

  it("calls a tool: a stateless run of the assistant, answering its final values as JSON text", async () => {
    const out = await mcp.callTool({ name: "shouter", arguments: { text: "hey", count: 2 } });
    expect(out.isError).toBeFalsy();
    const content = out.content as { type: string; text: string }[];
    expect(content[0].type).toBe("text");
    expect(JSON.parse(content[0].text)).toEqual({ text: "heyhey!", count: 2 });
    const plain = await mcp.callTool({ name: "plain", arguments: { items: ["given"] } });
    expect(JSON.parse((plain.content as { text: string }[])[0].text)).toEqual({ items: ["given", "added"] });
  });

  it("a graph that fails is a tool error result; an unknown tool is an MCP error", async () => {
    const failed = await mcp.callTool({ name: "boom", arguments: {} });
    expect(failed.isError).toBe(true);
    expect((failed.content as { text: string }[])[0].text).toMatch(/kaboom/);
    const unknown = await mcp.callTool({ name: "nope", arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect(unknown).toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool: nope/) });
    await expect(mcp.ping()).resolves.toEqual({});
  });

  it("arguments that do not fit the tool's input schema are an invalid-params error; nothing runs", async () => {
    const bad = await mcp.callTool({ name: "typed", arguments: { text: 5 } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(McpError);
    expect(bad).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Invalid arguments for tool typed: .*\/text: .*"string"/),
    });
    const ok = await mcp.callTool({ name: "typed", arguments: { text: "fine" } });
    expect(ok.isError).toBeFalsy();
  });

  it("a client that accepts only an SSE stream gets its answer as a message event", async () => {
    const res = await fetch(url(), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text).toMatch(/^event: message\ndata: /);
    expect(JSON.parse(text.split("data: ")[1]!.trim())).toMatchObject({
      id: 9,
      result: { tools: expect.any(Array) },
    });
  });

  it("keeps tool names unique: a later assistant with a taken name is named <name>-<assistant_id>", async () => {
    const twin = await sdk.assistants.create({ graphId: "plain", name: "plain" });
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => n.startsWith("plain"))).toEqual(["plain", `plain-${twin.assistant_id}`]);
    const out = await mcp.callTool({ name: `plain-${twin.assistant_id}`, arguments: {} });
    expect(JSON.parse((out.content as { text: string }[])[0].text)).toEqual({ items: ["added"] });
    await sdk.assistants.delete(twin.assistant_id);
  });

  it("needs the API key: without one the client is refused with 401", async () => {
    const err = await connect({ "X-Tenant-Id": facts.tenant_id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect(err).toMatchObject({ code: 401, message: expect.stringMatching(/Missing or invalid API key/) });
    const res = await fetch(url(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(res.status).toBe(401);
  });

  it("malformed JSON-RPC gets a JSON-RPC error, not a 5xx; GET and DELETE answer 405", async () => {
    const post = (body: string) =>
      fetch(url(), {
        method: "POST",
        headers: {
          ...auth,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body,
      });
    const bad = await post("{not json");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    const invalid = await post(JSON.stringify({ jsonrpc: "1.0", id: 3, method: 7 }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ id: 3, error: { code: -32600 } });
    const unknown = await post(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "resources/list" }));
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ id: 4, error: { code: -32601 } });
    const badParams = await post(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: {} }));
    expect(await badParams.json()).toMatchObject({ id: 5, error: { code: -32602 } });
    const note = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(note.status).toBe(202);
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(url(), { method, headers: { ...auth, accept: "text/event-stream" } });
      expect(res.status).toBe(405);
    }
  });
});
