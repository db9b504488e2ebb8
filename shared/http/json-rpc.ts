// JSON-RPC 2.0 as the agent server's MCP and A2A endpoints speak it: the standard error codes, the two kinds
// of answer, and the error a method throws to be answered with a code.
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

export type RpcId = string | number | null;

export interface RpcErrorAnswer {
  jsonrpc: "2.0";
  id: RpcId;
  error: { code: number; message: string; data?: unknown };
}

export const rpcError = (id: RpcId, code: number, message: string, data?: unknown): RpcErrorAnswer => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

export const rpcResult = (id: RpcId, result: unknown) => ({ jsonrpc: "2.0" as const, id, result });

/** Thrown by a method: answered as the JSON-RPC error `code` with its message (and `data`). */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
