import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { CreateScheduleCommand, GetScheduleCommand, SchedulerClient } from "@aws-sdk/client-scheduler";
import {
  DescribeExecutionCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAwsEmulator } from "../infra/local/aws-emulator.ts";
import { CALLER_HEADER, newBackendToken, withBackendToken } from "../infra/local/backend-token.ts";
import { LocalKms } from "../infra/local/kms.ts";
import { LocalLambda } from "../infra/local/lambda.ts";
import { OPERATOR_ARN, platformRoleArn } from "../infra/local/operator.ts";
import { LocalScheduler } from "../infra/local/scheduler.ts";
import { LocalStepFunctions, localStateMachineArn } from "../infra/local/sfn.ts";
import { seal, unseal } from "../shared/crypto/envelope.ts";
import "./helpers/cloud.ts";
import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The local AWS parts, driven through the real AWS SDK clients over their wire protocols.
const calls: { name: string; input: any }[] = [];
const attempts = new Map<string, number>();
const functions: Record<string, (e: any) => Promise<unknown>> = {
  Plan: async (e) => ({ items: e.items }),
  Work: async (e) => {
    const n = (attempts.get(e.id) ?? 0) + 1;
    attempts.set(e.id, n);
    if (n === 1) throw Object.assign(new Error(`first try of ${e.id}`), { name: "Flaky" });
    return { id: e.id, attempts: n };
  },
  Slow: async () => new Promise((r) => setTimeout(r, 5000)),
  Record: async (e) => {
    calls.push({ name: "Record", input: e });
    return { seen: e };
  },
};
const resolve = (arn: string) => functions[arn.split(":function:").pop()!.split(":")[0]];

let emulator: Awaited<ReturnType<typeof startAwsEmulator>>;
const kmsDir = mkdtempSync(join(tmpdir(), "kms-"));
/** The emulator answers only what carries its token (the policy proxy's forwards); these clients stand in for it. */
const TOKEN = newBackendToken();
let sfn: LocalStepFunctions;
let scheduler: LocalScheduler;
const cfg = () => ({
  endpoint: emulator.url,
  region: "us-east-1",
  credentials: { accessKeyId: "x", secretAccessKey: "x" },
});

/** A one-time schedule at `at` that records `{ n }` through the Record function, then deletes itself. */
const oneTime = (Name: string, at: string, n: number) =>
  new CreateScheduleCommand({
    Name,
    ScheduleExpression: `at(${at})`,
    FlexibleTimeWindow: { Mode: "OFF" },
    ActionAfterCompletion: "DELETE",
    Target: {
      Arn: "arn:aws:lambda:us-east-1:0:function:Record",
      RoleArn: "arn:aws:iam::0:role/x",
      Input: JSON.stringify({ n }),
    },
  });

beforeAll(async () => {
  sfn = new LocalStepFunctions(join(import.meta.dirname, "fixtures", "state-machines"), resolve);
  const lambda = new LocalLambda(resolve, 10);
  scheduler = new LocalScheduler(
    async (t) => void (await lambda.invoke(t.Arn, JSON.parse(t.Input ?? "{}"), false)),
    50,
    // Its own partition: the shared test cloud's scheduler polls the same table and would fire these first.
    "LOCAL#SCHEDULES#local-services-test",
  );
  emulator = await startAwsEmulator(
    { kms: new LocalKms(kmsDir), sfn, lambda, scheduler },
    "127.0.0.1",
    TOKEN,
  );
});
afterAll(() => new Promise<void>((r) => emulator.server.close(() => r())));

describe("local key service", () => {
  it("wraps data keys like KMS GenerateDataKey/Decrypt", async () => {
    const client = withBackendToken(new KMSClient(cfg()), TOKEN);
    const dk = await client.send(new GenerateDataKeyCommand({ KeyId: "alias/x", KeySpec: "AES_256" }));
    expect(dk.Plaintext?.length).toBe(32);
    const back = await client.send(new DecryptCommand({ CiphertextBlob: dk.CiphertextBlob }));
    expect(Buffer.from(back.Plaintext!).equals(Buffer.from(dk.Plaintext!))).toBe(true);
  });

  it("binds a data key to its encryption context as KMS does: Decrypt with another context, or none, fails", async () => {
    const client = withBackendToken(new KMSClient(cfg()), TOKEN);
    const EncryptionContext = { tenant_id: "t1", record: "r1" };
    const dk = await client.send(
      new GenerateDataKeyCommand({ KeyId: "alias/x", KeySpec: "AES_256", EncryptionContext }),
    );
    const back = await client.send(
      // The same pairs in another order are the same context.
      new DecryptCommand({
        CiphertextBlob: dk.CiphertextBlob,
        EncryptionContext: { record: "r1", tenant_id: "t1" },
      }),
    );
    expect(Buffer.from(back.Plaintext!).equals(Buffer.from(dk.Plaintext!))).toBe(true);
    const others: (Record<string, string> | undefined)[] = [
      { tenant_id: "t2", record: "r1" },
      { tenant_id: "t1" },
      undefined,
    ];
    for (const other of others)
      await expect(
        client.send(new DecryptCommand({ CiphertextBlob: dk.CiphertextBlob, EncryptionContext: other })),
      ).rejects.toMatchObject({ name: "InvalidCiphertextException" });
  });

  it("opens a data key wrapped before contexts were bound (an existing DATA_DIR) for the platform's own callers, never for a runtime", async () => {
    const key = randomBytes(32);
    // The format of before: IV, tag, body, with no context in the AAD.
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", readFileSync(join(kmsDir, "kms-master.key")), iv);
    const body = Buffer.concat([c.update(key), c.final()]);
    const legacy = Buffer.concat([iv, c.getAuthTag(), body]);
    // The caller as the policy proxy names it to the emulator (x-platform-caller).
    const as = (caller: string) => {
      const client = withBackendToken(new KMSClient(cfg()), TOKEN);
      client.middlewareStack.add(
        (next: any) => (args: any) => {
          args.request.headers[CALLER_HEADER] = caller;
          return next(args);
        },
        { step: "build", name: "caller" },
      );
      return client;
    };
    const decrypt = { CiphertextBlob: legacy, EncryptionContext: { tenant_id: "t1", deployment_id: "d1" } };
    for (const platform of [OPERATOR_ARN, platformRoleArn("api")]) {
      const back = await as(platform).send(new DecryptCommand(decrypt));
      expect(Buffer.from(back.Plaintext!).equals(key)).toBe(true);
    }
    // A runtime names only its own context; a blob of before contexts (another deployment's) is not opened by it.
    const runtime = "arn:aws:sts::000000000000:assumed-role/agent-rt-d1/agent-rt-d1";
    for (const caller of [runtime, "", "arn:aws:sts::000000000000:assumed-role/agent-platform-x/elsewhere"])
      await expect(as(caller).send(new DecryptCommand(decrypt))).rejects.toMatchObject({
        name: "InvalidCiphertextException",
      });
  });

  it("envelope-seals a secret that only its own context opens", async () => {
    const sealed = await seal("hunter2", { tenant_id: "t1", record: "r1" });
    expect(JSON.stringify(sealed)).not.toContain("hunter2");
    expect(await unseal(sealed, { tenant_id: "t1", record: "r1" })).toBe("hunter2");
    await expect(unseal(sealed, { tenant_id: "t2", record: "r1" })).rejects.toThrow();
  });
});

describe("local Step Functions", () => {
  it("runs the ASL: Map over items, each failed attempt retried by the Retry policy", async () => {
    const client = withBackendToken(new SFNClient(cfg()), TOKEN);
    const stateMachineArn = localStateMachineArn("retry-map");
    const { executionArn } = await client.send(
      new StartExecutionCommand({
        stateMachineArn,
        name: "run-1",
        input: JSON.stringify({ items: [{ id: "a" }, { id: "b" }, { id: "c" }] }),
      }),
    );
    await sfn.settled(executionArn!);
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(d.status).toBe("SUCCEEDED");
    expect(JSON.parse(d.output!)).toEqual([
      { id: "a", attempts: 2 },
      { id: "b", attempts: 2 },
      { id: "c", attempts: 2 },
    ]);
  });

  it("StartExecution is idempotent on the execution name and input", async () => {
    const client = withBackendToken(new SFNClient(cfg()), TOKEN);
    const input = {
      stateMachineArn: localStateMachineArn("retry-map"),
      name: "same",
      input: JSON.stringify({ items: [] }),
    };
    const a = await client.send(new StartExecutionCommand(input));
    const b = await client.send(new StartExecutionCommand(input));
    expect(a.executionArn).toBe(b.executionArn);
    await expect(
      client.send(new StartExecutionCommand({ ...input, input: JSON.stringify({ items: [{ id: "z" }] }) })),
    ).rejects.toMatchObject({
      name: "ExecutionAlreadyExists",
    });
  });

  it("StopExecution aborts a running execution", async () => {
    const client = withBackendToken(new SFNClient(cfg()), TOKEN);
    const arn = sfn.register("slow", {
      StartAt: "S",
      States: { S: { Type: "Task", Resource: "arn:aws:lambda:us-east-1:0:function:Slow", End: true } },
    });
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: arn, input: "{}" }),
    );
    await client.send(new StopExecutionCommand({ executionArn, cause: "test" }));
    const d = await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(d.status).toBe("ABORTED");
  });
});

describe("local Lambda and Scheduler", () => {
  it("sync invoke returns the handler's result; async invoke answers 202 and runs it", async () => {
    const client = withBackendToken(new LambdaClient(cfg()), TOKEN);
    const sync = await client.send(
      new InvokeCommand({ FunctionName: "Record", Payload: JSON.stringify({ n: 1 }) }),
    );
    expect(JSON.parse(Buffer.from(sync.Payload!).toString())).toEqual({ seen: { n: 1 } });
    const async = await client.send(
      new InvokeCommand({
        FunctionName: "Record",
        InvocationType: "Event",
        Payload: JSON.stringify({ n: 2 }),
      }),
    );
    expect(async.StatusCode).toBe(202);
    await expect.poll(() => calls.some((c) => c.input.n === 2)).toBe(true);
  });

  it("a one-time schedule persists and fires its target once it is due, then deletes itself", async () => {
    scheduler.start();
    const client = withBackendToken(new SchedulerClient(cfg()), TOKEN);
    const at = new Date(Date.now() - 1000).toISOString().slice(0, 19);
    await client.send(oneTime("once", at, 3));
    await expect.poll(() => calls.some((c) => c.input.n === 3), { timeout: 5000 }).toBe(true);
    await expect
      .poll(async () =>
        client.send(new GetScheduleCommand({ Name: "once" })).then(
          () => "exists",
          (e) => e.name,
        ),
      )
      .toBe("ResourceNotFoundException");
    scheduler.stop();
  });

  // The scheduler reads its schedules only when the earliest is due (an idle cloud queries nothing 5 times a
  // second): a schedule due in a few seconds, created while it idles, still fires when it is due, not a minute on.
  it("a schedule due in two seconds, created while the scheduler idles, fires when it is due", async () => {
    scheduler.start();
    const client = withBackendToken(new SchedulerClient(cfg()), TOKEN);
    await expect.poll(() => scheduler.tick().then(() => true)).toBe(true);
    const due = Date.now() + 2000;
    const at = new Date(Math.ceil(due / 1000) * 1000).toISOString().slice(0, 19);
    await client.send(oneTime("soon", at, 4));
    await expect
      .poll(() => calls.some((c) => c.input.n === 4), { timeout: 10_000, interval: 100 })
      .toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(`${at}Z`));
    scheduler.stop();
  });
});

describe("local S3", () => {
  it("never shows a partial object: reads during and right after overwrites get one whole version", async () => {
    const { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } = await import("@aws-sdk/client-s3");
    const { s3For } = await import("../harness/export.ts");
    const { facts } = await import("./helpers/cloud.ts");
    const s3 = s3For(facts);
    const Bucket = facts.s3.bucket;
    const Key = `whole/${crypto.randomUUID()}.json`;
    const versions = ["a", "b"].map((c) => c.repeat(2 * 1024 * 1024));
    const put = (i: number) => s3.send(new PutObjectCommand({ Bucket, Key, Body: versions[i % 2] }));
    const read = async () => (await s3.send(new GetObjectCommand({ Bucket, Key }))).Body!.transformToString();
    await put(0);
    expect(await read()).toBe(versions[0]);
    const seen = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? put(i).then(read) : read())),
    );
    for (const body of seen) expect(versions.includes(body), `a body of ${body.length} chars`).toBe(true);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: "whole/" }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([Key]);
  });
});
