import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { STATUS } from './protocol/protocol.js';

/** What undici publishes of a request (`undici:request:*`): only its identity is used here. */
interface UndiciMessage {
  request: { method: string };
  response?: { statusCode: number };
}

/**
 * `serve`'s metrics at `/metrics` (Prometheus text): requests per command and status, bytes on the
 * wire each way, refusals for security (401: unsigned, expired, a signature that does not verify),
 * and how long the repository takes to begin its answers. The repository's timing comes from
 * undici's diagnostics channels, which every request of this process to the repository passes.
 * Names follow Prometheus' conventions (base units, `_total`, `_seconds`).
 */
export class ServeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter;
  private readonly bytes: Counter;
  private readonly securityRefusals: Counter;
  private readonly repository: Histogram;
  private readonly started = new WeakMap<object, bigint>();
  private readonly onCreate = (message: unknown): void =>
    void this.started.set((message as UndiciMessage).request, process.hrtime.bigint());
  private readonly onHeaders = (message: unknown): void => this.observe(message as UndiciMessage, 'answered');
  private readonly onError = (message: unknown): void => this.observe(message as UndiciMessage, 'failed');

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'connect2erp_serve_' });
    this.requests = new Counter({
      name: 'connect2erp_serve_requests_total',
      help: 'Requests answered, per ArchiveLink command (empty for other paths) and HTTP status (499: the client left)',
      labelNames: ['command', 'status'],
      registers,
    });
    this.bytes = new Counter({
      name: 'connect2erp_serve_bytes_total',
      help: 'Bytes on the wire per ArchiveLink command, received from clients and sent to them',
      labelNames: ['command', 'direction'],
      registers,
    });
    this.securityRefusals = new Counter({
      name: 'connect2erp_serve_security_refusals_total',
      help: 'Requests refused with 401: unsigned where a signature is needed, expired, wrong access mode, a signature that does not verify',
      labelNames: ['command'],
      registers,
    });
    this.repository = new Histogram({
      name: 'connect2erp_serve_repository_request_seconds',
      help: 'Time from a repository request to the beginning of its answer, per method and outcome',
      labelNames: ['method', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    subscribe('undici:request:create', this.onCreate);
    subscribe('undici:request:headers', this.onHeaders);
    subscribe('undici:request:error', this.onError);
  }

  /** Counts a request once its answer is over; `wire` is what its connection carried meanwhile. */
  answered(command: string | undefined, status: number, wire: { received: number; sent: number }): void {
    const label = command ?? '';
    this.requests.inc({ command: label, status: String(status) });
    if (status === STATUS.securityBreach) this.securityRefusals.inc({ command: label });
    this.bytes.inc({ command: label, direction: 'received' }, wire.received);
    this.bytes.inc({ command: label, direction: 'sent' }, wire.sent);
  }

  async send(res: ServerResponse): Promise<void> {
    const text = await this.registry.metrics();
    res.writeHead(200, { 'Content-Type': this.registry.contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  stop(): void {
    unsubscribe('undici:request:create', this.onCreate);
    unsubscribe('undici:request:headers', this.onHeaders);
    unsubscribe('undici:request:error', this.onError);
  }

  private observe({ request, response }: UndiciMessage, outcome: 'answered' | 'failed'): void {
    const started = this.started.get(request);
    if (started === undefined) return;
    this.started.delete(request);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.repository.observe(
      { method: request.method, outcome: response ? String(response.statusCode) : outcome },
      seconds,
    );
  }
}

/** What each connection had carried when its last request ended. */
const counted = new WeakMap<Socket, { received: number; sent: number }>();

/**
 * The bytes a request's connection carries from the end of its previous request (or its start)
 * to `done`: the request's head and body, its answer. (The head is read before the request is
 * handed over, so counting from the handler's start would miss it.)
 */
export function wireCounter(req: IncomingMessage): () => { received: number; sent: number } {
  const { socket } = req;
  return () => {
    const before = counted.get(socket) ?? { received: 0, sent: 0 };
    const now = { received: socket.bytesRead, sent: socket.bytesWritten };
    counted.set(socket, now);
    return { received: now.received - before.received, sent: now.sent - before.sent };
  };
}
