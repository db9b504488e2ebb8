import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Refused } from "./refusal.ts";

// A deployment's storage budget on the local cloud (issue 33, M3): the bytes its runtime's writes may add to s3rver
// and DynamoDB Local, which bound nothing themselves. The policy proxy charges each allowed write of a runtime
// principal before forwarding it — an S3 body's stated length, a copy's source size, what a DynamoDB write can add
// (write-bytes.ts) — and refuses it once the deployment's usage would pass its budget (a write of at most 4 KiB:
// its budget and a reserve of 1/32 of it, so a run failing at the budget still records why).
//
// The usage is persisted (a small JSON file in DATA_DIR, written a moment after it changes), not derived at each
// start: deriving it means scanning the whole main and checkpoints tables (a deployment's items are spread over
// partitions of its threads and runs), too slow for every runtime start. Charges are upper bounds and deletes are
// not credited (a DeleteItem does not say what it freed; the platform's own sweepers delete without the proxy), so
// the usage only grows between measurements; when it would pass the budget, the stored bytes are measured (`measure`:
// its objects listed, its items scanned) at most once per `remeasureAfterMs`, and the write is refused only if the
// measured usage leaves no room either.
//
// A measurement scans the whole of both tables (every workspace's items), so its cost grows with the platform's
// data, not the deployment's, and any runtime can ask for one: at its budget (or with writes charged as upper
// bounds, `SET b = a` a whole item) every write past it does. secreview4: one workspace's deployments at their budgets
// would each have had a full scan every 30 s. So measurements run one at a time on the platform, and a workspace gets
// at most one per `remeasureAfterMs` — or per MEASURE_DUTY times the last one's duration, when that is longer — so
// what one workspace can make the backends scan is a bounded share of their time whatever the platform holds.

export interface BudgetScope {
  tenant_id: string;
  deployment_id: string;
}

export interface StorageBudgetOptions {
  /** The bytes a deployment may store (S3 objects and DynamoDB items). */
  limitBytes: number;
  /** The largest object a runtime may store (a single PUT, a multipart upload's parts, a copy). */
  maxObjectBytes: number;
  /** Where the usage is kept across restarts; none: in memory only (unit tests). */
  file?: string;
  /** The bytes a deployment stores now, measured from the backends. */
  measure(scope: BudgetScope): Promise<number>;
  /** An object's size in the backend (a copy's source), undefined when it does not exist. */
  objectSize(bucket: string, key: string): Promise<number | undefined>;
  /**
   * At most one measurement per workspace in this long, or in MEASURE_DUTY times the last one's duration when that is
   * longer (a runtime at its budget cannot make the proxy scan).
   */
  remeasureAfterMs?: number;
  now?: () => number;
}

interface Usage {
  bytes: number;
  measuring?: Promise<void>;
}

/**
 * A workspace's next measurement waits this many times as long as its last one took (when that is longer than
 * `remeasureAfterMs`): its deployments keep the backends scanning at most 1/MEASURE_DUTY of the time.
 */
export const MEASURE_DUTY = 20;

const MiB = 1024 * 1024;
/** A write this small (a run's status update, its error) may use the reserve past the budget. */
export const SMALL_WRITE_BYTES = 4 * 1024;
/** Open multipart uploads whose parts are summed (memory the proxy keeps for them). */
const MAX_OPEN_UPLOADS = 10_000;
const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/** The budget refused: S3's and DynamoDB's own shapes for a storage quota (the handler picks the service's). */
export const quotaExceeded = (scope: BudgetScope, limit: number) =>
  new Refused(
    "StorageQuotaExceeded",
    `Deployment ${scope.deployment_id} has used its storage budget of ${mib(limit)} (AGENT_STORAGE_BUDGET_BYTES).`,
    403,
  );

export const objectTooLarge = (size: number, max: number) =>
  new Refused(
    "EntityTooLarge",
    `Your proposed upload exceeds the maximum allowed size: ${size} bytes, more than ${max} (AGENT_MAX_OBJECT_BYTES).`,
    400,
  );

export class StorageBudget {
  private readonly usage = new Map<string, Usage>();
  /** When each workspace may next have a measurement. */
  private readonly nextMeasure = new Map<string, number>();
  /** The measurement running now (one at a time on the platform), which the next one waits for. */
  private measurements: Promise<void> = Promise.resolve();
  /** Bytes of each open multipart upload, so its object stays within maxObjectBytes. */
  private readonly uploads = new Map<string, number>();
  private saveTimer: NodeJS.Timeout | undefined;
  private readonly remeasureAfterMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: StorageBudgetOptions) {
    this.remeasureAfterMs = opts.remeasureAfterMs ?? 30_000;
    this.now = opts.now ?? Date.now;
    if (opts.file) this.load(opts.file);
  }

  /** The reserve small writes may use past the budget: 1/32 of it. */
  get reserveBytes(): number {
    return Math.floor(this.opts.limitBytes / 32);
  }

  get limitBytes(): number {
    return this.opts.limitBytes;
  }

  get maxObjectBytes(): number {
    return this.opts.maxObjectBytes;
  }

  /** An object's size in the backend (a copy's source, charged as what the copy stores). */
  objectSize(bucket: string, key: string): Promise<number | undefined> {
    return this.opts.objectSize(bucket, key);
  }

  /** The usage counted for a deployment (for tests and the operator). */
  used(scope: BudgetScope): number {
    return this.usage.get(scope.deployment_id)?.bytes ?? 0;
  }

  /**
   * Charges `bytes` to the deployment, or refuses the write: past the budget, once a fresh measurement (if one is
   * due) still leaves no room.
   */
  async charge(scope: BudgetScope, bytes: number): Promise<void> {
    if (bytes <= 0) return;
    const u = this.entry(scope);
    // A small write may use a reserve past the budget: a run's status and its error still land, so a run that
    // failed at the budget is recorded as failed, saying why. The reserve is bounded as the budget is.
    const limit = this.opts.limitBytes + (bytes <= SMALL_WRITE_BYTES ? this.reserveBytes : 0);
    if (u.bytes + bytes > limit) {
      await this.remeasure(scope, u);
      if (u.bytes + bytes > limit) throw quotaExceeded(scope, this.opts.limitBytes);
    }
    u.bytes += bytes;
    this.scheduleSave();
  }

  /** An object's size checked against maxObjectBytes (a PUT, a copy's source). */
  checkObject(bytes: number): void {
    if (bytes > this.opts.maxObjectBytes) throw objectTooLarge(bytes, this.opts.maxObjectBytes);
  }

  /** A multipart upload's next part: the upload's parts so far plus this one stay within maxObjectBytes. */
  checkPart(uploadId: string, bytes: number): void {
    const total = (this.uploads.get(uploadId) ?? 0) + bytes;
    this.checkObject(total);
    this.uploads.delete(uploadId);
    this.uploads.set(uploadId, total);
    // Uploads never completed (s3rver has no abort) leave the oldest first; their parts stay charged to the budget.
    if (this.uploads.size > MAX_OPEN_UPLOADS) this.uploads.delete(this.uploads.keys().next().value!);
  }

  /** A multipart upload completed or aborted: its parts are the object now (or gone). */
  endUpload(uploadId: string): void {
    this.uploads.delete(uploadId);
  }

  /** Writes the usage now (at stop). */
  flush(): void {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.save();
  }

  private entry(scope: BudgetScope): Usage {
    let u = this.usage.get(scope.deployment_id);
    if (!u) {
      u = { bytes: 0 };
      this.usage.set(scope.deployment_id, u);
    }
    return u;
  }

  private async remeasure(scope: BudgetScope, u: Usage): Promise<void> {
    if (!u.measuring) {
      const workspace = scope.tenant_id;
      if (this.now() < (this.nextMeasure.get(workspace) ?? Number.NEGATIVE_INFINITY)) return;
      // Taken now, so the workspace's other deployments do not queue measurements behind this one.
      this.nextMeasure.set(workspace, Number.POSITIVE_INFINITY);
      const measure = async () => {
        const before = u.bytes;
        const started = this.now();
        try {
          const stored = await this.opts.measure(scope);
          // What was charged while the backends were read may or may not be in `stored`: counted again.
          u.bytes = stored + Math.max(0, u.bytes - before);
          this.scheduleSave();
        } catch {
          // A backend that cannot be read leaves the count as it was: the write is refused, not let through.
        } finally {
          const ended = this.now();
          const wait = Math.max(this.remeasureAfterMs, (ended - started) * MEASURE_DUTY);
          this.nextMeasure.set(workspace, ended + wait);
          u.measuring = undefined;
        }
      };
      u.measuring = this.measurements.then(measure);
      this.measurements = u.measuring;
    }
    await u.measuring;
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return;
    }
    const deployments = (parsed as { deployments?: unknown })?.deployments;
    if (!deployments || typeof deployments !== "object") return;
    for (const [id, bytes] of Object.entries(deployments))
      if (typeof bytes === "number" && Number.isFinite(bytes) && bytes >= 0) this.usage.set(id, { bytes });
  }

  private scheduleSave(): void {
    if (!this.opts.file || this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.save();
    }, 500);
    this.saveTimer.unref();
  }

  private save(): void {
    const file = this.opts.file;
    if (!file) return;
    const deployments = Object.fromEntries([...this.usage].map(([id, u]) => [id, u.bytes]));
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ deployments })}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  }
}
