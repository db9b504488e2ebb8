import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import { parseGraphConfig, parseGraphSpec } from "./graph-config.ts";
import { repoRelative } from "./paths.ts";

// Untrusted input: a repository's langgraph.json. Arbitrary text gives a config or a BuildError, nothing else,
// and an accepted config never names a file outside the repository.
const only = (fn: () => unknown) => {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    return undefined;
  }
};

const pathish = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc
    .array(fc.constantFrom("..", ".", "src", "a.ts", "/", "\\", "C:", "", "x.mjs", "\0"), { maxLength: 6 })
    .map((parts) => parts.join("/")),
);
const specish = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.tuple(pathish, fc.constantFrom("", ":", ":graph", ":default", ":1", "::x")).map(([p, e]) => p + e),
);
/** Near-valid graphs, so accepted configs are common and the inside-the-repo property is exercised. */
const jsPath = fc
  .tuple(
    fc.array(fc.constantFrom("..", ".", "src", "lib", "", "/", "C:", "a..b"), { maxLength: 5 }),
    fc.constantFrom("a.ts", "b.mjs", "c.js", "d.tsx", "e.py", "f.json"),
  )
  .map(([dirs, file]) => [...dirs, file].join("/"));
const nearValidGraphs = fc.dictionary(
  fc.stringMatching(/^[a-z0-9][a-z0-9_.-]{0,8}$/),
  fc.tuple(jsPath, fc.constantFrom("", ":graph", ":default", ":make_graph")).map(([p, e]) => p + e),
  { minKeys: 1, maxKeys: 3 },
);
const configish = fc.record(
  {
    graphs: fc.oneof(
      nearValidGraphs,
      fc.dictionary(
        fc.string({ maxLength: 12 }),
        fc.oneof(specish, fc.record({ path: specish }), fc.anything()),
      ),
      fc.anything(),
    ),
    env: fc.oneof(
      pathish,
      jsPath,
      fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer())),
      fc.anything(),
    ),
    dependencies: fc.anything(),
    node_version: fc.anything(),
    description: fc.anything(),
    dockerfile_lines: fc.anything(),
  },
  { requiredKeys: [] },
);

describe("graph config fuzz", () => {
  it("arbitrary text is a config or a BuildError", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.json()), (text) => {
        only(() => parseGraphConfig(text, "langgraph.json"));
      }),
      { numRuns: 500 },
    );
  });

  it("arbitrary config-shaped values are a config or a BuildError; accepted paths stay inside the repo", () => {
    fc.assert(
      fc.property(configish, fc.constantFrom("langgraph.json", "apps/x/langgraph.json"), (value, at) => {
        const config = only(() => parseGraphConfig(JSON.stringify(value), at)) as
          | ReturnType<typeof parseGraphConfig>
          | undefined;
        if (!config) return;
        const dir = at.includes("/") ? "apps/x" : ".";
        for (const spec of Object.values(config.graphs)) {
          const { file } = parseGraphSpec(spec);
          expect(repoRelative(dir, file)).toBeDefined();
        }
        if (typeof config.env === "string") expect(repoRelative(dir, config.env)).toBeDefined();
      }),
      { numRuns: 500 },
    );
  });

  it("arbitrary graph specs parse or give a BuildError", () => {
    fc.assert(
      fc.property(specish, (spec) => {
        only(() => parseGraphSpec(spec));
      }),
      { numRuns: 500 },
    );
  });
});
