/**
 * CSV export of a records query: every page (not only the one shown), read in the browser with
 * the query's where, search and order, as RFC 4180 CSV.
 */
import { call, type Json, type RecordDoc } from '../api';
import { listParams, type Query } from './records-query';

/** The most records one export reads (100 pages of 1000); a larger query is refused, not cut short. */
export const EXPORT_MAX_RECORDS = 100_000;
const PAGE = 1000;

/** One CSV field: text as is, other values as JSON, a missing value empty; quoted when it holds `"`, `,`, CR or LF. */
export function csvField(v: Json | undefined): string {
  const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header row and one row per record, CRLF-terminated (RFC 4180). */
export function toCsv(columns: string[], records: RecordDoc[]): string {
  const line = (cells: string[]) => `${cells.join(',')}\r\n`;
  return line(columns.map(csvField)) + records.map((r) => line(columns.map((c) => csvField(r[c])))).join('');
}

/**
 * Reads every page of the query (1000 a page); `onProgress` gets the count read so far. The
 * first page asks for the total, so a query over the limit is refused before reading on.
 */
export async function readAll(secret: string, base: string, q: Query, onProgress: (n: number) => void): Promise<RecordDoc[]> {
  const all: RecordDoc[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(listParams(q, { cursor, limit: PAGE, count: cursor === null }));
    const page: { records: RecordDoc[]; cursor: string | null; total?: number } = await call(secret, 'GET', `${base}?${params.toString()}`);
    if ((page.total ?? 0) > EXPORT_MAX_RECORDS || all.length + page.records.length > EXPORT_MAX_RECORDS) {
      throw new Error(`The query matches more than ${EXPORT_MAX_RECORDS} records: narrow it to export.`);
    }
    all.push(...page.records);
    onProgress(all.length);
    cursor = page.cursor;
  } while (cursor);
  return all;
}

/** Hands `text` to the browser as a download named `name`. */
export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
