import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readAttachmentPart, servedInline } from "./attachments.ts";

describe("readAttachmentPart", () => {
  it("takes the media type without the SDK's length parameter, lower-cased", () => {
    expect(readAttachmentPart({ name: "photo", contentType: "image/PNG; length=1234" })).toEqual({
      name: "photo",
      mimeType: "image/png",
    });
    expect(readAttachmentPart({ name: "my file (1)", contentType: "application/pdf" })).toEqual({
      name: "my file (1)",
      mimeType: "application/pdf",
    });
    expect(readAttachmentPart({ name: "raw", contentType: "" })).toEqual({
      name: "raw",
      mimeType: "application/octet-stream",
    });
  });

  it("refuses names a key or a part name cannot hold, and types that are not media types", () => {
    for (const name of ["", "a.b", "../x", "a/b", "a\\b", "tab\there", "x".repeat(201)])
      expect(readAttachmentPart({ name, contentType: "text/plain" }), name).toHaveProperty("problem");
    for (const contentType of ["text", "text/", "/plain", "text/plain/extra", "<script>/x"])
      expect(readAttachmentPart({ name: "ok", contentType }), contentType).toHaveProperty("problem");
  });

  it("fuzz: never throws; what it accepts is a safe name and a type/subtype", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (name, contentType) => {
        const r = readAttachmentPart({ name, contentType });
        if ("problem" in r) return;
        expect(r.name).toBe(name);
        expect(r.name).not.toMatch(/[./\\]/);
        expect(r.mimeType).toMatch(/^[a-z0-9][^/\s;]*\/[a-z0-9][^/\s;]*$/);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("servedInline", () => {
  it("only passive types are shown inline; active and unknown types are downloads", () => {
    for (const t of ["image/png", "image/jpeg", "audio/mpeg", "video/mp4", "text/plain", "application/json"])
      expect(servedInline(t), t).toBe(true);
    for (const t of [
      "text/html",
      "image/svg+xml",
      "application/xhtml+xml",
      "text/javascript",
      "application/javascript",
      "application/xml",
      "text/xml",
      "application/pdf",
      "application/octet-stream",
      "text/x-unknown",
      "multipart/x-mixed-replace",
    ])
      expect(servedInline(t), t).toBe(false);
  });
});
