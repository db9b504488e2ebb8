import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { FunctionSettings } from "../lambda.ts";
import { awsError } from "../sfn.ts";
import { JsonStore } from "./json-store.ts";

// The local Lambda control plane: functions created through Lambda's API (CreateFunction, UpdateFunctionCode and
// -Configuration, PublishVersion, reserved concurrency, event-invoke settings, delete), as the deploy step makes a
// deployment's runtime. What is stored here is what the local Lambda service runs (infra/local/runtimes.ts reads a
// version's code, environment, memory and timeout from it) and the reservation its invocations are throttled by.

/** Code in S3, as the deploy step gives it. */
export interface FunctionCode {
  S3Bucket: string;
  S3Key: string;
}

export interface FunctionConfig {
  FunctionName: string;
  FunctionArn: string;
  Runtime: string;
  Role: string;
  Handler: string;
  CodeSize: number;
  CodeSha256: string;
  Description: string;
  Timeout: number;
  MemorySize: number;
  LastModified: string;
  Version: string;
  Environment: { Variables: Record<string, string> };
  Layers: { Arn: string; CodeSize: number }[];
  Architectures: string[];
  State: "Active";
  LastUpdateStatus: "Successful";
  PackageType: "Zip";
  RevisionId: string;
  EphemeralStorage: { Size: number };
}

/** One version of a function (or $LATEST): its configuration and where its code is. */
export interface FunctionVersion {
  config: FunctionConfig;
  code: FunctionCode;
}

interface StoredFunction {
  latest: FunctionVersion;
  versions: Record<string, FunctionVersion>;
  lastVersion: number;
  reserved?: number;
  /** PutFunctionEventInvokeConfig, by qualifier ($LATEST when none). */
  eventInvoke: Record<
    string,
    { MaximumRetryAttempts: number; MaximumEventAgeInSeconds: number; LastModified: number }
  >;
}

/** The control plane's operations on a function, by `<method> <API version> <sub-resource>`. */
const CONTROL_ROUTES = [
  "GET 2015-03-31 ",
  "GET 2015-03-31 configuration",
  "DELETE 2015-03-31 ",
  "PUT 2015-03-31 code",
  "PUT 2015-03-31 configuration",
  "POST 2015-03-31 versions",
  "GET 2015-03-31 versions",
  "PUT 2017-10-31 concurrency",
  "DELETE 2017-10-31 concurrency",
  "GET 2019-09-30 concurrency",
  "PUT 2019-09-25 event-invoke-config",
];

/** Node.js runtimes Lambda accepts for new functions, and the only kind the local cloud runs. */
export const LOCAL_RUNTIMES = ["nodejs22.x", "nodejs24.x"];
/** Lambda's limit on a function's environment (names and values). */
const ENV_BYTES = 4096;
/** Lambda keeps this much of an account's concurrency unreserved. */
const UNRESERVED_MINIMUM = 100;
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const invalid = (message: string) => awsError("InvalidParameterValueException", message, 400);
const validation = (member: string, value: unknown, constraint: string) =>
  awsError(
    "ValidationException",
    `1 validation error detected: Value '${String(value)}' at '${member}' failed to satisfy constraint: ${constraint}`,
    400,
  );

export interface LambdaFunctionsOptions {
  dataDir?: string;
  region: string;
  account: string;
  /** The account's concurrency quota (AWS: 1,000 for an established account, 10 or 50 for a new one). */
  accountConcurrency: number;
  /** Layer version ARNs that exist (the platform's runtime layer). */
  layers: string[];
  /** Whether the role exists and Lambda may assume it (the local IAM's). */
  roleAssumable(arn: string): boolean;
  /** The code object's size and SHA-256, or undefined when it does not exist. */
  codeObject(code: FunctionCode): Promise<{ size: number; sha256: string } | undefined>;
}

export class LambdaFunctions {
  private readonly store: JsonStore<{ functions: Record<string, StoredFunction> }>;
  /** Invocations in flight, by function name (every version counts toward its function's reservation). */
  private readonly inflight = new Map<string, number>();
  private readonly deleted = new Set<(name: string, version?: string) => void>();

  constructor(private readonly opts: LambdaFunctionsOptions) {
    this.store = new JsonStore(opts.dataDir && join(opts.dataDir, "aws", "lambda.json"), () => ({
      functions: {},
    }));
  }

  /** `name`, `name:qualifier`, a partial or full ARN: the function's name and the qualifier it names. */
  parseName(nameOrArn: string): { name: string; qualifier?: string } {
    const m =
      /^(?:arn:aws:lambda:[a-z0-9-]+:\d{12}:function:|\d{12}:function:)?([a-zA-Z0-9_-]{1,64})(?::([\w$-]{1,128}))?$/.exec(
        nameOrArn,
      );
    if (!m)
      throw validation(
        "functionName",
        nameOrArn,
        "Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?",
      );
    return { name: m[1], ...(m[2] ? { qualifier: m[2] } : {}) };
  }

  private fn(name: string): StoredFunction {
    const f = Object.hasOwn(this.store.data.functions, name) ? this.store.data.functions[name] : undefined;
    if (!f) throw this.notFound(name);
    return f;
  }

  private notFound(name: string, qualifier?: string) {
    return awsError(
      "ResourceNotFoundException",
      `Function not found: ${this.arn(name)}${qualifier ? `:${qualifier}` : ""}`,
      404,
    );
  }

  private arn(name: string) {
    return `arn:aws:lambda:${this.opts.region}:${this.opts.account}:function:${name}`;
  }

  /** A function's version ($LATEST when unqualified), or undefined when there is none. */
  version(nameOrArn: string, qualifier?: string): FunctionVersion | undefined {
    return this.find(nameOrArn, qualifier)?.v;
  }

  /** A function's name and version by a name, `name:qualifier` or ARN; undefined for none (or no function name). */
  find(nameOrArn: string, qualifier?: string): { name: string; v: FunctionVersion } | undefined {
    let parsed: { name: string; qualifier?: string };
    try {
      parsed = this.parseName(nameOrArn);
    } catch {
      return undefined;
    }
    const f = Object.hasOwn(this.store.data.functions, parsed.name)
      ? this.store.data.functions[parsed.name]
      : undefined;
    const q = qualifier ?? parsed.qualifier ?? "$LATEST";
    if (!f) return undefined;
    const v = q === "$LATEST" ? f.latest : Object.hasOwn(f.versions, q) ? f.versions[q] : undefined;
    return v && { name: parsed.name, v };
  }

  /** The retry setting of a version's asynchronous invocations (Lambda's default: two retries). */
  asyncRetries(name: string, qualifier = "$LATEST"): number {
    const f = this.store.data.functions[name];
    return f?.eventInvoke[qualifier]?.MaximumRetryAttempts ?? 2;
  }

  /**
   * How the local Lambda service runs a function created through this API (undefined for any other): its version's
   * event-invoke setting, its timeout, and every invocation of it counted toward its reservation.
   */
  runSettings(nameOrArn: string): FunctionSettings | undefined {
    const found = this.find(nameOrArn);
    if (!found) return undefined;
    const { name, v } = found;
    const setting = this.store.data.functions[name]?.eventInvoke[v.config.Version];
    return {
      retries: setting?.MaximumRetryAttempts ?? 2,
      maxEventAgeSeconds: setting?.MaximumEventAgeInSeconds ?? 21_600,
      timeoutSeconds: v.config.Timeout,
      acquire: () => this.acquire(name),
    };
  }

  /** Called when a function (no version) or one version of it is deleted. */
  onDelete(listener: (name: string, version?: string) => void): void {
    this.deleted.add(listener);
  }

  /**
   * An invocation starts: throttled as Lambda throttles it when the function's reservation is taken (429
   * TooManyRequestsException). Answers its release.
   */
  acquire(name: string): () => void {
    const f = this.fn(name);
    const running = this.inflight.get(name) ?? 0;
    if (f.reserved !== undefined && running >= f.reserved)
      throw Object.assign(awsError("TooManyRequestsException", "Rate Exceeded.", 429), {
        Reason: "ReservedFunctionConcurrentInvocationLimitExceeded",
        retryAfterSeconds: "1",
      });
    this.inflight.set(name, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.inflight.get(name) ?? 1) - 1;
      if (n) this.inflight.set(name, n);
      else this.inflight.delete(name);
    };
  }

  /** One REST call of Lambda's control plane: its status and body; undefined when the path is none of them. */
  async handle(
    method: string,
    path: string,
    query: URLSearchParams,
    input: Record<string, unknown>,
  ): Promise<{ status: number; body: unknown } | undefined> {
    if (method === "POST" && path === "/2015-03-31/functions")
      return { status: 201, body: await this.create(input) };
    if (method === "GET" && path === "/2015-03-31/functions") return { status: 200, body: this.list(query) };
    const m = /^\/(2015-03-31|2017-10-31|2019-09-25|2019-09-30)\/functions\/([^/]+)(?:\/([a-z-]+))?$/.exec(
      path,
    );
    if (!m) return undefined;
    const [, api, rawName, sub = ""] = m;
    const route = `${method} ${api} ${sub}`;
    // Invocations are the data plane's (aws-emulator.ts), not this one's: their names are read there.
    if (!CONTROL_ROUTES.includes(route)) return undefined;
    const { name, qualifier: inName } = this.parseName(decodeURIComponent(rawName));
    const qualifier = query.get("Qualifier") ?? inName;
    switch (route) {
      case "GET 2015-03-31 ":
        return { status: 200, body: this.get(name, qualifier) };
      case "GET 2015-03-31 configuration":
        return { status: 200, body: this.configuration(name, qualifier) };
      case "DELETE 2015-03-31 ":
        return { status: 204, body: this.delete(name, qualifier) };
      case "PUT 2015-03-31 code":
        return { status: 200, body: await this.updateCode(name, input) };
      case "PUT 2015-03-31 configuration":
        return { status: 200, body: this.updateConfiguration(name, input) };
      case "POST 2015-03-31 versions":
        return { status: 201, body: this.publish(name, input) };
      case "GET 2015-03-31 versions":
        return { status: 200, body: this.listVersions(name, query) };
      case "PUT 2017-10-31 concurrency":
        return { status: 200, body: this.putConcurrency(name, input) };
      case "DELETE 2017-10-31 concurrency":
        return { status: 204, body: this.deleteConcurrency(name) };
      case "GET 2019-09-30 concurrency": {
        const reserved = this.fn(name).reserved;
        return {
          status: 200,
          body: reserved === undefined ? {} : { ReservedConcurrentExecutions: reserved },
        };
      }
      case "PUT 2019-09-25 event-invoke-config":
        return { status: 200, body: this.putEventInvoke(name, qualifier, input) };
      default:
        return undefined;
    }
  }

  private async code(
    input: Record<string, unknown>,
  ): Promise<{ code: FunctionCode; size: number; sha256: string }> {
    const { S3Bucket, S3Key, ZipFile, ImageUri } = input as Record<string, unknown>;
    if (ZipFile !== undefined || ImageUri !== undefined)
      throw invalid("The local cloud's Lambda takes a function's code from S3 only (S3Bucket and S3Key).");
    if (typeof S3Bucket !== "string" || typeof S3Key !== "string" || !S3Bucket || !S3Key)
      throw invalid("Please provide a source for function code.");
    const code = { S3Bucket, S3Key };
    const object = await this.opts.codeObject(code);
    if (!object)
      throw invalid(
        `Error occurred while GetObject. S3 Error Code: NoSuchKey. S3 Error Message: The specified key does not exist.`,
      );
    return { code, ...object };
  }

  /** The configuration members CreateFunction and UpdateFunctionConfiguration take, checked as Lambda checks them. */
  private settings(input: Record<string, unknown>, base?: FunctionConfig): Partial<FunctionConfig> {
    const out: Partial<FunctionConfig> = {};
    const { Role, Runtime, Handler, Timeout, MemorySize, Description, Environment, Layers, Architectures } =
      input;
    if (Runtime !== undefined) {
      if (typeof Runtime !== "string" || !LOCAL_RUNTIMES.includes(Runtime))
        throw invalid(
          `The runtime parameter of ${String(Runtime)} is not supported for creating or updating functions here; use one of ${LOCAL_RUNTIMES.join(", ")}.`,
        );
      out.Runtime = Runtime;
    }
    if (Role !== undefined) {
      if (typeof Role !== "string" || !this.opts.roleAssumable(Role))
        throw invalid("The role defined for the function cannot be assumed by Lambda.");
      out.Role = Role;
    }
    if (Handler !== undefined) {
      if (typeof Handler !== "string" || !/^[^\s]{1,128}$/.test(Handler))
        throw validation("handler", Handler, "Member must satisfy regular expression pattern: [^\\s]+");
      out.Handler = Handler;
    }
    if (Timeout !== undefined) {
      if (!Number.isInteger(Timeout) || (Timeout as number) < 1 || (Timeout as number) > 900)
        throw validation("timeout", Timeout, "Member must have value between 1 and 900");
      out.Timeout = Timeout as number;
    }
    if (MemorySize !== undefined) {
      if (!Number.isInteger(MemorySize) || (MemorySize as number) < 128 || (MemorySize as number) > 10240)
        throw validation("memorySize", MemorySize, "Member must have value between 128 and 10240");
      out.MemorySize = MemorySize as number;
    }
    if (Description !== undefined) out.Description = String(Description).slice(0, 256);
    if (Environment !== undefined) {
      const vars = (Environment as { Variables?: unknown })?.Variables ?? {};
      if (typeof vars !== "object" || vars === null || Object.values(vars).some((v) => typeof v !== "string"))
        throw invalid("Environment variables must be strings.");
      const bytes = Object.entries(vars as Record<string, string>).reduce(
        (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v),
        0,
      );
      if (bytes > ENV_BYTES)
        throw invalid(
          `Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit. String measured: ${bytes}`,
        );
      out.Environment = { Variables: vars as Record<string, string> };
    }
    if (Layers !== undefined) {
      if (!Array.isArray(Layers)) throw invalid("Layers must be a list of layer version ARNs.");
      for (const l of Layers)
        if (typeof l !== "string" || !this.opts.layers.includes(l))
          throw invalid(`Layer version ${String(l)} does not exist.`);
      out.Layers = (Layers as string[]).map((Arn) => ({ Arn, CodeSize: 0 }));
    }
    if (Architectures !== undefined) {
      if (
        !Array.isArray(Architectures) ||
        Architectures.length !== 1 ||
        !["x86_64", "arm64"].includes(Architectures[0])
      )
        throw validation("architectures", Architectures, "Member must have length 1 and be x86_64 or arm64");
      out.Architectures = Architectures as string[];
    }
    if (!base) {
      if (!out.Role) throw validation("role", null, "Member must not be null");
      if (!out.Runtime) throw invalid("The Runtime parameter is required for a Zip package.");
      if (!out.Handler) throw invalid("The Handler parameter is required for a Zip package.");
    }
    return out;
  }

  private async create(input: Record<string, unknown>): Promise<FunctionConfig> {
    const FunctionName = input.FunctionName;
    if (typeof FunctionName !== "string" || !NAME.test(FunctionName))
      throw validation(
        "functionName",
        FunctionName,
        "Member must satisfy regular expression pattern: [a-zA-Z0-9-_]+",
      );
    const settings = this.settings(input);
    const code = await this.code((input.Code ?? {}) as Record<string, unknown>);
    const config: FunctionConfig = {
      FunctionName,
      FunctionArn: this.arn(FunctionName),
      Runtime: settings.Runtime!,
      Role: settings.Role!,
      Handler: settings.Handler!,
      CodeSize: code.size,
      CodeSha256: code.sha256,
      Description: settings.Description ?? "",
      Timeout: settings.Timeout ?? 3,
      MemorySize: settings.MemorySize ?? 128,
      LastModified: lastModified(),
      Version: "$LATEST",
      Environment: settings.Environment ?? { Variables: {} },
      Layers: settings.Layers ?? [],
      Architectures: settings.Architectures ?? ["x86_64"],
      State: "Active",
      LastUpdateStatus: "Successful",
      PackageType: "Zip",
      RevisionId: randomUUID(),
      EphemeralStorage: { Size: 512 },
    };
    return this.store.update((d) => {
      if (Object.hasOwn(d.functions, FunctionName))
        throw awsError("ResourceConflictException", `Function already exist: ${FunctionName}`, 409);
      d.functions[FunctionName] = {
        latest: { config, code: code.code },
        versions: {},
        lastVersion: 0,
        eventInvoke: {},
      };
      return config;
    });
  }

  private get(name: string, qualifier?: string) {
    const v = this.version(name, qualifier);
    if (!v) throw this.notFound(name, qualifier);
    const reserved = this.fn(name).reserved;
    return {
      Configuration: v.config,
      Code: { RepositoryType: "S3" },
      ...(reserved === undefined ? {} : { Concurrency: { ReservedConcurrentExecutions: reserved } }),
    };
  }

  private configuration(name: string, qualifier?: string) {
    const v = this.version(name, qualifier);
    if (!v) throw this.notFound(name, qualifier);
    return v.config;
  }

  private delete(name: string, qualifier?: string): undefined {
    this.fn(name);
    if (qualifier === "$LATEST")
      throw invalid("$LATEST version cannot be deleted without deleting the function.");
    this.store.update((d) => {
      if (qualifier === undefined) delete d.functions[name];
      else {
        if (!Object.hasOwn(d.functions[name].versions, qualifier)) throw this.notFound(name, qualifier);
        delete d.functions[name].versions[qualifier];
        delete d.functions[name].eventInvoke[qualifier];
      }
    });
    for (const listener of this.deleted) listener(name, qualifier);
    return undefined;
  }

  private async updateCode(name: string, input: Record<string, unknown>): Promise<FunctionConfig> {
    this.fn(name);
    const code = await this.code(input);
    return this.store.update((d) => {
      const f = d.functions[name];
      if (!f) throw this.notFound(name);
      f.latest = {
        code: code.code,
        config: {
          ...f.latest.config,
          CodeSize: code.size,
          CodeSha256: code.sha256,
          LastModified: lastModified(),
          RevisionId: randomUUID(),
        },
      };
      return f.latest.config;
    });
  }

  private updateConfiguration(name: string, input: Record<string, unknown>): FunctionConfig {
    const base = this.fn(name).latest.config;
    const settings = this.settings(input, base);
    return this.store.update((d) => {
      const f = d.functions[name];
      f.latest.config = {
        ...f.latest.config,
        ...settings,
        LastModified: lastModified(),
        RevisionId: randomUUID(),
      };
      return f.latest.config;
    });
  }

  private publish(name: string, input: Record<string, unknown>): FunctionConfig {
    this.fn(name);
    return this.store.update((d) => {
      const f = d.functions[name];
      const fingerprint = versionFingerprint(f.latest);
      // Lambda publishes no new version of unchanged code and configuration: it answers the last one.
      const last = f.versions[String(f.lastVersion)];
      if (last && versionFingerprint(last) === fingerprint) return last.config;
      const Version = String(f.lastVersion + 1);
      f.lastVersion += 1;
      f.versions[Version] = {
        code: f.latest.code,
        config: {
          ...f.latest.config,
          Version,
          FunctionArn: `${this.arn(name)}:${Version}`,
          Description:
            typeof input.Description === "string" ? input.Description : f.latest.config.Description,
        },
      };
      return f.versions[Version].config;
    });
  }

  private listVersions(name: string, query: URLSearchParams) {
    const f = this.fn(name);
    const { page, next } = paged([f.latest.config, ...Object.values(f.versions).map((v) => v.config)], query);
    return { Versions: page, ...next };
  }

  /** ListFunctions: each function's $LATEST, by name. */
  private list(query: URLSearchParams) {
    const all = Object.entries(this.store.data.functions)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, f]) => f.latest.config);
    const { page, next } = paged(all, query);
    return { Functions: page, ...next };
  }

  private putConcurrency(name: string, input: Record<string, unknown>) {
    const reserved = input.ReservedConcurrentExecutions;
    if (!Number.isInteger(reserved) || (reserved as number) < 0)
      throw validation(
        "reservedConcurrentExecutions",
        reserved,
        "Member must have value greater than or equal to 0",
      );
    this.fn(name);
    return this.store.update((d) => {
      const others = Object.entries(d.functions)
        .filter(([n]) => n !== name)
        .reduce((n, [, f]) => n + (f.reserved ?? 0), 0);
      if (others + (reserved as number) > this.opts.accountConcurrency - UNRESERVED_MINIMUM)
        throw invalid(
          `Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [${UNRESERVED_MINIMUM}].`,
        );
      d.functions[name].reserved = reserved as number;
      return { ReservedConcurrentExecutions: reserved };
    });
  }

  private deleteConcurrency(name: string): undefined {
    this.fn(name);
    this.store.update((d) => {
      delete d.functions[name].reserved;
    });
    return undefined;
  }

  private putEventInvoke(name: string, qualifier: string | undefined, input: Record<string, unknown>) {
    const retries = input.MaximumRetryAttempts ?? 2;
    const age = input.MaximumEventAgeInSeconds ?? 21600;
    if (!Number.isInteger(retries) || (retries as number) < 0 || (retries as number) > 2)
      throw validation("maximumRetryAttempts", retries, "Member must have value between 0 and 2");
    if (!Number.isInteger(age) || (age as number) < 60 || (age as number) > 21600)
      throw validation("maximumEventAgeInSeconds", age, "Member must have value between 60 and 21600");
    if (input.DestinationConfig !== undefined)
      throw invalid("The local cloud's Lambda sends asynchronous invocations to no destination.");
    const q = qualifier ?? "$LATEST";
    if (!this.version(name, q)) throw this.notFound(name, qualifier);
    const setting = {
      MaximumRetryAttempts: retries as number,
      MaximumEventAgeInSeconds: age as number,
      LastModified: Date.now() / 1000,
    };
    this.store.update((d) => {
      d.functions[name].eventInvoke[q] = setting;
    });
    return { FunctionArn: `${this.arn(name)}${qualifier ? `:${qualifier}` : ""}`, ...setting };
  }
}

/** A page of a listing (MaxItems at most 50, Lambda's default), and the marker of the next one. */
function paged<T>(all: T[], query: URLSearchParams): { page: T[]; next: { NextMarker?: string } } {
  const max = Math.min(Number(query.get("MaxItems") ?? 50) || 50, 50);
  const start = Number(query.get("Marker") ?? 0) || 0;
  return {
    page: all.slice(start, start + max),
    next: start + max < all.length ? { NextMarker: String(start + max) } : {},
  };
}

/** Lambda's LastModified format: 2024-01-02T03:04:05.678+0000. */
const lastModified = () => new Date().toISOString().replace("Z", "+0000");

/** What makes two versions the same: their code and the configuration a version freezes. */
function versionFingerprint(v: FunctionVersion): string {
  const {
    LastModified: _m,
    RevisionId: _r,
    Version: _v,
    FunctionArn: _a,
    Description: _d,
    ...rest
  } = v.config;
  return createHash("sha256")
    .update(JSON.stringify([v.code, rest]))
    .digest("hex");
}
