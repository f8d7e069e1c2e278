import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { TLSSocket } from 'node:tls';
import { Faults } from '../faults.js';
import { basicCredentials, close, listen, readBody, sendJson } from '../http.js';
import { loadCustomizing, type Customizing } from './customizing.js';
import { AbapException, type ErpTables } from './call-context.js';
import { RFC_FUNCTIONS } from './functions.js';
import { certificateSubject, TOKEN_PATH, TokenIssuer } from './oauth.js';
import { INTERFACES, readParams, UnreadableValue, type FunctionInterface } from './interfaces.js';
import {
  ATTACHMENT_SERVICE,
  attachmentService,
  businessDocumentService,
  CsrfSessions,
  PURCHASE_ORDER_SERVICE,
  SUPPLIER_INVOICE_SERVICE,
} from './rest.js';
import { exceptionXml, readCall, responseXml, runtimeFaultXml } from './soap-codec.js';

/**
 * HTTPS, as SAP's ICM serves it, with `cert` and `key` (PEM); `clientCa`, the CAs of the SSL server
 * PSE whose client certificates it asks for. `verifyClient` as icm/HTTPS/verify_client
 * (help.sap.com): 1, a certificate is asked for and a connection without one signs in otherwise
 * (Basic); 2, the handshake fails without a certificate those CAs signed. Where the documentation
 * does not say what level 1 does with a certificate it cannot verify, the sandbox takes the
 * stricter reading: the handshake fails as at level 2.
 */
interface ErpSandboxTls {
  cert: Buffer;
  key: Buffer;
  clientCa: Buffer;
  verifyClient: 1 | 2;
}

interface ErpSandboxOptions {
  host?: string;
  port?: number;
  tls?: ErpSandboxTls;
  /** Customizing file; `sandbox/erp/sap-customizing.yaml` when absent. */
  customizingFile?: string;
}

function sendXml(res: ServerResponse, status: number, xml: string): void {
  res.writeHead(status, { 'Content-Type': 'text/xml; charset=utf-8', 'Content-Length': Buffer.byteLength(xml) });
  res.end(xml);
}

/**
 * An SAP-like server: the SOAP-RFC service (`POST /sap/bc/soap/rfc?sap-client=NNN`) with the
 * ArchiveLink function modules the job calls, checked against a customizing file; the S/4HANA
 * attachment service and a JSON function-module gateway, both behind Gateway's CSRF handshake;
 * and its tables readable at `GET /sandbox/tables` (JSON).
 */
export class ErpSandbox {
  readonly faults = new Faults();
  readonly tables: ErpTables = { links: [], barcodes: [], inbox: [], attachments: [] };
  readonly csrf = new CsrfSessions();
  readonly customizing: Customizing;
  /** The function modules' interfaces, this SAP's own copy: a test takes a field out of one to play another release. */
  readonly interfaces: Record<string, FunctionInterface> = structuredClone(INTERFACES);
  /**
   * Function modules whose work this SAP does not keep: it answers as usual, and its tables are as
   * before the call, as when a module writes through the update task and nobody commits (ABAP
   * keyword documentation, CALL FUNCTION … IN UPDATE TASK; docs/checking.md, "Commits").
   */
  readonly uncommitted = new Set<string>();
  /** OAuth 2.0 client credentials: the token endpoint, and bearer tokens on every call. */
  readonly oauth: TokenIssuer;
  /** SICF: the SOAP-RFC service answers only while active. */
  soapRfcActive = true;
  private server?: Server;

  constructor(private readonly options: ErpSandboxOptions = {}) {
    this.customizing = loadCustomizing(options.customizingFile);
    this.oauth = new TokenIssuer(this.customizing);
  }

  /** Returns the base URL, e.g. `http://127.0.0.1:8081`. */
  async start(): Promise<string> {
    const { tls } = this.options;
    const listener = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    const server =
      tls === undefined
        ? createServer(listener)
        : createHttpsServer(
            {
              cert: tls.cert,
              key: tls.key,
              ca: tls.clientCa,
              requestCert: true,
              rejectUnauthorized: tls.verifyClient === 2,
            },
            listener,
          );
    // Level 1: no certificate goes on; one its CAs did not sign ends the connection (the stricter reading).
    if (tls?.verifyClient === 1)
      server.on('secureConnection', (socket: TLSSocket) => {
        if (socket.getPeerX509Certificate() !== undefined && !socket.authorized) socket.destroy();
      });
    this.server = server;
    const address = await listen(server, this.options.port ?? 0, this.options.host ?? '127.0.0.1');
    return `${tls === undefined ? 'http' : 'https'}://${address.address}:${address.port}`;
  }

  async stop(): Promise<void> {
    await close(this.server as Server);
  }

  /**
   * A user entering a bar code in a business transaction (OAC5's internal bar code): SAP matches
   * it with the external one BAPI_BARCODE_SENDLIST stored, links the document to the object and
   * deletes the external row (its Hold flag, KEEP_FLAG, unset: yuuvis RAD's manual says BDS_BAR_EX
   * holds documents "not yet assigned"; ARCHIV_BARCODE_INSERT_RFC's ENTRY_NOT_DELETEABLE). False
   * when no external row has the bar code.
   */
  enterBarcode(
    client: string,
    barcode: string,
    object: { SAP_OBJECT: string; OBJECT_ID: string; AR_OBJECT: string },
  ): boolean {
    const index = this.tables.barcodes.findIndex((row) => row.BARCODE === barcode);
    if (index < 0) return false;
    const [row] = this.tables.barcodes.splice(index, 1);
    this.tables.links.push({
      client,
      ...object,
      ARCHIV_ID: row.CONTREP,
      ARC_DOC_ID: row.DOCID,
      AR_DATE: row.ARDATE,
      FILENAME: '',
      DESCR: '',
      CREATOR: '',
    });
    return true;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url as string, 'http://sandbox');
    if (req.method === 'GET' && url.pathname === '/sandbox/tables') return sendJson(res, 200, this.tables);
    if (url.pathname === TOKEN_PATH) {
      if (await this.faults.apply(req, res, 'token')) return;
      return this.oauth.issue(req, res);
    }
    const client = url.searchParams.get('sap-client') ?? this.customizing.clients[0];
    const user = this.authenticated(req);
    // As the ICF answers: 401 with an HTML page, no SOAP.
    if (user === undefined || !this.customizing.clients.includes(client)) return sendHtml(res, 401, 'Logon failed');
    const rest = { req, res, url, client, tables: this.tables, customizing: this.customizing, csrf: this.csrf };
    if (url.pathname.startsWith(`${ATTACHMENT_SERVICE}/`)) {
      const resource = url.pathname.slice(ATTACHMENT_SERVICE.length);
      if (await this.faults.apply(req, res, resource.slice(1))) return;
      return attachmentService(rest, resource);
    }
    const service = [SUPPLIER_INVOICE_SERVICE, PURCHASE_ORDER_SERVICE].find((root) =>
      url.pathname.startsWith(`${root}/`),
    );
    if (service !== undefined) {
      const resource = url.pathname.slice(service.length);
      if (await this.faults.apply(req, res, resource.slice(1))) return;
      return businessDocumentService(rest, service, resource);
    }
    if (req.method !== 'POST' || url.pathname !== '/sap/bc/soap/rfc') return sendHtml(res, 404, 'Not Found');
    if (!this.soapRfcActive) return sendInactive(res);
    const call = readCall((await readBody(req)).toString('utf8'));
    if ('refused' in call) return sendXml(res, 500, runtimeFaultXml('Client', call.refused));
    if (await this.faults.apply(req, res, call.functionName)) return;
    sendXml(res, ...this.answer(user, client, call.functionName, call.params));
  }

  /** The status and envelope SAP's SOAP runtime answers a call with; the work undone after it for a module it does not keep. */
  private answer(
    user: string,
    client: string,
    functionName: string,
    params: Record<string, unknown>,
  ): [number, string] {
    const kept = this.uncommitted.has(functionName) ? structuredClone(this.tables) : undefined;
    const answered = this.run(user, client, functionName, params);
    if (kept !== undefined) this.rollBack(kept);
    return answered;
  }

  private run(user: string, client: string, functionName: string, params: Record<string, unknown>): [number, string] {
    const fn = RFC_FUNCTIONS[functionName];
    const iface = Object.hasOwn(this.interfaces, functionName) ? this.interfaces[functionName] : undefined;
    if (fn === undefined || iface === undefined)
      return [
        500,
        exceptionXml(functionName, { name: 'FU_NOT_FOUND', text: `Function module ${functionName} not found` }),
      ];
    // S_RFC: a call the user is not authorised for ends in the runtime error RFC_NO_AUTHORITY (message 00 341).
    const allowed = this.customizing.users[user].rfc;
    if (allowed !== '*' && !allowed.includes(functionName)) {
      return [
        500,
        exceptionXml(functionName, {
          name: 'SYSTEM_FAILURE',
          text: `No RFC authorization for function module ${functionName}.`,
          message: { id: '00', number: '341' },
        }),
      ];
    }
    try {
      const read = readParams(functionName, iface, params as never);
      return [
        200,
        responseXml(
          functionName,
          fn({
            client,
            user,
            params: read,
            tables: this.tables,
            customizing: this.customizing,
            interfaces: this.interfaces,
          }),
        ),
      ];
    } catch (error) {
      if (error instanceof UnreadableValue)
        return [500, runtimeFaultXml('Client', `Error during deserialization: ${error.message}`)];
      return [500, exceptionXml(functionName, (error as AbapException).exception)];
    }
  }

  /** The tables as they were, each array kept as the same object (indexes and tests hold them). */
  private rollBack(kept: ErpTables): void {
    for (const name of Object.keys(kept) as Array<keyof ErpTables>)
      (this.tables[name] as unknown[]).splice(0, Infinity, ...(kept[name] as unknown[]));
  }

  /** The logon user, or undefined when the credentials are refused. */
  private authenticated(req: IncomingMessage): string | undefined {
    if (req.headers.authorization?.startsWith('Bearer ')) return this.oauth.user(req);
    const subject = certificateSubject(req);
    if (subject !== undefined && req.headers.authorization === undefined)
      return this.customizing.certificateUsers[subject];
    const credentials = basicCredentials(req);
    const valid =
      credentials !== undefined && this.customizing.users[credentials.name]?.password === credentials.password;
    return valid ? credentials.name : undefined;
  }
}

/**
 * The ICF's answer for a service that is inactive in SICF: 403 with its HTML error page (SAP
 * Community wiki on ICF 403s; the page's sentence as the ICF words it for a service that is not
 * available).
 */
function sendInactive(res: ServerResponse): void {
  res.writeHead(403, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(
    '<html><head><title>Service cannot be reached</title></head><body><h1>403 Forbidden</h1><p>Service /sap/bc/soap/rfc call was terminated because the corresponding service is not available. The termination occurred in system SBX with error code 403 and for the reason Forbidden. Please select a valid URL. If it is a valid URL, check whether service /sap/bc/soap/rfc is active in transaction SICF.</p></body></html>',
  );
}

function sendHtml(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html' });
  res.end(`<html><body><h1>${status} ${text}</h1></body></html>`);
}
