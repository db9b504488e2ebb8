import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { config } from "../config.ts";
import { UpstreamError } from "../errors.ts";
import { endpointUrlProblem, publicOnlyLookup } from "./ssrf.ts";

// Calls to URLs a caller configured (OAuth token endpoints, git host APIs): SSRF-guarded at connect time,
// bounded in time and size, never following redirects. Failures are an UpstreamError with a clear message.

export interface OutboundRequest {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

const NET_MESSAGES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ECONNRESET: "connection reset",
  EINTERNALADDRESS: "host resolves to a non-public address",
  ETIMEDOUT: "timed out",
};

/** One request; resolves with any HTTP status (the caller decides what a status means). */
export function outboundRequest(url: string, init: OutboundRequest): Promise<OutboundResponse> {
  const local = config.localMode;
  // Stored URLs were checked when saved; IP literals skip DNS, so check again right before connecting.
  const problem = endpointUrlProblem(url, local, { field: "URL" });
  if (problem) return Promise.reject(new UpstreamError(problem));
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const timeoutMs = init.timeoutMs ?? 10_000;
  const maxBytes = init.maxBytes ?? 2 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    let overall: NodeJS.Timeout | undefined;
    const fail = (err: unknown) => {
      clearTimeout(overall);
      req.destroy();
      reject(toUpstream(err));
    };
    const req = send(
      target,
      {
        method: init.method,
        headers: {
          "user-agent": `agent-platform/${config.version}`,
          ...(init.body !== undefined ? { "content-length": String(Buffer.byteLength(init.body)) } : {}),
          ...init.headers,
        },
        ...(local ? {} : { lookup: publicOnlyLookup }),
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) fail(new UpstreamError(`answer larger than ${maxBytes} bytes`));
          else chunks.push(c);
        });
        res.on("end", () => {
          clearTimeout(overall);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          });
        });
        res.on("error", fail);
      },
    );
    req.on("timeout", () => fail(new UpstreamError(`no answer within ${timeoutMs} ms`)));
    // The socket timeout is per idle gap; a trickling answer is cut at three times it overall.
    overall = setTimeout(
      () => fail(new UpstreamError(`no complete answer within ${3 * timeoutMs} ms`)),
      3 * timeoutMs,
    );
    req.on("error", fail);
    req.end(init.body);
  });
}

function toUpstream(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const code = (err as { code?: unknown })?.code;
  const known = typeof code === "string" ? NET_MESSAGES[code] : undefined;
  return new UpstreamError(known ?? (typeof code === "string" ? code : "request failed"));
}
