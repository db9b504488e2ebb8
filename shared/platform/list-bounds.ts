// The most items a list input of the platform API (traces, projects) may hold: a request names a bounded amount
// of work, and more is a 422 naming the list, not a scan or a fan-out without end.

/** Run ids one POST /runs/query may name (`id`): each is a read at once, answered in one page (limit's 100). */
export const MAX_QUERY_RUN_IDS = 100;
/** Tracing projects one POST /runs/query may span (`session`). */
export const MAX_QUERY_SESSIONS = 100;
/** Project ids one GET /sessions may name (`id`). */
export const MAX_PROJECT_IDS = 100;
/** Runs in each of the `post` and `patch` lists of one POST /runs/batch (the SDKs send 100 at most). */
export const MAX_BATCH_RUNS = 1000;
/** Tags on one run. */
export const MAX_RUN_TAGS = 1000;
/** Spans in one OTLP request to /otel/v1/traces (an OpenTelemetry Collector's batches hold 8,192 by default). */
export const MAX_OTLP_SPANS = 10_000;
