import type { ProjectId } from '@plinth/shared';

/** What the mailer needs to know about a project to write its mail. */
export interface ProjectMailSettings {
  /** The sender, `Name <address>` or a bare address. */
  mail_from: string;
  /** Where links point; the token is appended as `?token=`. */
  redirect_url: string;
}

/**
 * Where the mailer learns a project's `mail_from` and `redirect_url`. Those are auth settings
 * (`/settings/auth`), owned by the auth service; the mailer cannot import auth, so whoever wires
 * the services passes a lookup in (`buildMailerService(…, { mailSettings })`). The default knows
 * no project and every mail uses the configured defaults (PLINTH_MAIL_FROM, PLINTH_PUBLIC_URL).
 */
export interface MailSettingsLookup {
  /**
   * The project's own values; a missing or null field means "use the default". Throws only when
   * the source is unreachable: the delivery then fails and the job is retried.
   */
  forProject(project: ProjectId): Promise<Partial<Record<keyof ProjectMailSettings, string | null>> | null>;
}

/** The lookup used until auth's settings are wired in: no project has its own values. */
export const noProjectMailSettings = {
  forProject: async () => null,
} satisfies MailSettingsLookup;

/**
 * The page Plinth serves itself for a project's links (the hosted action page): the gateway's
 * public URL (PLINTH_PUBLIC_URL) + `/v1/projects/{project}/auth/action`.
 */
export function hostedActionUrl(publicUrl: string, project: ProjectId): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(project)}/auth/action`;
}

/**
 * The project's settings with each missing value taken from the defaults. A project without
 * its own `redirect_url` gets the hosted action page under `defaults.redirect_url` (the public URL).
 */
export async function resolveMailSettings(
  lookup: MailSettingsLookup,
  defaults: ProjectMailSettings,
  project: ProjectId,
): Promise<ProjectMailSettings> {
  const own = await lookup.forProject(project);
  return {
    mail_from: own?.mail_from || defaults.mail_from,
    redirect_url: own?.redirect_url || hostedActionUrl(defaults.redirect_url, project),
  };
}
