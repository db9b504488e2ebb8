import type { IncomingHttpHeaders } from "node:http";
import { Refused } from "./refusal.ts";
import type { S3Call } from "./s3-request.ts";
import { queryOf } from "./sigv4.ts";
import type { BudgetScope, StorageBudget } from "./storage-budget.ts";
import { dynamoWriteBytes } from "./write-bytes.ts";

// What a runtime's allowed write is charged to its deployment's storage budget (storage-budget.ts), called by the
// policy proxy's handler between the policy check and the forward. S3: a body's stated length (a body without one
// is refused, as S3 refuses a PutObject without Content-Length), a copy's source size, each object (a PUT, a
// multipart upload's parts, a copy) within AGENT_MAX_OBJECT_BYTES. DynamoDB: what the write can add (write-bytes.ts).

export interface S3Write {
  method: string;
  /** The request target as the proxy forwards it (a presigned URL without its signature). */
  url: string;
  headers: IncomingHttpHeaders;
  call: S3Call;
}

const missingLength = () =>
  new Refused("MissingContentLength", "You must provide the Content-Length HTTP header.", 411);

/** The body's stated length; a body without one (chunked) is refused. */
function statedLength(headers: IncomingHttpHeaders): number {
  if (headers["transfer-encoding"] !== undefined) throw missingLength();
  const text = headers["content-length"];
  if (text === undefined) return 0;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw missingLength();
  return n;
}

export async function chargeS3Write(budget: StorageBudget, scope: BudgetScope, w: S3Write): Promise<void> {
  if (w.method !== "PUT" && w.method !== "POST") {
    if (w.method === "DELETE") {
      const uploadId = queryOf(w.url).uploadId;
      if (typeof uploadId === "string") budget.endUpload(uploadId);
    }
    return;
  }
  const length = statedLength(w.headers);
  // A DeleteObjects body is held by the proxy and adds nothing.
  if (w.call.deleteObjects) return;
  const query = queryOf(w.url);
  const uploadId = typeof query.uploadId === "string" ? query.uploadId : undefined;
  const part = w.method === "PUT" && uploadId !== undefined && query.partNumber !== undefined;
  let bytes = length;
  if (w.method === "PUT" && w.call.copySource) {
    const { bucket, key } = w.call.copySource;
    bytes += (await budget.objectSize(bucket, key)) ?? 0;
  }
  if (part) budget.checkPart(uploadId!, bytes);
  else if (w.method === "PUT" && w.call.key !== undefined && Object.keys(query).every((k) => k === "x-id"))
    budget.checkObject(bytes);
  else if (w.method === "POST" && uploadId !== undefined) budget.endUpload(uploadId);
  await budget.charge(scope, bytes);
}

export async function chargeDynamoWrite(
  budget: StorageBudget,
  scope: BudgetScope,
  op: string,
  input: unknown,
): Promise<void> {
  await budget.charge(scope, dynamoWriteBytes(op, input));
}
