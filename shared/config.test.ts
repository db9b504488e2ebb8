import { describe, expect, it } from "vitest";
import { envNameProblem, MAX_ENV_NAME_LENGTH, reservedEnvName } from "./config.ts";

// A deployment's secret and langgraph.json env names: an allow-list pattern, a length cap, and a reserved list
// of the platform's settings and of variables that make a program load other code.
describe("a deployment's environment names", () => {
  it("ordinary names are accepted", () => {
    for (const n of [
      "OPENAI_API_KEY",
      "openai_api_key",
      "_x",
      "NODE_ENV",
      "MY_PROXY_URL",
      "TZ",
      "LANG",
      "A1",
    ])
      expect(envNameProblem(n), n).toBeUndefined();
  });

  it("only letters, digits and _, not starting with a digit, at most MAX_ENV_NAME_LENGTH", () => {
    for (const n of ["", "1A", "A-B", "A.B", "A B", "A=B", "BASH_FUNC_x%%", "Ä", "A\n"])
      expect(envNameProblem(n), n).toMatch(/is not a variable name/);
    expect(envNameProblem("A".repeat(MAX_ENV_NAME_LENGTH))).toBeUndefined();
    expect(envNameProblem("A".repeat(MAX_ENV_NAME_LENGTH + 1))).toMatch(/longer than 128 characters/);
  });

  it.each([
    "OPENSSL_CONF",
    "OPENSSL_MODULES",
    "openssl_engines",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "LD_PRELOAD",
    "ld_library_path",
    "DYLD_INSERT_LIBRARIES",
    "GCONV_PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "PS4",
    "IFS",
    "LOCPATH",
    "NLSPATH",
    "MALLOC_CHECK_",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "RES_OPTIONS",
    "LOCALDOMAIN",
    "TZDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "UV_THREADPOOL_SIZE",
    "V8_FLAGS",
    "JAVA_TOOL_OPTIONS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "RUBYOPT",
    "http_proxy",
    "HTTP_PROXY",
    "Https_Proxy",
    "no_proxy",
    "ALL_PROXY",
    "GIT_SSH_COMMAND",
    "XDG_CONFIG_HOME",
    "npm_config_git",
    "ESBUILD_BINARY_PATH",
  ])("refuses the loader variable %s, saying why", (name) => {
    expect(reservedEnvName(name)).toMatch(
      new RegExp(`^${name} is reserved: .*(code or certificates|platform)`),
    );
    expect(envNameProblem(name)).toBe(reservedEnvName(name));
  });

  it("refuses the platform's own settings, saying so", () => {
    expect(reservedEnvName("AWS_SECRET_ACCESS_KEY")).toMatch(/names starting with AWS_ are the platform's/);
    expect(reservedEnvName("data_dir")).toBe("data_dir is reserved: the platform sets it");
  });
});
