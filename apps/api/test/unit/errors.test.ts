import { Errors } from 'postmark';
import { ErrorHandler } from 'postmark/dist/client/errors/ErrorHandler';
import { describe, expect, it } from 'vitest';
import {
  DOMAIN_ERROR_CODES,
  validateBatchSize,
  validateSendRequest,
  type SendRequestErrorCode,
} from '@sendline/domain';
import {
  describeError,
  ERROR_CATALOGUE,
  inactiveRecipientsMessage,
  isErrorCode,
  type ErrorCode,
} from '../../src/errors';

/** The rule the brief and Postmark's clients use: after "Found inactive addresses: " up to ". Inactive", split on ", ". */
function addressesInInactiveMessage(message: string): string[] {
  const start = message.indexOf('Found inactive addresses: ') + 'Found inactive addresses: '.length;
  const end = message.indexOf('. Inactive', start);
  return message.slice(start, end).split(', ');
}

function postmarkErrorFor(code: string, params: Parameters<typeof describeError>[1] = {}) {
  const { ErrorCode, Message, httpStatus } = describeError(code, params);
  return new ErrorHandler().buildError(Message, ErrorCode, httpStatus);
}

/** The catalogue without the domain codes answered as an internal error (InternalError itself stays). */
const ownAnswers = Object.entries(ERROR_CATALOGUE).filter(
  ([code, entry]) => code === 'InternalError' || entry !== ERROR_CATALOGUE.InternalError,
);

describe('error catalogue', () => {
  it('has an answer for every code the domain can give', () => {
    for (const code of DOMAIN_ERROR_CODES) expect(isErrorCode(code), code).toBe(true);
  });

  it('answers these domain codes, and only these, as an internal error', () => {
    const internal = Object.entries(ERROR_CATALOGUE)
      .filter(([code, entry]) => code !== 'InternalError' && entry === ERROR_CATALOGUE.InternalError)
      .map(([code]) => code);
    expect(internal.sort()).toEqual(
      DOMAIN_ERROR_CODES.filter(
        (code) =>
          ![
            'IncompatibleJson',
            'InvalidEmailRequest',
            'InvalidMessageStream',
            'ForbiddenAttachmentType',
            'PayloadTooLarge',
            'TooManyBatchMessages',
            'AllRecipientsSuppressed',
            'InvalidApiToken',
            'InsufficientScope',
            // A webhook's configuration, refused with the rule it broke.
            'WebhookNotFound',
            'InvalidWebhookUrl',
            'WebhookUrlNotAllowed',
            'InvalidWebhookHttpAuth',
            'InvalidWebhookHeaders',
            'InvalidWebhookTriggers',
            'TooManyWebhooks',
            // A template's rules, Postmark's 11xx.
            'TemplateNotFound',
            'TooManyTemplates',
            'TemplateModelMissing',
            'TemplateFieldMissing',
            'TemplateFieldTooLarge',
            'InvalidTemplateField',
            'TemplateFieldNotAllowed',
            'LayoutInUse',
            'InvalidLayoutContent',
            // An account rule a console member can break, refused with the rule's words.
            'RoleNotAllowed',
            'InvalidEmail',
            'InvalidRole',
            'MemberAlreadyExists',
            'MemberNotFound',
            'CannotRemoveLastAdmin',
            'InvalidDomainName',
            'DomainAlreadyAdded',
            'DomainNotFound',
            'DomainVerificationFailed',
            'ReturnPathNotAssigned',
            'ReturnPathVerificationFailed',
            'InvalidApiKeyName',
            'InvalidApiKeyMode',
            'NoScopes',
            'UnknownScope',
            'DuplicateScope',
            'ApiKeyNotFound',
            'ApiKeyAlreadyRevoked',
            'InvalidEmailAddress',
            // Inbound mail: settings, rules and messages, refused with the rule's words.
            'InvalidInboundDomain',
            'InvalidInboundSpamThreshold',
            'InboundDomainTaken',
            'InboundDomainNotSet',
            'InboundDomainChanged',
            'InboundDomainVerificationFailed',
            'InvalidInboundRule',
            'InboundRuleAlreadyExists',
            'InboundRuleNotFound',
            'TooManyInboundRules',
            'InboundMessageNotFound',
            'InboundMessageNotBlocked',
            'InboundMessageNotFailed',
          ].includes(code),
      ).sort(),
    );
  });

  it('answers the codes the API relies on with these ErrorCode and HTTP status pairs', () => {
    const pairs = Object.fromEntries(ownAnswers.map(([code, entry]) => [code, [entry.errorCode, entry.httpStatus]]));
    expect(pairs).toEqual({
      Ok: [0, 200],
      InvalidApiToken: [10, 401],
      InsufficientScope: [12, 403],
      InvalidEmailRequest: [300, 422],
      SenderSignatureNotFound: [400, 422],
      SenderSignatureNotConfirmed: [401, 422],
      InvalidJson: [402, 422],
      IncompatibleJson: [403, 422],
      NotAllowedToSend: [405, 422],
      InactiveRecipients: [406, 422],
      AllRecipientsSuppressed: [406, 422],
      JsonRequired: [409, 415],
      TooManyBatchMessages: [410, 422],
      ForbiddenAttachmentType: [411, 422],
      MessageNotFound: [701, 404],
      BounceNotFound: [701, 404],
      InvalidMessageStream: [1235, 422],
      PayloadTooLarge: [300, 413],
      MethodNotAllowed: [1310, 405],
      IdempotencyKeyReused: [1300, 409],
      RateLimited: [429, 429],
      ServiceUnavailable: [503, 503],
      UnknownEndpoint: [404, 404],
      InternalError: [500, 500],
      WebhookNotFound: [1400, 404],
      WebhookDeliveryNotFound: [1407, 404],
      TooManyWebhooks: [1401, 422],
      WebhookUrlNotAllowed: [1402, 422],
      InvalidWebhookUrl: [1403, 422],
      InvalidWebhookHttpAuth: [1404, 422],
      InvalidWebhookHeaders: [1405, 422],
      InvalidWebhookTriggers: [1406, 422],
      TemplateNotFound: [1101, 422],
      TooManyTemplates: [1105, 422],
      TemplateModelMissing: [1109, 422],
      TemplateFieldMissing: [1120, 422],
      TemplateFieldTooLarge: [1121, 422],
      InvalidTemplateField: [1122, 422],
      TemplateFieldNotAllowed: [1123, 422],
      LayoutInUse: [1130, 422],
      InvalidLayoutContent: [1131, 422],
      ConsoleSignInRequired: [1500, 401],
      ConsoleCsrfRejected: [1501, 403],
      SignInLinkInvalid: [1502, 401],
      RoleNotAllowed: [1503, 403],
      InvalidEmail: [1510, 422],
      InvalidRole: [1511, 422],
      MemberAlreadyExists: [1512, 409],
      MemberNotFound: [1513, 404],
      CannotRemoveLastAdmin: [1514, 409],
      InvalidDomainName: [1520, 422],
      DomainAlreadyAdded: [1521, 409],
      DomainNotFound: [1522, 404],
      DomainVerificationFailed: [1523, 422],
      ReturnPathNotAssigned: [1524, 422],
      ReturnPathVerificationFailed: [1525, 422],
      InvalidApiKeyName: [1530, 422],
      InvalidApiKeyMode: [1531, 422],
      NoScopes: [1532, 422],
      UnknownScope: [1533, 422],
      DuplicateScope: [1534, 422],
      ApiKeyNotFound: [1535, 404],
      ApiKeyAlreadyRevoked: [1536, 409],
      InvalidEmailAddress: [1540, 422],
      InvalidInboundDomain: [1601, 422],
      InvalidInboundSpamThreshold: [1602, 422],
      InboundDomainTaken: [1603, 422],
      InboundDomainNotSet: [1604, 422],
      InboundDomainVerificationFailed: [1605, 422],
      InboundDomainChanged: [1606, 422],
      InvalidInboundRule: [1610, 422],
      InboundRuleAlreadyExists: [1611, 422],
      InboundRuleNotFound: [1612, 404],
      TooManyInboundRules: [1613, 422],
      InboundMessageNotFound: [701, 404],
      InboundMessageNotBlocked: [1620, 422],
      InboundMessageNotFailed: [1621, 422],
    });
  });

  it('gives every ErrorCode to one entry, except the deliberate aliases', () => {
    const byErrorCode = new Map<number, string[]>();
    for (const [code, entry] of ownAnswers) {
      byErrorCode.set(entry.errorCode, [...(byErrorCode.get(entry.errorCode) ?? []), code]);
    }
    const shared = [...byErrorCode.values()].filter((codes) => codes.length > 1);
    expect(shared).toEqual([
      ['InvalidEmailRequest', 'PayloadTooLarge'],
      ['InactiveRecipients', 'AllRecipientsSuppressed'],
      ['MessageNotFound', 'BounceNotFound', 'InboundMessageNotFound'],
    ]);
  });

  it('has a distinct ErrorCode and HTTP status pair for every entry but the 406 and 701 aliases', () => {
    const byPair = new Map<string, string[]>();
    for (const [code, entry] of ownAnswers) {
      const pair = `${entry.errorCode}/${entry.httpStatus}`;
      byPair.set(pair, [...(byPair.get(pair) ?? []), code]);
    }
    expect([...byPair.values()].filter((codes) => codes.length > 1)).toEqual([
      ['InactiveRecipients', 'AllRecipientsSuppressed'],
      ['MessageNotFound', 'BounceNotFound', 'InboundMessageNotFound'],
    ]);
  });

  it('has a catalogue entry for every code validation can give', () => {
    const codes: Array<SendRequestErrorCode | 'TooManyBatchMessages'> = [
      'IncompatibleJson',
      'InvalidEmailRequest',
      'InvalidMessageStream',
      'ForbiddenAttachmentType',
      'PayloadTooLarge',
      'TooManyBatchMessages',
    ];
    for (const code of codes) expect(isErrorCode(code), code).toBe(true);
  });

  it('answers a validation failure with its code and the message naming the field', () => {
    const result = validateSendRequest({ From: 'a@x.example', To: 5, TextBody: 'x' });
    if (result.ok) throw new Error('expected a refusal');
    expect(describeError(result.error.code, { detail: result.error.message })).toEqual({
      ErrorCode: 300,
      Message: 'To must be a string or an array of strings, not a number',
      httpStatus: 422,
    });
  });

  it('answers a too large batch with 410', () => {
    const result = validateBatchSize(501);
    if (result.ok) throw new Error('expected a refusal');
    expect(describeError(result.error.code, { detail: result.error.message })).toMatchObject({
      ErrorCode: 410,
      httpStatus: 422,
      Message: 'A batch may hold at most 500 messages (it holds 501)',
    });
  });

  it('fills a template from its parameters', () => {
    expect(describeError('InsufficientScope', { scope: 'email:send' })).toEqual({
      ErrorCode: 12,
      Message: 'This API key lacks the scope email:send.',
      httpStatus: 403,
    });
  });

  it('uses the generic message when a parameter is missing, never a raw placeholder', () => {
    for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
      const { Message } = describeError(code);
      expect(Message, code).not.toMatch(/\{\w+\}/);
      expect(Message.length, code).toBeGreaterThan(0);
    }
  });

  it('answers a domain code no route should meet, and an unknown code, as an internal error', () => {
    for (const code of ['MissingEventId', 'NoSuchCode']) {
      expect(describeError(code), code).toEqual({
        ErrorCode: 500,
        Message: 'An internal error occurred.',
        httpStatus: 500,
      });
    }
  });

  it('answers an unknown endpoint with 404, naming the method and the path', () => {
    expect(describeError('UnknownEndpoint', { method: 'GET', path: '/nope' })).toEqual({
      ErrorCode: 404,
      Message: 'No endpoint GET /nope.',
      httpStatus: 404,
    });
  });

  it('writes the 406 message exactly in Postmark’s pattern', () => {
    expect(inactiveRecipientsMessage(['a@x.com', 'b@y.com'])).toBe(
      'You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: a@x.com, b@y.com. ' +
        'Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression.',
    );
  });

  it('lets a client read the addresses back out of the 406 message', () => {
    const addresses = ['alice@customer.example', 'bob.o-neil+news@sub.customer.example'];
    const { Message } = describeError('AllRecipientsSuppressed', { addresses });
    expect(addressesInInactiveMessage(Message)).toEqual(addresses);
  });

  it('is read by the postmark.js 5.1.0 client as InactiveRecipientsError with the recipients', () => {
    const error = postmarkErrorFor('InactiveRecipients', { addresses: ['a@x.com', 'b@y.com'] });
    expect(error).toBeInstanceOf(Errors.InactiveRecipientsError);
    expect((error as Errors.InactiveRecipientsError).recipients).toEqual(['a@x.com', 'b@y.com']);
  });

  it.each([
    ['InvalidApiToken', Errors.InvalidAPIKeyError],
    ['InvalidEmailRequest', Errors.InvalidEmailRequestError],
    ['SenderSignatureNotFound', Errors.ApiInputError],
    ['RateLimited', Errors.RateLimitExceededError],
    ['InternalError', Errors.InternalServerError],
    ['ServiceUnavailable', Errors.ServiceUnavailablerError],
  ] as const)('is read by the postmark.js client: %s as its matching error class', (code, errorClass) => {
    expect(postmarkErrorFor(code, { detail: 'x', from: 'a@x.example' })).toBeInstanceOf(errorClass);
  });
});
