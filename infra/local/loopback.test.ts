import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeHost } from "../../shared/agent/hosting/host.ts";
import type { RuntimeHost } from "../../shared/agent/hosting/runtime-host.ts";
import { LOOPBACK_PATHS, LOOPBACK_TOKEN_HEADER } from "../../shared/aws/local-loopback.ts";
import { Gateway } from "./gateway.ts";
import { loopbackEndpoints, newLoopbackToken } from "./loopback.ts";

// A Lambda environment of the local cloud (a worker) reaches the runtimes in the
// cloud's process through its loopback endpoint, with the token of the cloud's start and nothing else.
const token = newLoopbackToken();
const calls: unknown[][] = [];
const runtimes: RuntimeHost = {
  kick: async (...a) => void calls.push(["kick", ...a]),
  activated: async (...a) => void calls.push(["activated", ...a]),
  remove: async (...a) => void calls.push(["remove", ...a]),
};
const gateway = new Gateway({ routes: [], internal: loopbackEndpoints(token, runtimes), cors: false });
let base: string;
beforeAll(async () => {
  await gateway.load();
  base = `http://127.0.0.1:${await gateway.listen(0, "127.0.0.1")}`;
  process.env.PLATFORM_LOOPBACK_URL = base;
  process.env.PLATFORM_LOOPBACK_TOKEN = token;
});
afterAll(async () => {
  delete process.env.PLATFORM_LOOPBACK_URL;
  delete process.env.PLATFORM_LOOPBACK_TOKEN;
  await gateway.close();
});

const post = (
  path: string,
  body: unknown,
  headers: Record<string, string> = { [LOOPBACK_TOKEN_HEADER]: token },
) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });

describe("the local cloud's loopback endpoint", () => {
  it("a worker's runtimeHost() reaches the local cloud's runtimes", async () => {
    await runtimeHost().kick("t1", "d1", "th1");
    await runtimeHost().activated("t1", "d1");
    await runtimeHost().remove("t1", "d2");
    expect(calls).toEqual([
      ["kick", "t1", "d1", "th1"],
      ["activated", "t1", "d1"],
      ["remove", "t1", "d2"],
    ]);
  });

  it("refuses a caller without this start's token", async () => {
    const body = { op: "remove", tenant_id: "t", deployment_id: "d" };
    expect((await post(LOOPBACK_PATHS.runtimeHost, body, {})).status).toBe(403);
    const other = { [LOOPBACK_TOKEN_HEADER]: newLoopbackToken() };
    expect((await post(LOOPBACK_PATHS.runtimeHost, body, other)).status).toBe(403);
  });

  it("answers a malformed call with a 422 naming the field", async () => {
    const res = await post(LOOPBACK_PATHS.runtimeHost, { op: "reboot", tenant_id: "t", deployment_id: "d" });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: { loc: string[] }[] }).detail[0].loc).toEqual(["body", "op"]);
    const kick = await post(LOOPBACK_PATHS.runtimeHost, { op: "kick", tenant_id: "t", deployment_id: "d" });
    expect(kick.status).toBe(422);
    const notJson = await fetch(`${base}${LOOPBACK_PATHS.runtimeHost}`, {
      method: "POST",
      headers: { [LOOPBACK_TOKEN_HEADER]: token },
      body: "{",
    });
    expect(notJson.status).toBe(422);
  });
});
