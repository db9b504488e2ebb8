import { outboundRequest } from "../containment/request.ts";
import { BadGateway, UpstreamError } from "../errors.ts";

// The GitHub REST API as an integration uses it: the repositories an installation (or token) can read.
export interface GitHubRepository {
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
}

const PER_PAGE = 100;
/** At most this many pages (10,000 repositories) per listing: a bound on one request's work. */
const MAX_PAGES = 100;

const text = (v: unknown, max = 1024): string | undefined =>
  typeof v === "string" && v.length > 0 && v.length <= max ? v : undefined;

/** One repository of GitHub's answer, or undefined when an entry lacks what the listing shows. Never throws. */
export function toRepository(raw: unknown): GitHubRepository | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const r = raw as Record<string, unknown>;
  const owner =
    r.owner && typeof r.owner === "object" ? (r.owner as Record<string, unknown>).login : undefined;
  const id = r.id;
  const url = text(r.html_url, 2048) ?? text(r.clone_url, 2048);
  const name = text(r.name);
  const login = text(owner);
  if (typeof id !== "number" || !Number.isSafeInteger(id) || !name || !login || !url) return undefined;
  return { id, name, owner: login, url, default_branch: text(r.default_branch) ?? "main" };
}

/**
 * A page of `GET /installation/repositories`: `{total_count, repositories: [...]}`. Entries that are not
 * repositories are skipped; an answer that is not this shape at all is undefined. Never throws.
 */
export function parseRepositoriesPage(
  body: string,
): { total: number; count: number; repositories: GitHubRepository[] } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!json || typeof json !== "object") return undefined;
  const page = json as Record<string, unknown>;
  if (!Array.isArray(page.repositories)) return undefined;
  const repositories = page.repositories.map(toRepository).filter((r): r is GitHubRepository => !!r);
  const total =
    typeof page.total_count === "number" && Number.isFinite(page.total_count)
      ? page.total_count
      : page.repositories.length;
  return { total, count: page.repositories.length, repositories };
}

/**
 * The commit a ref (`refs/heads/x`, `refs/tags/x`) of owner/name names now, from GitHub's API; undefined when
 * no such ref exists. Upstream problems are a 502.
 */
export async function refCommit(
  apiUrl: string,
  token: string | undefined,
  owner: string,
  name: string,
  ref: string,
): Promise<string | undefined> {
  const short = ref.replace(/^refs\/(heads|tags)\//, "");
  const path = [owner, name].map(encodeURIComponent).join("/");
  const url = `${apiUrl.replace(/\/+$/, "")}/repos/${path}/commits/${short.split("/").map(encodeURIComponent).join("/")}`;
  let res: Awaited<ReturnType<typeof outboundRequest>>;
  try {
    res = await outboundRequest(url, {
      method: "GET",
      headers: {
        // The commit's sha as plain text.
        accept: "application/vnd.github.sha",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        "x-github-api-version": "2022-11-28",
      },
    });
  } catch (err) {
    if (err instanceof UpstreamError)
      throw new BadGateway(`Could not reach the integration's API: ${err.message}`);
    throw err;
  }
  if (res.status === 404 || res.status === 422) return undefined;
  if (res.status !== 200) throw new BadGateway(`The integration's API answered HTTP ${res.status}`);
  const sha = res.body.trim().toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(sha))
    throw new BadGateway("The integration's API answered with something other than a commit");
  return sha;
}

/** Every repository the token can read, through GitHub's pagination. Upstream problems are a 502. */
export async function listInstallationRepositories(
  apiUrl: string,
  token: string,
): Promise<GitHubRepository[]> {
  const out: GitHubRepository[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const url = `${apiUrl.replace(/\/+$/, "")}/installation/repositories?per_page=${PER_PAGE}&page=${page}`;
    let res: Awaited<ReturnType<typeof outboundRequest>>;
    try {
      res = await outboundRequest(url, {
        method: "GET",
        headers: {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${token}`,
          "x-github-api-version": "2022-11-28",
        },
      });
    } catch (err) {
      if (err instanceof UpstreamError)
        throw new BadGateway(`Could not reach the integration's API: ${err.message}`);
      throw err;
    }
    if (res.status === 401 || res.status === 403)
      throw new BadGateway(`The integration's API refused its access token (HTTP ${res.status})`);
    if (res.status !== 200) throw new BadGateway(`The integration's API answered HTTP ${res.status}`);
    const parsed = parseRepositoriesPage(res.body);
    if (!parsed)
      throw new BadGateway("The integration's API answered with something other than a repository list");
    out.push(...parsed.repositories);
    // Counted on the raw page: skipped entries must not make the loop stop early.
    if (parsed.count === 0 || page * PER_PAGE >= parsed.total) break;
  }
  return out;
}
