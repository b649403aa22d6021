import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asProjectId } from '@plinth/shared';
import { DEFAULT_TEMPLATES } from './default-templates';
import { createTemplateSource } from './template-source';

describe('createTemplateSource', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-templates-'));
    fs.mkdirSync(path.join(dir, 'acme'));
    fs.mkdirSync(path.join(dir, '_default'));
    fs.writeFileSync(path.join(dir, 'acme', 'verify.subject'), 'Welcome to Acme, {{to}}');
    fs.writeFileSync(path.join(dir, '_default', 'verify.html'), '<p>{{link}}</p>');
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("takes each part from the project's directory, then _default, then the built-in template", async () => {
    const source = createTemplateSource(dir);
    expect(await source.load(asProjectId('acme'), 'verify')).toEqual({
      subject: 'Welcome to Acme, {{to}}',
      txt: DEFAULT_TEMPLATES.verify.txt,
      html: '<p>{{link}}</p>',
    });
    expect(await source.load(asProjectId('globex'), 'verify')).toEqual({ ...DEFAULT_TEMPLATES.verify, html: '<p>{{link}}</p>' });
    expect(await source.load(asProjectId('acme'), 'reset')).toEqual(DEFAULT_TEMPLATES.reset);
  });

  it('picks up edited files without a restart', async () => {
    const source = createTemplateSource(dir);
    fs.writeFileSync(path.join(dir, 'acme', 'verify.subject'), 'Edited');
    expect((await source.load(asProjectId('acme'), 'verify')).subject).toBe('Edited');
  });

  it('uses the built-in templates when no directory is configured', async () => {
    expect(await createTemplateSource().load(asProjectId('acme'), 'otp')).toEqual(DEFAULT_TEMPLATES.otp);
  });
});
