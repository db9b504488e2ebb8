import { ingestOtlpTraces, OTLP_CONTENT_TYPES } from "../../../shared/runs/otlp-ingest.ts";
import { defineHandler, reply } from "../../handler.ts";

export const handler = defineHandler({
  rawBody: true,
  doc: {
    description:
      "OTLP/HTTP trace export: each span becomes a run (GenAI, OpenLLMetry, Vercel AI SDK and langsmith attributes mapped to the LLM trace format). The Langsmith-Project header names the project (else the span's langsmith.trace.session_name, else default).",
    rawBody: {
      contentTypes: OTLP_CONTENT_TYPES,
      description: "ExportTraceServiceRequest (protobuf or OTLP JSON), optionally gzip-encoded",
    },
    responses: {
      "400": "The body is not an ExportTraceServiceRequest",
      "413": "The body or its span count is over the limit",
      "415": "A Content-Type or Content-Encoding other than those accepted",
    },
  },
  handle: async ({ raw, headers, tenantId }) => {
    const r = await ingestOtlpTraces(tenantId, raw, headers);
    return reply(200, r.body, { "content-type": r.contentType });
  },
});
