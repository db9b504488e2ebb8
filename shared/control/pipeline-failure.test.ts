import { describe, expect, it } from "vitest";
import { failureDetail } from "./pipeline.ts";

describe("a failed revision's error", () => {
  it("keeps a failed build's id, status and phase, not its environment (the job's presigned URLs)", () => {
    const cause = JSON.stringify({
      Build: {
        Id: "agent-platform-revision-build:b1",
        BuildStatus: "FAILED",
        CurrentPhase: "COMPLETED",
        Environment: {
          EnvironmentVariables: [{ Name: "BUILD_JOB_URL", Value: "http://s3/job?X-Amz-Signature=secret" }],
        },
      },
    });
    const detail = failureDetail("States.TaskFailed", cause);
    expect(detail).toBe(
      "States.TaskFailed: build agent-platform-revision-build:b1 ended FAILED (phase COMPLETED)",
    );
    expect(detail).not.toContain("X-Amz-Signature");
  });

  it("keeps any other cause as it is, at most 2000 characters", () => {
    expect(failureDetail("CodeBuild.AWSCodeBuildException", "User: x is not authorized")).toBe(
      "CodeBuild.AWSCodeBuildException: User: x is not authorized",
    );
    expect(failureDetail("E", "x".repeat(3000))).toHaveLength(2000);
    expect(failureDetail(undefined, undefined)).toBe("");
  });
});
