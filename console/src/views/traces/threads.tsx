import { useEffect, useState } from "react";
import { api } from "../../api.ts";
import { Pager, useCursorPage, useCursorPages } from "../../components/pager.tsx";
import { errorText, fmtCost, fmtDuration, fmtNumber, fmtTime } from "../../format.ts";
import { useApi } from "../../hooks.ts";
import { href } from "../../router.ts";
import type { Project, TraceThread as Thread, ThreadsPage, ThreadTrace } from "../../wire.ts";

// A project's conversation threads (traces grouped by the thread id in their metadata: /api/v2/threads) and one
// thread's traces in turn order, each opening the trace view.
const PAGE = 25;
const WINDOWS = [
  ["1", "Last day"],
  ["7", "Last 7 days"],
  ["30", "Last 30 days"],
] as const;

/** The Runs / Threads tabs of a project's pages. */
export function ProjectTabs({ projectId, current }: { projectId: string; current: "runs" | "threads" }) {
  return (
    <nav aria-label="Project views" className="tabs">
      <a href={href("traces", projectId)} aria-current={current === "runs" ? "page" : undefined}>
        Runs
      </a>{" "}
      <a
        href={href("traces", projectId, "threads")}
        aria-current={current === "threads" ? "page" : undefined}
      >
        Threads
      </a>
    </nav>
  );
}

export function ProjectThreads({ projectId }: { projectId: string }) {
  const project = useApi<Project>(`/api/v1/sessions/${projectId}`);
  const [days, setDays] = useState("7");
  const pages = useCursorPages();
  const state = useCursorPage<Thread>(
    pages.cursor,
    (cursor, signal) =>
      api<ThreadsPage<Thread>>(
        "POST",
        "/api/v2/threads/query",
        {
          project_id: projectId,
          min_start_time: new Date(Date.now() - Number(days) * 86_400_000).toISOString(),
          page_size: PAGE,
          ...(cursor ? { cursor } : {}),
        },
        { signal },
      ).then((r) => ({ items: r.items, next: r.next_cursor })),
    [projectId, days],
  );
  const name = project.data?.name ?? projectId;
  return (
    <section aria-labelledby="threads-h">
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={href("traces")}>Projects</a> › <span>{name}</span>
      </nav>
      <h1 id="threads-h">{`Threads: ${name}`}</h1>
      <ProjectTabs projectId={projectId} current="threads" />
      <p className="muted">
        Traces whose runs carry the same <code>session_id</code>, <code>thread_id</code> or{" "}
        <code>conversation_id</code> metadata, most recently active first.
      </p>
      <label htmlFor="thread-window">Active in</label>{" "}
      <select
        id="thread-window"
        value={days}
        onChange={(e) => {
          setDays(e.target.value);
          pages.reset();
        }}
      >
        {WINDOWS.map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
      {state.error && <p role="alert">{state.error}</p>}
      {state.loading && <p role="status">Loading threads…</p>}
      {state.items && !state.error && (
        <>
          <table aria-label="Threads">
            <thead>
              <tr>
                <th scope="col">Thread</th>
                <th scope="col">Turns</th>
                <th scope="col" className="hide-narrow">
                  First input
                </th>
                <th scope="col">Last active (UTC)</th>
                <th scope="col" className="hide-narrow">
                  Errors
                </th>
                <th scope="col" className="hide-narrow">
                  Tokens
                </th>
                <th scope="col" className="hide-narrow">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {state.items.map((t) => (
                <tr key={t.thread_id}>
                  <td>
                    <a href={href("traces", projectId, "thread", t.thread_id)}>{t.thread_id}</a>
                  </td>
                  <td>{t.count}</td>
                  <td className="hide-narrow">{t.first_inputs ?? "—"}</td>
                  <td>{fmtTime(t.max_start_time)}</td>
                  <td className="hide-narrow">{t.num_errored_turns || "—"}</td>
                  <td className="hide-narrow">{t.total_tokens ? fmtNumber(t.total_tokens) : "—"}</td>
                  <td className="hide-narrow">{fmtCost(t.total_cost)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {!state.items.length && <p>No threads in this window.</p>}
        </>
      )}
      <Pager pages={pages} next={state.next} loading={state.loading} />
    </section>
  );
}

const TRACE_SELECTS = [
  "TURN_NUMBER",
  "NAME",
  "START_TIME",
  "LATENCY",
  "INPUTS_PREVIEW",
  "OUTPUTS_PREVIEW",
  "ERROR_PREVIEW",
  "TOTAL_TOKENS",
];

/** A thread's traces in the order they started, every page of them. */
export function ThreadView({ projectId, threadId }: { projectId: string; threadId: string }) {
  const [state, setState] = useState<{ traces?: ThreadTrace[]; error?: string }>({});
  useEffect(() => {
    const ctl = new AbortController();
    (async () => {
      const traces: ThreadTrace[] = [];
      let cursor: string | null = null;
      do {
        const q = new URLSearchParams({ project_id: projectId, page_size: "100" });
        for (const s of TRACE_SELECTS) q.append("selects", s);
        if (cursor) q.set("cursor", cursor);
        const page: ThreadsPage<ThreadTrace> = await api(
          "GET",
          `/api/v2/threads/${encodeURIComponent(threadId)}/traces?${q}`,
          undefined,
          { signal: ctl.signal },
        );
        traces.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor);
      setState({ traces });
    })().catch((e) => {
      if (!ctl.signal.aborted) setState({ error: errorText(e) });
    });
    return () => ctl.abort();
  }, [projectId, threadId]);
  return (
    <section aria-labelledby="thread-h">
      <nav aria-label="Breadcrumb" className="crumbs">
        <a href={href("traces")}>Projects</a> › <a href={href("traces", projectId, "threads")}>Threads</a> ›{" "}
        <span>Thread</span>
      </nav>
      <h1 id="thread-h">{`Thread ${threadId}`}</h1>
      {state.error && <p role="alert">{state.error}</p>}
      {!state.traces && !state.error && <p role="status">Loading the thread…</p>}
      {state.traces && (
        <ol aria-label="Turns" className="turns">
          {state.traces.map((t) => (
            <li key={t.trace_id}>
              <a
                href={href("traces", projectId, "trace", t.trace_id)}
              >{`Turn ${t.turn_number}: ${t.name}`}</a>{" "}
              <span className="muted">
                {fmtTime(t.start_time)} · {fmtDuration(t.latency === null ? null : t.latency * 1000)}
                {t.total_tokens ? ` · ${fmtNumber(t.total_tokens)} tokens` : ""}
              </span>
              <dl>
                <dt>Input</dt>
                <dd>{t.inputs_preview ?? "—"}</dd>
                <dt>{t.error_preview ? "Error" : "Output"}</dt>
                <dd className={t.error_preview ? "status-error" : undefined}>
                  {t.error_preview ?? t.outputs_preview ?? "—"}
                </dd>
              </dl>
            </li>
          ))}
        </ol>
      )}
      {state.traces && !state.traces.length && <p>No traces in this thread.</p>}
    </section>
  );
}
