import { defineHandler } from "../../shared/http/handler.ts";
import { serverInfo } from "../../shared/platform/info.ts";

export const handler = defineHandler({ handle: () => serverInfo() });
