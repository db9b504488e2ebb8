import { config } from "../config.ts";

/**
 * The hosted API's version whose resources this platform serves. The langsmith SDK (0.9 on) compares /info's
 * `version` with each resource's minimum and warns below it: the runs, traces and threads resources need 0.16.0.
 * The platform's own release is config.version.
 */
export const API_COMPAT_VERSION = "0.16.0";

// What the langsmith SDKs read from GET /info to decide how to send runs.
export function serverInfo() {
  return {
    version: API_COMPAT_VERSION,
    license_expiration_time: null,
    batch_ingest_config: {
      use_multipart_endpoint: true,
      size_limit: 100,
      size_limit_bytes: config.ingestBatchBytes,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
    },
    instance_flags: {
      gzip_body_enabled: true,
      zstd_compression_enabled: false,
      dataset_examples_multipart_enabled: false,
      experiment_search_enabled: false,
      search_enabled: true,
      workspace_scope_org_invites_enabled: false,
      org_creation_disabled: true,
    },
  };
}
