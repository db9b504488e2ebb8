import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { Pager, useCursorPage, useCursorPages } from "../../components/pager.tsx";
import { fmtCost, fmtDuration, fmtNumber, fmtTime, latencyMs } from "../../format.ts";
import { useApi } from "../../hooks.ts";
import { href } from "../../router.ts";
import type { Project, Run, RunQueryPage } from "../../wire.ts";
import { ProjectCharts } from "./projects.tsx";
import { ProjectTabs } from "./threads.tsx";

// A project's runs, newest first, a page at a time (the query's cursor), filtered with the filter language.
// A filter the server refuses shows its 422 message (which names the error's position).
const PAGE = 25;

export function ProjectRuns({ projectId }: { projectId: string }) {
  const project = useApi<Project>(`/api/v1/sessions/${projectId}`);
  const [draft, setDraft] = useState("");
  const [filter, setFilter] = useState("");
  const [rootsOnly, setRootsOnly] = useState(false);
  const [charts, setCharts] = useState(false);
  const pages = useCursorPages();
  const state = useCursorPage<Run>(
    pages.cursor,
    (cursor, signal) =>
      api<RunQueryPage>(
        "POST",
        "/api/v1/runs/query",
        {
          session: [projectId],
          limit: PAGE,
          ...(filter ? { filter } : {}),
          ...(rootsOnly ? { is_root: true } : {}),
          ...(cursor ? { cursor } : {}),
        },
        { signal },
      ).then((r) => ({ items: r.runs, next: r.cursors.next })),
    [projectId, filter, rootsOnly],
  );

  const restart = () => {
    pages.reset();
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setFilter(draft.trim());
    restart();
  };
  const name = project.data?.name ?? projectId;
  return (
    <section aria-labelledby="runs-h">
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={href("traces")}>Projects</a> › <span>{name}</span>
      </nav>
      <h1 id="runs-h">{`Runs: ${name}`}</h1>
      <ProjectTabs projectId={projectId} current="runs" />
      {project.error && <p role="alert">{project.error}</p>}
      <button type="button" aria-expanded={charts} onClick={() => setCharts((c) => !c)}>
        {charts ? "Hide charts" : "Show charts"}
      </button>
      {charts && <ProjectCharts project={{ id: projectId, name }} />}
      <RunFilter
        draft={draft}
        onDraft={setDraft}
        invalid={Boolean(state.error && filter)}
        onApply={apply}
        onClear={() => {
          setDraft("");
          setFilter("");
          restart();
        }}
        rootsOnly={rootsOnly}
        onRootsOnly={(on) => {
          setRootsOnly(on);
          restart();
        }}
      />
      {state.error && (
        <p role="alert" aria-label="Filter error">
          {state.error}
        </p>
      )}
      {state.loading && <p role="status">Loading runs…</p>}
      {state.items && !state.error && (
        <>
          <RunsTable runs={state.items} projectId={projectId} />
          {!state.items.length && <p>No runs match.</p>}
        </>
      )}
      <Pager pages={pages} next={state.next} loading={state.loading} />
    </section>
  );
}

/** The filter box (the platform's filter language) and the root-runs switch. */
function RunFilter(p: {
  draft: string;
  onDraft: (d: string) => void;
  invalid: boolean;
  onApply: (e: FormEvent) => void;
  onClear: () => void;
  rootsOnly: boolean;
  onRootsOnly: (on: boolean) => void;
}) {
  const { draft, onDraft, invalid, onApply, onClear, rootsOnly, onRootsOnly } = p;
  return (
    <form className="filter" aria-label="Filter runs" onSubmit={onApply}>
      <label htmlFor="run-filter">Filter</label>
      <input
        id="run-filter"
        value={draft}
        spellCheck={false}
        placeholder='and(eq(run_type, "llm"), gt(latency, "2s"))'
        onChange={(e) => onDraft(e.target.value)}
        aria-describedby="run-filter-help"
        aria-invalid={invalid || undefined}
      />
      <button type="submit" className="primary">
        Apply
      </button>
      <button type="button" onClick={onClear}>
        Clear
      </button>
      <label className="check">
        <input type="checkbox" checked={rootsOnly} onChange={(e) => onRootsOnly(e.target.checked)} />
        Root runs only
      </label>
      <small id="run-filter-help" className="muted">
        The platform's filter language, e.g. <code>eq(status, "error")</code> or{" "}
        <code>and(eq(run_type, "llm"), gt(latency, "2s"))</code>.
      </small>
    </form>
  );
}

/** A page of runs: each links to its place in its trace. */
function RunsTable({ runs, projectId }: { runs: Run[]; projectId: string }) {
  return (
    <table aria-label="Runs">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col" className="hide-narrow">
            Start (UTC)
          </th>
          <th scope="col">Latency</th>
          <th scope="col" className="hide-narrow">
            Tokens
          </th>
          <th scope="col" className="hide-narrow">
            Cost
          </th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.id}>
            <td>
              <a href={href("traces", projectId, "trace", r.trace_id, r.id)}>{r.name}</a>
            </td>
            <td>{r.run_type}</td>
            <td className={`status-${r.status}`}>{r.status}</td>
            <td className="hide-narrow">{fmtTime(r.start_time)}</td>
            <td>{fmtDuration(latencyMs(r))}</td>
            <td className="hide-narrow">{r.total_tokens ? fmtNumber(r.total_tokens) : "—"}</td>
            <td className="hide-narrow">{fmtCost(r.total_cost)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
