import Joi from 'joi';
import { providersPatchSchema, type ProviderMap, type ProvidersPatch } from './oauth-providers';

/** Per-project Auth settings (docs/auth.md), `GET|PATCH /v1/projects/{p}/settings/auth`. */
export interface AuthSettings {
  enabled: boolean;
  /** Seconds an access token lives, 60–86400. */
  access_token_ttl: number;
  /** Seconds a refresh-token family lives after its last use, 3600–31536000. */
  refresh_token_ttl: number;
  /** An OTP request for an unknown e-mail creates a password-less user on redeem. */
  otp_creates_users: boolean;
  send_verification_on_signup: boolean;
  /** Where links in mails lead (the mailer appends the token); null: the mailer's default. */
  redirect_url: string | null;
  /** Sender of this project's mails; null: the mailer's default. */
  mail_from: string | null;
  /**
   * Seconds a sign-in (password or code) counts as recent proof for a sensitive change that
   * carries no password or code of its own (docs/auth.md "Recent proof"), 1–86400.
   */
  reauthentication_window: number;
  /** `POST /auth/anonymous` may create anonymous users (no address, no password). */
  allow_anonymous: boolean;
  /** Sign-in providers by name (docs/auth.md "Sign-in with a provider"); secrets are write-only. */
  providers: ProviderMap;
  /** Where the browser may be sent back after a provider sign-in (origin and path; at most 20). */
  redirect_urls: string[];
}

/** Body of PATCH settings/auth as validated: `providers` entries are merged (flows/oauth-settings.ts). */
export type AuthSettingsPatch = Partial<Omit<AuthSettings, 'providers'>> & { providers?: ProvidersPatch };

/** A new project: Auth disabled, 15-minute access tokens, 30-day refresh tokens, 10-minute recent proof, no anonymous users. */
export const DEFAULT_AUTH_SETTINGS: Readonly<AuthSettings> = Object.freeze({
  enabled: false,
  access_token_ttl: 900,
  refresh_token_ttl: 30 * 86_400,
  otp_creates_users: false,
  send_verification_on_signup: true,
  redirect_url: null,
  mail_from: null,
  reauthentication_window: 600,
  allow_anonymous: false,
  providers: {},
  redirect_urls: [],
});

/** Body of PATCH settings/auth: any subset of the fields, at least one. */
export const authSettingsPatchSchema = Joi.object<AuthSettingsPatch>({
  enabled: Joi.boolean().strict(),
  access_token_ttl: Joi.number().integer().strict().min(60).max(86_400),
  refresh_token_ttl: Joi.number().integer().strict().min(3600).max(365 * 86_400),
  otp_creates_users: Joi.boolean().strict(),
  send_verification_on_signup: Joi.boolean().strict(),
  redirect_url: Joi.string().uri({ scheme: ['http', 'https'] }).max(2048).allow(null),
  mail_from: Joi.string().email({ tlds: false }).max(254).allow(null),
  reauthentication_window: Joi.number().integer().strict().min(1).max(86_400),
  allow_anonymous: Joi.boolean().strict(),
  providers: providersPatchSchema,
  redirect_urls: Joi.array()
    .items(Joi.string().uri({ scheme: ['http', 'https'] }).max(2048).pattern(/^[^#]*$/, 'no fragment'))
    .max(20),
})
  .min(1)
  .messages({ 'object.min': 'must set at least one setting' });
