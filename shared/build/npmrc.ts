// A repository's .npmrc is untrusted: npm settings such as `git`, `script-shell` or `node-options` run programs
// of the repository's choosing even under --ignore-scripts. Only registries and their auth tokens (taken from
// the deployment's secrets) survive; every other setting is dropped and named in the build log.

export interface FilteredNpmrc {
  /** The config npm is given (tokens as ${NPM_TOKEN_n}, resolved from `env`). */
  text: string;
  /** The token values, by the names `text` refers to. */
  env: Record<string, string>;
  /** "<file>: <setting> — <why>" per dropped line, values never included. */
  dropped: string[];
}

const DEFAULT_REGISTRY = "https://registry.npmjs.org/";
const SCOPE = /^@[a-z0-9~-][a-z0-9._~-]*$/i;
const AUTH_KEY = /^\/\/[a-z0-9.-]+(?::\d{1,5})?(?:\/[A-Za-z0-9._~%@+-]+)*\/:_authToken$/i;
const SECRET_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const MAX_KEY_SHOWN = 80;

/** The printable form of a setting's name for the log (bounded, control characters replaced). */
const shown = (key: string) =>
  JSON.stringify(key.length > MAX_KEY_SHOWN ? `${key.slice(0, MAX_KEY_SHOWN)}…` : key);

/** An http(s) registry URL without credentials, normalised to end in "/"; undefined otherwise. */
function registryUrl(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  if ((u.protocol !== "https:" && u.protocol !== "http:") || u.username || u.password || u.search || u.hash)
    return undefined;
  return u.href.endsWith("/") ? u.href : `${u.href}/`;
}

/** npm's "nerf dart" of a registry: `//host[:port]/path/`, the prefix its auth settings are keyed by. */
const nerfDart = (url: string) => {
  const u = new URL(url);
  return `//${u.host}${u.pathname}`;
};

/**
 * Filters the .npmrc files npm would read (outermost first: a later file's setting wins). `secrets` are the
 * deployment's secrets: an `_authToken` must be exactly `${NAME}` of one of them.
 */
export function filterNpmrc(
  files: { name: string; text: string }[],
  secrets: Record<string, string>,
): FilteredNpmrc {
  const dropped: string[] = [];
  const registries = new Map<string, string>();
  const tokens = new Map<string, string>();
  for (const file of files) {
    let section = "";
    for (const raw of file.text.replace(/^\uFEFF/, "").split(/\r?\n|\r/)) {
      const line = raw.trim();
      if (!line || line.startsWith(";") || line.startsWith("#")) continue;
      const drop = (what: string, why: string) => dropped.push(`${file.name}: ${what} — ${why}`);
      const header = /^\[(.*)\]$/.exec(line);
      if (header) {
        section = header[1]!;
        drop(`section [${shown(section).slice(1, -1)}]`, "sections are not used");
        continue;
      }
      const eq = line.indexOf("=");
      const key = (eq === -1 ? line : line.slice(0, eq)).trim();
      const value = eq === -1 ? "" : line.slice(eq + 1).trim();
      if (section) {
        drop(shown(key), `in section [${shown(section).slice(1, -1)}]`);
        continue;
      }
      if (
        key === "registry" ||
        (key.endsWith(":registry") && SCOPE.test(key.slice(0, -":registry".length)))
      ) {
        const url = registryUrl(value);
        if (url) registries.set(key, url);
        else drop(shown(key), "not an http(s) URL without credentials");
      } else if (AUTH_KEY.test(key)) {
        const ref = SECRET_REF.exec(value);
        // biome-ignore lint/suspicious/noTemplateCurlyInString: .npmrc syntax, shown to the user
        if (!ref) drop(shown(key), "an auth token must be ${NAME} of a deployment secret");
        else if (!Object.hasOwn(secrets, ref[1]!)) drop(shown(key), `no deployment secret ${ref[1]}`);
        else tokens.set(key.slice(0, -":_authToken".length), secrets[ref[1]!]!);
      } else drop(shown(key), "only registry, @scope:registry and //host/:_authToken are used");
    }
  }
  const lines = [...registries].map(([k, url]) => `${k}=${url}`);
  const darts = new Set([DEFAULT_REGISTRY, ...registries.values()].map(nerfDart));
  const env: Record<string, string> = {};
  for (const [dart, value] of tokens) {
    if (!darts.has(dart)) {
      dropped.push(`.npmrc: ${shown(`${dart}:_authToken`)} — no registry of this config is at ${dart}`);
      continue;
    }
    const name = `NPM_TOKEN_${Object.keys(env).length}`;
    env[name] = value;
    lines.push(`${dart}:_authToken=\${${name}}`);
  }
  return { text: lines.length ? `${lines.join("\n")}\n` : "", env, dropped };
}
