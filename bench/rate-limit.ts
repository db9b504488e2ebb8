import { pointAwsAt, startPlatform } from "../harness/platform.ts";
import { newApiKey, newTenantId, storeApiKey } from "../shared/auth/api-keys.ts";
import { WindowCounter } from "../shared/auth/window-counter.ts";
import { addRequests, tenants } from "../shared/records/identity.ts";

// npm run bench -- rate-limit: what the per-workspace rate limit adds to a request. One platform with the limiter
// on (the default limit); two workspaces, one with its own limit turned off (rate_limit 0: no count). Authenticated
// GETs alternate between them in rounds, so both see the same load; the difference of the p50s is what the count
// adds (decided in memory; its UpdateItem, one per block of requests or 200 ms, runs off the request path). Then
// the UpdateItem and a GetItem alone, straight to DynamoDB Local, and the decision alone. Disk-backed DynamoDB
// Local as `npm start` runs it; BENCH_IN_MEMORY=1: in memory, as the tests run it.
const ROUNDS = 10;
const PER_ROUND = 20;

async function workspace(rateLimit?: number) {
  const id = newTenantId();
  const key = newApiKey();
  await tenants.put({ id, name: "bench", created_at: new Date().toISOString(), rate_limit: rateLimit });
  await storeApiKey(key, [id]);
  return { "x-api-key": key };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function rateLimitBench() {
  const p = await startPlatform({
    WORKSPACE_RATE_LIMIT: "200",
    LOG_LEVEL: "warn",
    ...(process.env.BENCH_IN_MEMORY ? { DYNAMODB_IN_MEMORY: "1" } : {}),
  });
  try {
    pointAwsAt(p.facts);
    const counted = await workspace();
    const uncounted = await workspace(0);
    const get = async (headers: Record<string, string>) => {
      const t = performance.now();
      const r = await fetch(`${p.base}/api/v1/sessions?limit=1`, { headers });
      await r.text();
      if (r.status !== 200) throw new Error(`GET answered ${r.status}`);
      return performance.now() - t;
    };
    const times = { counted: [] as number[], uncounted: [] as number[] };
    for (let i = 0; i < 10; i++) await Promise.all([get(counted), get(uncounted)]);
    for (let round = 0; round < ROUNDS; round++)
      for (const [name, headers] of [
        ["counted", counted],
        ["uncounted", uncounted],
      ] as const)
        for (let i = 0; i < PER_ROUND; i++) times[name].push(await get(headers));
    // The count alone, straight to DynamoDB Local, beside a read of the same table.
    const direct = { update: [] as number[], get: [] as number[] };
    for (let i = 0; i < 100; i++) {
      let t = performance.now();
      await addRequests("bench", 0, 1, 0);
      direct.update.push(performance.now() - t);
      t = performance.now();
      await tenants.get("bench", false);
      direct.get.push(performance.now() - t);
    }
    // The decision itself, in this process: 100k requests of one workspace (its adds answer at once).
    const counter = new WindowCounter(async (_t, _s, n) => n);
    const decisions = 100_000;
    const started = performance.now();
    for (let i = 0; i < decisions; i++) counter.decide("bench", { limit: 1e9, ms: 3_600_000 });
    const decideUs = ((performance.now() - started) * 1000) / decisions;
    await counter.flushed();
    const on = p50(times.counted);
    const off = p50(times.uncounted);
    console.log(
      JSON.stringify({
        bench: "rate-limit",
        requests_each: ROUNDS * PER_ROUND,
        p50_ms_limited: +on.toFixed(2),
        p50_ms_unlimited: +off.toFixed(2),
        added_p50_ms: +(on - off).toFixed(2),
        decision_us: +decideUs.toFixed(3),
        dynamodb_update_item_p50_ms: +p50(direct.update).toFixed(2),
        dynamodb_get_item_p50_ms: +p50(direct.get).toFixed(2),
      }),
    );
  } finally {
    await p.stop();
  }
}
