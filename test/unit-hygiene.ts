import { afterAll, vi } from "vitest";
import { processEnvironment, setEnvironment, useConfig } from "../shared/config.ts";

// The unit project runs its files one after another in shared processes (isolate: false, vitest.config.ts), so a file
// must hand the next one the process as it found it. A file that leaves process.env changed or fake timers on fails
// here, naming what leaked; the leak is undone, so the next file does not fail for it. A configuration a module loaded
// (an entry point a test imports calls loadConfig) ends with the file too: the next file's configuration is its
// environment's, as in a process of its own.
// Taken before the file is imported (setup files run first): a change its top level makes counts too.
const before = processEnvironment();

afterAll(() => {
  const leaks: string[] = [];
  const after = processEnvironment();
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (before[name] !== after[name]) {
      leaks.push(`process.env.${name} (${JSON.stringify(before[name])} → ${JSON.stringify(after[name])})`);
      setEnvironment({ [name]: before[name] });
    }
  if (vi.isFakeTimers()) {
    leaks.push("fake timers (vi.useRealTimers)");
    vi.useRealTimers();
  }
  useConfig(undefined);
  if (leaks.length)
    throw new Error(`this file left the process changed for the next file: ${leaks.join(", ")}`);
});
