import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { build, type Message } from "esbuild";
import { BuildError } from "../errors.ts";
import type { LogLine } from "./exec.ts";
import { parseGraphSpec } from "./graph-config.ts";
import { realInside, repoRelative } from "./paths.ts";
import { isUiName, uiGlobal } from "./ui-names.ts";

// Generative UI (langgraph.json `ui`): each entry's components bundled for the browser at build time, as the
// LangGraph.js API server bundles them: one script that defines the global `__LGUI_<name>` with a `render`
// function, plus its CSS. React, ReactDOM and the SDK stay outside the bundle: the page that shows the
// components (the SDK's LoadExternalComponent) hands them over through `globalThis[Symbol.for("LGUI_REQUIRE")]`.

/** The files of one UI entry, under `ui/<name>/` in the artifact. */
export interface BundledUi {
  files: string[];
}

/** Packages the host page provides (the reference's list), besides langgraph.json `ui_config.shared`. */
export const UI_SHARED = [
  "react",
  "react-dom",
  "@langchain/langgraph-sdk",
  "@langchain/langgraph-sdk/react-ui",
];

const ENTRY = "lgui-entrypoint";

/**
 * The bundle's entry: the user's module (its default export maps component names to components) and the
 * `render(name, shadowRootId)` LoadExternalComponent's HTML calls: it hands the component and a target inside
 * the element's shadow root to the page's component store (`Symbol.for("LGUI_EXT_STORE")`).
 */
const entrySource = (file: string, exportName: string) => `
import * as userModule from ${JSON.stringify(file)};
const components = userModule[${JSON.stringify(exportName)}] ?? {};
export function render(name, shadowRootId) {
  const host = document.getElementById(shadowRootId);
  if (!host) throw new Error("no element with id " + shadowRootId);
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const target = document.createElement("div");
  root.appendChild(target);
  const component = components[name];
  if (!component) throw new Error("no UI component named " + name);
  globalThis[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, component, target);
}
`;

// esbuild's IIFE output loads an external package through `require` when there is one; in a browser the page's
// LoadExternalComponent provides it under a symbol instead.
const REQUIRE_CHECK = 'typeof require !== "undefined" ? require';
const PAGE_REQUIRE =
  'typeof globalThis[Symbol.for("LGUI_REQUIRE")] !== "undefined" ? globalThis[Symbol.for("LGUI_REQUIRE")]';

const where = (m: Message) =>
  m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ` : "";

/** Bundles every `ui` entry into `outDir/ui/<name>/`; a failure names the entry and esbuild's errors. */
export async function bundleUi(opts: {
  realRepo: string;
  configRel: string;
  ui: Record<string, string>;
  shared?: string[];
  outDir: string;
  nodePaths: string[];
  tsconfig?: string;
  log: LogLine;
}): Promise<{ ui: Record<string, BundledUi>; inputs: string[] }> {
  const out: Record<string, BundledUi> = {};
  const inputs: string[] = [];
  for (const [name, spec] of Object.entries(opts.ui)) {
    const what = `ui component ${JSON.stringify(name)}`;
    // One entry the platform cannot serve is left out with a line saying why; the rest of the config deploys.
    if (!isUiName(name)) {
      opts.log(
        `${what} is not served: its name must be one URL segment (no '/', '\\' or control characters, not '.' or '..', at most 128 characters)`,
      );
      continue;
    }
    const { file, exportName } = parseGraphSpec(spec);
    const rel = repoRelative(opts.configRel, file);
    if (!rel) throw new BuildError(`${what}: ${file} is outside the repository`);
    const real = await realInside(opts.realRepo, path.join(opts.realRepo, rel)).catch(() => {
      throw new BuildError(`${what}: ${file} not found`);
    });
    if (!real) throw new BuildError(`${what}: ${file} points outside the repository`);
    const result = await build({
      stdin: {
        contents: entrySource(real, exportName),
        resolveDir: path.dirname(real),
        sourcefile: ENTRY,
        loader: "js",
      },
      absWorkingDir: opts.realRepo,
      outdir: path.join(opts.outDir, "ui", name),
      entryNames: "entrypoint",
      bundle: true,
      platform: "browser",
      format: "iife",
      globalName: uiGlobal(name),
      target: "es2020",
      jsx: "automatic",
      external: [...UI_SHARED, ...(opts.shared ?? [])],
      loader: {
        ".svg": "dataurl",
        ".png": "dataurl",
        ".jpg": "dataurl",
        ".gif": "dataurl",
        ".woff2": "dataurl",
      },
      nodePaths: opts.nodePaths,
      ...(opts.tsconfig ? { tsconfig: opts.tsconfig } : { tsconfigRaw: {} }),
      metafile: true,
      write: false,
      logLevel: "silent",
    }).catch((err: unknown) => {
      const errors: Message[] = (err as { errors?: Message[] }).errors ?? [];
      const lines = errors.length
        ? errors.slice(0, 10).map((m) => `${where(m)}${m.text}`)
        : [(err as Error).message];
      throw new BuildError(`bundling ${what} (${file}) failed:\n${lines.join("\n")}`);
    });
    const files: string[] = [];
    for (const f of result.outputFiles) {
      const base = path.basename(f.path);
      const contents = base.endsWith(".js") ? f.text.replaceAll(REQUIRE_CHECK, PAGE_REQUIRE) : f.contents;
      await mkdir(path.dirname(f.path), { recursive: true });
      await writeFile(f.path, contents);
      files.push(base);
    }
    inputs.push(...Object.keys(result.metafile.inputs));
    out[name] = { files: files.sort() };
    opts.log(`bundled ui ${name}: ${files.join(", ")}`);
  }
  return { ui: out, inputs };
}
