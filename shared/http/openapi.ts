import { z } from "zod";
import type { LambdaHttpHandler } from "./handler.ts";

// The OpenAPI document, generated from the route manifest and each handler's zod schemas.
export interface DocRoute {
  method: string;
  path: string;
  auth: boolean;
  summary: string;
  group: string;
  handler: LambdaHttpHandler;
}

const schemaOf = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });

function parameters(where: "path" | "query", schema: z.ZodType | undefined) {
  if (!schema) return [];
  const js = schemaOf(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === "path" || (js.required ?? []).includes(name),
    schema: s,
  }));
}

export function openApiDocument(title: string, version: string, list: DocRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of list) {
    const { spec } = r.handler;
    const op: Record<string, unknown> = {
      summary: r.summary,
      tags: [r.group],
      ...(spec.doc?.description ? { description: spec.doc.description } : {}),
      parameters: [
        ...parameters("path", spec.params),
        ...parameters("query", spec.query),
        ...Object.entries(spec.doc?.headers ?? {}).map(([name, description]) => ({
          name,
          in: "header",
          required: true,
          description,
          schema: { type: "string" },
        })),
      ],
      responses: {
        "200": {
          description: "Success",
          content: spec.response ? { "application/json": { schema: schemaOf(spec.response) } } : undefined,
        },
        ...(spec.params || spec.query || spec.body
          ? {
              "422": {
                description: "Validation Error",
                content: {
                  "application/json": { schema: { $ref: "#/components/schemas/HTTPValidationError" } },
                },
              },
            }
          : {}),
        ...Object.fromEntries(
          Object.entries(spec.doc?.responses ?? {}).map(([status, description]) => [status, { description }]),
        ),
      },
    };
    const raw = spec.doc?.rawBody;
    if (raw)
      op.requestBody = {
        description: raw.description,
        content: Object.fromEntries(raw.contentTypes.map((t) => [t, { schema: {} }])),
      };
    if (spec.body) op.requestBody = { content: { "application/json": { schema: schemaOf(spec.body) } } };
    if (r.auth) op.security = [{ ApiKey: [], TenantId: [] }, { BearerAuth: [] }];
    // A greedy `{name+}` is written `{name}` in OpenAPI; an ANY route is each method OpenAPI names.
    const path = r.path.replace(/\{(\w+)\+\}/g, "{$1}");
    const methods = r.method === "ANY" ? ["get", "post", "put", "patch", "delete"] : [r.method.toLowerCase()];
    paths[path] ??= {};
    for (const m of methods) paths[path][m] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title, version },
    paths,
    components: {
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" },
        TenantId: { type: "apiKey", in: "header", name: "X-Tenant-Id" },
        BearerAuth: { type: "http", scheme: "bearer" },
      },
      schemas: {
        ValidationError: {
          type: "object",
          required: ["loc", "msg", "type"],
          properties: {
            loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } },
            msg: { type: "string" },
            type: { type: "string" },
          },
        },
        HTTPValidationError: {
          type: "object",
          properties: { detail: { type: "array", items: { $ref: "#/components/schemas/ValidationError" } } },
        },
      },
    },
  };
}
