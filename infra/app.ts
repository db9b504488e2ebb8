import { App, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { loadConfig } from "../shared/config.ts";
import { buildConsole } from "./console/build.mjs";
import { describeCapacity } from "./stacks/concurrency.ts";
import { buildApp } from "./stacks/index.ts";

// Entry point of `cdk synth/deploy` (see cdk.json). cdk-nag 3 is a validation plugin: any unacknowledged
// AwsSolutions finding fails synthesis, so problems surface before a deploy.
// The console stack deploys console/dist: build it first (a no-op when its sources have not changed).
// The app's settings, parsed once: a bad value stops the synth, naming the variable.
loadConfig();
await buildConsole();
const app = new App();
const { capacity } = buildApp(app);
// The deployment ceiling the account's quota allows: stderr, so `cdk synth`'s template output stays clean.
console.error(describeCapacity(capacity));
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
