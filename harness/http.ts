// JSON over HTTP to a platform: the shared local cloud, or one a test started with startPlatform.
export type Call = (
  method: string,
  path: string,
  init?: { headers?: Record<string, string>; body?: unknown; raw?: string | Uint8Array },
) => Promise<{ status: number; json: any; text: string; headers: Headers }>;

/** A `call` to the platform at `base`: `body` goes as JSON, `raw` as is; `json` is undefined when the answer is not JSON. */
export function callAt(base: string): Call {
  return async (method, path, init = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      body: init.raw ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
    });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text, headers: res.headers };
  };
}
