// The agent server's operations: the one layer the agent-server handlers (functions/agent/**), MCP, A2A, bulk
// runs and cron ticks reach storage through, as the operations of one server value (server.ts) that each process's
// entry point builds once. Each operation takes the caller and the deployment id, looks the deployment up for the
// caller, asks the deployment's Auth before it reads or writes, and (for runs) applies the multitask strategy
// and kicks the worker: `runs.startRun` is the one place a run is created on a request's behalf.

/** When the local minute timer next sweeps the crons (the cron tick task arms it by the server's clock). */
export { nextSweepAt } from "../crons/schedule.ts";
export { type Caller, callerOf } from "./caller.ts";
export type { Streamed } from "./runs.ts";
export {
  type AgentServer,
  type AgentServerOptions,
  createAgentServer,
  serveWith,
  servingServer,
} from "./server.ts";
