import type { FileInputs } from './types';

/** A `multipart/form-data` record write: the `data` part (JSON) and one part per file, named after its field. */
export function recordForm(data: unknown, files: FileInputs): FormData {
  const form = new FormData();
  form.append('data', JSON.stringify(data ?? {}));
  for (const [field, value] of Object.entries(files)) {
    for (const file of Array.isArray(value) ? value : [value]) {
      const name = (file as { name?: unknown }).name;
      form.append(field, file, typeof name === 'string' && name ? name : field);
    }
  }
  return form;
}
