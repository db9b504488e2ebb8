import type { z } from "zod";
import {
  deleteStoreItem,
  getStoreItem,
  listStoreNamespaces,
  putStoreItem,
  searchStoreItems,
  type storeDelete,
  type storeGet,
  type storeNamespaces,
  type storePut,
  type storeSearch,
} from "../store/api.ts";
import type { Caller, OpsContext } from "./caller.ts";
import { storeAccess } from "./checks.ts";

// The store: each operation looks the deployment up for the caller and asks the deployment's Auth (store:put /
// get / search / list_namespaces / delete), which may rewrite the namespace (a user's own part of the store),
// before it reads or writes.

export async function put(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: z.infer<typeof storePut>,
) {
  const d = await s.deployment(caller, deploymentId);
  const allowed = await storeAccess("put", body);
  await putStoreItem(d.store(), allowed);
}

export async function get(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  query: z.infer<typeof storeGet>,
) {
  const d = await s.deployment(caller, deploymentId);
  const allowed = await storeAccess("get", query);
  return getStoreItem(d.store(), allowed);
}

export async function remove(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: z.infer<typeof storeDelete>,
) {
  const d = await s.deployment(caller, deploymentId);
  const allowed = await storeAccess("delete", body);
  await deleteStoreItem(d.store(), allowed);
}

export async function search(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: z.infer<typeof storeSearch>,
) {
  const d = await s.deployment(caller, deploymentId);
  const { namespace_prefix, ...rest } = body;
  const { namespace, ...seen } = await storeAccess("search", { namespace: namespace_prefix, ...rest });
  return searchStoreItems(d.store(), { ...seen, namespace_prefix: namespace });
}

export async function namespaces(
  s: OpsContext,
  caller: Caller,
  deploymentId: string,
  body: z.infer<typeof storeNamespaces>,
) {
  const d = await s.deployment(caller, deploymentId);
  const { prefix, ...rest } = body;
  const { namespace, ...seen } = await storeAccess("list_namespaces", { namespace: prefix, ...rest });
  return listStoreNamespaces(d.store(), { ...seen, prefix: namespace });
}
