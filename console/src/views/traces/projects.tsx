import { useEffect, useMemo, useState } from "react";
import { type Bin, Chart } from "../../components/chart.tsx";
import {
  errorText,
  fmtCost,
  fmtDuration,
  fmtNumber,
  fmtTime,
  latencyMs,
  ms,
  percentile,
  queryRuns,
} from "../../format.ts";
import { useApi } from "../../hooks.ts";
import { href } from "../../router.ts";
import type { Project, Run } from "../../wire.ts";

// Tracing projects with their run counts, and one project's charts over a chosen range, binned in the browser
// from the public run query. A chart reads at most CHART_RUN_CAP runs (the newest), and says so when capped.
export const CHART_RUN_CAP = 5000;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RANGES = {
  "24h": { label: "Last 24 hours", ms: DAY },
  "7d": { label: "Last 7 days", ms: 7 * DAY },
  "30d": { label: "Last 30 days", ms: 30 * DAY },
} as const;
type RangeKey = keyof typeof RANGES | "custom";

/** Projects per page (one more is read to know whether an older page exists). */
const PROJECT_PAGE = 50;

export function Projects() {
  const [needle, setNeedle] = useState("");
  const [draft, setDraft] = useState("");
  const [offset, setOffset] = useState(0);
  const query = new URLSearchParams({ limit: String(PROJECT_PAGE + 1), offset: String(offset) });
  if (needle) query.set("name_contains", needle);
  const { data, error, loading } = useApi<Project[]>(`/api/v1/sessions?${query}`);
  const more = (data?.length ?? 0) > PROJECT_PAGE;
  const projects = useMemo(
    () =>
      (data ?? [])
        .slice(0, PROJECT_PAGE)
        .sort((a, b) => (b.last_run_start_time ?? "").localeCompare(a.last_run_start_time ?? "")),
    [data],
  );
  const [chosen, setChosen] = useState<string>();
  const selected = projects.find((p) => p.id === chosen) ?? projects[0];
  return (
    <section aria-labelledby="projects-h">
      <h1 id="projects-h">Tracing projects</h1>
      <form
        className="filter"
        aria-label="Find projects"
        onSubmit={(e) => {
          e.preventDefault();
          setNeedle(draft.trim());
          setOffset(0);
        }}
      >
        <label htmlFor="project-find">Name contains</label>
        <input
          id="project-find"
          value={draft}
          spellCheck={false}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit" className="primary">
          Find
        </button>
      </form>
      {error && <p role="alert">{error}</p>}
      {loading && !data && <p role="status">Loading projects…</p>}
      {data && !projects.length && (
        <p>
          {needle
            ? "No project has that in its name."
            : "No tracing projects yet: runs sent with an SDK create them."}
        </p>
      )}
      {projects.length > 0 && (
        <table aria-label="Tracing projects">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Runs</th>
              <th scope="col" className="hide-narrow">
                Last run
              </th>
              <th scope="col">Charts</th>
            </tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id} aria-selected={p === selected}>
                <td>
                  <a href={href("traces", p.id)}>{p.name}</a>
                  {p.description && <div className="muted">{p.description}</div>}
                </td>
                <td>{fmtNumber(p.run_count)}</td>
                <td className="hide-narrow">{fmtTime(p.last_run_start_time)}</td>
                <td>
                  <button
                    type="button"
                    className="link"
                    aria-pressed={p === selected}
                    aria-label={`Charts of ${p.name}`}
                    onClick={() => setChosen(p.id)}
                  >
                    {p === selected ? "Shown" : "Show"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(offset > 0 || more) && (
        <nav className="pager" aria-label="Project pages">
          <button
            type="button"
            disabled={offset === 0}
            onClick={() => setOffset((o) => Math.max(0, o - PROJECT_PAGE))}
          >
            Newer projects
          </button>
          <span>{`Page ${offset / PROJECT_PAGE + 1}`}</span>
          <button
            type="button"
            disabled={!more || loading}
            onClick={() => setOffset((o) => o + PROJECT_PAGE)}
          >
            Older projects
          </button>
        </nav>
      )}
      {selected && <ProjectCharts key={selected.id} project={selected} />}
    </section>
  );
}

function toLocalInput(t: number) {
  return new Date(t).toISOString().slice(0, 16);
}

export function ProjectCharts({ project }: { project: { id: string; name: string } }) {
  const [range, setRange] = useState<RangeKey>("24h");
  const [custom, setCustom] = useState(() => ({
    from: toLocalInput(Date.now() - 7 * DAY),
    to: toLocalInput(Date.now()),
  }));
  // The span is fixed when the range is chosen, so re-renders do not re-read.
  const span = useMemo(() => {
    if (range === "custom") {
      const from = Date.parse(`${custom.from}:00Z`);
      const to = Date.parse(`${custom.to}:00Z`);
      return Number.isFinite(from) && Number.isFinite(to) && from < to ? { from, to } : undefined;
    }
    const to = Date.now();
    return { from: to - RANGES[range].ms, to };
  }, [range, custom]);
  const read = useChartRuns(project.id, span, range === "custom");
  const binMs = span && span.to - span.from <= 2 * DAY ? HOUR : DAY;
  const stats = useMemo(() => (span ? binRuns(read.runs, span, binMs) : undefined), [read.runs, span, binMs]);
  const label = (t: number) =>
    binMs === HOUR
      ? `${new Date(t).toISOString().slice(5, 13).replace("T", " ")}:00`
      : new Date(t).toISOString().slice(0, 10);
  const per = binMs === HOUR ? "per hour" : "per day";
  return (
    <section className="card" aria-labelledby="charts-h">
      <h2 id="charts-h">{`Charts: ${project.name}`}</h2>
      <RangeControls range={range} onRange={setRange} custom={custom} onCustom={setCustom} />
      {!span && <p role="alert">Choose a start before the end.</p>}
      {read.error && <p role="alert">{read.error}</p>}
      {span && !read.done && <p role="status">Reading runs…</p>}
      {read.done && !read.error && (
        <p role="status" aria-label="Runs read">
          {`${fmtNumber(read.runs.length)} runs read (all run types), ${per}, UTC.`}
          {read.capped &&
            ` Capped: the charts read the newest ${fmtNumber(CHART_RUN_CAP)} runs of the range only; older runs are not counted.`}
        </p>
      )}
      {read.done && stats && <ChartGrid stats={stats} label={label} />}
    </section>
  );
}

/** The runs of the project in the span (the newest CHART_RUN_CAP), read again when the span changes. */
function useChartRuns(projectId: string, span: { from: number; to: number } | undefined, bounded: boolean) {
  const [read, setRead] = useState<{ runs: Run[]; capped: boolean; done: boolean; error?: string }>({
    runs: [],
    capped: false,
    done: false,
  });
  useEffect(() => {
    if (!span) return;
    const ctl = new AbortController();
    setRead({ runs: [], capped: false, done: false });
    (async () => {
      const body = {
        session: [projectId],
        start_time: new Date(span.from).toISOString(),
        ...(bounded ? { end_time: new Date(span.to).toISOString() } : {}),
      };
      const { runs, capped } = await queryRuns(body, CHART_RUN_CAP, ctl.signal);
      if (!ctl.signal.aborted) setRead({ runs, capped, done: true });
    })().catch((e) => {
      if (!ctl.signal.aborted) setRead({ runs: [], capped: false, done: true, error: errorText(e) });
    });
    return () => ctl.abort();
  }, [projectId, span, bounded]);

  return read;
}

type Custom = { from: string; to: string };

/** The charts' range: a preset, or a custom span in UTC. */
function RangeControls({
  range,
  onRange,
  custom,
  onCustom,
}: {
  range: RangeKey;
  onRange: (r: RangeKey) => void;
  custom: Custom;
  onCustom: (f: (c: Custom) => Custom) => void;
}) {
  return (
    <div className="chart-controls">
      <label>
        Range
        <select value={range} onChange={(e) => onRange(e.target.value as RangeKey)}>
          {Object.entries(RANGES).map(([k, r]) => (
            <option key={k} value={k}>
              {r.label}
            </option>
          ))}
          <option value="custom">Custom (UTC)</option>
        </select>
      </label>
      {range === "custom" && (
        <>
          <label>
            From
            <input
              type="datetime-local"
              value={custom.from}
              onChange={(e) => onCustom((c) => ({ ...c, from: e.target.value }))}
            />
          </label>
          <label>
            To
            <input
              type="datetime-local"
              value={custom.to}
              onChange={(e) => onCustom((c) => ({ ...c, to: e.target.value }))}
            />
          </label>
        </>
      )}
    </div>
  );
}

/** The six charts of the binned runs. */
function ChartGrid({ stats, label }: { stats: ReturnType<typeof binRuns>; label: (t: number) => string }) {
  return (
    <div className="charts">
      <Chart
        id="chart-runs"
        title="Runs"
        bins={stats.runs}
        label={label}
        format={fmtNumber}
        summary={`${fmtNumber(stats.total)} runs`}
      />
      <Chart
        id="chart-errors"
        title="Error rate"
        bins={stats.errorRate}
        label={label}
        format={(v) => `${v.toFixed(1)}%`}
        summary={`${stats.total ? ((stats.errors / stats.total) * 100).toFixed(1) : "0.0"}% errors (${fmtNumber(stats.errors)} of ${fmtNumber(stats.total)} runs)`}
        color="var(--bad)"
      />
      <Chart
        id="chart-p50"
        title="Latency p50"
        bins={stats.p50}
        label={label}
        format={fmtDuration}
        summary={`p50 latency ${fmtDuration(stats.p50All)}`}
      />
      <Chart
        id="chart-p99"
        title="Latency p99"
        bins={stats.p99}
        label={label}
        format={fmtDuration}
        summary={`p99 latency ${fmtDuration(stats.p99All)}`}
      />
      <Chart
        id="chart-tokens"
        title="Tokens"
        bins={stats.tokens}
        label={label}
        format={fmtNumber}
        summary={`${fmtNumber(stats.tokensAll)} tokens (llm runs)`}
        color="var(--ok)"
      />
      <Chart
        id="chart-cost"
        title="Cost"
        bins={stats.cost}
        label={label}
        format={fmtCost}
        summary={`${fmtCost(stats.costAll)} cost (llm runs)`}
        color="var(--ok)"
      />
    </div>
  );
}

/** The runs binned by start time (UTC hours or days) into the charts' series. */
export function binRuns(runs: Run[], span: { from: number; to: number }, binMs: number) {
  const first = Math.floor(span.from / binMs) * binMs;
  const n = Math.max(1, Math.ceil((span.to - first) / binMs));
  const bins = Array.from({ length: n }, (_, i) => ({
    start: first + i * binMs,
    runs: 0,
    errors: 0,
    latencies: [] as number[],
    tokens: 0,
    cost: 0,
  }));
  const all: number[] = [];
  let errors = 0;
  let tokensAll = 0;
  let costAll = 0;
  let total = 0;
  for (const run of runs) {
    const i = Math.floor((ms(run.start_time) - first) / binMs);
    const bin = bins[i];
    if (!bin) continue;
    total++;
    bin.runs++;
    if (run.status === "error") {
      bin.errors++;
      errors++;
    }
    const l = latencyMs(run);
    if (l !== undefined) {
      bin.latencies.push(l);
      all.push(l);
    }
    if (run.run_type === "llm") {
      bin.tokens += run.total_tokens ?? 0;
      bin.cost += run.total_cost ?? 0;
      tokensAll += run.total_tokens ?? 0;
      costAll += run.total_cost ?? 0;
    }
  }
  const series = (f: (b: (typeof bins)[number]) => number | null): Bin[] =>
    bins.map((b) => ({ start: b.start, value: f(b) }));
  return {
    total,
    errors,
    tokensAll,
    costAll,
    p50All: percentile(all, 50),
    p99All: percentile(all, 99),
    runs: series((b) => b.runs),
    errorRate: series((b) => (b.runs ? (b.errors / b.runs) * 100 : null)),
    p50: series((b) => percentile(b.latencies, 50)),
    p99: series((b) => percentile(b.latencies, 99)),
    tokens: series((b) => b.tokens),
    cost: series((b) => b.cost),
  };
}
