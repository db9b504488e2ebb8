import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { API, DiagnosticCategory, type Project } from "typescript/unstable/async";
import type { ArtifactManifest } from "./bundle.ts";
import type { LogLine } from "./exec.ts";
import { graphEntryName } from "./graph-config.ts";
import { inParentPackages } from "./paths.ts";
import { type GraphTypeSchemas, SCHEMAS_FILE, type SchemasFile } from "./schemas-file.ts";
import { messageClassDefinitions } from "./ts-message-classes.ts";
import { findSubgraphs } from "./ts-subgraphs.ts";
import { MESSAGE_MARKER, TypeSchemaWriter } from "./ts-type-schema.ts";

// Typed JSON Schemas of each graph's state, input, output and config, read from its TypeScript types at build
// time, as the reference server's extractor does (an Annotation carries no runtime types, so its schemas can only
// come from here). A reflection module importing each graph's file is checked with the TypeScript compiler
// (`typescript`, its API over the native compiler process) in the build step's own process; no user code runs.
// Never fails the build: a graph whose types cannot be read gets no schemas and one log line, and the whole
// extraction stops after a time budget. The agent runtime serves these when the graph has no runtime (zod,
// StateSchema) schemas (shared/agent/assistants/graph-schemas.ts).

const BUDGET_MS = 20_000;
const KINDS = ["state", "input", "output", "config"] as const;
const TS_SOURCE = /\.[cm]?tsx?$/;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface GraphSource {
  /** Absolute path of the graph's file. */
  file: string;
  exportName: string;
}

const M = MESSAGE_MARKER;
/** The reflection module's map of @langchain/core's message classes. */
const MESSAGE_CLASSES = `${M}Classes`;
// Type-level reflection of a graph export (a compiled graph, a builder, or a factory returning either): state is
// the graph's update type (every key optional), input the input definition's update type, output the output
// definition's state type, config the config annotation's update type. Messages map to one marker interface.
const HELPERS = `
import type { BaseMessage as __Message } from "@langchain/core/messages";
import type { StateDefinition as __Definition, StateType as __StateType, UpdateType as __UpdateType } from "@langchain/langgraph";
export interface ${M} { readonly __langgraph_message__: true }
import type * as __MessageModule from "@langchain/core/messages";
// The message classes @langchain/core exports, by export name: each class's instance type (type arguments at
// their constraints), or never for any other export.
export type ${MESSAGE_CLASSES} = {
  [K in keyof typeof __MessageModule]: (typeof __MessageModule)[K] extends abstract new (...args: any[]) => infer I
    ? I extends __Message ? I : never
    : never;
};
type __IsAny<T> = 0 extends 1 & T ? true : false;
type __In<T> = (value: T) => void;
type __OneMessage<T> = __IsAny<__Message> extends true ? never : T extends __Message ? ${M} : never;
type __Messages<T> = T extends readonly (infer E)[] ? ([__OneMessage<E>] extends [never] ? never : ${M}[]) : never;
type __Shape<T, D extends 0[] = []> = D["length"] extends 6 ? T : {
  [K in keyof T]: unknown extends T[K] ? T[K]
    : __In<__Messages<T[K]>> extends __In<${M}[]> ? ${M}[]
    : __In<__OneMessage<T[K]>> extends __In<${M}> ? ${M}
    : __Shape<T[K], [...D, 0]>;
};
// A reducer channel's update may be LangGraph's overwrite wrapper ({ __overwrite__: value }); the reference's
// schemas name only the channel's own update type.
type __NoOverwrite<T> = { [K in keyof T]: T[K] extends infer V ? (V extends { __overwrite__: any } ? never : V) : never };
type __Built<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type __Compiled<T> = __Built<T> extends infer G ? (G extends { compile(...args: any[]): infer C } ? C : G) : never;
type __Builder<G> = G extends { builder: infer B } ? B : never;
type __State<G> = __NoOverwrite<G extends { "~InputType": infer U } ? U : G extends { RunInput: infer U } ? U : never>;
type __Input<G> = __Builder<G> extends { _inputDefinition: infer I extends __Definition } ? __NoOverwrite<__UpdateType<I>> : never;
type __Output<G> = __Builder<G> extends { _outputDefinition: infer O extends __Definition } ? __StateType<O> : never;
type __Config<G> = __Builder<G> extends { _configSchema?: infer C }
  ? Exclude<C, undefined> extends infer D extends __Definition ? __UpdateType<D> : never
  : never;
`;

const aliases = (name: string, graphType: string) =>
  [
    `type ${name} = __Compiled<${graphType}>;`,
    ...KINDS.map((k) => `export type ${name}_${k} = __Shape<__${k[0].toUpperCase()}${k.slice(1)}<${name}>>;`),
  ].join("\n");

/** A module specifier for `file` from `dir`. */
const specifier = (dir: string, file: string) => {
  const rel = path.relative(dir, file).split(path.sep).join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
};

/**
 * The file system the compiler sees: the virtual files, the repository, and the packages imports resolve from
 * (`node_modules` of the repository mapped onto `modulesAt.real` if asked). Nothing else of the build machine
 * is readable (but the packages of the folders above the repository): a type-only import of a file outside the repository (which the bundler never sees) must not put
 * what that file declares into the artifact's schemas.
 */
function compilerFs(
  virtual: Map<string, string>,
  roots: string[],
  modulesAt?: { dir: string; real: string },
  packagesAbove?: string,
) {
  const within = (root: string, p: string) => p === root || p.startsWith(`${root}/`);
  const map = (p: string) => {
    if (modulesAt && within(modulesAt.dir, p)) return modulesAt.real + p.slice(modulesAt.dir.length);
    return p;
  };
  // The packages Node resolves from the folders above the repository (a graph folder inside another package)
  // are readable as the bundler reads them.
  const readable = (p: string) =>
    roots.some((r) => within(r, p)) ||
    (modulesAt && within(modulesAt.real, p)) ||
    (packagesAbove !== undefined && inParentPackages(packagesAbove, p));
  const stat = (p: string) => (readable(p) && existsSync(p) ? statSync(p) : undefined);
  return {
    readFile: (p: string) => virtual.get(p) ?? (stat(map(p))?.isFile() ? readFileSync(map(p), "utf8") : null),
    fileExists: (p: string) => virtual.has(p) || Boolean(stat(map(p))?.isFile()),
    directoryExists: (p: string) => Boolean(stat(map(p))?.isDirectory()),
    getAccessibleEntries: (p: string) => {
      const entries = stat(map(p))?.isDirectory() ? readdirSync(map(p), { withFileTypes: true }) : [];
      return {
        files: entries.filter((e) => e.isFile()).map((e) => e.name),
        directories: entries.filter((e) => e.isDirectory()).map((e) => e.name),
      };
    },
    realpath: (p: string) => (!virtual.has(p) && stat(map(p)) ? realpathSync(map(p)) : p),
  };
}

/** The compiler options: the repository's tsconfig when it has one, resolved the way the bundler resolves. */
function tsconfig(configDir: string, userConfig: string | undefined, root: string): string {
  const compilerOptions = {
    ...(userConfig ? {} : { target: "es2022", strictNullChecks: true, jsx: "preserve" }),
    module: "preserve",
    moduleResolution: "bundler",
    allowJs: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    noEmit: true,
    skipLibCheck: true,
    composite: false,
    incremental: false,
  };
  return JSON.stringify({
    ...(userConfig ? { extends: specifier(configDir, userConfig) } : {}),
    compilerOptions,
    files: [specifier(configDir, root)],
    include: [],
    references: [],
  });
}

/** The compiler's own folder (its default lib files are read from there), if it can be found. */
function compilerDir(): string | undefined {
  try {
    const ts = path.dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
    const native = `@typescript/typescript-${process.platform}-${process.arch}/package.json`;
    return realOrResolved(path.dirname(createRequire(`${ts}/`).resolve(native)));
  } catch {
    return undefined;
  }
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The nearest tsconfig.json from `dir` up to `repoDir`. */
function nearestTsconfig(repoDir: string, dir: string): string | undefined {
  for (let d = dir; d.startsWith(repoDir); d = path.dirname(d)) {
    if (existsSync(path.join(d, "tsconfig.json"))) return path.join(d, "tsconfig.json");
    if (d === repoDir || d === path.dirname(d)) break;
  }
  return undefined;
}

/** The schemas of the aliases `${name}_${kind}` the reflection module exports. */
async function readAliases(
  project: Project,
  reflection: string,
  names: string[],
  stopped: () => boolean,
): Promise<Map<string, GraphTypeSchemas>> {
  const { checker, program } = project;
  const file = await program.getSourceFile(reflection);
  const moduleSymbol = file && (await checker.getSymbolAtLocation(file));
  const exported = new Map(
    (moduleSymbol ? await checker.getExportsOfModule(moduleSymbol) : []).map((s) => [s.name, s]),
  );
  const classes = exported.get(MESSAGE_CLASSES);
  const classesType = classes && (await checker.getDeclaredTypeOfSymbol(classes));
  // The message classes' definitions share the named types they are made of (content blocks, tool calls), as the
  // reference's generator writes them.
  const messages =
    classesType && !classesType.isErrorType()
      ? async () => {
          const named = new TypeSchemaWriter(checker, stopped, undefined, true);
          const classes = await messageClassDefinitions(checker, program, classesType, (t) => named.body(t));
          return { ...named.definitions, ...classes };
        }
      : undefined;
  const writer = new TypeSchemaWriter(checker, stopped, messages);
  const out = new Map<string, GraphTypeSchemas>();
  for (const name of names) {
    const schemas: GraphTypeSchemas = {};
    for (const kind of KINDS) {
      const symbol = exported.get(`${name}_${kind}`);
      const type = symbol && (await checker.getDeclaredTypeOfSymbol(symbol));
      if (!type || type.isErrorType() || !type.isObjectType()) continue;
      const schema = await writer.root(type);
      const props = Object.keys((schema.properties as object | undefined) ?? {});
      if (schema.type === "object" && (props.length || kind !== "config")) schemas[kind] = schema;
    }
    out.set(name, schemas);
  }
  return out;
}

// Errors of a missing environment rather than of the code: type definitions and modules a production install
// leaves out (@types/node and other dev dependencies: the build installs with --omit=dev) or a library setting.
// They do not make the graph's types wrong; a graph whose own import is missing is not a graph to the checker.
const ENVIRONMENT_ERRORS = new Set([2307, 2580, 2582, 2583, 2584, 2591, 2592, 2593, 2792, 7016]);

/** The first error the compiler finds in `file` (environment errors aside), as "path:line: message". */
async function firstError(project: Project, file: string, repoDir: string): Promise<string | undefined> {
  const all = [
    ...(await project.program.getSyntacticDiagnostics(file)),
    ...(await project.program.getSemanticDiagnostics(file)),
  ];
  const d = all.find((x) => x.category === DiagnosticCategory.Error && !ENVIRONMENT_ERRORS.has(x.code));
  if (!d) return undefined;
  const text = await readFile(file, "utf8").catch(() => "");
  const line = text.slice(0, d.pos).split("\n").length;
  return `${path.relative(repoDir, file)}:${line}: ${d.text.split("\n")[0]}`;
}

/**
 * Reads each graph's types. `modules` is where imports resolve from when the repository has no node_modules of
 * its own (the platform's packages, as the bundler is given them).
 */
export async function extractGraphSchemas(opts: {
  repoDir: string;
  configDir: string;
  graphs: Record<string, GraphSource>;
  log: LogLine;
  modules?: string;
  budgetMs?: number;
}): Promise<SchemasFile> {
  const { log } = opts;
  // Real paths, as the compiler resolves imports from the graphs' (real) files.
  const repoDir = realOrResolved(opts.repoDir);
  const configDir = realOrResolved(opts.configDir);
  const reflection = path.join(configDir, "__langgraph_schemas__.mts");
  const configFile = path.join(configDir, "__langgraph_schemas__.tsconfig.json");
  const virtual = new Map<string, string>();
  virtual.set(configFile, tsconfig(configDir, nearestTsconfig(repoDir, configDir), reflection));
  const ids = Object.keys(opts.graphs);
  const rootText = [
    HELPERS,
    ...ids.map((id, i) => {
      const { file, exportName } = opts.graphs[id];
      return `import type * as __m${i} from ${JSON.stringify(specifier(configDir, file))};\n${aliases(`__g${i}`, `(typeof __m${i})[${JSON.stringify(exportName)}]`)}`;
    }),
  ].join("\n");
  virtual.set(reflection, rootText);
  const modulesAt = opts.modules
    ? { dir: path.join(repoDir, "node_modules"), real: realOrResolved(opts.modules) }
    : undefined;
  const session: CompilerSession = { stopped: false };
  const job: TypesJob = { ...opts, repoDir, configDir, reflection, configFile, virtual, ids, rootText };
  const work = async () => {
    session.api = new API({
      cwd: configDir,
      fs: compilerFs(
        virtual,
        [repoDir, compilerDir()].filter((d): d is string => Boolean(d)),
        modulesAt,
        repoDir,
      ),
    });
    return readGraphTypes(job, session);
  };
  return withinBudget(work, session, opts.budgetMs ?? BUDGET_MS, log, ids.length);
}

/** The compiler while it reads: stopped once the budget is spent (a read under way ends at its next step). */
type CompilerSession = { api?: API; stopped: boolean };

type TypesJob = {
  repoDir: string;
  configDir: string;
  graphs: Record<string, GraphSource>;
  log: LogLine;
  reflection: string;
  configFile: string;
  virtual: Map<string, string>;
  ids: string[];
  rootText: string;
};

type SubgraphCandidate = { id: string; namespace: string; alias: string; copy: number; variable: string };

/** Each graph's schemas from its export's type, then its subgraphs' from the variables it adds as nodes. */
async function readGraphTypes(job: TypesJob, session: CompilerSession): Promise<SchemasFile> {
  const { ids, graphs, virtual, reflection, configFile, log } = job;
  const api = session.api!;
  const isStopped = () => session.stopped;
  let project = await openProject(api, configFile, false);
  const out: SchemasFile = {};
  const roots = await readAliases(
    project,
    reflection,
    ids.map((_, i) => `__g${i}`),
    isStopped,
  );
  const copies: string[] = [];
  const candidates: SubgraphCandidate[] = [];
  for (const [i, id] of ids.entries()) {
    if (session.stopped) break;
    const { file, exportName } = graphs[id];
    const error = await firstError(project, file, job.repoDir);
    const schemas = roots.get(`__g${i}`) ?? {};
    if (error || !schemas.state) {
      log(
        `graph ${id}: no schemas from its types (${error ?? "its export's type is not a LangGraph graph"})`,
      );
      continue;
    }
    out[id] = schemas;
    const source = TS_SOURCE.test(file) ? await project.program.getSourceFile(file) : undefined;
    const refs = source ? findSubgraphs(source, exportName) : [];
    if (!refs.length) continue;
    // A copy of the file beside it exports the type of each candidate variable to the reflection module.
    const copy = file.replace(TS_SOURCE, (ext) => `.__langgraph__${ext}`);
    const variables = [...new Set(refs.flatMap((r) => r.variables))];
    const exports = variables.map((v) => `export type __lg_var_${v} = typeof ${v};`);
    virtual.set(copy, `${await readFile(file, "utf8")}\n${exports.join("\n")}\n`);
    const c = copies.push(copy) - 1;
    for (const r of refs)
      for (const variable of r.variables)
        candidates.push({
          id,
          namespace: r.namespace.join("|"),
          alias: `__s${candidates.length}`,
          copy: c,
          variable,
        });
  }
  if (!candidates.length) return out;
  virtual.set(
    reflection,
    [
      job.rootText,
      ...copies.map(
        (f, c) => `import type * as __c${c} from ${JSON.stringify(specifier(job.configDir, f))};`,
      ),
      ...candidates.map((x) => aliases(x.alias, `__c${x.copy}.__lg_var_${x.variable}`)),
    ].join("\n"),
  );
  project = await openProject(api, configFile, true);
  const read = await readAliases(
    project,
    reflection,
    candidates.map((x) => x.alias),
    isStopped,
  );
  for (const x of candidates) {
    const schemas = read.get(x.alias);
    const graph = out[x.id];
    if (!schemas?.state || graph.subgraphs?.[x.namespace]) continue;
    graph.subgraphs = { ...graph.subgraphs, [x.namespace]: schemas };
  }
  return out;
}

/** Runs the read within its time budget; past it, or on an error, no schemas (the runtime's come instead). */
async function withinBudget(
  work: () => Promise<SchemasFile>,
  session: CompilerSession,
  budget: number,
  log: LogLine,
  graphCount: number,
): Promise<SchemasFile> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), budget);
  });
  const running = work();
  running.catch(() => undefined);
  try {
    const result = await Promise.race([running, timeout]);
    if (result === "timeout") {
      session.stopped = true;
      log(
        `graph schemas: reading types stopped after ${budget / 1000} s; the graphs' schemas come from the runtime`,
      );
      return {};
    }
    const found = Object.keys(result).length;
    log(
      `graph schemas: read from types for ${found} of ${graphCount} graph(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return result;
  } catch (err) {
    log(`graph schemas: types not read (${(err as Error).message.split("\n")[0]})`);
    return {};
  } finally {
    clearTimeout(timer);
    // A request already under way is let finish briefly, so nothing is written to the closed compiler.
    if (session.stopped) await Promise.race([running.catch(() => undefined), delay(1000)]);
    await session.api?.close().catch(() => undefined);
  }
}

async function openProject(api: API, configFile: string, changed: boolean): Promise<Project> {
  const snapshot = await api.updateSnapshot(
    changed ? { fileChanges: { invalidateAll: true } } : { openProjects: [configFile] },
  );
  const project = snapshot.getProject(configFile) ?? snapshot.getProjects()[0];
  if (!project) throw new Error("the compiler opened no project");
  return project;
}

/**
 * The build step's part: writes schemas.json beside manifest.json for the graphs bundled from `entryPoints`
 * (graphEntryName → file). Never throws.
 */
export async function writeGraphSchemas(opts: {
  repoDir: string;
  configDir: string;
  outDir: string;
  entryPoints: Record<string, string>;
  manifest: ArtifactManifest;
  log: LogLine;
  modules?: string;
}): Promise<void> {
  try {
    const graphs: Record<string, GraphSource> = {};
    for (const [id, g] of Object.entries(opts.manifest.graphs)) {
      const file = opts.entryPoints[graphEntryName(id)];
      if (file) graphs[id] = { file, exportName: g.export_name };
    }
    const schemas = await extractGraphSchemas({ ...opts, graphs });
    await writeFile(path.join(opts.outDir, SCHEMAS_FILE), `${JSON.stringify(schemas)}\n`);
  } catch (err) {
    opts.log(`graph schemas: not written (${(err as Error).message})`);
  }
}
