import { countCrons, createCron, deleteCron, patchCron, searchCrons } from "../crons/crons.ts";
import { type Caller, deploymentOf } from "./caller.ts";
import { cronAccess, cronCreateAccess, searchScope } from "./checks.ts";

// Crons: each operation looks the deployment up for the caller and asks the deployment's Auth (crons:create /
// read / update / delete / search) before it reads or writes. A cron on a thread needs the caller's update
// access to the thread too: its ticks create runs there, as its creator.

/** A cron whose ticks run on `threadId` (null: each tick on a new thread). */
export async function create(
  caller: Caller,
  deploymentId: string,
  threadId: string | null,
  body: Parameters<typeof createCron>[2],
) {
  const d = await deploymentOf(caller, deploymentId);
  await cronCreateAccess(d, threadId, body);
  return createCron(d, threadId, body);
}

export async function search(
  caller: Caller,
  deploymentId: string,
  body: Omit<Parameters<typeof searchCrons>[1], "auth">,
) {
  const d = await deploymentOf(caller, deploymentId);
  return searchCrons(d, { ...body, auth: await searchScope("crons:search", body) });
}

export async function count(
  caller: Caller,
  deploymentId: string,
  body: Omit<Parameters<typeof countCrons>[1], "auth">,
) {
  const d = await deploymentOf(caller, deploymentId);
  return countCrons(d, { ...body, auth: await searchScope("crons:search", body) });
}

export async function update(
  caller: Caller,
  deploymentId: string,
  cronId: string,
  body: Parameters<typeof patchCron>[2],
) {
  const d = await deploymentOf(caller, deploymentId);
  await cronAccess(d, cronId, "update", body as Record<string, unknown>);
  return patchCron(d, cronId, body);
}

/** A tick in flight then finds it gone and creates nothing. */
export async function remove(caller: Caller, deploymentId: string, cronId: string) {
  const d = await deploymentOf(caller, deploymentId);
  await cronAccess(d, cronId, "delete");
  await deleteCron(d, cronId);
}
