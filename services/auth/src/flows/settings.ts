import type { ProjectId } from '@plinth/shared';
import { DEFAULT_AUTH_SETTINGS, type AuthSettings, type AuthSettingsPatch } from '../domain/auth-settings';
import { mergeProviders, publicProviders, type PublicProviderSettings } from '../domain/oauth-providers';
import type { UserStore } from '../store/user-store';

/** Auth settings as the settings API answers them: provider secrets left out. */
export type PublicAuthSettings = Omit<AuthSettings, 'providers'> & { providers: { [name: string]: PublicProviderSettings } };

export function publicSettings(settings: AuthSettings): PublicAuthSettings {
  return { ...settings, providers: publicProviders(settings.providers) };
}

/** Reads and writes a project's Auth settings, filling defaults for projects that never saved any. */
export class SettingsReader {
  /** `allowHttpIssuers`: provider addresses may be http (PLINTH_OAUTH_ALLOW_HTTP, local testing only). */
  constructor(
    private readonly users: UserStore,
    private readonly allowHttpIssuers = false,
  ) {}

  async get(project: ProjectId): Promise<AuthSettings> {
    return { ...DEFAULT_AUTH_SETTINGS, ...(await this.users.getSettings(project)) };
  }

  /**
   * Merges `patch` into the current settings (providers entry by entry) and stores the result;
   * `dryRun`: every check, nothing stored (`PATCH …/settings/auth?dry_run=true`).
   */
  async patch(project: ProjectId, patch: AuthSettingsPatch, dryRun = false): Promise<AuthSettings> {
    const current = await this.get(project);
    const { providers, ...rest } = patch;
    const next: AuthSettings = { ...current, ...rest };
    if (providers) next.providers = mergeProviders(current.providers, providers, this.allowHttpIssuers);
    if (!dryRun) await this.users.putSettings(project, next);
    return next;
  }
}
