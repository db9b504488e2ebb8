import { shortId, when } from "../format.ts";
import { useApi, useInterval } from "../hooks.ts";
import { href } from "../router.ts";
import type { BulkExport, Destination } from "../wire.ts";
import { FINAL, useExportPages, windowText } from "./export-data.ts";
import { ExportPage } from "./export-page.tsx";

// Bulk exports (issue 18 item 2): `#/exports` lists destinations and exports; `#/exports/<id>` is an export's
// page with a live view of its runs.
export function Exports({ route }: { route: string[] }) {
  if (route[0]) return <ExportPage id={route[0]} />;
  return <ExportList />;
}

function ExportList() {
  const dests = useApi<Destination[]>("/api/v1/bulk-exports/destinations");
  const pages = useExportPages();
  const destName = new Map((dests.data ?? []).map((d) => [d.id, d.display_name]));
  // While an export on the first page is still moving, the list re-reads it every 3 s.
  const moving = pages.items.some((e) => !FINAL.has(e.status) && e.status !== "IntervalScheduled");
  useInterval(pages.reload, moving && pages.firstPageOnly ? 3000 : undefined);
  return (
    <>
      <h1>Exports</h1>
      <section aria-labelledby="destinations-heading">
        <h2 id="destinations-heading">Destinations</h2>
        {dests.error && <p role="alert">{dests.error}</p>}
        {dests.data && dests.data.length === 0 && <p className="muted">No destinations yet.</p>}
        {dests.data && dests.data.length > 0 && <DestinationTable destinations={dests.data} />}
      </section>
      <section aria-labelledby="exports-heading">
        <h2 id="exports-heading">Bulk exports</h2>
        {pages.error && <p role="alert">{pages.error}</p>}
        {!pages.loading && !pages.error && pages.items.length === 0 && (
          <p className="muted">No exports yet.</p>
        )}
        {pages.items.length > 0 && <ExportTable exports={pages.items} destName={destName} />}
        <div className="export-actions">
          {pages.hasMore && (
            <button type="button" onClick={pages.more} disabled={pages.loading}>
              Load more exports
            </button>
          )}
          <button type="button" onClick={pages.reload} disabled={pages.loading}>
            Refresh
          </button>
        </div>
      </section>
    </>
  );
}

function DestinationTable({ destinations }: { destinations: Destination[] }) {
  return (
    <div className="export-scroll">
      <table aria-label="Destinations">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Bucket</th>
            <th scope="col">Prefix</th>
            <th scope="col">Region</th>
            <th scope="col" className="hide-narrow">
              Endpoint
            </th>
            <th scope="col">Credentials</th>
          </tr>
        </thead>
        <tbody>
          {destinations.map((d) => (
            <tr key={d.id}>
              <th scope="row">{d.display_name}</th>
              <td>{d.config.bucket_name}</td>
              <td>{d.config.prefix || "—"}</td>
              <td>{d.config.region ?? "—"}</td>
              <td className="hide-narrow">{d.config.endpoint_url ?? "AWS S3"}</td>
              <td>
                {/* Key names only: the API never answers a credential's value. */}
                {d.credentials_keys.length ? d.credentials_keys.join(", ") : "none (role)"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ExportTable({
  exports,
  destName,
  label = "Bulk exports",
}: {
  exports: BulkExport[];
  destName: Map<string, string>;
  label?: string;
}) {
  return (
    <div className="export-scroll">
      <table aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Export</th>
            <th scope="col">Status</th>
            <th scope="col">Window</th>
            <th scope="col" className="hide-narrow">
              Destination
            </th>
            <th scope="col" className="hide-narrow">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {exports.map((e) => (
            <tr key={e.id}>
              <th scope="row">
                <a href={href("exports", e.id)} aria-label={`Export ${e.id}`}>
                  {shortId(e.id)}
                </a>
                {e.interval_hours ? <span className="export-tag">scheduled</span> : null}
                {e.source_bulk_export_id ? <span className="export-tag">window</span> : null}
              </th>
              <td className={`status-${e.status}`}>{e.status}</td>
              <td>{windowText(e)}</td>
              <td className="hide-narrow">
                {destName.get(e.bulk_export_destination_id) ?? shortId(e.bulk_export_destination_id)}
              </td>
              <td className="hide-narrow">{when(e.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
