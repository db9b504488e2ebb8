import type { LookupAddress, LookupOptions } from "node:dns";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { config } from "../config.ts";
import { UpstreamError } from "../errors.ts";
import { EgressRefused, type EgressRules, egressRules, egressTarget } from "./egress.ts";
import { urlShapeProblem } from "./ssrf.ts";

// What the platform sends or fetches at a URL a caller or a deployment named (run webhooks, OAuth token endpoints,
// git host APIs), locally and in AWS alike: the address policy of sandboxed code's own egress (egress.ts: public
// addresses only unless EGRESS_ALLOW lists the host), checked after DNS and connected to the very address checked,
// so a DNS answer cannot change in between; bounded in time and size; redirects never followed. A failure is an
// OutboundFailure saying its class only — never the target's answer, never which internal port is open.

export interface OutboundRequest {
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** The address policy (default: the operator's, egressRules()); tests pass their own resolver. */
  egress?: EgressRules;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Why a request got no answer: the address is not one the policy lets out (`refused`), no answer in time
 * (`timeout`), an answer over the size limit (`too-large`), or no connection or a broken one (`unreachable`).
 */
export type FailureClass = "refused" | "timeout" | "too-large" | "unreachable";
const MESSAGES: Record<FailureClass, string> = {
  refused: "refused address: not a public address (EGRESS_ALLOW lists the internal hosts allowed)",
  timeout: "timed out",
  "too-large": "answer too large",
  unreachable: "unreachable",
};

export class OutboundFailure extends UpstreamError {
  constructor(
    readonly kind: FailureClass,
    message = MESSAGES[kind],
  ) {
    super(message);
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A socket `lookup` that answers the address the policy checked, whatever DNS says now. */
const pinnedTo =
  (address: string) =>
  (_host: string, options: LookupOptions, callback: LookupCallback): void => {
    const family = isIP(address);
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };

/** One request; resolves with any HTTP status (the caller decides what a status means). */
export async function outboundRequest(url: string, init: OutboundRequest): Promise<OutboundResponse> {
  // The URL's shape (http(s), no credentials); where it leads is the policy's to say, right before connecting.
  const problem = urlShapeProblem(url, "URL");
  if (problem) throw new UpstreamError(problem);
  const target = new URL(url);
  const https = target.protocol === "https:";
  let address: string;
  try {
    address = await egressTarget(target.hostname, Number(target.port || (https ? 443 : 80)), {
      ...egressRules(),
      ...init.egress,
    });
  } catch (err) {
    throw new OutboundFailure(err instanceof EgressRefused && err.unresolved ? "unreachable" : "refused");
  }
  const send = https ? httpsRequest : httpRequest;
  const timeoutMs = init.timeoutMs ?? 10_000;
  const maxBytes = init.maxBytes ?? 2 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    let overall: NodeJS.Timeout | undefined;
    const fail = (err: unknown) => {
      clearTimeout(overall);
      req.destroy();
      reject(err instanceof OutboundFailure ? err : new OutboundFailure("unreachable"));
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
        // A connection of its own, to the checked address (TLS still verifies the certificate for the host name).
        agent: false,
        lookup: pinnedTo(address),
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) fail(new OutboundFailure("too-large", `answer larger than ${maxBytes} bytes`));
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
    req.on("timeout", () => fail(new OutboundFailure("timeout", `no answer within ${timeoutMs} ms`)));
    // The socket timeout is per idle gap; a trickling answer is cut at three times it overall.
    overall = setTimeout(
      () => fail(new OutboundFailure("timeout", `no complete answer within ${3 * timeoutMs} ms`)),
      3 * timeoutMs,
    );
    req.on("error", fail);
    req.end(init.body);
  });
}
