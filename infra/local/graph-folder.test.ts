import { describe, expect, it } from "vitest";
import { graphConfigArg } from "./graph-folder.ts";

describe("--graph", () => {
  it("takes the config path from --graph, --graph= or AGENT_GRAPH_CONFIG", () => {
    expect(graphConfigArg(["--graph", "a/langgraph.json"], {})).toBe("a/langgraph.json");
    expect(graphConfigArg(["--graph=b.json"], {})).toBe("b.json");
    expect(graphConfigArg([], { AGENT_GRAPH_CONFIG: "c.json" })).toBe("c.json");
    expect(graphConfigArg([], {})).toBeUndefined();
  });
});
