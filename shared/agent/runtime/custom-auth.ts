import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ArtifactManifest } from "../../build/bundle.ts";
import { HttpError } from "../../errors.ts";
import { type AuthHandlers, authFailure, OPERATOR, runAs, toAuthUser } from "../auth/scope.ts";

// Custom auth in a deployment's runtime (langgraph.json `auth.path`): the runtime imports the deployment's
// `Auth` from its artifact, and runs each request as the user it names. The platform's router (or the local
// gateway) tells how the request was let in:
// - "operator": a platform API key of the deployment's workspace. `authenticate` is not called; the `on`
//   handlers see the reference's Studio user (`isStudioUser(user)` is true), so a handler decides what
//   operators see, as on the reference server.
// - "custom": no platform key (or `auth.disable_studio_auth`): the deployment's `authenticate` decides, from
//   the request's own headers (an app's end-user token), and its error is the answer (401 by default).
// A deployment without `auth.path` has no handlers: every request is the operator's, unscoped, as before.

/** How the router let a request in. */
export type RouterAuth = "operator" | "custom";

/** Each artifact folder's Auth handlers, imported once. */
const loaded = new Map<string, Promise<AuthHandlers | undefined>>();

/** The deployment's Auth handlers, imported from the artifact in `dir` once (none without `auth.path`). */
export function loadCustomAuth(dir: string): Promise<AuthHandlers | undefined> {
  const known = loaded.get(dir);
  if (known) return known;
  const load = (async () => {
    const manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as ArtifactManifest;
    if (!manifest.auth) return undefined;
    const mod = await import(pathToFileURL(join(dir, manifest.auth.file)).href);
    const auth = mod[manifest.auth.export_name] as { "~handlerCache"?: AuthHandlers } | undefined;
    const handlers = auth?.["~handlerCache"];
    if (!handlers || typeof handlers !== "object")
      throw new Error(
        `auth.path: the export ${manifest.auth.export_name} is not an Auth of @langchain/langgraph-sdk/auth`,
      );
    return handlers;
  })();
  loaded.set(dir, load);
  load.catch(() => {
    if (loaded.get(dir) === load) loaded.delete(dir);
  });
  return load;
}

/** What of a request the deployment's `authenticate` may see. */
export interface AuthRequestInput {
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  /** The query string, without `?`. */
  query?: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The web Request the deployment's `authenticate` receives: the path as the reference server sees it (without
 * `/agents/{deployment_id}`), the query and the headers the client sent (no platform key: the router strips it).
 */
export function authRequest(input: AuthRequestInput): Request {
  // One leading slash: "//x" or "/\\x" would read as a host (and credentials) in a URL.
  const path = (input.path.replace(/^\/agents\/[^/]+/, "") || "/").replace(/^[/\\]+/, "/");
  const headers = new Headers();
  for (const [k, v] of Object.entries(input.headers))
    if (v !== undefined) {
      try {
        headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      } catch {
        // A header value a web Request refuses is not one an authenticate can use.
      }
    }
  const host = headers.get("host") ?? "localhost";
  const proto = headers.get("x-forwarded-proto") === "https" ? "https" : "http";
  const query = input.query ? `?${input.query}` : "";
  try {
    return new Request(new URL(`${path}${query}`, `${proto}://${host}`), { method: input.method, headers });
  } catch {
    // A host or path no URL (or Request) takes: the path as a URL's pathname setter escapes it, on a neutral
    // origin.
    const url = new URL("http://localhost/");
    url.pathname = path;
    return new Request(url, { method: input.method, headers });
  }
}

/**
 * Runs `fn` for a request under the deployment's custom auth: as the user `authenticate` names, or as the
 * operator. Throws the HttpError the authentication asks for (401 when `authenticate` throws something else).
 */
export async function withRequestAuth<T>(
  dir: string,
  how: RouterAuth,
  request: AuthRequestInput,
  fn: () => Promise<T>,
): Promise<T> {
  const handlers = await loadCustomAuth(dir);
  // Without a platform key only the deployment's own authenticate can let a request in.
  if (!handlers) {
    if (how === "custom") throw new HttpError(401, "Unauthorized");
    return fn();
  }
  if (how === "operator") return runAs(OPERATOR, handlers, fn);
  if (!handlers.authenticate) throw new HttpError(401, "Unauthorized");
  let user: ReturnType<typeof toAuthUser>;
  try {
    user = toAuthUser(await handlers.authenticate(authRequest(request)));
  } catch (err) {
    throw authFailure(err, 401);
  }
  return runAs(user, handlers, fn);
}
