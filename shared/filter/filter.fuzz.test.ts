import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FilterParseError } from "../errors.ts";
import { type CmpNode, type Comparator, FIELDS, type FieldName, fieldKind, type Scalar } from "./ast.ts";
import { matchNode } from "./evaluate.ts";
import {
  evaluateFilter,
  type FilterableRun,
  type FilterNode,
  parseFilter,
  printFilter,
  pushdown,
} from "./index.ts";
import { parseInstant } from "./values.ts";

const NUM_RUNS = 1000;

// Raw UTF-16 code units (lone surrogates included) alongside ordinary text.
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
);
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (n === 0 ? 0 : n));
const isoTime = fc
  .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const duration = fc
  .tuple(fc.nat(100_000), fc.constantFrom("ms", "s", "m", "h", "d", ""))
  .map(([n, unit]) => `${n}${unit}`);

/** A literal the parser accepts for this field and comparator. */
function literalFor(field: FieldName, op: Comparator): fc.Arbitrary<Scalar> {
  const ordering = op === "gt" || op === "gte" || op === "lt" || op === "lte";
  const nullable = <T extends Scalar>(arb: fc.Arbitrary<T>) =>
    ordering ? arb : fc.oneof(arb, fc.constant(null));
  switch (fieldKind(field)) {
    case "time":
      return nullable(fc.oneof(isoTime, finite));
    case "latency":
      return nullable(fc.oneof(duration, finite));
    case "number":
      return nullable(fc.oneof(finite, finite.map(String)));
    case "bool":
      return fc.oneof(fc.boolean(), fc.constant(null));
    case "tags":
    case "pairKey":
      return anyText;
    case "pairValue":
      return ordering ? fc.oneof(anyText, finite) : fc.oneof(anyText, finite, fc.boolean());
    default:
      return nullable(fc.oneof(anyText, finite));
  }
}

function opsFor(field: FieldName): Comparator[] {
  const kind = fieldKind(field);
  const ops: Comparator[] = ["eq", "neq", "in", "like", "ilike", "search", "exists"];
  if (kind !== "bool" && kind !== "tags") ops.push("gt", "gte", "lt", "lte");
  if (kind === "tags") ops.push("has");
  return ops;
}

const cmpArb: fc.Arbitrary<CmpNode> = fc.oneof(
  anyText.map((value): CmpNode => ({ kind: "cmp", op: "search", field: null, value })),
  fc.constantFrom(...FIELDS).chain((field) =>
    fc.constantFrom(...opsFor(field)).chain((op): fc.Arbitrary<CmpNode> => {
      const make = (value: CmpNode["value"]): CmpNode => ({ kind: "cmp", op, field, value });
      if (op === "exists") return fc.boolean().map(make);
      if (op === "like" || op === "ilike" || op === "search" || op === "has") return anyText.map(make);
      if (op === "in") return fc.array(literalFor(field, "eq"), { maxLength: 4 }).map(make);
      return literalFor(field, op).map(make);
    }),
  ),
);

const { node: nodeArb } = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", maxDepth: 6 },
    cmpArb,
    fc.record({
      kind: fc.constant("and" as const),
      children: fc.array(tie("node"), { minLength: 1, maxLength: 4 }),
    }),
    fc.record({
      kind: fc.constant("or" as const),
      children: fc.array(tie("node"), { minLength: 1, maxLength: 4 }),
    }),
    fc.record({ kind: fc.constant("not" as const), child: tie("node") }),
  ),
}));

const hostileValue = fc.anything({
  withBigInt: true,
  withNullPrototype: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withBoxedValues: true,
});
const runLike = fc.oneof(
  hostileValue,
  fc.record(
    {
      ...Object.fromEntries(FIELDS.map((f) => [f, hostileValue])),
      start_time: fc.oneof(isoTime, finite, hostileValue),
      end_time: fc.oneof(isoTime, finite, hostileValue),
      tags: fc.oneof(fc.array(anyText), hostileValue),
      extra: fc.oneof(fc.record({ metadata: hostileValue }), hostileValue),
      inputs: hostileValue,
      outputs: hostileValue,
    },
    { requiredKeys: [] },
  ),
);

function expectOnlyParseErrors(text: string): void {
  try {
    parseFilter(text);
  } catch (err) {
    if (!(err instanceof FilterParseError)) throw err;
    expect(Number.isInteger(err.position) && err.position >= 0 && err.position <= text.length).toBe(true);
  }
}

describe("parseFilter fuzz", () => {
  it("throws nothing but FilterParseError on arbitrary strings", () => {
    fc.assert(
      fc.property(anyText, (text) => expectOnlyParseErrors(text)),
      { numRuns: NUM_RUNS },
    );
  });

  it("throws nothing but FilterParseError on grammar-shaped noise", () => {
    const piece = fc.constantFrom(
      "and(",
      "or(",
      "not(",
      "eq(",
      "in(",
      "like(",
      "exists(",
      "search(",
      "name",
      "tags",
      "latency",
      ",",
      ")",
      "[",
      "]",
      '"a"',
      "'b",
      "\\",
      "-1.5e3",
      "true",
      "null",
      " ",
      "%",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => expectOnlyParseErrors(pieces.join(""))),
      { numRuns: NUM_RUNS },
    );
  });

  it("throws nothing but FilterParseError on mutated valid filters", () => {
    const mutated = fc
      .tuple(nodeArb.map(printFilter), fc.nat(), fc.nat(8), anyText)
      .map(([text, at, cut, insert]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + cut);
      });
    fc.assert(
      fc.property(mutated, (text) => expectOnlyParseErrors(text)),
      { numRuns: NUM_RUNS },
    );
  });

  it("round-trips parse(print(ast)) to the same AST", () => {
    fc.assert(
      fc.property(nodeArb, (ast) => {
        expect(parseFilter(printFilter(ast))).toEqual(ast);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe("evaluateFilter fuzz", () => {
  it("matchNode never throws on arbitrary run-like values", () => {
    fc.assert(
      fc.property(nodeArb, runLike, (ast, run) => {
        expect(typeof matchNode(ast, run)).toBe("boolean");
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("pushdown facts hold for every matching run", () => {
    const base = Date.UTC(2024, 0, 1);
    const instant = fc
      .integer({ min: -3000, max: 3000 })
      .chain((ms) =>
        fc
          .nat(999)
          .map((micros) =>
            new Date(base + ms).toISOString().replace("Z", `${String(micros).padStart(3, "0")}Z`),
          ),
      );
    const runType = fc.constantFrom("llm", "chain", "tool");
    const fact: fc.Arbitrary<FilterNode> = fc.oneof(
      fc.boolean().map((value): FilterNode => ({ kind: "cmp", op: "eq", field: "is_root", value })),
      runType.map((value): FilterNode => ({ kind: "cmp", op: "eq", field: "run_type", value })),
      fc
        .array(runType, { minLength: 1, maxLength: 2 })
        .map((value): FilterNode => ({ kind: "cmp", op: "in", field: "run_type", value })),
      fc
        .tuple(fc.constantFrom("eq", "gt", "gte", "lt", "lte") as fc.Arbitrary<Comparator>, instant)
        .map(([op, value]): FilterNode => ({ kind: "cmp", op, field: "start_time", value })),
    );
    const filter = fc.oneof(
      fact,
      fc
        .array(fc.oneof(fact, nodeArb), { minLength: 1, maxLength: 5 })
        .map((children): FilterNode => ({ kind: "and", children })),
    );
    const run = fc.record({ is_root: fc.boolean(), run_type: runType, start_time: instant });
    fc.assert(
      fc.property(filter, run, (node, fields) => {
        const full = {
          id: "r",
          name: "n",
          status: "success",
          trace_id: "t",
          session_id: "s",
          ...fields,
        } as FilterableRun;
        if (!evaluateFilter(node, full)) return;
        const facts = pushdown(node);
        const t = parseInstant(full.start_time);
        if (facts.isRoot !== undefined) expect(full.is_root).toBe(facts.isRoot);
        if (facts.runType !== undefined) expect(full.run_type).toBe(facts.runType);
        if (facts.startTimeGte !== undefined)
          expect(t).toBeGreaterThanOrEqual(Date.parse(facts.startTimeGte));
        if (facts.startTimeLt !== undefined) expect(t).toBeLessThan(Date.parse(facts.startTimeLt));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
