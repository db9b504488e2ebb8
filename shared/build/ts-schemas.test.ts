import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { graphEntryName } from "./graph-config.ts";
import { SCHEMAS_FILE, type SchemasFile } from "./schemas-file.ts";
import { extractGraphSchemas, writeGraphSchemas } from "./ts-schemas.ts";

// Graph sources written the way users write them, read with the TypeScript compiler; imports resolve from the
// platform's own packages, as the bundler resolves a repository without package.json.
const MODULES = path.resolve("node_modules");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 60_000);

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "ts-schemas-"));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

async function extract(
  files: Record<string, string>,
  graphs: Record<string, string>,
  opts: { budgetMs?: number; ownModules?: boolean } = {},
): Promise<{ schemas: SchemasFile; logs: string[] }> {
  const dir = repo(files);
  // Installed packages are real folders of the repository (npm ci, or hard links from the build cache).
  if (opts.ownModules)
    for (const pkg of ["@langchain", "zod"])
      cpSync(path.join(MODULES, pkg), path.join(dir, "node_modules", pkg), { recursive: true });
  const logs: string[] = [];
  const schemas = await extractGraphSchemas({
    repoDir: dir,
    configDir: dir,
    graphs: Object.fromEntries(
      Object.entries(graphs).map(([id, spec]) => {
        const [file, exportName] = spec.split(":");
        return [id, { file: path.join(dir, file), exportName }];
      }),
    ),
    log: (l) => logs.push(l),
    ...(opts.ownModules ? {} : { modules: MODULES }),
    ...(opts.budgetMs ? { budgetMs: opts.budgetMs } : {}),
  });
  return { schemas, logs };
}

const AGENT = `import { Annotation, MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";

export const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** How many turns so far. */
  count: Annotation<number>,
  mode: Annotation<"fast" | "slow">,
  note: Annotation<string | undefined>,
  plan: Annotation<{ steps: string[]; done?: boolean; owner: { name: string } | null }>,
});
export const ConfigAnnotation = Annotation.Root({ model: Annotation<string>, temperature: Annotation<number> });

const callModel = async (state: typeof State.State) => ({ count: state.count + 1 });

export const graph = new StateGraph(State, ConfigAnnotation)
  .addNode("agent", callModel)
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
`;

describe("Annotation graphs", () => {
  it("state is the update type: messages are BaseMessage arrays, fields typed, nothing required", async () => {
    const { schemas } = await extract({ "src/agent.ts": AGENT }, { agent: "src/agent.ts:graph" });
    const state = schemas.agent.state!;
    expect(state).toMatchObject({
      type: "object",
      properties: {
        messages: { type: "array", items: { $ref: "#/definitions/BaseMessage" } },
        count: { type: "number", description: "How many turns so far." },
        mode: { type: "string", enum: ["fast", "slow"] },
        note: { type: "string" },
        plan: {
          type: "object",
          properties: {
            steps: { type: "array", items: { type: "string" } },
            done: { type: "boolean" },
            owner: {
              anyOf: expect.arrayContaining([
                { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
                { type: "null" },
              ]),
            },
          },
          required: ["steps", "owner"],
        },
      },
      definitions: {
        BaseMessage: { oneOf: expect.arrayContaining([{ $ref: "#/definitions/HumanMessage" }]) },
      },
    });
    expect(state.required).toBeUndefined();
    expect(schemas.agent.input).toMatchObject({ properties: { count: { type: "number" } } });
  });

  it("BaseMessage is the union (oneOf) of the message classes that extend it, documented, as the reference writes it", async () => {
    const { schemas } = await extract({ "src/agent.ts": AGENT }, { agent: "src/agent.ts:graph" });
    for (const kind of ["state", "input", "output"] as const) {
      const schema = schemas.agent[kind] as { definitions: Record<string, Record<string, unknown>> };
      // The reference's documented BaseMessage (its API suite and parser tests): bare class names, membership.
      expect(schema.definitions.BaseMessage).toEqual({
        description: expect.stringContaining("Base class for all types of messages"),
        oneOf: expect.arrayContaining(
          [
            "AIMessage",
            "BaseMessageChunk",
            "ChatMessage",
            "FunctionMessage",
            "HumanMessage",
            "RemoveMessage",
            "SystemMessage",
            "ToolMessage",
          ].map((name) => ({ $ref: `#/definitions/${name}` })),
        ),
      });
      expect((schema.definitions.BaseMessage.oneOf as unknown[]).length).toBe(8);
      // An abstract class extended by others is their union too; the others are objects of their data fields.
      expect(schema.definitions.BaseMessageChunk).toMatchObject({
        description: expect.stringContaining("chunk of a message"),
        oneOf: expect.arrayContaining([{ $ref: "#/definitions/AIMessageChunk" }]),
      });
      expect(schema.definitions.HumanMessage).toMatchObject({
        description: "Represents a human message in a conversation.",
        type: "object",
        properties: { type: { type: "string", const: "human" }, id: { type: "string" } },
      });
      expect(schema.definitions.HumanMessage.properties).not.toHaveProperty("toDict");
      expect(schema.definitions.HumanMessage.required).toBeUndefined();
      // Every reference resolves: the named types the classes are made of are definitions of their own.
      const refs = JSON.stringify(schema).match(/"#\/definitions\/[^"]+"/g) ?? [];
      for (const ref of new Set(refs)) expect(schema.definitions).toHaveProperty([JSON.parse(ref).slice(14)]);
      expect(schema.definitions).toHaveProperty(["ContentBlock.Text"]);
    }
  });

  it("output is the state type: fields that cannot be undefined are required", async () => {
    const { schemas } = await extract({ "src/agent.ts": AGENT }, { agent: "src/agent.ts:graph" });
    expect(schemas.agent.output?.required).toEqual(["messages", "count", "mode", "plan"]);
  });

  it("the config annotation of new StateGraph(State, Config) is the config schema", async () => {
    const { schemas } = await extract({ "src/agent.ts": AGENT }, { agent: "src/agent.ts:graph" });
    expect(schemas.agent.config).toEqual({
      type: "object",
      properties: { model: { type: "string" }, temperature: { type: "number" } },
    });
  });

  it("a graph without a config annotation has no config schema", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const State = Annotation.Root({ text: Annotation<string> });
export const graph = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a").compile();
`;
    const { schemas } = await extract({ "graph.ts": src }, { g: "graph.ts:graph" });
    expect(schemas.g.state).toMatchObject({ properties: { text: { type: "string" } } });
    expect(schemas.g.config).toBeUndefined();
  });

  it("an export that is a factory function is read through what it returns", async () => {
    const src = `${AGENT}\nexport const make = async (config: { configurable?: Record<string, unknown> }) => graph;\n`;
    const { schemas } = await extract({ "src/agent.ts": src }, { agent: "src/agent.ts:make" });
    expect(schemas.agent.state).toMatchObject({ properties: { count: { type: "number" } } });
    expect(schemas.agent.config).toMatchObject({ properties: { model: { type: "string" } } });
  });

  it("an export that is a builder is read as the graph it compiles to", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const State = Annotation.Root({ count: Annotation<number>, tags: Annotation<string[]> });
export const builder = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a");
`;
    const { schemas } = await extract({ "builder.ts": src }, { b: "builder.ts:builder" });
    expect(schemas.b.state).toMatchObject({
      properties: { count: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
    });
  });

  it("a JavaScript graph's untyped channels are unconstrained ({})", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const State = Annotation.Root({ text: Annotation() });
export const graph = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a").compile();
`;
    const { schemas } = await extract({ "src/graph.mjs": src }, { g: "src/graph.mjs:graph" });
    expect(schemas.g.state).toEqual({ type: "object", properties: { text: {} } });
  });

  it("a repository's tsconfig (strict, NodeNext, rootDir, outDir) is honoured, imports with .js included", async () => {
    const tsconfig = {
      compilerOptions: {
        strict: true,
        module: "NodeNext",
        moduleResolution: "NodeNext",
        rootDir: "src",
        outDir: "dist",
        composite: true,
      },
      include: ["src"],
    };
    const state = `import { Annotation } from "@langchain/langgraph";
export const State = Annotation.Root({ count: Annotation<number>, label: Annotation<string> });
`;
    const graph = `import { StateGraph, START } from "@langchain/langgraph";
import { State } from "./state.js";
export const graph = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a").compile();
`;
    const { schemas, logs } = await extract(
      {
        "tsconfig.json": JSON.stringify(tsconfig),
        "package.json": JSON.stringify({ type: "module" }),
        "src/state.ts": state,
        "src/graph.ts": graph,
      },
      { g: "src/graph.ts:graph" },
      { ownModules: true },
    );
    expect(logs.filter((l) => l.startsWith("graph g"))).toEqual([]);
    expect(schemas.g.state).toEqual({
      type: "object",
      properties: { count: { type: "number" }, label: { type: "string" } },
    });
  });

  it("a repository's own node_modules is where imports resolve when it has one", async () => {
    const { schemas } = await extract(
      { "src/agent.ts": AGENT },
      { agent: "src/agent.ts:graph" },
      { ownModules: true },
    );
    expect(schemas.agent.state).toMatchObject({ properties: { count: { type: "number" } } });
  });
});

describe("subgraphs", () => {
  it("a compiled graph added as a node is a subgraph with its own typed schemas, nested ones by path", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const Inner = Annotation.Root({ depth: Annotation<number> });
const Middle = Annotation.Root({ label: Annotation<"a" | "b">, depth: Annotation<number> });
const Outer = Annotation.Root({ label: Annotation<"a" | "b">, depth: Annotation<number>, text: Annotation<string> });
const inner = new StateGraph(Inner).addNode("leaf", () => ({})).addEdge(START, "leaf").compile();
const middle = new StateGraph(Middle).addNode("deeper", inner).addEdge(START, "deeper").compile();
const workflow = new StateGraph(Outer).addNode("step", () => ({})).addEdge(START, "step");
workflow.addNode("child", middle);
export const graph = workflow.compile();
`;
    const { schemas } = await extract({ "graph.ts": src }, { g: "graph.ts:graph" });
    expect(Object.keys(schemas.g.subgraphs ?? {}).sort()).toEqual(["child", "child|deeper"]);
    expect(schemas.g.subgraphs?.child.state).toMatchObject({
      properties: { label: { type: "string", enum: ["a", "b"] }, depth: { type: "number" } },
    });
    expect(schemas.g.subgraphs?.["child|deeper"].state).toEqual({
      type: "object",
      properties: { depth: { type: "number" } },
    });
  });

  it("a reducer channel's schema is its update type alone, without LangGraph's overwrite wrapper", async () => {
    const src = `import { Annotation, StateGraph, START, END } from "@langchain/langgraph";
const concat = (a: string[], b: string[]) => a.concat(b);
const Child = Annotation.Root({
  log: Annotation<string[]>({ reducer: concat, default: () => [] }),
  stage: Annotation<"first" | "second">,
});
const Parent = Annotation.Root({ log: Annotation<string[]>({ reducer: concat, default: () => [] }) });
const child = new StateGraph(Child).addNode("c", () => ({ log: ["c"] })).addEdge(START, "c").addEdge("c", END);
export const graph = new StateGraph(Parent)
  .addNode("p", () => ({ log: ["p"] }))
  .addNode("sub", child.compile())
  .addEdge(START, "p").addEdge("p", "sub").addEdge("sub", END)
  .compile();
`;
    const { schemas } = await extract({ "graph.ts": src }, { g: "graph.ts:graph" });
    const log = { type: "array", items: { type: "string" } };
    for (const s of [schemas.g, schemas.g.subgraphs?.sub]) {
      expect(s?.state?.properties).toEqual(expect.objectContaining({ log }));
      expect(s?.input?.properties).toEqual(expect.objectContaining({ log }));
    }
    expect(schemas.g.subgraphs?.sub.state?.properties).toMatchObject({
      stage: { type: "string", enum: ["first", "second"] },
    });
    expect(JSON.stringify(schemas)).not.toContain("__overwrite__");
  });

  it("a node function is not a subgraph", async () => {
    const { schemas } = await extract({ "src/agent.ts": AGENT }, { agent: "src/agent.ts:graph" });
    expect(schemas.agent.subgraphs).toBeUndefined();
  });
});

describe("never failing the build", () => {
  it("a graph file that does not type-check gets no schemas and one log line", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const State = Annotation.Root({ count: Annotation<number> });
const n: number = "not a number";
export const graph = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a").compile();
`;
    const { schemas, logs } = await extract(
      { "bad.ts": src, "src/agent.ts": AGENT },
      { bad: "bad.ts:graph", agent: "src/agent.ts:graph" },
    );
    expect(schemas.bad).toBeUndefined();
    expect(schemas.agent.state).toBeDefined();
    expect(logs.filter((l) => l.startsWith("graph bad:"))).toEqual([
      expect.stringMatching(/^graph bad: no schemas from its types \(bad\.ts:3: Type .* is not assignable/),
    ]);
  });

  it("a missing environment (no @types/node, as a production install leaves it out) is not a type error", async () => {
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
import { readFileSync } from "node:fs";
import { helper } from "some-dev-only-package";
const key = process.env.OPENAI_API_KEY ?? "";
const State = Annotation.Root({ count: Annotation<number> });
export const graph = new StateGraph(State)
  .addNode("a", () => ({ count: key.length + readFileSync("x").length + helper() }))
  .addEdge(START, "a")
  .compile();
`;
    const { schemas } = await extract({ "env.ts": src }, { g: "env.ts:graph" });
    expect(schemas.g.state).toEqual({ type: "object", properties: { count: { type: "number" } } });
  });

  it("an export that is not a graph gets no schemas and one log line", async () => {
    const { schemas, logs } = await extract(
      { "x.ts": "export const graph = { hello: 1 };\n" },
      { x: "x.ts:graph" },
    );
    expect(schemas).toEqual({});
    expect(logs).toContainEqual(expect.stringContaining("graph x: no schemas from its types"));
  });

  it("a file outside the repository is not read: what it declares stays out of the schemas", async () => {
    const outside = repo({ "secret.json": JSON.stringify({ topSecretKey: "x" }) });
    const src = `import { Annotation, StateGraph, START } from "@langchain/langgraph";
const State = Annotation.Root({ leak: Annotation<typeof import(${JSON.stringify(path.join(outside, "secret.json"))})> });
export const graph = new StateGraph(State).addNode("a", () => ({})).addEdge(START, "a").compile();
`;
    const { schemas } = await extract({ "graph.ts": src }, { g: "graph.ts:graph" });
    expect(JSON.stringify(schemas)).not.toContain("topSecretKey");
    expect(schemas.g.state).toEqual({ type: "object", properties: { leak: {} } });
  });

  it("reading types stops at the time budget, with a log line", async () => {
    const { schemas, logs } = await extract(
      { "src/agent.ts": AGENT },
      { agent: "src/agent.ts:graph" },
      { budgetMs: 5 },
    );
    expect(schemas).toEqual({});
    expect(logs).toContainEqual(expect.stringContaining("stopped after"));
  });

  it("writeGraphSchemas writes schemas.json by graph id beside the manifest (an id that is no file name too)", async () => {
    const dir = repo({ "src/agent.ts": AGENT });
    const out = path.join(dir, "out");
    mkdirSync(out);
    const odd = "my agent/v2";
    await writeGraphSchemas({
      repoDir: dir,
      configDir: dir,
      outDir: out,
      entryPoints: {
        "graphs/agent": path.join(dir, "src/agent.ts"),
        [graphEntryName(odd)]: path.join(dir, "src/agent.ts"),
      },
      manifest: {
        graphs: {
          agent: { file: "graphs/agent.mjs", export_name: "graph" },
          [odd]: { file: `${graphEntryName(odd)}.mjs`, export_name: "graph" },
        },
        env: {},
        built_at: "",
      },
      log: () => {},
      modules: MODULES,
    });
    const written = JSON.parse(readFileSync(path.join(out, SCHEMAS_FILE), "utf8")) as SchemasFile;
    expect(Object.keys(written).sort()).toEqual(["agent", odd]);
    expect(written.agent.state).toMatchObject({ properties: { count: { type: "number" } } });
    expect(written[odd].state).toEqual(written.agent.state);
  });
});
