import { Client } from "langsmith";
import { afterEach, describe, expect, it } from "vitest";
import { queryRuns } from "../shared/runs/query.ts";
import { auth, base, call, facts } from "./helpers/cloud.ts";

// Issue 16 item 6 (bounds): a runs query reads at most a budget of stored runs per request. A filter that
// matches nothing answers an empty page with a cursor instead of reading the project's whole history; following
// the cursors finds every match exactly once. The runs are ingested with the langsmith SDK; the query is the
// platform's own function, called here with a small budget (RUNS_QUERY_SCAN_BUDGET, read per call).
const client = new Client({ apiUrl: `${base}/api/v1`, apiKey: facts.api_key, autoBatchTracing: false });

afterEach(() => {
  delete process.env.RUNS_QUERY_SCAN_BUDGET;
});

describe("the runs query's scan budget", () => {
  it("stops at the budget with a cursor; following the cursors finds each match once", async () => {
    const project = `budget-${crypto.randomUUID().slice(0, 8)}`;
    const start = Date.now() - 60_000;
    const names: string[] = [];
    for (let i = 0; i < 40; i++) {
      const name = i === 7 ? "needle" : `hay-${i}`;
      names.push(name);
      await client.createRun({
        id: crypto.randomUUID(),
        name,
        run_type: "chain",
        inputs: { i },
        project_name: project,
        start_time: start + i * 100,
        end_time: start + i * 100 + 50,
      });
    }
    const sessions = await call("GET", `/api/v1/sessions?name=${project}`, { headers: auth });
    const session = sessions.json[0].id as string;

    process.env.RUNS_QUERY_SCAN_BUDGET = "15";
    const nothing = await queryRuns(facts.tenant_id, {
      session: [session],
      filter: 'eq(name, "none")',
      limit: 10,
    });
    expect(nothing.runs).toEqual([]);
    expect(nothing.cursors.next).toEqual(expect.any(String));

    const found: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await queryRuns(facts.tenant_id, {
        session: [session],
        filter: 'eq(name, "needle")',
        limit: 10,
        cursor,
      });
      found.push(...page.runs.map((r) => String(r.name)));
      cursor = page.cursors.next ?? undefined;
      pages++;
    } while (cursor && pages < 100);
    expect(found).toEqual(["needle"]);
    expect(pages).toBeGreaterThan(1);

    // Without a filter the pages are full and every run comes once, newest first.
    const all: string[] = [];
    cursor = undefined;
    do {
      const page = await queryRuns(facts.tenant_id, { session: [session], limit: 10, cursor });
      all.push(...page.runs.map((r) => String(r.name)));
      cursor = page.cursors.next ?? undefined;
    } while (cursor);
    expect(all).toEqual([...names].reverse());
  });
});
