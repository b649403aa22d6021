import type { InternalClient, ProjectId } from '@plinth/shared';
import type { MailSettingsLookup, ProjectMailSettings } from './mail-settings';

type AuthSettingsBody = Partial<Record<keyof ProjectMailSettings, unknown>>;

const stringOrNull = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * Reads a project's `mail_from` and `redirect_url` from the auth service's
 * `GET /v1/projects/{p}/settings/auth` (a signed internal call, as the secret key; cluster mode:
 * `AUTH_URL`). Read for every mail, so a settings change applies to the next mail. Auth
 * unreachable → the call throws and the delivery is retried.
 */
export class AuthServiceMailSettings implements MailSettingsLookup {
  constructor(private readonly auth: InternalClient) {}

  async forProject(project: ProjectId): Promise<Partial<Record<keyof ProjectMailSettings, string | null>>> {
    const body = await this.auth.getJson<AuthSettingsBody>(project, 'secret', `/v1/projects/${project}/settings/auth`);
    return { mail_from: stringOrNull(body.mail_from), redirect_url: stringOrNull(body.redirect_url) };
  }
}
