// Named errors: the HTTP errors, whose status lives here and nowhere else, and the bulk export's errors, whose
// names are the ones the export state machine's Retry and Catch match (EXPORT_ERRORS; shared/export/workflow.ts
// writes them into the state machine). A base module: imports nothing.
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
export class ServiceUnavailable extends HttpError {
  constructor(message: string) {
    super(503, message);
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
