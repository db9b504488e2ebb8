import { describe, expect, it } from "vitest";
import type { AgentDeployment } from "../deployment/deployment.ts";
import { createAgentServer } from "../ops/server.ts";
import { checkArguments, handleMcpPost, MCP_PROTOCOL_VERSIONS, mcpMethodNotAllowed } from "./mcp.ts";

// The JSON-RPC side of the MCP endpoint, without a deployment: methods that need one are covered by
// test/agent-mcp.test.ts (the real MCP client against a deployed graph).
const noDeployment = () =>
  Promise.reject(new Error("no deployment in a unit test")) as Promise<AgentDeployment>;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const post = (body: unknown, headers: Record<string, string> = HEADERS) =>
  handleMcpPost(
    // A platform's server that starts no run: no method here creates one.
    createAgentServer({ host: { kick: () => Promise.reject(new Error("no run in a unit test")) } }),
    { tenant: "t", user: undefined },
    noDeployment,
    Buffer.from(typeof body === "string" ? body : JSON.stringify(body)),
    headers,
  );

describe("MCP JSON-RPC", () => {
  it("initialize echoes a supported protocol version and offers the newest otherwise", async () => {
    const init = (protocolVersion: string) =>
      post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion, capabilities: {} } });
    const ok = await init("2025-03-26");
    expect(ok.status).toBe(200);
    expect(ok.headers["content-type"]).toBe("application/json");
    expect(ok.body).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2025-03-26",
        capabilities: { tools: {} },
        serverInfo: { name: "LangGraph" },
      },
    });
    expect((await init("1999-01-01")).body).toMatchObject({
      result: { protocolVersion: MCP_PROTOCOL_VERSIONS[0] },
    });
    expect((await post({ jsonrpc: "2.0", id: 2, method: "initialize", params: {} })).body).toMatchObject({
      id: 2,
      error: { code: -32602 },
    });
  });

  it("answers malformed messages with JSON-RPC errors, notifications and responses with 202", async () => {
    expect(await post("{")).toMatchObject({ status: 400, body: { id: null, error: { code: -32700 } } });
    expect(await post([])).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
    expect(await post({ id: 9, method: "ping" })).toMatchObject({
      status: 400,
      body: { id: 9, error: { code: -32600 } },
    });
    expect(await post(42)).toMatchObject({ status: 400, body: { id: null, error: { code: -32600 } } });
    expect(await post({ jsonrpc: "2.0", id: "a", method: "nope" })).toMatchObject({
      status: 200,
      body: { id: "a", error: { code: -32601 } },
    });
    expect(await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 3 } })).toMatchObject({
      body: { error: { code: -32602 } },
    });
    expect(await post({ jsonrpc: "2.0", method: "notifications/initialized" })).toEqual({
      status: 202,
      headers: {},
    });
    expect((await post({ jsonrpc: "2.0", id: 1, result: {} })).status).toBe(202);
  });

  it("answers a batch with an array, one answer per request", async () => {
    const out = await post([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "nope" },
    ]);
    expect(out.status).toBe(200);
    expect(out.body).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found: nope" } },
    ]);
  });

  it("a deployment that cannot be read is an internal error of that request, not a 5xx", async () => {
    const out = await post({ jsonrpc: "2.0", id: 7, method: "tools/list" });
    expect(out).toMatchObject({ status: 200, body: { id: 7, error: { code: -32603 } } });
  });

  it("checks the transport's headers: protocol version, content type, accept", async () => {
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect((await post(ping, { ...HEADERS, "mcp-protocol-version": "2025-06-18" })).status).toBe(200);
    expect(await post(ping, { ...HEADERS, "mcp-protocol-version": "1.0" })).toMatchObject({
      status: 400,
      body: { error: { code: -32000 } },
    });
    expect((await post(ping, { ...HEADERS, "content-type": "text/plain" })).status).toBe(415);
    expect((await post(ping, { ...HEADERS, accept: "text/html" })).status).toBe(406);
    // Only SSE accepted: the answer is one message event of a stream.
    const sse = await post(ping, { ...HEADERS, accept: "text/event-stream" });
    expect(sse.status).toBe(200);
    expect(sse.headers["content-type"]).toBe("text/event-stream");
    expect(sse.body).toMatch(/^event: message\ndata: \{"jsonrpc":"2.0","id":\d+,"result":\{\}\}\n\n$/);
    expect((await post(ping, {})).status).toBe(200);
    expect(mcpMethodNotAllowed()).toMatchObject({ status: 405, headers: { allow: "POST" } });
  });
});

describe("tools/call arguments", () => {
  // An input schema read from a graph's types: messages refer to the union of the message classes, each an
  // object of its fields with nothing required, as the reference writes them.
  const cls = (type: string) => ({
    type: "object",
    properties: { type: { type: "string", const: type }, content: { type: "string" } },
  });
  const tool = {
    name: "agent",
    inputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" } },
        n: { type: "number" },
      },
      definitions: {
        BaseMessage: { oneOf: [{ $ref: "#/definitions/HumanMessage" }, { $ref: "#/definitions/AIMessage" }] },
        HumanMessage: cls("human"),
        AIMessage: cls("ai"),
      },
    },
  };

  it("messages are taken in any message-like form the graph's reducer takes (the class union is no wire format)", () => {
    for (const messages of [[{ role: "user", content: "hi" }], [{ type: "human", content: "hi" }], ["hi"]])
      expect(() => checkArguments(tool, { messages })).not.toThrow();
  });

  it("the rest of the input schema is still checked", () => {
    expect(() => checkArguments(tool, { messages: [], n: "one" })).toThrow(
      /Invalid arguments for tool agent: .*\/n: /,
    );
    expect(() => checkArguments(tool, { messages: "not an array" })).toThrow(
      /Invalid arguments for tool agent: .*\/messages: /,
    );
  });
});
