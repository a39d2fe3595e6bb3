// A strict multipart/form-data parser (RFC 7578 over RFC 2046) for bodies already in memory
// under the route's byte cap. Linear in the body: each delimiter is found with one indexOf. Every
// refusal is a ServiceError naming what is wrong: the content type, the body's framing, or the
// field by its name (a part too large, sent twice, unknown, not UTF-8).
import { ERRORS, ServiceError } from '../errors.js';

export interface FormPart {
  name: string;
  /** Present on a file part (the client's file name; may be empty). */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export interface FormLimits {
  /** Parts allowed in all. */
  maxParts: number;
  /** Bytes of one part's headers. */
  maxHeaderBytes: number;
  /** Bytes of a text field, by name; fields not listed get `maxFieldBytes`. */
  fieldBytes?: Readonly<Record<string, number>>;
  maxFieldBytes: number;
  /** Bytes of a file part (413 past it). */
  maxFileBytes: number;
}

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');
// RFC 2046 5.1.1: 1 to 70 characters from bchars, not ending with a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** The boundary of a multipart/form-data Content-Type; 415 for another type, 400 without a usable boundary. */
export function boundaryOf(contentType: string | undefined): string {
  const [type, ...params] = (contentType ?? '').split(';');
  const media = type!.trim().toLowerCase();
  if (media !== 'multipart/form-data')
    throw ERRORS.unsupportedMediaType(
      `content-type: ${media ? JSON.stringify(media.slice(0, 64)) + ' is not accepted' : 'missing'}; send a multipart/form-data form`,
    );
  for (const param of params) {
    const at = param.indexOf('=');
    if (param.slice(0, at).trim().toLowerCase() !== 'boundary') continue;
    let value = param.slice(at + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (BOUNDARY.test(value)) return value;
    throw ERRORS.invalidRequest('content-type: the multipart boundary must be 1 to 70 characters of RFC 2046');
  }
  throw ERRORS.invalidRequest('content-type: multipart/form-data without a boundary parameter');
}

/** The parts of `body`, in order. */
export function parseForm(body: Buffer, boundary: string, limits: FormLimits): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  // The body opens with the first delimiter (a preamble before it is allowed by RFC 2046 but
  // never sent by a form encoder: refused, so nothing unread hides there).
  if (!body.subarray(0, delimiter.length).equals(delimiter))
    throw framing('it does not begin with the boundary of its Content-Type');
  const parts: FormPart[] = [];
  let at = delimiter.length;
  for (;;) {
    // After a delimiter: "--" closes the form, CRLF opens a part (transport padding is not sent).
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts;
    if (!body.subarray(at, at + 2).equals(CRLF)) throw framing('a boundary is not followed by a line end or "--"');
    at += 2;
    if (parts.length === limits.maxParts) throw framing(`more than ${limits.maxParts} parts`);
    const headersEnd = body.indexOf(HEADERS_END, at);
    if (headersEnd < 0 || headersEnd - at > limits.maxHeaderBytes) {
      if (headersEnd < 0 && body.length - at <= limits.maxHeaderBytes)
        throw framing('a part ends inside its headers (truncated)');
      throw framing(`a part's headers are longer than ${limits.maxHeaderBytes} bytes`);
    }
    const part = headersOf(body.toString('latin1', at, headersEnd));
    const start = headersEnd + 4;
    const end = body.indexOf(next, start);
    if (end < 0) throw framing(`field ${JSON.stringify(part.name)} is not closed by the boundary (truncated)`);
    const size = end - start;
    if (part.filename !== undefined) {
      if (size > limits.maxFileBytes) throw ERRORS.tooLarge(part.name, limits.maxFileBytes);
    } else {
      const max = limits.fieldBytes?.[part.name] ?? limits.maxFieldBytes;
      if (size > max) throw ERRORS.invalidRequest(`${part.name}: longer than the limit of ${max} bytes`);
    }
    parts.push({ ...part, data: body.subarray(start, end) });
    at = end + next.length;
  }
}

/** A text field's value; 400 naming the field when it is not UTF-8. */
export function textOf(part: FormPart): string {
  try {
    return utf8.decode(part.data);
  } catch {
    throw ERRORS.invalidRequest(`${part.name}: not valid UTF-8`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function framing(problem: string): ServiceError {
  return ERRORS.invalidRequest(`body: not a valid multipart/form-data form: ${problem}`);
}

// A part's headers: Content-Disposition form-data with a name is required; Content-Type is kept.
function headersOf(block: string): Omit<FormPart, 'data'> {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw framing(`a part header line is malformed: ${JSON.stringify(line.slice(0, 64))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') contentType = value;
  }
  if (disposition === undefined) throw framing('a part has no Content-Disposition header');
  const [kind, ...params] = splitParams(disposition);
  if (kind!.toLowerCase() !== 'form-data') throw framing(`a part's Content-Disposition is not form-data`);
  const values = new Map<string, string>();
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"')) {
      if (v.length < 2 || !v.endsWith('"')) throw framing(`a part's Content-Disposition has an unclosed quote`);
      v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    values.set(p.slice(0, eq).trim().toLowerCase(), Buffer.from(v, 'latin1').toString('utf8'));
  }
  const name = values.get('name');
  if (!name) throw framing('a part has no name');
  const filename = values.get('filename');
  return { name, ...(filename !== undefined && { filename }), ...(contentType !== undefined && { contentType }) };
}

// Splits on semicolons outside quoted strings.
function splitParams(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && quoted) {
      current += c + (value[i + 1] ?? '');
      i++;
    } else if (c === '"') {
      quoted = !quoted;
      current += c;
    } else if (c === ';' && !quoted) {
      out.push(current.trim());
      current = '';
    } else current += c;
  }
  out.push(current.trim());
  return out;
}
