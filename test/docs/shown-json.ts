/**
 * The JSON a doc shows after `# → <status>` is abbreviated for readers: `…` (or `...`) stands
 * for omitted members or elements, and strings like "usr_…" for values that vary. This module
 * reads that text leniently into the *shape* it shows — which keys, nested how — and checks an
 * actual body against it: every key shown must be present (values are not compared), objects
 * must be objects, arrays arrays, and an array showing N elements must hold at least N.
 */
export type Shape =
  | { kind: 'object'; keys: Array<[string, Shape]> }
  | { kind: 'array'; items: Shape[] }
  | { kind: 'value' };

type Token = { t: 'punct'; v: string } | { t: 'string'; v: string } | { t: 'bare'; v: string };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if ('{}[]:,'.includes(c)) {
      out.push({ t: 'punct', v: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\') j++;
        s += text[j] ?? '';
        j++;
      }
      out.push({ t: 'string', v: s });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s{}[\]:,"]/.test(text[j]!)) j++;
      out.push({ t: 'bare', v: text.slice(i, j) });
      i = j;
    }
  }
  return out;
}

const isEllipsis = (tok: Token | undefined): boolean => tok?.t === 'bare' && /^(…|\.\.\.)$/.test(tok.v);

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}
  private peek(): Token | undefined {
    return this.toks[this.i];
  }
  private punct(v: string): boolean {
    const t = this.peek();
    if (t?.t === 'punct' && t.v === v) {
      this.i++;
      return true;
    }
    return false;
  }
  value(): Shape {
    if (this.punct('{')) return this.object();
    if (this.punct('[')) return this.array();
    // A scalar: one string, or bare words up to the next delimiter (numbers, true, "eyJ…" …).
    const t = this.peek();
    if (t?.t === 'string') this.i++;
    else while (this.peek()?.t === 'bare') this.i++;
    return { kind: 'value' };
  }
  private object(): Shape {
    const keys: Array<[string, Shape]> = [];
    while (this.peek() && !this.punct('}')) {
      if (this.punct(',')) continue;
      const t = this.peek()!;
      if (isEllipsis(t) || t.t !== 'string') {
        this.i++;
        continue;
      }
      this.i++;
      if (!this.punct(':')) throw new Error(`expected ":" after "${t.v}"`);
      keys.push([t.v, this.value()]);
    }
    return { kind: 'object', keys };
  }
  private array(): Shape {
    const items: Shape[] = [];
    while (this.peek() && !this.punct(']')) {
      if (this.punct(',')) continue;
      if (isEllipsis(this.peek())) {
        this.i++;
        continue;
      }
      items.push(this.value());
    }
    return { kind: 'array', items };
  }
}

/** The shape shown by `text`, or null when it shows no JSON (a status alone, or prose). */
export function parseShown(text: string): Shape | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  return new Parser(tokenize(trimmed)).value();
}

/** The first difference between `actual` and the shape shown, as a path and a reason; null if none. */
export function shapeMismatch(shape: Shape, actual: unknown, path = '$'): string | null {
  if (shape.kind === 'value') return null;
  if (shape.kind === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return `${path}: expected an object`;
    for (const [key, sub] of shape.keys) {
      if (!Object.prototype.hasOwnProperty.call(actual, key)) return `${path}: missing key "${key}"`;
      const m = shapeMismatch(sub, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (m) return m;
    }
    return null;
  }
  if (!Array.isArray(actual)) return `${path}: expected an array`;
  if (actual.length < shape.items.length) return `${path}: expected at least ${shape.items.length} element(s), got ${actual.length}`;
  for (let k = 0; k < shape.items.length; k++) {
    const m = shapeMismatch(shape.items[k]!, actual[k], `${path}[${k}]`);
    if (m) return m;
  }
  return null;
}
