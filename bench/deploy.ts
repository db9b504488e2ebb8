import { readFileSync, rmSync } from "node:fs";
import { startPlatform } from "../harness/platform.ts";
import { gitRepo } from "../harness/repos.ts";
import { fmt } from "./load.ts";

// npm run bench -- deploy: seconds from POST /v2/deployments of examples/agent (a git repository with its own
// package.json and lockfile) to its revision DEPLOYED, and from a PATCH with a new repo_ref to the new
// revision DEPLOYED; median of 5 (BENCH_DEPLOY_ROUNDS). The client polls the revision every 250 ms, as a
// CI script would. The reference is the goal (15 s); the established hosted service takes minutes.
const ROUNDS = Number(process.env.BENCH_DEPLOY_ROUNDS ?? 5);
const GOAL_S = 15;
const POLL_MS = 250;

/** examples/agent as a git repository: `main`, and a branch `v2` that differs in one file. */
function exampleRepo(): string {
  const readme = readFileSync("examples/agent/README.md", "utf8");
  return gitRepo({}, { v2: { "CHANGELOG.md": `${readme}\nv2\n` } }, { from: "examples/agent" }).dir;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function deployBench() {
  const repo = exampleRepo();
  const p = await startPlatform({ LOG_LEVEL: "warn" });
  try {
    const headers = {
      "x-api-key": p.facts.api_key,
      "x-tenant-id": p.facts.tenant_id,
      "content-type": "application/json",
    };
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${p.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await r.json()) as any;
      if (r.status >= 400) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const untilDeployed = async (deployment: string, revision: string) => {
      for (;;) {
        const r = await api("GET", `/v2/deployments/${deployment}/revisions/${revision}`);
        if (r.status === "DEPLOYED") return;
        if (/FAILED|INTERRUPTED/.test(r.status))
          throw new Error(`revision ${revision} ended ${r.status}: ${r.error}`);
        await new Promise((res) => setTimeout(res, POLL_MS));
      }
    };
    const create: number[] = [];
    const patch: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      let t0 = performance.now();
      const d = await api("POST", "/v2/deployments", {
        name: `bench-${i}-${Date.now()}`,
        source: "github",
        source_config: { repo_url: repo, deployment_type: "dev" },
        source_revision_config: { repo_ref: "main", langgraph_config_path: "langgraph.json" },
      });
      await untilDeployed(d.id, d.latest_revision_id);
      create.push((performance.now() - t0) / 1000);
      t0 = performance.now();
      const patched = await api("PATCH", `/v2/deployments/${d.id}`, {
        source_revision_config: { repo_ref: "v2" },
      });
      await untilDeployed(d.id, patched.latest_revision_id);
      patch.push((performance.now() - t0) / 1000);
      console.log(
        `round ${i + 1}: POST → DEPLOYED ${fmt(create[i], 2)} s, PATCH → DEPLOYED ${fmt(patch[i], 2)} s`,
      );
    }
    console.log("\n| step | median s | min s | max s | × goal (15 s) |");
    console.log("|---|---|---|---|---|");
    for (const [label, xs] of [
      ["POST /v2/deployments → DEPLOYED", create],
      ["PATCH (new repo_ref) → DEPLOYED", patch],
    ] as const)
      console.log(
        `| ${label} | ${fmt(median(xs), 2)} | ${fmt(Math.min(...xs), 2)} | ${fmt(Math.max(...xs), 2)} | ${fmt(median(xs) / GOAL_S, 2)} |`,
      );
    console.log(
      "(the first POST includes a cold npm install of the example's dependencies; later builds reuse the cache)",
    );
  } finally {
    await p.stop();
    rmSync(repo, { recursive: true, force: true });
  }
}
