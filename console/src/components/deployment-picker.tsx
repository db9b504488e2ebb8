import { useApi } from "../hooks.ts";
import { href } from "../router.ts";
import type { Deployment, Page } from "../wire.ts";

/** A section's first page when no deployment is named: the deployments, each a link into the section. */
export function DeploymentPicker(props: {
  section: string;
  title: string;
  intro: string;
  className: string;
}) {
  const { data, error, loading } = useApi<Page<Deployment>>("/v2/deployments?limit=100");
  return (
    <section className={props.className}>
      <h1>{props.title}</h1>
      <p>{props.intro} Choose a deployment:</p>
      {error && <p role="alert">{error}</p>}
      {loading && <p className="muted">Loading…</p>}
      {data?.resources.length === 0 && (
        <p className="muted">
          No deployments yet: create one in <a href={href("deployments")}>Deployments</a>.
        </p>
      )}
      <ul aria-label="Deployments">
        {data?.resources.map((d) => (
          <li key={d.id}>
            <a href={href(props.section, d.id)}>{d.name}</a> <span className="muted">{d.status}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
