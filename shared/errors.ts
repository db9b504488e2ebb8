// Named errors, all in one place: the HTTP errors (whose status lives here and nowhere else), the domains' own
// errors, and the bulk export's errors, whose names the export state machine's Retry and Catch match
// (EXPORT_ERRORS; shared/export/workflow.ts writes them into the state machine). A base module: imports nothing.
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
  body(): unknown {
    return { detail: this.message };
  }
  /** Headers the answer carries besides its content type. */
  headers(): Record<string, string> {
    return {};
  }
}

export class BadRequest extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}
export class Unauthorized extends HttpError {
  constructor(message = "Missing or invalid API key") {
    super(401, message);
  }
}
export class Forbidden extends HttpError {
  constructor(message = "Forbidden") {
    super(403, message);
  }
}
export class NotFound extends HttpError {
  constructor(message = "Not found") {
    super(404, message);
  }
}
export class Conflict extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}
/** An upstream service the request depends on (a provider's token endpoint, a git host's API) failed. */
export class BadGateway extends HttpError {
  constructor(message: string) {
    super(502, message);
  }
}
export class PayloadTooLarge extends HttpError {
  constructor(limit: number) {
    super(413, `Request body exceeds the limit of ${limit} bytes`);
  }
}
/** The workspace sent more requests than its rate limit allows; `Retry-After` says when the window has room. */
/** An OTLP request with more spans than one request may carry (413: OTLP exporters do not retry it). */
export class TooManySpans extends HttpError {
  constructor(count: number, limit: number) {
    super(413, `The request holds ${count} spans; send at most ${limit} per request`);
  }
}

export class TooManyRequests extends HttpError {
  constructor(
    readonly retryAfterSeconds: number,
    of = "the workspace",
  ) {
    super(429, `Rate limit of ${of} exceeded: retry after ${retryAfterSeconds} s`);
  }
  override headers(): Record<string, string> {
    return { "retry-after": String(this.retryAfterSeconds) };
  }
}
export class ServiceUnavailable extends HttpError {
  constructor(message: string) {
    super(503, message);
  }
}
/**
 * The graph a request addresses failed to load in the active revision (its other graphs serve). 409: the
 * assistant exists but its graph is broken until a new revision deploys; retrying cannot help, and the SDK does
 * not retry a 409 (it retries 5xx and 424).
 */
export class GraphLoadFailed extends HttpError {
  constructor(
    readonly graphId: string,
    readonly reason: string,
  ) {
    super(409, `Graph "${graphId}" failed to load: ${reason}`);
  }
}
export class ValidationFailed extends HttpError {
  constructor(readonly issues: ValidationIssue[]) {
    super(422, issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
  override body(): unknown {
    return { detail: this.issues };
  }
}

export function validationError(
  loc: (string | number)[],
  msg: string,
  type = "value_error",
): ValidationFailed {
  return new ValidationFailed([{ loc, msg, type }]);
}

// — bulk export —

/** The names of the export's errors, as the export state machine matches them. */
export const EXPORT_ERRORS = {
  destination: "DestinationError",
  timedOut: "ExportTimedOut",
  retriesExhausted: "RetriesExhausted",
  runTimedOut: "RunTimedOut",
} as const;

/** Errors the export must not retry: the destination itself is wrong (credentials, bucket, permissions). */
export class DestinationError extends Error {
  override name = EXPORT_ERRORS.destination;
}
/** Errors the state machine must not retry (FINAL_RUN_ERRORS: its Retry lists them with MaxAttempts 0). */
export class ExportTimedOut extends Error {
  override name = EXPORT_ERRORS.timedOut;
}
export class RetriesExhausted extends Error {
  override name = EXPORT_ERRORS.retriesExhausted;
}
/** One attempt of a run took too long: retried like any other failure. */
export class RunTimedOut extends Error {
  override name = EXPORT_ERRORS.runTimedOut;
}

// — request bodies (decoding failures carry an HTTP status, so an uncaught one still answers 4xx, never 500) —

/** The body, after decompression, is larger than the limit (a gzip bomb stops here). */
export class BodyTooLarge extends HttpError {
  constructor(readonly limitBytes: number) {
    super(413, `Request body exceeds the limit of ${limitBytes} bytes after decompression`);
  }
}

/** A Content-Encoding this server does not decode. */
export class UnsupportedEncoding extends HttpError {
  constructor(readonly encoding: string) {
    super(
      415,
      `Unsupported Content-Encoding "${clip(encoding)}": send gzip, x-gzip, deflate, br or identity`,
    );
  }
}

/** A Content-Type this route does not read. */
export class UnsupportedMediaType extends HttpError {
  constructor(type: string, accepted: readonly string[]) {
    super(415, `Unsupported Content-Type "${clip(type)}": send ${accepted.join(" or ")}`);
  }
}

/** A body that cannot be decoded: corrupt compression or broken multipart framing. */
export class MalformedBody extends HttpError {
  constructor(
    message: string,
    /** 0-based index of the multipart part at fault, when there is one. */
    readonly partIndex?: number,
  ) {
    super(400, message);
  }
}

// — the store's limits (DynamoDB's, which DynamoDB Local enforces alike) —

/** What DynamoDB's refusal of a value means: each message is its own limit, and only the request's data hits it. */
const STORE_LIMITS: [RegExp, () => HttpError][] = [
  [/Item size has exceeded the maximum allowed size/, () => new ItemTooLarge()],
  [
    /Nesting Levels have exceeded/,
    () => validationError(["body"], "Nested deeper than the store's 32 levels"),
  ],
  [
    /Number (overflow|underflow)/,
    () => validationError(["body"], "A number outside the storable range (magnitude 1e-130 to 9.99e125)"),
  ],
  [/Empty attribute name/, () => validationError(["body"], "An object key must not be empty")],
  [
    /primary key values must be under|Aggregated size of all range keys/,
    () => validationError(["path"], "An id or key longer than the store takes (1 KB)"),
  ],
];

/** The HttpError of a DynamoDB ValidationException caused by the request's data (not by the code), or undefined. */
export function storeLimitError(err: unknown): HttpError | undefined {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  if (e?.name !== "ValidationException" || typeof e.message !== "string") return undefined;
  const message = e.message;
  return STORE_LIMITS.find(([pattern]) => pattern.test(message))?.[1]();
}

/** Client-sent text quoted in an error message, cut short so a message never echoes a whole header. */
export const clip = (text: string, max = 60): string => (text.length > max ? `${text.slice(0, max)}…` : text);

// — OAuth token endpoints —

/** What went wrong at the token endpoint: `rejected` (it refused the grant) or not usable at all. */
export class TokenEndpointError extends Error {
  override name = "TokenEndpointError";
  constructor(
    message: string,
    readonly rejected: boolean,
  ) {
    super(message);
  }
}

// — outbound calls —

/** A call to a URL a user configured failed: refused, timed out, too large, or redirected. */
export class UpstreamError extends Error {
  override name = "UpstreamError";
}

// — building and deploying a revision —

/** A build failure whose message is written to the revision's build log as is. */
export class BuildError extends Error {
  override name = "BuildError";
}
/** A deploy failure whose message is written to the revision's deploy log as is. */
export class DeployError extends Error {
  override name = "DeployError";
}

// — the filter language —

/** The only error parseFilter throws; `position` is the 0-based character offset of the failure. */
export class FilterParseError extends Error {
  readonly position: number;
  constructor(detail: string, position: number) {
    super(`${detail} at position ${position}`);
    this.name = "FilterParseError";
    this.position = position;
  }
}

// — agent runs —

/** Why a run was stopped: a user's cancel (interrupt, rollback), its deletion, or the loss of its lease. */
export type RunAbortReason = "interrupt" | "rollback" | "deleted" | "lease-lost";
/** What a run's AbortController is aborted with. */
export class RunAborted extends Error {
  override name = "RunAborted";
  constructor(readonly reason: RunAbortReason) {
    super(`run ${reason}`);
  }
}
/** The run moved on to another attempt (or ended): this worker's writes are refused. */
export class LeaseLost extends Error {
  override name = "LeaseLost";
  constructor(run: string, attempt: number) {
    super(`run ${run}: attempt ${attempt} no longer owns the run`);
  }
}

// — DynamoDB —

/**
 * An item DynamoDB would refuse (over 400 KB): only the write that holds it fails, never its group's others. The
 * request whose data makes it answers 413 (its body names no internal key).
 */
export class ItemTooLarge extends HttpError {
  constructor(key?: string, bytes?: number, max?: number) {
    super(
      413,
      key ? `The item ${key} is ${bytes} bytes, over DynamoDB's ${max} bytes per item` : ITEM_TOO_LARGE,
    );
  }
  override body(): unknown {
    return { detail: ITEM_TOO_LARGE };
  }
}
const ITEM_TOO_LARGE = "The request's data would make a stored item larger than the store's 400 KB per item";
