import { randomUUID } from 'node:crypto';
import {
  parseEmailAddress,
  suppressionDecider,
  type SuppressionCommand,
  type SuppressionEvent,
  type SuppressionOrigin,
  type SuppressionReason,
  type SuppressionState,
} from '@sendline/domain';
import { CommandHandler, type AccountsView, type EventAppender, type SuppressionView } from '@sendline/infra';
import { requireOrganization } from '../accounts/service';

export interface ManualSuppressionsOptions {
  store: EventAppender;
  /** Where the organization is looked up: an address is suppressed for an organization that exists. */
  accounts: AccountsView;
  suppressions: SuppressionView;
  now?: () => number;
  newId?: () => string;
}

export interface ManualSuppressionResult {
  emailAddress: string;
  /** ManualSuppression, or the reason of the entry that was there already. */
  reason: SuppressionReason;
  origin: SuppressionOrigin;
  createdAt: number;
  /** False when the address was suppressed already (the first entry stays, nothing was appended). */
  added: boolean;
}

/**
 * The console's suppressions: an address suppressed for an organization by hand (reason ManualSuppression,
 * origin Customer or Admin), through infra's CommandHandler with the suppression decider — decided on the
 * address's entry in the suppression view, appended to Kafka, applied to the view at once.
 */
export class ManualSuppressions {
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly commands: CommandHandler<SuppressionState, SuppressionCommand, SuppressionEvent>;

  constructor(private readonly options: ManualSuppressionsOptions) {
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? randomUUID;
    this.commands = new CommandHandler({
      decider: suppressionDecider,
      store: options.store,
      apply: (events) => options.suppressions.apply(events),
    });
  }

  async add(organizationId: string, emailAddress: string, origin: string): Promise<ManualSuppressionResult> {
    await requireOrganization(this.options.accounts, organizationId);
    const parsed = parseEmailAddress(emailAddress);
    const address = parsed.ok ? parsed.value.toLowerCase() : emailAddress;
    const existing = parsed.ok
      ? (await this.options.suppressions.list(organizationId)).find(
          (entry) => entry.emailAddress.toLowerCase() === address,
        )
      : undefined;
    const state: SuppressionState = existing
      ? { status: 'Suppressed', ...existing }
      : suppressionDecider.initialState();
    const events = await this.commands.handle(
      {
        type: 'AddSuppression',
        data: { emailAddress, reason: 'ManualSuppression', origin: origin as SuppressionOrigin },
        metadata: { organizationId, now: this.now(), eventIds: [this.newId()] },
      },
      state,
    );
    const added = events.find((event) => event.type === 'SuppressionAdded');
    if (added) return { ...added.data, added: true };
    return {
      emailAddress: existing?.emailAddress ?? address,
      reason: existing?.reason ?? 'ManualSuppression',
      origin: existing?.origin ?? (origin as SuppressionOrigin),
      createdAt: existing?.createdAt ?? this.now(),
      added: false,
    };
  }
}
