import { config } from "../config.ts";
import {
  BodyTooLarge,
  MalformedBody,
  PayloadTooLarge,
  UnsupportedEncoding,
  validationError,
} from "../errors.ts";
import { decodeBody } from "../ingest/body.ts";
import { type Part, parseMultipart } from "../ingest/multipart.ts";
import { groupRunParts } from "../ingest/parts.ts";
import { storeAttachments } from "./attachments.ts";
import { ingestFeedbackParts } from "./feedback.ts";
import { type IngestResult, ingestPatches, ingestPosts } from "./store.ts";

// Posts go first so that patches of runs created in the same request find their run. `ownProject`: every run is
// of that project, and a run id of another project is refused (a runtime's traces, runtime/traces.ts).
export async function ingestBatch(
  tenant: string,
  posts: unknown[],
  patches: { id: string; body: unknown }[],
  ownProject?: string,
): Promise<IngestResult> {
  const none: IngestResult = { accepted: [], errors: [] };
  const p = posts.length ? await ingestPosts(tenant, posts, "post", ownProject) : none;
  const q = patches.length ? await ingestPatches(tenant, patches, "patch", ownProject) : none;
  const refused = [...(p.refused ?? []), ...(q.refused ?? [])];
  return {
    accepted: [...p.accepted, ...q.accepted],
    errors: [...p.errors, ...q.errors],
    ...(refused.length ? { refused } : {}),
  };
}

/** POST /runs/multipart: `post.<id>` / `patch.<id>` parts plus one part per big field. */
export async function ingestMultipart(
  tenant: string,
  raw: Buffer,
  headers: Record<string, string | undefined>,
): Promise<IngestResult> {
  const contentType = headers["content-type"] ?? "";
  let parts: Part[];
  try {
    parts = parseMultipart(decodeBody(raw, headers, config.maxBodyBytes), contentType);
  } catch (err) {
    if (err instanceof BodyTooLarge) throw new PayloadTooLarge(config.maxBodyBytes);
    if (err instanceof MalformedBody || err instanceof UnsupportedEncoding)
      throw validationError(["body"], err.message, "multipart_invalid");
    throw err;
  }
  const grouped = groupRunParts(parts);
  const partErrors = grouped.errors.map((e) => ({
    loc: ["body", e.part],
    msg: e.message,
    type: "value_error",
  }));
  const posts = [...grouped.posts].map(([id, run]) => ({ ...run, id }));
  const patches = [...grouped.patches].map(([id, body]) => ({ id, body }));
  const none = { accepted: [], errors: [] };
  const r = await ingestBatch(tenant, posts, patches);
  // Feedback last: on runs of the same request, it finds them stored. Attachments beside it.
  const [f, a] = await Promise.all([
    grouped.feedback.length ? ingestFeedbackParts(tenant, grouped.feedback) : none,
    grouped.attachments.length ? storeAttachments(tenant, grouped.attachments) : none,
  ]);
  return {
    accepted: [...r.accepted, ...f.accepted, ...a.accepted],
    errors: [...partErrors, ...r.errors, ...f.errors, ...a.errors],
  };
}
