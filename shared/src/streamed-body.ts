/**
 * Bodies that are streamed, not read whole (docs/architecture.md "Streamed uploads"): a
 * multipart record create or update carries files of up to 2 GiB, so neither the gateway nor the
 * service may buffer it, and the gateway cannot hash it before forwarding it. Such a request is
 * signed for its declared length instead of its digest (`stream-<bytes>`): the service accepts
 * that credential only on these routes, only with a `Content-Length` equal to the signed one
 * (HTTP framing then stops the body there), and enforces every limit while the bytes arrive.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** `POST …/collections/{c}/records` and `PATCH …/collections/{c}/records/{id}`. */
const CREATE_PATH = /^\/v1\/projects\/[^/]+\/collections\/[^/]+\/records\/?(\?.*)?$/;
const UPDATE_PATH = /^\/v1\/projects\/[^/]+\/collections\/[^/]+\/records\/[^/:]+\/?(\?.*)?$/;
/** `PUT …/files/uploads/{id}/parts/{n}`: a part of a resumable upload (raw bytes, any type). */
const PART_PATH = /^\/v1\/projects\/[^/]+\/files\/uploads\/[^/]+\/parts\/[^/]+\/?(\?.*)?$/;
/** `PUT …/files/{c}/{id}/{name}`: a stored file's bytes brought in with its project (operators only, raw bytes). */
const FILE_PATH = /^\/v1\/projects\/[^/]+\/files\/[^/]+\/[^/]+\/[^/?]+\/?(\?.*)?$/;
const STREAM_DIGEST = /^stream-(\d{1,16})$/;

/** Whether this request's body is a multipart record write, an upload part or an imported file, streamed rather than read whole. */
export function isStreamedBody(method: string | undefined, path: string, headers: IncomingHttpHeaders): boolean {
  if (method === 'PUT' && (PART_PATH.test(path) || FILE_PATH.test(path))) return true;
  if (!/^multipart\/form-data\s*;/i.test(headers['content-type'] ?? '')) return false;
  return (method === 'POST' && CREATE_PATH.test(path)) || (method === 'PATCH' && UPDATE_PATH.test(path));
}

/** The body "digest" a streamed request is signed with: its declared length. */
export function streamedDigest(contentLength: number): string {
  return `stream-${contentLength}`;
}

/** Whether a credential signed for `digest` covers this streamed request's declared length. */
export function coversStreamedBody(digest: string | undefined, headers: IncomingHttpHeaders): boolean {
  const m = digest === undefined ? null : STREAM_DIGEST.exec(digest);
  if (!m || headers['transfer-encoding'] !== undefined) return false;
  return headers['content-length'] === m[1];
}
