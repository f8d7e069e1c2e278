import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { OPERATIONS, type Operation, type OperationContext, type OperationResult } from './automation.js';
import { RepositoryError, type StoredDoc } from './store.js';
import { asArray } from '../../common/nuxeo/schemas.js';

/**
 * Automation chains as Nuxeo runs them (nuxeo-automation-core, 2021 and 2023), read from the
 * components a package contributes to OperationServiceComponent's `chains` point:
 *
 * - each operation's output is the next one's input; an operation whose method takes no input
 *   (Repository.GetDocument) ignores it (InvokableMethod.inputMatch, VOID_PRIORITY);
 * - a value starting with `expr:` is an MVEL expression (OperationChainContribution); the sandbox
 *   evaluates only `ChainParameters['name']` and `Context['name']` and refuses any other (500),
 *   so that a chain it cannot check is never taken for one that works;
 * - the request's params are ChainParameters (OperationContext.callWithChainParameters), read
 *   from JSON by JsonRequestReader: text, numbers and booleans as such, an object as a Jackson
 *   ObjectNode. An operation parameter the chain leaves unset is filled from a chain parameter of
 *   its name, then from a context variable of its name (OperationTypeImpl.resolveObject);
 * - a `properties` parameter given an object reads it through JsonNodeToProperties: text as it is,
 *   numbers and booleans as their text, null as the text "null", `[]` as null, a longer list
 *   joined with commas, a nested object as its JSON; a `string` parameter given anything but text
 *   fails ("No type adapter found", 500);
 * - a `document` parameter takes a document, its uid or its path;
 * - Context.SetInputAsVar keeps the input in a variable and passes it on (the one Context
 *   operation the sandbox runs; any other operation it does not have fails as an unknown one, 404).
 * The whole call is one transaction (the caller runs it in Store.transaction): a failure anywhere
 * leaves nothing of it.
 */
export interface Chain {
  id: string;
  operations: Array<{ id: string; params: Array<{ name: string; type: string; value: string }> }>;
}

interface ParamXml {
  name: string;
  type?: string;
  '#text'?: string;
}

// Values stay text: `false` and `12` are what the XML says, typed by the param's `type` as Nuxeo does.
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false });

/** Every chain contributed by the components (`*.xml` but the deployment fragment) of an OSGI-INF folder. */
export function loadChains(osgiDir: string): Map<string, Chain> {
  const chains = new Map<string, Chain>();
  for (const file of readdirSync(osgiDir).filter((f) => f.endsWith('.xml') && f !== 'deployment-fragment.xml')) {
    const component = (xml.parse(readFileSync(join(osgiDir, file), 'utf8')) as { component?: Record<string, unknown> })
      .component;
    for (const extension of asArray(component?.extension as Array<Record<string, unknown>> | undefined)) {
      if (extension.point !== 'chains') continue;
      for (const chain of asArray(extension.chain as Array<Record<string, unknown>> | undefined)) {
        const operations = asArray(chain.operation as Array<Record<string, unknown>> | undefined).map((op) => ({
          id: String(op.id),
          params: asArray(op.param as ParamXml[] | ParamXml | undefined).map((p) => ({
            name: p.name,
            type: p.type ?? 'string',
            value: p['#text'] ?? '',
          })),
        }));
        chains.set(String(chain.id), { id: String(chain.id), operations });
      }
    }
  }
  return chains;
}

type ChainInput = Omit<OperationContext, 'params'> & { chainParameters: Record<string, unknown> };

/** Run a chain: its last operation's output is the answer. */
export function runChain(chain: Chain, start: ChainInput): OperationResult {
  const vars = new Map<string, unknown>();
  let [input, inputIsList] = [start.input, start.inputIsList];
  let output: OperationResult = null;
  for (const op of chain.operations) {
    const explicit = Object.fromEntries(op.params.map((p) => [p.name, paramValue(p, start.chainParameters, vars)]));
    if (op.id === 'Context.SetInputAsVar') {
      vars.set(String(explicit.name), inputIsList ? input : input[0]);
      continue;
    }
    const operation = OPERATIONS[op.id] as Operation | undefined;
    if (operation === undefined) throw new RepositoryError(404, `Failed to invoke operation: ${chain.id}`);
    const params = { ...Object.fromEntries(vars), ...start.chainParameters, ...explicit };
    output = operation({ ...start, input, inputIsList, params });
    [input, inputIsList] = documentsOf(output);
  }
  return output;
}

/** An operation's output as the next one's input: documents, or nothing (a page of results, or void). */
function documentsOf(output: OperationResult): [StoredDoc[], boolean] {
  if (Array.isArray(output)) return [output, true];
  return output === null || 'page' in output ? [[], false] : [[output], false];
}

function paramValue(
  param: { name: string; type: string; value: string },
  chainParameters: Record<string, unknown>,
  vars: Map<string, unknown>,
): unknown {
  const value = param.value.startsWith('expr:') ? evaluate(param.value.slice(5), chainParameters, vars) : param.value;
  if (param.type === 'boolean') return String(value).toLowerCase() === 'true';
  // The operation reads it as Nuxeo adapts it: key=value text, or an object (JsonNodeToProperties).
  if (param.type === 'properties') return value;
  if (param.type === 'document') return isDocument(value) ? value.uid : value;
  // `string`, and the types no chain of the package uses, as text.
  if (value !== undefined && typeof value !== 'string')
    throw new RepositoryError(500, `No type adapter found for input: ${typeof value} and output String`);
  return value;
}

function isDocument(value: unknown): value is StoredDoc {
  return typeof value === 'object' && value !== null && 'uid' in value;
}

/** `ChainParameters['name']` or `Context['name']`, nothing else. */
function evaluate(expression: string, chainParameters: Record<string, unknown>, vars: Map<string, unknown>): unknown {
  const match = /^\s*(ChainParameters|Context)\['([^']*)'\]\s*$/.exec(expression);
  if (match === null) throw new RepositoryError(500, `the sandbox does not evaluate the expression ${expression}`);
  return match[1] === 'Context' ? vars.get(match[2]) : chainParameters[match[2]];
}
