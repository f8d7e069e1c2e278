import type { Dispatcher } from 'undici';
import type { ErpSystemConfig } from '../config/erp-schema.js';
import { FunctionRefusalError, SystemFailureError, SystemRefusalError } from '../../common/errors.js';
import { readBounded } from '../bounded-body.js';
import { RfcFault } from './rfc-fault.js';
import { answerTooLarge, networkFailure, statusFailure } from './failure.js';
import { CertificateCheck } from './certificate-check.js';
import { NEVER, StopAwareQueue } from '../stop.js';
import { basicAuthorization, dispatcherFor, requestTarget } from '../http-options.js';
import type { Logger } from '../log.js';
import type { ErpConnection, PlannedCall } from '../ports/erp-port.js';
import { parseAnswer, requestEnvelope, type RfcParams } from './soap.js';
import { isWebPage, WEB_PAGE } from '../web-page.js';

/**
 * Faults that are not the business's answer. The function module refused (its lane's): a missing
 * S_RFC authorisation (RFC_NO_AUTHORITY, or SYSTEM_FAILURE with message 00 341) or a function module
 * that does not exist (FU_NOT_FOUND). A runtime error (SYSTEM_FAILURE, COMMUNICATION_FAILURE), from
 * the document's data or the system: decided by sending the document alone.
 */
const FUNCTION_REFUSED = new Set(['RFC_NO_AUTHORITY', 'FU_NOT_FOUND']);
const NO_RFC_AUTHORITY = '00341';
const RUNTIME_FAULTS = new Set(['SYSTEM_FAILURE', 'COMMUNICATION_FAILURE']);

/**
 * Calls remote-enabled function modules through SAP's SOAP-RFC service
 * (`POST …/sap/bc/soap/rfc?sap-client=NNN`): no proprietary SDK. Calls to one system
 * share one concurrency limit. Never retried here: the task decides, per use case, what is safe.
 * undici rather than got, as the repository's client: a call is one POST with Basic
 * authentication, no session to keep, and got cost three to four times its CPU per call
 * (BENCHMARKS.md, "One knob, links per second…": CPU per call). The Rest client keeps got for its cookie jar.
 */
export interface RfcRequest {
  functionName: string;
  params: RfcParams;
}

interface RfcAnswer {
  status: number;
  body: string;
  location?: string;
  webPage: boolean;
}

export class RfcClient implements ErpConnection<RfcRequest> {
  private readonly dispatcher: Dispatcher;
  /** The service's origin and path with the client (and language) in its query, as every call is sent. */
  private readonly target: { origin: string; path: string };
  private readonly headers: Record<string, string>;
  private readonly limit: StopAwareQueue;
  /** Set when the system signs in with a client certificate: checked before the first call. */
  private readonly certificate?: CertificateCheck;

  constructor(
    readonly system: ErpSystemConfig & { rfc: NonNullable<ErpSystemConfig['rfc']> },
    private readonly log: Logger,
    stop = NEVER,
  ) {
    const { rfc } = system;
    this.limit = new StopAwareQueue(system.maxConcurrentCalls, stop);
    const url = new URL(rfc.url);
    url.searchParams.set('sap-client', system.client);
    if (system.language !== undefined) url.searchParams.set('sap-language', system.language);
    this.target = requestTarget(url);
    this.headers = {
      ...('type' in rfc.auth ? {} : { authorization: basicAuthorization(rfc.auth) }),
      'content-type': 'text/xml; charset=utf-8',
      soapaction: '',
    };
    this.dispatcher = dispatcherFor(system.rfc.url, system);
    if ('type' in rfc.auth) {
      const head = async (): Promise<number> => {
        const answer = await this.dispatcher.request({ ...this.target, method: 'HEAD' });
        await answer.body.dump();
        return answer.statusCode;
      };
      this.certificate = new CertificateCheck(head, `the SOAP-RFC service of ${system.name}`, system);
    }
  }

  describe(request: RfcRequest): PlannedCall {
    return { system: this.system.name, call: request.functionName, params: request.params };
  }

  async send({ functionName, params }: RfcRequest): Promise<Record<string, unknown>> {
    return this.limit.run(`${functionName} on ${this.system.name}`, async () => {
      this.log.debug('rfc call', { system: this.system.name, functionName });
      await this.certificate?.passed();
      let answer: RfcAnswer | undefined;
      try {
        const response = await this.dispatcher.request({
          ...this.target,
          method: 'POST',
          headers: this.headers,
          body: requestEnvelope(functionName, params),
        });
        const { location } = response.headers;
        const body = await readBounded(response.body);
        answer =
          body === undefined
            ? undefined
            : {
                status: response.statusCode,
                body: body.toString('utf8'),
                location: typeof location === 'string' ? location : undefined,
                webPage: isWebPage(response.headers['content-type']),
              };
      } catch (error) {
        throw networkFailure(error, `${functionName} on ${this.system.name}`, this.system.name);
      }
      if (answer === undefined) throw answerTooLarge(`${functionName} on ${this.system.name}`);
      return this.answer(functionName, answer);
    });
  }

  private answer(functionName: string, { status, body, location, webPage }: RfcAnswer): Record<string, unknown> {
    const where = `${functionName} on ${this.system.name}`;
    const details = { status, target: functionName };
    // The service answers in place; a redirect is the address, never the document's fault (not followed: the credentials stay with rfc.url).
    if (status >= 300 && status < 400)
      throw new SystemRefusalError(
        `${where}: HTTP ${status}, redirected to ${location ?? 'no address'}: set rfc.url of system ${this.system.name} in erpHttp.yaml to the SOAP-RFC service's own address`,
        details,
      );
    if (status === 401)
      throw new SystemRefusalError(
        `${where}: SAP refused the credentials (HTTP 401); check rfc.auth in erpHttp.yaml`,
        details,
      );
    const answer = parseAnswer(functionName, body);
    if (answer.kind === 'response') return answer.values;
    if (answer.kind === 'fault') {
      const fault = new RfcFault(functionName, answer.fault);
      if (FUNCTION_REFUSED.has(answer.fault.exception) || fault.messageKey === NO_RFC_AUTHORITY)
        throw new FunctionRefusalError(
          `${fault.message} (not the document's fault: the task's calls to ${this.system.name} stop, its documents wait for the next run)`,
          details,
        );
      if (RUNTIME_FAULTS.has(answer.fault.exception)) throw new SystemFailureError(fault.message, details);
      throw fault;
    }
    // The ICF's own page: the service is inactive in SICF, or the user may not use it.
    if (status === 403)
      throw new SystemRefusalError(
        `${where}: HTTP 403, not a SOAP answer: is the service /sap/bc/soap/rfc active in SICF, and may the user call it?`,
        details,
      );
    // No service at that address: rfc.url is wrong, for every document alike.
    if (status === 404)
      throw new SystemRefusalError(
        `${where}: HTTP 404, not a SOAP answer: set rfc.url of system ${this.system.name} in erpHttp.yaml to the SOAP-RFC service's address (…/sap/bc/soap/rfc)`,
        details,
      );
    // A page where SOAP belongs, for every call alike: a proxy's or single sign-on's login.
    if (status < 300 && webPage)
      throw new SystemRefusalError(
        `${where}: ${WEB_PAGE} (rfc.url and rfc.auth of system ${this.system.name} in erpHttp.yaml)`,
        details,
      );
    throw statusFailure(status, where, ': not a SOAP-RFC answer (is the SICF service /sap/bc/soap/rfc active?)');
  }
}
