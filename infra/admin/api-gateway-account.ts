import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import { SignatureV4 } from "@smithy/signature-v4";
import { lambda } from "../../shared/aws/clients.ts";
import type { QuotaRow } from "../quotas/quota-row.ts";

// The API Gateway CloudWatch role of the account (one per Region, shared by every REST API): the agent APIs' stages
// write execution logs (ERROR) and access logs, and API Gateway refuses such a stage while the account has no
// role, so the first `cdk deploy` of AgentPlatformApi fails and rolls back. The app sets it only when told to
// (`-c apiGatewayAccountRole=create`, docs/aws.md step 3); `npm run aws:preflight` reads it with the operator's
// credentials so that a missing one fails there, before the deploy.

export const API_GATEWAY_LOGGING_DOC =
  "https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-logging.html";

/** The preflight row: failing when the account has no role and the app is not told to set one. */
export function apiGatewayRoleRow(cloudwatchRoleArn: string, setByApp: boolean): QuotaRow {
  const missing = !cloudwatchRoleArn && !setByApp;
  const subject = setByApp
    ? "set by the app (-c apiGatewayAccountRole=create)"
    : cloudwatchRoleArn
      ? `the account's: ${cloudwatchRoleArn}`
      : "the account's: none (docs/aws.md step 3, or -c apiGatewayAccountRole=create)";
  return {
    check: "API Gateway CloudWatch role missing (REST API stages that log fail to create)",
    subject,
    value: missing ? 1 : 0,
    limit: 0,
    ok: !missing,
    doc: API_GATEWAY_LOGGING_DOC,
  };
}

type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Data): string | Uint8Array =>
  typeof d === "string"
    ? d
    : ArrayBuffer.isView(d)
      ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength)
      : new Uint8Array(d);

/** SHA-256 (and its HMAC) for the signer, from node:crypto. */
class NodeSha256 {
  private h: Hash | Hmac;
  constructor(secret?: Data) {
    this.h = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: Data) {
    this.h.update(bytes(data));
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
  reset() {
    throw new Error("not reusable");
  }
}

/**
 * The account's role (`GET /account`, API Gateway's GetAccount) in the Region the SDK resolves, signed with the
 * SDK's own credentials: "" when none is set. (The app has no API Gateway client: this one call is signed here.)
 */
export async function apiGatewayCloudWatchRole(): Promise<string> {
  const config = lambda().config;
  const region = await config.region();
  const credentials = await config.credentials();
  const hostname = `apigateway.${region}.amazonaws.com${region.startsWith("cn-") ? ".cn" : ""}`;
  const signer = new SignatureV4({ service: "apigateway", region, credentials, sha256: NodeSha256 });
  const signed = await signer.sign({
    method: "GET",
    protocol: "https:",
    hostname,
    path: "/account",
    headers: { host: hostname, accept: "application/json" },
  });
  // Host is signed; fetch sends the same one from the URL (it sets that header itself).
  const { host: _, ...headers } = signed.headers as Record<string, string>;
  const res = await fetch(`https://${hostname}/account`, {
    headers,
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`GetAccount answered ${res.status}: ${body.slice(0, 200)}`);
  return (JSON.parse(body) as { cloudwatchRoleArn?: string }).cloudwatchRoleArn ?? "";
}
