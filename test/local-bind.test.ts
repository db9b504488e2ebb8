import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cloud, startCloud } from "../infra/local/cloud.ts";
import { freePort } from "../infra/local/http-util.ts";

// The local cloud's own services — DynamoDB Local, the local S3, the AWS emulator and the policy proxy in front of
// them — listen on loopback whatever HOST is; only the gateway follows it. Read from the kernel's socket tables
// (Linux), for a cloud started on 0.0.0.0.
const LISTEN = "0A";
const IPV4_LOOPBACK = "0100007F";

/** The local addresses (hex, as /proc/net shows them) of the sockets listening on `port`. */
function listeners(port: number): string[] {
  const out: string[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.trim().split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      const [address, hexPort] = local!.split(":");
      if (state === LISTEN && Number.parseInt(hexPort!, 16) === port) out.push(address!);
    }
  }
  return out;
}
const loopback = (a: string) =>
  a === IPV4_LOOPBACK ||
  a === "0000000000000000FFFF00000100007F" || // ::ffff:127.0.0.1
  a === "00000000000000000000000001000000"; // ::1
const anyAddress = (a: string) => /^0+$/.test(a);
const portOf = (url: string) => Number(new URL(url).port);

let cloud: Cloud;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "platform-bind-"));
  cloud = await startCloud({ host: "0.0.0.0", port: 0, s3Port: await freePort(), dataDir, inMemory: true });
});
afterAll(async () => {
  await cloud?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.runIf(process.platform === "linux")("local cloud bind addresses with HOST=0.0.0.0", () => {
  it("the gateway follows HOST", () => {
    const addresses = listeners(portOf(cloud.facts.base_url));
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every(anyAddress)).toBe(true);
  });

  it.each([
    ["DynamoDB Local", () => cloud.backends.dynamodb.endpoint],
    ["the local S3", () => cloud.backends.s3.endpoint],
    ["the AWS emulator (KMS, Step Functions, Lambda, Scheduler)", () => cloud.backends.emulator.endpoint],
    ["the policy proxy in front of them (the AWS endpoint of local.json)", () => cloud.facts.s3.endpoint],
  ])("%s listens on loopback only", (_name, endpoint) => {
    expect(new URL(endpoint()).hostname).toBe("127.0.0.1");
    const addresses = listeners(portOf(endpoint()));
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.filter((a) => !loopback(a))).toEqual([]);
  });
});
