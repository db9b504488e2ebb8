import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type CustomerS3, startCustomerS3 } from "../harness/customer-s3.ts";
import { type Cloud, type LocalFacts, startCloud } from "../infra/local/cloud.ts";
import { freePort } from "../infra/local/http-util.ts";
import { grantFolder } from "../shared/control/repo-grants.ts";

// One local cloud for the whole integration run, on free loopback ports, DynamoDB in memory.
let cloud: Cloud | undefined;
let customer: Awaited<ReturnType<typeof startCustomerS3>> | undefined;
let dataDir: string | undefined;
/** Stand-ins of third parties a test file may hold open at once (the files run side by side: this many each). */
const ALLOWED_STAND_INS_PER_FILE = 12;

export async function setup(project: TestProject) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  process.env.LOG_LEVEL ??= "error";
  // Limits shrunk so the tests see retries, queues and schedules in seconds (the local cloud reads them).
  process.env.LOCAL_SFN_RETRY_INTERVAL_MS ??= "100";
  // Runs' waits send a newline this often: shorter than the test graphs' slow nodes (agent-runs.test.ts).
  process.env.AGENT_WAIT_KEEPALIVE_MS ??= "100";
  process.env.EXPORT_MAX_RUNNING_PER_WORKSPACE ??= "2";
  // The test files deploy most of their agents into the bootstrap workspace (test/capacity-breakout.test.ts tries
  // the cap on a workspace of its own, with the record's own max_deployments).
  process.env.WORKSPACE_MAX_DEPLOYMENTS ??= "1000";
  // Small multipart parts, so every export test streams its files as multipart uploads.
  process.env.EXPORT_PART_BYTES ??= "16384";
  process.env.EXPORT_ROW_GROUP_ROWS ??= "50";
  // The functions' environments stay warm for the run, as a busy account's do: test files use the same functions.
  process.env.LOCAL_FUNCTION_IDLE_MS ??= String(60 * 60_000);
  // Tests send bursts of concurrent agent requests (multitask strategies): the router meets them warm, not with a
  // cold start per request that spreads the burst over seconds.
  process.env.LOCAL_ROUTER_PROVISIONED ??= "8";
  // Deployments' own origins under a domain as in AWS (<id>.agents.test): a browser takes a Domain= cookie there,
  // not under localhost (test/agent-origin-types.test.ts maps the names to loopback).
  process.env.AGENT_ORIGIN_DOMAIN ??= "agents.test";
  // A stand-in for a model vendor's API on loopback, which sandboxed graphs may reach through the egress proxy
  // (test/agent-breakout.test.ts listens there), and stand-ins for third parties the platform calls (OAuth
  // providers, git hosts, webhook receivers: harness/fake-http.ts), on loopback ports the operator's EGRESS_ALLOW
  // names, as it would a LAN host: everything else internal stays refused.
  const ports = new Set<number>();
  const standIns = ALLOWED_STAND_INS_PER_FILE * Math.max(1, project.config.maxWorkers);
  while (ports.size < 1 + standIns) ports.add(await freePort());
  const [modelPort, ...allowedPorts] = ports;
  const egressAllowed = `http://127.0.0.1:${modelPort}`;
  process.env.EGRESS_ALLOW = [...ports].map((p) => `127.0.0.1:${p}`).join(",");
  dataDir = mkdtempSync(join(tmpdir(), "platform-test-"));
  cloud = await startCloud({
    port: 0,
    s3Port: await freePort(),
    dataDir,
    inMemory: true,
    schedulerIntervalMs: 200,
  });
  // Test repositories are made in the temp folder (harness/repos.ts): granted as an operator grants folders.
  await grantFolder(cloud.facts.tenant_id, tmpdir());
  project.provide("cloud", cloud.facts);
  project.provide("backends", cloud.backends);
  // Export tests' buckets: a workspace's own S3, apart from the platform's (harness/customer-s3.ts).
  customer = await startCustomerS3();
  project.provide("customerS3", { s3: customer.s3 });
  project.provide("env", { ...process.env } as Record<string, string>);
  project.provide("dataDir", dataDir);
  project.provide("egressAllowed", egressAllowed);
  project.provide("allowedPorts", allowedPorts);
}

export async function teardown() {
  await customer?.stop();
  await cloud?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

declare module "vitest" {
  export interface ProvidedContext {
    cloud: LocalFacts;
    /**
     * The backends behind the cloud's policy proxy, with the tokens they answer: for tests that build a proxy of
     * their own (the proxy is what adds a token) or share its DynamoDB. Everything else goes through the proxy.
     */
    backends: Cloud["backends"];
    /** The export tests' S3 (a workspace's own, not the platform's). */
    customerS3: CustomerS3;
    env: Record<string, string>;
    dataDir: string;
    /** The one internal address the egress proxy lets sandboxed code reach (EGRESS_ALLOW). */
    egressAllowed: string;
    /** Loopback ports EGRESS_ALLOW names for the stand-ins of third parties (harness/fake-http.ts). */
    allowedPorts: number[];
  }
}
