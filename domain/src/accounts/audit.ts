import type { TemplateEvent } from '../templates/templates';
import type { AccountEvent } from './organization';

/** What the console's audit lists: every account event, and every change to a template. */
export type AuditedEvent = AccountEvent | TemplateEvent;

/**
 * What an account event changed, in words for the console's audit ("key 'CI' (sl_live_ab12)"): pure, from the event
 * alone, and never a secret (a key's prefix, never its digest; a domain's name, never its keys).
 */
export function auditSubject(event: AuditedEvent): string {
  switch (event.type) {
    case 'OrganizationCreated':
      return `organization '${event.data.name}' (first admin ${event.data.adminEmail})`;
    case 'MemberAdded':
      return `member ${event.data.email} as ${event.data.role}`;
    case 'MemberRemoved':
      return `member ${event.data.email}`;
    case 'MemberRoleChanged':
      return `member ${event.data.email}: ${event.data.previousRole} → ${event.data.role}`;
    case 'DomainAdded':
    case 'DomainVerified':
    case 'DomainRemoved':
      return `domain ${event.data.domain}`;
    case 'DomainReturnPathAssigned':
    case 'DomainReturnPathVerified':
      return `domain ${event.data.domain}: return path ${event.data.returnPath.host}`;
    case 'ApiKeyIssued':
    case 'ApiKeyRevoked':
      return `key '${event.data.name}' (${event.data.keyPrefix}, ${event.data.mode}: ${event.data.scopes.join(', ')})`;
    case 'AllowanceSet':
      return event.data.messagesPerMonth === null
        ? 'allowance: unlimited'
        : `allowance: ${event.data.messagesPerMonth} messages a month`;
    // Never the URL: it may carry a token in its query.
    case 'WebhookCreated':
    case 'WebhookUpdated':
    case 'WebhookDeleted':
      return `webhook ${event.data.webhookId}`;
    case 'WebhookDisabled':
      return `webhook ${event.data.webhookId} (its calls failed for too long)`;
    case 'TemplateCreated':
    case 'TemplateEdited':
      return `template ${event.data.templateId} '${event.data.name}'${event.data.alias ? ` (${event.data.alias})` : ''}, version ${event.data.version}`;
    case 'TemplateDeleted':
      return `template ${event.data.templateId} (last version ${event.data.version})`;
    // Never the hook URL: it may carry a token in its query.
    case 'ServerSettingsChanged':
      return `server settings (inbound address ${event.data.inboundHash})`;
    case 'InboundRuleCreated':
      return `inbound rule ${event.data.ruleId} (${event.data.rule})`;
    case 'InboundRuleDeleted':
      return `inbound rule ${event.data.ruleId}`;
    default: {
      const unknown: never = event;
      return String((unknown as { type: string }).type);
    }
  }
}
