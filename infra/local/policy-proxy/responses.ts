import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { Denial } from "./evaluate.ts";
import { Refused } from "./refusal.ts";

// Refusals answered as each service does: DynamoDB's JSON error (always 400, 413 for a body too large) and S3's
// XML <Error>, so the SDK raises the same named errors as against AWS.

export type Service = "dynamodb" | "s3" | "kms";

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
  // KMS speaks the same JSON protocol as DynamoDB: the SDK reads the error's name after the "#".
  if (service !== "s3") {
    const known = DYNAMO_ERRORS[err.code] ?? { type: `${CORAL}${err.code}` };
    const body = JSON.stringify({ __type: known.type, message: known.message ?? err.message });
    res.writeHead(err.code === "RequestEntityTooLarge" ? 413 : 400, {
      "content-type": "application/x-amz-json-1.0",
      "x-amzn-requestid": requestId,
      "content-length": Buffer.byteLength(body),
    });
    return void res.end(body);
  }
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${xml(err.code)}</Code><Message>${xml(S3_MESSAGES[err.code] ?? err.message)}</Message><RequestId>${requestId}</RequestId></Error>`;
  res.writeHead(err.status, {
    "content-type": "application/xml",
    "x-amz-request-id": requestId,
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
