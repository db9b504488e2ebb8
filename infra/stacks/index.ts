import type { App, Environment, StackProps } from "aws-cdk-lib";
import { routes as manifestRoutes, type Route } from "../../functions/routes.ts";
import { tasks as manifestTasks, type TaskFunction } from "../../functions/task-manifest.ts";
import { CONSOLE_DIST } from "../console/build.mjs";
import { agentOriginSettings } from "./agent-origin.ts";
import { ApiStack } from "./api-stack.ts";
import { type Capacity, capacity } from "./concurrency.ts";
import { ConsoleStack } from "./console-stack.ts";
import { DataStack } from "./data-stack.ts";
import { STATE_MACHINE_DIR } from "./node-function.ts";
import { checkRegion } from "./regions.ts";
import { WorkflowsStack } from "./workflows-stack.ts";

export interface BuildOptions {
  /** Defaults to the route manifest (functions/routes.ts). */
  routes?: Route[];
  /** Defaults to functions/task-manifest.ts. */
  tasks?: TaskFunction[];
  /** Defaults to infra/state-machines. */
  stateMachineDir?: string;
  /** Defaults to console/dist; it must be built (infra/console/build.mjs) before synthesis. */
  consoleDir?: string;
  /** Defaults to none: env-agnostic stacks, deployed where the credentials point. */
  env?: Environment;
}

export interface PlatformStacks {
  data: DataStack;
  workflows: WorkflowsStack;
  api: ApiStack;
  console: ConsoleStack;
  /** The concurrency settings and arithmetic (concurrency.ts), as `cdk synth` prints them. */
  capacity: Capacity;
}

/**
 * The whole platform. Stacks are env-agnostic unless `options.env` is given (account and region come from the
 * deploying credentials), the Region checked at synth when known (regions.ts); names such as
 * alias/agent-platform and the agent-platform schedule group allow one copy per account and region.
 */
export function buildApp(app: App, options: BuildOptions = {}): PlatformStacks {
  // Before any stack: a Region without Lambda response streaming fails here, not in the first streamed run.
  checkRegion(app, options.env);
  const common: StackProps = { tags: { project: "agent-platform" }, env: options.env };
  const routes = options.routes ?? manifestRoutes;
  const tasks = options.tasks ?? manifestTasks;
  const settings = capacity(app.node, tasks);
  const concurrency = settings.reserved;
  const data = new DataStack(app, "AgentPlatformData", {
    ...common,
    description: "Agent platform: tables, KMS key, buckets",
  });
  const workflows = new WorkflowsStack(app, "AgentPlatformWorkflows", {
    ...common,
    description: "Agent platform: task functions, state machines, schedules",
    data,
    tasks,
    stateMachineDir: options.stateMachineDir ?? STATE_MACHINE_DIR,
    concurrency,
    runtimeReservedConcurrency: settings.runtime,
  });
  const api = new ApiStack(app, "AgentPlatformApi", {
    ...common,
    description: "Agent platform: HTTP API, one Lambda per route",
    data,
    workflows,
    routes,
    // Optional: each deployment's own origin under a wildcard custom domain (cdk context, agent-origin.ts).
    agentOrigin: agentOriginSettings(app),
    concurrency,
  });
  const web = new ConsoleStack(app, "AgentPlatformConsole", {
    ...common,
    description: "Agent platform: web console on S3 behind CloudFront, with the APIs on the same origin",
    apis: api,
    routes,
    consoleDir: options.consoleDir ?? CONSOLE_DIST,
    attachmentsBucketIn: (scope) => data.importInto(scope).bucket.bucketName,
  });
  // Consumers import by export name or SSM parameter, so CDK cannot infer the deploy order: state it.
  workflows.addStackDependency(data);
  api.addStackDependency(data);
  api.addStackDependency(workflows);
  web.addStackDependency(api);
  return { data, workflows, api, console: web, capacity: settings };
}
