import { BusinessRefusal } from '../../common/errors.js';
import type { RfcFaultDetail } from './soap.js';

/** An ABAP exception: the business said no. Permanent; the name and SAP's message are kept. */
export class RfcFault extends BusinessRefusal {
  /** SAP's message class and number, e.g. `OA403`; empty when the fault carries none. */
  readonly messageKey: string;

  constructor(
    readonly functionName: string,
    readonly fault: RfcFaultDetail,
  ) {
    const key = fault.messageId === undefined ? '' : `${fault.messageId}${String(fault.messageNumber)}`;
    super(
      fault.runtime === true && fault.exception === fault.text
        ? `${functionName}: SAP's SOAP runtime refused the call: ${fault.text}`
        : `${functionName} raised ${fault.exception}${key === '' ? '' : ` (${key})`}: ${fault.text}`,
      { target: functionName },
    );
    this.messageKey = key;
  }
}
