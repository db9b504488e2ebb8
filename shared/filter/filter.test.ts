import { describe, expect, it } from "vitest";
import { FilterParseError } from "../errors.ts";
import {
  compileFilter,
  evaluateFilter,
  type FilterableRun,
  parseFilter,
  printFilter,
  pushdown,
} from "./index.ts";

const TRACE = "0191e5c4-8a3b-7f00-9a51-1b2c3d4e5f60";

// Four runs chosen so each case below separates them in a different way.
const RUNS: FilterableRun[] = [
  {
    id: "r1",
    name: "ChatOpenAI",
    run_type: "llm",
    status: "success",
    start_time: "2024-01-01T00:00:00Z",
    end_time: "2024-01-01T00:00:03Z",
    first_token_time: "2024-01-01T00:00:00.500123Z",
    tags: ["production", "v2"],
    extra: { metadata: { session_id: "x", thread_id: "t1", user: "alice", attempt: 3 } },
    inputs: { messages: [{ role: "user", content: "Please summarise this invoice" }] },
    outputs: { text: "Done" },
    error: null,
    total_tokens: 150,
    prompt_tokens: 100,
    completion_tokens: 50,
    total_cost: "0.0045",
    trace_id: TRACE,
    parent_run_id: null,
    is_root: true,
    session_id: "s1",
  },
  {
    id: "r2",
    name: "Pipeline",
    run_type: "chain",
    status: "error",
    start_time: "2023-12-31T23:59:00Z",
    end_time: "2023-12-31T23:59:00.500Z",
    tags: ["staging"],
    extra: { metadata: { session_id: "y", thread_id: "x" } },
    inputs: { question: "what is 2+2", context: "content-free" },
    outputs: null,
    error: "ValueError: bad invoice",
    total_tokens: 40,
    trace_id: "t2",
    parent_run_id: "r1",
    is_root: false,
    session_id: "s1",
  },
  {
    id: "r3",
    name: "search_tool",
    run_type: "tool",
    status: "pending",
    start_time: 1704110400000, // 2024-01-01T12:00:00Z as epoch ms
    end_time: null,
    inputs: { query: "weather" },
    total_tokens: null,
    trace_id: "t3",
    parent_run_id: "r9",
    is_root: false,
    session_id: "s2",
  },
  {
    id: "r4",
    name: "ChatAnthropic",
    run_type: "llm",
    status: "success",
    start_time: "2024-02-01T00:00:00", // naive timestamp, read as UTC
    end_time: "2024-02-01T00:01:30Z",
    tags: ["production"],
    extra: { metadata: { session_id: 42 } },
    inputs: { prompt: 'say "hi"' },
    outputs: { generations: [{ text: "100% sure" }] },
    total_tokens: "200",
    total_cost: 0.02,
    trace_id: "t4",
    is_root: true,
    session_id: "s2",
  },
];

const CASES: [string, string[]][] = [
  // eq / neq / in on plain string fields
  ['eq(run_type, "llm")', ["r1", "r4"]],
  ['neq(run_type, "llm")', ["r2", "r3"]],
  ['in(run_type, ["chain", "tool"])', ["r2", "r3"]],
  [`eq(trace_id, "${TRACE}")`, ["r1"]],
  ['eq(parent_run_id, "r1")', ["r2"]],
  ['eq(session_id, "s2")', ["r3", "r4"]],
  ["eq(id, 'r3')", ["r3"]],
  ['and(eq(run_type, "llm"), eq(name, "ChatOpenAI"), like(input_value, "%invoice%"))', ["r1"]],
  // latency: durations, plain seconds, missing end_time never matches
  ['and(eq(run_type, "llm"), gt(latency, "2s"))', ["r1", "r4"]],
  ['gt(latency, "5s")', ["r4"]],
  ['lt(latency, "1s")', ["r2"]],
  ['lte(latency, "500ms")', ["r2"]],
  ['gte(latency, "1.5m")', ["r4"]],
  ['lt(latency, "1h")', ["r1", "r2", "r4"]],
  ["eq(latency, 3)", ["r1"]],
  ["neq(latency, 3)", ["r2", "r4"]],
  ["gt(latency, 60)", ["r4"]],
  // time fields compare as instants
  ['gte(start_time, "2024-01-01T00:00:00Z")', ["r1", "r3", "r4"]],
  ['lt(start_time, "2024-01-01")', ["r2"]],
  ["gt(start_time, 1704067200000)", ["r3", "r4"]],
  ['eq(start_time, "2024-01-01T13:00:00+01:00")', ["r3"]],
  ['gte(start_time, "2024-02-01T00:00:00Z")', ["r4"]],
  ['gt(first_token_time, "2024-01-01T00:00:00.500Z")', ["r1"]],
  ['lt(first_token_time, "2024-01-01T00:00:00.5002Z")', ["r1"]],
  ["exists(end_time, false)", ["r3"]],
  // numeric fields accept numbers and numeric strings on either side
  ["lt(total_tokens, 100)", ["r2"]],
  ['gte(total_tokens, "150")', ["r1", "r4"]],
  ["eq(total_tokens, 200)", ["r4"]],
  ["gt(total_cost, 0.01)", ["r4"]],
  ['lt(total_cost, "0.01")', ["r1"]],
  ["exists(total_tokens, false)", ["r3"]],
  // tags
  ['has(tags, "production")', ["r1", "r4"]],
  ['has(tags, "staging")', ["r2"]],
  ['eq(tags, "v2")', ["r1"]],
  ['neq(tags, "production")', ["r2", "r3"]],
  ["exists(tags, false)", ["r3"]],
  // search
  ['search("invoice")', ["r1", "r2"]],
  ['search("INVOICE")', ["r1", "r2"]],
  ['search("chatopenai")', ["r1"]],
  ["search('say \"hi\"')", ["r4"]],
  ['search(name, "chat")', ["r1", "r4"]],
  ['search(error, "VALUEERROR")', ["r2"]],
  // like / ilike
  ['like(name, "Chat%")', ["r1", "r4"]],
  ['like(name, "chat%")', []],
  ['ilike(name, "chat%")', ["r1", "r4"]],
  ['like(name, "Chat_penAI")', ["r1"]],
  ['like(input_value, "%content%")', ["r2"]],
  ['like(output_value, "100\\% sure")', ["r4"]],
  ['like(output_value, "100% sure")', ["r4"]],
  ['like(output_value, "100\\%")', []],
  // exists / error / is_root
  ["exists(error, true)", ["r2"]],
  ["exists(error, false)", ["r1", "r3", "r4"]],
  ["exists(error)", ["r2"]],
  ["eq(error, null)", ["r1", "r3", "r4"]],
  ["neq(error, null)", ["r2"]],
  ['eq(error, "ValueError: bad invoice")', ["r2"]],
  ['neq(error, "other")', ["r2"]],
  ["eq(is_root, true)", ["r1", "r4"]],
  ["eq(is_root, false)", ["r2", "r3"]],
  // combinators
  ['not(eq(status, "error"))', ["r1", "r3", "r4"]],
  ['or(eq(name, "Pipeline"), eq(name, "search_tool"))', ["r2", "r3"]],
  ['and(eq(run_type, "llm"))', ["r1", "r4"]],
  ['or(eq(status, "pending"))', ["r3"]],
  ['not(or(eq(run_type, "llm"), eq(is_root, false)))', []],
  ['or(and(eq(run_type, "llm"), lt(latency, 10)), exists(error, true))', ["r1", "r2"]],
  // metadata pairing: key and value conditions must hold on the same entry
  ['and(eq(metadata_key, "session_id"), eq(metadata_value, "x"))', ["r1"]],
  ['and(in(metadata_key, ["session_id", "thread_id"]), eq(metadata_value, "x"))', ["r1", "r2"]],
  ['and(eq(metadata_key, "user"), eq(metadata_value, "x"))', []],
  ['and(eq(metadata_key, "attempt"), gt(metadata_value, 2))', ["r1"]],
  ['and(eq(metadata_key, "session_id"), eq(metadata_value, 42), eq(run_type, "llm"))', ["r4"]],
  ['eq(metadata_key, "user")', ["r1"]],
  ['neq(metadata_key, "user")', ["r2", "r3", "r4"]],
  ['eq(metadata_value, "x")', ["r1", "r2"]],
  ['eq(metadata_value, "42")', ["r4"]],
  ["exists(metadata_key, true)", ["r1", "r2", "r4"]],
  // pairing applies only to direct children of one and(...)
  ['or(eq(metadata_key, "user"), eq(metadata_value, "x"))', ["r1", "r2"]],
  ['and(eq(metadata_key, "session_id"), or(eq(metadata_value, "x")))', ["r1", "r2"]],
  // the same pairing for inputs and outputs
  ['and(eq(input_key, "question"), like(input_value, "%2+2%"))', ["r2"]],
  ['and(eq(input_key, "context"), like(input_value, "%2+2%"))', []],
  ['eq(input_key, "query")', ["r3"]],
  ['and(eq(output_key, "generations"), search(output_value, "SURE"))', ["r4"]],
  ['eq(output_value, "Done")', ["r1"]],
];

function matching(filter: string): string[] {
  const node = parseFilter(filter);
  return RUNS.filter((run) => evaluateFilter(node, run)).map((run) => run.id);
}

describe("evaluateFilter", () => {
  it.each(CASES)("%s", (filter, expected) => {
    expect(matching(filter)).toEqual(expected);
  });

  it("compileFilter agrees with parse + evaluate", () => {
    const predicate = compileFilter('and(eq(run_type, "llm"), gt(latency, "2s"))');
    expect(RUNS.filter(predicate).map((run) => run.id)).toEqual(["r1", "r4"]);
  });

  it("derives is_root from parent_run_id when the run lacks it", () => {
    const run = { ...RUNS[0], is_root: undefined } as unknown as FilterableRun;
    expect(evaluateFilter(parseFilter("eq(is_root, true)"), run)).toBe(true);
  });

  it("never throws on hostile runs", () => {
    const hostile = new Proxy({} as FilterableRun, {
      get() {
        throw new Error("boom");
      },
    });
    expect(evaluateFilter(parseFilter('eq(name, "a")'), hostile)).toBe(false);
  });
});

const ERRORS: [string, number, string][] = [
  ['and(eq(status, "x")', 19, "Expected ',' or ')'"],
  ['eq(status "x")', 10, "Expected ',' or ')'"],
  ['foo(name, "x")', 0, "Unknown comparator 'foo'"],
  ['eq(nmae, "x")', 3, "Unknown field 'nmae'"],
  ['eq(feedback_key, "x")', 3, "Unknown field 'feedback_key'"],
  ["has(tags, 1)", 10, "expects a string literal"],
  ['has(name, "x")', 4, "only applies"],
  ['in(name, "x")', 9, "expects a list"],
  ["eq(name)", 0, "exactly two arguments"],
  ['eq("name", "x")', 3, "Expected a field name"],
  ["gt(is_root, true)", 12, "boolean"],
  ["eq(status, true)", 11, "expects a string or number"],
  ['gte(start_time, "yesterday")', 16, "ISO-8601"],
  ['gt(latency, "2 parsecs")', 12, "duration"],
  ['lt(total_tokens, "many")', 17, "expects a number"],
  ['exists(error, "yes")', 14, "true or false"],
  ["like(name, 5)", 11, "string literal"],
  ['in(run_type, ["llm", [1]])', 21, "Expected a literal value"],
  ["eq(tags, null)", 9, "null"],
  ["'abc", 0, "Unterminated string"],
  ["", 0, "Empty filter"],
  ["   ", 3, "Empty filter"],
  ['eq(name, "a") extra', 14, "expected end of input"],
  ['not(eq(name, "a"), eq(name, "b"))', 0, "exactly one argument"],
  ["and()", 0, "at least one argument"],
  ["eq(name, @)", 9, "Unexpected character"],
  ["eq(name, [1, 2])", 9, "single literal"],
  ['eq(name, eq(name, "x"))', 9, "Nested expression"],
  ["eq(name, 1e999)", 9, "out of range"],
  ['and(eq(name, "a"),)', 18, "Expected a filter expression"],
  ['eq(name, "\\u12")', 10, "\\u escape"],
  ["eq name", 3, "Expected '('"],
  [`${"not(".repeat(70)}eq(name, "a")${")".repeat(70)}`, 256, "Nesting deeper than 64"],
  ["x".repeat(10_001), 10_000, "longer than 10000"],
];

describe("parseFilter errors", () => {
  it.each(ERRORS)("%s", (text, position, fragment) => {
    let caught: unknown;
    try {
      parseFilter(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FilterParseError);
    const err = caught as FilterParseError;
    expect({ position: err.position, message: err.message }).toEqual({
      position,
      message: expect.stringContaining(fragment),
    });
    expect(err.message).toContain(`at position ${position}`);
  });

  it("accepts nesting up to the cap", () => {
    const text = `${"not(".repeat(63)}eq(name, "a")${")".repeat(63)}`;
    expect(() => parseFilter(text)).not.toThrow();
  });
});

describe("parseFilter", () => {
  it("builds the documented AST", () => {
    expect(parseFilter("and(eq(run_type, 'llm'), in(tags, [\"a\", 'b']), not(exists(error, true)))")).toEqual(
      {
        kind: "and",
        children: [
          { kind: "cmp", op: "eq", field: "run_type", value: "llm" },
          { kind: "cmp", op: "in", field: "tags", value: ["a", "b"] },
          { kind: "not", child: { kind: "cmp", op: "exists", field: "error", value: true } },
        ],
      },
    );
    expect(parseFilter('search("x")')).toEqual({ kind: "cmp", op: "search", field: null, value: "x" });
    expect(parseFilter("lt(total_cost, -0.5e-3)")).toMatchObject({ value: -0.0005 });
  });

  it("decodes escapes in both quote styles", () => {
    expect(parseFilter(String.raw`eq(name, 'it\'s \"q\" \\ \n \u00e9')`)).toMatchObject({
      value: 'it\'s "q" \\ \n é',
    });
  });

  it("prints a canonical form that parses back", () => {
    const text = 'or(and(eq(name, "a\\"b"), gt(latency, "2s")), not(in(run_type, ["llm", "tool"])))';
    expect(printFilter(parseFilter(text))).toBe(text);
  });
});

describe("pushdown", () => {
  const cases: [string, ReturnType<typeof pushdown>][] = [
    [
      'and(eq(is_root, true), eq(run_type, "llm"), gte(start_time, "2024-01-01T00:00:00Z"), lt(start_time, "2024-02-01T00:00:00Z"))',
      {
        isRoot: true,
        runType: "llm",
        startTimeGte: "2024-01-01T00:00:00.000Z",
        startTimeLt: "2024-02-01T00:00:00.000Z",
      },
    ],
    ['eq(run_type, "tool")', { runType: "tool" }],
    ['and(and(in(run_type, ["llm"])), eq(is_root, false))', { runType: "llm", isRoot: false }],
    ['in(run_type, ["llm", "chain"])', {}],
    ['or(eq(is_root, true), eq(run_type, "llm"))', {}],
    ["not(eq(is_root, true))", {}],
    ['and(eq(is_root, false), or(eq(run_type, "llm"), eq(run_type, "chain")))', { isRoot: false }],
    ['lte(start_time, "2024-01-01T00:00:00.000500Z")', { startTimeLt: "2024-01-01T00:00:00.001Z" }],
    ['gt(start_time, "2024-01-01T00:00:00.000500Z")', { startTimeGte: "2024-01-01T00:00:00.000Z" }],
    [
      'eq(start_time, "2024-01-01T01:00:00+01:00")',
      { startTimeGte: "2024-01-01T00:00:00.000Z", startTimeLt: "2024-01-01T00:00:00.001Z" },
    ],
    [
      'and(gt(start_time, "2024-01-01"), gte(start_time, "2024-03-01"), lt(start_time, 1740787200000))',
      { startTimeGte: "2024-03-01T00:00:00.000Z", startTimeLt: "2025-03-01T00:00:00.000Z" },
    ],
    ['and(gt(latency, "2s"), has(tags, "x"))', {}],
  ];
  it.each(cases)("%s", (text, expected) => {
    expect(pushdown(parseFilter(text))).toEqual(expected);
  });
});
