import { afterAll, vi } from "vitest";
import { processEnvironment, useConfig } from "../shared/config.ts";

// The unit project runs its files one after another in shared processes (isolate: false, vitest.config.ts): a file
// hands the next one the process as it found it. Whatever a file changed of the process's environment, fake clocks
// and did not put back fails that file here, naming what leaked (and is put back, so the next file does not fail for
// it). A configuration a module loaded (an entry point imported by a test: loadConfig) ends with the file too: the next
// file's configuration is its environment's, as in a process of its own.
// Taken before the file is imported (setup files run first): a change its top level makes counts too.
const before = processEnvironment();

afterAll(() => {
  const leaks: string[] = [];
  const after = processEnvironment();
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (before[name] !== after[name]) {
      leaks.push(`process.env.${name} (${JSON.stringify(before[name])} → ${JSON.stringify(after[name])})`);
      if (before[name] === undefined) delete process.env[name];
      else process.env[name] = before[name];
    }
  if (vi.isFakeTimers()) {
    leaks.push("fake timers (vi.useRealTimers)");
    vi.useRealTimers();
  }
  useConfig(undefined);
  if (leaks.length)
    throw new Error(`this file left the process changed for the next file: ${leaks.join(", ")}`);
});
