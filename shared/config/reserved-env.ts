// The environment names a deployment may not set (its secrets, langgraph.json env): the platform's own and loaders'.

/**
 * The environment names a deployment's secrets and langgraph.json env may not use. `platform`: the names the
 * platform reads or sets for itself (they would change how it, or the deployment's runtime, behaves, or reach a
 * credential). `loader`: variables that make a program load or run other code or trust other certificates —
 * Node, libuv and V8, OpenSSL, the dynamic loader and glibc (its "unsecure" list, dropped for setuid programs),
 * shells, other interpreters, git, npm and esbuild (the build runs them), proxies (the platform routes egress).
 * Matched case-insensitively; a prefix is a start of the name; NODE_ENV stays the graph's own.
 */
const RESERVED_ENV = {
  platform: {
    prefixes: [
      "PLATFORM_",
      "TABLE_",
      "AGENT_",
      "EXPORT_",
      "KMS_",
      "AWS_",
      "LAMBDA_",
      "STATE_MACHINE_",
      "TASK_",
      "SCHEDULER_",
      "LOCAL_",
      "BUILD_",
      "AUTH_",
      "DYNAMODB_",
      "S3_",
    ],
    names: [
      "PATH",
      "HOME",
      "TMPDIR",
      "PORT",
      "HOST",
      "DATA_DIR",
      "EGRESS_ALLOW",
      "MAX_BODY_BYTES",
      "LOG_LEVEL",
      "PUBLIC_BASE_URL",
      "ARTIFACT_BUCKET",
      "RUN_SHARDS",
      "RUN_FIELD_INLINE_BYTES",
      "TENANT_ID",
      "DEPLOYMENT_ID",
      "REVISION_ID",
      "_HANDLER",
    ],
  },
  loader: {
    prefixes: [
      "NODE_",
      "UV_",
      "V8_",
      "OPENSSL_",
      "LD_",
      "DYLD_",
      "MALLOC_",
      "BASH_",
      "PYTHON",
      "PERL5",
      "GIT_",
      "XDG_",
      "NPM_CONFIG_",
      "ESBUILD_",
      "GLOBAL_AGENT_",
    ],
    names: [
      "GCONV_PATH",
      "GETCONF_DIR",
      "GLIBC_TUNABLES",
      "HOSTALIASES",
      "LOCALDOMAIN",
      "LOCPATH",
      "NIS_PATH",
      "NLSPATH",
      "RESOLV_HOST_CONF",
      "RES_OPTIONS",
      "TZDIR",
      "SSL_CERT_FILE",
      "SSL_CERT_DIR",
      "SSLKEYLOGFILE",
      "ENV",
      "SHELL",
      "SHELLOPTS",
      "BASHOPTS",
      "PS4",
      "IFS",
      "CDPATH",
      "GLOBIGNORE",
      "PROMPT_COMMAND",
      "PAGER",
      "EDITOR",
      "VISUAL",
      "LESSOPEN",
      "LESSCLOSE",
      "PERLLIB",
      "RUBYOPT",
      "RUBYLIB",
      "JAVA_TOOL_OPTIONS",
      "_JAVA_OPTIONS",
      "JDK_JAVA_OPTIONS",
      "CLASSPATH",
      "HTTP_PROXY",
      "HTTPS_PROXY",
      "FTP_PROXY",
      "NO_PROXY",
      "ALL_PROXY",
    ],
  },
  allowed: ["NODE_ENV"],
} as const;

/** An environment variable name a deployment may write: letters, digits and `_`, not starting with a digit. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest such name. */
export const MAX_ENV_NAME_LENGTH = 128;

/** Why an environment name is the platform's own or a loader's, or undefined when a deployment may set it. */
export function reservedEnvName(name: string): string | undefined {
  const upper = name.toUpperCase();
  if ((RESERVED_ENV.allowed as readonly string[]).includes(upper)) return undefined;
  const { platform, loader } = RESERVED_ENV;
  if ((platform.names as readonly string[]).includes(upper))
    return `${name} is reserved: the platform sets it`;
  const prefix = platform.prefixes.find((p) => upper.startsWith(p));
  if (prefix) return `${name} is reserved: names starting with ${prefix} are the platform's settings`;
  if ((loader.names as readonly string[]).includes(upper))
    return `${name} is reserved: it changes what code or certificates a program loads`;
  const loaderPrefix = loader.prefixes.find((p) => upper.startsWith(p));
  return loaderPrefix
    ? `${name} is reserved: names starting with ${loaderPrefix} change what code or certificates a program loads`
    : undefined;
}

/** Why `name` may not be a deployment's environment variable (secret or langgraph.json env), or undefined. */
export function envNameProblem(name: string): string | undefined {
  if (name.length > MAX_ENV_NAME_LENGTH)
    return `${JSON.stringify(name.slice(0, 40))}… is longer than ${MAX_ENV_NAME_LENGTH} characters`;
  if (!ENV_NAME.test(name))
    return `${JSON.stringify(name)} is not a variable name (letters, digits and _, not starting with a digit)`;
  return reservedEnvName(name);
}
