import dagre from "@dagrejs/dagre";
import type { ServerGraph } from "../wire.ts";

// The drawing of an assistant's graph (GET /assistants/{id}/graph, `xray` for subgraphs): positions from dagre,
// a layout library made for directed graphs. A subgraph's nodes arrive as `<subgraph>:<node>` ids; they are
// laid out inside a cluster named after the subgraph.

export type NodeKind = "start" | "end" | "node";
/** A node's state in the run being watched. */
export type NodeStatus = "running" | "done" | "error" | "interrupted";

export interface LaidNode {
  id: string;
  /** The node's own name (the id's last part). */
  label: string;
  kind: NodeKind;
  /** The subgraph holding it (`a:b` for a node of `a`'s subgraph `b`), when it is one's. */
  parent?: string;
  /** Tool names of a ToolNode, breakpoints compiled into the graph. */
  tools?: string[];
  compiledInterrupt?: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidEdge {
  id: string;
  source: string;
  target: string;
  conditional: boolean;
  label?: string;
  /** The route dagre drew, around the nodes in its way. */
  points: { x: number; y: number }[];
}

export interface LaidCluster {
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface GraphLayout {
  nodes: LaidNode[];
  edges: LaidEdge[];
  clusters: LaidCluster[];
  width: number;
  height: number;
}

export const START = "__start__";
export const END = "__end__";
const NODE_HEIGHT = 40;
const CHAR_WIDTH = 8;

const lastPart = (id: string) => id.slice(id.lastIndexOf(":") + 1);
const kindOf = (id: string): NodeKind =>
  lastPart(id) === START ? "start" : lastPart(id) === END ? "end" : "node";

/** The subgraph prefixes of an id: `a:b:c` → [`a`, `a:b`]. */
export function parentsOf(id: string): string[] {
  const parts = id.split(":");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join(":"));
}

const labelOf = (id: string) =>
  kindOf(id) === "start" ? "start" : kindOf(id) === "end" ? "end" : lastPart(id);

/** Node and edge lists ready for layout: every edge's ends exist, conditional edges keep their flag. */
export function layoutInput(g: ServerGraph) {
  const nodes = g.nodes.map((n) => ({
    id: n.id,
    label: labelOf(n.id),
    kind: kindOf(n.id),
    parent: parentsOf(n.id).at(-1),
    tools: Array.isArray(n.metadata?.__tools) ? (n.metadata.__tools as string[]) : undefined,
    compiledInterrupt: typeof n.metadata?.__interrupt === "string" ? n.metadata.__interrupt : undefined,
  }));
  const known = new Set(nodes.map((n) => n.id));
  const edges = g.edges
    .filter((e) => known.has(e.source) && known.has(e.target))
    .map((e, i) => ({
      id: `e${i}-${e.source}-${e.target}`,
      source: e.source,
      target: e.target,
      conditional: !!e.conditional,
      label: typeof e.data === "string" && e.data !== e.target ? e.data : undefined,
    }));
  const clusters = [...new Set(nodes.flatMap((n) => parentsOf(n.id)))];
  return { nodes, edges, clusters };
}

/** Positions (top-left corners) from dagre, top to bottom. */
export function layoutGraph(g: ServerGraph): GraphLayout {
  const input = layoutInput(g);
  const d = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  d.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 50, marginx: 16, marginy: 16 });
  d.setDefaultEdgeLabel(() => ({}));
  for (const c of input.clusters) {
    d.setNode(c, { label: lastPart(c), paddingTop: 24 });
    const up = parentsOf(c).at(-1);
    if (up) d.setParent(c, up);
  }
  for (const n of input.nodes) {
    const width = Math.max(90, n.label.length * CHAR_WIDTH + 40);
    d.setNode(n.id, { width, height: NODE_HEIGHT });
    if (n.parent) d.setParent(n.id, n.parent);
  }
  for (const e of input.edges) d.setEdge(e.source, e.target, {}, e.id);
  dagre.layout(d);
  const box = (id: string) => {
    const p = d.node(id);
    return { x: p.x - p.width / 2, y: p.y - p.height / 2, width: p.width, height: p.height };
  };
  const graph = d.graph();
  return {
    nodes: input.nodes.map((n) => ({ ...n, ...box(n.id) })),
    edges: input.edges.map((e) => ({ ...e, points: d.edge(e.source, e.target, e.id)?.points ?? [] })),
    clusters: input.clusters.map((c) => ({ id: c, label: lastPart(c), ...box(c) })),
    width: graph.width ?? 0,
    height: graph.height ?? 0,
  };
}

/** The nodes a run can pause at (breakpoints, `goto` targets, `as_node`): every node but start and end. */
export const runnableNodes = (g: ServerGraph | undefined) =>
  (g?.nodes ?? []).map((n) => n.id).filter((id) => kindOf(id) === "node");
