import { type MountedRoute, mountedRoutes } from "../functions/routes.ts";
import {
  bodyFor,
  idFor,
  idsOutsidePath,
  KEYED_WRITES,
  methodsOf,
  NOT_IDS,
  OWN_READ_NOT_2XX,
  type Owner,
  paramsOf,
  READ_POST,
} from "./isolation-requests.ts";
import type { DeploymentData, WorkspaceData } from "./isolation-seed.ts";

// Issue 16, item 2: the tenant and deployment isolation sweep, driven from the route manifest so a new route is
// covered without anyone remembering. For every authenticated route with path parameters, workspace A calls it
// with workspace B's ids (and, under its deployment A1, with A2's: the other deployment of the same workspace):
// the answer is a 404 or 403, never a 2xx; A's key claiming B's workspace (X-Tenant-Id) is refused too. Ids
// outside the path (queries, bodies) are probed as well. Every list, search and read route A calls with its own
// ids must show none of the other's ids or markers; every answer is grepped for every secret. The test
// (test/isolation-sweep.test.ts) and `npm run bench -- reliability` run it through sweepPlatform (isolation-run.ts).

export interface Finding {
  route: string;
  request: string;
  status: number | "timeout";
  rule: string;
  /** The other owner's ids, markers or the secrets the answer held. */
  found?: string[];
}

export interface IsolationResult {
  /** Authenticated routes of the manifest the sweep called (mounted paths: /api-host twins count apart). */
  routes: number;
  requests: number;
  /** Routes × resources: for each request carrying another owner's ids, how many of them it carried. */
  tried: number;
  /** Answers to another owner's ids that did not refuse them (a 2xx is a leak; a 5xx, 422 or 409 a finding). */
  leaks: Finding[];
  /** Answers (any) that held another owner's ids or markers. */
  shown: Finding[];
  /** Answers that held a secret. */
  secrets: Finding[];
  /** Own reads (the control: the sweep's ids are the right ones) that did not answer 2xx. */
  ownFailures: Finding[];
  /** Status counts of the requests with another owner's ids. */
  statuses: Record<string, number>;
  /** When the sweep began (epoch ms): whatever changed after it, the sweep did. */
  startedAt: number;
}

type Call = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) => Promise<{ status: number | "timeout"; text: string }>;

/** Every id and marker of a deployment's agent data. */
const agentValues = (d: DeploymentData) => [
  d.marker,
  d.assistant_id,
  d.thread_id,
  d.agent_run_id,
  d.checkpoint_id,
  d.cron_id,
  d.store_namespace[0],
  d.store_key,
];
/** Everything of a workspace: its ids, markers, deployments and their agent data. */
const everything = (w: WorkspaceData) => [
  w.marker,
  ...Object.values(w.ids),
  ...w.deployments.flatMap((d) => [d.deployment_id, d.revision_id, ...agentValues(d)]),
];

export interface SweepOptions {
  call: Call;
  /** The two workspaces, each with two deployments (seedIsolation). */
  data: [WorkspaceData, WorkspaceData];
  /** Only these routes (all authenticated ones by default). */
  only?: (r: MountedRoute) => boolean;
}

export async function isolationSweep(opts: SweepOptions): Promise<IsolationResult> {
  const sweep = new IsolationSweep(opts);
  const [a, b] = opts.data;
  await sweep.ownReads(a, b);
  await sweep.ownReads(b, a);
  await sweep.crossSweep(a, b);
  await sweep.crossSweep(b, a);
  // After the sweep: the same reads still answer, so nothing of either workspace was changed or deleted.
  await sweep.ownReads(a, b);
  await sweep.ownReads(b, a);
  sweep.result.routes = sweep.touched.size;
  return sweep.result;
}

/** One sweep's state: the routes it calls, what it found, the routes it touched. */
class IsolationSweep {
  readonly result: IsolationResult = {
    routes: 0,
    requests: 0,
    tried: 0,
    leaks: [],
    shown: [],
    secrets: [],
    ownFailures: [],
    statuses: {},
    startedAt: Date.now(),
  };
  readonly routes: MountedRoute[];
  readonly touched = new Set<string>();
  private readonly secrets: string[];

  constructor(private readonly opts: SweepOptions) {
    this.routes = mountedRoutes().filter((r) => r.auth && (opts.only?.(r) ?? true));
    this.secrets = opts.data.flatMap((w) => w.secrets);
  }

  /** Sends one request as `caller`; checks the answer for `foreign` values and for secrets. */
  async send(
    caller: WorkspaceData,
    r: MountedRoute,
    method: string,
    path: string,
    body: unknown,
    foreign: string[],
    headers = caller.ws.headers,
  ) {
    this.touched.add(r.routeKey);
    this.result.requests++;
    const answer = await this.opts.call(method, path, headers, body);
    const request = `${method} ${path}${body === undefined ? "" : ` ${JSON.stringify(body)}`}`;
    // An id the request itself carried may come back (a 404 naming it) without telling anything.
    const shown = foreign.filter((v) => v && answer.text.includes(v) && !request.includes(v));
    if (shown.length)
      this.result.shown.push({
        route: r.routeKey,
        request,
        status: answer.status,
        rule: "shown",
        found: shown,
      });
    const held = this.secrets.filter((s) => answer.text.includes(s));
    if (held.length)
      this.result.secrets.push({
        route: r.routeKey,
        request,
        status: answer.status,
        rule: "secret in body",
        found: held,
      });
    return { ...answer, request };
  }

  /** What `caller` must never see on route `r` (under its deployment `dep` for agent routes). */
  foreignFor(caller: WorkspaceData, other: WorkspaceData, r: MountedRoute, dep: DeploymentData) {
    const own = new Set(r.group === "agent" ? [caller.marker, ...agentValues(dep)] : everything(caller));
    const theirs =
      r.group === "agent"
        ? [
            ...everything(other),
            ...caller.deployments
              .filter((d) => d !== dep)
              .flatMap((d) => [d.deployment_id, ...agentValues(d)]),
          ]
        : everything(other);
    return theirs.filter((v) => !own.has(v));
  }

  /** The route with every parameter filled: the first from `parent`, the rest from `child`. */
  pathOf(r: MountedRoute, parent: Owner, child: Owner) {
    return paramsOf(r.mountPath).reduce(
      (p, param, i) => p.replace(`{${param}}`, encodeURIComponent(idFor(r, param, i === 0 ? parent : child))),
      r.mountPath,
    );
  }

  resourcesIn(r: MountedRoute, from: number) {
    return paramsOf(r.mountPath)
      .slice(from)
      .filter((p) => !(p in NOT_IDS)).length;
  }

  /** One request with another owner's ids; `refuse`: its answer must refuse them. */
  async tryForeign(t: {
    caller: WorkspaceData;
    other: WorkspaceData;
    r: MountedRoute;
    method: string;
    path: string;
    body: unknown;
    resources: number;
    expect?: "refuse" | "hide";
    refusals?: number[];
    headers?: Record<string, string>;
  }) {
    const { caller, other, r, method, path, body, expect = "refuse", refusals = [403, 404] } = t;
    const foreign = this.foreignFor(caller, other, r, caller.deployments[0]);
    const answer = await this.send(caller, r, method, path, body, foreign, t.headers);
    this.result.tried += t.resources;
    this.result.statuses[answer.status] = (this.result.statuses[answer.status] ?? 0) + 1;
    const refusedHere =
      refusals.includes(answer.status as number) ||
      (KEYED_WRITES.has(r.handler) && answer.status === 202) ||
      // JSON-RPC (A2A) refuses in the answer: an error and no this.result.
      (r.handler === "agent/a2a/rpc" && answer.status === 200 && jsonRpcError(answer.text));
    // A 409 to a request that may answer tells that the other owner's id exists.
    if (expect === "refuse" ? !refusedHere : answer.status === 409)
      this.result.leaks.push({
        route: r.routeKey,
        request: answer.request,
        status: answer.status,
        rule:
          typeof answer.status === "number" && answer.status < 300
            ? "leak: 2xx"
            : expect === "refuse"
              ? "not 404/403"
              : "409: the other's id exists",
        found: [answer.text.slice(0, 300)],
      });
  }

  /** Own reads: every GET (but streams) and read-only POST with the caller's own ids; the control pass. */
  async ownReads(caller: WorkspaceData, other: WorkspaceData) {
    const own = { ws: caller, dep: caller.deployments[0] };
    // A route that needs ids in its query or body gets the caller's own, from the probes.
    const probes = idsOutsidePath(own);
    // In batches, as the cross sweep: the first pass starts each route's function cold, and some sixty cold
    // starts at once on two cores outlast a request's timeout (Lambda would start them on machines of their own).
    await inBatches(
      this.routes
        .filter((r) => !r.stream && (r.method === "GET" || (r.method === "POST" && READ_POST.test(r.path))))
        .map((r) => ({
          run: async () => {
            const probe = probes.find((p) => p.handler === r.handler && p.method === r.method);
            const answer = await this.send(
              caller,
              r,
              r.method,
              this.pathOf(r, own, own) + (probe?.query ? `?${probe.query}` : ""),
              probe?.body ?? bodyFor(r, r.method, own),
              this.foreignFor(caller, other, r, own.dep),
            );
            const ok = typeof answer.status === "number" && answer.status < 300;
            if (!ok && !OWN_READ_NOT_2XX.has(r.handler))
              this.result.ownFailures.push({
                route: r.routeKey,
                request: answer.request,
                status: answer.status,
                rule: "own read not 2xx",
                found: [answer.text.slice(0, 300)],
              });
          },
        })),
      8,
    );
  }

  /** `caller` with `other`'s ids, then under its own deployment with its other deployment's ids. */
  async crossSweep(caller: WorkspaceData, other: WorkspaceData) {
    const own: Owner = { ws: caller, dep: caller.deployments[0] };
    const sibling: Owner = { ws: caller, dep: caller.deployments[1] };
    const theirs: Owner = { ws: other, dep: other.deployments[0] };
    const jobs: { method: string; creates?: boolean; run: () => Promise<void> }[] = [];
    for (const r of this.routes) {
      const params = paramsOf(r.mountPath);
      if (params.length === 0) continue;
      for (const method of methodsOf(r)) {
        const add = (parent: Owner, child: Owner, from: number, headers?: Record<string, string>) =>
          jobs.push({
            method,
            run: () =>
              this.tryForeign({
                caller,
                other,
                r,
                method,
                path: this.pathOf(r, parent, child),
                body: bodyFor(r, method, parent),
                resources: this.resourcesIn(r, from),
                headers,
                // A key naming a workspace it does not belong to is refused before anything is looked up.
                refusals: headers ? [401, 403, 404] : [403, 404],
              }),
          });
        // Every id the other workspace's; then the same with the caller's key claiming the other workspace.
        add(theirs, theirs, 0);
        add(theirs, theirs, 0, { ...caller.ws.headers, "X-Tenant-Id": other.ws.tenant });
        if (params.length > 1 && this.resourcesIn(r, 1) > 0) {
          // Own parent, the other workspace's child; and for a deployment, its sibling's child.
          add(own, theirs, 1);
          if (params[0] === "deployment_id") add(own, sibling, 1);
        }
      }
    }
    for (const x of idsOutsidePath(theirs).concat(idsOutsidePath(sibling))) {
      const r = this.routes.find((m) => m.handler === x.handler && !m.mountPath.startsWith("/api-host"));
      if (!r) continue;
      // Agent routes under the caller's own deployment; the sibling's ids only matter there.
      if (r.group !== "agent" && x.ids.some((id) => everything(caller).includes(id))) continue;
      const path = this.pathOf(r, own, own) + (x.query ? `?${x.query}` : "");
      jobs.push({
        method: x.method,
        creates: x.cleanup !== undefined,
        run: () =>
          this.tryForeign({
            caller,
            other,
            r,
            method: x.method,
            path,
            body: x.body,
            resources: x.ids.length,
            expect: x.expect,
            // Ids in a body are input: "no such destination in the workspace" is a 422 naming the field.
            refusals: [403, 404, 422],
          }).then(async () => {
            if (x.cleanup) await this.opts.call("DELETE", `${path}/${x.cleanup}`, caller.ws.headers);
          }),
      });
    }
    // Deletes after the rest, so a delete that got through cannot hide what another request would have shown;
    // probes that create under the caller's own path (with the other's id) last, so no other request meets them.
    const reads = jobs.filter((j) => j.method !== "DELETE" && !j.creates);
    const deletes = jobs.filter((j) => j.method === "DELETE");
    await inBatches(reads, 8);
    await inBatches(deletes, 8);
    await inBatches(
      jobs.filter((j) => j.creates),
      1,
    );
  }
}

function jsonRpcError(text: string): boolean {
  try {
    const j = JSON.parse(text);
    return j.error !== undefined && j.result === undefined;
  } catch {
    return false;
  }
}

async function inBatches(jobs: { run: () => Promise<void> }[], size: number) {
  for (let i = 0; i < jobs.length; i += size) await Promise.all(jobs.slice(i, i + size).map((j) => j.run()));
}

/** A Call over fetch to `base`; SSE answers are read to their end, every request within `timeoutMs`. */
export function sweepCall(base: string, timeoutMs = 15_000): Call {
  return async (method, path, headers, body) => {
    try {
      const res = await fetch(base + path, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      if ((err as Error).name === "TimeoutError") return { status: "timeout", text: "" };
      throw err;
    }
  };
}
