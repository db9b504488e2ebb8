import { bench, describe, vi } from "vitest";
import { groupCreate, groupPut } from "./group-write.ts";

// Micro-benchmarks of the agent state's group commit: queueing, splitting into calls (25 puts, 100 creates, one
// write per key per call), marshalling and settling every caller, with DynamoDB answering at once (a stub
// client), so the figures are the batching's own cost, not the network's or DynamoDB's.
// Run: npx vitest bench --run shared/aws/group-write.bench.ts
vi.mock("./clients.ts", () => {
  const client = { send: async () => ({}) };
  return { dynamo: () => client };
});

const opts = { time: 500, iterations: 20, warmupIterations: 5 };
/** Concurrent callers of the first three benchmarks. */
const CALLERS = 50;
const value = "x".repeat(300);
/** Four small items per caller and step, each about 400 bytes: roughly what a checkpoint step writes. */
const stepItems = (caller: number, step: number) =>
  Array.from({ length: 4 }, (_, k) => ({
    PK: `CKPT#scope#thread-${caller}`,
    SK: `ckpt#${String(step).padStart(6, "0")}#${k}`,
    channel: `messages-${k}`,
    value,
    version: step,
  }));

describe("group commit, DynamoDB stubbed", () => {
  /** Each bench call writes the next step's keys. */
  let step = 0;
  bench(
    "groupPut: 4 items each (200 items, 8 BatchWriteItem calls)",
    async () => {
      step++;
      await Promise.all(
        Array.from({ length: CALLERS }, (_, c) => groupPut("checkpoints", stepItems(c, step))),
      );
    },
    opts,
  );
  bench(
    "groupCreate: 2 items each (100 items, 1 TransactWriteItems call)",
    async () => {
      step++;
      await Promise.all(
        Array.from({ length: CALLERS }, (_, c) => groupCreate("checkpoints", stepItems(c, step).slice(0, 2))),
      );
    },
    opts,
  );
  bench(
    "groupPut: all on one key (50 calls, one each)",
    async () => {
      step++;
      await Promise.all(
        Array.from({ length: CALLERS }, () => groupPut("checkpoints", stepItems(0, step).slice(0, 1))),
      );
    },
    opts,
  );
  bench(
    "groupPut: one caller, 1 item (a lone write)",
    async () => {
      await groupPut("checkpoints", stepItems(0, ++step).slice(0, 1));
    },
    opts,
  );
});
