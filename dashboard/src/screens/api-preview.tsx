import { CopyButton } from '../ui';
import { listParams, whereOf, type Query } from './records-query';

/** Where the preview's code reads the key from: never the dashboard's own key. */
export const KEY_PLACEHOLDER = '$PLINTH_KEY';

/** `s` as one shell word in single quotes (a `'` inside becomes `'\''`). */
const sh = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The query as a curl command (the first page, with the total), the key read from $PLINTH_KEY. */
export function curlCommand(origin: string, project: string, collection: string, q: Query): string {
  const url = `${origin}/v1/projects/${encodeURIComponent(project)}/collections/${encodeURIComponent(collection)}/records`;
  const lines = [`curl -s -G ${sh(url)}`, `-H "Authorization: Bearer ${KEY_PLACEHOLDER}"`, ...listParams(q, { count: true }).map(([k, v]) => `--data-urlencode ${sh(`${k}=${v}`)}`)];
  return lines.join(' \\\n  ');
}

/** The same query with `@plinth/client` (runs as an ES module in Node ≥ 20 with PLINTH_KEY set). */
export function sdkCode(origin: string, project: string, collection: string, q: Query): string {
  const s = JSON.stringify;
  const chain = [
    ...whereOf(q).map(([f, op, v]) => `.where(${s(f)}, ${s(op)}, ${s(v)})`),
    ...(q.search.trim() ? [`.search(${s(q.search)})`] : []),
    ...(q.orderBy ? [`.orderBy(${s(q.orderBy)}, ${s(q.direction)})`] : []),
    `.limit(${q.limit})`,
    '.get({ count: true });',
  ];
  return [
    "import { createClient } from '@plinth/client';",
    '',
    '// PLINTH_KEY: a key of this project, from the environment (never written in code).',
    `const plinth = createClient({ url: ${s(origin)}, project: ${s(project)}, key: process.env.PLINTH_KEY ?? '' });`,
    `const page = await plinth`,
    `  .collection(${s(collection)})`,
    ...chain.map((c) => `  ${c}`),
    'console.log(page.total, page.records);',
    'plinth.close();',
  ].join('\n');
}

/** The records screen's current query as curl and as SDK code, to copy into a terminal or an app. */
export function ApiPreview(props: { project: string; collection: string; query: Query }) {
  const curl = curlCommand(location.origin, props.project, props.collection, props.query);
  const sdk = sdkCode(location.origin, props.project, props.collection, props.query);
  return (
    <section class="panel" role="region" aria-label="API preview">
      <h2>API preview</h2>
      <p class="hint">
        The query the table shows (its first page and total). <code>{KEY_PLACEHOLDER}</code> stands for a key of this project: a secret key sees every
        record, a public key only what the read rule allows. The dashboard's own key is never put here.
      </p>
      <h3>curl</h3>
      <pre aria-label="curl command">{curl}</pre>
      <CopyButton text={curl} label="Copy curl" />
      <h3>SDK (@plinth/client)</h3>
      <pre aria-label="SDK code">{sdk}</pre>
      <CopyButton text={sdk} label="Copy SDK code" />
    </section>
  );
}
