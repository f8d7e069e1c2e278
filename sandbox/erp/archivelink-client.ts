import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { ArchiveLinkSigner } from './archivelink-signer.js';

/**
 * The parameters SAP signs besides contRep, accessMode, authId and expiration, by command and
 * method — SAP's own tables (Content Server HTTP 4.5, "secKey"), written here independently of
 * the content server's.
 */
const SIGNED: Record<string, string[]> = {
  info: ['docId'],
  get: ['docId'],
  docGet: ['docId'],
  search: ['docId'],
  attrSearch: ['docId'],
  'create PUT': ['docId', 'compId', 'docProt'],
  'create POST': ['docId', 'docProt'],
  'mCreate POST': ['docId', 'docProt'],
  'append PUT': ['docId', 'compId'],
  'update PUT': ['docId', 'compId'],
  'update POST': ['docId'],
  delete: ['docId', 'compId'],
};

const MODE: Record<string, string> = {
  info: 'r',
  get: 'r',
  docGet: 'r',
  search: 'r',
  attrSearch: 'r',
  create: 'c',
  mCreate: 'c',
  append: 'u',
  update: 'u',
  delete: 'd',
};

/** SAP's URL encoding of a value: `=` and the like escaped, the commas of a DN left as they are. */
const encode = (value: string): string => encodeURIComponent(value).replace(/%2C/g, ',');

/** `YYYYMMDDHHMMSS`, UTC. */
const stamp = (date: Date): string => date.toISOString().replace(/[-:T]/g, '').slice(0, 14);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  error?: string;
}

/** One step of the SAP-side test sequence: what was done, what came back, whether it was right. */
interface CheckStep {
  step: string;
  status: number;
  ok: boolean;
  detail: string;
}

/**
 * SAP's side of the HTTP content server interface: what the ArchiveLink runtime sends to the
 * content server configured in OAC0 — signed URLs (an expiry two hours ahead, as SAP's), putCert
 * with its certificate, OAC0's connection test (serverInfo) and a sequence like report RSCMST's.
 */
export class ArchiveLinkCaller {
  readonly signer = new ArchiveLinkSigner();

  constructor(
    /** OAC0's HTTP server, port and script: `http://host:port/archivelink/S4H`. */
    private readonly script: string,
    private readonly contRep: string,
  ) {}

  /** The URL of a command; signed unless it is serverInfo or putCert. */
  url(
    command: string,
    params: Array<[string, string]>,
    options: { method?: string; expiresAt?: Date; mode?: string } = {},
  ): string {
    const list: Array<[string, string]> = [['pVersion', '0047'], ['contRep', this.contRep], ...params];
    if (command === 'serverInfo' || command === 'putCert') {
      const extra = command === 'putCert' ? [['authId', this.signer.authId] as [string, string]] : [];
      return `${this.script}?${command}&${[...list, ...extra].map(([k, v]) => `${k}=${encode(v)}`).join('&')}`;
    }
    const expiration = stamp(options.expiresAt ?? new Date(Date.now() + 2 * 3600_000));
    list.push(
      ['accessMode', options.mode ?? MODE[command]],
      ['authId', this.signer.authId],
      ['expiration', expiration],
    );
    const raw = list.map(([k, v]): [string, string] => [k, encode(v)]);
    const signedKeys = new Set([
      'contRep',
      'accessMode',
      'authId',
      'expiration',
      ...(SIGNED[`${command} ${options.method ?? 'GET'}`] ?? SIGNED[command]),
    ]);
    const message = raw
      .filter(([k]) => signedKeys.has(k))
      .map(([, v]) => v)
      .join('');
    const secKey = this.signer.sign(Buffer.from(message, 'latin1')).toString('base64');
    return `${this.script}?${command}&${raw.map(([k, v]) => `${k}=${v}`).join('&')}&secKey=${encode(secKey)}`;
  }

  async send(
    method: 'GET' | 'PUT' | 'POST',
    url: string,
    body?: Buffer,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const response = await request(url, { method, body, headers });
    const content = Buffer.from(await response.body.arrayBuffer());
    const error = response.headers['x-errordescription'];
    return {
      status: response.statusCode,
      headers: response.headers,
      body: content,
      error: typeof error === 'string' ? error : undefined,
    };
  }

  /** OAC0's "Send certificate". */
  putCert(): Promise<Answer> {
    return this.send('PUT', this.url('putCert', []), this.signer.certificateBody());
  }

  /** OAC0's connection test. */
  serverInfo(): Promise<Answer> {
    return this.send('GET', this.url('serverInfo', []));
  }

  /** A document's default component, as the SAP GUI opens an attachment. */
  get(docId: string, extra: Array<[string, string]> = []): Promise<Answer> {
    return this.send('GET', this.url('get', [['docId', docId], ...extra]));
  }

  /** A new docId as SAP makes them: 32 characters of a GUID. */
  static newDocId(): string {
    return randomBytes(16).toString('hex').toUpperCase();
  }

  /**
   * Like RSCMST's basic test (RSCMSTH0): create a document, read its attributes and content,
   * search it, update it, append to it, read it whole, delete it — each step checked.
   */
  async checkSequence(): Promise<CheckStep[]> {
    const docId = ArchiveLinkCaller.newDocId();
    const content = Buffer.from('connect2erp content server test: ABCDEFGHIJ abcdefghij\n');
    const steps: CheckStep[] = [];
    const step = (name: string, answer: Answer, ok: boolean, detail = ''): void =>
      void steps.push({ step: name, status: answer.status, ok, detail: answer.error ?? detail });
    const created = await this.send(
      'PUT',
      this.url(
        'create',
        [
          ['docId', docId],
          ['compId', 'data'],
          ['docProt', 'rud'],
        ],
        { method: 'PUT' },
      ),
      content,
      { 'content-type': 'text/plain' },
    );
    step('create', created, created.status === 201);
    const info = await this.send('GET', this.url('info', [['docId', docId]]));
    step(
      'info',
      info,
      info.status === 200 && info.headers['x-numbercomps'] === '1',
      `${String(info.headers['x-numbercomps'])} component(s)`,
    );
    const got = await this.get(docId, [['compId', 'data']]);
    step('get', got, got.status === 200 && got.body.equals(content), `${got.body.length} bytes`);
    const range = await this.get(docId, [
      ['compId', 'data'],
      ['fromOffset', '42'],
      ['toOffset', '51'],
    ]);
    step(
      'get range',
      range,
      range.status === 200 && range.body.equals(content.subarray(42, 52)),
      range.body.toString(),
    );
    const found = await this.send(
      'GET',
      this.url('search', [
        ['docId', docId],
        ['compId', 'data'],
        ['pattern', 'abcdef'],
        ['caseSensitive', 'y'],
      ]),
    );
    step(
      'search',
      found,
      found.status === 200 && found.body.toString() === `1;${content.indexOf('abcdef')};`,
      found.body.toString(),
    );
    const descr = Buffer.from('description of the test document\n');
    const updated = await this.send(
      'PUT',
      this.url(
        'update',
        [
          ['docId', docId],
          ['compId', 'descr'],
        ],
        { method: 'PUT' },
      ),
      descr,
      { 'content-type': 'text/plain' },
    );
    step('update', updated, updated.status === 200);
    const more = Buffer.from('appended line\n');
    const appended = await this.send(
      'PUT',
      this.url(
        'append',
        [
          ['docId', docId],
          ['compId', 'data'],
        ],
        { method: 'PUT' },
      ),
      more,
    );
    step('append', appended, appended.status === 200);
    const whole = await this.send('GET', this.url('docGet', [['docId', docId]]));
    const text = whole.body.toString('latin1');
    step(
      'docGet',
      whole,
      whole.status === 200 &&
        text.includes(Buffer.concat([content, more]).toString('latin1')) &&
        text.includes(descr.toString('latin1')),
      `${whole.body.length} bytes`,
    );
    const deleted = await this.send('GET', this.url('delete', [['docId', docId]]));
    step('delete', deleted, deleted.status === 200);
    const gone = await this.send('GET', this.url('info', [['docId', docId]]));
    step('info after delete', gone, gone.status === 404);
    return steps;
  }
}
