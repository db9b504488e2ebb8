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
  /** The resource's own policy where AWS requires one to allow too (a KMS key's key policy). */
  resourcePolicy?: ResourcePolicy;
}

/** A resource-based policy document (its statements name principals). */
export interface ResourcePolicy {
  Version: "2012-10-17";
  Statement: Record<string, unknown>[];
}
