import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cleanUpExpiredRuns } from "./cleanup.ts";
import { expiredAttachment, expiredRun, TTL_IDENTITY } from "./ttl-stream.ts";

// Stream records are input the handler does not control: any shape is parsed without throwing, and only a TTL
// REMOVE of a run item (SK "run", PK "<tenant>#<run id>") is acted on.
const id = fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/);
const attr = fc.oneof(
  fc.record({
    S: fc.oneof(
      fc.string(),
      fc.constant("run"),
      fc.constant("patch"),
      fc.constant("attachment#"),
      fc.string().map((n) => `attachment#${n}`),
    ),
  }),
  fc.record({ N: fc.string() }),
  fc.anything(),
);
const streamRecord = fc.record(
  {
    eventName: fc.oneof(fc.constantFrom("INSERT", "MODIFY", "REMOVE"), fc.anything()),
    userIdentity: fc.oneof(
      fc.constant({ ...TTL_IDENTITY }),
      fc.record({ type: fc.anything(), principalId: fc.anything() }, { requiredKeys: [] }),
      fc.anything(),
    ),
    dynamodb: fc.oneof(
      fc.record(
        {
          Keys: fc.oneof(
            fc.record({ PK: attr, SK: attr }, { requiredKeys: [] }),
            fc.record({ PK: id.chain((t) => id.map((r) => ({ S: `${t}#${r}` }))), SK: attr }),
            fc.anything(),
          ),
          SequenceNumber: fc.oneof(fc.string(), fc.anything()),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    ),
  },
  { requiredKeys: [] },
);
const anyRecord = fc.oneof(streamRecord, fc.anything());

/** What a record acts on, decided independently of the parser: the run of a TTL REMOVE of an item `sk` names. */
function removed(r: unknown, sk: (s: string) => boolean): { tenant_id: string; run_id: string } | undefined {
  const x = r as any;
  if (x?.eventName !== "REMOVE") return undefined;
  if (x.userIdentity?.type !== "Service" || x.userIdentity?.principalId !== "dynamodb.amazonaws.com") return;
  const SK = x.dynamodb?.Keys?.SK?.S;
  if (typeof SK !== "string" || !sk(SK) || typeof x.dynamodb?.Keys?.PK?.S !== "string") return undefined;
  const m = /^([^#]+)#([^#]+)$/.exec(x.dynamodb.Keys.PK.S);
  return m ? { tenant_id: m[1], run_id: m[2] } : undefined;
}
const oracle = (r: unknown) => removed(r, (sk) => sk === "run");
function attachmentOracle(r: unknown) {
  const run = removed(r, (sk) => /^attachment#./s.test(sk));
  return run && { ...run, name: (r as any).dynamodb.Keys.SK.S.slice("attachment#".length) };
}

describe("TTL stream records (fuzz)", () => {
  it("never throws, and acts only on TTL REMOVEs of run items and attachment records", () => {
    fc.assert(
      fc.property(anyRecord, (r) => {
        expect(expiredRun(r)).toEqual(oracle(r));
        expect(expiredAttachment(r)).toEqual(attachmentOracle(r));
      }),
      { numRuns: 2000 },
    );
  });

  it("a batch with no expired run touches nothing and reports no failure, whatever else it holds", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({
            Records: fc.array(
              anyRecord.filter((r) => !oracle(r) && !attachmentOracle(r)),
              { maxLength: 20 },
            ),
          }),
          fc.anything(),
        ),
        async (event) => {
          // No S3 client is reachable here: a call would fail the batch, so a clean answer means none was made.
          expect(await cleanUpExpiredRuns(event)).toEqual({ batchItemFailures: [], runs: 0, attachments: 0 });
        },
      ),
      { numRuns: 300 },
    );
  });
});
