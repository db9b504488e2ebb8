// The local cloud's AWS policy proxy: what the runtime sandbox wires in (handler.ts says how it works).
export { localKmsKeys, localRuntimeScope, mintRuntimeCredentials } from "./credentials.ts";
export {
  bufferedBodyBytes,
  createPolicyProxy,
  type PolicyProxyOptions,
  type ProxyPrincipal,
} from "./handler.ts";
export { LOCAL_ACCOUNT } from "./local-tables.ts";
