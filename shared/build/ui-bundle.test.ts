import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BuildError } from "../errors.ts";
import { bundleUi } from "./ui-bundle.ts";

// langgraph.json `ui`: components bundled for the browser as the reference bundles them.
const dirs: string[] = [];
function repo(files: Record<string, string>): { repo: string; out: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "ui-bundle-")));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, "repo", p)), { recursive: true });
    writeFileSync(join(root, "repo", p), text);
  }
  return { repo: join(root, "repo"), out: join(root, "out") };
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const bundle = (r: { repo: string; out: string }, ui: Record<string, string>, shared?: string[]) =>
  bundleUi({ realRepo: r.repo, configRel: ".", ui, shared, outDir: r.out, nodePaths: [], log: () => {} });

describe("ui bundles", () => {
  it("one IIFE script defining __LGUI_<name> and the extracted CSS, under ui/<name>/", async () => {
    const r = repo({
      "src/ui.jsx": `import "./ui.css";\nexport default { card: () => <b className="c">hi</b> };\n`,
      "src/ui.css": ".c { color: red; }\n",
    });
    const { ui } = await bundle(r, { agent: "./src/ui.jsx" });
    expect(ui).toEqual({ agent: { files: ["entrypoint.css", "entrypoint.js"] } });
    const js = readFileSync(join(r.out, "ui", "agent", "entrypoint.js"), "utf8");
    expect(js).toMatch(/^var __LGUI_agent = /);
    // JSX compiles to the automatic runtime, which the page provides too.
    expect(js).toContain('"react/jsx-runtime"');
    expect(js).toContain("render");
    expect(readFileSync(join(r.out, "ui", "agent", "entrypoint.css"), "utf8")).toContain("color: red");
  });

  it("leaves react, react-dom, the SDK and ui_config.shared to the page (through LGUI_REQUIRE)", async () => {
    const r = repo({
      "src/ui.jsx": [
        `import { useState } from "react";`,
        `import { createPortal } from "react-dom";`,
        `import { useStreamContext } from "@langchain/langgraph-sdk/react-ui";`,
        `import { z } from "my-shared-lib";`,
        `export default { x: () => { useState(); useStreamContext(); return createPortal(z, null); } };`,
      ].join("\n"),
    });
    await bundle(r, { agent: "./src/ui.jsx" }, ["my-shared-lib"]);
    const js = readFileSync(join(r.out, "ui", "agent", "entrypoint.js"), "utf8");
    for (const name of ["react", "react-dom", "@langchain/langgraph-sdk/react-ui", "my-shared-lib"])
      expect(js).toContain(JSON.stringify(name));
    expect(js).toContain('globalThis[Symbol.for("LGUI_REQUIRE")]');
    expect(js).not.toContain('typeof require !== "undefined" ? require');
  });

  it("a component that does not bundle fails the build naming it, its file and esbuild's error", async () => {
    const r = repo({ "src/ui.jsx": `import "./missing.css";\nexport default {};\n` });
    const err = await bundle(r, { weather: "./src/ui.jsx" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect((err as Error).message).toMatch(
      /^bundling ui component "weather" \(\.\/src\/ui\.jsx\) failed:\n.*src\/ui\.jsx:1:\d+: Could not resolve "\.\/missing\.css"/,
    );
  });

  it("any name is taken as the reference takes it: its global with '_' for what cannot be in an identifier", async () => {
    const r = repo({ "src/ui.jsx": "export default {};\n" });
    const lines: string[] = [];
    const { ui } = await bundleUi({
      realRepo: r.repo,
      configRel: ".",
      ui: {
        "agent-alias": "./src/ui.jsx",
        "météo 2": "./src/ui.jsx",
        "../up": "./src/ui.jsx",
        "..": "./src/ui.jsx",
      },
      outDir: r.out,
      nodePaths: [],
      log: (l) => lines.push(l),
    });
    expect(readFileSync(join(r.out, "ui", "agent-alias", "entrypoint.js"), "utf8")).toMatch(
      /^var __LGUI_agent_alias = /,
    );
    expect(readFileSync(join(r.out, "ui", "météo 2", "entrypoint.js"), "utf8")).toMatch(
      /^var __LGUI_m_t_o_2 = /,
    );
    // A name that cannot be one URL segment and one folder is left out, saying why; the others are served.
    expect(Object.keys(ui).sort()).toEqual(["agent-alias", "météo 2"]);
    expect(lines.filter((l) => l.includes("is not served"))).toEqual([
      expect.stringMatching(/^ui component "\.\.\/up" is not served: its name must be one URL segment/),
      expect.stringMatching(/^ui component "\.\." is not served/),
    ]);
  });

  it("a file outside the repository, or missing, is refused", async () => {
    const r = repo({ "src/ui.jsx": "export default {};\n" });
    await expect(bundle(r, { agent: "../outside.jsx" })).rejects.toThrow(/outside the repository/);
    await expect(bundle(r, { agent: "./src/nope.jsx" })).rejects.toThrow(/not found/);
  });
});
