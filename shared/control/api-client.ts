import type { RevisionStatus } from "../records/control.ts";

// The control plane as an operator's script calls it (`npm start -- --graph`, `npm run aws:smoke`): JSON calls
// with an API key, and a revision followed until it is live or failed.

export class ControlApiError extends Error {}

/**
 * A JSON caller of the platform at `base` with `apiKey`. `want`: the one status accepted (default: any 2xx);
 * another throws a ControlApiError with the answer.
 */
export function controlApi(base: string, apiKey: string) {
  return async <T>(method: string, path: string, body?: unknown, want?: number): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (want === undefined ? !res.ok : res.status !== want)
      throw new ControlApiError(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
export type ControlCall = ReturnType<typeof controlApi>;

/**
 * Follows a revision until it is DEPLOYED or failed (every `pollMs`, at most `timeoutMs`), then reads its build
 * and deploy logs: its final status and the logs' lines. Still building at the deadline: a ControlApiError.
 */
export async function revisionOutcome(
  call: ControlCall,
  deploymentId: string,
  revisionId: string,
  opts: { timeoutMs: number; pollMs: number },
): Promise<{ status: RevisionStatus; lines: string[] }> {
  const revision = `/v2/deployments/${deploymentId}/revisions/${revisionId}`;
  const until = Date.now() + opts.timeoutMs;
  for (;;) {
    const { status } = await call<{ status: RevisionStatus }>("GET", revision, undefined, 200);
    if (status === "DEPLOYED" || status.endsWith("FAILED")) {
      const logs = await call<{ build_log: string; deploy_log: string }>(
        "GET",
        `${revision}/logs`,
        undefined,
        200,
      );
      const lines = `${logs.build_log}\n${logs.deploy_log}`.split("\n").filter((l) => l.trim());
      return { status, lines };
    }
    if (Date.now() > until) throw new ControlApiError(`the revision is still ${status}`);
    await new Promise((r) => setTimeout(r, opts.pollMs));
  }
}
