import { beforeEach, describe, expect, it, vi } from "vitest";
import { DeployError } from "../../errors.ts";
import { json } from "../../http/event.ts";
import { preludeOf } from "../runtime/lambda-protocol.ts";

// Issue 35: what the deploy step asks of Lambda and IAM for a runtime's capacity and role, where AWS answers with
// faults no local part produces (a quota with no room, GetRole of a missing role refused): the clients are mocked.
const sent: { command: string; input: Record<string, unknown> }[] = [];
/** What a command answers, by its name: a value, or an error to throw. */
const answers = new Map<string, unknown>();
const client = {
  send: async (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
    sent.push({ command: cmd.constructor.name, input: cmd.input });
    const given = answers.get(cmd.constructor.name);
    // A list: one answer per call, in order.
    const a = Array.isArray(given) ? given.shift() : given;
    if (a instanceof Error) throw a;
    return a ?? {};
  },
};
vi.mock("../../aws/clients.ts", () => ({ iam: () => client, lambdaControl: () => client, s3: () => client }));
const {
  applyCapacity,
  applyDrainRetries,
  checkRuntimeHealth,
  DRAIN_INVOKE_CONFIG,
  existingRole,
  publishRuntimeVersion,
} = await import("./lambda-host.ts");

const awsError = (name: string, message = name) => Object.assign(new Error(message), { name });
beforeEach(() => {
  sent.length = 0;
  answers.clear();
});

describe("a runtime's capacity", () => {
  it("with no reservation set: removes any earlier one, so the function shares the account's pool", async () => {
    await applyCapacity("agent-rt-d", undefined, () => {});
    expect(sent.map((s) => s.command)).toEqual(["DeleteFunctionConcurrencyCommand"]);
  });

  it("with one set: reserves it", async () => {
    await applyCapacity("agent-rt-d", 5, () => {});
    expect(sent[0]).toEqual({
      command: "PutFunctionConcurrencyCommand",
      input: { FunctionName: "agent-rt-d", ReservedConcurrentExecutions: 5 },
    });
  });

  it("leaves no drain in Lambda's async queue: no retry, dropped after a minute (the run sweeper re-drives)", async () => {
    // Per published version: the drains invoke the version the activation made live.
    await applyDrainRetries("agent-rt-d", "7");
    expect(sent).toEqual([
      {
        command: "PutFunctionEventInvokeConfigCommand",
        input: { FunctionName: "agent-rt-d", Qualifier: "7", ...DRAIN_INVOKE_CONFIG },
      },
    ]);
    expect(DRAIN_INVOKE_CONFIG).toEqual({ MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
  });

  it("a reservation the account has no room for fails the deploy, naming the setting", async () => {
    answers.set(
      "PutFunctionConcurrencyCommand",
      awsError(
        "InvalidParameterValueException",
        "Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [100].",
      ),
    );
    const applying = applyCapacity("agent-rt-d", 5, () => {});
    await expect(applying).rejects.toBeInstanceOf(DeployError);
    await expect(applying).rejects.toThrow(/runtimeReservedConcurrency/);
  });

  it("another failure is not a DeployError", async () => {
    answers.set("PutFunctionConcurrencyCommand", awsError("ServiceException"));
    await expect(applyCapacity("agent-rt-d", 5, () => {})).rejects.not.toBeInstanceOf(DeployError);
  });
});

describe("a runtime's role, looked up by name", () => {
  it("is absent when IAM says so, or refuses GetRole of a role that does not exist (path-less ARN)", async () => {
    answers.set("GetRoleCommand", awsError("NoSuchEntityException"));
    expect(await existingRole("agent-rt-d")).toBeUndefined();
    answers.set("GetRoleCommand", awsError("AccessDenied"));
    expect(await existingRole("agent-rt-d")).toBeUndefined();
  });

  it("is the role when it exists; another failure is thrown", async () => {
    answers.set("GetRoleCommand", { Role: { Arn: "arn:aws:iam::1:role/agent-runtime/agent-rt-d" } });
    expect((await existingRole("agent-rt-d"))?.Arn).toContain("agent-rt-d");
    answers.set("GetRoleCommand", awsError("ServiceFailure"));
    await expect(existingRole("agent-rt-d")).rejects.toThrow("ServiceFailure");
  });
});

describe("a new version's health check", () => {
  const healthy = `${preludeOf(json(200, []))}[]`;
  // What Lambda answers when the runtime's init was refused its sealed environment (S3, KMS) as its role.
  const refused = () => ({
    FunctionError: "Unhandled",
    Payload: Buffer.from(
      JSON.stringify({
        errorType: "AccessDeniedException",
        errorMessage:
          "User: arn:aws:sts::1:assumed-role/agent-rt-d/agent-rt-d is not authorized to perform: kms:Decrypt",
      }),
    ),
  });
  const invokes = () => sent.filter((s) => s.command === "InvokeCommand").length;

  it("is tried again while a role made moments before is refused access (IAM is eventually consistent)", async () => {
    answers.set("InvokeCommand", [refused(), refused(), { Payload: Buffer.from(healthy) }]);
    expect((await checkRuntimeHealth("agent-rt-d", "3", [0, 0, 0])).toString()).toBe(healthy);
    expect(invokes()).toBe(3);
  });

  it("fails the deploy when access stays refused, and at once when the graphs fail otherwise", async () => {
    answers.set("InvokeCommand", [refused(), refused(), refused(), refused()]);
    const checking = checkRuntimeHealth("agent-rt-d", "3", [0, 0, 0]);
    await expect(checking).rejects.toBeInstanceOf(DeployError);
    expect(invokes()).toBe(4);
    sent.length = 0;
    answers.set("InvokeCommand", [
      { FunctionError: "Unhandled", Payload: Buffer.from('{"errorType":"SyntaxError","errorMessage":"x"}') },
    ]);
    await expect(checkRuntimeHealth("agent-rt-d", "3", [0, 0, 0])).rejects.toThrow(
      /failed to load the graphs: .*SyntaxError/,
    );
    expect(invokes()).toBe(1);
  });
});

describe("a new version before its health check", () => {
  // Lambda's function states (https://docs.aws.amazon.com/lambda/latest/dg/functions-states.html): a version is
  // invoked only once Active; an automation that calls the API directly checks the state first. The local Lambda
  // service makes every version Active at once, so this is the mocked fault.
  it("is waited for while Lambda reports it Pending, then answered", async () => {
    answers.set("PublishVersionCommand", { Version: "3", State: "Pending" });
    answers.set("GetFunctionCommand", [
      { Configuration: { State: "Pending" } },
      { Configuration: { State: "Active" } },
    ]);
    expect(await publishRuntimeVersion("agent-rt-d", "r1", { minDelay: 1, maxWaitTime: 30 })).toBe("3");
    expect(sent.map((s) => s.command)).toEqual([
      "PublishVersionCommand",
      "GetFunctionCommand",
      "GetFunctionCommand",
    ]);
    // The version's own state (GetFunction of the qualified name: what the deploy role may read).
    expect(sent[1]!.input).toEqual({ FunctionName: "agent-rt-d", Qualifier: "3" });
  });

  it("is not looked up again when Lambda answers it Active", async () => {
    answers.set("PublishVersionCommand", { Version: "4", State: "Active" });
    expect(await publishRuntimeVersion("agent-rt-d", "r2")).toBe("4");
    expect(sent.map((s) => s.command)).toEqual(["PublishVersionCommand"]);
    expect(sent[0]!.input).toEqual({ FunctionName: "agent-rt-d", Description: "revision r2" });
  });

  it("fails the deploy, saying why, when the version ends Failed", async () => {
    answers.set("PublishVersionCommand", { Version: "5", State: "Pending" });
    answers.set("GetFunctionCommand", [
      { Configuration: { State: "Failed", StateReasonCode: "InternalError", StateReason: "boom" } },
    ]);
    const publishing = publishRuntimeVersion("agent-rt-d", "r3", { minDelay: 1, maxWaitTime: 30 });
    await expect(publishing).rejects.toBeInstanceOf(DeployError);
    await expect(publishing).rejects.toThrow(/version 5 .*Failed/);
  });
});
