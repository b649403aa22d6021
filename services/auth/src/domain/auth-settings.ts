import Joi from 'joi';
import type { AuthSettings as WireAuthSettings } from '@plinth/protocol';
import { providersPatchSchema, type ProviderSettings, type ProvidersPatch } from './oauth-providers';

/**
 * Per-project Auth settings (docs/auth.md), `GET|PATCH /v1/projects/{p}/settings/auth`: the
 * wire type of @plinth/protocol, holding each provider as stored (with its secret; the API
 * answers publicProviders).
 */
export type AuthSettings = WireAuthSettings<ProviderSettings>;

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
