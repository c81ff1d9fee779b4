/**
 * The domain's errors: every code a rule can refuse with, named once. A code is a stable string that knows
 * nothing of HTTP or of the command line; each caller turns it into its own answer (the API's error catalogue
 * into Postmark's ErrorCode and an HTTP status, the admin console into a sentence and an exit code).
 *
 * The list is a value, not only a type, so a caller can check at run time that it answers every code.
 */
export const DOMAIN_ERROR_CODES = [
  // A send request's validation (returned by validateSendRequest / validateBatchSize, not thrown).
  'IncompatibleJson',
  'InvalidEmailRequest',
  'InvalidMessageStream',
  'ForbiddenAttachmentType',
  'PayloadTooLarge',
  'TooManyBatchMessages',
  // Messages.
  'MessageAlreadyAccepted',
  'AllRecipientsSuppressed',
  'MessageIdMismatch',
  'OrganizationMismatch',
  'MessageNotAccepted',
  'MessageNotSent',
  'RecipientNotInMessage',
  'InvalidRetryInput',
  // Suppressions.
  'InvalidEmailAddress',
  'InvalidSuppressionOrigin',
  // API keys: the token a request carries and the keys an organization issues.
  'InvalidApiToken',
  'InsufficientScope',
  'InvalidApiKeySecret',
  'InvalidApiKeyId',
  'InvalidApiKeyMode',
  'InvalidApiKeyName',
  'ApiKeyAlreadyExists',
  'ApiKeyNotFound',
  'ApiKeyAlreadyRevoked',
  'InvalidKeyHash',
  'DuplicateKeyHash',
  'InvalidKeyPrefix',
  'NoScopes',
  'UnknownScope',
  'DuplicateScope',
  // Organizations, members, domains, allowance.
  'OrganizationNotFound',
  'OrganizationAlreadyExists',
  'InvalidOrganizationId',
  'InvalidOrganizationName',
  'InvalidEmail',
  'InvalidRole',
  'MemberAlreadyExists',
  'MemberNotFound',
  'CannotRemoveLastAdmin',
  'RoleNotAllowed',
  'InvalidDomainName',
  'DomainAlreadyAdded',
  'DomainNotFound',
  'DomainVerificationFailed',
  'InvalidVerificationToken',
  'InvalidDkimSelector',
  'InvalidDkimPublicKey',
  'InvalidDkimPrivateKey',
  'InvalidMailHost',
  'InvalidReturnPathLabel',
  'ReturnPathAlreadyAssigned',
  'ReturnPathNotAssigned',
  'ReturnPathVerificationFailed',
  'InvalidAllowance',
  'InvalidTimestamp',
  // Webhooks.
  'InvalidWebhookId',
  'WebhookAlreadyExists',
  'WebhookNotFound',
  'InvalidWebhookUrl',
  'WebhookUrlNotAllowed',
  'InvalidWebhookHttpAuth',
  'InvalidWebhookHeaders',
  'InvalidWebhookTriggers',
  'InvalidWebhookSecret',
  'InvalidWebhookDisabling',
  'TooManyWebhooks',
  // Templates.
  'TemplateNotFound',
  'TooManyTemplates',
  'InvalidTemplateId',
  'TemplateModelMissing',
  'TemplateFieldMissing',
  'TemplateFieldTooLarge',
  'InvalidTemplateField',
  'TemplateFieldNotAllowed',
  'LayoutInUse',
  'InvalidLayoutContent',
  // Inbound mail: server settings, inbound rules, inbound messages.
  'InvalidInboundHash',
  'InvalidInboundDomain',
  'InvalidInboundSpamThreshold',
  'InboundDomainTaken',
  'InboundDomainNotSet',
  'InboundDomainChanged',
  'InboundDomainVerificationFailed',
  'InvalidInboundRule',
  'InvalidInboundRuleId',
  'InboundRuleIdTaken',
  'InboundRuleAlreadyExists',
  'InboundRuleNotFound',
  'TooManyInboundRules',
  'InboundMessageNotFound',
  'InboundMessageNotBlocked',
  'InboundMessageNotFailed',
  // A caller broke the command envelope's contract.
  'MissingEventId',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** A rule that a command broke: one of the codes above, a message for people, and details for the answer. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
