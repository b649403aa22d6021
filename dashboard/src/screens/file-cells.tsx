import { useEffect, useState } from 'preact/hooks';
import { projectPath, type FieldDefinition, type FileMeta, type Json } from '../api';

/** Images a browser shows inline (the server serves these `inline`; files.md "Downloading"). */
const PREVIEWABLE = /^image\/(png|jpeg|gif|webp|avif|bmp)$/;
/** Without a thumbnail size, an image larger than this is linked rather than previewed. */
const MAX_PREVIEW_BYTES = 2 * 1024 * 1024;

/**
 * A file's bytes, fetched with the dashboard's credential in the Authorization header. The
 * dashboard never puts a file token in a URL: a token asked for with its secret-key rights would
 * read as an anonymous caller (files.md "File tokens"), and a URL with a credential leaks into
 * history and logs. So previews are `data:` URLs (the dashboard's CSP allows `img-src data:`) and
 * downloads go through a `blob:` link made on click.
 */
async function fetchFile(key: string, url: string): Promise<Blob> {
  const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.blob();
}

function dataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** The files a field's value holds (one for `file`, a list for `files`). */
export function filesIn(v: Json | undefined): FileMeta[] {
  const list = Array.isArray(v) ? v : v && typeof v === 'object' ? [v] : [];
  return list.filter((f): f is FileMeta & { [k: string]: Json } => typeof f === 'object' && f !== null && !Array.isArray(f) && typeof f.name === 'string');
}

export function fileUrl(project: string, collection: string, recordId: string, name: string, thumb?: string): string {
  const q = thumb ? `?${new URLSearchParams({ thumb }).toString()}` : '';
  return projectPath(project, `/files/${encodeURIComponent(collection)}/${encodeURIComponent(recordId)}/${encodeURIComponent(name)}${q}`);
}

function Preview(props: { credential: string; url: string; label: string }) {
  const [src, setSrc] = useState<string | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    fetchFile(props.credential, props.url)
      .then(dataUrl)
      .then((u) => live && setSrc(u), () => live && setFailed(true));
    return () => {
      live = false;
    };
  }, [props.credential, props.url]);
  if (failed) return <span>{props.label} (no preview)</span>;
  return src ? <img class="file-preview" alt={props.label} src={src} /> : <span aria-busy="true">{props.label}</span>;
}

/** Saves a file under its original name: fetched with the credential, handed to the browser as a blob link. */
async function save(credential: string, url: string, name: string): Promise<void> {
  const href = URL.createObjectURL(await fetchFile(credential, url));
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

/** A table cell of a file field: image previews (its first thumbnail size when it has one), download links for every file. */
export function FileCell(props: { project: string; collection: string; recordId: string; def: FieldDefinition; value: Json | undefined; credential: string }) {
  const [error, setError] = useState<string | null>(null);
  const files = filesIn(props.value);
  if (files.length === 0) return null;
  return (
    <span class="files">
      {files.map((f) => {
        const label = f.original_name || f.name;
        const url = fileUrl(props.project, props.collection, props.recordId, f.name);
        const thumb = props.def.thumbs?.[0];
        const preview = PREVIEWABLE.test(f.type) && (thumb !== undefined || f.size <= MAX_PREVIEW_BYTES);
        return (
          <a
            key={f.name}
            href={url}
            title={`${label} (${f.type}, ${f.size} bytes): download`}
            onClick={(e) => {
              e.preventDefault();
              setError(null);
              save(props.credential, url, label).catch((err: unknown) => setError(`${label}: ${String((err as Error).message)}`));
            }}
          >
            {preview ? <Preview credential={props.credential} url={fileUrl(props.project, props.collection, props.recordId, f.name, thumb)} label={label} /> : label}
          </a>
        );
      })}
      {error && <span role="alert">{error}</span>}
    </span>
  );
}

/** The upload control of a file field in the record form: the files it holds, and the file(s) to send. */
export function FileInput(props: { name: string; label: string; def: FieldDefinition; value: Json | undefined; onChange: (files: File[]) => void }) {
  const held = filesIn(props.value);
  return (
    <label>
      {props.label}
      {held.length > 0 && <span class="hint"> holds {held.map((f) => f.original_name || f.name).join(', ')}; choose to replace</span>}
      <input
        name={props.name}
        type="file"
        multiple={props.def.type === 'files'}
        accept={props.def.mime_types?.length ? props.def.mime_types.join(',') : undefined}
        onChange={(e) => props.onChange([...((e.currentTarget as HTMLInputElement).files ?? [])])}
      />
    </label>
  );
}
