import { config } from "../../config.ts";

// A deployment's own origin: a host of its own, `<deployment_id>.localhost` (the local cloud; browsers resolve any
// `*.localhost` to loopback) or `<deployment_id>.<AGENT_ORIGIN_DOMAIN>` (the local cloud and AWS, where a
// wildcard custom domain sends every such host to the agent router). Its agent server answers there at the root,
// so the local gateway and the AWS router both read the deployment from Host here and serve
// `/agents/<deployment_id><path>` for `<path>`.

/** The deployment a Host names as its own origin, or undefined for any other host. */
export function deploymentOfHost(host: string | undefined): string | undefined {
  if (!host || host.length > 300) return undefined;
  const name = host.toLowerCase().replace(/:\d{1,5}$/, "");
  const domain = config.agentOriginDomain;
  for (const suffix of ["localhost", ...(domain ? [domain] : [])]) {
    if (!name.endsWith(`.${suffix}`)) continue;
    const label = name.slice(0, -suffix.length - 1);
    if (/^[a-z0-9][a-z0-9-]{0,62}$/.test(label)) return label;
  }
  return undefined;
}

/** The platform's path for a deployment's own-origin path (`/x` → `/agents/<id>/x`). */
export const agentPathAtOwnOrigin = (deploymentId: string, path: string): string =>
  `/agents/${deploymentId}${path.startsWith("/") ? path : `/${path}`}`;

/** The deployment an agent-server path names (`/agents/<id>/…`), if it is one. */
export function agentDeploymentOf(path: string): string | undefined {
  const m = /^\/agents\/([^/]+)(?:\/|$)/.exec(path);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}
