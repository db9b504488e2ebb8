// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} is .npmrc syntax, not a template
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { npmrcSecrets } from "./npm-env.ts";

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "npm-env-test-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function repoOf(files: Record<string, string>): Promise<string> {
  const dir = path.join(tmp, `repo-${++n}`);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

const SECRETS = { A_TOKEN: "a-value", B_TOKEN: "b-value", OPENAI_API_KEY: "sk-other" };

describe("the secrets handed to a build's untrusted step", () => {
  it("only those an .npmrc of the repository names; node_modules and .git aside", async () => {
    const repo = await repoOf({
      ".npmrc": "//registry.npmjs.org/:_authToken=${A_TOKEN}\n",
      "agent/.npmrc": "//npm.example/:_authToken=${B_TOKEN}\n//x/:_authToken=${MISSING}\n",
      "node_modules/dep/.npmrc": "k=${OPENAI_API_KEY}\n",
      ".git/.npmrc": "k=${OPENAI_API_KEY}\n",
    });
    expect(await npmrcSecrets(repo, async () => SECRETS)).toEqual({ A_TOKEN: "a-value", B_TOKEN: "b-value" });
  });

  it("no .npmrc naming one: the secrets are not even unsealed", async () => {
    const repo = await repoOf({ ".npmrc": "registry=https://r.example/\n", "package.json": "{}" });
    let unsealed = false;
    const got = await npmrcSecrets(repo, async () => {
      unsealed = true;
      return SECRETS;
    });
    expect(got).toEqual({});
    expect(unsealed).toBe(false);
  });
});
