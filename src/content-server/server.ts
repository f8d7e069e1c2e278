import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { finished } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuthenticationError, ConflictError, ForbiddenError, NotFoundError } from '../../common/errors.js';
import type { ContentServerConfig } from '../config/content-server-schema.js';
import type { StorageConfig } from '../config/storage-schema.js';
import type { Logger } from '../log.js';
import { RepositoryClient } from '../repository/client.js';
import { AccessCheck } from './signatures/access.js';
import { sendError, sendText } from './protocol/answers.js';
import { ApprovedCertificates } from './signatures/approved-certificates.js';
import { ArchiveDocuments } from './documents/archive.js';
import { ArchiveWriter } from './documents/archive-writer.js';
import { CertificateStore } from './signatures/certificates.js';
import type { CommandContext, ConnectionServices } from './context.js';
import { ArchiveLinkError, COMMANDS, STATUS, type CommandName } from './protocol/protocol.js';
import { attrSearch, docGet, get, info, search, serverInfo } from './documents/reading.js';
import { RepositoryHealth } from './repository-health.js';
import { PutCertSources } from './signatures/put-cert-sources.js';
import { ServeMetrics, wireCounter } from './metrics.js';
import { Cors } from './protocol/cors.js';
import { parseArchiveLinkUrl, type ArchiveLinkUrl } from './protocol/request-url.js';
import { append, create, mCreate, remove, update } from './documents/storing.js';
import { getCert, putCert } from './certificate-commands.js';
import { DOCUMENT_LINK_ROOT } from '../document-link.js';
import { openLinkedDocument } from './documents/linked.js';

type Handler = (context: CommandContext) => Promise<void> | void;

/** What a request refused for back-pressure is told to wait: a moment, as the requests under way end. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Whether the client closed its side: it ended the connection (FIN) or reset it, or writing to it
 * failed. A connection the server itself broke off (a stream cut by the repository, lingerSeconds
 * over) shows none of these.
 */
function clientGone(req: IncomingMessage): boolean {
  // A request whose answer was sent is detached from its connection.
  const socket: Socket | null = req.socket;
  if (socket === null) return false;
  const error: NodeJS.ErrnoException | null = socket.errored;
  const code = error?.code;
  return socket.readableEnded || code === 'ECONNRESET' || code === 'EPIPE';
}

export interface ContentServerSettings {
  storage: StorageConfig;
  server: ContentServerConfig;
  version: string;
}

/** The repository errors a command may meet, as the protocol's statuses. */
function protocolError(error: unknown): ArchiveLinkError {
  if (error instanceof ArchiveLinkError) return error;
  // Lookups of documents say "not found" themselves: what is missing here is administration data (a folder).
  if (error instanceof ConflictError)
    return new ArchiveLinkError(STATUS.inaccessible, 'the document was changed by another request meanwhile');
  if (error instanceof NotFoundError || error instanceof ForbiddenError || error instanceof AuthenticationError)
    return new ArchiveLinkError(
      STATUS.inaccessible,
      'administration data inaccessible: the repository refused or lacks what this connection needs',
    );
  return new ArchiveLinkError(STATUS.internal, 'internal error (the repository did not answer as expected?)');
}

/**
 * `connect2erp serve`: SAP's ArchiveLink HTTP content server, at `<pathPrefix>/<connection>`.
 * Stateless: documents and certificates live in the repository, so replicas share them.
 */
export class ContentServer {
  private readonly server: Server;
  private readonly connections = new Map<string, ConnectionServices>();
  private readonly handlers: Record<CommandName, Handler>;
  private stopping = false;
  /** Undefined when contentServer.yaml turns /metrics off. */
  private readonly metrics?: ServeMetrics;
  private readonly cors: Cors;
  /** ArchiveLink requests under way, at most maxRequestsInFlight. */
  private inFlight = 0;

  constructor(
    private readonly settings: ContentServerSettings,
    private readonly log: Logger,
  ) {
    const { storage, server } = settings;
    for (const connection of server.connections) {
      const client = new RepositoryClient(
        { ...storage, auth: connection.repositoryAuth, maxConcurrentRequests: connection.maxConcurrentRequests },
        log,
      );
      const documents = new ArchiveDocuments(client, connection, log);
      const certificates = new CertificateStore(client, storage.adminPath, server.maxPendingCertificates);
      const approved = new ApprovedCertificates(certificates, server.certificateRefreshSeconds * 1000);
      this.connections.set(connection.name, {
        connection,
        documents,
        writer: new ArchiveWriter(client, documents, connection, log, server.staleCreateSeconds * 1000),
        access: new AccessCheck(connection, approved, server.clockSkewSeconds * 1000),
        certificates,
        approved,
        health: new RepositoryHealth(client),
        putCertSources: connection.putCertFrom && new PutCertSources(connection.putCertFrom),
      });
      if (connection.signatures === 'off')
        log.warn('signatures are not checked', { connection: connection.name, setting: 'signatures: off' });
      for (const { contRep, legacyDigests } of connection.contentRepositories)
        if (legacyDigests.length > 0)
          log.warn('legacy signature digests accepted', { connection: connection.name, contRep, legacyDigests });
    }
    if (server.metrics) this.metrics = new ServeMetrics();
    this.cors = new Cors(server.corsOrigins);
    this.handlers = {
      serverInfo: (context) => serverInfo(context, settings.version),
      getCert,
      putCert,
      info,
      get,
      docGet,
      search,
      attrSearch,
      create,
      mCreate,
      append,
      update,
      delete: remove,
    };
    const listener = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    // Node's default of 5 minutes would cut off a large document SAP stores over a slow line.
    const limits = { requestTimeout: server.requestTimeoutSeconds * 1000 };
    this.server =
      server.tls === undefined
        ? createHttpServer(limits, listener)
        : createHttpsServer(
            { ...limits, cert: readFileSync(server.tls.certFile), key: readFileSync(server.tls.keyFile) },
            listener,
          );
  }

  async start(): Promise<AddressInfo> {
    const { host, port } = this.settings.server.listen;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, resolve);
    });
    const address = this.server.address() as AddressInfo;
    this.log.info('content server listening', {
      host: address.address,
      port: address.port,
      tls: this.settings.server.tls !== undefined,
      connections: [...this.connections.keys()].map((name) => `${this.settings.server.pathPrefix}/${name}`),
    });
    return address;
  }

  /**
   * Readiness answers 503 at once; requests are still taken for `drainMs` (or until `cut` fires),
   * the time Kubernetes takes to stop sending this replica new ones; then the listener closes
   * and the requests under way finish.
   */
  async stop(drainMs = 0, cut?: AbortSignal): Promise<void> {
    this.stopping = true;
    if (drainMs > 0 && cut?.aborted !== true) await sleep(drainMs, undefined, { signal: cut }).catch(() => undefined);
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
    this.metrics?.stop();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url as string;
    if (target === '/healthz') return sendText(res, 200, 'ok\n');
    // What an availability probe asks (the SAP Cloud Connector's, a load balancer's): the server answers.
    if (target === '/') return sendText(res, 200, 'connect2erp content server\n');
    if (target === '/metrics' && this.metrics !== undefined) return this.metrics.send(res);
    if (target === '/readyz') return sendText(res, this.stopping ? 503 : 200, this.stopping ? 'stopping\n' : 'ready\n');
    if (this.cors.answer(req, res)) return;
    if (this.stopping) res.setHeader('Connection', 'close');
    const started = process.hrtime.bigint();
    const wire = wireCounter(req);
    this.inFlight++;
    res.once('close', () => this.inFlight--);
    let url: ArchiveLinkUrl | undefined;
    try {
      if (this.inFlight > this.settings.server.maxRequestsInFlight) {
        res.setHeader('Retry-After', RETRY_AFTER_SECONDS);
        throw new ArchiveLinkError(STATUS.unavailable, 'more requests than this server takes at once; try again');
      }
      // A document link a person's browser follows (documents/linked.ts), under the same limits and log.
      if (target.startsWith(`${DOCUMENT_LINK_ROOT}/`))
        return await openLinkedDocument(req, res, this.connections, this.log);
      url = parseArchiveLinkUrl(target, this.settings.server.pathPrefix);
      if (url === undefined) throw new ArchiveLinkError(STATUS.notFound, 'no such path');
      const services = this.connections.get(url.connection);
      if (services === undefined)
        throw new ArchiveLinkError(STATUS.notFound, `connection ${url.connection} is not configured`);
      const methods = Object.keys(COMMANDS[url.command].signed);
      if (!methods.includes(req.method as string))
        throw new ArchiveLinkError(
          STATUS.badRequest,
          `${url.command} takes ${methods.join(' or ')}, not ${String(req.method)}`,
        );
      const { maxCertificateBytes, maxPartBytes } = this.settings.server;
      await this.handlers[url.command]({
        ...services,
        url,
        req,
        res,
        log: this.log,
        maxCertificateBytes,
        maxPartBytes,
      });
    } catch (error) {
      this.fail(req, res, url, error);
    } finally {
      this.access(req, res, url, started, wire);
    }
  }

  private fail(req: IncomingMessage, res: ServerResponse, url: ArchiveLinkUrl | undefined, error: unknown): void {
    // The client left (a download abandoned, an upload cut off): nobody to answer, nothing wrong here.
    if (clientGone(req)) return void res.destroy();
    const answer = protocolError(error);
    if (!(error instanceof ArchiveLinkError))
      this.log.error('request failed', { command: url?.command, docId: url?.get('docId'), error: String(error) });
    // An answer already under way (a stream cut by the repository) can only be broken off.
    if (res.headersSent) return void res.destroy();
    if (req.complete) res.setHeader('Connection', 'close');
    else this.linger(req);
    sendError(res, answer);
  }

  /**
   * The rest of a refused body is read and dropped, so that SAP reads the answer and not a reset
   * connection; after lingerSeconds the connection closes, whatever is still coming.
   */
  private linger(req: IncomingMessage): void {
    req.resume();
    const cut = setTimeout(() => req.socket.destroy(), this.settings.server.lingerSeconds * 1000);
    req.once('close', () => clearTimeout(cut));
  }

  /** One line per request, without the URL: its secKey is a credential, and its values may be personal. */
  private access(
    req: IncomingMessage,
    res: ServerResponse,
    url: ArchiveLinkUrl | undefined,
    started: bigint,
    wire: () => { received: number; sent: number },
  ): void {
    const done = (): void => {
      const gone = clientGone(req);
      // 499 (nginx's "client closed request") when the client left before its answer began.
      const status = gone && !res.headersSent ? 499 : res.statusCode;
      this.metrics?.answered(url?.command, status, wire());
      this.log.info('request', {
        method: req.method,
        connection: url?.connection,
        command: url?.command,
        contRep: url?.get('contRep'),
        docId: url?.get('docId'),
        compId: url?.get('compId'),
        signed: url?.get('secKey') !== undefined,
        status,
        clientGone: gone || undefined,
        error: res.getHeader('X-ErrorDescription'),
        ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
      });
    };
    finished(res, done);
  }
}
