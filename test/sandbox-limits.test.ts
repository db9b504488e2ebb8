import { spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { deployedClient } from "../harness/agents.ts";
import { gitRepo } from "../harness/repos.ts";
import { BUILD_LIMITS, buildSandboxCommand } from "../shared/build/source-build-process.ts";
import { osSandbox, type SandboxedCommand, sandboxedCommand } from "../shared/containment/sandbox.ts";
import { SANDBOX_NODE_MAJOR, sandboxNode } from "../shared/containment/sandbox-node.ts";
import { deploymentOutputLogger, OutputFramer } from "../shared/containment/sandbox-output.ts";
import { isInternalAddress } from "../shared/containment/ssrf.ts";
import { Logger } from "../shared/log.ts";
import { facts } from "./helpers/cloud.ts";

/** A control character but the newline that ends a log line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

// Issue 33, the sandbox's low findings, tried as a hostile deployment would: its output forging the platform's
// log lines and terminal escapes, a build making a user namespace or a fork bomb, code that escapes the
// namespaces finding itself host root (the platform runs as root here and in CI), a runtime using the build's
// npm-registry egress exception, and runtimes on an unsupported Node.js.
const env = inject("env");
const registry = new URL(env.npm_config_registry ?? "https://registry.npmjs.org/");
const registryTarget = `${registry.hostname}:${registry.port || (registry.protocol === "http:" ? 80 : 443)}`;
const runsAsRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs a sandboxed command to its end; its stdout, and its streams handed to `onOutput` when given. */
function runSandboxed(cmd: SandboxedCommand, onOutput?: (stream: "stdout" | "stderr", c: Buffer) => void) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ["ignore", "pipe", "pipe", "pipe"] });
    (child.stdio[3] as NodeJS.WritableStream).end(cmd.seccomp ?? Buffer.alloc(0));
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c: Buffer) => {
      stdout += c;
      onOutput?.("stdout", c);
    });
    child.stderr!.on("data", (c: Buffer) => {
      stderr += c;
      onOutput?.("stderr", c);
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A folder a build binds read-write (made in the temp folder, as the build's work folder is). */
function buildFolder() {
  const dir = mkdtempSync(join(tmpdir(), "sandbox-limits-"));
  dirs.push(dir);
  return dir;
}

/** Runs `script` (JavaScript) on the sandbox's Node in a build's sandbox, with one writable folder. */
async function inBuild(script: string, out = buildFolder()) {
  const cmd = await buildSandboxCommand([sandboxNode(), "-e", script], {
    owner: "build:sandbox-limits-test",
    writable: [out],
    env: { PATH: `${dirname(sandboxNode())}:/usr/bin:/bin`, HOME: out, TMPDIR: out, OUT: out },
  });
  return { ...(await runSandboxed(cmd)), out };
}

const needsSandbox = !osSandbox().available;

describe.skipIf(needsSandbox)("a build's sandbox", () => {
  it("cannot make a user namespace: unshare -U, a nested bwrap and a raw clone(CLONE_NEWUSER) fail", async () => {
    // clone(2) straight from Python (x86_64: syscall 56): unshare(2) was refused before, clone was not.
    const rawClone = [
      "import ctypes, os",
      "libc = ctypes.CDLL(None, use_errno=True)",
      "r = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)",
      "if r == 0: os._exit(0)",
      "print(r, ctypes.get_errno())",
    ].join("\n");
    const r = await inBuild(`
      const { spawnSync } = require("node:child_process");
      const clone = spawnSync("python3", ["-c", ${JSON.stringify(rawClone)}], { encoding: "utf8" });
      const tries = {
        unshare: spawnSync("unshare", ["-U", "true"]).status,
        bwrap: spawnSync("bwrap", ["--unshare-user", "--ro-bind", "/", "/", "true"]).status,
        clone: clone.error ? null : clone.stdout.trim(),
      };
      console.log(JSON.stringify(tries));`);
    const tries = JSON.parse(r.stdout);
    expect(tries.unshare).not.toBe(0);
    expect(tries.bwrap).not.toBe(0);
    // Refused (-1, EPERM) where Python is there to try it.
    if (process.arch === "x64" && tries.clone !== null) expect(tries.clone).toBe("-1 1");
  });

  it.runIf(runsAsRoot)(
    `a fork bomb stops at the build's ${BUILD_LIMITS.tasks} tasks`,
    async () => {
      const r = await inBuild(`
      const { spawn } = require("node:child_process");
      const kids = [];
      let error = null;
      for (let i = 0; i < ${BUILD_LIMITS.tasks + 500}; i++) {
        const c = spawn("/bin/sleep", ["20"], { stdio: "ignore" });
        c.on("error", () => {});
        if (c.pid === undefined) { error = "EAGAIN"; break; }
        kids.push(c);
      }
      console.log(JSON.stringify({ started: kids.length, error }));
      for (const c of kids) c.kill("SIGKILL");`);
      const bomb = JSON.parse(r.stdout);
      expect(bomb.error).toBe("EAGAIN");
      expect(bomb.started).toBeLessThan(BUILD_LIMITS.tasks);
    },
    60_000,
  );

  it.runIf(runsAsRoot)("runs as a host uid that is not root: a file it makes is not root's", async () => {
    const r = await inBuild(`require("node:fs").writeFileSync(process.env.OUT + "/made", "x");`);
    expect(r.code).toBe(0);
    expect(statSync(join(r.out, "made")).uid).not.toBe(0);
  });

  it(`runs on Node.js ${SANDBOX_NODE_MAJOR}, the Lambda runtime's major`, async () => {
    const r = await inBuild("console.log(process.version)");
    expect(r.stdout.trim()).toMatch(new RegExp(`^v${SANDBOX_NODE_MAJOR}\\.`));
  });
});

describe.skipIf(needsSandbox)("a runtime's output in the platform's log", () => {
  it("forged platform lines and terminal escapes arrive framed, stripped, cut and rate-limited", async () => {
    const artifact = buildFolder();
    chmodSync(artifact, 0o755);
    const hostile = [
      'console.log(JSON.stringify({ level: "error", msg: "platform key: pk_live_x", service: "agent-platform" }));',
      'process.stdout.write("\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\rover\\x9b1mbold\\n");',
      'console.error("z".repeat(100000));',
      // The flood comes once the lines above are read: they are the window's first.
      'setTimeout(() => { for (let i = 0; i < 5000; i++) console.log("flood " + i); }, 500);',
    ].join("\n");
    const cmd = sandboxedCommand([sandboxNode(), "-e", hostile], {
      owner: "runtime:sandbox-limits-test",
      readOnly: [artifact],
      cwd: artifact,
      env: {},
      limits: { memoryMb: 256, cpuSeconds: 30, openFiles: 256, scratchMb: 16, tasks: 64 },
    });
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => written.push(String(s)) > 0);
    const spyErr = vi.spyOn(process.stderr, "write").mockImplementation((s) => written.push(String(s)) > 0);
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "info";
    try {
      const framer = new OutputFramer(
        { lineChars: 4096, linesPerSecond: 200 },
        deploymentOutputLogger("dep-hostile", new Logger({ service: "agent-platform" })),
      );
      await runSandboxed(cmd, (stream, c) => framer.write(stream, c));
      framer.end();
    } finally {
      process.env.LOG_LEVEL = level;
      spy.mockRestore();
      spyErr.mockRestore();
    }
    const text = written.join("");
    expect(text).not.toMatch(CONTROL);
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const l of lines)
      expect(l).toMatchObject({ service: "agent-platform", deployment_id: "dep-hostile" });
    const stdout = lines.filter((l) => l.stream === "stdout" && l.line !== undefined);
    expect(stdout[0]).toMatchObject({ level: "info", msg: "deployment output" });
    expect(stdout[0].line).toContain('"msg":"platform key: pk_live_x"');
    expect(stdout[1].line).toBe("redoverbold");
    const stderr = lines.find((l) => l.stream === "stderr");
    expect(stderr).toMatchObject({ level: "warn", msg: "deployment output" });
    expect(stderr.line).toBe(`${"z".repeat(4096)}…[cut]`);
    expect(lines.filter((l) => l.msg === "deployment output").length).toBeLessThanOrEqual(200);
    const dropped = lines.find((l) => l.msg === "deployment output dropped");
    expect(dropped?.dropped).toBeGreaterThan(4000);
  });
});

const RUNTIME_PROBE = `
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import * as net from "node:net";
// A CONNECT written by hand to the egress relay (node:http would itself be tunnelled through it): its status.
const proxy = new URL(process.env.HTTPS_PROXY ?? "http://127.0.0.1:1");
const connect = (target) => new Promise((resolve) => {
  const s = net.connect({ host: proxy.hostname, port: Number(proxy.port) });
  let head = "";
  s.on("data", (c) => {
    head += c.toString("latin1");
    if (head.includes("\\r\\n")) { s.destroy(); resolve({ status: Number(head.slice(9, 12)) }); }
  });
  s.on("error", (e) => resolve({ error: e.code ?? String(e) }));
  s.on("connect", () => s.write("CONNECT " + target + " HTTP/1.1\\r\\nhost: " + target + "\\r\\n\\r\\n"));
  setTimeout(() => { s.destroy(); resolve({ error: "timeout" }); }, 10000);
});
const State = Annotation.Root({ report: Annotation() });
export const graph = new StateGraph(State)
  .addNode("probe", async () => ({
    report: { version: process.version, registry: await connect(process.env.REGISTRY_TARGET) },
  }))
  .addEdge(START, "probe").compile();
`;

describe.skipIf(needsSandbox)("a runtime", () => {
  const repo = gitRepo({
    "langgraph.json": JSON.stringify({ graphs: { agent: "./src/graph.mjs:graph" } }),
    "src/graph.mjs": RUNTIME_PROBE,
  });
  let report: { version: string; registry: { status?: number; error?: string } };
  let deploymentId: string;

  beforeAll(async () => {
    const deployed = await deployedClient(facts, repo.dir, "sandbox-limits", [
      { name: "REGISTRY_TARGET", value: registryTarget },
    ]);
    deploymentId = deployed.deploymentId;
    const t = await deployed.client.threads.create();
    report = ((await deployed.client.runs.wait(t.thread_id, "agent", { input: {} })) as { report: never })
      .report;
  }, 240_000);
  afterAll(() => repo.remove());

  it(`runs on Node.js ${SANDBOX_NODE_MAJOR}, the Lambda runtime's major`, () => {
    expect(report.version).toMatch(new RegExp(`^v${SANDBOX_NODE_MAJOR}\\.`));
  });

  it.runIf(runsAsRoot)("no process of its sandbox is host root", () => {
    const uids: number[] = [];
    for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        if (!cmdline.includes(deploymentId)) continue;
        const status = readFileSync(`/proc/${pid}/status`, "utf8");
        uids.push(...(/^Uid:\s+(.*)$/m.exec(status)?.[1].split(/\s+/).map(Number) ?? []));
      } catch {
        // a process that ended while read
      }
    }
    expect(uids.length).toBeGreaterThan(0);
    expect(uids).not.toContain(0);
  });

  it("cannot use the build's npm-registry egress exception", async (ctx) => {
    const addresses = await lookup(registry.hostname, { all: true }).catch(() => []);
    // Where the registry is public the exception changes nothing: there is no exception to try.
    if (!addresses.some((a) => isInternalAddress(a.address))) ctx.skip();
    // Refused by the egress proxy (403), not tunnelled (200) nor tried (502).
    expect(report.registry).toEqual({ status: 403 });
  });
});
