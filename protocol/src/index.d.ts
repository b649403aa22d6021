/**
 * Plinth's wire types, one declaration for the server, the SDK and the dashboard
 * (docs/architecture.md, "Packages: the wire types and the SDK"). Declarations only: nothing here runs.
 */
export type { JsonValue } from './json';
export type { ErrorCode, ErrorDetails, ErrorEnvelope } from './errors';
export type { Collection, CollectionRules, FieldDefinition, FieldType, FileMeta, OnDelete, RecordDoc, SystemFields } from './records';
export type { AuditActorKind, AuditEntry, HashedProjectKey, Operator, OperatorRole, OperatorSession, Project, ProjectKey } from './operators';
export type { DeliveryStatus, Webhook, WebhookDelivery, WebhookEventType } from './webhooks';
export type { Session, User, UserStatus } from './users';
export type { AuthProviderView, AuthSettings } from './auth-settings';
export type { ClientMessage, DeliveredEvent, EventKind, ServerMessage, SubscribeMessage } from './realtime';
