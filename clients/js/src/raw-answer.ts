/** An answer, read whole: what the transport's `request` turns into a result or a `PlinthError`, whether fetch or XMLHttpRequest sent it. */
export interface RawAnswer {
  status: number;
  ok: boolean;
  requestId: string | null;
  text: string;
  header(name: string): string | null;
}
