/**
 * The operator API's part of moving a project between deployments (`plinth projects export` and
 * `import`, docs/operators.md "Moving a project"): `GET /v1/admin/projects/{p}/export` answers the
 * project and its keys as stored — SHA-256 hashes, never a key — and `POST
 * /v1/admin/projects/import` creates a project with such keys, so the keys the project's apps
 * hold keep working on the new deployment. The operator key or an operator of role admin or
 * owner (adminRoutes authenticates, `guard` checks the role).
 */
import { Router, type RequestHandler } from 'express';
import Joi from 'joi';
import { ConflictError, InvalidRequestError, NotFoundError, PROJECT_ID_PATTERN, asProjectId, isProjectId } from '@plinth/shared';
import { publicKeyView } from '../keys';
import type { ApiKeyKind, ProjectStore } from '../store/project-store';

/** A project has few keys; more than this in an archive is not a Plinth export. */
const MAX_IMPORTED_KEYS = 100;

interface PortableKey {
  id: string;
  kind: ApiKeyKind;
  hash: string;
  prefix: string;
  created_at: string;
}

const importSchema = Joi.object<{ project: { id: string; name: string; created_at: string }; keys: PortableKey[] }>({
  project: Joi.object({
    id: Joi.string().pattern(PROJECT_ID_PATTERN).required(),
    name: Joi.string().trim().min(1).max(200).required(),
    created_at: Joi.string().isoDate().max(40).required(),
  }).required(),
  keys: Joi.array()
    .items(
      Joi.object({
        id: Joi.string().pattern(/^key_[0-9a-z]{26}$/).required(),
        kind: Joi.string().valid('public', 'secret').required(),
        hash: Joi.string().pattern(/^[0-9a-f]{64}$/).required(),
        prefix: Joi.string().pattern(/^(pk|sk)_[A-Za-z0-9_-]{1,13}$/).required(),
        created_at: Joi.string().isoDate().max(40).required(),
      }),
    )
    .max(MAX_IMPORTED_KEYS)
    .unique('id')
    .unique('hash')
    .required(),
});

/** `guard`: who may (the operator key, or an operator of role admin or owner). */
export function adminPortabilityRoutes(store: ProjectStore, guard: RequestHandler): Router {
  const r = Router();

  r.get('/projects/:project/export', guard, async (req, res) => {
    const raw = req.params.project;
    if (!isProjectId(raw)) throw new NotFoundError('Unknown project.');
    const project = await store.getProject(raw);
    if (!project) throw new NotFoundError('Unknown project.');
    const keys = (await store.listKeys(raw)).map(({ id, kind, hash, prefix, created_at }) => ({ id, kind, hash, prefix, created_at }));
    res.json({ project, keys });
  });

  r.post('/projects/import', guard, async (req, res) => {
    const { value, error } = importSchema.validate(req.body ?? {}, { abortEarly: false });
    if (error) throw new InvalidRequestError('Invalid request body.', { fields: Object.fromEntries(error.details.map((d) => [d.path.join('.') || 'body', d.message])) });
    const id = asProjectId(value.project.id);
    const keys = value.keys.map((k) => ({ ...k, project: id }));
    // The same keys on two projects would make each key name either: refused, naming the holder.
    for (const k of keys) {
      const held = await store.findKeyByHash(k.hash);
      if (held) throw new ConflictError(`A key of this project (${k.prefix}…) is already a key of project ${held.project} on this deployment.`, { key_id: k.id });
    }
    // A taken id is 409 from the store; nothing is stored then.
    await store.createProject({ id, name: value.project.name, created_at: new Date(value.project.created_at).toISOString() }, keys);
    res.status(201).json({ project: await store.getProject(id), keys: keys.map(publicKeyView) });
  });

  return r;
}
