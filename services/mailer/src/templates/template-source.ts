import fs from 'node:fs/promises';
import path from 'node:path';
import type { MailKind, ProjectId } from '@plinth/shared';
import { DEFAULT_TEMPLATES, TEMPLATE_PARTS, type MailTemplate, type TemplatePart } from './default-templates';

/** Where a project's templates come from. */
export interface TemplateSource {
  /** The template for one project and kind; each part falls back to the built-in one. */
  load(project: ProjectId, kind: MailKind): Promise<MailTemplate>;
}

/** The directory of overrides shared by every project (not a valid project id, so no clash). */
export const SHARED_OVERRIDES = '_default';

async function readOptional(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Templates from a directory, without code changes or restarts (files are read per mail):
 * `<dir>/<project>/<kind>.<part>`, else `<dir>/_default/<kind>.<part>`, else built-in, where
 * part is `subject`, `txt` or `html`. With no directory, built-in templates only.
 */
export function createTemplateSource(dir?: string): TemplateSource {
  return {
    async load(project, kind) {
      const template: MailTemplate = { ...DEFAULT_TEMPLATES[kind] };
      if (!dir) return template;
      await Promise.all(
        TEMPLATE_PARTS.map(async (part: TemplatePart) => {
          const own = await readOptional(path.join(dir, project, `${kind}.${part}`));
          const found = own ?? (await readOptional(path.join(dir, SHARED_OVERRIDES, `${kind}.${part}`)));
          if (found !== null) template[part] = found;
        }),
      );
      return template;
    },
  };
}
