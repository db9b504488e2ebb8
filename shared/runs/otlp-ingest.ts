import { config } from "../config.ts";
import { BadRequest, TooManySpans, UnsupportedMediaType } from "../errors.ts";
import { decodeBody } from "../ingest/body.ts";
import { MAX_OTLP_SPANS } from "../platform/list-bounds.ts";
import { decodeJsonTraces } from "./otlp/json.ts";
import { linkSpan } from "./otlp/lineage.ts";
import { spanIdsValid, spanToRun } from "./otlp/map.ts";
import { OtlpDecodeError, type OtlpSpan } from "./otlp/model.ts";
import { decodeProtobufTraces, encodeProtobufResponse } from "./otlp/protobuf.ts";
import { afterStore, settleBatch } from "./otlp-lineage.ts";
import { ingestPosts } from "./store.ts";

// POST /otel/v1/traces: an OTLP/HTTP ExportTraceServiceRequest (protobuf or JSON, any Content-Encoding the
// platform reads) → runs, through the same ingestion as POST /runs/batch (idempotent on run id). The answer is
// an ExportTraceServiceResponse in the request's encoding; spans that could not become runs are counted in its
// partial_success, as an OTLP collector reports them.

const PROTOBUF = ["application/x-protobuf", "application/protobuf"];
const JSON_TYPE = "application/json";
export const OTLP_CONTENT_TYPES = [...PROTOBUF, JSON_TYPE];

export interface OtlpAnswer {
  contentType: string;
  body: Buffer | Record<string, unknown>;
  accepted: number;
  rejected: number;
}

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** The spans of a request body in either encoding; 4xx errors for anything that is not one. */
export function decodeTraces(raw: Buffer, headers: Record<string, string | undefined>) {
  const type = (header(headers, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const protobuf = PROTOBUF.includes(type);
  if (!protobuf && type !== JSON_TYPE) throw new UnsupportedMediaType(type, OTLP_CONTENT_TYPES);
  const body = decodeBody(raw, headers, config.maxBodyBytes);
  let spans: OtlpSpan[];
  try {
    spans = protobuf ? decodeProtobufTraces(body) : decodeJsonTraces(parseJson(body));
  } catch (err) {
    if (err instanceof OtlpDecodeError)
      throw new BadRequest(`Not an OTLP ExportTraceServiceRequest: ${err.message}`);
    throw err;
  }
  if (spans.length > MAX_OTLP_SPANS) throw new TooManySpans(spans.length, MAX_OTLP_SPANS);
  return { spans, protobuf };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new OtlpDecodeError("the body is not JSON");
  }
}

/** Decodes, maps and stores a request's spans; `project` is the Langsmith-Project header. */
export async function ingestOtlpTraces(
  tenant: string,
  raw: Buffer,
  headers: Record<string, string | undefined>,
): Promise<OtlpAnswer> {
  const { spans, protobuf } = decodeTraces(raw, headers);
  const project = header(headers, "langsmith-project")?.trim() || undefined;
  const valid = spans.filter(spanIdsValid);
  const linked = valid.map((s) => linkSpan(spanToRun(s, { project }), s.traceId, s.spanId, s.parentSpanId));
  const runs = linked.map((l) => l.run);
  const waiting = await settleBatch(tenant, linked);
  const result = runs.length ? await ingestPosts(tenant, runs) : { accepted: [], errors: [] };
  const stored = new Set(result.accepted);
  await afterStore(
    tenant,
    linked.filter((l) => stored.has(l.run.id)),
    waiting.filter((l) => stored.has(l.run.id)),
  );
  const failed = new Set(result.errors.map((e) => e.loc[2]));
  const rejected = spans.length - valid.length + failed.size;
  const reasons = [
    ...(spans.length > valid.length
      ? [`${spans.length - valid.length} spans without a valid trace or span id`]
      : []),
    ...result.errors.slice(0, 5).map((e) => e.msg),
  ].join("; ");
  const accepted = runs.length - failed.size;
  if (protobuf)
    return {
      contentType: "application/x-protobuf",
      body: encodeProtobufResponse(rejected, reasons),
      accepted,
      rejected,
    };
  return {
    contentType: JSON_TYPE,
    body: rejected ? { partialSuccess: { rejectedSpans: String(rejected), errorMessage: reasons } } : {},
    accepted,
    rejected,
  };
}
