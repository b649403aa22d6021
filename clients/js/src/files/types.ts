/** What a record's `file` field holds (a `files` field holds a list of these); never the bytes. */
export type { FileMeta } from '@plinth/protocol';

/** A file to upload: a `Blob` or `File` (in Node 20, `new Blob([bytes])` or `fs.openAsBlob(path)`). */
export type FileInput = Blob;

/** Per file field, the file (a `file` field) or files (a `files` field) to upload. */
export type FileInputs = { [field: string]: FileInput | FileInput[] };

/** How much of an upload's body has been sent. */
export interface UploadProgress {
  loaded: number;
  /** The body's size in bytes (multipart framing included). */
  total: number;
}

/** What a record write with files accepts besides the data. */
export interface UploadOptions {
  /** The files, by field. */
  files?: FileInputs;
  /**
   * Called as the body is sent. In browsers the upload then goes through `XMLHttpRequest`,
   * whose upload events report progress; without it (and in Node) through `fetch`.
   */
  onProgress?: (progress: UploadProgress) => void;
}

/** A short-lived token for `?token=` in `fileUrl` (e.g. for `<img src>`, which cannot send headers). */
export interface FileToken {
  token: string;
  expires_at: string;
}

export interface FileUrlOptions {
  /** A thumbnail size the field declares in `thumbs`, e.g. `100x100`. */
  thumb?: string;
  /** A file token from `files.token()`; needed wherever the request cannot carry headers. */
  token?: string | FileToken;
}
