import { Router } from 'express';
import Joi from 'joi';
import { randomBytes } from 'node:crypto';
import {
  NotFoundError,
  PROJECT_ID_PATTERN,
  asProjectId,
  isProjectId,
  parseBody,
  type ProjectId,
} from '@plinth/shared';
import { generateKey, publicKeyView } from '../keys';
import { adminPortabilityRoutes } from './admin-portability';
import type { KeyAuthenticator } from '../key-authenticator';
import type { ProjectDeletion } from '../purge/project-deletion';
import type { ProjectStore } from '../store/project-store';
import { authenticateOperator, need } from '../operators/admin-auth';
import type { AuditLog } from '../operators/audit-log';
import type { OperatorAuth } from '../operators/operator-auth';
import { auditRoutes } from './audit';
import { validate } from './validate';
import { operatorRoutes } from './operators';
import { sessionRoutes, signInRoute } from './operator-sessions';

export interface AdminDeps {
  store: ProjectStore;
  keys: KeyAuthenticator;
  operators: OperatorAuth;
  audit: AuditLog;
  deletion: ProjectDeletion;
  /** PLINTH_PUBLIC_URL as this gateway knows it (undefined in a cluster gateway without it). */
  publicUrl?: string;
}

const createProjectSchema = Joi.object({
  id: Joi.string().pattern(PROJECT_ID_PATTERN).messages({
    'string.pattern.base': '"id" must start with a letter and use 3–40 lower-case letters, digits or dashes',
  }),
  name: Joi.string().trim().min(1).max(200),
});
const createKeySchema = Joi.object({ kind: Joi.string().valid('public', 'secret').required() });

function projectParam(raw: string | undefined): ProjectId {
  if (!isProjectId(raw)) throw new NotFoundError('Unknown project.');
  return raw;
}

function generatedProjectId(): ProjectId {
  return asProjectId(`p-${randomBytes(6).toString('hex')}`);
}

/**
 * The operator API (docs/operators.md, docs/api-conventions.md "Credentials"), under /v1/admin:
 * sign-in, then — with a named operator's session or the bootstrap operator key — projects and
 * keys (admin to change), operators (owner), sessions and the audit log.
 */
export function adminRoutes(deps: AdminDeps): Router {
  const { store, keys } = deps;
  const r = Router();
  r.use(signInRoute(deps));
  r.use(authenticateOperator(deps));
  r.use(parseBody());
  r.use(sessionRoutes(deps));
  r.use(operatorRoutes(deps));
  r.use(auditRoutes(deps));

  // What the server believes about itself, for `plinth doctor` (docs/cli.md).
  r.get('/server', (_req, res) => {
    res.json({ public_url: deps.publicUrl ?? null });
  });

  r.post('/projects', need('admin'), async (req, res) => {
    const body = validate(createProjectSchema, req.body);
    const id = body.id ? asProjectId(body.id) : generatedProjectId();
    const now = new Date();
    const pub = generateKey(id, 'public', now);
    const sec = generateKey(id, 'secret', now);
    const project = { id, name: body.name ?? id, created_at: now.toISOString() };
    await store.createProject(project, [pub.record, sec.record]);
    res.status(201).json({ project, keys: { public: pub.value, secret: sec.value } });
  });

  // Key hashes out, keys in: for admins (a viewer reads projects, not what would let it copy one).
  r.use(adminPortabilityRoutes(store, need('admin')));

  r.get('/projects', async (_req, res) => {
    res.json({ projects: await store.listProjects() });
  });

  r.get('/projects/:project', async (req, res) => {
    const id = projectParam(String(req.params.project));
    const project = await store.getProject(id);
    if (!project) throw new NotFoundError('Unknown project.');
    res.json({ project, keys: (await store.listKeys(id)).map(publicKeyView) });
  });

  // The project and its keys go at once; its data is purged from every service before the id
  // can be created again (`purge: "pending"` when a service could not be reached yet: retried).
  r.delete('/projects/:project', need('admin'), async (req, res) => {
    const id = projectParam(String(req.params.project));
    const purge = await deps.deletion.delete(id);
    if (!purge) throw new NotFoundError('Unknown project.');
    res.json({ deleted: true, id, purge });
  });

  r.post('/projects/:project/keys', need('admin'), async (req, res) => {
    const id = projectParam(String(req.params.project));
    const { kind } = validate(createKeySchema, req.body);
    const key = generateKey(id, kind as 'public' | 'secret');
    if (!(await store.addKey(key.record))) throw new NotFoundError('Unknown project.');
    res.status(201).json({ key: { ...publicKeyView(key.record), value: key.value } });
  });

  r.delete('/projects/:project/keys/:keyId', need('admin'), async (req, res) => {
    const id = projectParam(String(req.params.project));
    const keyId = String(req.params.keyId);
    if (!(await store.deleteKey(id, keyId))) throw new NotFoundError('Unknown key.');
    await keys.forget();
    res.json({ deleted: true, id: keyId });
  });

  return r;
}
