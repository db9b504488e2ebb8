// The console's one way to the platform: the public APIs, with the API key and workspace the user entered
// (kept in the browser's session storage, sent as X-Api-Key / X-Tenant-Id). Same origin: the local gateway
// serves the console and the APIs; in AWS CloudFront routes the API paths to API Gateway.
const KEY = "console.session";

export interface Session {
  apiKey: string;
  tenantId: string;
}

export function loadSession(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? "null");
    return s && typeof s.apiKey === "string" && s.apiKey ? s : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session | undefined): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(typeof detail === "string" ? detail : `HTTP ${status}: ${JSON.stringify(detail)}`);
  }
}

export function headers(extra: Record<string, string> = {}): Record<string, string> {
  const s = loadSession();
  return {
    ...(s ? { "X-Api-Key": s.apiKey, ...(s.tenantId ? { "X-Tenant-Id": s.tenantId } : {}) } : {}),
    ...extra,
  };
}

/** A JSON call to the platform; throws ApiError with the answer's `detail` on a non-2xx. */
export async function api<T = any>(
  method: string,
  path: string,
  body?: unknown,
  opts: { signal?: AbortSignal } = {},
): Promise<T> {
  const r = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: opts.signal,
  });
  const text = await r.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!r.ok) throw new ApiError(r.status, json?.detail ?? json ?? r.statusText);
  return json as T;
}
