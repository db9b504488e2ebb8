import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { bodyBuffer, type HttpEvent, type HttpResult, json } from "../../http/event.ts";
import type { RuntimeArtifact } from "../artifact/artifact.ts";
import { HTML_SANDBOX, isPassive } from "./answer-headers.ts";

// langgraph.json `http` in a deployment's runtime: the custom routes of `http.app` (a Hono app, mounted at the
// agent server's root as the LangGraph API server mounts it: its routes take precedence over the built-in
// ones) and the `http.disable_*` flags (a disabled group answers 404, as if it were not there).

/** What the runtime needs of a Hono app: its fetch, and a not-found handler to learn that it has no route. */
interface FetchApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
  notFound(handler: (c?: NotFoundContext) => Response): unknown;
}

/** The built-in route groups each `http.disable_*` flag removes, by handler folder (functions/agent/<folder>). */
const DISABLED_BY: Record<string, string> = {
  assistants: "disable_assistants",
  threads: "disable_threads",
  runs: "disable_runs",
  crons: "disable_runs",
  store: "disable_store",
  system: "disable_meta",
  ui: "disable_ui",
  mcp: "disable_mcp",
  a2a: "disable_a2a",
};

/** The flag that removes a built-in route (`agent/store/put-item` → disable_store), if any. */
export function disableFlagOf(handler: string): string | undefined {
  const [top, folder] = handler.split("/");
  return top === "agent" && folder ? DISABLED_BY[folder] : undefined;
}

/** The app answers with this header (and a per-process value) when none of its routes matched. */
const NO_ROUTE_HEADER = "x-platform-no-custom-route";
const NO_ROUTE = randomUUID();
/** Each runtime artifact's app, imported once. */
const apps = new WeakMap<RuntimeArtifact, Promise<FetchApp | undefined>>();

/** Hono's context as the not-found handler gets it: the request and the bodies middleware parsed. */
interface NotFoundContext {
  req?: { raw?: Request; bodyCache?: { json?: Promise<unknown> } };
}
/**
 * The JSON bodies the app's middleware parsed (Hono's `bodyCache.json`) of requests none of its routes answered,
 * by the request the app was given: a middleware that changed that object (adding `config.configurable` keys,
 * say) has the built-in route read the changed body, as it would behind the reference's app.
 */
const parsedBodies = new WeakMap<Request, Promise<unknown>>();

/**
 * The objects `c.req.json()` gave the app's middleware for a request. Hono from 4.13 caches the body's text, not
 * the parsed object: each `c.req.json()` parses that text again, by `.then` on the promise `raw.text()` returned.
 * That promise is this one, so every object parsed from it is seen here, and the one a middleware changed in place
 * (the reference's test app adds `config.configurable` keys so) is the body the built-in route reads.
 */
class BodyText extends Promise<string> {
  // Promise's species would make `then`'s result a BodyText whose constructor takes a string.
  static override get [Symbol.species]() {
    return Promise;
  }
  readonly parsed: object[] = [];
  // biome-ignore lint/suspicious/noThenProperty: a promise subclass's own then, seeing what each reader parsed.
  override then<A = string, B = never>(
    onFulfilled?: ((text: string) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    const seen = (text: string) => {
      const out = (onFulfilled as (text: string) => A | PromiseLike<A>)(text);
      if (out !== null && typeof out === "object" && typeof (out as { then?: unknown }).then !== "function")
        this.parsed.push(out);
      return out;
    };
    return super.then(onFulfilled ? seen : onFulfilled, onRejected);
  }
}
const bodyTexts = new WeakMap<Request, BodyText>();

/** The request's body as the app's middleware left it, if one changed it; undefined: the body as it came. */
async function rewrittenBody(request: Request, original: string | undefined): Promise<string | undefined> {
  const cached = parsedBodies.get(request);
  if (cached) return JSON.stringify(await cached);
  const text = bodyTexts.get(request);
  if (!text || original === undefined) return undefined;
  let before: string;
  try {
    before = JSON.stringify(JSON.parse(original));
  } catch {
    return undefined;
  }
  // The last object a middleware changed: each read is a fresh parse, so the unchanged ones equal the original.
  const changed = text.parsed.map((o) => JSON.stringify(o)).filter((s) => s !== before);
  return changed.at(-1);
}

function loadApp(artifact: RuntimeArtifact): Promise<FetchApp | undefined> {
  const loaded = apps.get(artifact);
  if (loaded) return loaded;
  const app = (async () => {
    const entry = (await artifact.manifest())?.http_app;
    if (!entry) return undefined;
    const mod = await import(pathToFileURL(join(artifact.dir, entry.file)).href);
    const found = mod[entry.export_name] as Partial<FetchApp> | undefined;
    if (typeof found?.fetch !== "function" || typeof found.notFound !== "function")
      throw new Error(`http.app: the export ${entry.export_name} is not a Hono app`);
    found.notFound((c?: NotFoundContext) => {
      const parsed = c?.req?.bodyCache?.json;
      if (c?.req?.raw && parsed) parsedBodies.set(c.req.raw, parsed);
      return new Response(null, { status: 404, headers: { [NO_ROUTE_HEADER]: NO_ROUTE } });
    });
    return found as FetchApp;
  })();
  apps.set(artifact, app);
  app.catch(() => {
    if (apps.get(artifact) === app) apps.delete(artifact);
  });
  return app;
}

/** The request as the app sees it: the path without `/agents/{deployment_id}` (the app is mounted at the root). */
function appRequest(event: HttpEvent, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(event.headers ?? {}))
    if (v !== undefined && !/^(content-length|transfer-encoding|connection)$/i.test(k)) headers.set(k, v);
  const path = (event.rawPath ?? "/").replace(/^\/agents\/[^/]+/, "") || "/";
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || "http";
  const host = headers.get("host") ?? event.requestContext?.domainName ?? "localhost";
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const method = event.requestContext?.http?.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : bodyBuffer(event);
  const request = new Request(`${proto}://${host}${path}${query}`, {
    method,
    headers,
    body: body?.length ? new Uint8Array(body) : undefined,
    signal,
  });
  const readText = request.text.bind(request);
  Object.defineProperty(request, "text", {
    value: () => {
      const text = new BodyText((resolve, reject) => {
        readText().then(resolve, reject);
      });
      bodyTexts.set(request, text);
      return text;
    },
  });
  return request;
}

const TEXT = /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;
/** Answers the app streams (SSE, ndjson, Hono's stream helpers' chunked bodies) are passed on as they come. */
const STREAMED = /^(text\/event-stream|application\/x-ndjson)/i;

async function* textChunks(body: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      if (text) yield text;
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    reader.cancel().catch(() => {});
  }
}

async function toResult(res: Response, abort: AbortController, sandboxHtml: boolean): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!/^(content-length|transfer-encoding|connection)$/i.test(k)) headers[k] = v;
  });
  const type = res.headers.get("content-type") ?? "";
  // The app's documents (any answer not passive) run in an opaque origin unless langgraph.json says
  // http.html_sandbox: false (the platform sandboxes them on its shared origin whatever this says: answer-headers.ts).
  if (sandboxHtml && !isPassive(res.headers.has("content-type") ? [type] : []))
    headers["content-security-policy"] = headers["content-security-policy"]
      ? `${headers["content-security-policy"]}, ${HTML_SANDBOX}`
      : HTML_SANDBOX;
  const chunked = /chunked/i.test(res.headers.get("transfer-encoding") ?? "");
  if (res.body && (STREAMED.test(type) || chunked))
    return { statusCode: res.status, headers, stream: textChunks(res.body), onAbort: () => abort.abort() };
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!bytes.length) return { statusCode: res.status, headers, body: "" };
  const text = type === "" || TEXT.test(type);
  return text
    ? { statusCode: res.status, headers, body: bytes.toString("utf8") }
    : { statusCode: res.status, headers, body: bytes.toString("base64"), isBase64Encoded: true };
}

/**
 * The runtime's answer before the built-in routes: the custom app's, when one of its routes matches the
 * request; 404 when the request's built-in route is disabled (`http.disable_*`); else undefined (the built-in
 * route answers). `route` is the manifest route the request matched (the catch-all for unknown paths).
 */
export async function customRouteAnswer(
  artifact: RuntimeArtifact,
  event: HttpEvent,
  route: { handler: string },
): Promise<HttpResult | undefined> {
  const manifest = await artifact.manifest();
  if (!manifest) return undefined;
  const custom = manifest.http_app ? await loadApp(artifact) : undefined;
  if (custom) {
    const abort = new AbortController();
    const request = appRequest(event, abort.signal);
    const res = await custom.fetch(request, {});
    if (res.headers.get(NO_ROUTE_HEADER) !== NO_ROUTE)
      return toResult(res, abort, !manifest.html_unsandboxed);
    await res.body?.cancel();
    // The built-in route reads the body as the app's middleware left it (the event is the one it is handed).
    const original = request.method === "GET" || request.method === "HEAD" ? undefined : bodyBuffer(event);
    const rewritten = await rewrittenBody(request, original?.toString("utf8"));
    if (rewritten !== undefined) {
      event.body = rewritten;
      event.isBase64Encoded = false;
    }
  }
  const flag = disableFlagOf(route.handler);
  if (flag && manifest.http?.[flag]) return json(404, { detail: "Not Found" });
  return undefined;
}
