import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { GRAPH_NAMESPACE } from "../shared/agent/assistants/assistants.ts";
import { uuidv5 } from "../shared/ids.ts";
import { facts } from "./helpers/cloud.ts";

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

let repo: { dir: string; remove: () => void };
let client: Client;
const AGENT_ID = uuidv5("agent", GRAPH_NAMESPACE);

beforeAll(async () => {
  repo = gitRepo({
    "langgraph.json": JSON.stringify({
      graphs: { agent: "./src/agent.ts:graph", made: "./src/agent.ts:make" },
    }),
    "src/agent.ts": AGENT,
  });
  ({ client } = await deployedClient(facts, repo.dir, "schemas"));
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
      definitions: { BaseMessage: { type: "object" } },
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
});
