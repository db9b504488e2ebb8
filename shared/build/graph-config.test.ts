import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import {
  graphEntryName,
  parseGraphConfig,
  parseGraphSpec,
  readGraphConfig,
  unhonouredKeys,
} from "./graph-config.ts";

const parse = (value: unknown, at = "langgraph.json") => parseGraphConfig(JSON.stringify(value), at);
const problem = (text: string, at = "langgraph.json") => {
  try {
    parseGraphConfig(text, at);
  } catch (err) {
    expect(err).toBeInstanceOf(BuildError);
    return (err as Error).message;
  }
  throw new Error("expected a BuildError");
};

describe("graph spec", () => {
  it("splits file and export at the colon", () => {
    expect(parseGraphSpec("./src/agent.ts:graph")).toEqual({ file: "./src/agent.ts", exportName: "graph" });
  });
  it("without a colon the default export is the graph (as the LangGraph.js API server does)", () => {
    expect(parseGraphSpec("./src/agent.ts")).toEqual({ file: "./src/agent.ts", exportName: "default" });
  });
  it("a spec without a file, or with an export that is no identifier, is a BuildError", () => {
    for (const spec of ["", ":graph", "./a.ts:", "./a.ts:not-an-identifier", "./a.ts:1x"])
      expect(() => parseGraphSpec(spec), spec).toThrow(BuildError);
  });
  it("Python graphs are refused with a clear message", () => {
    expect(() => parseGraphSpec("./agent.py:graph")).toThrow(/Python graphs are not supported/);
  });
});

describe("graph config", () => {
  it("takes the documented shape and keeps unknown keys", () => {
    const config = parse({
      graphs: { agent: "./src/agent.ts:graph" },
      dependencies: ["."],
      env: { MODEL: "scripted", MAX_TOKENS: 8080 },
      node_version: 22,
      description: { agent: "The agent", other: "not a graph" },
      dockerfile_lines: [],
      auth: { path: "./auth.ts:auth" },
      store: { index: { embed: "openai:text-embedding-3-small", dims: 1536 } },
      http: { cors: {} },
    });
    expect(config.graphs).toEqual({ agent: "./src/agent.ts:graph" });
    expect(config.env).toEqual({ MODEL: "scripted", MAX_TOKENS: "8080" });
    expect(config.node_version).toBe("22");
    expect(config.description).toEqual({ agent: "The agent" });
    expect(config.dependencies).toEqual(["."]);
    expect(config.auth).toEqual({ path: "./auth.ts:auth" });
  });

  it("checks the keys it honours (auth, http, ui, store, checkpointer) and names the bad one", () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ auth: "./auth.ts:auth" }, /auth: auth must be an object/],
      [{ auth: { path: "" } }, /auth\.path: auth\.path must not be empty/],
      [
        { auth: { path: "./a.ts:auth", disable_studio_auth: "yes" } },
        /auth\.disable_studio_auth: must be true/,
      ],
      [{ http: { app: 3 } }, /http\.app: http\.app must be a path/],
      [{ http: { disable_threads: 1 } }, /http\.disable_threads: must be true or false/],
      [{ ui: { chat: 1 } }, /ui\.chat: each ui component must be a path/],
      [{ store: { index: { embed: "x:y", dims: 0 } } }, /store\.index\.dims: must be above 0/],
      [{ store: { ttl: { default_ttl: -1 } } }, /store\.ttl\.default_ttl: must be above 0/],
      [
        { checkpointer: { ttl: { strategy: "keep" } } },
        /checkpointer\.ttl\.strategy: the only strategy is "delete"/,
      ],
      [{ node_version: "18" }, /node_version: must be one of "22", "24"/],
      [{ node_version: 20 }, /node_version: must be one of "22", "24"/],
    ];
    for (const [extra, message] of bad)
      expect(() => parse({ graphs: { a: "./a.ts:g" }, ...extra }), JSON.stringify(extra)).toThrow(message);
  });

  it("takes {path, description} graph entries", () => {
    const config = parse({ graphs: { a: { path: "./a.ts:graph", description: "A" } } });
    expect(config.graphs).toEqual({ a: "./a.ts:graph" });
    expect(config.description).toEqual({ a: "A" });
  });

  it("takes an env file path", () => {
    expect(parse({ graphs: { a: "./a.ts:g" }, env: ".env" }).env).toBe(".env");
  });

  it("bad JSON names the file and the problem", () => {
    expect(problem("{ graphs: ", "apps/x/langgraph.json")).toMatch(
      /^graph config apps\/x\/langgraph\.json is not valid JSON/,
    );
  });

  it("no graphs is a BuildError", () => {
    for (const text of ["{}", '{"graphs": {}}', '{"graphs": null}'])
      expect(problem(text), text).toMatch(/defines no graphs/);
    expect(problem('{"graphs": []}')).toMatch(/graphs/);
    expect(problem("[]")).toMatch(/must be a JSON object/);
  });

  it("a graph spec without a file is a BuildError", () => {
    expect(problem('{"graphs": {"a": ":graph"}}')).toMatch(/names no file/);
  });

  it("a graph path escaping the repository is a BuildError", () => {
    for (const file of ["../x.ts", "/etc/x.ts", "./a/../../x.ts", "C:\\x.ts", "..\\x.ts"])
      expect(problem(JSON.stringify({ graphs: { a: `${file}:g` } })), file).toMatch(/outside the repository/);
  });

  it("a config in a subfolder may reach into the repository's other folders, never above its root", () => {
    expect(parse({ graphs: { a: "../../lib/a.ts:g" } }, "apps/x/langgraph.json").graphs.a).toBe(
      "../../lib/a.ts:g",
    );
    expect(problem('{"graphs": {"a": "../../../a.ts:g"}}', "apps/x/langgraph.json")).toMatch(/outside/);
  });

  it("an env file outside the repository is a BuildError", () => {
    expect(problem('{"graphs": {"a": "./a.ts:g"}, "env": "../.env"}')).toMatch(/env file .* outside/);
  });

  it("env may not set the platform's own settings: the build fails naming the variable", () => {
    for (const name of [
      "PLATFORM_LOCAL",
      "AWS_SECRET_ACCESS_KEY",
      "NODE_OPTIONS",
      "TABLE_MAIN",
      "PATH",
      "agent_run_worker",
      "OPENSSL_CONF",
      "LD_PRELOAD",
      "GCONV_PATH",
      "BASH_ENV",
      "http_proxy",
      "PYTHONPATH",
    ])
      expect(problem(JSON.stringify({ graphs: { a: "./a.ts:g" }, env: { [name]: "x" } })), name).toMatch(
        new RegExp(`env: ${name} is reserved`),
      );
    expect(problem(JSON.stringify({ graphs: { a: "./a.ts:g" }, env: { OPENSSL_MODULES: "x" } }))).toMatch(
      /env: OPENSSL_MODULES is reserved: names starting with OPENSSL_ change what code or certificates a program loads/,
    );
    expect(problem(JSON.stringify({ graphs: { a: "./a.ts:g" }, env: { ["A".repeat(129)]: "x" } }))).toMatch(
      /longer than 128 characters/,
    );
    expect(
      parse({ graphs: { a: "./a.ts:g" }, env: { NODE_ENV: "production", OPENAI_API_KEY: "k" } }).env,
    ).toEqual({
      NODE_ENV: "production",
      OPENAI_API_KEY: "k",
    });
  });

  it("http.cors is checked and kept, other http keys tolerated", () => {
    const cors = {
      allow_origins: ["https://app.example", "http://localhost:3000"],
      allow_origin_regex: "https://.*\\.app\\.example",
      allow_methods: ["GET", "POST"],
      allow_headers: ["x-api-key", "content-type"],
      allow_credentials: true,
      expose_headers: ["x-request-id"],
      max_age: 600,
    };
    const config = parse({ graphs: { a: "./a.ts:g" }, http: { cors, disable_assistants: false } });
    expect(config.http).toEqual({ cors, disable_assistants: false });
    expect(parse({ graphs: { a: "./a.ts:g" }, http: { app: "./app.ts:app" } }).http).toEqual({
      app: "./app.ts:app",
    });
  });

  it("a bad http.cors fails the build naming the key and why", () => {
    const bad = (cors: unknown) => problem(JSON.stringify({ graphs: { a: "./a.ts:g" }, http: { cors } }));
    expect(bad({ allow_origins: "https://app.example" })).toMatch(
      /^graph config langgraph.json: http\.cors\.allow_origins: must be a list of origins/,
    );
    expect(bad({ allow_origins: ["https://a.example, https://b.example"] })).toMatch(
      /http\.cors\.allow_origins\.0: origins: one value per item/,
    );
    expect(bad({ allow_origin_regex: "(" })).toMatch(
      /http\.cors\.allow_origin_regex: is not a valid regular expression/,
    );
    // Patterns that can backtrack exponentially (shared/safe-regex.ts) are left out, with why; the rest serves.
    const leftOut = (re: string) =>
      parse({ graphs: { a: "./a.ts:g" }, http: { cors: { allow_origin_regex: re } } }).not_served?.[0];
    expect(leftOut("https://(a+)+$")).toMatch(
      /^http\.cors\.allow_origin_regex: the regex may not repeat a group that holds a quantifier/,
    );
    expect(leftOut("(x|xy)*\\.example")).toMatch(/may not repeat a group that holds an alternation/);
    expect(leftOut("(https)://\\1")).toMatch(/the regex may not use backreferences/);
    expect(bad({ allow_headers: ["x-a\r\nx-b: 1"] })).toMatch(/http\.cors\.allow_headers\.0: header names/);
    expect(bad({ allow_credentials: "yes" })).toMatch(/http\.cors\.allow_credentials: must be true or false/);
    expect(bad({ max_age: -1 })).toMatch(/http\.cors\.max_age/);
    expect(bad({ max_age: 1.5 })).toMatch(/http\.cors\.max_age: must be a whole number of seconds/);
    expect(bad({ allow_origin: ["https://app.example"] })).toMatch(/http\.cors: .*allow_origin/);
    expect(bad("*")).toMatch(/http\.cors: /);
  });

  it("graph ids are any string, as on the reference; only empty, overlong and control-character ids are refused", () => {
    for (const id of ["../x", "a/b", ".", "..", "a b", "agent-alias", "größe", "#1"])
      expect(parse({ graphs: { [id]: "./a.ts:g" } }).graphs, id).toEqual({ [id]: "./a.ts:g" });
    for (const id of ["", "a\nb", "x".repeat(257)])
      expect(problem(JSON.stringify({ graphs: { [id]: "./a.ts:g" } })), id).toMatch(/graph id/);
  });

  it("a graph's bundle entry is its id when that is a safe file name, else a name of its hash", () => {
    expect(graphEntryName("agent_1.v2")).toBe("graphs/agent_1.v2");
    for (const id of ["../x", "a/b", ".", "..", "a b"])
      expect(graphEntryName(id)).toMatch(/^graphs\/_[0-9a-f]{16}$/);
    expect(graphEntryName("a/b")).not.toBe(graphEntryName("a b"));
  });

  it("what the reference serves and this platform cannot fails only itself, with why: Python graphs, env lists, a backtracking CORS regex", () => {
    const config = parse({
      graphs: { js: "./a.ts:g", py: "./agent.py:graph", py2: { path: "./b.py:g", description: "d" } },
      env: ["OPENAI_API_KEY"],
      http: { cors: { allow_origin_regex: "https://(a+)+$", allow_origins: ["https://app.example"] } },
    });
    expect(config.graphs).toEqual({ js: "./a.ts:g" });
    expect(config.env).toBeUndefined();
    expect(config.http?.cors).toEqual({ allow_origins: ["https://app.example"] });
    expect(config.not_served).toEqual([
      "graph py: Python graphs are not supported",
      "graph py2: Python graphs are not supported",
      expect.stringMatching(/^env: a list of names/),
      expect.stringMatching(
        /^http\.cors\.allow_origin_regex: the regex may not repeat a group .*; no origin is allowed by it$/,
      ),
    ]);
    expect(unhonouredKeys(config)).toEqual([]);
    expect(problem('{"graphs": {"py": "./agent.py:graph"}}')).toMatch(
      /defines no graphs this platform serves \(graph py: Python graphs are not supported\)/,
    );
  });

  it("a graph file that is not JavaScript or TypeScript is refused", () => {
    expect(problem('{"graphs": {"a": "./a.json:g"}}')).toMatch(/not a JavaScript or TypeScript file/);
  });
});

describe("reading the graph config from a repository", () => {
  let tmp: string;
  let repo: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "graph-config-test-"));
    repo = path.join(tmp, "repo");
    await mkdir(path.join(repo, "apps", "x"), { recursive: true });
    await writeFile(path.join(repo, "langgraph.json"), '{"graphs": {"a": "./a.ts:graph"}}');
    await writeFile(path.join(repo, "apps", "x", "langgraph.json"), '{"graphs": {"b": "./b.ts"}}');
    await writeFile(path.join(tmp, "outside.json"), '{"graphs": {"a": "./a.ts:graph"}}');
    await symlink(path.join(tmp, "outside.json"), path.join(repo, "linked.json"));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it("returns the config and the directory its paths start from", async () => {
    const root = await readGraphConfig(repo, "langgraph.json");
    expect(root.configDir).toBe(repo);
    const sub = await readGraphConfig(repo, "./apps/x/langgraph.json");
    expect(sub.config.graphs).toEqual({ b: "./b.ts" });
    expect(sub.configDir).toBe(path.join(repo, "apps", "x"));
  });

  it("a missing config is 'graph config not found at <path>'", async () => {
    await expect(readGraphConfig(repo, "nope/langgraph.json")).rejects.toThrow(
      new BuildError("graph config not found at nope/langgraph.json"),
    );
  });

  it("a config path outside the repository, or a symlink out of it, is a BuildError", async () => {
    for (const p of ["../outside.json", path.join(tmp, "outside.json"), "linked.json"])
      await expect(readGraphConfig(repo, p), p).rejects.toThrow(/outside the repository/);
  });
});

describe("unhonoured keys", () => {
  it("names what a graph config asks that this platform does not do, the honoured keys aside", () => {
    expect(
      unhonouredKeys({
        graphs: { a: "./a.ts:g" },
        env: {},
        dependencies: ["."],
        node_version: "22",
        ui: { a: "./ui.tsx" },
        auth: { path: "./auth.ts:auth" },
        http: {
          cors: { allow_origins: ["*"] },
          app: "./app.ts:app",
          disable_store: true,
          mount_prefix: "/x",
        },
        store: { ttl: { default_ttl: 5 }, index: { embed: "./e.ts:e", dims: 3 }, vectors: "pgvector" },
        checkpointer: { ttl: { default_ttl: 60, strategy: "delete" }, serde: {} },
      }),
    ).toEqual(["checkpointer.serde", "http.mount_prefix", "store.vectors"]);
    expect(unhonouredKeys({ graphs: { a: "./a.ts:g" } })).toEqual([]);
  });
});
