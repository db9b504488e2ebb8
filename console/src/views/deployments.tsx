import { useState } from "react";
import { when } from "../format.ts";
import { useApi } from "../hooks.ts";
import { href } from "../router.ts";
import type { Deployment, Page } from "../wire.ts";
import { repoOf } from "./deployment-data.ts";
import { DeploymentPage } from "./deployment-page.tsx";

// Deployments (issue 18 item 3): `#/deployments` lists them; `#/deployments/<id>[/<revision id>]` is a
// deployment's page (revisions as a timeline, a revision's build and deploy logs, secrets by name).
export function Deployments({ route }: { route: string[] }) {
  if (route[0]) return <DeploymentPage id={route[0]} revisionId={route[1]} />;
  return <DeploymentList />;
}

const LIMIT = 20;

function DeploymentList() {
  const [offset, setOffset] = useState(0);
  const [filter, setFilter] = useState("");
  const q = new URLSearchParams({ limit: String(LIMIT), offset: String(offset) });
  if (filter) q.set("name_contains", filter);
  const list = useApi<Page<Deployment>>(`/v2/deployments?${q}`);
  const rows = list.data?.resources ?? [];
  return (
    <>
      <h1>Deployments</h1>
      <form
        className="deployment-filter"
        aria-label="Filter deployments"
        onSubmit={(e) => {
          e.preventDefault();
          const value = new FormData(e.currentTarget).get("name");
          setOffset(0);
          setFilter(typeof value === "string" ? value.trim() : "");
        }}
      >
        <label>
          Name contains
          <input name="name" defaultValue={filter} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {list.error && <p role="alert">{list.error}</p>}
      {list.data && rows.length === 0 && <p className="muted">No deployments{filter ? " match" : " yet"}.</p>}
      {rows.length > 0 && (
        <div className="deployment-scroll">
          <table aria-label="Deployments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" className="hide-narrow">
                  Source
                </th>
                <th scope="col" className="hide-narrow">
                  Secrets
                </th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <th scope="row">
                    <a href={href("deployments", d.id)}>{d.name}</a>
                  </th>
                  <td className={`status-${d.status}`}>{d.status}</td>
                  <td className="hide-narrow">{repoOf(d)}</td>
                  <td className="hide-narrow">{d.secrets.length}</td>
                  <td>{when(d.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Pages of deployments" className="deployment-actions">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - LIMIT))}>
          Previous
        </button>
        <button type="button" disabled={rows.length < LIMIT} onClick={() => setOffset(offset + LIMIT)}>
          Next
        </button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </nav>
    </>
  );
}
