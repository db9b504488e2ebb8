import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../infra/local/http-util.ts";
import { fmt, load } from "./load.ts";

// npm run bench -- startup: time from process start to GET /ok = 200, then gateway throughput with 32
// clients, beside a bare Node HTTP server answering the same JSON (the reference) in the same run.
const BARE_SERVER = `require("node:http").createServer((q, s) => { s.writeHead(200, { "content-type": "application/json" }); s.end('{"ok":true}'); }).listen(Number(process.argv[1]), "127.0.0.1", () => console.log("up"));`;

export async function startupBench() {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  const [port, s3Port] = [await freePort(), await freePort()];
  const t0 = performance.now();
  const child = spawn(process.execPath, ["infra/local/launch.mjs"], {
    env: {
      ...process.env,
      PORT: String(port),
      S3_PORT: String(s3Port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  let readyMs = Number.NaN;
  for (;;) {
    const ok = await fetch(`${base}/ok`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) {
      readyMs = performance.now() - t0;
      break;
    }
    if (performance.now() - t0 > 60_000) throw new Error("the platform did not start within 60 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  try {
    const facts = JSON.parse(readFileSync(join(dataDir, "local.json"), "utf8"));
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
    process.kill(-child.pid!, "SIGTERM");
    await new Promise((r) => child.once("exit", r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
