import { createHmac, timingSafeEqual } from "node:crypto";
import { fileURLToPath } from "node:url";
import { BadRequest } from "../errors.ts";

// GitHub webhook deliveries as the receiver reads them: the signature over the raw body, the delivery headers,
// a push event's few fields, and which deployments a push is for. Everything here is pure and never trusts
// its input: a delivery is untrusted until its signature matched, and its payload is GitHub's JSON after.

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, compared in constant time. */
export function signatureMatches(secret: string, raw: Buffer, header: string | undefined): boolean {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? "");
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(m[1], "hex"));
}

/** The header a delivery is signed with, as a sender computes it (tests, and the README's curl example). */
export const signatureOf = (secret: string, raw: Buffer | string): string =>
  `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;

export interface Delivery {
  /** X-GitHub-Event: push, ping, ... */
  event: string;
  /** X-GitHub-Delivery: a GUID, the same on a redelivery. */
  id: string;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,128}$/;
const EVENT_NAME = /^[a-z_]{1,64}$/;

/** The delivery headers (lower-cased names, as API Gateway gives them); missing or malformed is a 400. */
export function deliveryOf(headers: Record<string, string | undefined>): Delivery {
  const event = headers["x-github-event"]?.trim();
  const id = headers["x-github-delivery"]?.trim();
  if (!event || !EVENT_NAME.test(event))
    throw new BadRequest(
      "X-GitHub-Event is missing or malformed: this route takes GitHub webhook deliveries",
    );
  if (!id || !DELIVERY_ID.test(id))
    throw new BadRequest(
      "X-GitHub-Delivery is missing or malformed: this route takes GitHub webhook deliveries",
    );
  return { event, id };
}

export interface PushEvent {
  /** `refs/heads/<branch>` or `refs/tags/<tag>`. */
  ref: string;
  /** The commit the ref points at after the push (all zeros when the ref was deleted). */
  after: string;
  deleted: boolean;
  repository: {
    /** clone_url, html_url, git_url, ssh_url, svn_url: whichever the payload has. */
    urls: string[];
    default_branch: string | null;
  };
}

const str = (v: unknown, max = 2048): string | undefined =>
  typeof v === "string" && v.length > 0 && v.length <= max ? v : undefined;
const FULL_SHA = /^[0-9a-f]{40}$/;
const ZERO_SHA = /^0{40}$/;

/**
 * The JSON payload of a delivery: the raw body for `application/json`, its `payload` field for GitHub's other
 * content type (`application/x-www-form-urlencoded`). Not JSON, or not an object: a 400.
 */
export function payloadOf(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  let text = raw.toString("utf8");
  if (/^\s*application\/x-www-form-urlencoded/i.test(contentType ?? ""))
    text = new URLSearchParams(text).get("payload") ?? "";
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BadRequest("The delivery's payload is not JSON");
  }
  if (!json || typeof json !== "object" || Array.isArray(json))
    throw new BadRequest("The delivery's payload is not a JSON object");
  return json as Record<string, unknown>;
}

/** A push event's fields; a payload that is not one (no ref, no repository, a bad `after`) is a 400. */
export function pushOf(payload: Record<string, unknown>): PushEvent {
  const ref = str(payload.ref, 1024);
  const after = str(payload.after, 64)?.toLowerCase();
  const repo = payload.repository && typeof payload.repository === "object" ? payload.repository : undefined;
  if (!ref || !after || !FULL_SHA.test(after) || !repo)
    throw new BadRequest("The push payload lacks ref, after (a full commit sha) or repository");
  const r = repo as Record<string, unknown>;
  const urls = [r.clone_url, r.html_url, r.git_url, r.ssh_url, r.svn_url]
    .map((u) => str(u))
    .filter((u): u is string => !!u);
  return {
    ref,
    after,
    deleted: payload.deleted === true || ZERO_SHA.test(after),
    repository: {
      urls,
      default_branch: str(r.default_branch, 255) ?? null,
    },
  };
}

/**
 * A repository address reduced to what names it: `host/owner/name` in lower case for URLs (https, http, git,
 * ssh, and `git@host:owner/name`), without `.git` or a trailing slash; an absolute path for local repositories
 * (file:// URLs and paths, as the local cloud builds them). Undefined when it is neither.
 */
export function repositoryIdentity(address: string): string | undefined {
  const a = address.trim();
  const scp = /^[\w.-]+@([\w.-]+):(?!\/\/)(.+)$/.exec(a);
  if (scp) return `${scp[1]}/${scp[2]}`.toLowerCase().replace(/(\.git)?\/*$/, "");
  if (/^file:\/\//i.test(a)) {
    try {
      return trimPath(fileURLToPath(a));
    } catch {
      return undefined;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(a)) {
    try {
      const u = new URL(a);
      return `${u.hostname}${u.pathname}`.toLowerCase().replace(/(\.git)?\/*$/, "");
    } catch {
      return undefined;
    }
  }
  return a.startsWith("/") ? trimPath(a) : undefined;
}

const trimPath = (p: string) => p.replace(/\/+$/, "").replace(/(\/\.git|\.git)$/, "") || "/";

/** What a deployment tracks: its repository and ref (null: the repository's default branch). */
export interface TrackedSource {
  repo_url: string | null | undefined;
  repo_ref: string | null | undefined;
}

/** Whether a push moved the ref a deployment tracks in the repository it builds. */
export function pushMatches(push: PushEvent, tracked: TrackedSource): boolean {
  const mine = tracked.repo_url ? repositoryIdentity(tracked.repo_url) : undefined;
  if (!mine) return false;
  const theirs = push.repository.urls.map(repositoryIdentity);
  if (!theirs.includes(mine)) return false;
  const ref = tracked.repo_ref?.trim() || push.repository.default_branch;
  if (!ref) return false;
  return push.ref === ref || push.ref === `refs/heads/${ref}` || push.ref === `refs/tags/${ref}`;
}
