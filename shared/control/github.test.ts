import { describe, expect, it } from "vitest";
import { parseRepositoriesPage, toRepository } from "./github.ts";

describe("parseRepositoriesPage", () => {
  it("maps GitHub's installation repositories to the listing's fields", () => {
    const page = parseRepositoriesPage(
      JSON.stringify({
        total_count: 2,
        repositories: [
          {
            id: 1,
            name: "a",
            owner: { login: "o" },
            html_url: "https://github.com/o/a",
            default_branch: "dev",
          },
          { id: 2, name: "b", owner: { login: "o" }, clone_url: "https://github.com/o/b.git" },
        ],
      }),
    );
    expect(page).toEqual({
      total: 2,
      count: 2,
      repositories: [
        { id: 1, name: "a", owner: "o", url: "https://github.com/o/a", default_branch: "dev" },
        { id: 2, name: "b", owner: "o", url: "https://github.com/o/b.git", default_branch: "main" },
      ],
    });
  });

  it("skips entries that are not repositories, and refuses answers that are not a list", () => {
    const page = parseRepositoriesPage(
      JSON.stringify({ repositories: [null, { id: "1" }, { id: 3, name: "x" }] }),
    );
    expect(page).toEqual({ total: 3, count: 3, repositories: [] });
    for (const bad of ["", "[]", "null", '{"repositories":{}}', "<html>"])
      expect(parseRepositoriesPage(bad)).toBeUndefined();
  });

  it("needs a safe integer id", () => {
    const repo = { name: "a", owner: { login: "o" }, html_url: "u" };
    expect(toRepository({ ...repo, id: 1.5 })).toBeUndefined();
    expect(toRepository({ ...repo, id: 2 ** 60 })).toBeUndefined();
    expect(toRepository({ ...repo, id: 7 })?.id).toBe(7);
  });
});
