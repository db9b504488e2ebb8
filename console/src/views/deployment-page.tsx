import { useCallback } from "react";
import { shortId, time, when } from "../format.ts";
import { useApi, useInterval } from "../hooks.ts";
import { href } from "../router.ts";
import type { Deployment, Page, Revision, RevisionLogs } from "../wire.ts";
import { repoOf, statusKind, TERMINAL } from "./deployment-data.ts";

const LIVE_MS = 1500;

// A deployment's page: its facts, secrets by name, links to its agent server's docs, the studio and the playground,
// its revisions as a timeline of statuses (newest first) and the build and deploy logs of one revision (the
// latest unless the route names another). Re-read every 1.5 s while a revision is still moving.
export function DeploymentPage({ id, revisionId }: { id: string; revisionId?: string }) {
  const dep = useApi<Deployment>(`/v2/deployments/${id}`);
  const revs = useApi<Page<Revision>>(`/v2/deployments/${id}/revisions?limit=50`);
  const selected = revisionId ?? dep.data?.latest_revision_id;
  const logs = useApi<RevisionLogs>(
    selected ? `/v2/deployments/${id}/revisions/${selected}/logs` : undefined,
  );
  const revisions = revs.data?.resources ?? [];
  // A revision's deploy log may be stored a moment after its status turns final: read until it is there.
  const logPending = !!logs.data && /DEPLOY/.test(logs.data.status) && !logs.data.deploy_log;
  const live =
    revisions.some((r) => !TERMINAL.has(r.status)) ||
    (!!logs.data && !TERMINAL.has(logs.data.status)) ||
    logPending;
  const { reload: reloadDep } = dep;
  const { reload: reloadRevs } = revs;
  const { reload: reloadLogs } = logs;
  const refresh = useCallback(() => {
    reloadDep();
    reloadRevs();
    reloadLogs();
  }, [reloadDep, reloadRevs, reloadLogs]);
  useInterval(refresh, live ? LIVE_MS : undefined);

  const back = (
    <p>
      <a href={href("deployments")}>← Deployments</a>
    </p>
  );
  if (dep.error && !dep.data)
    return (
      <>
        {back}
        <h1>Deployment {shortId(id)}</h1>
        <p role="alert">{dep.error}</p>
      </>
    );
  if (!dep.data) return <p className="muted">Loading…</p>;
  const d = dep.data;
  return (
    <>
      {back}
      <h1>
        {d.name} <span className={`deployment-badge status-${d.status}`}>{d.status}</span>
      </h1>
      <nav aria-label="Deployment links" className="deployment-actions">
        <a className="deployment-button primary" href={href("studio", d.id)}>
          Open studio
        </a>
        <a className="deployment-button" href={href("playground", d.id)}>
          Open playground
        </a>
        <a
          className="deployment-button"
          href={`/agents/${encodeURIComponent(d.id)}/docs`}
          target="_blank"
          rel="noreferrer"
        >
          Agent server API docs
        </a>
      </nav>
      <DeploymentFacts d={d} />
      <section aria-labelledby="revisions-heading">
        <h2 id="revisions-heading">Revisions</h2>
        <p role="status" aria-live="polite" className="muted">
          {live ? "A revision is in progress: refreshing every 1.5 s" : "All revisions are settled"}
        </p>
        {revs.error && <p role="alert">{revs.error}</p>}
        <ol aria-label="Revision timeline" className="deployment-timeline">
          {revisions.map((r) => (
            <RevisionItem key={r.id} r={r} deploymentId={d.id} current={r.id === selected} />
          ))}
        </ol>
      </section>
      {selected && <RevisionLogsView revisionId={selected} logs={logs.data} error={logs.error} />}
    </>
  );
}

/** The deployment's facts (id, source, config, live revision, times) and its secrets by name. */
function DeploymentFacts({ d }: { d: Deployment }) {
  return (
    <div className="deployment-grid">
      <dl className="deployment-facts" aria-label="Deployment details">
        <dt>Id</dt>
        <dd>{d.id}</dd>
        <dt>Source</dt>
        <dd>{repoOf(d)}</dd>
        <dt>Config</dt>
        <dd>{d.source_revision_config.langgraph_config_path}</dd>
        <dt>Live revision</dt>
        <dd>
          {d.active_revision_id ? (
            <a href={href("deployments", d.id, d.active_revision_id)}>{shortId(d.active_revision_id)}</a>
          ) : (
            "none yet"
          )}
        </dd>
        <dt>Created</dt>
        <dd>{when(d.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{when(d.updated_at)}</dd>
      </dl>
      <section aria-labelledby="secrets-heading" className="card">
        <h2 id="secrets-heading">Secrets</h2>
        {d.secrets.length === 0 ? (
          <p className="muted">No secrets.</p>
        ) : (
          <ul aria-label="Secret names" className="deployment-secrets">
            {d.secrets.map((s) => (
              <li key={s.name}>
                <code>{s.name}</code>
              </li>
            ))}
          </ul>
        )}
        <p className="muted">Values are write-only: the platform never shows them.</p>
      </section>
    </div>
  );
}

/** One revision's build and deploy logs. */
function RevisionLogsView({
  revisionId,
  logs,
  error,
}: {
  revisionId: string;
  logs: RevisionLogs | undefined;
  error: string | undefined;
}) {
  return (
    <section aria-labelledby="logs-heading">
      <h2 id="logs-heading">Logs of revision {shortId(revisionId)}</h2>
      {error && <p role="alert">{error}</p>}
      <section aria-labelledby="build-log-heading">
        <h3 id="build-log-heading">Build log</h3>
        <pre className="deployment-log">{logs?.build_log || "(not started)"}</pre>
      </section>
      <section aria-labelledby="deploy-log-heading">
        <h3 id="deploy-log-heading">Deploy log</h3>
        <pre className="deployment-log">{logs?.deploy_log || "(not started)"}</pre>
      </section>
    </section>
  );
}

function RevisionItem({ r, deploymentId, current }: { r: Revision; deploymentId: string; current: boolean }) {
  return (
    <li
      className={`deployment-rev deployment-${statusKind(r.status)}`}
      aria-current={current ? "true" : undefined}
    >
      <div className="deployment-rev-head">
        <a href={href("deployments", deploymentId, r.id)} aria-label={`Revision ${r.id}`}>
          {shortId(r.id)}
        </a>
        <strong className={`status-${r.status}`}>{r.status}</strong>
        <span className="muted">{when(r.created_at)}</span>
        {r.commit_sha && <code className="muted">{r.commit_sha.slice(0, 10)}</code>}
        {r.redeploy_of && <span className="muted">redeploy of {shortId(r.redeploy_of)}</span>}
      </div>
      <ol aria-label={`Status history of revision ${shortId(r.id)}`} className="deployment-steps">
        {r.status_history.map((s) => (
          <li key={`${s.status}-${s.at}`} className={`deployment-step deployment-${statusKind(s.status)}`}>
            <span>{s.status}</span> <time dateTime={s.at}>{time(s.at)}</time>
          </li>
        ))}
      </ol>
      {r.error && <p role="alert">{r.error}</p>}
      {r.graphs.length > 0 && (
        <p className="muted">
          Graphs: {r.graphs.map((g) => `${g.graph_id} (${g.nodes.length} nodes)`).join(", ")}
        </p>
      )}
    </li>
  );
}
