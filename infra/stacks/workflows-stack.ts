import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ArnFormat, CfnOutput, Duration, Stack, type StackProps } from "aws-cdk-lib";
import { Alarm, ComparisonOperator, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { Table } from "aws-cdk-lib/aws-dynamodb";
import { Rule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { type IGrantable, type IRole, PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import {
  FilterCriteria,
  FilterRule,
  type Function as HandlerFunction,
  StartingPosition,
} from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource, SqsDlq } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { CfnSchedule, CfnScheduleGroup } from "aws-cdk-lib/aws-scheduler";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { DefinitionBody, LogLevel, StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import type { Construct, IConstruct } from "constructs";
import type { TaskFunction } from "../../functions/task-manifest.ts";
import { TASK_FUNCTION_PREFIX } from "../../shared/aws/tasks.ts";
import { MACHINE as EXPORT_MACHINE } from "../../shared/export/lifecycle.ts";
import { TTL_IDENTITY } from "../../shared/retention/ttl-stream.ts";
import type { ResourceArns } from "../policies/render.ts";
import { type PlatformRoleId, platformRoles, SCHEDULE_GROUP, taskRoleId } from "../policies/roles.ts";
import { mapStates } from "../state-machines/asl.ts";
import { renderAsl } from "../state-machines/render.ts";
import {
  runtimeBoundaryPolicy,
  runtimeEnvironment,
  runtimeLayer,
  runtimeLayerBytes,
} from "./agent-runtimes.ts";
import { type ReservedConcurrency, reservedFor } from "./concurrency.ts";
import type { DataStack } from "./data-stack.ts";
import { acknowledge, acknowledgeResource } from "./nag.ts";
import { handlerFunction, lambdaRole } from "./node-function.ts";
import { RevisionBuild } from "./revision-build.ts";
import { applyRoleSource, cdkResourceArns, stateMachineName } from "./role-policies.ts";
import { publishParameter, readParameter } from "./stack-parameters.ts";

export { stateMachineName };

export interface AslFile {
  /** The file name without .asl.json: the state machine's id and STATE_MACHINE_<NAME>_ARN. */
  name: string;
  path: string;
  /** The file's text with the settings written in (infra/state-machines/render.ts); the ARN placeholders are left. */
  text: string;
  /** Task names referenced as ${<Name>FunctionArn}. */
  tasks: string[];
  /** Every other ${<Placeholder>} (resources such as ${RevisionBuildProjectName}). */
  resources: string[];
}

/** Every ${…} placeholder of an ASL text, in order of first use. */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]))];
}

/** Every infra/state-machines/*.asl.json (none when the folder is missing), with its placeholders. */
function aslFiles(dir: string): AslFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".asl.json"))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      const text = renderAsl(readFileSync(path, "utf8"));
      const all = placeholdersOf(text);
      const task = (p: string) => /^\w+FunctionArn$/.test(p);
      return {
        name: basename(f, ".asl.json"),
        path,
        text,
        tasks: all.filter(task).map((p) => p.slice(0, -"FunctionArn".length)),
        resources: all.filter((p) => !task(p)),
      };
    });
}

/** A resource placeholder's value, and what a state machine's role needs to use that resource. */
interface ResourceSubstitution {
  value: string;
  grant(role: IGrantable): void;
}

/** The env var a handler reads a state machine's ARN from; matches the local cloud's naming. */
function stateMachineEnvName(name: string): string {
  return `STATE_MACHINE_${name.toUpperCase().replace(/\W/g, "_")}_ARN`;
}

export interface WorkflowsStackProps extends StackProps {
  data: DataStack;
  tasks: TaskFunction[];
  stateMachineDir: string;
  /** The sweepers' and trace ingestion's reserved concurrency (concurrency.ts). */
  concurrency: ReservedConcurrency;
  /** Each deployment's runtime reservation (concurrency.ts), which the deploy step puts; none when undefined. */
  runtimeReservedConcurrency?: number;
}

/** The scheduler role's ARN, read by the API stack's handlers that create schedules. */
const SCHEDULER_ROLE_PARAMETER = "SchedulerRoleArn";

/** The construct ids of the tasks' shared roles (a cleanup task's role is <Name>Role). */
const ROLE_CONSTRUCT: Partial<Record<PlatformRoleId, string>> = { task: "TaskRole", deploy: "DeployRole" };

/** Task functions, one state machine per ASL file, and the EventBridge Scheduler group and role. */
export class WorkflowsStack extends Stack {
  readonly taskFunctions = new Map<string, HandlerFunction>();
  readonly stateMachines = new Map<string, StateMachine>();
  readonly schedulerRole: Role;
  readonly scheduleGroupName = SCHEDULE_GROUP;
  private build?: RevisionBuild;
  /** The platform functions' roles of this app (infra/policies/roles.ts). */
  private roleSources!: ReturnType<typeof platformRoles>;
  private readonly data: DataStack;
  /** Resource placeholders ASL files may use; each resource is created on first use only. */
  private readonly resources: Record<string, () => ResourceSubstitution> = {
    RevisionBuildProjectName: () => {
      this.build ??= new RevisionBuild(this, "RevisionBuild");
      const build = this.build;
      return { value: build.project.projectName, grant: (role) => build.grantStartBuildSync(role) };
    },
  };

  /** The revision build project, created when an ASL file names ${RevisionBuildProjectName}. */
  get revisionBuild(): RevisionBuild | undefined {
    return this.build;
  }

  constructor(scope: Construct, id: string, props: WorkflowsStackProps) {
    super(scope, id, props);
    this.data = props.data;

    new CfnScheduleGroup(this, "ScheduleGroup", { name: SCHEDULE_GROUP });
    this.schedulerRole = new Role(this, "SchedulerRole", {
      description: "Assumed by EventBridge Scheduler to run agent platform schedules",
      // Confused-deputy guard: only schedules in this account may use the role.
      assumedBy: new ServicePrincipal("scheduler.amazonaws.com", {
        conditions: { StringEquals: { "aws:SourceAccount": this.account } },
      }),
    });

    const machines = aslFiles(props.stateMachineDir);
    this.roleSources = platformRoles({ tasks: props.tasks, machines: machines.map((m) => m.name) });
    const renderRoles: (() => void)[] = [];
    if (props.tasks.length > 0) {
      const layer = runtimeLayer(this);
      const boundary = runtimeBoundaryPolicy(this, props.data);
      // The tasks' roles (infra/policies/roles.ts), their statements added once the resources they name exist.
      const own: Partial<ResourceArns> = {
        runtimeBoundary: () => boundary.managedPolicyArn,
        runtimeLayer: () => layer.layerVersionArn,
        failureQueue: (task) => (this.node.findChild(`${task}Failures`) as Queue).queueArn,
      };
      const roles = new Map<PlatformRoleId, IRole>();
      for (const task of props.tasks) {
        const id = taskRoleId(task);
        if (!roles.has(id))
          roles.set(id, this.platformRole(this, ROLE_CONSTRUCT[id] ?? `${task.name}Role`, id, own, false));
      }
      for (const [id, role] of roles) renderRoles.push(() => this.renderRole(this, role, id, own));
      const environment = {
        ...props.data.functionEnvironment(this),
        ...this.orchestrationEnvironment(
          this,
          machines.map((m) => m.name),
          this.schedulerRole.roleArn,
        ),
        ...runtimeEnvironment(this, props.data, boundary.managedPolicyArn),
        AGENT_RUNTIME_LAYER_ARN: layer.layerVersionArn,
        AGENT_RUNTIME_LAYER_BYTES: String(runtimeLayerBytes()),
        ...(props.runtimeReservedConcurrency === undefined
          ? {}
          : { AGENT_RUNTIME_RESERVED_CONCURRENCY: String(props.runtimeReservedConcurrency) }),
      };
      for (const task of props.tasks) {
        this.taskFunctions.set(
          task.name,
          handlerFunction(this, `Task-${task.name}`, {
            handler: task.handler,
            role: roles.get(taskRoleId(task))!,
            environment,
            timeout: Duration.seconds(task.timeoutSeconds),
            memoryMb: task.memoryMb,
            ephemeralStorageMb: task.ephemeralStorageMb,
            functionName: `${TASK_FUNCTION_PREFIX}${task.name}`,
            description: `Task ${task.name} (functions/${task.handler}.ts)`,
            reservedConcurrency: reservedFor(task, props.concurrency),
          }),
        );
      }
    }

    for (const asl of machines) this.stateMachine(asl);

    for (const task of props.tasks) {
      const fn = this.taskFunctions.get(task.name)!;
      if (task.ttlDeletes) this.consumeTtlDeletes(task.name, fn, task.ttlDeletes);
      if (task.onExecutionEnd) {
        // What the local cloud's onEnded hook stands in for: executions that end without their last step.
        new Rule(this, `${task.name}Rule`, {
          description: `Ended executions of ${stateMachineName(task.onExecutionEnd)} → ${task.name}`,
          eventPattern: {
            source: ["aws.states"],
            detailType: ["Step Functions Execution Status Change"],
            detail: {
              stateMachineArn: [machineArn(this, task.onExecutionEnd)],
              status: ["FAILED", "TIMED_OUT", "ABORTED"],
            },
          },
          targets: [new LambdaFunction(fn, { retryAttempts: 10 })],
        });
      }
      if (task.onLocalStart) {
        // Locally it runs at start-up; in AWS a periodic sweep catches whatever a lost event left behind.
        new CfnSchedule(this, `${task.name}Schedule`, {
          groupName: SCHEDULE_GROUP,
          scheduleExpression: task.scheduleRate ?? "rate(5 minutes)",
          flexibleTimeWindow: { mode: "OFF" },
          target: { arn: fn.functionArn, roleArn: this.schedulerRole.roleArn },
        }).addDependency(this.node.findChild("ScheduleGroup") as CfnScheduleGroup);
      }
    }

    for (const render of renderRoles) render();
    for (const fn of this.taskFunctions.values()) this.grantInvoke(fn, this.schedulerRole);
    for (const sm of this.stateMachines.values()) sm.grantStartExecution(this.schedulerRole);
    // Not an export: a role is replaced by a change of its path or construct id, which an export in use would block.
    publishParameter(this, SCHEDULER_ROLE_PARAMETER, this.schedulerRole.roleArn);
  }

  /**
   * A platform function's role (`id` of infra/policies/roles.ts) in `scope`'s stack, with its source's statements
   * (`render` false: the caller renders it later, once the resources it names exist).
   */
  platformRole(
    scope: Construct,
    constructId: string,
    id: PlatformRoleId,
    own: Partial<ResourceArns> = {},
    render = true,
  ): IRole {
    const source = this.roleSources.get(id);
    if (!source) throw new Error(`infra/policies/roles.ts has no role ${id}`);
    const role = lambdaRole(scope, constructId, source.description);
    if (render) this.renderRole(scope, role, id, own);
    return role;
  }

  private renderRole(scope: Construct, role: IRole, id: PlatformRoleId, own: Partial<ResourceArns>): void {
    const inThisStack = Stack.of(scope) === this;
    const arns = cdkResourceArns(scope, this.data, {
      schedulerRole: () =>
        inThisStack ? this.schedulerRole.roleArn : readParameter(scope, this, SCHEDULER_ROLE_PARAMETER),
      ...own,
    });
    applyRoleSource(role, id, this.roleSources.get(id)!, arns);
  }

  /**
   * The table's stream → the task, filtered to what DynamoDB TTL deletes (a user's delete, e.g. a project purge,
   * carries no TTL userIdentity) of items with the task's sort key. A failing batch is bisected and retried; what
   * still fails goes to a queue (its shard and sequence numbers, no item data) with an alarm on it.
   */
  private consumeTtlDeletes(name: string, fn: HandlerFunction, on: NonNullable<TaskFunction["ttlDeletes"]>) {
    // The stream by its SSM parameter, not an export (data-stack.ts): the other imports stay as they are.
    const refs = this.data.importInto(this);
    const table = Table.fromTableAttributes(this, `StreamOf-${on.table}`, {
      tableArn: refs.tables[on.table].tableArn,
      tableStreamArn: this.data.streamArnIn(this, on.table),
      encryptionKey: refs.key,
    });
    const failures = new Queue(this, `${name}Failures`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      failures,
      "SQS3",
      "This queue is itself a dead-letter destination: the on-failure destination of the stream's event source mapping.",
    );
    fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        retryAttempts: 10,
        onFailure: new SqsDlq(failures),
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.isEqual("REMOVE"),
            userIdentity: {
              type: FilterRule.isEqual(TTL_IDENTITY.type),
              principalId: FilterRule.isEqual(TTL_IDENTITY.principalId),
            },
            dynamodb: {
              Keys: {
                SK: {
                  S: [
                    ...FilterRule.isEqual(on.sortKey),
                    ...(on.sortKeyPrefixes ?? []).flatMap((p) => FilterRule.beginsWith(p)),
                  ],
                },
              },
            },
          }),
        ],
      }),
    );
    this.alarm(`${name}FailuresAlarm`, {
      alarmDescription: `Records of ${on.table}'s stream that ${name} could not process after its retries`,
      metric: failures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  private stateMachine(asl: AslFile): void {
    const substitutions: Record<string, string> = {};
    const targets: HandlerFunction[] = [];
    for (const name of asl.tasks) {
      const fn = this.taskFunctions.get(name);
      if (!fn)
        throw new Error(
          `infra/state-machines/${asl.name}.asl.json uses \${${name}FunctionArn}, but functions/task-manifest.ts has no task named "${name}"`,
        );
      substitutions[`${name}FunctionArn`] = fn.functionArn;
      targets.push(fn);
    }
    const grants: ResourceSubstitution[] = [];
    for (const name of asl.resources) {
      if (!Object.hasOwn(this.resources, name)) {
        const known = Object.keys(this.resources).map((k) => `\${${k}}`);
        throw new Error(
          `infra/state-machines/${asl.name}.asl.json uses \${${name}}, which is neither \${<Task>FunctionArn} nor one of ${known.join(", ")}`,
        );
      }
      const resource = this.resources[name]();
      substitutions[name] = resource.value;
      grants.push(resource);
    }
    const logs = new LogGroup(this, `${asl.name}Logs`, { retention: RetentionDays.THREE_MONTHS });
    const sm = new StateMachine(this, asl.name, {
      stateMachineName: stateMachineName(asl.name),
      definitionBody: DefinitionBody.fromString(asl.text),
      definitionSubstitutions: substitutions,
      logs: { destination: logs, ...stateMachineLogging(asl.name) },
      tracingEnabled: true,
    });
    for (const fn of targets) this.grantInvoke(fn, sm.role);
    for (const resource of grants) resource.grant(sm.role);
    if (mapStates(JSON.parse(asl.text)).some((m) => m.distributed)) this.grantMapRuns(asl.name, sm.role);
    acknowledgeResource(
      sm.role,
      "*",
      "CloudWatch Logs delivery (logs:*LogDelivery, DescribeLogGroups, DescribeResourcePolicies) and X-Ray trace writes do not support resource-level permissions.",
    );
    if (stateMachineLogging(asl.name).level !== LogLevel.ALL)
      acknowledge(
        sm,
        "SF1",
        "Errors only, without execution data: every event of every export partition would be paid for at export scale.",
      );
    this.alarm(`${asl.name}Failed`, {
      alarmDescription: `An execution of state machine ${stateMachineName(asl.name)} failed`,
      metric: sm.metricFailed({ period: Duration.minutes(5), statistic: "Sum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.stateMachines.set(asl.name, sm);
  }

  /** An alarm that notifies the operator's topic (alarmTopic). */
  private alarm(id: string, props: ConstructorParameters<typeof Alarm>[2]): Alarm {
    const alarm = new Alarm(this, id, props);
    alarm.addAlarmAction(new SnsAction(this.alarmTopic()));
    return alarm;
  }

  private topic?: Topic;
  /**
   * Where the platform's alarms go: a topic the operator subscribes to (`-c alarmEmail=ops@example.com` adds an
   * email subscription, which AWS asks the address to confirm; the AlarmTopicArn output names it for any other).
   */
  private alarmTopic(): Topic {
    if (this.topic) return this.topic;
    const topic = new Topic(this, "AlarmTopic", {
      displayName: "Agent platform alarms",
      enforceSSL: true,
    });
    // CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key; a key of its own costs $1 a month.
    acknowledge(topic, "SNS2", "Alarm notifications carry an alarm's name and state only, no platform data.");
    const email = alarmEmail(this.node.tryGetContext(ALARM_EMAIL_CONTEXT));
    if (email) topic.addSubscription(new EmailSubscription(email));
    new CfnOutput(this, "AlarmTopicArn", {
      value: topic.topicArn,
      description: "SNS topic of the platform's alarms: subscribe to it (email, chat, pager)",
    });
    this.topic = topic;
    return topic;
  }

  private grantInvoke(fn: HandlerFunction, grantee: IGrantable & IConstruct): void {
    fn.grantInvoke(grantee);
    acknowledgeResource(
      grantee,
      `${fn.functionArn}:*`,
      `Invoke on ${fn.node.id}:* only adds that function's versions and aliases.`,
    );
  }

  /** STATE_MACHINE_<NAME>_ARN for every machine, plus the scheduler role and group handlers pass on. */
  functionEnvironment(scope: Construct): Record<string, string> {
    return this.orchestrationEnvironment(
      scope,
      [...this.stateMachines.keys()],
      readParameter(scope, this, SCHEDULER_ROLE_PARAMETER),
    );
  }

  private orchestrationEnvironment(scope: Construct, machines: string[], schedulerRoleArn: string) {
    const env: Record<string, string> = {
      SCHEDULER_ROLE_ARN: schedulerRoleArn,
      SCHEDULER_GROUP: this.scheduleGroupName,
      TASK_ARN_PREFIX: `arn:${Stack.of(scope).partition}:lambda:${Stack.of(scope).region}:${Stack.of(scope).account}:function:`,
    };
    for (const name of machines) env[stateMachineEnvName(name)] = machineArn(scope, name);
    return env;
  }

  /**
   * A Distributed Map runs its items as child executions of its own machine: it starts them and watches or stops
   * them (names, not the machine's ARN, so the role's policy does not depend on the machine it serves).
   */
  private grantMapRuns(name: string, role: IGrantable & IConstruct): void {
    role.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ["states:StartExecution"], resources: [machineArn(this, name)] }),
    );
    const children = this.formatArn({
      service: "states",
      resource: "execution",
      resourceName: `${stateMachineName(name)}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    role.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ["states:DescribeExecution", "states:StopExecution"],
        resources: [children],
      }),
    );
    acknowledgeResource(
      role,
      children,
      "A Map Run's child executions get generated names under this machine only.",
    );
  }
}

/** The context value that subscribes an email address to the alarm topic. */
export const ALARM_EMAIL_CONTEXT = "alarmEmail";

/** The alarm email from the app's context: an address, or none; anything else stops the synth. */
export function alarmEmail(v: unknown): string | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string" || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v))
    throw new Error(`${ALARM_EMAIL_CONTEXT} must be an email address, not "${String(v)}"`);
  return v;
}

/**
 * What a state machine logs: never execution data (a revision's state carries the build's presigned URLs, an
 * export's its destination's), so no URL or token reaches CloudWatch. The revision machine logs every event, the
 * export machine errors only (its events scale with the export).
 */
export function stateMachineLogging(name: string): { level: LogLevel; includeExecutionData: false } {
  return { level: name === EXPORT_MACHINE ? LogLevel.ERROR : LogLevel.ALL, includeExecutionData: false };
}

/** A state machine's ARN built in `scope`'s stack from its fixed name. */
function machineArn(scope: Construct, name: string): string {
  return Stack.of(scope).formatArn({
    service: "states",
    resource: "stateMachine",
    resourceName: stateMachineName(name),
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
