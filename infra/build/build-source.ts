import { readFile } from "node:fs/promises";
import { buildSource, type SourceBuildJob } from "../../shared/build/build-source.ts";
import { installEgress } from "../../shared/containment/process-egress.ts";
import { BuildError } from "../../shared/errors.ts";

// The untrusted step of a revision build, in a process of its own: the job (a JSON file) as its argument, one
// JSON line per event on stdout — {"log": line}, and last {"ok": true} or {"error": message, "expected": bool}.
const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function main() {
  const job = JSON.parse(await readFile(process.argv[2] ?? "", "utf8")) as SourceBuildJob & {
    egressSocket?: string;
  };
  // In the sandbox the one way out is the egress proxy's socket: npm and git reach it through HTTP(S)_PROXY.
  if (job.egressSocket) await installEgress(job.egressSocket);
  await buildSource(job, (line) => emit({ log: line }));
  emit({ ok: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    emit({ error: (err as Error)?.message ?? String(err), expected: err instanceof BuildError });
    process.exit(1);
  },
);
