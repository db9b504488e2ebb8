import { join } from "node:path";
import { awsError } from "../sfn.ts";
import { JsonStore } from "./json-store.ts";

// The local CloudWatch Logs: log groups and their retention (what the deploy step makes for each runtime), over
// the JSON protocol (X-Amz-Target Logs_20140328.<Operation>). The runtime's output itself goes to the platform's
// log (shared/containment/sandbox-output.ts), not into these groups.

interface LogGroup {
  logGroupName: string;
  creationTime: number;
  retentionInDays?: number;
}

/** The retention values CloudWatch Logs accepts. */
const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];
const NAME = /^[.\-_/#A-Za-z0-9]{1,512}$/;

const invalid = (message: string) => awsError("InvalidParameterException", message, 400);

function groupName(input: Record<string, unknown>): string {
  const name = input.logGroupName;
  if (typeof name !== "string" || !NAME.test(name))
    throw invalid(
      `1 validation error detected: Value '${String(name)}' at 'logGroupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_/#A-Za-z0-9]+`,
    );
  return name;
}

export class LocalLogs {
  private readonly store: JsonStore<{ groups: Record<string, LogGroup> }>;
  constructor(private readonly opts: { dataDir?: string; region: string; account: string }) {
    this.store = new JsonStore(opts.dataDir && join(opts.dataDir, "aws", "logs.json"), () => ({
      groups: {},
    }));
  }

  group(name: string): LogGroup | undefined {
    return Object.hasOwn(this.store.data.groups, name) ? this.store.data.groups[name] : undefined;
  }

  private arn(name: string) {
    return `arn:aws:logs:${this.opts.region}:${this.opts.account}:log-group:${name}`;
  }

  handle(operation: string, input: Record<string, unknown>): unknown {
    switch (operation) {
      case "CreateLogGroup": {
        const name = groupName(input);
        return void this.store.update((d) => {
          if (Object.hasOwn(d.groups, name))
            throw awsError("ResourceAlreadyExistsException", "The specified log group already exists", 400);
          d.groups[name] = { logGroupName: name, creationTime: Date.now() };
        });
      }
      case "PutRetentionPolicy": {
        const name = groupName(input);
        const days = input.retentionInDays;
        if (typeof days !== "number" || !RETENTION_DAYS.includes(days))
          throw invalid(
            `1 validation error detected: Value '${String(days)}' at 'retentionInDays' failed to satisfy constraint: Member must satisfy enum value set: [${RETENTION_DAYS.join(", ")}]`,
          );
        return void this.store.update((d) => {
          if (!Object.hasOwn(d.groups, name)) throw notFound();
          d.groups[name].retentionInDays = days;
        });
      }
      case "DeleteRetentionPolicy": {
        const name = groupName(input);
        return void this.store.update((d) => {
          if (!Object.hasOwn(d.groups, name)) throw notFound();
          delete d.groups[name].retentionInDays;
        });
      }
      case "DeleteLogGroup": {
        const name = groupName(input);
        return void this.store.update((d) => {
          if (!Object.hasOwn(d.groups, name)) throw notFound();
          delete d.groups[name];
        });
      }
      case "DescribeLogGroups": {
        const prefix = typeof input.logGroupNamePrefix === "string" ? input.logGroupNamePrefix : "";
        const logGroups = Object.values(this.store.data.groups)
          .filter((g) => g.logGroupName.startsWith(prefix))
          .sort((a, b) => (a.logGroupName < b.logGroupName ? -1 : 1))
          .map((g) => ({ ...g, arn: `${this.arn(g.logGroupName)}:*`, storedBytes: 0 }));
        return { logGroups };
      }
      default:
        throw awsError("UnknownOperationException", `Not emulated: Logs_20140328.${operation}`, 400);
    }
  }
}

const notFound = () => awsError("ResourceNotFoundException", "The specified log group does not exist.", 400);
