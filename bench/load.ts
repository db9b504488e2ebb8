import { Agent, request } from "node:http";

// A closed-loop load generator: `concurrency` clients on keep-alive connections, for `seconds`.
export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
}

export async function load(
  url: string,
  opts: { concurrency: number; seconds: number; headers?: Record<string, string>; expect?: number },
) {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const latencies: number[] = [];
  let errors = 0;
  const until = performance.now() + opts.seconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request(url, { agent, headers: opts.headers }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== (opts.expect ?? 200)) errors++;
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < until) await one();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: q(0.5),
    p95: q(0.95),
    p99: q(0.99),
    errors,
  } satisfies LoadResult;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
