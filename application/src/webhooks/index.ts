/**
 * An organization's webhooks (Postmark's `/webhooks` API): `WebhooksService` runs each change through the
 * organization decider, makes and seals the signing secret, seals HTTP Basic passwords, and refuses a URL that
 * leads to a non-public address in production. `WebhookDeliveries`: a webhook's delivery log and a call's manual
 * redelivery.
 */
export * from './service';
export * from './deliveries';
