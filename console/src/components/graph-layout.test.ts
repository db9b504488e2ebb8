import { describe, expect, it } from "vitest";
import type { ServerGraph } from "../wire.ts";
import { layoutGraph, layoutInput, parentsOf, runnableNodes } from "./graph-layout.ts";

const agent: ServerGraph = {
  nodes: [
    { id: "__start__", type: "schema" },
    { id: "agent", type: "runnable" },
    { id: "tools", type: "runnable", metadata: { __tools: ["get_weather"] } },
    { id: "__end__", type: "schema" },
  ],
  edges: [
    { source: "__start__", target: "agent", conditional: false },
    { source: "tools", target: "agent", conditional: false },
    { source: "agent", target: "tools", conditional: true },
    { source: "agent", target: "__end__", conditional: true },
  ],
};

const xray: ServerGraph = {
  nodes: [
    { id: "__start__" },
    { id: "plan" },
    { id: "research:search" },
    { id: "research:summarize" },
    { id: "__end__" },
  ],
  edges: [
    { source: "__start__", target: "plan" },
    { source: "plan", target: "research:search" },
    { source: "research:search", target: "research:summarize" },
    { source: "research:summarize", target: "__end__", conditional: true },
    { source: "gone", target: "plan" },
  ],
};

describe("graph layout", () => {
  it("keeps conditional edges conditional and drops edges to unknown nodes", () => {
    const { edges } = layoutInput(xray);
    expect(edges.map((e) => [e.source, e.target, e.conditional])).toEqual([
      ["__start__", "plan", false],
      ["plan", "research:search", false],
      ["research:search", "research:summarize", false],
      ["research:summarize", "__end__", true],
    ]);
  });

  it("names start and end, keeps a ToolNode's tools", () => {
    const { nodes } = layoutInput(agent);
    expect(nodes.map((n) => [n.label, n.kind])).toEqual([
      ["start", "start"],
      ["agent", "node"],
      ["tools", "node"],
      ["end", "end"],
    ]);
    expect(nodes[2]!.tools).toEqual(["get_weather"]);
  });

  it("puts a subgraph's nodes (xray ids `sub:node`) in a cluster around them", () => {
    const laid = layoutGraph(xray);
    expect(laid.clusters.map((c) => c.id)).toEqual(["research"]);
    const cluster = laid.clusters[0]!;
    for (const n of laid.nodes.filter((n) => n.parent === "research")) {
      expect(n.x).toBeGreaterThanOrEqual(cluster.x);
      expect(n.x + n.width).toBeLessThanOrEqual(cluster.x + cluster.width);
      expect(n.label).not.toContain(":");
    }
    expect(parentsOf("a:b:c")).toEqual(["a", "a:b"]);
  });

  it("lays the graph out top to bottom: start above the first node, no two nodes overlapping", () => {
    const laid = layoutGraph(agent);
    const at = Object.fromEntries(laid.nodes.map((n) => [n.id, n]));
    expect(at.__start__!.y).toBeLessThan(at.agent!.y);
    expect(at.agent!.y).toBeLessThan(at.tools!.y);
    for (const a of laid.nodes)
      for (const b of laid.nodes)
        if (a !== b)
          expect(
            a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y,
          ).toBe(true);
    expect(laid.width).toBeGreaterThan(0);
  });

  it("offers every node but start and end as a breakpoint", () => {
    expect(runnableNodes(agent)).toEqual(["agent", "tools"]);
  });
});
