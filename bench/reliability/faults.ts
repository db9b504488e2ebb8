import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { processCustomerS3 } from "../../harness/customer-s3.ts";
import {
  FAULTS,
  type Fault,
  type Proxy as FaultProxy,
  newBucket,
  platformApi,
  s3For,
  s3Proxy,
} from "../../harness/export.ts";
import { type RunningPlatform, startPlatform } from "../../harness/platform.ts";
import { freePort } from "../../infra/local/http-util.ts";
import {
  checkExportedRows,
  EXPORT_ENV,
  type ExportSource,
  exportEnd,
  exportSourceOf,
  newDestination,
  startExport,
} from "./exports.ts";
import { check, type Knobs, type Row, seededRandom, trials, wanted } from "./summary.ts";

// Item 4: faults at the protocol level — a proxy in front of the local S3 (the export destination's endpoint_url)
// answers S3's 500 InternalError or 503 SlowDown for a share of requests, or waits before each upload; DynamoDB
// throttling needs the platform's own DynamoDB endpoint behind such a proxy (see dynamoThrottle). Every export
// must complete with its rows exactly once, the retries it took recorded on its runs; a destination whose bucket
// was deleted fails at once, without retries.
const FROM = "2026-05-01T00:00:00Z";
const TO = "2026-05-03T00:00:00Z";

/**
 * One export per trial with `proxy`'s faults set up (cleared once it ended), its destination at `endpoint`;
 * figures: faults injected, retries recorded, rows.
 */
function faultScenario(
  k: Knobs,
  p: RunningPlatform,
  src: ExportSource,
  proxy: FaultProxy,
  name: string,
  setUp: () => void,
  endpoint = proxy.endpoint,
): Promise<Row> {
  return trials("faults", name, k.trials, async (i) => {
    const api = platformApi(p);
    const bucket = await newBucket(await processCustomerS3(), "fault");
    const dest = await newDestination(api, bucket, `t${i}`, endpoint);
    const injected = () => Object.values(proxy.injected).reduce((a, b) => a + b, 0);
    const before = injected();
    setUp();
    const t0 = performance.now();
    const id = await startExport(api, dest, src.project, FROM, TO);
    const end = await exportEnd(
      () => api,
      id,
      undefined,
      () => {
        proxy.inject = undefined;
        proxy.delayMs = 0;
      },
    );
    check(end.status === "Completed", `export ended ${end.status}: ${end.errors.join("; ")}`);
    const rows = await checkExportedRows(bucket, `t${i}`, src.sent);
    return {
      "faults injected": injected() - before,
      "exports completed": 1,
      "retries recorded": end.retries,
      rows,
      "export s": (performance.now() - t0) / 1000,
    };
  });
}

/** A share `rate` of the destination's requests answered with `fault`. */
const sometimes = (rand: () => number, rate: number, fault: Fault) => () =>
  rand() < rate ? fault : undefined;

/** The destination's bucket is deleted after the destination was made: the export fails fast, no retries. */
function deletedBucket(k: Knobs, p: RunningPlatform, src: ExportSource): Promise<Row> {
  return trials("faults", "deleted bucket", k.trials, async (i) => {
    const api = platformApi(p);
    const customer = await processCustomerS3();
    const s3 = s3For(customer);
    const bucket = await newBucket(customer, "gone");
    const dest = await newDestination(api, bucket, `t${i}`, customer.s3.endpoint);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    if (listed.Contents?.length)
      await s3.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: listed.Contents.map((o) => ({ Key: o.Key! })) },
        }),
      );
    await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    const t0 = performance.now();
    const id = await startExport(api, dest, src.project, FROM, TO);
    const end = await exportEnd(() => api, id, 60_000);
    const seconds = (performance.now() - t0) / 1000;
    check(end.status === "Failed", `export ended ${end.status}`);
    check(end.retries === 0, `${end.retries} retries of a destination error`);
    check(end.errors.length > 0, "no error recorded on the export's runs");
    return { "exports failed": 1, "retries recorded": end.retries, "to Failed s": seconds };
  });
}

/**
 * DynamoDB throttling: the platform's DynamoDB clients (and its runtimes') go through a proxy in front of DynamoDB
 * Local (DYNAMODB_PORT, LOCAL_DYNAMODB_ENDPOINT) that answers ProvisionedThroughputExceededException to a share
 * of the calls while an export runs; the destination is the workspace's own S3, unproxied.
 */
async function dynamoThrottle(k: Knobs, rand: () => number, name: string): Promise<Row> {
  const ddbPort = await freePort();
  const proxy = await s3Proxy(`http://127.0.0.1:${ddbPort}`);
  const p = await startPlatform({
    ...EXPORT_ENV,
    DYNAMODB_PORT: String(ddbPort),
    LOCAL_DYNAMODB_ENDPOINT: proxy.endpoint,
  });
  try {
    const { endpoint } = (await processCustomerS3()).s3;
    const src = await exportSourceOf(p, "faults-ddb", "2026-05-01", endpoint);
    return await faultScenario(
      k,
      p,
      src,
      proxy,
      name,
      () => {
        proxy.inject = sometimes(rand, k.faultRate, FAULTS.dynamoThrottled);
      },
      endpoint,
    );
  } finally {
    await p.stop();
    await proxy.close();
  }
}

export async function faultInjection(k: Knobs): Promise<Row[]> {
  const rand = seededRandom(k.seed ^ 0x5a5a);
  const p = await startPlatform(EXPORT_ENV);
  const proxy = await s3Proxy((await processCustomerS3()).s3.endpoint);
  const rows: Row[] = [];
  const pct = Math.round(k.faultRate * 100);
  try {
    const src = await exportSourceOf(p, "faults", "2026-05-01", proxy.endpoint);
    if (wanted(k, "s3-5xx"))
      rows.push(
        await faultScenario(k, p, src, proxy, `S3 500 InternalError on ${pct}% of calls`, () => {
          proxy.inject = sometimes(rand, k.faultRate, FAULTS.s3InternalError);
        }),
      );
    if (wanted(k, "s3-throttle"))
      rows.push(
        await faultScenario(k, p, src, proxy, `S3 503 SlowDown on ${pct}% of calls`, () => {
          proxy.inject = sometimes(rand, k.faultRate, FAULTS.s3SlowDown);
        }),
      );
    if (wanted(k, "slow"))
      rows.push(
        await faultScenario(k, p, src, proxy, "slow destination (2 s per upload)", () => {
          proxy.delayMs = 2000;
        }),
      );
    if (wanted(k, "deleted-bucket")) rows.push(await deletedBucket(k, p, src));
  } finally {
    await proxy.close();
    await p.stop();
  }
  if (wanted(k, "dynamodb-throttle"))
    rows.push(await dynamoThrottle(k, rand, `DynamoDB throttling on ${pct}% of calls`));
  return rows;
}
