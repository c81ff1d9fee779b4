/**
 * A message and its recipients: the message decider (decide.ts), where each recipient stands (message.ts, one
 * state machine; progress.ts resumes it for a retry), how an SMTP answer is classified (classification.ts) and
 * becomes an outcome (outcome.ts), and when a deferred recipient is tried again (retry.ts).
 */
export {
  classifyDeliveryAttempt,
  parseEnhancedStatus,
  type DeliveryAttempt,
  type DeliveryClassification,
} from './classification';
export {
  decideMessage,
  messageDecider,
  uniqueRecipients,
  type AcceptMessage,
  type AcceptMessageData,
  type DeliveryOutcome,
  type MessageCommand,
  type MessageDecider,
  type RecordDeliveryOutcome,
  type RecordDeliveryOutcomeData,
  type RecordSent,
  type RecordSentData,
} from './decide';
export {
  canMessageMove,
  canRecipientMove,
  deriveMessageStatus,
  evolveMessage,
  initialMessageState,
  isTerminal,
  MESSAGE_EVENT_TYPES,
  MESSAGE_TRANSITIONS,
  messageListingStatus,
  RECIPIENT_TRANSITIONS,
  recipientStatusAfter,
  type MessageAccepted,
  type MessageAcceptedData,
  type MessageDeferred,
  type MessageDeferredData,
  type MessageDelivered,
  type MessageDeliveredData,
  type MessageEvent,
  type MessageHardBounced,
  type MessageListingStatus,
  type MessagePhase,
  type MessagePolicyRejected,
  type MessageRefusalData,
  type MessageSent,
  type MessageSentData,
  type MessageSoftBounced,
  type MessageSoftBouncedData,
  type MessageState,
  type RecipientOutcomeEvent,
  type RecipientState,
  type RecipientStatus,
  type SoftBounceReason,
  type TransientReason,
} from './message';
export { deliveryOutcomeOf, type OutcomeContext } from './outcome';
export { resumeRecipients } from './progress';
export {
  deferralDelay,
  DEFAULT_RETRY_POLICY,
  nextRetry,
  type RetryDecision,
  type RetryInput,
  type RetryPolicy,
} from './retry';
