import type { Client } from "@langchain/langgraph-sdk";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { GRAPH_NAMESPACE } from "../shared/agent/assistants/assistants.ts";
import { uuidv5 } from "../shared/ids.ts";
import { auth, facts } from "./helpers/cloud.ts";

// Issue 15 item 8: an Annotation graph's schemas are typed from its TypeScript types (read at build time), as
// the reference server serves them; through the real @langchain/langgraph-sdk Client.
const AGENT = [
  `import { Annotation, MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";`,
  `const Inner = Annotation.Root({ depth: Annotation<number> });`,
  `const deeper = new StateGraph(Inner).addNode("leaf", () => ({ depth: 2 })).addEdge(START, "leaf").compile();`,
  `const inner = new StateGraph(Inner).addNode("deeper", deeper).addEdge(START, "deeper").compile();`,
  `const State = Annotation.Root({`,
  `  ...MessagesAnnotation.spec,`,
  `  count: Annotation<number>,`,
  `  mode: Annotation<"fast" | "slow">,`,
  `  depth: Annotation<number>,`,
  `});`,
  `const ConfigAnnotation = Annotation.Root({ model: Annotation<string> });`,
  `export const graph = new StateGraph(State, ConfigAnnotation)`,
  `  .addNode("step", (s: typeof State.State) => ({ count: (s.count ?? 0) + 1 }))`,
  `  .addNode("inner", inner)`,
  `  .addEdge(START, "step").addEdge("step", "inner").addEdge("inner", END)`,
  `  .compile();`,
  `export const make = async () => graph;`,
  "",
].join("\n");

// The reference's API suite's nested graph, in its shape: reducer channels of string arrays, a subgraph two deep.
const NESTED = [
  `import { Annotation, StateGraph, START, END } from "@langchain/langgraph";`,
  `const concat = (a: string[], b: string[]) => a.concat(b);`,
  `const log = () => Annotation<string[]>({ reducer: concat, default: () => [] });`,
  `const child = new StateGraph(Annotation.Root({ log: log(), child: Annotation<"child_one" | "child_two"> }))`,
  `  .addNode("c_one", () => ({ log: ["c_one"] })).addEdge(START, "c_one").addEdge("c_one", END);`,
  `const parent = new StateGraph(Annotation.Root({ log: log(), parent: Annotation<"parent_one" | "parent_two"> }))`,
  `  .addNode("p_one", () => ({ log: ["p_one"] })).addNode("p_two", child.compile())`,
  `  .addEdge(START, "p_one").addEdge("p_one", "p_two").addEdge("p_two", END);`,
  `export const graph = new StateGraph(Annotation.Root({ log: log() }))`,
  `  .addNode("gp_one", () => ({ log: ["gp_one"] })).addNode("gp_two", parent.compile())`,
  `  .addEdge(START, "gp_one").addEdge("gp_one", "gp_two").addEdge("gp_two", END)`,
  `  .compile();`,
  "",
].join("\n");

let repo: { dir: string; remove: () => void };
let client: Client;
let deploymentId: string;
const AGENT_ID = uuidv5("agent", GRAPH_NAMESPACE);

beforeAll(async () => {
  repo = gitRepo({
    "langgraph.json": JSON.stringify({
      graphs: { agent: "./src/agent.ts:graph", made: "./src/agent.ts:make", nested: "./src/nested.ts:graph" },
    }),
    "src/agent.ts": AGENT,
    "src/nested.ts": NESTED,
  });
  ({ client, deploymentId } = await deployedClient(facts, repo.dir, "schemas"));
}, 150_000);

afterAll(() => repo?.remove());

describe("typed schemas of an Annotation graph", () => {
  it("state_schema types each channel: messages, numbers, string unions", async () => {
    const s = await client.assistants.getSchemas(AGENT_ID);
    expect(s.state_schema).toMatchObject({
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" } },
        count: { type: "number" },
        mode: { type: "string", enum: ["fast", "slow"] },
      },
      // The reference's BaseMessage: the documented union of the message classes (its API suite's expectation).
      definitions: {
        BaseMessage: {
          description: expect.stringContaining("Base class for all types of messages"),
          oneOf: expect.arrayContaining(
            [
              "BaseMessageChunk",
              "ToolMessage",
              "AIMessage",
              "ChatMessage",
              "FunctionMessage",
              "HumanMessage",
              "SystemMessage",
              "RemoveMessage",
            ].map((name) => ({ $ref: `#/definitions/${name}` })),
          ),
        },
        HumanMessage: { type: "object", description: expect.stringContaining("human message") },
      },
      $schema: "http://json-schema.org/draft-07/schema#",
    });
    expect(s.input_schema).toMatchObject({ properties: { count: { type: "number" } } });
    expect(s.output_schema).toMatchObject({ properties: { count: { type: "number" } } });
  });

  it("config_schema is the config annotation's typed schema", async () => {
    const s = await client.assistants.getSchemas(AGENT_ID);
    expect(s.config_schema).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { model: { type: "string" } },
    });
    expect(s.context_schema).toEqual(s.config_schema);
  });

  it("a graph exported as a factory is typed through what it returns", async () => {
    const s = await client.assistants.getSchemas(uuidv5("made", GRAPH_NAMESPACE));
    expect(s.state_schema).toMatchObject({ properties: { count: { type: "number" } } });
  });

  it("subgraphs are typed by namespace, nested ones with recurse", async () => {
    // Keyed as the LangGraph.js server answers (state, input, output, config), whatever the SDK's type says.
    type Keyed = Record<string, { state: unknown }>;
    const subs = (await client.assistants.getSubgraphs(AGENT_ID)) as unknown as Keyed;
    expect(Object.keys(subs)).toEqual(["inner"]);
    expect(subs.inner?.state).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { depth: { type: "number" } },
    });
    const all = (await client.assistants.getSubgraphs(AGENT_ID, { recurse: true })) as unknown as Keyed;
    expect(Object.keys(all).sort()).toEqual(["inner", "inner|deeper"]);
    expect(all["inner|deeper"]?.state).toMatchObject({ properties: { depth: { type: "number" } } });
  });

  it("a subgraph's reducer channel is its update type alone, with no overwrite alternative (the reference's)", async () => {
    type Keyed = Record<string, { state: { properties: Record<string, unknown> } }>;
    const subs = (await client.assistants.getSubgraphs(uuidv5("nested", GRAPH_NAMESPACE), {
      recurse: true,
    })) as unknown as Keyed;
    expect(Object.keys(subs)).toEqual(["gp_two", "gp_two|p_two"]);
    const log = { type: "array", items: { type: "string" } };
    expect(subs.gp_two.state.properties).toEqual({
      log,
      parent: { type: "string", enum: ["parent_one", "parent_two"] },
    });
    expect(subs["gp_two|p_two"].state.properties).toEqual({
      log,
      child: { type: "string", enum: ["child_one", "child_two"] },
    });
    const s = await client.assistants.getSchemas(uuidv5("nested", GRAPH_NAMESPACE));
    expect(s.state_schema?.properties).toEqual({ log });
    expect(JSON.stringify([subs, s])).not.toContain("__overwrite__");
  });

  it("an MCP tool's input schema is the typed one; messages in any message-like form pass its check and run", async () => {
    const mcp = new McpClient({ name: "agent-schemas-test", version: "1.0.0" });
    const url = new URL(`${facts.base_url}/agents/${deploymentId}/mcp`);
    await mcp.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } }));
    try {
      const { tools } = await mcp.listTools();
      const tool = tools.find((t) => t.name === "agent");
      expect(tool?.inputSchema).toEqual((await client.assistants.getSchemas(AGENT_ID)).input_schema);
      const out = await mcp.callTool({
        name: "agent",
        arguments: { messages: [{ role: "user", content: "hi" }], count: 1 },
      });
      expect(out.isError).toBeFalsy();
      const values = JSON.parse((out.content as { text: string }[])[0].text);
      expect(values).toMatchObject({ count: 2, messages: [expect.objectContaining({ content: "hi" })] });
    } finally {
      await mcp.close();
    }
  });
});
