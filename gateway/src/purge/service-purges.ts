import { InternalClient, purgePath, type BuiltService, type ProjectId } from '@plinth/shared';

/**
 * One place that holds data of a project and must forget it when the operator deletes the
 * project. The gateway calls every one of them, in order, until all have succeeded. A new
 * service that stores per-project data adds itself to the list (standalone-compose.ts for the
 * in-process services, main.ts for the cluster's service URLs).
 */
export interface ServicePurge {
  /** For logs: the service, and in cluster mode the replica's URL. */
  name: string;
  /** Deletes everything of the project. Idempotent; throws when it could not finish. */
  purge(project: ProjectId): Promise<void>;
}

/** Standalone: the services run in this process; their purge functions are called directly. */
export function inProcessPurges(services: BuiltService[]): ServicePurge[] {
  return services.flatMap((s) => {
    const purge = s.purge;
    return purge ? [{ name: s.name, purge }] : [];
  });
}

/**
 * Cluster: a signed `POST /v1/projects/{p}/purge` to every URL given for each service, so every
 * replica listed also drops what it caches of the project. The gateway routes no public request
 * to that path.
 */
export function httpPurges(services: Array<[name: string, urls: string[]]>, internalSecret: string, timeoutMs: number): ServicePurge[] {
  return services.flatMap(([name, urls]) =>
    urls.map((url) => {
      const client = new InternalClient({ baseUrl: url, internalSecret, timeoutMs });
      return {
        name: `${name} ${url}`,
        purge: async (project: ProjectId) => {
          await client.send(project, 'secret', 'POST', purgePath(project));
        },
      };
    }),
  );
}
