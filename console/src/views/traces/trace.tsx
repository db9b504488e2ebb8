import { useEffect, useMemo, useState } from "react";
import { RunDetail } from "../../components/trace-run.tsx";
import { errorText, fmtDuration, latencyMs, ms, queryRuns } from "../../format.ts";
import { href } from "../../router.ts";
import type { Run } from "../../wire.ts";
import { StudioLink } from "./studio-link.tsx";

// A trace's runs as a tree in dotted order (a run's dotted order extends its parent's), each on a timeline:
// the bar starts at the run's offset from the trace's start and is as wide as its latency.
const MAX_RUNS = 2000;

export function TraceView({
  projectId,
  traceId,
  runId,
}: {
  projectId: string;
  traceId: string;
  runId?: string;
}) {
  const [state, setState] = useState<{ runs?: Run[]; capped?: boolean; error?: string }>({});
  useEffect(() => {
    const ctl = new AbortController();
    (async () => {
      setState(await queryRuns({ trace: traceId }, MAX_RUNS, ctl.signal));
    })().catch((e) => {
      if (!ctl.signal.aborted) setState({ error: errorText(e) });
    });
    return () => ctl.abort();
  }, [traceId]);

  const rows = useMemo(() => {
    const runs = [...(state.runs ?? [])].sort((a, b) =>
      (a.dotted_order ?? a.start_time).localeCompare(b.dotted_order ?? b.start_time),
    );
    const t0 = Math.min(...runs.map((r) => ms(r.start_time)));
    const t1 = Math.max(...runs.map((r) => ms(r.end_time) || ms(r.start_time)));
    const total = Math.max(1, t1 - t0);
    return runs.map((r): Row => {
      const l = latencyMs(r);
      return {
        run: r,
        depth: Math.max(0, (r.dotted_order?.split(".").length ?? 1) - 1),
        left: ((ms(r.start_time) - t0) / total) * 100,
        width: Math.max(0.5, ((l ?? t1 - ms(r.start_time)) / total) * 100),
        latency: l,
      };
    });
  }, [state.runs]);
  const byId = new Set(rows.map((r) => r.run.id));
  const kids = new Map<string, Row[]>();
  for (const r of rows)
    if (r.run.parent_run_id && byId.has(r.run.parent_run_id))
      kids.set(r.run.parent_run_id, [...(kids.get(r.run.parent_run_id) ?? []), r]);
  const link = (id: string) => href("traces", projectId, "trace", traceId, id);
  const root = rows.find((r) => r.run.is_root) ?? rows[0];
  const selected = runId ?? root?.run.id;
  return (
    <section aria-labelledby="trace-h">
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={href("traces")}>Projects</a> › <a href={href("traces", projectId)}>Runs</a> ›{" "}
        <span>Trace</span>
      </nav>
      <h1 id="trace-h">{`Trace: ${root?.run.name ?? traceId}`}</h1>
      <StudioLink projectId={projectId} root={root?.run} />
      {state.error && <p role="alert">{state.error}</p>}
      {!state.runs && !state.error && <p role="status">Loading the trace…</p>}
      {state.capped && <p role="status">{`Showing the first ${MAX_RUNS} runs of this trace.`}</p>}
      <div className="trace-layout">
        {rows.length > 0 && (
          <ul className="trace-tree" aria-label="Trace tree">
            {rows
              .filter((r) => !r.run.parent_run_id || !byId.has(r.run.parent_run_id))
              .map((r) => (
                <TreeNode key={r.run.id} row={r} kids={kids} link={link} selected={selected} />
              ))}
          </ul>
        )}
        {selected && <RunDetail key={selected} runId={selected} />}
      </div>
    </section>
  );
}

interface Row {
  run: Run;
  depth: number;
  left: number;
  width: number;
  latency: number | undefined;
}

function TreeNode({
  row,
  kids,
  link,
  selected,
}: {
  row: Row;
  kids: Map<string, Row[]>;
  link: (id: string) => string;
  selected: string | undefined;
}) {
  const { run, depth, left, width, latency } = row;
  const children = kids.get(run.id) ?? [];
  const l = Math.min(left, 99.5);
  return (
    <li>
      <a
        href={link(run.id)}
        aria-current={run.id === selected ? "true" : undefined}
        aria-label={`${run.name} (${run.run_type}, ${run.status}, ${fmtDuration(latency)})`}
      >
        <span className="trace-name" style={{ paddingLeft: `${depth}rem` }}>
          <span className={`badge badge-${run.run_type}`}>{run.run_type}</span> {run.name}
          {run.status === "error" && <span className="status-error"> ✕</span>}
        </span>
        <span className="trace-bar-track" aria-hidden="true">
          <span
            className={`trace-bar trace-bar-${run.status}`}
            style={{ left: `${l}%`, width: `${Math.min(width, 100 - l)}%` }}
          />
        </span>
        <span className="trace-latency">{fmtDuration(latency)}</span>
      </a>
      {children.length > 0 && (
        <ul>
          {children.map((c) => (
            <TreeNode key={c.run.id} row={c} kids={kids} link={link} selected={selected} />
          ))}
        </ul>
      )}
    </li>
  );
}
