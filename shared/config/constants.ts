/** The control-plane routes also answer under this prefix (the self-hosted API host's paths). */
export const SELF_HOSTED_PREFIX = "/api-host";
