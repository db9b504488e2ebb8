import fc from "fast-check";
import { loadHandler } from "../functions/modules/routes.ts";
import { type MountedRoute, mountedRoutes } from "../functions/routes.ts";
import { brokenQuery, broken as brokenValue, jsonSchemaOf, nasty } from "./schema-arbitrary.ts";

// Issue 16, item 1: every route of the manifest, fuzzed from its own zod schemas (so a new route is covered
// without anyone remembering) against a running platform. The test (test/route-fuzz.test.ts) runs a small
// sweep; `npm run bench -- reliability` calls fuzzRoutes with many more runs. Rules checked on every answer:
// never a 5xx, every 4xx has a JSON body, every 422 is {"detail":[{loc,msg,type}]}.

/** Real ids for the path parameters, by parameter name; `run_id` by the API it belongs to. */
export type FuzzIds = Partial<Record<string, string>>;

export interface FuzzOptions {
  base: string;
  auth: Record<string, string>;
  ids: FuzzIds;
  /** Requests per route. */
  runs: number;
  seed: number;
  /** Only the routes this keeps (all by default). */
  only?: (r: MountedRoute) => boolean;
  /** Requests in flight at once (routes run side by side; destructive ones alone, last). */
  concurrency?: number;
}

export interface FuzzFailure {
  route: string;
  request: string;
  status: number | "timeout";
  answer: string;
  rule: string;
}

export interface FuzzResult {
  routes: number;
  requests: number;
  fiveXX: number;
  failures: FuzzFailure[];
  /** Answers by status class, for the summary. */
  statuses: Record<string, number>;
}

interface Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

// Nested far past any limit, as text: building such a value and stringifying it would overflow this stack too.
const DEEP = ["[".repeat(20_000) + "]".repeat(20_000), `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`];
const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);
const REQUEST_TIMEOUT_MS = 30_000;

const badId = fc.oneof(
  fc.uuid(),
  fc.constantFrom(
    "x",
    "-1",
    "0",
    "..",
    "%00",
    "a#b",
    "a.b",
    "__proto__",
    "constructor",
    "valueOf",
    " ",
    "🦜",
    "null",
  ),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
  fc.integer({ min: 300, max: 3000 }).map((n) => "z".repeat(n)),
);

function idArb(route: MountedRoute, param: string, ids: FuzzIds): fc.Arbitrary<string> {
  const key =
    param === "run_id"
      ? route.path.startsWith("/agents")
        ? "agent_run_id"
        : route.path.includes("bulk-exports")
          ? "export_run_id"
          : "trace_run_id"
      : param;
  const real = ids[key];
  return real
    ? fc.oneof({ weight: 4, arbitrary: fc.constant(real) }, { weight: 1, arbitrary: badId })
    : badId;
}

const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,20}$/);
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,200}$/);

function requestArb(
  route: MountedRoute,
  ids: FuzzIds,
  spec: Awaited<ReturnType<typeof loadHandler>>["spec"],
) {
  const params = [...route.mountPath.matchAll(/\{([\w+]+)\}/g)].map((m) => m[1]!);
  const pathArb = fc
    .tuple(
      ...params.map((p) =>
        p === "proxy+" ? fc.array(badId, { minLength: 1, maxLength: 3 }) : idArb(route, p, ids),
      ),
    )
    .map((values) =>
      params.reduce(
        (path, p, i) =>
          path.replace(
            `{${p}}`,
            Array.isArray(values[i])
              ? (values[i] as string[]).map(encodeURIComponent).join("/")
              : encodeURIComponent(values[i] as string),
          ),
        route.mountPath,
      ),
    );
  const body = spec.body && !spec.rawBody ? jsonSchemaOf(spec.body) : undefined;
  const bodyArb = fc.oneof(
    { weight: 8, arbitrary: brokenValue(body).map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("", "{", "[1,", "nul", '{"a":1}}', "\u0000\u00ff", "😀", ...DEEP),
    },
    { weight: 1, arbitrary: nasty.map((v) => JSON.stringify(v)) },
  );
  const methodArb =
    route.method === "ANY"
      ? fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE")
      : fc.constant(route.method);
  return fc
    .record({
      method: methodArb,
      path: pathArb,
      query: brokenQuery(spec.query ? jsonSchemaOf(spec.query) : undefined),
      body: bodyArb,
      key: fc.oneof(
        { weight: 12, arbitrary: fc.constant("valid") },
        { weight: 1, arbitrary: fc.constantFrom("missing", "bogus") },
      ),
      contentType: fc.constantFrom(
        "application/json",
        "application/json",
        "text/plain",
        "",
        "application/json; charset=latin1",
        "multipart/form-data; boundary=x",
      ),
      extra: fc.dictionary(headerName, headerValue, { maxKeys: 3 }),
    })
    .map(({ method, path, query, body, key, contentType, extra }): Request => {
      const headers: Record<string, string> = { ...extra };
      if (key === "valid") Object.assign(headers, auth(ids));
      else if (key === "bogus") Object.assign(headers, { ...auth(ids), "X-Api-Key": "bogus" });
      if (contentType) headers["content-type"] = contentType;
      const qs = new URLSearchParams(query).toString();
      return {
        method,
        path: `${path}${qs ? `?${qs}` : ""}`,
        headers,
        body: METHODS_WITH_BODY.has(method) ? body : undefined,
      };
    });
}

// The API key travels in ids so requestArb stays a pure function of its inputs.
const auth = (ids: FuzzIds): Record<string, string> => JSON.parse(ids.__auth ?? "{}");

const cut = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** The rules an answer must keep; the first it breaks, or undefined. */
export function brokenRule(status: number, text: string): string | undefined {
  if (status >= 500) return "never a 5xx";
  if (status < 400) return undefined;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return "every 4xx has a JSON body";
  }
  if (status !== 422) return undefined;
  const ok =
    Array.isArray(body?.detail) &&
    body.detail.length > 0 &&
    body.detail.every(
      (d: any) => Array.isArray(d?.loc) && typeof d.msg === "string" && typeof d.type === "string",
    );
  return ok ? undefined : 'every 422 is {"detail":[{loc,msg,type}]}';
}

async function send(base: string, route: MountedRoute, req: Request): Promise<FuzzFailure | number> {
  const describe = () => `${req.method} ${cut(req.path, 200)} ${req.body !== undefined ? cut(req.body) : ""}`;
  try {
    const res = await fetch(base + req.path, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    // A stream that started is not read to its end: its first answer is what is checked.
    const streaming = res.ok && res.headers.get("content-type")?.includes("text/event-stream");
    const text = streaming ? "" : await res.text();
    if (streaming) await res.body?.cancel();
    const rule = brokenRule(res.status, text);
    return rule
      ? { route: route.routeKey, request: describe(), status: res.status, answer: cut(text), rule }
      : res.status;
  } catch (err) {
    return {
      route: route.routeKey,
      request: describe(),
      status: "timeout",
      answer: String((err as Error).message),
      rule: "answers within 30 s",
    };
  }
}

/** Deletions and the like go last, one at a time, so the others meet the real ids while they exist. */
const destructive = (r: MountedRoute) => r.method === "DELETE" || /prune|purge|cancel/.test(r.handler);

function seedOf(routeKey: string, seed: number): number {
  let h = seed | 0;
  for (const c of routeKey) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

/** Fuzzes every mounted route (of `only`), `runs` requests each; the figures and every broken rule. */
export async function fuzzRoutes(o: FuzzOptions): Promise<FuzzResult> {
  const ids = { ...o.ids, __auth: JSON.stringify(o.auth) };
  const routes = mountedRoutes().filter(o.only ?? (() => true));
  const result: FuzzResult = { routes: routes.length, requests: 0, fiveXX: 0, failures: [], statuses: {} };
  const fuzzRoute = async (route: MountedRoute) => {
    const { spec } = await loadHandler(route);
    const requests = fc.sample(requestArb(route, ids, spec), {
      numRuns: o.runs,
      seed: seedOf(route.routeKey, o.seed),
    });
    for (const req of requests) {
      const r = await send(o.base, route, req);
      result.requests++;
      const status = typeof r === "number" ? r : r.status;
      const cls = typeof status === "number" ? `${Math.floor(status / 100)}xx` : status;
      result.statuses[cls] = (result.statuses[cls] ?? 0) + 1;
      if (typeof status === "number" && status >= 500) result.fiveXX++;
      if (typeof r !== "number") result.failures.push(r);
    }
  };
  const first = routes.filter((r) => !destructive(r));
  // The deployment goes last of all: every agent route needs it.
  const last = routes
    .filter(destructive)
    .sort(
      (a, b) => Number(a.path.startsWith("/v2/deployments")) - Number(b.path.startsWith("/v2/deployments")),
    );
  let next = 0;
  const worker = async () => {
    while (next < first.length) await fuzzRoute(first[next++]!);
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 3 }, worker));
  for (const r of last) await fuzzRoute(r);
  return result;
}

/** One line for logs and the bench summary. */
export const fuzzSummary = (r: FuzzResult) =>
  `route fuzz: ${r.routes} routes, ${r.requests} requests tried, ${r.fiveXX} 5xx found, ${r.failures.length} broken rules (${Object.entries(
    r.statuses,
  )
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ")})`;
