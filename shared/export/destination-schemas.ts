import { z } from "zod";
import { config } from "../config.ts";
import { endpointUrlProblem } from "../containment/ssrf.ts";
import { prefixProblem } from "./destination-guard.ts";

// The wire shapes of an export destination: the create body (validated here, before any network check) and
// the destination as the API answers with it (credentials never shown, only their field names).

/** S3 general purpose bucket naming rules (3..63, lowercase, no IP form, no reserved prefixes/suffixes). */
export function isValidBucketName(name: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !/\.\.|\.-|-\./.test(name) &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name) &&
    !/^(xn--|sthree-|amzn-s3-demo-)/.test(name) &&
    !/(-s3alias|--ol-s3|--x-s3|--table-s3|\.mrap)$/.test(name)
  );
}

/** "" is sent by some clients for "not set". */
const blankAsNull = (v: unknown) => (v === "" ? null : v);

export const DestinationCreate = z.looseObject({
  destination_type: z
    .string()
    .refine((t) => t === "s3" || t === "objstore", "destination_type must be s3")
    .default("s3")
    .transform((): "s3" => "s3"),
  display_name: z.string().min(1).max(255),
  config: z
    .looseObject({
      bucket_name: z.string().refine(isValidBucketName, "bucket_name is not a valid S3 bucket name"),
      prefix: z
        .string()
        .max(900)
        .nullish()
        .transform((p) => (p ?? "").replace(/^\/+|\/+$/g, ""))
        // Refused rather than rewritten: dropping a `..` or an empty segment would change where exports go.
        .superRefine((p, ctx) => {
          const problem = prefixProblem(p);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }),
      region: z.preprocess(blankAsNull, z.string().max(64).nullish()),
      endpoint_url: z.preprocess(blankAsNull, z.string().max(2048).nullish()),
      include_bucket_in_prefix: z
        .boolean()
        .nullish()
        .transform((b) => b ?? false),
    })
    .superRefine((c, ctx) => {
      if (c.endpoint_url) {
        const problem = endpointUrlProblem(c.endpoint_url, config.localMode);
        if (problem) ctx.addIssue({ code: "custom", path: ["endpoint_url"], message: problem });
      }
      // Without an endpoint the region becomes part of the S3 host name: one DNS label. S3-compatible
      // services only sign with it, and some use names such as "auto" or "RegionOne".
      if (c.region && !(c.endpoint_url ? /^[A-Za-z0-9._-]+$/ : /^[a-z0-9]+(-[a-z0-9]+)*$/).test(c.region))
        ctx.addIssue({ code: "custom", path: ["region"], message: "region is not a valid region name" });
    }),
  credentials: z
    .looseObject({
      access_key_id: z.string().min(1).max(256),
      secret_access_key: z.string().min(1).max(1024),
      session_token: z.preprocess(blankAsNull, z.string().max(8192).nullish()),
    })
    .nullish(),
});
export type DestinationCreateIn = z.output<typeof DestinationCreate>;

export const DestinationOut = z.object({
  id: z.uuid(),
  tenant_id: z.string(),
  destination_type: z.literal("s3"),
  display_name: z.string(),
  config: z.object({
    bucket_name: z.string(),
    prefix: z.string(),
    region: z.string().nullable(),
    endpoint_url: z.string().nullable(),
    include_bucket_in_prefix: z.boolean(),
  }),
  created_at: z.string(),
  updated_at: z.string(),
  credentials_keys: z.array(z.string()),
});
export type Destination = z.output<typeof DestinationOut>;
