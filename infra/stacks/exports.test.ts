import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { TABLES } from "../../shared/tables.ts";
import { synthesizedApp } from "./synthesized-app.ts";

// Issue 26: an export in use cannot change, so a strong cross-stack export blocks any update of its producer
// that would change the value. Only values fixed for the life of a retained resource may be exported; whatever
// may change (a stream, a role, an API, a function or layer version) goes through an SSM parameter.

const RETAINED_TABLE =
  "a retained table's generated name and ARN change only if a key-schema change replaces it, leaving its data in the orphaned old table: the export blocking that is wanted";
const KMS_KEY =
  "a KMS key is never replaced: CloudFormation fails a change of its immutable properties (KeySpec, KeyUsage, Origin, MultiRegion)";
const RETAINED_BUCKET =
  "a retained bucket's generated name is replaced only by a rename, which would strand its objects: the export blocking that is wanted";

/** Every export the app may have, with why its value cannot change while it is imported. */
const ALLOWED: Record<string, string> = {
  "AgentPlatformData:KeyArn": KMS_KEY,
  "AgentPlatformData:SecretsKeyArn": KMS_KEY,
  ...Object.fromEntries(
    Object.values(TABLES).flatMap((t) => [
      [`AgentPlatformData:Table-${t.id}-Arn`, RETAINED_TABLE],
      [`AgentPlatformData:Table-${t.id}-Name`, RETAINED_TABLE],
    ]),
  ),
  "AgentPlatformData:BucketArn": RETAINED_BUCKET,
  "AgentPlatformData:BucketName": RETAINED_BUCKET,
  "AgentPlatformData:ArtifactBucketArn": RETAINED_BUCKET,
  "AgentPlatformData:ArtifactBucketName": RETAINED_BUCKET,
};

type Json = any;
let templates: Map<string, Json>;

beforeAll(async () => {
  const { dir } = await synthesizedApp();
  templates = new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith(".template.json"))
      .map((f) => [f, JSON.parse(readFileSync(join(dir, f), "utf8"))]),
  );
}, 600_000);

/** Every Fn::ImportValue's argument anywhere in `node`. */
function imports(node: Json, out: Json[] = []): Json[] {
  if (Array.isArray(node)) for (const n of node) imports(n, out);
  else if (node && typeof node === "object")
    for (const [k, v] of Object.entries(node)) k === "Fn::ImportValue" ? out.push(v) : imports(v, out);
  return out;
}

describe("cross-stack exports", () => {
  it("are exactly the allowed ones, each of a value fixed for its resource's life", () => {
    const exported: string[] = [];
    for (const t of templates.values())
      for (const o of Object.values<Json>(t.Outputs ?? {}))
        if (o.Export)
          exported.push(typeof o.Export.Name === "string" ? o.Export.Name : JSON.stringify(o.Export.Name));
    const unexplained = exported.filter((name) => !Object.hasOwn(ALLOWED, name));
    expect(unexplained, "exports with no reason in ALLOWED: pass the value by an SSM parameter").toEqual([]);
    expect(exported.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it("every import names an allowed export (none of CDK's generated ones)", () => {
    const names = new Set<string>();
    for (const t of templates.values()) for (const v of imports(t)) names.add(JSON.stringify(v));
    expect([...names].map((n) => JSON.parse(n)).filter((n) => !Object.hasOwn(ALLOWED, n))).toEqual([]);
    expect(names.size).toBeGreaterThan(0);
  });
});
