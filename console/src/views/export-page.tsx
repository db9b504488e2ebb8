import { useCallback, useState } from "react";
import { api } from "../api.ts";
import { shortId, when } from "../format.ts";
import { useApi, useInterval } from "../hooks.ts";
import { href } from "../router.ts";
import type { BulkExport, Destination, ExportRun } from "../wire.ts";
import { dayOrTime, FINAL, windowText } from "./export-data.ts";

const LIVE_MS = 1500;
const SCHEDULE_MS = 10_000;

// An export's page: its definition, a live table of its runs (one a day), Cancel, and for a scheduled export
// the runs of the windows it spawned. Re-read every 1.5 s while the export or one of its runs is not final.
export function ExportPage({ id }: { id: string }) {
  const exp = useApi<BulkExport>(`/api/v1/bulk-exports/${id}`);
  const runs = useApi<ExportRun[]>(`/api/v1/bulk-exports/${id}/runs`);
  const scheduled = !!exp.data?.interval_hours;
  const children = useApi<ExportRun[]>(
    scheduled ? `/api/v1/bulk-exports/runs?source_bulk_export_id=${id}` : undefined,
  );
  const dest = useApi<Destination>(
    exp.data ? `/api/v1/bulk-exports/destinations/${exp.data.bulk_export_destination_id}` : undefined,
  );
  const status = exp.data?.status;
  // Something still moving (the export, a run, a spawned run): every 1.5 s. A schedule with all its windows
  // settled only waits for the next one to come due: every 10 s.
  const moving =
    !!exp.data &&
    ((!FINAL.has(exp.data.status) && exp.data.status !== "IntervalScheduled") ||
      (runs.data ?? []).some((r) => !FINAL.has(r.status)) ||
      (children.data ?? []).some((r) => !FINAL.has(r.status)));
  const waiting = exp.data?.status === "IntervalScheduled";
  const { reload: reloadExport } = exp;
  const { reload: reloadRuns } = runs;
  const { reload: reloadChildren } = children;
  const refresh = useCallback(() => {
    reloadExport();
    reloadRuns();
    if (scheduled) reloadChildren();
  }, [reloadExport, reloadRuns, reloadChildren, scheduled]);
  useInterval(refresh, moving ? LIVE_MS : waiting ? SCHEDULE_MS : undefined);

  if (exp.error && !exp.data)
    return (
      <>
        <p>
          <a href={href("exports")}>← Exports</a>
        </p>
        <h1>Export {shortId(id)}</h1>
        <p role="alert">{exp.error}</p>
      </>
    );
  if (!exp.data) return <p className="muted">Loading…</p>;
  const e = exp.data;
  return (
    <>
      <p>
        <a href={href("exports")}>← Exports</a>
      </p>
      <h1>
        Export {shortId(e.id)} <span className={`export-status status-${status}`}>{status}</span>
      </h1>
      <p role="status" aria-live="polite" className="muted">
        {moving
          ? "Live: refreshing every 1.5 s"
          : waiting
            ? "Live: scheduled, checking for new windows every 10 s"
            : "Final: no longer refreshed"}
      </p>
      <dl className="export-facts" aria-label="Export details">
        <dt>Id</dt>
        <dd>{e.id}</dd>
        <dt>Status</dt>
        <dd className={`status-${e.status}`}>{e.status}</dd>
        <dt>Window</dt>
        <dd>{windowText(e)}</dd>
        <dt>Tracing project</dt>
        <dd>{e.session_id}</dd>
        <dt>Destination</dt>
        <dd>
          {dest.data
            ? `${dest.data.display_name} (s3://${dest.data.config.bucket_name}/${dest.data.config.prefix})`
            : e.bulk_export_destination_id}
        </dd>
        <dt>Filter</dt>
        <dd>{e.filter ? <code>{e.filter}</code> : "—"}</dd>
        <dt>Format</dt>
        <dd>
          {e.format} {e.format_version}, {e.compression}
          {e.export_fields ? `; fields ${e.export_fields.join(", ")}` : ""}
        </dd>
        <dt>Created</dt>
        <dd>{when(e.created_at)}</dd>
        <dt>Finished</dt>
        <dd>{when(e.finished_at)}</dd>
        {e.source_bulk_export_id && (
          <>
            <dt>Spawned by</dt>
            <dd>
              <a href={href("exports", e.source_bulk_export_id)}>
                scheduled export {shortId(e.source_bulk_export_id)}
              </a>
            </dd>
          </>
        )}
      </dl>
      {!FINAL.has(e.status) && <CancelExport id={e.id} scheduled={scheduled} onDone={exp.reload} />}
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Runs</h2>
        {runs.error && <p role="alert">{runs.error}</p>}
        {runs.data && runs.data.length === 0 && (
          <p className="muted">
            {scheduled ? "A scheduled export runs through the exports it spawns." : "No runs yet."}
          </p>
        )}
        {runs.data && runs.data.length > 0 && <RunTable runs={runs.data} label="Runs" />}
      </section>
      {scheduled && (
        <section aria-labelledby="children-heading">
          <h2 id="children-heading">Spawned exports</h2>
          {children.error && <p role="alert">{children.error}</p>}
          {children.data && children.data.length === 0 && (
            <p className="muted">No window has come due yet.</p>
          )}
          {children.data && children.data.length > 0 && (
            <RunTable runs={children.data} label="Runs of spawned exports" withExport />
          )}
        </section>
      )}
    </>
  );
}

function RunTable({ runs, label, withExport }: { runs: ExportRun[]; label: string; withExport?: boolean }) {
  const sorted = [...runs].sort((a, b) => a.start_time.localeCompare(b.start_time));
  return (
    <div className="export-scroll">
      <table aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {withExport && <th scope="col">Export</th>}
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col">Files</th>
            <th scope="col">Retries</th>
            <th scope="col">Errors</th>
            <th scope="col" className="hide-narrow">
              Finished
            </th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((r) => {
            const files = r.metadata?.result?.exported_files ?? [];
            const errors = Object.entries(r.errors ?? {}).sort(([a], [b]) => a.localeCompare(b));
            return (
              <tr key={r.id}>
                <th scope="row">{dayOrTime(r.start_time)}</th>
                {withExport && (
                  <td>
                    <a href={href("exports", r.bulk_export_id)}>{shortId(r.bulk_export_id)}</a>
                  </td>
                )}
                <td className={`status-${r.status}`}>{r.status}</td>
                <td>{r.metadata?.result?.rows_written ?? 0}</td>
                <td>
                  {files.length === 0 ? (
                    "0"
                  ) : (
                    <details>
                      <summary>{files.length}</summary>
                      <ul className="export-files">
                        {files.map((f) => (
                          <li key={f}>
                            <code>{f}</code>
                          </li>
                        ))}
                      </ul>
                    </details>
                  )}
                </td>
                <td>{r.retry_number}</td>
                <td>
                  {errors.length === 0
                    ? "—"
                    : errors.map(([k, m]) => (
                        <p key={k} className="export-error">
                          <strong>{k}</strong>: {m}
                        </p>
                      ))}
                </td>
                <td className="hide-narrow">{when(r.finished_at)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function CancelExport({ id, scheduled, onDone }: { id: string; scheduled: boolean; onDone: () => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  if (!asking)
    return (
      <p>
        <button type="button" onClick={() => setAsking(true)}>
          Cancel export
        </button>
      </p>
    );
  return (
    <div role="alertdialog" aria-labelledby="cancel-title" aria-describedby="cancel-text" className="card">
      <h2 id="cancel-title">Cancel this export?</h2>
      <p id="cancel-text">
        {scheduled
          ? "The schedule stops: no more windows are spawned. Exports already spawned go on."
          : "Its unfinished runs stop; files already written stay in the bucket. This cannot be undone."}
      </p>
      {error && <p role="alert">{error}</p>}
      <div className="export-actions">
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setError(undefined);
            try {
              await api("PATCH", `/api/v1/bulk-exports/${id}`, { status: "Cancelled" });
              setAsking(false);
              onDone();
            } catch (e) {
              setError((e as Error).message);
            } finally {
              setBusy(false);
            }
          }}
        >
          Yes, cancel the export
        </button>
        <button type="button" disabled={busy} onClick={() => setAsking(false)}>
          Keep it
        </button>
      </div>
    </div>
  );
}
