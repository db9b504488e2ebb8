import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Denial } from "./evaluate.ts";
import { Refused } from "./refusal.ts";
import type { EmulatedService } from "./service-request.ts";

// Refusals answered as each service does: DynamoDB's JSON error (always 400, 413 for a body too large) and S3's
// XML <Error>, so the SDK raises the same named errors as against AWS.

export type Service = "dynamodb" | "s3" | EmulatedService;

const CORAL = "com.amazon.coral.service#";
const DYNAMO = "com.amazonaws.dynamodb.v20120810#";
const DYNAMO_ERRORS: Record<string, { type: string; message?: string }> = {
  MissingAuthenticationToken: { type: `${CORAL}MissingAuthenticationTokenException` },
  IncompleteSignature: { type: `${CORAL}IncompleteSignatureException` },
  RequestTimeTooSkewed: { type: `${CORAL}InvalidSignatureException` },
  SignatureDoesNotMatch: {
    type: `${CORAL}InvalidSignatureException`,
    message:
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
  },
  InvalidAccessKeyId: {
    type: `${CORAL}UnrecognizedClientException`,
    message: "The security token included in the request is invalid.",
  },
  AccessDenied: { type: `${DYNAMO}AccessDeniedException` },
  AccessDeniedException: { type: `${DYNAMO}AccessDeniedException` },
  ValidationException: { type: "com.amazon.coral.validate#ValidationException" },
  SerializationException: { type: `${CORAL}SerializationException` },
  UnknownOperationException: { type: `${CORAL}UnknownOperationException` },
  ResourceNotFoundException: { type: `${DYNAMO}ResourceNotFoundException` },
  RequestEntityTooLarge: { type: `${CORAL}RequestEntityTooLargeException` },
  // DynamoDB's own refusal for stored bytes past a limit (an item collection's 10 GB): not retried by the SDKs.
  StorageQuotaExceeded: { type: `${DYNAMO}ItemCollectionSizeLimitExceededException` },
};
/** The JSON services' names for an authentication refusal (KMS's, Step Functions', Lambda's, Scheduler's). */
const JSON_CODES: Record<string, string> = {
  MissingAuthenticationToken: "MissingAuthenticationTokenException",
  IncompleteSignature: "IncompleteSignatureException",
  SignatureDoesNotMatch: "InvalidSignatureException",
  RequestTimeTooSkewed: "InvalidSignatureException",
  InvalidAccessKeyId: "UnrecognizedClientException",
};
/** S3 answers a request with no credentials at all as one its anonymous caller may not make. */
const S3_CODES: Record<string, string> = {
  MissingAuthenticationToken: "AccessDenied",
  // S3 itself has no storage quota; S3-compatible stores answer one with 403 QuotaExceeded.
  StorageQuotaExceeded: "QuotaExceeded",
};
const S3_MESSAGES: Record<string, string> = {
  SignatureDoesNotMatch:
    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
  InvalidAccessKeyId: "The AWS Access Key Id you provided does not exist in our records.",
};

const xml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

export function sendRefusal(res: ServerResponse, service: Service, err: Refused): void {
  const requestId = randomUUID();
  if (res.headersSent) return void res.destroy();
  if (service === "dynamodb") {
    const known = DYNAMO_ERRORS[err.code] ?? { type: `${CORAL}${err.code}` };
    const body = JSON.stringify({ __type: known.type, message: known.message ?? err.message });
    res.writeHead(err.code === "RequestEntityTooLarge" ? 413 : 400, {
      "content-type": "application/x-amz-json-1.0",
      "x-amzn-requestid": requestId,
      "content-length": Buffer.byteLength(body),
    });
    return void res.end(body);
  }
  if (service === "iam") return void sendIamRefusal(res, err, requestId);
  if (service !== "s3") return void sendJsonRefusal(res, service, err, requestId);
  const code = S3_CODES[err.code] ?? err.code;
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${xml(code)}</Code><Message>${xml(S3_MESSAGES[err.code] ?? err.message)}</Message><RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(err.status, {
    "content-type": "application/xml",
    "x-amz-request-id": requestId,
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** IAM's names for an authentication refusal. */
const IAM_CODES: Record<string, string> = {
  InvalidAccessKeyId: "InvalidClientTokenId",
  RequestTimeTooSkewed: "SignatureDoesNotMatch",
  IncompleteSignature: "IncompleteSignature",
};
/** IAM's Query-protocol ErrorResponse (the SDK reads its Code): a denial is 403 AccessDenied. */
function sendIamRefusal(res: ServerResponse, err: Refused, requestId: string) {
  const denied = err.code === "AccessDeniedException" || err.code === "AccessDenied";
  const code = denied ? "AccessDenied" : (IAM_CODES[err.code] ?? err.code);
  const body = `<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>${xml(code)}</Code><Message>${xml(err.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
  res.writeHead(denied ? 403 : err.status, {
    "content-type": "text/xml",
    "x-amzn-requestid": requestId,
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * The JSON and REST-JSON services' error (`__type` and x-amzn-ErrorType, which the SDK reads): KMS and Step
 * Functions answer a denial with 400, Lambda and Scheduler with 403.
 */
function sendJsonRefusal(res: ServerResponse, service: EmulatedService, err: Refused, requestId: string) {
  const denied = err.code === "AccessDeniedException" || err.code === "AccessDenied";
  const code = denied ? "AccessDeniedException" : (JSON_CODES[err.code] ?? err.code);
  const status = denied ? (service === "lambda" || service === "scheduler" ? 403 : 400) : err.status;
  const body = JSON.stringify({ __type: code, message: err.message, Message: err.message });
  res.writeHead(status, {
    "content-type": "application/x-amz-json-1.1",
    "x-amzn-errortype": code,
    "x-amzn-requestid": requestId,
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/** AWS's wording for a denied call. */
export function accessDenied(principalArn: string, d: Denial): Refused {
  const { action, resource } = d.authorization;
  const why =
    d.decision === "ExplicitlyDenied"
      ? "with an explicit deny in an identity-based policy"
      : `because no identity-based policy allows the ${action} action`;
  const message = `User: ${principalArn} is not authorized to perform: ${action} on resource: ${resource} ${why}`;
  return new Refused(action.startsWith("s3:") ? "AccessDenied" : "AccessDeniedException", message, 403);
}
