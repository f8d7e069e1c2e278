/**
 * Parser for the NXQL subset the job and the sandbox use:
 * SELECT * FROM types [WHERE cond] [ORDER BY prop [ASC|DESC], …].
 * Errors are `NxqlSyntaxError` with a message in the spirit of Nuxeo's parser.
 */
export type Literal =
  { kind: 'string'; value: string } | { kind: 'number'; value: number } | { kind: 'date'; value: string };

type Comparison = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Condition =
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; operand: Condition }
  | { kind: 'compare'; property: string; op: Comparison; value: Literal }
  | { kind: 'in'; property: string; negated: boolean; values: Literal[] }
  | { kind: 'between'; property: string; negated: boolean; low: Literal; high: Literal }
  | { kind: 'like'; property: string; negated: boolean; caseInsensitive: boolean; pattern: string }
  | { kind: 'startswith'; property: string; prefix: string }
  | { kind: 'null'; property: string; negated: boolean };

interface OrderBy {
  property: string;
  descending: boolean;
}

export interface Query {
  types: string[];
  where?: Condition;
  orderBy: OrderBy[];
}

export class NxqlSyntaxError extends Error {}

type Token =
  | { type: 'keyword'; value: string; pos: number }
  | { type: 'ident'; value: string; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'number'; value: number; pos: number }
  | { type: 'punct'; value: string; pos: number }
  | { type: 'end'; value: ''; pos: number };

const KEYWORDS = new Set([
  'SELECT',
  'FROM',
  'WHERE',
  'AND',
  'OR',
  'NOT',
  'IN',
  'LIKE',
  'ILIKE',
  'STARTSWITH',
  'IS',
  'NULL',
  'BETWEEN',
  'ASC',
  'DESC',
  'DATE',
  'TIMESTAMP',
  'ORDER BY',
]);
const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t' };

/** NXQL accepts keywords in UPPER, lower or Capitalised case only. */
function keywordOf(word: string): string | undefined {
  const upper = word.toUpperCase();
  if (!KEYWORDS.has(upper)) return undefined;
  const capitalised = upper
    .split(' ')
    .map((w) => w[0] + w.slice(1).toLowerCase())
    .join(' ');
  return [upper, word.toLowerCase(), capitalised].includes(word) ? upper : undefined;
}

function readString(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let value = '';
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i];
    if (ch === quote) return { value, end: i + 1 };
    if (ch === '\\' && i + 1 < text.length) {
      const next = text[i + 1];
      if (next === quote || next === '\\') value += next;
      else if (ESCAPES[next] !== undefined) value += ESCAPES[next];
      else value += `\\${next}`;
      i++;
      continue;
    }
    value += ch;
  }
  throw new NxqlSyntaxError(`unterminated string literal at position ${start}`);
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const orderBy = /^(ORDER BY|order by|Order By|Order by)\b/;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const rest = text.slice(i);
    const ob = orderBy.exec(rest);
    if (ob) {
      tokens.push({ type: 'keyword', value: 'ORDER BY', pos: i });
      i += ob[0].length;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const { value, end } = readString(text, i);
      tokens.push({ type: 'string', value, pos: i });
      i = end;
      continue;
    }
    const op = /^(<>|!=|<=|>=|=|<|>|\(|\)|,|\*)/.exec(rest);
    if (op) {
      tokens.push({ type: 'punct', value: op[0] === '!=' ? '<>' : op[0], pos: i });
      i += op[0].length;
      continue;
    }
    const num = /^-?\d+(\.\d+)?/.exec(rest);
    if (num) {
      tokens.push({ type: 'number', value: Number(num[0]), pos: i });
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_][\w:/*.-]*/.exec(rest);
    if (!word) throw new NxqlSyntaxError(`unexpected character '${ch}' at position ${i}`);
    const keyword = keywordOf(word[0]);
    tokens.push(keyword ? { type: 'keyword', value: keyword, pos: i } : { type: 'ident', value: word[0], pos: i });
    i += word[0].length;
  }
  tokens.push({ type: 'end', value: '', pos: text.length });
  return tokens;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP_RE = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(\.\d{1,3})?)(Z|[+-]\d{2}:\d{2})?$/;

/** DATE and TIMESTAMP literals become ISO instants in UTC; a timestamp without zone is UTC. */
function toInstant(keyword: string, text: string): string {
  if (keyword === 'DATE') {
    if (!DATE_RE.test(text)) throw new NxqlSyntaxError(`invalid DATE literal '${text}'`);
    return `${text}T00:00:00.000Z`;
  }
  const m = TIMESTAMP_RE.exec(text);
  if (!m) throw new NxqlSyntaxError(`invalid TIMESTAMP literal '${text}'`);
  const parsed = new Date(`${m[1]}T${m[2]}${m[4] ?? 'Z'}`);
  return parsed.toISOString();
}

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    return this.tokens[this.index++];
  }

  private fail(expected: string): never {
    const token = this.peek();
    const found = token.type === 'end' ? 'end of query' : `'${String(token.value)}'`;
    throw new NxqlSyntaxError(`expected ${expected} but found ${found} at position ${token.pos}`);
  }

  private acceptKeyword(value: string): boolean {
    const token = this.peek();
    if (token.type !== 'keyword' || token.value !== value) return false;
    this.index++;
    return true;
  }

  private expectKeyword(value: string): void {
    if (!this.acceptKeyword(value)) this.fail(value);
  }

  private acceptPunct(value: string): boolean {
    const token = this.peek();
    if (token.type !== 'punct' || token.value !== value) return false;
    this.index++;
    return true;
  }

  private expectPunct(value: string): void {
    if (!this.acceptPunct(value)) this.fail(`'${value}'`);
  }

  private ident(): string {
    const token = this.peek();
    if (token.type !== 'ident') this.fail('a property name');
    this.index++;
    return token.value;
  }

  private stringLiteral(): string {
    const token = this.peek();
    if (token.type !== 'string') this.fail('a string literal');
    this.index++;
    return token.value;
  }

  parseQuery(): Query {
    this.expectKeyword('SELECT');
    this.expectPunct('*');
    this.expectKeyword('FROM');
    const types = [this.ident()];
    while (this.acceptPunct(',')) types.push(this.ident());
    const where = this.acceptKeyword('WHERE') ? this.parseOr() : undefined;
    const orderBy: OrderBy[] = [];
    if (this.acceptKeyword('ORDER BY')) {
      do {
        const property = this.ident();
        const descending = this.acceptKeyword('DESC');
        if (!descending) this.acceptKeyword('ASC');
        orderBy.push({ property, descending });
      } while (this.acceptPunct(','));
    }
    if (this.peek().type !== 'end') this.fail('end of query');
    return { types, where, orderBy };
  }

  parseCondition(): Condition {
    const condition = this.parseOr();
    if (this.peek().type !== 'end') this.fail('end of condition');
    return condition;
  }

  private parseOr(): Condition {
    let left = this.parseAnd();
    while (this.acceptKeyword('OR')) left = { kind: 'or', left, right: this.parseAnd() };
    return left;
  }

  private parseAnd(): Condition {
    let left = this.parseNot();
    while (this.acceptKeyword('AND')) left = { kind: 'and', left, right: this.parseNot() };
    return left;
  }

  private parseNot(): Condition {
    if (this.acceptKeyword('NOT')) return { kind: 'not', operand: this.parseNot() };
    if (this.acceptPunct('(')) {
      const inner = this.parseOr();
      this.expectPunct(')');
      return inner;
    }
    return this.parsePredicate();
  }

  private literal(): Literal {
    const token = this.next();
    if (token.type === 'string') return { kind: 'string', value: token.value };
    if (token.type === 'number') return { kind: 'number', value: token.value };
    if (token.type === 'keyword' && (token.value === 'DATE' || token.value === 'TIMESTAMP')) {
      return { kind: 'date', value: toInstant(token.value, this.stringLiteral()) };
    }
    this.index--;
    return this.fail('a literal');
  }

  private parsePredicate(): Condition {
    const property = this.ident();
    const token = this.peek();
    if (token.type === 'punct' && ['=', '<>', '<', '<=', '>', '>='].includes(token.value)) {
      this.index++;
      return { kind: 'compare', property, op: token.value as Comparison, value: this.literal() };
    }
    if (this.acceptKeyword('IS')) {
      const negated = this.acceptKeyword('NOT');
      this.expectKeyword('NULL');
      return { kind: 'null', property, negated };
    }
    if (this.acceptKeyword('STARTSWITH')) return { kind: 'startswith', property, prefix: this.stringLiteral() };
    const negated = this.acceptKeyword('NOT');
    if (this.acceptKeyword('IN')) {
      this.expectPunct('(');
      const values = [this.literal()];
      while (this.acceptPunct(',')) values.push(this.literal());
      this.expectPunct(')');
      return { kind: 'in', property, negated, values };
    }
    if (this.acceptKeyword('BETWEEN')) {
      const low = this.literal();
      this.expectKeyword('AND');
      return { kind: 'between', property, negated, low, high: this.literal() };
    }
    const like = this.peek();
    if (like.type === 'keyword' && (like.value === 'LIKE' || like.value === 'ILIKE')) {
      this.index++;
      return {
        kind: 'like',
        property,
        negated,
        caseInsensitive: like.value === 'ILIKE',
        pattern: this.stringLiteral(),
      };
    }
    return this.fail('an operator');
  }
}

export function parseQuery(text: string): Query {
  return new Parser(tokenize(text)).parseQuery();
}

/** Parse a bare condition, as written in a task's `filter`. */
export function parseCondition(text: string): Condition {
  return new Parser(tokenize(text)).parseCondition();
}
