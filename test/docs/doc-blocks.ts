/**
 * Reads the runnable parts of a Markdown doc: every ```sh fence, in order, and inside them the
 * expectation comments `# → <status> [<json shown>]` that follow a command. Other fences
 * (```text, ```json, ```ts, …) are prose to the runner and never run.
 */
import { parseShown, type Shape } from './shown-json';

export interface Expectation {
  /** 1-based line of the `# →` comment in the doc. */
  line: number;
  status: number;
  /** The keys the doc shows; null when the comment shows only a status (or no JSON). */
  shape: Shape | null;
}

export interface DocLine {
  /** 1-based line in the doc. */
  line: number;
  /** The shell text to run for this line (an expectation becomes a call of `__expect`). */
  text: string;
}

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  lines: DocLine[];
  expectations: Expectation[];
}

const FENCE = /^\s*```+\s*([\w-]*)/;
const EXPECT = /^\s*#\s*→\s*(\d{3})\b\s*(.*)$/;
const RUNNABLE = new Set(['sh']);

/** Whether the brackets of `text` (outside strings) are all closed. */
function balanced(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return depth <= 0;
}

export function extractBlocks(markdown: string): DocBlock[] {
  const src = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let current: DocBlock | null = null;
  let inOther = false;
  let expectIndex = 0;
  for (let i = 0; i < src.length; i++) {
    const raw = src[i]!;
    const fence = FENCE.exec(raw);
    if (fence) {
      if (current) {
        blocks.push(current);
        current = null;
      } else if (inOther) {
        inOther = false;
      } else if (RUNNABLE.has(fence[1]!)) {
        current = { line: i + 1, lines: [], expectations: [] };
      } else {
        inOther = true;
      }
      continue;
    }
    if (!current) continue;
    const m = EXPECT.exec(raw);
    if (!m) {
      current.lines.push({ line: i + 1, text: raw });
      continue;
    }
    // The JSON shown may continue on the next comment lines while its brackets are open.
    let shown = m[2]!.trim();
    const start = i;
    if (shown.startsWith('{') || shown.startsWith('[')) {
      while (!balanced(shown) && i + 1 < src.length && /^\s*#/.test(src[i + 1]!)) {
        i++;
        shown += ` ${src[i]!.replace(/^\s*#/, '').trim()}`;
      }
    }
    const idx = expectIndex++;
    current.expectations.push({ line: start + 1, status: Number(m[1]), shape: parseShown(shown) });
    current.lines.push({ line: start + 1, text: `__expect ${start + 1} ${m[1]} ${idx}` });
    for (let k = start + 1; k <= i; k++) current.lines.push({ line: k + 1, text: '' });
  }
  if (current) throw new Error(`unclosed \`\`\`sh fence opened at line ${current.line}`);
  return blocks;
}
