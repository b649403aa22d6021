import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRecordsClient, ResumableUploadError, type FileMeta, type RecordsClient, type UploadSessionInfo } from '../src/records';
import { startSdkFixture, type SdkFixture } from './fixture';

const MiB = 1024 * 1024;

/**
 * Resumable uploads through the SDK against a real standalone Plinth: a part whose connection
 * drops half-way is not kept by the server; resuming the session sends only the missing parts,
 * and the file attached to the record is byte for byte the original.
 */
describe('@plinth/client resumable uploads', () => {
  let f: SdkFixture;
  let sent: string[];
  /** When set, the next PUT of this part sends half its body and then drops the connection. */
  let cutPart: number | null = null;

  /** A fetch that can drop a part's connection mid-body (through node:http, so the server really sees half a body). */
  const fetchWithCuts: typeof fetch = async (input, init) => {
    const url = String(input);
    const m = /\/parts\/(\d+)$/.exec(url);
    if (init?.method === 'PUT' && m) sent.push(m[1]!);
    if (init?.method === 'PUT' && m && Number(m[1]) === cutPart) {
      cutPart = null;
      const body = Buffer.from(await (init.body as Blob).arrayBuffer());
      await new Promise<void>((resolve) => {
        const req = http.request(url, { method: 'PUT', headers: { ...(init.headers as Record<string, string>), 'Content-Length': String(body.length) } });
        req.on('error', () => resolve());
        req.write(body.subarray(0, body.length >> 1), () => setTimeout(() => {
          req.destroy();
          resolve();
        }, 50));
      });
      throw new TypeError('fetch failed');
    }
    return fetch(input, init);
  };

  let client: RecordsClient;
  beforeAll(async () => {
    f = await startSdkFixture();
    await f.admin.collections.create({ name: 'videos', fields: { title: { type: 'text' }, clip: { type: 'file', max_size: 64 * MiB } } });
    client = createRecordsClient({ url: f.url, project: f.project, key: f.sk, fetch: fetchWithCuts });
  }, 30_000);
  afterAll(async () => {
    client.close();
    await f.close();
  });

  it('a part cut off mid-way is resumed: only the missing parts are sent again and the attached file is the original', async () => {
    const bytes = randomBytes(11 * MiB);
    const videos = client.collection<{ title?: string; clip?: FileMeta }>('videos');
    const record = await videos.create({ title: 'holiday' });
    sent = [];
    cutPart = 2;
    let session: UploadSessionInfo | null = null;
    const first = videos.uploadResumable(record.id, 'clip', new Blob([bytes]), { retries: 0, onSession: (s) => (session = s) });
    await expect(first).rejects.toBeInstanceOf(ResumableUploadError);
    const err = (await first.catch((e: unknown) => e)) as ResumableUploadError;
    expect(session).toMatchObject({ parts: 3, part_size: 5 * MiB, size: bytes.length });
    expect(err.uploadId).toBe(session!.id);
    expect(sent).toEqual(['1', '2']);

    // The server kept part 1 only: the half of part 2 that arrived is not a part.
    const status = await fetch(`${f.url}/v1/projects/${f.project}/files/uploads/${err.uploadId}`, { headers: { Authorization: `Bearer ${f.sk}` } });
    expect(await status.json()).toMatchObject({ upload: { id: err.uploadId }, received: [1] });

    sent = [];
    const progress: number[] = [];
    const updated = await videos.uploadResumable(record.id, 'clip', new Blob([bytes]), { uploadId: err.uploadId, onProgress: (p) => progress.push(p.loaded) });
    expect(sent).toEqual(['2', '3']);
    expect(progress).toEqual([10 * MiB, bytes.length]);
    expect(updated).toMatchObject({ id: record.id, title: 'holiday', clip: { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } });

    const res = await fetch(videos.fileUrl(updated, 'clip'), { headers: { Authorization: `Bearer ${f.sk}` } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    // The session is gone once the file is attached.
    const after = await fetch(`${f.url}/v1/projects/${f.project}/files/uploads/${err.uploadId}`, { headers: { Authorization: `Bearer ${f.sk}` } });
    expect(after.status).toBe(404);
  });

  it('a session is refused up front for a file over the field’s max_size or a field that holds no files', async () => {
    const videos = client.collection('videos');
    const record = await videos.create({ title: 'too big' });
    await expect(videos.uploadResumable(record.id, 'clip', new Blob([new Uint8Array(65 * MiB)]))).rejects.toMatchObject({ status: 413 });
    await expect(videos.uploadResumable(record.id, 'title', new Blob(['x']))).rejects.toMatchObject({ status: 400, details: { field: 'title' } });
  });
});
