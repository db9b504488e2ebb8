import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

// What an emulated control plane (IAM's roles, Lambda's functions, CloudWatch Logs' groups) holds, kept in one JSON
// file of DATA_DIR so a restart finds it as AWS would. Every change is written whole before the call answers (a
// rename, so a crash leaves the old file or the new one).
export class JsonStore<T> {
  private value: T;
  constructor(
    private readonly file: string | undefined,
    empty: () => T,
  ) {
    this.value = file && existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : empty();
  }

  get data(): T {
    return this.value;
  }

  /** Applies a change and persists it; what `change` throws changes nothing. */
  update<R>(change: (data: T) => R): R {
    const draft = structuredClone(this.value);
    const out = change(draft);
    if (this.file) {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      writeFileSync(`${this.file}.tmp`, JSON.stringify(draft), { mode: 0o600 });
      renameSync(`${this.file}.tmp`, this.file);
    }
    this.value = draft;
    return out;
  }
}
