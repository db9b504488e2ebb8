import { HttpError } from "../errors.ts";

/** Client-sent text quoted in an error message, cut short so a message never echoes a whole header. */
export const clip = (text: string, max = 60): string => (text.length > max ? `${text.slice(0, max)}…` : text);

// Decoding failures carry an HTTP status so an uncaught one still answers 4xx, never 500.

/** The body, after decompression, is larger than the limit (a gzip bomb stops here). */
export class BodyTooLarge extends HttpError {
  constructor(readonly limitBytes: number) {
    super(413, `Request body exceeds the limit of ${limitBytes} bytes after decompression`);
  }
}

/** A Content-Encoding this server does not decode. */
export class UnsupportedEncoding extends HttpError {
  constructor(readonly encoding: string) {
    super(
      415,
      `Unsupported Content-Encoding "${clip(encoding)}": send gzip, x-gzip, deflate, br or identity`,
    );
  }
}

/** A body that cannot be decoded: corrupt compression or broken multipart framing. */
export class MalformedBody extends HttpError {
  constructor(
    message: string,
    /** 0-based index of the multipart part at fault, when there is one. */
    readonly partIndex?: number,
  ) {
    super(400, message);
  }
}
