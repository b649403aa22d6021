import Joi from 'joi';
import type { JsonValue } from '@plinth/shared';
import { RESERVED_CLAIMS } from '../tokens/access-tokens';
import { MAX_USER_CLAIMS_BYTES } from '../store/user-store';

/** A claim name rules can read as `auth.token.<name>`: an identifier, at most 64 characters. */
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Names that mean something to JavaScript objects; never accepted as claim names. */
const UNSAFE_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `claims` of `PATCH /users/{id}`: a JSON object of at most 1000 bytes whose names are
 * identifiers, not reserved (iss, sub, aud, exp, nbf, iat, jti, sid, email, email_verified,
 * anonymous, aal, kid, typ, alg) and not `__proto__`/`constructor`/`prototype`. `{}` removes every claim.
 */
export const userClaimsSchema = Joi.object<{ [name: string]: JsonValue }>()
  .unknown(true)
  .custom((v: { [name: string]: JsonValue }, helpers) => {
    const names = Object.keys(v);
    const reserved = names.filter((k) => RESERVED_CLAIMS.has(k));
    if (reserved.length > 0) return helpers.message({ custom: `must not use reserved names: ${reserved.join(', ')}` });
    const bad = names.filter((k) => !CLAIM_NAME.test(k) || UNSAFE_NAMES.has(k));
    if (bad.length > 0) return helpers.message({ custom: `names must be identifiers of at most 64 characters (not ${bad.join(', ')})` });
    if (Buffer.byteLength(JSON.stringify(v)) > MAX_USER_CLAIMS_BYTES) {
      return helpers.message({ custom: `must be at most ${MAX_USER_CLAIMS_BYTES} bytes of JSON` });
    }
    return v;
  });
