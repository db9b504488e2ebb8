import { afterEach, describe, expect, it } from "vitest";
import { agentDeploymentOf, agentPathAtOwnOrigin, deploymentOfHost } from "./origin.ts";

describe("a deployment's own origin, read from Host", () => {
  afterEach(() => {
    delete process.env.AGENT_ORIGIN_DOMAIN;
  });

  it("names the deployment of <id>.localhost, with or without a port, in any case", () => {
    expect(deploymentOfHost("abc-1.localhost:8080")).toBe("abc-1");
    expect(deploymentOfHost("ABC-1.LocalHost")).toBe("abc-1");
  });

  it("names the deployment of <id>.<AGENT_ORIGIN_DOMAIN> only when that domain is set", () => {
    expect(deploymentOfHost("abc.agents.example.com")).toBeUndefined();
    process.env.AGENT_ORIGIN_DOMAIN = ".Agents.Example.com.";
    expect(deploymentOfHost("abc.agents.example.com:443")).toBe("abc");
  });

  it("names none for the platform's own hosts, the bare domain, nested labels or look-alike suffixes", () => {
    process.env.AGENT_ORIGIN_DOMAIN = "agents.example.com";
    for (const host of [
      undefined,
      "",
      "localhost:8080",
      "127.0.0.1:8080",
      "console.example.com",
      "agents.example.com",
      "a.b.agents.example.com",
      "abc.agents.example.com.evil.test",
      "abcagents.example.com",
      "-abc.localhost",
      `${"a".repeat(64)}.localhost`,
    ])
      expect(deploymentOfHost(host), String(host)).toBeUndefined();
  });

  it("puts an own-origin path under the deployment's /agents prefix", () => {
    expect(agentPathAtOwnOrigin("abc", "/threads/t/runs")).toBe("/agents/abc/threads/t/runs");
    expect(agentPathAtOwnOrigin("abc", "/")).toBe("/agents/abc/");
  });
});

describe("the deployment of an agent-server path", () => {
  it("finds the deployment an agent-server path names", () => {
    expect(agentDeploymentOf("/agents/d-1/threads")).toBe("d-1");
    expect(agentDeploymentOf("/agents/d%201")).toBe("d 1");
    expect(agentDeploymentOf("/v2/deployments")).toBeUndefined();
    expect(agentDeploymentOf("/agentsx/d/threads")).toBeUndefined();
  });
});
