import { describe, expect, it } from "vitest";
import { deployments, integrations, revisions } from "./control.ts";
import { bulkExports, destinations } from "./export.ts";
import { oauthTokens } from "./oauth.ts";
import { projects } from "./projects.ts";
import { isFeedbackOf, isRunOf, traceRunKeys } from "./runs.ts";

// Issue 25 (break-out 5): an index's keys are plain attributes, and a runtime may write any attribute of the
// items of its own partition. A platform read through an index trusts an item only by its primary key: the one
// its record kind builds of its own fields.
const forgedPk = "AGENT#t-evil#d-evil#THREAD";

describe("records read through GSI1: the primary key decides", () => {
  const deployment = { id: "d-1", tenant_id: "t-1" };
  const cases = [
    ["deployment", deployments, { PK: "T#t-1#DEPLOYMENT", SK: "d-1", ...deployment }],
    ["integration", integrations, { PK: "T#t-1#INTEGRATION", SK: "i-1", id: "i-1", tenant_id: "t-1" }],
    [
      "revision",
      revisions,
      {
        PK: "T#t-1#DEPLOYMENT#d-1",
        SK: "REV#r-1",
        id: "r-1",
        tenant_id: "t-1",
        deployment_id: "d-1",
        status: "QUEUED",
      },
    ],
    ["project", projects, { PK: "T#t-1#SESSION", SK: "p-1", id: "p-1", tenant_id: "t-1", created_at: "x" }],
    [
      "OAuth token",
      oauthTokens,
      {
        PK: "T#t-1#OAUTHTOKEN",
        SK: "prov#u",
        id: "o-1",
        tenant_id: "t-1",
        provider_id: "prov",
        user_id: "u",
      },
    ],
    ["destination", destinations, { PK: "T#t-1#BULKEXPORTDEST", SK: "x-1", id: "x-1", tenant_id: "t-1" }],
    ["export", bulkExports, { PK: "T#t-1#BULKEXPORT", SK: "e-1", id: "e-1", tenant_id: "t-1" }],
  ] as const;

  for (const [name, repo, item] of cases) {
    it(`a ${name} whose keys are its own is one; the same fields under another key are not`, () => {
      expect(repo.owns(item)).toBe(true);
      // An agent item of another deployment carrying the record's fields (and its index keys).
      expect(repo.owns({ ...item, PK: forgedPk })).toBe(false);
      expect(repo.owns({ ...item, SK: `${item.SK}x` })).toBe(false);
      // Fields that name another record than the key does.
      expect(repo.owns({ ...item, tenant_id: "t-2" })).toBe(false);
      expect(repo.owns({ ...item, id: "other" })).toBe(name === "OAuth token"); // its key is provider and user
      expect(repo.owns({ SK: item.SK })).toBe(false);
    });
  }

  it("the deployment-by-id index's forged item: the victim's fields under the attacker's agent key", () => {
    const forged = {
      PK: "AGENT#t-evil#d-evil#THREAD",
      SK: "x",
      GSI1PK: "DEPLOYMENT#d-1",
      GSI1SK: "DEPLOYMENT",
      id: "d-1",
      tenant_id: "t-1",
      cors: { allow_origins: ["https://evil.example"] },
    };
    expect(deployments.owns(forged)).toBe(false);
  });
});

describe("items read through the runs table's indexes", () => {
  it("a run is one of the tenant's when its key is its id's", () => {
    const run = { ...traceRunKeys.run("t-1", "r-1"), id: "r-1" };
    expect(isRunOf("t-1")(run)).toBe(true);
    expect(isRunOf("t-2")(run)).toBe(false);
    expect(isRunOf("t-1")({ ...run, id: "r-2" })).toBe(false);
    expect(isRunOf("t-1")({ ...traceRunKeys.patch("t-1", "r-1"), id: "r-1" })).toBe(false);
  });

  it("a feedback is one of the tenant's when its key is its run's and its id's", () => {
    const fb = { ...traceRunKeys.feedback("t-1", "r-1", "f-1"), id: "f-1", run_id: "r-1" };
    expect(isFeedbackOf("t-1")(fb)).toBe(true);
    expect(isFeedbackOf("t-2")(fb)).toBe(false);
    expect(isFeedbackOf("t-1")({ ...fb, run_id: "r-2" })).toBe(false);
    expect(isFeedbackOf("t-1")({ ...fb, id: "f-2" })).toBe(false);
  });
});
