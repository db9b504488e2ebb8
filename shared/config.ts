import { buildConfig, type Config, type Env } from "./config/value.ts";

// The configuration: the settings schema (shared/config/settings.ts) parsed into one value, once per process at its
// entry point (loadConfig: a Lambda's bootstrap, the local cloud, a runtime, the CDK app, a CLI script); a bad value
// stops the start naming the variable. The only module that reads process.env (config/source.test.ts says so).

export { SELF_HOSTED_PREFIX } from "./config/constants.ts";
export { envNameProblem, MAX_ENV_NAME_LENGTH, reservedEnvName } from "./config/reserved-env.ts";
export { buildConfig, type Config, ConfigError, type Env } from "./config/value.ts";

/** The value the entry point loaded; until one does (a unit test importing modules), the environment as it is. */
let loaded: Config | undefined;
/** The settings handed to this process privately (an agent runtime's, on its stdin), never in its process.env. */
let sealed: Env = {};
let live: { key: string; value: Config } | undefined;

/**
 * Parses the environment (process.env, or `env`) into this process's configuration and keeps it: what `config`
 * answers from then on. Called once by each entry point, and again by one that sets up its own environment (the
 * local cloud, a runtime opening its sealed environment). Throws a ConfigError naming each bad variable.
 */
export function loadConfig(env: Env = process.env): Config {
  loaded = buildConfig(env, sealed);
  return loaded;
}

/**
 * An agent runtime's settings (table names, endpoints, its credentials): kept here, out of process.env, so graph
 * code, which sees process.env, never finds them; the configuration is loaded with them.
 */
export function sealSettings(settings: Record<string, string>): Config {
  sealed = { ...sealed, ...settings };
  for (const name of Object.keys(settings)) delete process.env[name];
  return loadConfig();
}

/** This process's configuration: the loaded value, else (no entry point loaded one) the environment's now. */
export function currentConfig(): Config {
  if (loaded) return loaded;
  const key = JSON.stringify(process.env);
  if (live?.key !== key) live = { key, value: buildConfig(process.env, sealed) };
  return live.value;
}

/**
 * Tests: answer `value` (made with buildConfig from an explicit environment) until called again; undefined goes
 * back to the environment's own.
 */
export function useConfig(value: Config | undefined): void {
  loaded = value;
}

/** The process environment as a child inherits it (PATH, HOME, proxies, …): for the environment of a child process. */
export function processEnvironment(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
}

/**
 * Sets variables of this process's environment (undefined: removes one), then reloads the configuration if an entry
 * point loaded it; answers a function that puts the earlier values back (and reloads again).
 */
export function setEnvironment(vars: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    if (loaded) loadConfig();
  };
  apply(vars);
  return () => apply(saved);
}

/** The configuration's fields, answered from currentConfig() (the names every module imports). */
export const config: Config = new Proxy({} as Config, {
  get: (_, key) => currentConfig()[key as keyof Config],
  has: (_, key) => key in currentConfig(),
  ownKeys: () => Reflect.ownKeys(currentConfig()),
  getOwnPropertyDescriptor: (_, key) => ({
    configurable: true,
    enumerable: true,
    value: currentConfig()[key as keyof Config],
  }),
});
