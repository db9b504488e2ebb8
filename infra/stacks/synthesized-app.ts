import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { buildConsole } from "../console/build.mjs";
import { buildApp, type PlatformStacks } from "./index.ts";
import { ROOT } from "./node-function.ts";

export interface SynthesizedApp {
  app: App;
  stacks: PlatformStacks;
  /** The cloud assembly's folder. */
  dir: string;
}

let synthesized: Promise<SynthesizedApp> | undefined;

/**
 * The app as `cdk synth` builds it (cdk.json's context, console/dist, the cached function bundles) but with no
 * account, region or credentials, synthesized once per process: the quota checks, `npm run aws:preflight` and
 * the synth tests (a test project whose files share their modules) all read this one assembly.
 */
export function synthesizedApp(): Promise<SynthesizedApp> {
  synthesized ??= (async () => {
    await buildConsole(); // the console stack deploys console/dist
    const context = JSON.parse(readFileSync(join(ROOT, "cdk.json"), "utf8")).context;
    const dir = mkdtempSync(join(tmpdir(), "cdk-app-"));
    const app = new App({ context, outdir: dir });
    const stacks = buildApp(app);
    app.synth();
    return { app, stacks, dir };
  })();
  return synthesized;
}
