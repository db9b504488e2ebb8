// Types of infra/console/build.mjs (a plain script run by launch.mjs, imported by the CDK app and its tests).
export const CONSOLE_SRC: string;
export const CONSOLE_DIST: string;
/** Builds console/dist unless it is up to date; returns the dist folder. */
export function buildConsole(options?: { force?: boolean }): Promise<string>;
