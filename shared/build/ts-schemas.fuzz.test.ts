import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractGraphSchemas } from "./ts-schemas.ts";

// Untrusted input: the graph files of a repository being built. Whatever they hold (graphs, half graphs,
// syntax errors, subgraph-looking calls on anything), reading their types never throws and never fails the
// build: each graph gets well-formed schemas or none, with single-line log lines. Each run starts the compiler
// once for a batch of files, so runs are few and files many.
const NUM_RUNS = 6;
const HEADER = `import { Annotation, MessagesAnnotation, StateGraph, START, END } from "@langchain/langgraph";\n`;

const piece = fc.oneof(
  fc.constantFrom(
    "const State = Annotation.Root({ count: Annotation<number>, mode: Annotation<'a' | 'b'> });\n",
    "const sub = new StateGraph(State).addNode('x', () => ({})).addEdge(START, 'x').compile();\n",
    "const builder = new StateGraph(State)",
    ".addNode('sub', sub)",
    ".addNode('fn', (s) => sub.invoke(s))",
    ".addNode(`t`, builder)",
    ".addEdge(START, 'sub')",
    ".compile()",
    ";\n",
    "export const graph = ",
    "export const graph = async (config) => builder.compile();\n",
    "builder.addNode('late', sub);\n",
    "export const graph = builder.compile();\n",
    "export default ",
    "Annotation<{ a?: string; b: number[] | null }>",
    "MessagesAnnotation",
    "(",
    ")",
    "{",
    "}",
    "'",
    "`",
    "//",
    "\n",
  ),
  fc.string({ maxLength: 12 }),
);
const file = fc.array(piece, { maxLength: 25 }).map((parts) => HEADER + parts.join(""));

describe("extractGraphSchemas on arbitrary graph files", () => {
  it("never throws; every graph gets object schemas or none; log lines are single lines", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(file, { minLength: 1, maxLength: 6 }), async (files) => {
        const dir = mkdtempSync(path.join(tmpdir(), "ts-schemas-fuzz-"));
        try {
          const graphs: Record<string, { file: string; exportName: string }> = {};
          files.forEach((text, i) => {
            const rel = path.join(dir, "src", `g${i}.ts`);
            mkdirSync(path.dirname(rel), { recursive: true });
            writeFileSync(rel, text);
            graphs[`g${i}`] = { file: rel, exportName: i % 2 ? "default" : "graph" };
          });
          const logs: string[] = [];
          const out = await extractGraphSchemas({
            repoDir: dir,
            configDir: dir,
            graphs,
            log: (l) => logs.push(l),
            modules: path.resolve("node_modules"),
          });
          for (const [id, schemas] of Object.entries(out)) {
            expect(Object.keys(graphs)).toContain(id);
            expect(schemas.state?.type).toBe("object");
            for (const sub of Object.values(schemas.subgraphs ?? {})) expect(sub.state?.type).toBe("object");
          }
          for (const line of logs) expect(line).not.toContain("\n");
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: NUM_RUNS },
    );
  }, 120_000);
});
