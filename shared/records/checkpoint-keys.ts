// Keys of the checkpoint items: shared/records/agent.ts (the table's key layout); the S3 keys of their parts here.

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
