import { spawn } from "node:child_process";
import { startPlatform } from "../harness/platform.ts";
import { freePort } from "../infra/local/http-util.ts";
import { fmt, load } from "./load.ts";

// npm run bench -- startup: time from process start to GET /ok = 200, then gateway throughput with 32
// clients, beside a bare Node HTTP server answering the same JSON (the reference) in the same run.
const BARE_SERVER = `require("node:http").createServer((q, s) => { s.writeHead(200, { "content-type": "application/json" }); s.end('{"ok":true}'); }).listen(Number(process.argv[1]), "127.0.0.1", () => console.log("up"));`;

export async function startupBench() {
  const platform = await startPlatform();
  const { facts, base, readyMs } = platform;
  try {
    const authHeaders = { "x-api-key": facts.api_key, "x-tenant-id": facts.tenant_id };
    const seconds = Number(process.env.BENCH_SECONDS ?? 5);
    // The reference runs in its own process, as the platform does, so neither shares the load generator's loop.
    const barePort = await freePort();
    const bare = spawn(process.execPath, ["-e", BARE_SERVER, String(barePort)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise((r) => bare.stdout!.once("data", r));
    await load(`${base}/ok`, { concurrency: 32, seconds: 1 }); // warm-up
    const ref = await load(`http://127.0.0.1:${barePort}/`, { concurrency: 32, seconds });
    bare.kill();
    const ok = await load(`${base}/ok`, { concurrency: 32, seconds });
    const exists = await load(`${base}/v2/auth/tokens/exists?provider_id=github`, {
      concurrency: 32,
      seconds,
      headers: authHeaders,
    });
    const single = await load(`${base}/v2/auth/tokens/exists?provider_id=github`, {
      concurrency: 1,
      seconds,
      headers: authHeaders,
    });
    console.log(`startup: ready (GET /ok = 200) in ${fmt(readyMs / 1000, 2)} s  (goal < 5 s)`);
    console.log("| endpoint (32 clients) | req/s | p50 ms | p95 ms | p99 ms | errors | × bare node |");
    console.log("|---|---|---|---|---|---|---|");
    for (const [name, r] of [
      ["bare node http (reference)", ref],
      ["GET /ok", ok],
      ["GET /v2/auth/tokens/exists (auth)", exists],
    ] as const) {
      console.log(
        `| ${name} | ${fmt(r.rps, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p95, 2)} | ${fmt(r.p99, 2)} | ${r.errors} | ${fmt(r.rps / ref.rps, 2)} |`,
      );
    }
    console.log(
      `authenticated request, 1 client: p50 ${fmt(single.p50, 2)} ms, p99 ${fmt(single.p99, 2)} ms (goal p50 < 5 ms)`,
    );
  } finally {
    await platform.stop();
  }
}
