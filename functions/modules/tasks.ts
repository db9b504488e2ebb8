import { handlerFrom, type ModuleMap } from "../load.ts";
import type { TaskFunction, TaskHandler } from "../task-manifest.ts";

/** Every task's handler (functions/task-manifest.ts; modules.test.ts keeps them equal), for the local cloud. */
export const taskModules: ModuleMap = {
  "tasks/purge-project-runs": () => import("../tasks/purge-project-runs.ts"),
  "tasks/purge-deployment-data": () => import("../tasks/purge-deployment-data.ts"),
  "tasks/run-retention-cleanup": () => import("../tasks/run-retention-cleanup.ts"),
  "tasks/agent-trace-ingest": () => import("../tasks/agent-trace-ingest.ts"),
  "tasks/agent-run-sweeper": () => import("../tasks/agent-run-sweeper.ts"),
  "tasks/agent-cron-tick": () => import("../tasks/agent-cron-tick.ts"),
  "tasks/export-plan": () => import("../tasks/export-plan.ts"),
  "tasks/export-partition": () => import("../tasks/export-partition.ts"),
  "tasks/export-finalize": () => import("../tasks/export-finalize.ts"),
  "tasks/export-spawn": () => import("../tasks/export-spawn.ts"),
  "tasks/export-sweeper": () => import("../tasks/export-sweeper.ts"),
  "tasks/export-execution-ended": () => import("../tasks/export-execution-ended.ts"),
  "tasks/revision-prepare": () => import("../tasks/revision-prepare.ts"),
  "tasks/revision-build-start": () => import("../tasks/revision-build-start.ts"),
  "tasks/revision-build-finish": () => import("../tasks/revision-build-finish.ts"),
  "tasks/revision-deploy": () => import("../tasks/revision-deploy.ts"),
  "tasks/revision-failed": () => import("../tasks/revision-failed.ts"),
  "tasks/revision-sweeper": () => import("../tasks/revision-sweeper.ts"),
  "tasks/runtime-remove": () => import("../tasks/runtime-remove.ts"),
  "tasks/revision-execution-ended": () => import("../tasks/revision-execution-ended.ts"),
};

export const loadTask = (task: Pick<TaskFunction, "handler">) =>
  handlerFrom<TaskHandler>(taskModules, task.handler);
