// Keys of the checkpoint items (shared/tables.ts `checkpoints`). Every variable part is escaped so that `#`
// only ever separates: `%` → `%25`, `#` → `%23`. Escaping keeps the order of ids (UUIDv6) intact.
export const esc = (s: string) => s.replace(/%/g, "%25").replace(/#/g, "%23");

/** The partition of one thread: its checkpoints with their writes and channel values, in every namespace. */
export const checkpointPk = (scope: string, thread: string) => `${esc(scope)}#T#${esc(thread)}`;

/** SK prefix of every checkpoint (and what hangs off it) in one namespace. */
export const nsPrefix = (ns: string) => `C#${esc(ns)}#`;
/** A checkpoint; what it owns sorts right after it, under `<checkpointSk>#`. */
export const checkpointSk = (ns: string, id: string) => `${nsPrefix(ns)}${esc(id)}`;
export const childrenPrefix = (ns: string, id: string) => `${checkpointSk(ns, id)}#`;
export const writeSk = (ns: string, id: string, task: string, idx: number) =>
  `${childrenPrefix(ns, id)}W#${esc(task)}#${idx}`;
/** The value of `channel` written by checkpoint `id` (later checkpoints that did not change it point here). */
export const valueSk = (ns: string, id: string, channel: string) =>
  `${childrenPrefix(ns, id)}V#${esc(channel)}`;

// S3 keys: checkpoints/<scope>/<thread>/<ns>/<checkpoint id>/…, each segment URI-encoded ("%" is an empty one).
const seg = (s: string) => (s === "" ? "%" : encodeURIComponent(s));
export const s3ThreadPrefix = (scope: string, thread: string) => `checkpoints/${seg(scope)}/${seg(thread)}/`;
const s3Checkpoint = (scope: string, thread: string, ns: string, id: string) =>
  `${s3ThreadPrefix(scope, thread)}${seg(ns)}/${seg(id)}`;
export const s3PartKey = (
  scope: string,
  thread: string,
  ns: string,
  id: string,
  part: "checkpoint" | "metadata",
) => `${s3Checkpoint(scope, thread, ns, id)}/${part}`;
export const s3ValueKey = (scope: string, thread: string, ns: string, id: string, channel: string) =>
  `${s3Checkpoint(scope, thread, ns, id)}/values/${seg(channel)}`;
export const s3WriteKey = (
  scope: string,
  thread: string,
  ns: string,
  id: string,
  task: string,
  idx: number,
) => `${s3Checkpoint(scope, thread, ns, id)}/writes/${seg(task)}/${idx}`;
