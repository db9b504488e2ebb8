import "@xyflow/react/dist/style.css";
import {
  Background,
  BaseEdge,
  Controls,
  type Edge,
  type EdgeProps,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
} from "@xyflow/react";
import { memo, useMemo } from "react";
import type { GraphLayout, NodeKind, NodeStatus } from "./graph-layout.ts";
import { pathThrough } from "./graph-path.ts";

// A graph drawn with React Flow (@xyflow/react) from positions computed beforehand (the studio's dagre layout):
// nodes show their run status and breakpoints, conditional edges are dashed, a subgraph is a box around its
// nodes. Nodes are buttons for the keyboard (Tab, Enter) as React Flow makes them focusable.

interface NodeData extends Record<string, unknown> {
  label: string;
  kind: NodeKind;
  status?: NodeStatus;
  before?: boolean;
  after?: boolean;
}

const STATUS_TEXT: Record<NodeStatus, string> = {
  running: "running",
  done: "finished",
  error: "failed",
  interrupted: "interrupted",
};

const GraphNode = memo(function GraphNode({ data, selected }: NodeProps<Node<NodeData>>) {
  return (
    <div
      className={`gc-node gc-${data.kind}${selected ? " gc-selected" : ""}`}
      data-status={data.status ?? "idle"}
    >
      <Handle type="target" position={Position.Top} isConnectable={false} />
      {data.before && <span className="gc-bp gc-bp-before" title="Pauses before" aria-hidden="true" />}
      <span className="gc-label">{data.label}</span>
      {data.status && <span className="gc-status">{STATUS_TEXT[data.status]}</span>}
      {data.after && <span className="gc-bp gc-bp-after" title="Pauses after" aria-hidden="true" />}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
});

function Cluster({ data }: NodeProps<Node<{ label: string }>>) {
  return <div className="gc-cluster">{data.label}</div>;
}

/** An edge along the route the layout computed (back edges go around nodes, not through them). */
function RoutedEdge({
  data,
  sourceX,
  sourceY,
  targetX,
  targetY,
  markerEnd,
  style,
  label,
}: EdgeProps<Edge<{ points: { x: number; y: number }[] }>>) {
  const points = data?.points?.length
    ? data.points
    : [
        { x: sourceX, y: sourceY },
        { x: targetX, y: targetY },
      ];
  const mid = points[Math.floor(points.length / 2)]!;
  return (
    <BaseEdge
      path={pathThrough(points)}
      markerEnd={markerEnd}
      style={style}
      label={label}
      labelX={mid.x}
      labelY={mid.y}
    />
  );
}

const nodeTypes = { graph: GraphNode, cluster: Cluster };
const edgeTypes = { routed: RoutedEdge };

export function GraphCanvas({
  graph,
  statuses,
  before,
  after,
  selected,
  onSelect,
  label,
}: {
  graph: GraphLayout;
  statuses: Record<string, NodeStatus>;
  before: string[];
  after: string[];
  selected?: string;
  onSelect: (id: string) => void;
  label: string;
}) {
  const nodes = useMemo<Node[]>(
    () => [
      ...graph.clusters.map((c) => ({
        id: `cluster:${c.id}`,
        type: "cluster",
        position: { x: c.x, y: c.y },
        data: { label: c.label },
        style: { width: c.width, height: c.height },
        selectable: false,
        focusable: false,
        draggable: false,
        zIndex: -1,
      })),
      ...graph.nodes.map((n) => {
        const status = statuses[n.id];
        const marks = [
          status && STATUS_TEXT[status],
          before.includes(n.id) && "pauses before",
          after.includes(n.id) && "pauses after",
        ].filter(Boolean);
        return {
          id: n.id,
          type: "graph",
          position: { x: n.x, y: n.y },
          data: {
            label: n.label,
            kind: n.kind,
            status,
            before: before.includes(n.id),
            after: after.includes(n.id),
          },
          style: { width: n.width, height: n.height },
          selected: n.id === selected,
          draggable: false,
          connectable: false,
          ariaLabel: `Node ${n.id}${marks.length ? `, ${marks.join(", ")}` : ""}`,
        } satisfies Node<NodeData>;
      }),
    ],
    [graph, statuses, before, after, selected],
  );
  const edges = useMemo<Edge[]>(
    () =>
      graph.edges.map((e) => ({
        id: e.id,
        source: e.source,
        target: e.target,
        type: "routed",
        data: { points: e.points },
        label: e.label,
        className: e.conditional ? "gc-edge gc-conditional" : "gc-edge",
        style: e.conditional ? { strokeDasharray: "6 4" } : undefined,
        markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
        animated: statuses[e.source] === "running",
        focusable: false,
      })),
    [graph, statuses],
  );
  return (
    <section className="gc" aria-label={label}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        fitView
        fitViewOptions={{ padding: 0.15 }}
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable
        onNodeClick={(_, n) => n.type === "graph" && onSelect(n.id)}
        onKeyDown={(e) => {
          const id = (e.target as HTMLElement).closest<HTMLElement>(".react-flow__node")?.dataset.id;
          if (id && (e.key === "Enter" || e.key === " ") && !id.startsWith("cluster:")) onSelect(id);
        }}
        proOptions={{ hideAttribution: false }}
      >
        <Background gap={16} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </section>
  );
}
