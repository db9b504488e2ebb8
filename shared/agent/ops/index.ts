// The agent server's operations: the one layer the agent-server handlers (functions/agent/**), MCP, A2A and bulk
// runs reach storage through. Each operation takes the caller and the deployment id, looks the deployment up for
// the caller, asks the deployment's Auth before it reads or writes, and (for runs) applies the multitask strategy
// and kicks the worker: `runs.startRun` is the one place a run is created on a request's behalf.

export * as assistants from "./assistants.ts";
export { type Caller, callerOf } from "./caller.ts";
export * as crons from "./crons.ts";
export type { Streamed } from "./runs.ts";
export * as runs from "./runs.ts";
export * as store from "./store.ts";
export * as system from "./system.ts";
export * as threads from "./threads.ts";
