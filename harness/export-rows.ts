import type { ExportRow } from "../shared/records/export-fields.ts";

// Exported runs for the Parquet benchmarks (bench/parquet.ts, shared/export/parquet.bench.ts): realistic rows, seeded.
const WORDS = (
  "the a export bucket parquet run trace token model answer question project file day prefix field tag user " +
  "agent tool call retry error limit cost latency stream chunk schema column value null list json time zone " +
  "configure deploy region key secret policy queue worker batch page offset cursor shard partition filter"
).split(" ");

/** `count` distinct runs shaped like the exported ones (about 1 KB each), with varied text (seeded). */
export function benchRows(count: number): ExportRow[] {
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(" ");
  const rows: ExportRow[] = [];
  const hex = (i: number, w = 12) => i.toString(16).padStart(w, "0");
  const base = Date.parse("2026-01-05T00:00:00Z");
  const iso = (ms: number, us: number) =>
    `${new Date(ms).toISOString().slice(0, 23)}${String(us).padStart(3, "0")}Z`;
  for (let i = 0; i < count; i++) {
    const start = base + i * 137;
    const trace = `0190a1b2-c3d4-7e5f-8a9b-${hex(Math.floor(i / 5))}`;
    const root = i % 5 === 0;
    const llm = i % 3 === 0;
    rows.push({
      id: `0190a1b2-c3d4-7e5f-8a9b-${hex(i)}`,
      tenant_id: "6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
      session_id: "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d",
      trace_id: trace,
      parent_run_id: root ? null : trace,
      parent_run_ids: root ? [] : [trace],
      reference_example_id: i % 10 === 0 ? `7d8e9f0a-1b2c-4d3e-8f4a-${hex(i)}` : null,
      name: llm ? "ChatOpenAI" : i % 3 === 1 ? "RunnableSequence" : "retrieve_documents",
      run_type: llm ? "llm" : i % 3 === 1 ? "chain" : "retriever",
      start_time: iso(start, i % 1000),
      end_time: i % 50 === 49 ? null : iso(start + 850 + (i % 400), (i * 7) % 1000),
      status: i % 50 === 49 ? "pending" : i % 40 === 39 ? "error" : "success",
      is_root: root,
      dotted_order: `20260105T000000${hex(i, 6)}Z${trace}`,
      trace_tier: null,
      inputs: JSON.stringify({
        messages: [
          { role: "system", content: "You are a helpful assistant that answers questions about the docs." },
          { role: "user", content: `${words(12 + (i % 7))}? Keep it short (project ${i % 97}).` },
        ],
        temperature: 0.2,
        model: "gpt-4o-mini",
      }),
      outputs:
        i % 50 === 49
          ? null
          : JSON.stringify({
              generations: [
                {
                  text: `${words(24 + (i % 9))}. Run ${i}.`,
                  finish_reason: "stop",
                },
              ],
              llm_output: { token_usage: { prompt_tokens: 120 + (i % 50), completion_tokens: 48 } },
            }),
      error: i % 40 === 39 ? "RateLimitError: 429 Too Many Requests" : null,
      extra: JSON.stringify({
        metadata: {
          ls_provider: "openai",
          ls_model_name: "gpt-4o-mini",
          revision_id: "v1.4.2",
          user: `u${i % 13}`,
        },
        runtime: { sdk: "langsmith-py", sdk_version: "0.3.1", platform: "linux" },
      }),
      events: JSON.stringify([{ name: "start", time: iso(start, 0) }]),
      tags: i % 4 === 0 ? [] : ["prod", `team-${i % 6}`, "exporter"],
      feedback_stats: i % 7 === 0 ? JSON.stringify({ correctness: { n: 1, avg: 1 } }) : null,
      total_tokens: llm ? 168 + (i % 50) : null,
      prompt_tokens: llm ? 120 + (i % 50) : null,
      completion_tokens: llm ? 48 : null,
      total_cost: llm ? 0.0000252 + (i % 50) * 1e-7 : null,
      prompt_cost: llm ? 0.000018 : null,
      completion_cost: llm ? 0.0000072 : null,
      first_token_time: llm ? iso(start + 310, 250) : null,
    });
  }
  return rows;
}
