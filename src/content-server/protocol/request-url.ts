import { isUtf8 } from 'node:buffer';
import { ArchiveLinkError, STATUS, isCommand, type CommandName } from './protocol.js';

/** One parameter as it stands in the URL: `raw` still %-encoded (what SAP signs), `value` decoded. */
interface UrlParameter {
  key: string;
  raw: string;
  value: string;
  /** The decoded bytes: a search pattern is matched as bytes (SAP encodes it in Latin-1, `%FC`). */
  bytes: Buffer;
}

export interface ArchiveLinkUrl {
  /** The connection: the path segment after the prefix (OAC0's HTTP script ends with it). */
  connection: string;
  command: CommandName;
  /** In URL order: the signature is over the raw values in that order. */
  parameters: UrlParameter[];
  get(key: string): string | undefined;
  bytes(key: string): Buffer | undefined;
}

/**
 * `%XX` decoded to bytes, nothing else: a `+` is a plus (base64's in a secKey, the separator in an
 * attrSearch pattern), never a space as URLSearchParams reads it, and SAP encodes text in Latin-1
 * (`M%FCller`), on which decodeURIComponent throws (docs/reference/sap-interfaces.md §3, the URL
 * form: only ASCII, everything else %-encoded).
 */
function percentDecode(raw: string): Buffer {
  // The request line is Latin-1 as Node reads it: one character per byte.
  return Buffer.from(
    raw.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
}

/** Text as UTF-8 when the bytes are, else as Latin-1. */
const text = (bytes: Buffer): string => bytes.toString(isUtf8(bytes) ? 'utf8' : 'latin1');

/**
 * `/<prefix>/<connection>?<command>&key=value&…`, read from the request line as it came: SAP
 * leaves a `#` unencoded in attrSearch patterns, which a URL parser would take for a fragment.
 * Each parameter appears at most once (§3); unknown ones are tolerated, as SAP sends some the
 * tables do not list (`Content-Length` in a create PUT's URL). Undefined when the path is not ours.
 */
export function parseArchiveLinkUrl(target: string, prefix: string): ArchiveLinkUrl | undefined {
  const question = target.indexOf('?');
  const path = question < 0 ? target : target.slice(0, question);
  if (!path.startsWith(`${prefix}/`)) return undefined;
  const connection = text(percentDecode(path.slice(prefix.length + 1)));
  if (connection === '' || connection.includes('/')) return undefined;
  const [command = '', ...pairs] = (question < 0 ? '' : target.slice(question + 1)).split('&');
  if (!isCommand(command)) throw new ArchiveLinkError(STATUS.badRequest, `unknown function "${command.slice(0, 40)}"`);
  const parameters: UrlParameter[] = [];
  const seen = new Set<string>();
  for (const pair of pairs) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const key = equals < 0 ? pair : pair.slice(0, equals);
    const raw = equals < 0 ? '' : pair.slice(equals + 1);
    if (seen.has(key)) throw new ArchiveLinkError(STATUS.badRequest, `parameter ${key} appears more than once`);
    seen.add(key);
    const bytes = percentDecode(raw);
    parameters.push({ key, raw, value: text(bytes), bytes });
  }
  const byKey = new Map(parameters.map((p) => [p.key, p]));
  return {
    connection,
    command,
    parameters,
    get: (key) => byKey.get(key)?.value,
    bytes: (key) => byKey.get(key)?.bytes,
  };
}
