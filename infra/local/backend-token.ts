import { randomBytes, timingSafeEqual } from "node:crypto";

// The local cloud's backends — DynamoDB Local, s3rver and the AWS emulator (KMS, Step Functions, Lambda, Scheduler)
// — check no signature and listen on loopback, where every process of the user (and any request the platform makes
// for someone, a webhook) can reach them. So each answers only requests carrying the token of its start, which the
// policy proxy adds to what it forwards once the caller's signature and policy allow it: the proxy is the one door
// (its own check, not a second one). A token rather than a Unix socket: DynamoDB Local's Jetty cannot listen on
// one, and one mechanism for the three is one thing to get right. The token lives in the platform's memory only
// (DynamoDB Local reads it on stdin, never from argv or its environment, which other processes can read).

/** The header that carries the token from the proxy to a backend. */
export const BACKEND_TOKEN_HEADER = "x-platform-backend-token";

/**
 * The header that names, to the emulator, the principal whose signature the proxy checked (its ARN): what the
 * emulator holds per caller (queued asynchronous invocations) is counted by it. Whatever a caller sends under this
 * name is replaced by the proxy; the emulator answers only the proxy (the token), so it is the proxy's word.
 */
export const CALLER_HEADER = "x-platform-caller";

/** Where the policy proxy forwards a service's calls: the backend's endpoint and the token of its start. */
export interface Backend {
  endpoint: string;
  token: string;
}

export const newBackendToken = () => randomBytes(32).toString("base64url");

/** Does the request carry this token (compared in constant time)? */
export function carriesToken(headers: Record<string, string | string[] | undefined>, token: string): boolean {
  const given = Buffer.from(String(headers[BACKEND_TOKEN_HEADER] ?? ""));
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** What a backend answers a request that did not come through the proxy. */
export const NOT_PROXIED =
  "This service of the local cloud answers only its policy proxy: sign the request with a role's keys and send it to the proxy's endpoint (AWS_ENDPOINT_URL_*, local.json).";

/** An SDK client whose requests carry the token (the platform's own probe of a backend it started). */
export function withBackendToken<C extends { middlewareStack: { add(m: unknown, o: unknown): void } }>(
  client: C,
  token: string,
): C {
  client.middlewareStack.add(
    (next: (args: { request: { headers: Record<string, string> } }) => Promise<unknown>) =>
      (args: { request: { headers: Record<string, string> } }) => {
        args.request.headers[BACKEND_TOKEN_HEADER] = token;
        return next(args);
      },
    { step: "build", name: "backendToken" },
  );
  return client;
}
