import { randomUUID } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import { config } from "../config.ts";
import { endpointProblem } from "../containment/ssrf.ts";
import { sealRecord, unsealRecord } from "../crypto/envelope.ts";
import { DestinationError, NotFound, ValidationFailed, validationError } from "../errors.ts";
import { type DestinationRecord, destinations, exportKeys } from "../records/export.ts";
import { canonicalNow } from "../time.ts";
import {
  type Credentials,
  checkWriteAccess,
  destinationClient,
  destinationRoot,
  NO_CREDENTIALS,
} from "./destination-client.ts";
import { credentialsProblem, ownEndpointProblem, prefixProblem } from "./destination-guard.ts";
import type { Destination, DestinationCreateIn } from "./destination-schemas.ts";

// Export destinations: an S3 (or S3-compatible) bucket and prefix, with credentials sealed by KMS envelope
// encryption (write-only: only their field names are ever shown). Creation proves write access first (see
// checkWriteAccess in destination-client.ts). Records: shared/records/export.ts.

const sealContext = (tenant: string, id: string) => ({
  tenant_id: tenant,
  record: `bulk-export-destination/${id}`,
});

function toDestination(item: DestinationRecord): Destination {
  return {
    id: item.id,
    tenant_id: item.tenant_id,
    destination_type: "s3",
    display_name: item.display_name,
    config: {
      bucket_name: item.config.bucket_name,
      prefix: item.config.prefix ?? "",
      region: item.config.region ?? null,
      endpoint_url: item.config.endpoint_url ?? null,
      include_bucket_in_prefix: item.config.include_bucket_in_prefix ?? false,
    },
    created_at: item.created_at,
    updated_at: item.updated_at,
    credentials_keys: item.credentials_keys ?? [],
  };
}

/** Validates, proves write access with a test object, then stores the destination (credentials sealed). */
export async function createDestination(tenant: string, body: DestinationCreateIn): Promise<Destination> {
  if (body.config.endpoint_url) {
    const problem =
      (await endpointProblem(body.config.endpoint_url)) ??
      (await ownEndpointProblem(body.config.endpoint_url));
    if (problem) throw validationError(["body", "config", "endpoint_url"], problem);
  }
  const keyProblem = body.credentials && credentialsProblem(body.credentials.access_key_id);
  if (keyProblem) throw validationError(["body", "credentials", "access_key_id"], keyProblem);
  const creds: Credentials | undefined = body.credentials
    ? {
        access_key_id: body.credentials.access_key_id,
        secret_access_key: body.credentials.secret_access_key,
        ...(body.credentials.session_token ? { session_token: body.credentials.session_token } : {}),
      }
    : undefined;
  // Without credentials the platform's own role would write (a confused deputy): refused unless the installation
  // allows it (single tenant), and never into the platform's bucket (run payloads).
  if (!creds && !config.export.environmentCredentials)
    throw new ValidationFailed([{ loc: ["body", "credentials"], msg: NO_CREDENTIALS, type: "missing" }]);
  if (!creds && body.config.bucket_name === config.defaultBucket)
    throw new ValidationFailed([
      {
        loc: ["body", "credentials"],
        msg: "The platform's own bucket can only be used with explicit credentials",
        type: "missing",
      },
    ]);
  const id = randomUUID();
  const now = canonicalNow();
  const destination: Destination = {
    id,
    tenant_id: tenant,
    destination_type: "s3",
    display_name: body.display_name,
    config: {
      bucket_name: body.config.bucket_name,
      prefix: body.config.prefix,
      region: body.config.region ?? null,
      endpoint_url: body.config.endpoint_url ?? null,
      include_bucket_in_prefix: body.config.include_bucket_in_prefix,
    },
    created_at: now,
    updated_at: now,
    credentials_keys: Object.keys(creds ?? {}),
  };
  await checkWriteAccess(tenant, destination.config, creds);
  const sealed = creds ? await sealRecord(creds, sealContext(tenant, id)) : undefined;
  await destinations.put({ ...destination, ...(sealed ? { credentials_sealed: sealed } : {}) });
  return destination;
}

/** The destination in its wire shape; NotFound for an unknown id or another workspace's. */
export async function getDestination(tenant: string, id: string): Promise<Destination> {
  const item = await destinations.get({ tenant, id }, false);
  if (!item) throw new NotFound("Bulk export destination not found");
  return toDestination(item);
}

/** The workspace's destinations, newest first. */
export async function listDestinations(tenant: string): Promise<Destination[]> {
  const out: Destination[] = [];
  for await (const items of destinations.indexPages({
    IndexName: "GSI1",
    KeyConditionExpression: "GSI1PK = :pk",
    values: { ":pk": exportKeys.destinationListPk(tenant) },
    ScanIndexForward: false,
  }))
    out.push(...items.filter((d) => d.tenant_id === tenant).map(toDestination));
  return out;
}

/**
 * A client for writing exports to a destination (credentials unsealed), its bucket and key root: "" or a
 * path without leading/trailing slash, led by the bucket name when include_bucket_in_prefix.
 * A missing destination is a DestinationError (not retried).
 */
export async function openDestination(
  tenant: string,
  id: string,
): Promise<{ client: S3Client; bucket: string; root: string; destination: Destination }> {
  const item = await destinations.get({ tenant, id }, false);
  if (!item) throw new DestinationError("Bulk export destination not found");
  const destination = toDestination(item);
  // Checked again for every export: records made before these rules, and endpoints whose meaning changed.
  const problem =
    prefixProblem(destination.config.prefix) ??
    (destination.config.endpoint_url ? await ownEndpointProblem(destination.config.endpoint_url) : undefined);
  if (problem) throw new DestinationError(problem);
  const creds = item.credentials_sealed
    ? await unsealRecord(item.credentials_sealed, sealContext(tenant, id))
    : undefined;
  const keyProblem = creds?.access_key_id ? credentialsProblem(creds.access_key_id) : undefined;
  if (keyProblem) throw new DestinationError(keyProblem);
  return {
    client: destinationClient(destination.config, creds, "export"),
    bucket: destination.config.bucket_name,
    root: destinationRoot(destination.config),
    destination,
  };
}
