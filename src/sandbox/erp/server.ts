import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { faultEnvelope, parseRequest, responseEnvelope } from '../../erp/soap.js';
import { Faults } from '../faults.js';
import { basicCredentials, close, listen, readBody, sendJson } from '../http.js';
import { loadCustomizing, type Customizing } from './customizing.js';
import { AbapException, RFC_FUNCTIONS, type ErpTables } from './functions.js';
import { ATTACHMENT_SERVICE, attachmentService, CsrfSessions, FM_GATEWAY, functionGateway } from './rest.js';

export interface ErpSandboxOptions {
  host?: string;
  port?: number;
  /** Customizing file; `config/sandbox/sap-customizing.yaml` when absent. */
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
  private server?: Server;

  constructor(private readonly options: ErpSandboxOptions = {}) {
    this.customizing = loadCustomizing(options.customizingFile);
  }

  /** Returns the base URL, e.g. `http://127.0.0.1:8081`. */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    const address = await listen(server, this.options.port ?? 0, this.options.host ?? '127.0.0.1');
    return `http://${address.address}:${address.port}`;
  }

  async stop(): Promise<void> {
    await close(this.server as Server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url as string, 'http://sandbox');
    if (req.method === 'GET' && url.pathname === '/sandbox/tables') return sendJson(res, 200, this.tables);
    const client = url.searchParams.get('sap-client') ?? this.customizing.clients[0];
    // As the ICF answers: 401 with an HTML page, no SOAP.
    if (!this.authenticated(req) || !this.customizing.clients.includes(client)) return sendHtml(res, 401, 'Logon failed');
    const rest = { req, res, url, client, tables: this.tables, customizing: this.customizing, csrf: this.csrf };
    if (url.pathname.startsWith(`${ATTACHMENT_SERVICE}/`)) {
      const resource = url.pathname.slice(ATTACHMENT_SERVICE.length);
      if (await this.faults.apply(req, res, resource.slice(1))) return;
      return attachmentService(rest, resource);
    }
    if (url.pathname.startsWith(`${FM_GATEWAY}/`)) {
      const functionName = decodeURIComponent(url.pathname.slice(FM_GATEWAY.length + 1));
      if (await this.faults.apply(req, res, functionName)) return;
      return functionGateway(rest, functionName);
    }
    if (req.method !== 'POST' || url.pathname !== '/sap/bc/soap/rfc') return sendHtml(res, 404, 'Not Found');
    const request = parseRequest((await readBody(req)).toString('utf8'));
    if (request === undefined) return sendHtml(res, 500, 'Not a SOAP request');
    if (await this.faults.apply(req, res, request.functionName)) return;
    const fn = RFC_FUNCTIONS[request.functionName];
    if (fn === undefined) {
      return sendXml(res, 500, faultEnvelope(request.functionName, { exception: 'FU_NOT_FOUND', text: `Function module ${request.functionName} not found` }));
    }
    try {
      sendXml(res, 200, responseEnvelope(request.functionName, fn({ client, params: request.params, tables: this.tables, customizing: this.customizing })));
    } catch (error) {
      sendXml(res, 500, faultEnvelope(request.functionName, (error as AbapException).detail));
    }
  }

  private authenticated(req: IncomingMessage): boolean {
    const credentials = basicCredentials(req);
    return credentials !== undefined && this.customizing.users[credentials.name]?.password === credentials.password;
  }
}

function sendHtml(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html' });
  res.end(`<html><body><h1>${status} ${text}</h1></body></html>`);
}
