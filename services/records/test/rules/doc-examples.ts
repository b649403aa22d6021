/**
 * The worked examples of docs/rules.md: each collection's fields and rules, shared by the
 * in-memory tests (examples.test.ts) and the through-the-gateway tests (api/rules-api.int.test.ts).
 */
import type { CollectionRules, FieldDefinition } from '@plinth/shared';

export interface DocExample {
  name: string;
  fields: { [field: string]: FieldDefinition };
  rules: CollectionRules;
}

export const OWNER_ONLY: DocExample = {
  name: 'notes',
  fields: { owner: { type: 'text', required: true }, body: { type: 'text' } },
  rules: {
    read: 'auth != null && record.owner == auth.uid',
    create: 'auth != null && data.owner == auth.uid',
    update: 'record.owner == auth.uid && data.owner == record.owner',
    delete: 'record.owner == auth.uid',
  },
};

export const PUBLIC_READ_OWNER_WRITE: DocExample = {
  name: 'posts',
  fields: { author: { type: 'text', required: true }, published: { type: 'boolean' } },
  rules: {
    read: 'record.published || record.author == auth.uid',
    create: 'data.author == auth.uid',
    update: 'record.author == auth.uid && data.author == record.author',
    delete: 'record.author == auth.uid',
  },
};

export const VERIFIED_EMAIL_ONLY: DocExample = {
  name: 'reviews',
  fields: { owner: { type: 'text' }, stars: { type: 'integer' } },
  rules: {
    read: 'auth.email_verified',
    create: 'auth.email_verified && data.owner == auth.uid',
  },
};

export const ROLE_CLAIMS: DocExample = {
  name: 'tickets',
  fields: { owner: { type: 'text' }, status: { type: 'text' } },
  rules: {
    read: 'auth.claims.role == "admin" || record.owner == auth.uid',
    create: 'auth != null && data.owner == auth.uid',
    delete: 'auth.claims.role == "admin"',
  },
};
