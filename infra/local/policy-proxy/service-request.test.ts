import { describe, expect, it } from "vitest";
import { Refused } from "./refusal.ts";
import {
  emulatedServiceOf,
  qualifiedFunction,
  type ServiceArns,
  serviceAuthorizations,
} from "./service-request.ts";

const KEY = "arn:aws:kms:us-east-1:000000000000:key/data";
const SECRETS = "arn:aws:kms:us-east-1:000000000000:key/secrets";
const arns: ServiceArns = {
  region: "us-east-1",
  account: "000000000000",
  kmsKey: (id) =>
    ({ [KEY]: KEY, data: KEY, "alias/agent-platform": KEY, secrets: SECRETS })[id] as string | undefined,
  kmsKeyOfCiphertext: (blob) => (blob.toString() === "sealed-by-secrets" ? SECRETS : undefined),
};
const target = (t: string, input: Record<string, unknown>) => ({
  target: t,
  method: "POST",
  url: "/",
  input,
});

describe("emulated services' requests as IAM authorizations", () => {
  it("KMS: the key the call names or the ciphertext was made with, and its encryption context as condition keys", () => {
    expect(
      serviceAuthorizations(
        "kms",
        target("TrentService.GenerateDataKey", {
          KeyId: "alias/agent-platform",
          EncryptionContext: { tenant: "t1" },
        }),
        arns,
      ),
    ).toEqual([
      {
        action: "kms:GenerateDataKey",
        resource: KEY,
        context: {
          "kms:CallerAccount": "000000000000",
          "kms:EncryptionContext:tenant": "t1",
          "kms:EncryptionContextKeys": ["tenant"],
        },
      },
    ]);
    const blob = Buffer.from("sealed-by-secrets").toString("base64");
    expect(
      serviceAuthorizations("kms", target("TrentService.Decrypt", { CiphertextBlob: blob }), arns),
    ).toEqual([
      {
        action: "kms:Decrypt",
        resource: SECRETS,
        context: { "kms:CallerAccount": "000000000000" },
      },
    ]);
  });

  it("KMS: an unknown key, a foreign ciphertext or a context that is not a string map is refused", () => {
    const refused = (input: Record<string, unknown>, op = "Encrypt") => {
      try {
        serviceAuthorizations("kms", target(`TrentService.${op}`, input), arns);
      } catch (err) {
        return (err as Refused).code;
      }
    };
    expect(refused({ KeyId: "nope", Plaintext: "eA==" })).toBe("NotFoundException");
    expect(refused({ Plaintext: "eA==" })).toBe("ValidationException");
    expect(refused({ CiphertextBlob: "eA==" }, "Decrypt")).toBe("InvalidCiphertextException");
    expect(refused({ KeyId: "data", EncryptionContext: { a: 1 } })).toBe("ValidationException");
    expect(refused({ KeyId: "data", EncryptionContext: ["a"] })).toBe("ValidationException");
  });

  it("Step Functions: the state machine or execution named, '*' for actions without a resource", () => {
    const sm = "arn:aws:states:us-east-1:000000000000:stateMachine:bulk-export";
    expect(
      serviceAuthorizations(
        "states",
        target("AWSStepFunctions.StartExecution", { stateMachineArn: sm }),
        arns,
      ),
    ).toEqual([{ action: "states:StartExecution", resource: sm, context: {} }]);
    const ex = "arn:aws:states:us-east-1:000000000000:execution:bulk-export:x";
    expect(
      serviceAuthorizations(
        "states",
        target("AWSStepFunctions.DescribeExecution", { executionArn: ex }),
        arns,
      ),
    ).toEqual([{ action: "states:DescribeExecution", resource: ex, context: {} }]);
    expect(serviceAuthorizations("states", target("AWSStepFunctions.ListStateMachines", {}), arns)).toEqual([
      { action: "states:ListStateMachines", resource: "*", context: {} },
    ]);
    expect(() => serviceAuthorizations("states", target("TrentService.Decrypt", {}), arns)).toThrow(Refused);
  });

  it("Lambda: invoking by name, ARN or with a qualifier is lambda:InvokeFunction on that ARN", () => {
    const invoke = (url: string) =>
      serviceAuthorizations("lambda", { method: "POST", url, input: {} }, arns)[0].resource;
    expect(invoke("/2015-03-31/functions/agent-platform-AgentTraceIngest/invocations")).toBe(
      "arn:aws:lambda:us-east-1:000000000000:function:agent-platform-AgentTraceIngest",
    );
    expect(invoke("/2021-11-15/functions/f/response-streaming-invocations?Qualifier=7")).toBe(
      "arn:aws:lambda:us-east-1:000000000000:function:f:7",
    );
    const arn = "arn:aws:lambda:us-east-1:000000000000:function:g";
    expect(invoke(`/2015-03-31/functions/${encodeURIComponent(arn)}/invocations`)).toBe(arn);
    expect(() => invoke("/2015-03-31/functions/f/configuration")).toThrow(Refused);
  });

  it("Lambda: a qualifier in the name and in ?Qualifier= is read once: the same is one qualifier, another is refused as Lambda refuses it", () => {
    const invoke = (url: string) =>
      serviceAuthorizations("lambda", { method: "POST", url, input: {} }, arns)[0].resource;
    const fn = "arn:aws:lambda:us-east-1:000000000000:function:f";
    expect(invoke("/2015-03-31/functions/f%3A3/invocations")).toBe(`${fn}:3`);
    expect(invoke("/2015-03-31/functions/f%3A3/invocations?Qualifier=3")).toBe(`${fn}:3`);
    expect(invoke(`/2015-03-31/functions/${encodeURIComponent(`${fn}:3`)}/invocations?Qualifier=3`)).toBe(
      `${fn}:3`,
    );
    expect(invoke("/2015-03-31/functions/000000000000%3Afunction%3Af%3A3/invocations")).toBe(`${fn}:3`);
    // Before, `f:1` with ?Qualifier=2 was checked as `f:1:2` while the emulator ran `f:1:2` its own way.
    for (const bad of [
      "/2015-03-31/functions/f%3A1/invocations?Qualifier=2",
      "/2015-03-31/functions/f%3A1%3A2/invocations",
      `/2015-03-31/functions/${encodeURIComponent(`${fn}:1:2`)}/invocations`,
      `/2015-03-31/functions/${encodeURIComponent("arn:aws:lambda:us-east-1:000000000000:layer:f")}/invocations`,
    ])
      expect(() => invoke(bad), bad).toThrow(Refused);
    expect(qualifiedFunction(`${fn}:3`, "3")).toEqual({ name: fn, qualifier: "3" });
    expect(qualifiedFunction("f", null)).toEqual({ name: "f" });
  });

  it("Scheduler: the schedule in its group, and the target's role passed to the scheduler", () => {
    const auths = serviceAuthorizations(
      "scheduler",
      {
        method: "POST",
        url: "/schedules/export-1",
        input: { GroupName: "agent-platform", Target: { RoleArn: "arn:aws:iam::000000000000:role/sched" } },
      },
      arns,
    );
    expect(auths).toEqual([
      {
        action: "scheduler:CreateSchedule",
        resource: "arn:aws:scheduler:us-east-1:000000000000:schedule/agent-platform/export-1",
        context: {},
      },
      {
        action: "iam:PassRole",
        resource: "arn:aws:iam::000000000000:role/sched",
        context: { "iam:PassedToService": "scheduler.amazonaws.com" },
      },
    ]);
    expect(
      serviceAuthorizations(
        "scheduler",
        { method: "DELETE", url: "/schedules/x?groupName=g", input: undefined },
        arns,
      ),
    ).toEqual([
      {
        action: "scheduler:DeleteSchedule",
        resource: "arn:aws:scheduler:us-east-1:000000000000:schedule/g/x",
        context: {},
      },
    ]);
  });
});

describe("Scheduler: the group is read where the emulator reads it", () => {
  const role = { Target: { RoleArn: "arn:aws:iam::000000000000:role/sched" } };
  it("a create naming a group in its query, or a delete naming one in its body, is refused", () => {
    for (const call of [
      {
        method: "POST",
        url: "/schedules/x?groupName=agent-platform",
        input: { GroupName: "other", ...role },
      },
      { method: "PUT", url: "/schedules/x?groupName=agent-platform", input: role },
      { method: "DELETE", url: "/schedules/x", input: { GroupName: "agent-platform" } },
      { method: "GET", url: "/schedules/x?groupName=g", input: { GroupName: "g" } },
    ])
      expect(() => serviceAuthorizations("scheduler", call, arns), call.method).toThrow(Refused);
  });
});

describe("the service a request's shape is for (what the emulator dispatches by and the proxy matches to the signature)", () => {
  const json = "application/x-amz-json-1.1";
  const form = "application/x-www-form-urlencoded; charset=utf-8";
  const of = (method: string, url: string, target?: string, contentType?: string) =>
    emulatedServiceOf({ method, url, target, contentType });

  it("each SDK's own shape reads as its service", () => {
    expect(of("POST", "/", "TrentService.Decrypt", json)).toBe("kms");
    expect(of("POST", "/", "AWSStepFunctions.StartExecution", "application/x-amz-json-1.0")).toBe("states");
    expect(of("POST", "/", "Logs_20140328.CreateLogGroup", json)).toBe("logs");
    expect(of("POST", "/", "CodeBuild_20161006.StartBuild", json)).toBe("codebuild");
    expect(of("POST", "/", undefined, form)).toBe("iam");
    expect(of("POST", "/2015-03-31/functions/AgentTraceIngest/invocations?Qualifier=1")).toBe("lambda");
    expect(of("PUT", "/2015-03-31/functions/agent-rt-x/code", undefined, "application/json")).toBe("lambda");
    expect(of("POST", "/2021-11-15/functions/a%3A1/response-streaming-invocations")).toBe("lambda");
    expect(of("GET", "/schedules/s?groupName=g")).toBe("scheduler");
  });

  it("a target on a REST path, a form with a target, or a target off the root reads as no service", () => {
    expect(
      of("POST", "/2015-03-31/functions/AgentTraceIngest/invocations", "TrentService.Decrypt", json),
    ).toBe(undefined);
    expect(of("PUT", "/2015-03-31/functions/agent-rt-x/code", "TrentService.Decrypt", json)).toBe(undefined);
    expect(of("POST", "/schedules/s", "Logs_20140328.CreateLogGroup", json)).toBe(undefined);
    expect(of("POST", "/", "TrentService.Decrypt", form)).toBe(undefined);
    expect(of("GET", "/", "TrentService.Decrypt", json)).toBe(undefined);
    expect(of("POST", "/", "DynamoDB_20120810.GetItem", json)).toBe(undefined);
    expect(of("GET", "/", undefined, form)).toBe(undefined);
    expect(of("POST", "/?Action=CreateRole", undefined, form)).toBe("iam");
  });

  it("a path a URL parser reads otherwise than its bytes reads as no service", () => {
    for (const url of [
      "/2015-03-31/functions/AgentTraceIngest/invocations/../../agent-rt-x/code",
      "/2015-03-31/functions/AgentTraceIngest/%2e%2e/agent-rt-x/code",
      "/2015-03-31/functions/AgentTraceIngest\\..\\agent-rt-x/invocations",
      "/2015-03-31/functions/AgentTraceIngest/invocations#x",
      "//2015-03-31/functions/x/invocations",
      "http://other/2015-03-31/functions/x/invocations",
    ])
      expect(of("POST", url), url).toBe(undefined);
  });
});
