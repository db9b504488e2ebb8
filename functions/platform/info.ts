import { serverInfo } from "../../shared/platform/info.ts";
import { defineHandler } from "../handler.ts";

export const handler = defineHandler({ handle: () => serverInfo() });
