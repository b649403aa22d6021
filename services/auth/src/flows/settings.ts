import type { ProjectId } from '@plinth/shared';
import { DEFAULT_AUTH_SETTINGS, type AuthSettings } from '../domain/auth-settings';
import type { UserStore } from '../store/user-store';

/** Reads and writes a project's Auth settings, filling defaults for projects that never saved any. */
export class SettingsReader {
  constructor(private readonly users: UserStore) {}

  async get(project: ProjectId): Promise<AuthSettings> {
    return { ...DEFAULT_AUTH_SETTINGS, ...(await this.users.getSettings(project)) };
  }

  /** Merges `patch` into the current settings and stores the result. */
  async patch(project: ProjectId, patch: Partial<AuthSettings>): Promise<AuthSettings> {
    const next = { ...(await this.get(project)), ...patch };
    await this.users.putSettings(project, next);
    return next;
  }
}
