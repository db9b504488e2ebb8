import { Agent } from "node:http";
import { connect, type Socket } from "node:net";
import { CloudWatchLogsClient } from "@aws-sdk/client-cloudwatch-logs";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { IAMClient } from "@aws-sdk/client-iam";
import { KMSClient } from "@aws-sdk/client-kms";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { S3Client } from "@aws-sdk/client-s3";
import { SchedulerClient } from "@aws-sdk/client-scheduler";
import { SFNClient } from "@aws-sdk/client-sfn";
import { config } from "../config.ts";
import { counted, dynamoCounter, s3Counter } from "./request-stats.ts";

// One lazily created client per service, pointed at the local cloud when its endpoint is set.
const cache = new Map<string, unknown>();
function once<T extends { middlewareStack: { remove(name: string): boolean } }>(
  key: string,
  make: () => T,
): T {
  if (!cache.has(key)) {
    const client = make();
    // The SDK's logger step filters every input and output for sensitive members even with no logger to write
    // to (its default logger is a no-op): work on every call that nothing here reads.
    client.middlewareStack.remove("loggerMiddleware");
    cache.set(key, client);
  }
  return cache.get(key) as T;
}
const base = (service: Parameters<typeof config.endpoint>[0]) => ({
  region: config.clientRegion,
  endpoint: config.endpoint(service),
  ...sandboxed(),
});

/**
 * A sandboxed agent runtime (local cloud) calls AWS with its own credentials over the platform's Unix socket,
 * where the policy proxy checks each call against the runtime's IAM policy.
 */
function sandboxed() {
  const socket = config.platformSocket;
  if (!socket) return {};
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  (agent as unknown as { createConnection: () => Socket }).createConnection = () => connect(socket);
  return {
    credentials: config.sealedCredentials,
    requestHandler: { httpAgent: agent, httpsAgent: agent },
  };
}

export const dynamo = () =>
  once("dynamodb", () => counted(new DynamoDBClient({ ...base("dynamodb"), maxAttempts: 5 }), dynamoCounter));
export const s3 = () =>
  once("s3", () =>
    counted(
      new S3Client({
        ...base("s3"),
        forcePathStyle: config.endpoint("s3") !== undefined,
        // s3rver stores aws-chunked framing verbatim unless checksums are only sent when required.
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      }),
      s3Counter,
    ),
  );
export const kms = () => once("kms", () => new KMSClient(base("kms")));
export const sfn = () => once("sfn", () => new SFNClient(base("sfn")));
export const lambda = () => once("lambda", () => new LambdaClient(base("lambda")));
/**
 * Attempts of a deploy's control-plane call (Lambda's functions and versions, IAM's roles). A push fan-out of
 * deploys meets Lambda's control-plane rate (15 requests/s: https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html)
 * and IAM's; the SDK backs a throttled call off exponentially with full jitter (from 500 ms, at most 20 s apart),
 * and ten attempts ride out a minute or two of throttling where its default three give up within seconds.
 */
export const CONTROL_PLANE_ATTEMPTS = 10;
/** Lambda's control plane for deploys (invocations keep `lambda()`: a throttled invoke should not wait minutes). */
export const lambdaControl = () =>
  once("lambda-control", () => new LambdaClient({ ...base("lambda"), maxAttempts: CONTROL_PLANE_ATTEMPTS }));
/** CloudWatch Logs: the deploy step sets the retention of each runtime's log group. */
export const logs = () =>
  once(
    "logs",
    () =>
      new CloudWatchLogsClient({
        region: config.clientRegion,
        endpoint: config.endpoint("cloudwatch_logs"),
        maxAttempts: CONTROL_PLANE_ATTEMPTS,
      }),
  );
/** IAM: the deploy step gives each deployment's runtime its own role (a global service: signed for us-east-1). */
export const iam = () =>
  once(
    "iam",
    () =>
      new IAMClient({
        // The SDK signs IAM's calls for us-east-1 in AWS; an endpoint of its own (the local cloud's) is signed so too.
        region: config.endpoint("iam") ? "us-east-1" : config.clientRegion,
        endpoint: config.endpoint("iam"),
        maxAttempts: CONTROL_PLANE_ATTEMPTS,
      }),
  );
export const scheduler = () => once("scheduler", () => new SchedulerClient(base("scheduler")));

/** Drops cached clients, e.g. after the local cloud changed endpoints in this process. */
export function resetClients(): void {
  cache.clear();
}
