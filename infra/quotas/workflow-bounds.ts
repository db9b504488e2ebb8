import { exportWorkflowBounds } from "../../shared/export/workflow.ts";
import type { WorkflowBounds } from "./history.ts";

// Each state machine's worst-case bounds from config, keyed by its ASL file name (infra/state-machines/<name>.asl.json).
// A machine with a loop or a Map not bounded here fails the history check as unbounded.
export const workflowBounds = (): Record<string, WorkflowBounds> => ({
  "bulk-export": exportWorkflowBounds(),
  revision: {},
});
