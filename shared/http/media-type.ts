// A Content-Type value read strictly by RFC 9110's media-type grammar (§8.3.1, §5.6): what a browser is told a
// document is must be one type, read one way. Anything else (a list, a stray character, non-ASCII) is no type.

/** A media type: its type and subtype lower-cased, and `essence` (`type/subtype`). */
export interface MediaType {
  type: string;
  subtype: string;
  essence: string;
}

// RFC 9110's tchar less "`", which some of the Fetch standard's implementations (undici's) do not take.
const TOKEN = "[!#$%&'*+.^_|~0-9A-Za-z-]+";
// obs-text (bytes over 0x7e) and HTAB are left out of quoted strings: browsers read a type holding them as none.
const QUOTED = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*"';
// parameters = *( OWS ";" OWS [ parameter ] ); each repetition eats a ";", so the match is linear.
const MEDIA_TYPE = new RegExp(
  `^(${TOKEN})/(${TOKEN})(?:[ \\t]*;[ \\t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*$`,
);

/**
 * The one media type `value` names, or undefined: a comma anywhere (browsers split a list on it and take the
 * last type, quoted or not), or anything outside the grammar. Leading and trailing SP/HTAB are OWS.
 */
export function parseMediaType(value: string): MediaType | undefined {
  if (value.length > 1024 || value.includes(",")) return undefined;
  const m = MEDIA_TYPE.exec(value.replace(/^[ \t]+|[ \t]+$/g, ""));
  if (!m) return undefined;
  const type = m[1].toLowerCase();
  const subtype = m[2].toLowerCase();
  return { type, subtype, essence: `${type}/${subtype}` };
}
