// A request the proxy will not forward, with the error AWS gives for it (code, HTTP status, message).
export class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** One IAM authorization request: what AWS checks for (part of) an API call. */
export interface Authorization {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
}
