import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { run, tolerateStdioErrors } from "./exec.ts";

describe("child processes", () => {
  it("a child that exits without reading what it was sent does not end the parent (ECONNRESET on its socket)", async () => {
    // What a sandboxed runtime killed before bwrap read its seccomp program did to the platform (and its tests).
    const child = spawn(process.execPath, ["-e", "setTimeout(() => process.exit(0), 50)"], {
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    const errors: string[] = [];
    tolerateStdioErrors(child);
    for (const stream of child.stdio) if (stream) expect(stream.listenerCount("error")).toBe(1);
    child.stdio[3]!.on("error", (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
    (child.stdio[3] as NodeJS.WritableStream).write(Buffer.alloc(200_000));
    const [code] = await once(child, "close");
    expect(code).toBe(0);
    // The reset happens (so the listener is what keeps the process alive), and nothing else is thrown.
    expect(errors).toContain("ECONNRESET");
  });

  it("run keeps the tail of a command's output and its exit code", async () => {
    const r = await run(process.execPath, ["-e", "console.log('a'); console.error('b'); process.exit(3)"], {
      env: {},
      timeoutMs: 10_000,
    });
    expect(r.code).toBe(3);
    expect(r.tail.sort()).toEqual(["a", "b"]);
    expect(r.stdout).toBe("a\n");
  });
});
