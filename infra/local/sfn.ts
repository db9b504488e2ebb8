import "./polyfill.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type RunOptions, StateMachine, type StateMachineDefinition } from "aws-local-stepfunctions";
import { logger } from "../../shared/log.ts";
import { renderAsl } from "../state-machines/render.ts";

// The local Step Functions: runs the very ASL files CDK deploys. `${NameFunctionArn}` placeholders
// become local function ARNs, and every Task state calls the mapped handler in-process.
export type TaskResolver = (functionArn: string) => ((input: unknown) => Promise<unknown>) | undefined;

/** A JSON value as the library passes it between states. */
type JSONValue = Parameters<StateMachine["run"]>[0];
type TaskHandlers = NonNullable<NonNullable<RunOptions["overrides"]>["taskResourceLocalHandlers"]>;
/** A definition, or a Map's or Parallel branch's (they hold States too). */
type States = Pick<StateMachineDefinition, "States">;

const ACCOUNT = "000000000000";
export const localStateMachineArn = (name: string, region = "us-east-1") =>
  `arn:aws:states:${region}:${ACCOUNT}:stateMachine:${name}`;
const functionArn = (name: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${name}`;

interface Execution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
  input: string;
  output?: string;
  error?: string;
  cause?: string;
  startDate: Date;
  stopDate?: Date;
  abort?: () => void;
  done: Promise<void>;
}

/** Every Task state of a definition (also inside Map and Parallel), with its Resource. */
function taskStates(def: States | undefined, out: [string, string][] = []): [string, string][] {
  for (const [name, state] of Object.entries(def?.States ?? {})) {
    if (state.Type === "Task") out.push([name, state.Resource]);
    if (state.Type === "Map") taskStates(state.ItemProcessor ?? state.Iterator, out);
    if (state.Type === "Parallel") for (const b of state.Branches ?? []) taskStates(b, out);
  }
  return out;
}

function loadDefinition(file: string, substitutions: Record<string, string>): StateMachineDefinition {
  const text = renderAsl(readFileSync(file, "utf8"))
    .replace(/\$\{(\w+?)FunctionArn\}/g, (_m, n) => functionArn(n))
    .replace(/\$\{(\w+)\}/g, (whole, n: string) =>
      Object.hasOwn(substitutions, n) ? JSON.stringify(substitutions[n]).slice(1, -1) : whole,
    );
  return JSON.parse(text);
}

/** What a Distributed Map's parent sees when a child execution fails (with no tolerated failures): this error. */
export const MAP_RUN_FAILED = "States.ExceedToleratedFailureThreshold";
const CHILD_FAILED = "__ChildExecutionFailed";

/**
 * The library runs a Distributed Map's items inline, where a failed item would hand its own error to the parent.
 * In AWS the parent sees only that the Map Run failed: each state of the item processor that can fail gets a
 * last Catch into a Fail state raising MAP_RUN_FAILED, so a Catch of the parent matches locally as in AWS.
 */
export function withDistributedMapFailures<D extends States>(def: D): D {
  for (const state of Object.values(def.States ?? {})) {
    if (state.Type === "Parallel") for (const b of state.Branches ?? []) withDistributedMapFailures(b);
    if (state.Type !== "Map") continue;
    const processor = state.ItemProcessor ?? state.Iterator;
    if (!processor) continue;
    withDistributedMapFailures(processor);
    const config = (processor as { ProcessorConfig?: { Mode?: string } }).ProcessorConfig;
    if (config?.Mode !== "DISTRIBUTED") continue;
    const tolerated = state as { ToleratedFailurePercentage?: number; ToleratedFailureCount?: number };
    if (tolerated.ToleratedFailurePercentage || tolerated.ToleratedFailureCount)
      throw new Error("The local Step Functions does not emulate a Distributed Map's tolerated failures");
    for (const inner of Object.values(processor.States)) {
      if (inner.Type !== "Task" && inner.Type !== "Map" && inner.Type !== "Parallel") continue;
      inner.Catch = [...(inner.Catch ?? []), { ErrorEquals: ["States.ALL"], Next: CHILD_FAILED }];
    }
    processor.States[CHILD_FAILED] = {
      Type: "Fail",
      Error: MAP_RUN_FAILED,
      Cause: "A child execution of the Map Run failed (tolerated failures: 0).",
    };
  }
  return def;
}

export class LocalStepFunctions {
  private readonly machines = new Map<
    string,
    {
      def: StateMachineDefinition;
      sm: StateMachine;
      handlers: TaskHandlers;
      retryIntervalOverrides?: Record<string, number>;
    }
  >();
  private readonly executions = new Map<string, Execution>();
  private closing = false;

  constructor(
    dir: string,
    private readonly resolveTask: TaskResolver,
    private readonly options: {
      /** Called when an execution ends, with the detail of EventBridge's execution status change event. */
      onEnded?: (machine: string, detail: Record<string, unknown>) => void;
      /** Replaces every Retry interval (a test knob; AWS uses the ASL's). */
      retryIntervalMs?: number;
      /** `${Name}` placeholders of resources the CDK app substitutes (a CodeBuild project's name), by name. */
      substitutions?: Record<string, string>;
    } = {},
  ) {
    for (const file of (existsSync(dir) ? readdirSync(dir) : []).filter((f) => f.endsWith(".asl.json"))) {
      this.register(
        basename(file, ".asl.json"),
        loadDefinition(join(dir, file), options.substitutions ?? {}),
      );
    }
  }

  register(name: string, definition: StateMachineDefinition): string {
    const def = withDistributedMapFailures(structuredClone(definition));
    const handlers: TaskHandlers = {};
    for (const [state, resource] of taskStates(def)) {
      handlers[state] = async (input) => {
        const fn = this.resolveTask(resource);
        if (!fn)
          throw Object.assign(new Error(`No local function for ${resource}`), {
            name: "Lambda.ResourceNotFoundException",
          });
        // A task's result is JSON: the next state's input.
        return (await fn(input)) as JSONValue;
      };
    }
    const sm = new StateMachine(def, { validationOptions: { checkArn: false, checkPaths: false } });
    const arn = localStateMachineArn(name);
    const retryIntervalOverrides =
      this.options.retryIntervalMs === undefined
        ? undefined
        : Object.fromEntries(taskStates(def).map(([state]) => [state, this.options.retryIntervalMs!]));
    this.machines.set(arn, { def, sm, handlers, retryIntervalOverrides });
    return arn;
  }

  machineNames(): string[] {
    return [...this.machines.keys()].map((a) => a.split(":").pop()!);
  }

  startExecution(input: { stateMachineArn: string; name?: string; input?: string }) {
    const machine = this.machines.get(input.stateMachineArn);
    if (!machine)
      throw awsError("StateMachineDoesNotExist", `State machine ${input.stateMachineArn} does not exist`);
    const execName = input.name ?? crypto.randomUUID();
    const executionArn = `${input.stateMachineArn.replace(":stateMachine:", ":execution:")}:${execName}`;
    const existing = this.executions.get(executionArn);
    if (existing) {
      if (existing.input === (input.input ?? "{}")) return { executionArn, startDate: existing.startDate };
      throw awsError("ExecutionAlreadyExists", `Execution ${execName} already exists`);
    }
    const run = machine.sm.run(JSON.parse(input.input ?? "{}"), {
      overrides: {
        taskResourceLocalHandlers: machine.handlers,
        ...(machine.retryIntervalOverrides ? { retryIntervalOverrides: machine.retryIntervalOverrides } : {}),
      },
      context: {
        Execution: { Id: executionArn, Name: execName, StartTime: new Date().toISOString() },
      },
    });
    const exec: Execution = {
      executionArn,
      stateMachineArn: input.stateMachineArn,
      name: execName,
      status: "RUNNING",
      input: input.input ?? "{}",
      startDate: new Date(),
      abort: run.abort,
      done: Promise.resolve(),
    };
    exec.done = run.result
      .then(
        (out) => {
          if (exec.status === "RUNNING")
            Object.assign(exec, { status: "SUCCEEDED", output: JSON.stringify(out) });
        },
        (err: unknown) => {
          if (exec.status !== "RUNNING" || this.closing) return;
          const e = errorFields(err);
          const timedOut = e.name === "ExecutionTimeoutError";
          const cause = errorFields(e.cause ?? err);
          Object.assign(exec, {
            status: timedOut ? "TIMED_OUT" : "FAILED",
            error: timedOut ? "States.Timeout" : String(cause.name ?? "Error"),
            cause: String(cause.message ?? e.message ?? err),
          });
          logger.warn("local execution failed", { executionArn, error: exec.error, cause: exec.cause });
        },
      )
      .finally(() => {
        exec.stopDate = new Date();
        exec.abort = undefined;
        this.ended(exec);
      });
    this.executions.set(executionArn, exec);
    return { executionArn, startDate: exec.startDate };
  }

  private ended(exec: Execution) {
    // Executions cut short by shutdown are unfinished, not failed: the next start re-drives them.
    if (!this.options.onEnded || this.closing) return;
    const machine = exec.stateMachineArn.split(":").pop()!;
    this.options.onEnded(machine, {
      executionArn: exec.executionArn,
      stateMachineArn: exec.stateMachineArn,
      name: exec.name,
      status: exec.status,
      input: exec.input,
      error: exec.error ?? null,
      cause: exec.cause ?? null,
      startDate: exec.startDate.getTime(),
      stopDate: (exec.stopDate ?? new Date()).getTime(),
    });
  }

  stopExecution(input: { executionArn: string; error?: string; cause?: string }) {
    const exec = this.executions.get(input.executionArn);
    if (!exec) throw awsError("ExecutionDoesNotExist", `Execution ${input.executionArn} does not exist`);
    if (exec.status === "RUNNING") {
      Object.assign(exec, {
        status: "ABORTED",
        error: input.error,
        cause: input.cause,
        stopDate: new Date(),
      });
      exec.abort?.();
    }
    return { stopDate: exec.stopDate ?? new Date() };
  }

  describeExecution(input: { executionArn: string }) {
    const exec = this.executions.get(input.executionArn);
    if (!exec) throw awsError("ExecutionDoesNotExist", `Execution ${input.executionArn} does not exist`);
    const { abort: _a, done: _d, ...rest } = exec;
    return rest;
  }

  /** Waits for an execution to end (tests and shutdown). */
  async settled(executionArn: string): Promise<void> {
    await this.executions.get(executionArn)?.done;
  }

  stopAll(): void {
    this.closing = true;
    for (const exec of this.executions.values()) if (exec.status === "RUNNING") exec.abort?.();
  }

  /** A Step Functions JSON request: `input` is its body, as the SDK client sent it for the action. */
  handle(action: string, input: unknown): unknown {
    type In<A extends "startExecution" | "stopExecution" | "describeExecution"> = Parameters<this[A]>[0];
    switch (action) {
      case "StartExecution":
        return this.startExecution(input as In<"startExecution">);
      case "StopExecution":
        return this.stopExecution(input as In<"stopExecution">);
      case "DescribeExecution":
        return this.describeExecution(input as In<"describeExecution">);
      default:
        throw awsError("UnsupportedOperation", `Step Functions action ${action} is not emulated`);
    }
  }
}

export function awsError(code: string, message: string, status = 400): Error {
  return Object.assign(new Error(message), { code, status });
}

/** What a thrown value says of itself (anything may be thrown: its fields when it is an object, else none). */
export function errorFields(err: unknown): {
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  code?: unknown;
  status?: unknown;
} {
  return typeof err === "object" && err !== null ? err : {};
}
